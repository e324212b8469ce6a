/**
 * How many rows a table holds now: rows written minus those removed by position and equality
 * deletes. Without delete files this is metadata only (the snapshot summary, else the planned
 * files' record counts); with them the rows are counted through DuckDB, because an equality delete
 * can only be matched by reading the data.
 */
import { planScan, type ReadFile } from '../iceberg/scan.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { IcebergQueryEngine } from './engine.ts';
import { type RowCounts, rowCountsFromSummary } from './summary-rows.ts';
import type { ResolvePath } from './table-view.ts';

export type { RowCounts };

export interface TableIo {
  readonly read: ReadFile;
  readonly resolvePath: ResolvePath;
}

/** Counts a table's current rows; `engine` is reused when given (several tables in one report). */
export async function countRows(
  m: TableMetadata,
  io: TableIo,
  engine?: IcebergQueryEngine,
): Promise<RowCounts> {
  const fromSummary = rowCountsFromSummary(m);
  if (fromSummary) return fromSummary;
  const plan = await planScan(m, io.read);
  const written = plan.tasks.reduce((n, t) => n + t.file.record_count, 0n);
  if (plan.tasks.every((t) => t.deletes.length === 0)) return { live: written, written };
  const own = engine === undefined;
  const duck = engine ?? new IcebergQueryEngine(io);
  try {
    await duck.registerScanPlan('__floe_live_rows', plan, { resolvePath: io.resolvePath });
    const { rows } = await duck.query('SELECT count(*) AS n FROM "__floe_live_rows"');
    return { live: rows[0]?.n as bigint, written };
  } finally {
    if (own) duck.close();
  }
}
