/**
 * Byte storage behind URIs (`file:///…`, `s3://bucket/key`). Implementations: local filesystem,
 * S3. New objects get unique names; `putIfAbsent` is the only conditional write.
 */
import { ErrorKind, FloeError } from '../errors.ts';

export interface ObjectStore {
  get(uri: string): Promise<Uint8Array>;
  /** Writes the whole object; readers never observe a partial object. */
  put(uri: string, bytes: Uint8Array | string): Promise<void>;
  /** Writes only when nothing exists at `uri`; resolves false if something did. */
  putIfAbsent(uri: string, bytes: Uint8Array | string): Promise<boolean>;
  exists(uri: string): Promise<boolean>;
  delete(uri: string): Promise<void>;
  /** URIs of every object below `prefix` (recursively), in lexical order. */
  list(prefix: string): Promise<string[]>;
  /** Names of the immediate children (objects and "folders") under `prefix/`, sorted. */
  listChildren(prefix: string): Promise<string[]>;
  size(uri: string): Promise<number>;
  /**
   * Every object below `prefix` (recursively, lexical order) with its size and last-modified time,
   * as cheaply as `list` where the store can (S3's listing carries both). Optional: a wrapper that
   * only stages writes (the replay overlay) need not know times; see `listEntries`.
   */
  listEntries?(prefix: string): Promise<ObjectEntry[]>;
  /**
   * Whether the object at `uri` exists only under an earlier spelling of its name (a local
   * warehouse written when `file:` names were stored percent-decoded), which readers that take
   * locations literally cannot find; `floe maintain --rewrite-locations` rewrites such files.
   * Optional: stores whose names are literal (S3) have none.
   */
  storedAsDecoded?(uri: string): boolean;
}

/** An object as a listing with times sees it. */
export interface ObjectEntry {
  readonly uri: string;
  readonly size: number;
  /** When the object was last written (epoch milliseconds). */
  readonly lastModifiedMs: number;
}

/** `store.listEntries(prefix)`, or a `FeatureUnsupported` error naming the store's type. */
export async function listEntries(store: ObjectStore, prefix: string): Promise<ObjectEntry[]> {
  if (store.listEntries === undefined) {
    throw new FloeError(
      ErrorKind.FeatureUnsupported,
      `${store.constructor.name} cannot list objects with their times (${prefix})`,
      { context: { prefix } },
    );
  }
  return store.listEntries(prefix);
}

/**
 * Deletes objects best effort (orphans of a failed attempt, fragments after their commit): a
 * leftover is harmless and found by cleanup later, so a failed delete is not an error.
 */
export async function deleteQuietly(store: ObjectStore, uris: readonly string[]): Promise<void> {
  await Promise.all(uris.map((u) => store.delete(u).catch(() => undefined)));
}
