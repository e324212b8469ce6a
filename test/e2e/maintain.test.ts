/**
 * Issue 12, as it will be checked: a warehouse built from hundreds of small loads, with orphan
 * files planted older and younger than the threshold, is maintained by the real command while
 * another `floe load` runs against it. Every table must then hold exactly the rows loaded (read
 * by DuckDB from the files an independent manifest walk finds), with about one data file per
 * partition, the snapshots that were retained, the old orphans gone and the young ones kept.
 */
import { promises as fs, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import {
  currentSnapshotOf,
  type Duck,
  fileWarehouse,
  liveFiles,
  load,
  openDuck,
  type TestWarehouse,
  tempDir,
} from '../helpers/e2e.ts';
import { expectValidTable, localTableIo } from '../helpers/iceberg-validator.ts';
import { BIN, runNode } from '../helpers/run-node.ts';
import { idsInTable } from '../unit/app/maintain/small-loads.ts';

const TABLES = ['click_events', 'order_events', 'user_events'] as const;
const REGIONS = ['eu', 'us', 'ap'] as const;
const LOADS = 120;
const ROWS_PER_LOAD = 12; // 4 per table: every load commits to all three tables, 1–3 partitions each
const LATE_ROWS = 30_000; // the load that runs while maintenance does
const DAY = 86_400_000;

const floe = (...args: string[]) => runNode([BIN, ...args], { FLOE_WAREHOUSE: undefined });

function event(id: number): Record<string, unknown> {
  const type = ['CLICK', 'ORDER', 'USER'][id % 3]!;
  return {
    event_type: type,
    id,
    region: REGIONS[Math.floor(id / 3) % 3],
    note: `n${id % 97}`,
    amount: id * 0.5,
  };
}

function tableOf(id: number): string {
  return TABLES[id % 3]!;
}

describe('floe maintain on a warehouse of small loads, while a load runs', () => {
  const tmp = tempDir('floe-e2e-maintain-');
  let wh: TestWarehouse;
  let duck: Duck;
  const expected = new Map<string, bigint[]>(TABLES.map((t) => [t, []]));
  const planted = { old: [] as string[], young: [] as string[] };
  let maintainRun: Awaited<ReturnType<typeof floe>>;
  let lateRun: Awaited<ReturnType<typeof floe>>;

  beforeAll(async () => {
    duck = await openDuck();
    wh = fileWarehouse(tmp.dir);
    let id = 0;
    for (let l = 0; l < LOADS; l++) {
      const lines: string[] = [];
      for (let i = 0; i < ROWS_PER_LOAD; i++, id++) {
        lines.push(JSON.stringify(event(id)));
        expected.get(tableOf(id))!.push(BigInt(id));
      }
      const run = await load(wh, [{ name: `small-${l}.ndjson`, lines }], { ids: seededIds(50_000 + l) });
      expect(run.dead).toEqual([]);
    }
    // Orphans as failed attempts leave them: in data/ and metadata/, old and young.
    const nowMs = Date.now();
    for (const t of TABLES) {
      for (const [kind, ageMs] of [
        ['old', 10 * DAY],
        ['young', 3_600_000],
      ] as const) {
        for (const rel of [
          `data/region=eu/00000-orphan-${kind}.parquet`,
          `metadata/orphan-${kind}-m0.avro`,
        ]) {
          const p = join(tmp.dir, 'default', t, rel);
          await fs.writeFile(p, `left behind by a failed commit (${kind})`);
          await fs.utimes(p, (nowMs - ageMs) / 1000, (nowMs - ageMs) / 1000);
          planted[kind].push(p);
        }
      }
    }
    const late: string[] = [];
    for (let i = 0; i < LATE_ROWS; i++, id++) {
      late.push(JSON.stringify(event(id)));
      expected.get(tableOf(id))!.push(BigInt(id));
    }
    const lateFile = join(tmp.dir, 'late.ndjson');
    writeFileSync(lateFile, `${late.join('\n')}\n`);
    // Both at once, as separate processes: the load commits whenever it is ready.
    [lateRun, maintainRun] = await Promise.all([
      floe('load', lateFile, '-w', tmp.dir, '-q'),
      floe('maintain', '-w', tmp.dir, '--retain-last', '3', '--expire-older-than', '0s'),
    ]);
  }, 240_000);

  afterAll(() => {
    duck?.close();
    tmp.cleanup();
  });

  it('both commands succeed, and maintenance reports what it did', () => {
    expect(lateRun.code, lateRun.stderr).toBe(0);
    expect(maintainRun.code, maintainRun.stderr).toBe(0);
    for (const t of TABLES) expect(maintainRun.stdout).toContain(`default.${t}`);
    expect(maintainRun.stdout).toMatch(/compaction\s+\d+ files → \d+/);
    expect(maintainRun.stdout).toMatch(/orphans\s+deleted 2 of \d+ files/);
  });

  it('an independent validator accepts every table, every snapshot', async () => {
    for (const t of TABLES) {
      const table = await wh.catalog.loadTable({ namespace: 'default', name: t });
      const report = await expectValidTable({
        metadataJson: await wh.store.get(table.metadataLocation),
        metadataLocation: table.metadataLocation,
        ...localTableIo(),
        snapshots: 'all',
      });
      expect(report.stats.liveRecords).toBe(BigInt(expected.get(t)!.length));
    }
  });

  it('every table holds exactly the rows loaded, each once', async () => {
    for (const t of TABLES) {
      const ids = await idsInTable(duck, wh, { namespace: 'default', name: t });
      expect(ids).toEqual(expected.get(t)!.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    }
  });

  it('the small files became about one per partition, and the snapshots what was retained', async () => {
    for (const t of TABLES) {
      const table = await wh.catalog.loadTable({ namespace: 'default', name: t });
      const files = await liveFiles(wh.store, currentSnapshotOf(table.metadata)!);
      // One compacted file per partition, plus one per partition if the late load landed after
      // compaction planned (it may not have: the two raced).
      expect(files.length).toBeGreaterThanOrEqual(REGIONS.length);
      expect(files.length).toBeLessThanOrEqual(2 * REGIONS.length);
      // 3 retained, plus the late load's commit if it landed after expiry.
      expect(table.metadata.snapshots.length).toBeLessThanOrEqual(4);
    }
  });

  it('old orphans are gone, young ones kept', async () => {
    const exists = (p: string) =>
      fs.access(p).then(
        () => true,
        () => false,
      );
    for (const p of planted.old) expect(await exists(p), p).toBe(false);
    for (const p of planted.young) expect(await exists(p), p).toBe(true);
  });
});

describe('floe maintain, the command line', () => {
  const tmp = tempDir('floe-e2e-maintain-cli-');
  afterAll(() => tmp.cleanup());

  it('--help names every step and threshold', async () => {
    const r = await floe('maintain', '--help');
    expect(r.code).toBe(0);
    for (const flag of [
      '--compact',
      '--rewrite-manifests',
      '--expire',
      '--orphans',
      '--retain-last',
      '--expire-older-than',
      '--orphans-older-than',
      '--target-file-size',
      '--rewrite-locations',
      '--dry-run',
      '--json',
    ])
      expect(r.stdout).toContain(flag);
  });

  it('refuses a malformed duration or count with a message naming the option', async () => {
    const wh = fileWarehouse(tmp.dir);
    await load(wh, [{ name: 'a.ndjson', lines: [JSON.stringify(event(1))] }], { ids: seededIds(1) });
    const bad = await floe('maintain', '-w', tmp.dir, '--expire-older-than', '5 days');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--expire-older-than must be a whole number and a unit .* got '5 days'/);
    const zero = await floe('maintain', '-w', tmp.dir, '--retain-last', '0');
    expect(zero.code).toBe(1);
    expect(zero.stderr).toMatch(/--retain-last must be a whole number of at least 1, got '0'/);
    const none = await floe('maintain', 'no_such_table', '-w', tmp.dir);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/table no_such_table not found/);
  });

  it('--dry-run --json reports per table, with exact integers, and changes nothing', async () => {
    const wh = fileWarehouse(tmp.dir);
    for (let i = 2; i < 6; i++)
      await load(wh, [{ name: `b${i}.ndjson`, lines: [JSON.stringify(event(i * 3 + 1))] }], {
        ids: seededIds(i),
      });
    const table = await wh.catalog.loadTable({ namespace: 'default', name: 'order_events' });
    const r = await floe(
      'maintain',
      'order_events',
      '-w',
      tmp.dir,
      '--dry-run',
      '--json',
      '--expire-older-than',
      '0s',
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout.replace(/:\s*(\d{16,})/g, ':"$1"')) as {
      table: string;
      dryRun: boolean;
      compaction: { planned: number };
      expiry: { snapshotsExpired: number };
    };
    expect(report.table).toBe('default.order_events');
    expect(report.dryRun).toBe(true);
    // Five loads of one order each (ids 1, 7, 10, 13, 16: regions eu, ap, eu, us, ap): the two
    // pairs are worth compacting, the lone `us` file is not; all but the newest snapshot expire.
    expect(report.compaction.planned).toBe(4);
    expect(report.expiry.snapshotsExpired).toBe(4);
    const after = await wh.catalog.loadTable({ namespace: 'default', name: 'order_events' });
    expect(after.metadataLocation).toBe(table.metadataLocation);
  });
});
