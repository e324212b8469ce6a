/**
 * The manifests of one snapshot and their live entries, for the metadata tables (`$files`,
 * `$manifests`, `$partitions`). Unlike the scan planner, it keeps every live file — delete files
 * that match no data file too — and the manifest each came from.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import {
  decodeManifest,
  decodeManifestList,
  inheritManifestEntry,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestFile,
} from '../iceberg/manifest/index.ts';
import { ManifestContent } from '../iceberg/manifest/types.ts';
import type { ReadFile } from '../iceberg/scan.ts';
import type { Snapshot } from '../iceberg/snapshot.ts';

export interface LiveEntry {
  readonly manifest: ManifestFile;
  /** With sequence numbers and snapshot id inherited from the manifest. */
  readonly entry: ManifestEntry;
}

/** The manifest-list entries of `snapshot` (v1 snapshots may list manifest paths inline instead). */
export async function snapshotManifests(
  snapshot: Snapshot,
  read: ReadFile,
  table: string,
): Promise<ManifestFile[]> {
  const id = snapshot['snapshot-id'];
  const list = snapshot['manifest-list'];
  if (list !== undefined)
    return decodeManifestList(
      await readNamed(read, list, `manifest list of snapshot ${id} of table ${table}`),
    );
  const out: ManifestFile[] = [];
  for (const path of snapshot.manifests ?? []) {
    const bytes = await readNamed(read, path, `manifest of snapshot ${id} of table ${table}`);
    const m = decodeManifest(bytes);
    // A v1 inline manifest has no list entry: counts are unknown (0), as Java reports them.
    out.push({
      manifest_path: path,
      manifest_length: BigInt(bytes.length),
      partition_spec_id: m.specId,
      content: ManifestContent.DATA,
      sequence_number: 0n,
      min_sequence_number: 0n,
      added_snapshot_id: id,
      added_files_count: 0,
      existing_files_count: 0,
      deleted_files_count: 0,
      added_rows_count: 0n,
      existing_rows_count: 0n,
      deleted_rows_count: 0n,
    });
  }
  return out;
}

/** Every ADDED or EXISTING entry of `manifests`, data and delete files alike. */
export async function liveEntries(
  manifests: readonly ManifestFile[],
  read: ReadFile,
  table: string,
): Promise<LiveEntry[]> {
  const out: LiveEntry[] = [];
  for (const manifest of manifests) {
    const bytes = await readNamed(read, manifest.manifest_path, `manifest of table ${table}`);
    for (const raw of decodeManifest(bytes).entries) {
      if (raw.status === ManifestEntryStatus.DELETED) continue;
      out.push({ manifest, entry: inheritManifestEntry(raw, manifest) });
    }
  }
  return out;
}

async function readNamed(read: ReadFile, uri: string, what: string): Promise<Uint8Array> {
  try {
    return await read(uri);
  } catch (e) {
    if (e instanceof FloeError) throw e;
    throw new FloeError(ErrorKind.NotFound, `cannot read ${what}: ${uri}`, { cause: e, context: { uri } });
  }
}
