/**
 * Row counts a snapshot summary proves on its own: with no live delete file, the rows written
 * (`total-records`) are the rows a reader sees. Metadata only — no manifest or DuckDB import — so
 * `floe tables` stays light for tables without deletes.
 */
import { currentSnapshot, type TableMetadata } from '../iceberg/table-metadata.ts';

export interface RowCounts {
  /** Rows a reader sees: after position and equality deletes. */
  readonly live: bigint;
  /** Rows in the live data files, before deletes. */
  readonly written: bigint;
}

/** The counts when the current snapshot's summary settles them, else undefined (deletes, or no summary). */
export function rowCountsFromSummary(m: TableMetadata): RowCounts | undefined {
  const snapshot = currentSnapshot(m);
  if (!snapshot) return { live: 0n, written: 0n };
  const total = snapshot.summary['total-records'];
  if (snapshot.summary['total-delete-files'] !== '0' || total === undefined || !/^\d+$/.test(total)) {
    return undefined;
  }
  return { live: BigInt(total), written: BigInt(total) };
}

/** `total-records` of the current snapshot (rows written, deletes not subtracted), when recorded. */
export function rowsWrittenFromSummary(m: TableMetadata): bigint | undefined {
  const total = currentSnapshot(m)?.summary['total-records'];
  return total !== undefined && /^\d+$/.test(total) ? BigInt(total) : undefined;
}
