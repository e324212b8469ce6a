/**
 * What S3 Tables' unreferenced-file removal and orphan-file cleaners do to a table: delete every
 * object under the table's location that its metadata does not reach. Reachable here: the current
 * metadata file and those of its log, the catalog's version hint, and for every snapshot its
 * manifest list, manifests and the files they name. A file only a table property or a snapshot
 * summary names (the side file of older Floe versions) is not reachable.
 */
import { decodeManifest } from '../../lambdas/src/iceberg/manifest/manifest.ts';
import { decodeManifestList } from '../../lambdas/src/iceberg/manifest/manifest-list.ts';
import type { LoadedTable } from '../../lambdas/src/ports/catalog.ts';
import type { ObjectStore } from '../../lambdas/src/ports/object-store.ts';

export async function reachableFiles(store: ObjectStore, table: LoadedTable): Promise<Set<string>> {
  const m = table.metadata;
  const out = new Set<string>([
    table.metadataLocation,
    ...m['metadata-log'].map((e) => e['metadata-file']),
    `${m.location}/metadata/version-hint.text`,
  ]);
  for (const snapshot of m.snapshots) {
    const list = snapshot['manifest-list'];
    if (list === undefined || out.has(list)) continue;
    out.add(list);
    for (const manifest of decodeManifestList(await store.get(list))) {
      if (out.has(manifest.manifest_path)) continue;
      out.add(manifest.manifest_path);
      for (const e of decodeManifest(await store.get(manifest.manifest_path)).entries)
        out.add(e.data_file.file_path);
    }
  }
  return out;
}

/**
 * Deletes every file under the table's location that it does not reach, except `spare` (files
 * staged ledger entries name: cleaners must spare them, or a commit would reference deleted
 * files). Returns the deleted URIs.
 */
export async function deleteUnreferenced(
  store: ObjectStore,
  table: LoadedTable,
  spare: ReadonlySet<string> = new Set(),
): Promise<string[]> {
  const keep = await reachableFiles(store, table);
  const doomed = (await store.list(table.metadata.location)).filter((u) => !keep.has(u) && !spare.has(u));
  for (const uri of doomed) await store.delete(uri);
  return doomed;
}
