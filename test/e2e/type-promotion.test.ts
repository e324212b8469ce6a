/**
 * Type promotion driven by data, end to end through `loadSources` (as `floe load` runs it), on
 * both ingest paths: a value that an `int`, `float` or `decimal(P,S)` column cannot hold but its
 * promotion can (`long`, `double`, `decimal(P',S)`) evolves the column — one new schema, same
 * field id — and every row, old and new, reads back exactly: with DuckDB's `read_parquet` by
 * field id straight from the data files, and through Floe's own query engine (`floe query`).
 * Values that fit add no schema. A dead-lettered record never changes the table's schema or spec.
 * Every table a scenario ends with passes the independent Iceberg validator (every snapshot).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import {
  fixedClock,
  randomIds,
  seededIds,
  systemClock,
} from '../../lambdas/src/adapters/local/system-clock.ts';
import { type LoadReport, loadSources } from '../../lambdas/src/app/load.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import type { DeadLetter } from '../../lambdas/src/engine/dead-letters.ts';
import type { TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import { currentSchema, defaultSpec } from '../../lambdas/src/iceberg/table-metadata.ts';
import { typeToString } from '../../lambdas/src/iceberg/types.ts';
import type { Catalog } from '../../lambdas/src/ports/catalog.ts';
import {
  currentSnapshotOf,
  fileWarehouse,
  liveFiles,
  NOW_MS,
  openDuck,
  sqlString,
  tempDir,
} from '../helpers/e2e.ts';
import { FIXTURES_ROOT } from '../helpers/fixtures.ts';
import { copyTableInto, queryWarehouseTable } from '../helpers/warehouse-copy.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NS = 'default';
const T = 'order_events';

const tmp = tempDir('floe-e2e-promote-');
afterAll(() => tmp.cleanup());
let counter = 0;

interface Wh {
  readonly dir: string;
  readonly store: LocalObjectStore;
  readonly catalog: Catalog;
}

function freshWarehouse(): Wh {
  return fileWarehouse(join(tmp.dir, `wh${counter++}`));
}

let seed = 500;
async function load(
  wh: Wh,
  lines: readonly string[],
  opts: { hints?: Record<string, string>; fastPath: boolean },
): Promise<{ report: LoadReport; dead: DeadLetter[] }> {
  const dead: DeadLetter[] = [];
  const config = parseConfig(opts.hints ? { inference: { hints: { [T]: opts.hints } } } : {});
  const report = await loadSources(
    {
      catalog: wh.catalog,
      store: wh.store,
      clock: fixedClock(NOW_MS + seed * 1000),
      ids: seededIds(seed++),
      config,
      fastPath: opts.fastPath,
      sleep: async () => undefined,
      onDeadLetter: (d) => {
        dead.push(d);
      },
    },
    [{ name: `load-${seed}.ndjson`, lines: [...lines] }],
  );
  expect(report.failures).toEqual([]);
  return { report, dead };
}

async function meta(wh: Wh, name = T): Promise<TableMetadata> {
  return (await wh.catalog.loadTable({ namespace: NS, name })).metadata;
}

function column(m: TableMetadata, name: string) {
  const f = currentSchema(m).fields.find((x) => x.name === name);
  return f && { id: f.id, type: typeToString(f.type) };
}

const order = (id: string, fields: Record<string, string | number>) =>
  `{"event_type":"ORDER","event_id":"${id}",${Object.entries(fields)
    .map(([k, v]) => `"${k}":${v}`)
    .join(',')}}`;

/**
 * `event_id` and the given columns of every live row, read by DuckDB from the data files by field
 * id (the current schema's ids and DuckDB types), each value as text.
 */
async function duckRows(
  wh: Wh,
  m: TableMetadata,
  columns: Record<string, string>,
): Promise<Record<string, string | null>[]> {
  const schema = currentSchema(m);
  const idOf = (name: string) => schema.fields.find((f) => f.name === name)!.id;
  const files = (await liveFiles(wh.store, currentSnapshotOf(m)!)).map((f) =>
    sqlString(wh.store.pathOf(f.file.file_path)),
  );
  const entries = Object.entries({ event_id: 'VARCHAR', ...columns })
    .map(([name, type]) => `${idOf(name)}: {name: '${name}', type: '${type}', default_value: NULL}`)
    .join(', ');
  const duck = await openDuck();
  try {
    const rows = await duck.rows(
      `SELECT ${Object.keys({ event_id: 0, ...columns })
        .map((c) => `CAST(${c} AS VARCHAR) AS ${c}`)
        .join(
          ', ',
        )} FROM read_parquet([${files.join(', ')}], schema=map{${entries}}, hive_partitioning=false) ORDER BY event_id`,
    );
    return rows as Record<string, string | null>[];
  } finally {
    duck.close();
  }
}

/** The Parquet physical type of field `id` in each live data file, in file order. */
async function physicalTypes(wh: Wh, m: TableMetadata, id: number): Promise<string[]> {
  const files = await liveFiles(wh.store, currentSnapshotOf(m)!);
  const duck = await openDuck();
  try {
    const out: string[] = [];
    for (const f of files) {
      const rows = await duck.rows(
        `SELECT type FROM parquet_schema(${sqlString(wh.store.pathOf(f.file.file_path))}) WHERE field_id = ${id}`,
      );
      out.push(String(rows[0]?.type));
    }
    return out.sort();
  } finally {
    duck.close();
  }
}

/** `floe query --json` as a real process. */
async function floeQuery(wh: Wh, sql: string): Promise<Record<string, unknown>[]> {
  const env = { ...process.env };
  delete env.FLOE_WAREHOUSE;
  const { stdout } = await exec(
    process.execPath,
    [join(ROOT, 'bin/floe.mjs'), 'query', '--json', '-w', wh.dir, sql],
    {
      cwd: ROOT,
      env,
    },
  );
  return stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe.each([
  { fastPath: true, path: 'columnar' },
  { fastPath: false, path: 'generic' },
])('promotion driven by values (fast path: $fastPath)', ({ fastPath, path }) => {
  it('int → long: a value beyond 2^31 promotes the column; values that fit add nothing', async () => {
    const wh = freshWarehouse();
    await load(wh, [order('o1', { qty: 7 }), order('o2', { qty: -2147483648 })], {
      hints: { qty: 'int' },
      fastPath,
    });
    const created = await meta(wh);
    expect(column(created, 'qty')?.type).toBe('int');

    // Within int32: the column stays int, no schema is added.
    const fits = await load(wh, [order('o3', { qty: 2147483647 })], { fastPath });
    expect(fits.dead).toEqual([]);
    expect(fits.report.tables[0]?.schemaChanges).toEqual([]);
    expect((await meta(wh)).schemas).toHaveLength(1);

    const big = await load(wh, [order('o4', { qty: 3000000000 }), order('o5', { qty: 5 })], { fastPath });
    expect(big.dead).toEqual([]);
    expect(big.report.tables.map((t) => [t.path, t.schemaChanges])).toEqual([
      [path, [`promoted column ${T}.qty from int to long`]],
    ]);
    const after = await meta(wh);
    expect(after.schemas).toHaveLength(2);
    expect(column(after, 'qty')).toEqual({ id: column(created, 'qty')!.id, type: 'long' });
    // Old files keep INT32, the new one is INT64; both read back as the same column.
    expect(await physicalTypes(wh, after, column(after, 'qty')!.id)).toEqual(['INT32', 'INT32', 'INT64']);
    expect(await duckRows(wh, after, { qty: 'BIGINT' })).toEqual([
      { event_id: 'o1', qty: '7' },
      { event_id: 'o2', qty: '-2147483648' },
      { event_id: 'o3', qty: '2147483647' },
      { event_id: 'o4', qty: '3000000000' },
      { event_id: 'o5', qty: '5' },
    ]);
    expect(
      await floeQuery(
        wh,
        `SELECT event_id, CAST(qty AS VARCHAR) AS q, typeof(qty) AS t FROM ${T} ORDER BY event_id`,
      ),
    ).toEqual([
      { event_id: 'o1', q: '7', t: 'BIGINT' },
      { event_id: 'o2', q: '-2147483648', t: 'BIGINT' },
      { event_id: 'o3', q: '2147483647', t: 'BIGINT' },
      { event_id: 'o4', q: '3000000000', t: 'BIGINT' },
      { event_id: 'o5', q: '5', t: 'BIGINT' },
    ]);
    await expectWarehouseValid(wh);
  });

  it('float → double and decimal(9,2) → decimal(12,2), in one new schema', async () => {
    const wh = freshWarehouse();
    await load(wh, [order('o1', { score: 1.5, amount: 12.5 })], {
      hints: { score: 'float', amount: 'decimal(9,2)' },
      fastPath,
    });
    const created = await meta(wh);
    expect([column(created, 'score')?.type, column(created, 'amount')?.type]).toEqual([
      'float',
      'decimal(9,2)',
    ]);

    // 0.1 is exact in neither float32 nor float64: no reason to widen. 1234567.89 fits decimal(9,2).
    const fits = await load(wh, [order('o2', { score: 0.1, amount: 1234567.89 })], { fastPath });
    expect(fits.dead).toEqual([]);
    expect((await meta(wh)).schemas).toHaveLength(1);

    const wide = await load(
      wh,
      [order('o3', { score: 1e39, amount: 1234567890.12 }), order('o4', { score: -2.25, amount: -0.01 })],
      { fastPath },
    );
    expect(wide.dead).toEqual([]);
    expect(wide.report.tables.map((t) => [t.path, t.schemaChanges])).toEqual([
      [
        path,
        [
          `promoted column ${T}.score from float to double`,
          `promoted column ${T}.amount from decimal(9,2) to decimal(12,2)`,
        ],
      ],
    ]);
    const after = await meta(wh);
    expect(after.schemas).toHaveLength(2);
    expect(column(after, 'score')).toEqual({ id: column(created, 'score')!.id, type: 'double' });
    expect(column(after, 'amount')).toEqual({ id: column(created, 'amount')!.id, type: 'decimal(12,2)' });
    expect(await physicalTypes(wh, after, column(after, 'score')!.id)).toEqual(['DOUBLE', 'FLOAT', 'FLOAT']);

    const duck = await duckRows(wh, after, { score: 'DOUBLE', amount: 'DECIMAL(12,2)' });
    expect(duck.map((r) => [r.event_id, Number(r.score), r.amount])).toEqual([
      ['o1', 1.5, '12.50'],
      ['o2', Math.fround(0.1), '1234567.89'],
      ['o3', 1e39, '1234567890.12'],
      ['o4', -2.25, '-0.01'],
    ]);
    const engine = await queryWarehouseTable(
      openWarehouse(wh.dir),
      { namespace: NS, name: T },
      'SELECT event_id, score, amount, typeof(score) AS s, typeof(amount) AS a FROM t ORDER BY event_id',
    );
    expect(engine.rows.map((r) => [r.event_id, r.score, r.amount, r.s, r.a])).toEqual([
      ['o1', 1.5, '12.50', 'DOUBLE', 'DECIMAL(12,2)'],
      ['o2', Math.fround(0.1), '1234567.89', 'DOUBLE', 'DECIMAL(12,2)'],
      ['o3', 1e39, '1234567890.12', 'DOUBLE', 'DECIMAL(12,2)'],
      ['o4', -2.25, '-0.01', 'DOUBLE', 'DECIMAL(12,2)'],
    ]);
    await expectWarehouseValid(wh);
  });

  it('a long hint promotes an int column even when the values fit', async () => {
    const wh = freshWarehouse();
    await load(wh, [order('o1', { qty: 7 })], { hints: { qty: 'int' }, fastPath });
    const r = await load(wh, [order('o2', { qty: 8 })], { hints: { qty: 'long' }, fastPath });
    expect(r.report.tables.map((t) => [t.path, t.schemaChanges])).toEqual([
      [path, [`promoted column ${T}.qty from int to long`]],
    ]);
    expect(column(await meta(wh), 'qty')?.type).toBe('long');
    await expectWarehouseValid(wh);
  });
});

describe.each([true, false])('a dead-lettered record never changes the table (fast path: %s)', (fastPath) => {
  it('its new columns, promotions and partition candidates are not applied to an existing table', async () => {
    const wh = freshWarehouse();
    await load(wh, [order('o1', { qty: 7, amount: 12.5 })], {
      hints: { qty: 'int', amount: 'decimal(9,2)' },
      fastPath,
    });
    const before = await meta(wh);
    // Line 2 needs qty long, brings `coupon` and the partition candidate `region` (a default
    // candidate), but its amount has a third fractional digit: it is dead-lettered.
    const r = await load(
      wh,
      [
        order('o2', { qty: 8, amount: 3.25 }),
        order('o3', { qty: 3000000000, amount: 1.234, coupon: '"X1"', region: '"eu"' }),
      ],
      { fastPath },
    );
    expect(r.dead.map((d) => [d.line, d.reason])).toEqual([[2, 'invalid-value']]);
    expect(r.report.tables.map((t) => [t.path, t.rows, t.schemaChanges, t.specChanged])).toEqual([
      ['generic', 1, [], false],
    ]);
    const after = await meta(wh);
    expect(after.schemas).toEqual(before.schemas);
    expect(after['current-schema-id']).toBe(before['current-schema-id']);
    expect(after['last-column-id']).toBe(before['last-column-id']);
    expect(after['partition-specs']).toEqual(before['partition-specs']);
    expect(defaultSpec(after).fields).toEqual([]);
    expect(column(after, 'qty')?.type).toBe('int');
    expect(await duckRows(wh, after, { qty: 'INTEGER', amount: 'DECIMAL(9,2)' })).toEqual([
      { event_id: 'o1', qty: '7', amount: '12.50' },
      { event_id: 'o2', qty: '8', amount: '3.25' },
    ]);
    await expectWarehouseValid(wh);
  });

  it('a new table is created without the columns only a dead letter had', async () => {
    const wh = freshWarehouse();
    const r = await load(
      wh,
      [order('o1', { amount: 1.5 }), order('o2', { amount: 1.234, coupon: '"X1"', region: '"eu"' })],
      { hints: { amount: 'decimal(9,2)' }, fastPath },
    );
    expect(r.dead.map((d) => [d.line, d.reason])).toEqual([[2, 'invalid-value']]);
    const m = await meta(wh);
    expect(currentSchema(m).fields.map((f) => f.name)).toEqual(['event_type', 'event_id', 'amount']);
    expect(m.schemas).toHaveLength(1);
    expect(defaultSpec(m).fields).toEqual([]);
    await expectWarehouseValid(wh);
  });
});

describe('a table another engine wrote (Spark: id int bucketed, price decimal(10,2))', () => {
  it('promotes id to long under its bucket[4] partition and price to decimal(14,2); old rows read unchanged', async () => {
    const whDir = join(tmp.dir, 'spark');
    const id = { namespace: NS, name: 'icebird_spark_rename_column' };
    await copyTableInto(join(FIXTURES_ROOT, 'icebird-spark-rename-column'), whDir, id);
    const wh = openWarehouse(whDir);
    const before = (await wh.catalog.loadTable(id)).metadata;
    const oldRows = await queryWarehouseTable(
      wh,
      id,
      'SELECT id, name, CAST(price AS VARCHAR) AS price FROM t',
    );
    expect(oldRows.rows).toHaveLength(4);
    const dead: DeadLetter[] = [];
    const report = await loadSources(
      {
        config: parseConfig({ routing: { tableField: 'floe_table' } }),
        catalog: wh.catalog,
        store: wh.store,
        // The fixture's snapshots are from 2025: a fixed clock before them would be refused.
        clock: systemClock,
        ids: randomIds,
        sleep: async () => undefined,
        onDeadLetter: (d) => {
          dead.push(d);
        },
      },
      [
        {
          name: 'spark.ndjson',
          lines: [
            '{"floe_table":"icebird_spark_rename_column","id":3000000000,"name":"big","price":123456789012.34}',
          ],
        },
      ],
    );
    expect(dead).toEqual([]);
    expect(report.failures).toEqual([]);
    const after = (await openWarehouse(whDir).catalog.loadTable(id)).metadata;
    const field = (m: TableMetadata, n: string) => column(m, n);
    expect(field(before, 'id')?.type).toBe('int');
    expect(field(after, 'id')).toEqual({ id: field(before, 'id')!.id, type: 'long' });
    expect(field(after, 'price')).toEqual({ id: field(before, 'price')!.id, type: 'decimal(14,2)' });
    // The bucket partition is kept: int → long does not change bucket values.
    expect(after['partition-specs']).toEqual(before['partition-specs']);
    const rows = await queryWarehouseTable(
      openWarehouse(whDir),
      id,
      'SELECT CAST(id AS VARCHAR) AS id, name, CAST(price AS VARCHAR) AS price FROM t',
    );
    const key = (r: Record<string, unknown>) => `${r.id}|${r.name}|${r.price}`;
    const norm = (r: Record<string, unknown>) => ({ ...r, id: r.id === null ? null : String(r.id) });
    expect(rows.rows.map(key).sort()).toEqual(
      [...oldRows.rows.map(norm), { id: '3000000000', name: 'big', price: '123456789012.34' }]
        .map(key)
        .sort(),
    );
    // The Spark-written files and Floe's appended ones: the fixture README lists no defect.
    await expectWarehouseValid(openWarehouse(whDir));
  });
});
