/**
 * The object store of the AWS handlers, aware of where the catalog keeps table files (issue #14).
 *
 * S3 Tables: a table's files live in storage the service manages (`s3://…--table-s3`), which
 * accepts reads and writes but no DeleteObject (the object operations S3 Tables supports list
 * GetObject, HeadObject, PutObject and the multipart calls; IAM has no action that would allow a
 * delete there). The service removes what no snapshot needs itself (unreferenced-file removal,
 * snapshot expiry: configured by the stack and the maintenance function). So on S3 Tables a delete
 * is sent only for Floe's own prefixes (staging: pending fragments; dead letters); a delete of a
 * table file — metadata cleanup after a commit, the files of a failed attempt, an unreferenced
 * metadata file after a conflict — is not attempted at all: it is counted and the file is left to
 * the service. Callers are unchanged: every such delete is best effort already (a leftover file is
 * harmless; see `deleteQuietly`).
 *
 * Glue: every delete is sent (the warehouse is an ordinary bucket the roles may delete in), and one
 * that fails is reported through `onDeleteFailed` (the handlers log it at warn) before the error
 * goes back to the caller, which keeps going as before.
 */
import { listEntries, type ObjectEntry, type ObjectStore } from '../ports/object-store.ts';

export interface CatalogAwareStoreOptions {
  /** `s3tables`: only URIs under `deletablePrefixes` are deleted; `glue`: everything. */
  readonly catalogType: 'glue' | 's3tables';
  /** Floe's own folders (`s3://bucket/staging`, `s3://bucket/dead-letters`), without a trailing slash. */
  readonly deletablePrefixes: readonly string[];
  /** A delete that was not sent (S3 Tables table storage). */
  readonly onDeleteSkipped?: (uri: string) => void;
  /** A delete that was sent and failed (the error is rethrown). */
  readonly onDeleteFailed?: (uri: string, error: unknown) => void;
}

export class CatalogAwareStore implements ObjectStore {
  /** Deletes not sent because the catalog's storage refuses them. */
  skippedDeletes = 0;
  private readonly prefixes: readonly string[];

  constructor(
    readonly inner: ObjectStore,
    private readonly options: CatalogAwareStoreOptions,
  ) {
    this.prefixes = options.deletablePrefixes.map((p) => `${p.replace(/\/+$/, '')}/`);
  }

  /** Whether a delete of `uri` is sent to the store (false: S3 Tables' table storage). */
  deletesAllowed(uri: string): boolean {
    return this.options.catalogType === 'glue' || this.prefixes.some((p) => uri.startsWith(p));
  }

  async delete(uri: string): Promise<void> {
    if (!this.deletesAllowed(uri)) {
      this.skippedDeletes++;
      this.options.onDeleteSkipped?.(uri);
      return;
    }
    try {
      await this.inner.delete(uri);
    } catch (e) {
      this.options.onDeleteFailed?.(uri, e);
      throw e;
    }
  }

  get(uri: string): Promise<Uint8Array> {
    return this.inner.get(uri);
  }
  put(uri: string, bytes: Uint8Array | string): Promise<void> {
    return this.inner.put(uri, bytes);
  }
  putIfAbsent(uri: string, bytes: Uint8Array | string): Promise<boolean> {
    return this.inner.putIfAbsent(uri, bytes);
  }
  exists(uri: string): Promise<boolean> {
    return this.inner.exists(uri);
  }
  list(prefix: string): Promise<string[]> {
    return this.inner.list(prefix);
  }
  listChildren(prefix: string): Promise<string[]> {
    return this.inner.listChildren(prefix);
  }
  size(uri: string): Promise<number> {
    return this.inner.size(uri);
  }
  listEntries(prefix: string): Promise<ObjectEntry[]> {
    return listEntries(this.inner, prefix);
  }
}
