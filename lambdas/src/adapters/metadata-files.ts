/** Metadata-file chores shared by the catalogs that keep metadata.json in an object store. */
import { gunzipSync } from 'node:zlib';
import { ErrorKind, FloeError } from '../errors.ts';
import { parseTableMetadata, type TableMetadata } from '../iceberg/table-metadata.ts';
import { type TableIdentifier, tableIdToString } from '../ports/catalog.ts';
import { deleteQuietly as deleteAllQuietly, type ObjectStore } from '../ports/object-store.ts';

const JAVA_VERSION = /^(\d+)-[^/]*$/;
const HADOOP_VERSION = /^v(\d+)\.(?:gz\.)?metadata\.json(?:\.gz)?$/;

/**
 * Version number of a metadata file name: `00042-<uuid>.metadata.json` → 42 (also `v42.metadata.json`
 * of a file-catalog table); -1 when it has none, so the next file is `00000-…` (Java `parseVersion`).
 */
export function parseMetadataVersion(uri: string): number {
  const file = uri.slice(uri.lastIndexOf('/') + 1);
  const m = JAVA_VERSION.exec(file) ?? HADOOP_VERSION.exec(file);
  return m ? Number(m[1]) : -1;
}

/**
 * Parsed metadata by store and file location. Metadata files are immutable (a new version is a new
 * file), so a warm committer that loads the version it committed last skips re-reading and
 * re-parsing a metadata.json that grows with the table's history. Per store, because two stores may
 * map one URI to different places (a scratch copy of a warehouse). Callers treat metadata as
 * read-only.
 */
const parsed = new WeakMap<ObjectStore, Map<string, TableMetadata>>();
const PARSED_MAX = 64;

export function cachedMetadata(store: ObjectStore, uri: string): TableMetadata | undefined {
  const byUri = parsed.get(store);
  const m = byUri?.get(uri);
  if (byUri && m !== undefined) {
    byUri.delete(uri);
    byUri.set(uri, m);
  }
  return m;
}

export function rememberMetadata(store: ObjectStore, uri: string, m: TableMetadata): void {
  let byUri = parsed.get(store);
  if (!byUri) {
    byUri = new Map();
    parsed.set(store, byUri);
  }
  byUri.delete(uri);
  byUri.set(uri, m);
  while (byUri.size > PARSED_MAX) byUri.delete(byUri.keys().next().value as string);
}

/** Reads and parses a metadata file (gzip-compressed ones too); a missing file names the table. */
export async function readMetadata(
  store: ObjectStore,
  uri: string,
  id: TableIdentifier,
): Promise<TableMetadata> {
  const hit = cachedMetadata(store, uri);
  if (hit) return hit;
  let bytes: Uint8Array;
  try {
    bytes = await store.get(uri);
  } catch (e) {
    if (e instanceof FloeError && e.kind === ErrorKind.NotFound) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `table ${tableIdToString(id)}: current metadata file ${uri} is missing`,
        { cause: e, context: { table: tableIdToString(id), uri } },
      );
    }
    throw e;
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
  const m = parseTableMetadata(new TextDecoder().decode(bytes), uri);
  rememberMetadata(store, uri, m);
  return m;
}

/**
 * Deletes an unreferenced metadata file, best effort: it is never referenced, and orphan-file
 * cleanup (or S3 Tables' unreferenced-file removal) finds it anyway.
 */
export async function deleteQuietly(store: ObjectStore, uri: string): Promise<void> {
  await deleteAllQuietly(store, [uri]);
}
