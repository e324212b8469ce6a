/**
 * Appending to tables other engines wrote: each format-v2 fixture table (Spark, Java API, Athena,
 * PyIceberg-era DuckDB test tables) is copied into a scratch warehouse and loaded into with
 * `loadSources`, exactly as `floe load` does. Every original row must survive unchanged (their
 * delete files still applying), the new rows must read back with nulls where they carry no value,
 * and the new metadata must be a proper successor: v<N+1>, parent = the fixture's current
 * snapshot, sequence number + 1, partition fields kept; and the table must pass the independent
 * Iceberg validator with every snapshot walked, apart from the defects the fixture READMEs list,
 * which an append carries over in the fixture's own files. The read-only fixtures are never touched.
 */
import { existsSync, promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomIds, systemClock } from '../../lambdas/src/adapters/local/system-clock.ts';
import { type LoadReport, loadSources } from '../../lambdas/src/app/load.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import type { DeadLetter } from '../../lambdas/src/engine/dead-letters.ts';
import { canPromote } from '../../lambdas/src/iceberg/schema-evolution.ts';
import type { TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import { currentSchema, currentSnapshot, defaultSpec } from '../../lambdas/src/iceberg/table-metadata.ts';
import { isPrimitive, typeEquals, typeToString } from '../../lambdas/src/iceberg/types.ts';
import type { LoadedTable, TableIdentifier } from '../../lambdas/src/ports/catalog.ts';
import { FIXTURES_ROOT } from '../helpers/fixtures.ts';
import { copyTableInto, queryWarehouseTable, rowMultiset, treeListing } from '../helpers/warehouse-copy.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

interface AppendCase {
  /** Fixture folder. */
  readonly fixture: string;
  /** Rows of the current version, from the fixture README. */
  readonly readmeRows: number;
  /** Events to append (the routing field is added by the test). */
  readonly events: readonly Record<string, unknown>[];
  /**
   * Per event, the values its row must read back with (query-result form: int → number,
   * long → bigint, decimal → string, date → ISO date). Every other column must be null.
   */
  readonly expected: readonly Record<string, unknown>[];
  readonly check?: (before: TableMetadata, after: TableMetadata) => void;
}

const CASES: readonly AppendCase[] = [
  {
    fixture: 'duckdb-equality-deletes',
    readmeRows: 2,
    events: [
      { id: 101, name: 'floe-1', bir: '2024-05-01', floe_note: 'appended' },
      { floe_note: 'only new column' },
    ],
    expected: [
      { id: 101, name: 'floe-1', bir: '2024-05-01', floe_note: 'appended' },
      { floe_note: 'only new column' },
    ],
  },
  {
    fixture: 'duckdb-equality-deletes-partitioned',
    readmeRows: 3,
    events: [
      { id: 201, name: 'floe', bir: '2023-12-31' },
      // An existing partition (name=a), and a row without the (required) id.
      { id: 202, name: 'a', floe_note: 'existing partition' },
      { name: 'b', floe_note: 'no id' },
    ],
    expected: [
      { id: 201, name: 'floe', bir: '2023-12-31' },
      { id: 202, name: 'a', floe_note: 'existing partition' },
      { name: 'b', floe_note: 'no id' },
    ],
    check: (before, after) => {
      // A batch without `id` makes the required column optional; nothing else changes.
      expect(currentSchema(before).fields.find((f) => f.name === 'id')?.required).toBe(true);
      expect(currentSchema(after).fields.find((f) => f.name === 'id')?.required).toBe(false);
    },
  },
  {
    fixture: 'duckdb-lineitem-iceberg',
    readmeRows: 51793,
    // Decimal columns are left out here: see "JSON numbers into existing decimal columns" below.
    events: [
      {
        l_orderkey: 9000001,
        l_linenumber: 1,
        l_shipdate: '1998-12-01',
        l_shipmode: 'DRONE',
        floe_source: 'floe',
      },
      { l_comment: 'comment only' },
    ],
    expected: [
      {
        l_orderkey: 9000001,
        l_linenumber: 1,
        l_shipdate: '1998-12-01',
        l_shipmode: 'DRONE',
        floe_source: 'floe',
      },
      { l_comment: 'comment only' },
    ],
  },
  {
    fixture: 'duckdb-partition-evolution',
    readmeRows: 6,
    events: [
      { event_date: '2024-02-01', user_id: 42, event_type: 'signup' },
      { event_date: '2024-01-03', event_type: 'click', floe_note: 'existing partition' },
      { user_id: 43, floe_note: 'null partition values' },
    ],
    expected: [
      { event_date: '2024-02-01', user_id: 42, event_type: 'signup' },
      { event_date: '2024-01-03', event_type: 'click', floe_note: 'existing partition' },
      { user_id: 43, floe_note: 'null partition values' },
    ],
  },
  {
    fixture: 'icebird-athena-example',
    readmeRows: 2,
    events: [
      { id: 3, name: 'floe' },
      { name: 'no id', floe_flag: true },
    ],
    expected: [
      { id: 3, name: 'floe' },
      { name: 'no id', floe_flag: true },
    ],
  },
  {
    fixture: 'icebird-java-bunnies',
    readmeRows: 15,
    // "Breed Name" & co. are not lower-case: only `__happy__` matches an existing column.
    events: [{ __happy__: true, floe_breed: 'Floe Lop', floe_weight: 2.5 }],
    expected: [{ __happy__: true, floe_breed: 'Floe Lop', floe_weight: 2.5 }],
  },
  {
    fixture: 'icebird-spark-bunnies',
    readmeRows: 20,
    events: [{ breed_name_length: 8, floe_breed: 'Floe Rex' }],
    expected: [{ breed_name_length: 8, floe_breed: 'Floe Rex' }],
  },
  {
    fixture: 'icebird-spark-rename-column',
    readmeRows: 4,
    // `price` (decimal) is left out here: see "JSON numbers into existing decimal columns" below.
    events: [
      { id: 7, name: 'floe 🌊 ü', event_date: '2024-07-07', active: true },
      { id: 8, active: false, floe_note: 'no date' },
    ],
    expected: [
      { id: 7, name: 'floe 🌊 ü', event_date: '2024-07-07', active: true },
      { id: 8, active: false, floe_note: 'no date' },
    ],
    check: (_before, after) => {
      const spec = defaultSpec(after);
      expect(spec.fields).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ 'source-id': 1, transform: 'bucket[4]', 'field-id': 1000 }),
          expect.objectContaining({ 'source-id': 3, transform: 'identity', 'field-id': 1001 }),
        ]),
      );
      // The renamed column keeps its id; `event_date` is not added a second time.
      expect(
        currentSchema(after)
          .fields.filter((f) => f.name === 'event_date')
          .map((f) => f.id),
      ).toEqual([3]);
    },
  },
];

const ROUTE_FIELD = 'floe_table';
const SEQ_FIELD = 'floe_seq';
const NAMESPACE = 'default';

interface QueryResult {
  readonly columns: string[];
  readonly rows: Record<string, unknown>[];
}

interface AppendRun {
  readonly whDir: string;
  readonly tableName: string;
  readonly id: TableIdentifier;
  readonly base: LoadedTable;
  readonly baseRows: QueryResult;
  readonly after: LoadedTable;
  readonly afterRows: QueryResult;
  readonly deadLetters: DeadLetter[];
  readonly report: LoadReport;
}

let listingBefore: Record<string, string>;
const scratch: string[] = [];

beforeAll(async () => {
  listingBefore = await treeListing(FIXTURES_ROOT);
});

afterAll(async () => {
  await Promise.all(scratch.map((d) => fs.rm(d, { recursive: true, force: true })));
});

/**
 * Copies `fixture` into a fresh warehouse, queries it, loads `events` into it with `loadSources`
 * (each event gets the routing field and its index as `floe_seq`), and queries it again through a
 * fresh warehouse handle.
 */
async function appendToFixture(
  fixture: string,
  events: readonly Record<string, unknown>[],
  extraConfig: Record<string, unknown> = {},
): Promise<AppendRun> {
  // Routing sanitises names to [a-z0-9_]: the copy is named so the events route to it.
  const tableName = fixture.replaceAll('-', '_');
  const id = { namespace: NAMESPACE, name: tableName };
  const whDir = await fs.mkdtemp(join(tmpdir(), 'floe-fixture-append-'));
  scratch.push(whDir);
  await copyTableInto(join(FIXTURES_ROOT, fixture), whDir, id);

  const wh = openWarehouse(whDir);
  const base = await wh.catalog.loadTable(id);
  const baseRows = await queryWarehouseTable(wh, id, 'SELECT * FROM t');

  const deadLetters: DeadLetter[] = [];
  const lines = events.map((e, i) => JSON.stringify({ [ROUTE_FIELD]: tableName, [SEQ_FIELD]: i, ...e }));
  const report = await loadSources(
    {
      config: parseConfig({ routing: { tableField: ROUTE_FIELD }, ...extraConfig }),
      catalog: wh.catalog,
      store: wh.store,
      clock: systemClock,
      ids: randomIds,
      sleep: async () => undefined,
      onDeadLetter: (d) => {
        deadLetters.push(d);
      },
    },
    [{ name: `${fixture}.ndjson`, lines }],
  );

  // A fresh warehouse handle: nothing cached from the load.
  const wh2 = openWarehouse(whDir);
  const after = await wh2.catalog.loadTable(id);
  const afterRows = await queryWarehouseTable(wh2, id, 'SELECT * FROM t');
  return { whDir, tableName, id, base, baseRows, after, afterRows, deadLetters, report };
}

/**
 * Defects the fixture READMEs list (test/fixtures/iceberg/<fixture>/README.md) that an append
 * carries over: the fixture's snapshots and manifests stay in the table's history.
 */
const KNOWN_DEFECTS: Readonly<Record<string, readonly string[]>> = {
  // A non-current snapshot's manifest list was never checked in.
  'duckdb-equality-deletes': ['manifest_list.missing'],
  // The manifests' file_size_in_bytes do not match the data files on disk.
  'duckdb-partition-evolution': ['file.size_mismatch'],
};

/**
 * The independent validator accepts the table after the append, every snapshot walked, but for
 * the fixture's README defects: those must still be found, and only in files of the fixture
 * (never in a file Floe wrote).
 */
async function expectValidAppend(run: AppendRun, fixture: string): Promise<void> {
  const key = `${run.id.namespace}.${run.id.name}`;
  const known = KNOWN_DEFECTS[fixture] ?? [];
  const wh = openWarehouse(run.whDir);
  const reports = await expectWarehouseValid(wh, { knownDefects: { [key]: known } });
  const report = reports.get(key)!;
  expect([...new Set(report.ignored.map((p) => p.code))].sort()).toEqual([...known].sort());
  const tableDir = join(run.whDir, run.id.namespace, run.id.name);
  for (const p of report.ignored) {
    const rel = relative(tableDir, wh.store.pathOf(p.path ?? ''));
    expect(rel.startsWith('..'), `${p.code} outside the table: ${p.path}`).toBe(false);
    // A file of the copy that the fixture does not have is one Floe wrote.
    const floeWrote = existsSync(join(tableDir, rel)) && !existsSync(join(FIXTURES_ROOT, fixture, rel));
    expect(floeWrote, `${p.code} in a file Floe wrote: ${p.path}`).toBe(false);
  }
}

/**
 * Result values with integer widths erased: an `int` column widened to `long` by the append
 * (DESIGN §3 allows int→long) reads back as bigint, its values unchanged.
 */
function norm(v: unknown): unknown {
  return typeof v === 'bigint' && Number.isSafeInteger(Number(v)) ? Number(v) : v;
}

function normRow(row: Record<string, unknown>, columns: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c] = norm(row[c]);
  return out;
}

/** The appended rows, in event order. */
function appendedRows(run: AppendRun): Record<string, unknown>[] {
  return run.afterRows.rows
    .filter((r) => r[ROUTE_FIELD] !== null)
    .sort((a, b) => Number(a[SEQ_FIELD]) - Number(b[SEQ_FIELD]));
}

describe.each(CASES)('append to $fixture', (c) => {
  let run: AppendRun;

  beforeAll(async () => {
    run = await appendToFixture(c.fixture, c.events);
  });

  it('lands every event (no dead letters)', () => {
    expect(run.deadLetters).toEqual([]);
    expect(run.report.rows).toBe(c.events.length);
    expect(run.report.tables.map((t) => [t.table, t.created])).toEqual([[run.tableName, false]]);
  });

  it('reads the copy as the README says before appending', () => {
    expect(run.baseRows.rows).toHaveLength(c.readmeRows);
  });

  it('keeps every original row unchanged and adds exactly the appended rows', () => {
    const { baseRows, afterRows } = run;
    expect(afterRows.rows).toHaveLength(c.readmeRows + c.events.length);
    const original = afterRows.rows.filter((r) => r[ROUTE_FIELD] === null);
    const cols = baseRows.columns;
    expect(
      rowMultiset(
        original.map((r) => normRow(r, cols)),
        cols,
      ),
    ).toEqual(
      rowMultiset(
        baseRows.rows.map((r) => normRow(r, cols)),
        cols,
      ),
    );
    // The original columns keep their order; the new ones come after them.
    expect(afterRows.columns.slice(0, cols.length)).toEqual(cols);
  });

  it('original rows read null in the new columns', () => {
    const { baseRows, afterRows } = run;
    const added = afterRows.columns.filter((col) => !baseRows.columns.includes(col));
    expect(added).toEqual(expect.arrayContaining([ROUTE_FIELD, SEQ_FIELD]));
    for (const r of afterRows.rows.filter((row) => row[ROUTE_FIELD] === null)) {
      for (const col of added) expect(r[col], col).toBeNull();
    }
  });

  it('appended rows carry their values and null in every column they lack', () => {
    const appended = appendedRows(run);
    expect(appended.map((r) => norm(r[SEQ_FIELD]))).toEqual(c.events.map((_e, i) => i));
    const cols = run.afterRows.columns;
    appended.forEach((row, i) => {
      const want: Record<string, unknown> = {
        [ROUTE_FIELD]: run.tableName,
        [SEQ_FIELD]: i,
        ...c.expected[i],
      };
      const full: Record<string, unknown> = {};
      for (const col of cols) full[col] = col in want ? norm(want[col]) : null;
      expect(normRow(row, cols)).toEqual(full);
    });
  });

  it('commits v<N+1> with a child snapshot of the fixture’s current one', () => {
    const { base, after } = run;
    const n = Number(base.versionToken);
    expect(n).toBeGreaterThan(0);
    expect(after.versionToken).toBe(String(n + 1));
    expect(after.metadataLocation).toBe(
      `${openWarehouse(run.whDir).catalog.defaultLocation(run.id)}/metadata/v${n + 1}.metadata.json`,
    );

    const parent = currentSnapshot(base.metadata);
    const snap = currentSnapshot(after.metadata);
    expect(parent).toBeDefined();
    expect(snap).toBeDefined();
    expect(snap?.['snapshot-id']).not.toBe(parent?.['snapshot-id']);
    expect(snap?.['parent-snapshot-id']).toBe(parent?.['snapshot-id']);
    expect(snap?.['sequence-number']).toBe(base.metadata['last-sequence-number'] + 1n);
    expect(after.metadata['last-sequence-number']).toBe(base.metadata['last-sequence-number'] + 1n);
    expect(snap?.summary.operation).toBe('append');
    expect(after.metadata.refs.main?.['snapshot-id']).toBe(snap?.['snapshot-id']);
    // The table's identity and history are kept.
    expect(after.metadata['table-uuid']).toBe(base.metadata['table-uuid']);
    expect(after.metadata.location).toBe(base.metadata.location);
    expect(after.metadata['format-version']).toBe(2);
    const oldIds = base.metadata.snapshots.map((s) => s['snapshot-id']);
    expect(after.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([...oldIds, snap?.['snapshot-id']]);
    expect(after.metadata['metadata-log'].map((e) => e['metadata-file'])).toContain(base.metadataLocation);
  });

  it('keeps the delete files applying (summary totals carried from the parent)', () => {
    const ps: Readonly<Record<string, string>> = currentSnapshot(run.base.metadata)?.summary ?? {};
    const s: Readonly<Record<string, string>> = currentSnapshot(run.after.metadata)?.summary ?? {};
    for (const k of ['total-delete-files', 'total-position-deletes', 'total-equality-deletes'] as const) {
      if (ps[k] !== undefined) expect(s[k], k).toBe(ps[k]);
    }
    if (ps['total-records'] !== undefined) {
      expect(s['total-records']).toBe(String(BigInt(ps['total-records']) + BigInt(c.events.length)));
    }
    expect(s['added-records']).toBe(String(c.events.length));
  });

  it('keeps existing columns (ids, names; types or a legal widening) and partition fields; only adds', () => {
    const { base, after } = run;
    const oldSchema = currentSchema(base.metadata);
    const newSchema = currentSchema(after.metadata);
    for (const f of oldSchema.fields) {
      const g = newSchema.fields.find((x) => x.id === f.id);
      expect(g?.name).toBe(f.name);
      if (g && !typeEquals(g.type, f.type)) {
        expect(
          isPrimitive(f.type) && isPrimitive(g.type) && canPromote(f.type, g.type, 2),
          `${f.name}: ${typeToString(f.type)} → ${typeToString(g.type)}`,
        ).toBe(true);
      }
    }
    expect(newSchema.fields.slice(0, oldSchema.fields.length).map((f) => f.id)).toEqual(
      oldSchema.fields.map((f) => f.id),
    );
    for (const f of newSchema.fields.filter((x) => !oldSchema.fields.some((o) => o.id === x.id))) {
      expect(f.id).toBeGreaterThan(base.metadata['last-column-id']);
      expect(f.required).toBe(false);
    }
    // Older schemas are kept for the older snapshots.
    expect(after.metadata.schemas.slice(0, base.metadata.schemas.length)).toEqual(base.metadata.schemas);
    const oldSpec = defaultSpec(base.metadata);
    const newSpec = defaultSpec(after.metadata);
    expect(newSpec.fields.slice(0, oldSpec.fields.length)).toEqual(oldSpec.fields);
    expect(after.metadata['partition-specs'].slice(0, base.metadata['partition-specs'].length)).toEqual(
      base.metadata['partition-specs'],
    );
    c.check?.(base.metadata, after.metadata);
  });

  it('passes the independent validator, every snapshot: only the README’s defects, in fixture files', async () => {
    await expectValidAppend(run, c.fixture);
  });

  it('writes the new files inside the copied table folder', async () => {
    const snap = currentSnapshot(run.after.metadata);
    const wh = openWarehouse(run.whDir);
    await wh.catalog.loadTable(run.id); // registers the foreign location with the store
    const tableDir = join(run.whDir, NAMESPACE, run.tableName);
    const listPath = wh.store.pathOf(snap?.['manifest-list'] ?? '');
    expect(listPath.startsWith(`${tableDir}/`)).toBe(true);
    await expect(fs.stat(listPath)).resolves.toBeDefined();
    const dataFiles = (await fs.readdir(tableDir, { recursive: true })).filter((f) => f.endsWith('.parquet'));
    expect(dataFiles.length).toBeGreaterThan(0);
  });
});

/**
 * DESIGN §3 / convert-primitive.ts: a decimal(P,S) column accepts JSON integers and numbers
 * (exact, never rounded): the load fits inferred `long`/`double` to the existing decimal column
 * (schema/fit.ts) instead of trying to evolve it, and the converter checks each value.
 */
describe('JSON numbers into existing decimal columns', () => {
  it('icebird-spark-rename-column: price decimal(10,2) takes 1234.5 and -0.01', async () => {
    const run = await appendToFixture('icebird-spark-rename-column', [
      { id: 9, price: 1234.5 },
      { id: 10, price: -0.01 },
    ]);
    expect(run.deadLetters).toEqual([]);
    expect(appendedRows(run).map((r) => r.price)).toEqual(['1234.50', '-0.01']);
    expect(typeToString(currentSchema(run.after.metadata).fields.find((f) => f.name === 'price')!.type)).toBe(
      'decimal(10,2)',
    );
    await expectValidAppend(run, 'icebird-spark-rename-column');
  });

  it('duckdb-lineitem-iceberg: l_quantity decimal(15,2) takes 5 and l_extendedprice 12345.67', async () => {
    const run = await appendToFixture('duckdb-lineitem-iceberg', [
      { l_orderkey: 1, l_quantity: 5, l_extendedprice: 12345.67 },
    ]);
    expect(run.deadLetters).toEqual([]);
    const [row] = appendedRows(run);
    expect([row?.l_quantity, row?.l_extendedprice]).toEqual(['5.00', '12345.67']);
    await expectValidAppend(run, 'duckdb-lineitem-iceberg');
  });

  it('also works with an inference hint naming the column type', async () => {
    const run = await appendToFixture(
      'icebird-spark-rename-column',
      [
        { id: 9, price: 1234.5 },
        { id: 10, price: -0.01 },
      ],
      {
        inference: { hints: { icebird_spark_rename_column: { price: 'decimal(10,2)' } } },
      },
    );
    expect(run.deadLetters).toEqual([]);
    expect(appendedRows(run).map((r) => r.price)).toEqual(['1234.50', '-0.01']);
    expect(run.afterRows.rows).toHaveLength(4 + 2);
    await expectValidAppend(run, 'icebird-spark-rename-column');
  });
});

describe('the shared fixtures', () => {
  it('are untouched by the appends (same listing, sizes, modes and mtimes)', async () => {
    expect(await treeListing(FIXTURES_ROOT)).toEqual(listingBefore);
  });
});
