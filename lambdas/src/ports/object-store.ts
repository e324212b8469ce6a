/**
 * Byte storage behind URIs (`file:///…`, `s3://bucket/key`). Implementations: local filesystem,
 * S3. Writes of new objects use unique names; `putIfAbsent` is the only conditional write.
 */
export interface ObjectStore {
  get(uri: string): Promise<Uint8Array>;
  /** Reads `length` bytes at `offset` (Parquet footers, Avro headers). */
  getRange?(uri: string, offset: number, length: number): Promise<Uint8Array>;
  put(uri: string, bytes: Uint8Array | string): Promise<void>;
  /** Writes only when nothing exists at `uri`; resolves false if something did. */
  putIfAbsent(uri: string, bytes: Uint8Array | string): Promise<boolean>;
  exists(uri: string): Promise<boolean>;
  delete(uri: string): Promise<void>;
  /** URIs of every object whose URI starts with `prefix`, in lexical order. */
  list(prefix: string): Promise<string[]>;
  size(uri: string): Promise<number>;
}
