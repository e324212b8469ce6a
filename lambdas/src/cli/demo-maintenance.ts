/**
 * The demo's last act: every table is maintained as a long-running deployment would be (compaction,
 * manifest rewrite, expiry keeping the newest snapshot, orphan cleanup), with the stream stopped so
 * nothing is in flight, and files the ledger still names spared all the same. With `--chaos` the
 * orphans are the files failed attempts left behind.
 */
import { maintainTable, type TableMaintenanceReport } from '../app/maintain/index.ts';
import { liveRowsReader } from '../app/maintain/live-rows.ts';
import { ALL_STEPS } from '../app/maintain/options.ts';
import { stagedFiles } from '../app/maintain/staged-files.ts';
import type { LocalStack } from '../local/stack.ts';
import type { TableIdentifier } from '../ports/catalog.ts';
import { formatBytes, renderTable } from './format.ts';

export async function maintainDemoTables(
  stack: LocalStack,
  tables: readonly TableIdentifier[],
): Promise<{ reports: TableMaintenanceReport[]; table: string }> {
  const reports: TableMaintenanceReport[] = [];
  for (const id of tables) {
    const deps = {
      catalog: stack.catalog,
      store: stack.store,
      clock: stack.clock,
      ids: stack.ids,
      liveRows: liveRowsReader(stack.store),
      staged: async (t: TableIdentifier) =>
        stagedFiles(stack.ledger, stack.store, t.name, (await stack.catalog.loadTable(t)).metadata),
    };
    reports.push(
      await maintainTable(deps, id, {
        steps: ALL_STEPS,
        retainLast: 1,
        expireOlderThanMs: 0,
        orphansOlderThanMs: 0,
      }),
    );
  }
  const rows = reports.map((r) => [
    r.table,
    `${r.before.dataFiles} → ${r.after.dataFiles}`,
    `${formatBytes(r.before.averageFileBytes)} → ${formatBytes(r.after.averageFileBytes)}`,
    `${r.before.snapshots} → ${r.after.snapshots}`,
    String(r.orphans?.orphans ?? 0),
    r.failed.length === 0 ? 'ok' : r.failed.map((f) => `${f.step}: ${f.error}`).join('; '),
  ]);
  return {
    reports,
    table: renderTable(['table', 'data files', 'avg file', 'snapshots', 'orphans deleted', 'steps'], rows),
  };
}
