/**
 * A table's health in the numbers maintenance changes and operators alarm on: live data and delete
 * files, their average size, snapshots retained, manifests of the current snapshot, and the size of
 * the current metadata file (read by every commit and every query planner).
 */
import { DataFileContent } from '../../iceberg/manifest/types.ts';
import { planScan, type ScanPlan } from '../../iceberg/scan.ts';
import type { LoadedTable } from '../../ports/catalog.ts';
import type { ObjectStore } from '../../ports/object-store.ts';

export interface TableHealth {
  readonly snapshots: number;
  readonly dataFiles: number;
  readonly deleteFiles: number;
  readonly records: bigint;
  readonly dataBytes: bigint;
  /** Average data file size (bytes), 0 without files. */
  readonly averageFileBytes: number;
  readonly metadataBytes: number;
}

export async function tableHealth(
  store: ObjectStore,
  table: LoadedTable,
  /** The current snapshot's scan plan, when the caller has it already. */
  planned?: ScanPlan,
): Promise<TableHealth> {
  const plan = planned ?? (await planScan(table.metadata, (u) => store.get(u)));
  const deletes = new Set<string>();
  let records = 0n;
  let dataBytes = 0n;
  for (const t of plan.tasks) {
    records += t.file.record_count;
    dataBytes += t.file.file_size_in_bytes;
    for (const d of t.deletes) if (d.file.content !== DataFileContent.DATA) deletes.add(d.file.file_path);
  }
  const dataFiles = plan.tasks.length;
  return {
    snapshots: table.metadata.snapshots.length,
    dataFiles,
    deleteFiles: deletes.size,
    records,
    dataBytes,
    averageFileBytes: dataFiles === 0 ? 0 : Number(dataBytes / BigInt(dataFiles)),
    metadataBytes: await store.size(table.metadataLocation).catch(() => 0),
  };
}
