/**
 * The live entries of a snapshot's manifests (from `snapshotManifests`), for the metadata tables (`$files`,
 * `$manifests`, `$partitions`). Unlike the scan planner, it keeps every live file — delete files
 * that match no data file too — and the manifest each came from.
 */
import {
  decodeManifest,
  inheritManifestEntry,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestFile,
} from '../iceberg/manifest/index.ts';
import { type ReadFile, readOrThrow } from '../iceberg/scan.ts';

export interface LiveEntry {
  readonly manifest: ManifestFile;
  /** With sequence numbers and snapshot id inherited from the manifest. */
  readonly entry: ManifestEntry;
}

/** Every ADDED or EXISTING entry of `manifests`, data and delete files alike. */
export async function liveEntries(
  manifests: readonly ManifestFile[],
  read: ReadFile,
  table: string,
): Promise<LiveEntry[]> {
  const out: LiveEntry[] = [];
  for (const manifest of manifests) {
    const bytes = await readOrThrow(read, manifest.manifest_path, `manifest of table ${table}`);
    for (const raw of decodeManifest(bytes).entries) {
      if (raw.status === ManifestEntryStatus.DELETED) continue;
      out.push({ manifest, entry: inheritManifestEntry(raw, manifest) });
    }
  }
  return out;
}
