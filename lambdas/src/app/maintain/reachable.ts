/**
 * Which files a table's metadata reaches (spec: snapshot → manifest list → manifests → data and
 * delete files). Snapshot expiry deletes what only expired snapshots reach; orphan cleanup deletes
 * what no metadata reaches at all. A file counts as reached by a snapshot when one of its manifests
 * lists it ADDED or EXISTING; a DELETED entry is a record of removal, not a reference.
 */

import { ErrorKind, isFloeError } from '../../errors.ts';
import { decodeManifest, decodeManifestList, inheritManifestEntry } from '../../iceberg/manifest/index.ts';
import { type DataFile, ManifestEntryStatus, type ManifestFile } from '../../iceberg/manifest/types.ts';
import type { Snapshot } from '../../iceberg/snapshot.ts';
import type { TableMetadata } from '../../iceberg/table-metadata.ts';
import type { ObjectStore } from '../../ports/object-store.ts';

export interface Reached {
  readonly manifestLists: Set<string>;
  readonly manifests: Set<string>;
  /** Data and delete files, by path. */
  readonly contentFiles: Map<string, DataFile>;
}

/** Reads each manifest list and manifest once, however many snapshots share it. */
export class ManifestReader {
  private readonly lists = new Map<string, Promise<ManifestFile[]>>();
  private readonly manifests = new Map<string, Promise<DataFile[]>>();
  private readonly lengths = new Map<string, bigint>();

  constructor(private readonly store: ObjectStore) {}

  /** The snapshot's manifests (v1 snapshots that list manifests inline included). */
  async manifestsOf(snapshot: Snapshot): Promise<{ path: string; manifest?: ManifestFile }[]> {
    const list = snapshot['manifest-list'];
    if (list === undefined) return (snapshot.manifests ?? []).map((path) => ({ path }));
    let p = this.lists.get(list);
    if (!p) {
      p = this.store.get(list).then(decodeManifestList);
      this.lists.set(list, p);
    }
    return (await p).map((m) => {
      this.lengths.set(m.manifest_path, m.manifest_length);
      return { path: m.manifest_path, manifest: m };
    });
  }

  /** A manifest's length as a manifest list gave it (v1 inline manifests: unknown). */
  lengthOf(path: string): bigint | undefined {
    return this.lengths.get(path);
  }

  /** Files a manifest lists ADDED or EXISTING. */
  liveFilesOf(path: string, manifest?: ManifestFile): Promise<DataFile[]> {
    let p = this.manifests.get(path);
    if (!p) {
      p = this.store.get(path).then((bytes) => {
        const entries = decodeManifest(bytes).entries;
        return entries
          .map((e) => (manifest ? inheritManifestEntry(e, manifest) : e))
          .filter((e) => e.status !== ManifestEntryStatus.DELETED)
          .map((e) => e.data_file);
      });
      this.manifests.set(path, p);
    }
    return p;
  }
}

/**
 * Everything `snapshots` reach. With `missingOk`, a manifest list or manifest that does not exist
 * is passed over (counted in `missing`): expiry may meet an old snapshot whose files are already
 * gone, and then there is simply nothing of it left to delete. What must be kept is never read
 * that way — a missing file there stops the caller.
 */
export async function reachedBy(
  reader: ManifestReader,
  snapshots: readonly Snapshot[],
  opts: { missingOk?: boolean } = {},
): Promise<Reached & { missing: number }> {
  const out = {
    manifestLists: new Set<string>(),
    manifests: new Set<string>(),
    contentFiles: new Map<string, DataFile>(),
    missing: 0,
  };
  const tolerate = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (e) {
      if (!opts.missingOk || !isFloeError(e, ErrorKind.NotFound)) throw e;
      out.missing++;
      return undefined;
    }
  };
  for (const s of snapshots) {
    if (s['manifest-list'] !== undefined) out.manifestLists.add(s['manifest-list']);
    for (const { path, manifest } of (await tolerate(() => reader.manifestsOf(s))) ?? []) {
      if (out.manifests.has(path)) continue;
      out.manifests.add(path);
      for (const f of (await tolerate(() => reader.liveFilesOf(path, manifest))) ?? [])
        out.contentFiles.set(f.file_path, f);
    }
  }
  return out;
}

/**
 * Every file the metadata itself names: the metadata files of its log, statistics files, and
 * files table properties point at (the commit watermark of older Floe versions).
 */
export function metadataFiles(meta: TableMetadata, metadataLocation: string): Set<string> {
  const out = new Set<string>([metadataLocation, ...meta['metadata-log'].map((e) => e['metadata-file'])]);
  for (const s of [...meta.statistics, ...meta['partition-statistics']]) {
    const path = (s as { 'statistics-path'?: unknown })['statistics-path'];
    if (typeof path === 'string') out.add(path);
  }
  for (const v of Object.values(meta.properties)) if (/^[a-z][a-z0-9+.-]*:\/\/?\S+$/i.test(v)) out.add(v);
  return out;
}
