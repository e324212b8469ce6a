/**
 * Byte storage behind URIs (`file:///…`, `s3://bucket/key`). Implementations: local filesystem,
 * S3. New objects get unique names; `putIfAbsent` is the only conditional write.
 */
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
}

/**
 * Deletes objects best effort (orphans of a failed attempt, fragments after their commit): a
 * leftover is harmless and found by cleanup later, so a failed delete is not an error.
 */
export async function deleteQuietly(store: ObjectStore, uris: readonly string[]): Promise<void> {
  await Promise.all(uris.map((u) => store.delete(u).catch(() => undefined)));
}
