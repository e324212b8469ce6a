/**
 * A table built the way streaming builds one: many small loads, each a commit with one small file
 * per partition. Also an independent reader of what the table holds — our manifest walk is not
 * used: the live files come from `liveFiles` (test/helpers/e2e.ts) and their rows from DuckDB by
 * Parquet field id.
 */
import { promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { seededIds } from '../../../../lambdas/src/adapters/local/system-clock.ts';
import type { MaintenanceDeps } from '../../../../lambdas/src/app/maintain/index.ts';
import { liveRowsReader } from '../../../../lambdas/src/app/maintain/live-rows.ts';
import { parseConfig } from '../../../../lambdas/src/config.ts';
import { currentSchema } from '../../../../lambdas/src/iceberg/table-metadata.ts';
import type { TableIdentifier } from '../../../../lambdas/src/ports/catalog.ts';
import {
  currentSnapshotOf,
  type Duck,
  fileWarehouse,
  liveFiles,
  load,
  sqlString,
  type TestWarehouse,
  tempDir,
} from '../../../helpers/e2e.ts';
import { ManualClock } from '../../../helpers/faults.ts';

export const START_MS = Date.UTC(2026, 0, 1);
export const CLICKS: TableIdentifier = { namespace: 'default', name: 'click_events' };

export interface SmallLoads {
  readonly wh: TestWarehouse;
  readonly clock: ManualClock;
  readonly ids: bigint[];
  cleanup(): void;
  /** One more load of `n` rows (ids continue), `minutes` after the previous one. */
  more(n: number, minutes?: number): Promise<void>;
  deps(over?: Partial<MaintenanceDeps>): MaintenanceDeps;
}

let seed = 7000;

export async function smallLoads(
  loads: number,
  rowsPerLoad: number,
  opts: { readonly formatVersion?: 2 | 3 } = {},
): Promise<SmallLoads> {
  const config =
    opts.formatVersion === undefined ? undefined : parseConfig({ formatVersion: opts.formatVersion });
  const tmp = tempDir('floe-maintain-');
  const wh = fileWarehouse(tmp.dir);
  const clock = new ManualClock(START_MS);
  const ids: bigint[] = [];
  const more = async (n: number, minutes = 1) => {
    clock.advance(minutes * 60_000);
    const lines: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = BigInt(ids.length + 1);
      ids.push(id);
      lines.push(
        JSON.stringify({
          event_type: 'click',
          id: Number(id),
          region: id % 2n === 0n ? 'eu' : 'us',
          page: `/p/${id % 7n}`,
        }),
      );
    }
    const run = await load(wh, [{ name: `load-${ids.length}.ndjson`, lines }], {
      clock,
      ids: seededIds(seed++),
      ...(config ? { config } : {}),
    });
    if (run.dead.length > 0) throw new Error(`unexpected dead letters: ${run.dead[0]!.reason}`);
  };
  for (let i = 0; i < loads; i++) await more(rowsPerLoad);
  return {
    wh,
    clock,
    ids,
    cleanup: tmp.cleanup,
    more,
    deps: (over = {}) => ({
      catalog: wh.catalog,
      store: wh.store,
      clock,
      ids: seededIds(seed++),
      sleep: async () => undefined,
      liveRows: liveRowsReader(wh.store),
      ...over,
    }),
  };
}

/** The `id` column of every live row, by an independent manifest walk and DuckDB. */
export async function idsInTable(
  duck: Duck,
  wh: TestWarehouse,
  id: TableIdentifier = CLICKS,
): Promise<bigint[]> {
  const t = await wh.catalog.loadTable(id);
  const snap = currentSnapshotOf(t.metadata);
  if (!snap) return [];
  const files = (await liveFiles(wh.store, snap)).map((f) => fileURLToPath(f.file.file_path));
  for (const f of files) await fs.access(f); // every file the table names exists
  const field = currentSchema(t.metadata).fields.find((f) => f.name === 'id')!;
  const rows = await duck.rows(
    `SELECT f AS id FROM read_parquet([${files.map(sqlString).join(', ')}], schema=map{${field.id}: {name: 'f', type: 'BIGINT', default_value: NULL}}) ORDER BY 1`,
  );
  return rows.map((r) => BigInt(r.id as bigint));
}

/** Every file under the table folder (relative paths). */
export async function filesUnder(wh: TestWarehouse, id: TableIdentifier = CLICKS): Promise<string[]> {
  const root = `${wh.dir}/${id.namespace}/${id.name}`;
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const p = `${d}/${e.name}`;
      if (e.isDirectory()) await walk(p);
      else out.push(p.slice(root.length + 1));
    }
  };
  await walk(root);
  return out.sort();
}
