/**
 * End to end: generated sample events (v1, then v2) → `loadSources` → warehouse, then read back by
 * readers that share none of our read path:
 *  a. DuckDB directly on the data files we list from our own manifests (`parquet_schema`, and
 *     `read_parquet(..., schema=map{field id: ...})` with SQL written here, not by lambdas/src/query);
 *  b. icebird over HTTP (version-hint → metadata → Avro manifests → Parquet, all its own code);
 *  c. our query engine (the `floe query` path), which must agree with (a).
 * Every expectation is derived from the generated NDJSON lines, and every table passes the
 * independent Iceberg validator (every snapshot walked).
 */
import { join } from 'node:path';
import { icebergRead } from 'icebird';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileCatalog } from '../../lambdas/src/adapters/local/file-catalog.ts';
import { LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import type { Schema } from '../../lambdas/src/iceberg/schema.ts';
import type { TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import type { IcebergType } from '../../lambdas/src/iceberg/types.ts';
import { IcebergQueryEngine } from '../../lambdas/src/query/engine.ts';
import {
  currentSnapshotOf,
  type Duck,
  duckType,
  expectedParquetIds,
  fileWarehouse,
  type Generated,
  generate,
  groupByTable,
  type Json,
  liveFiles,
  load,
  NOW_MS,
  openDuck,
  type ParquetSchemaRow,
  parquetPaths,
  sorted,
  sqlString,
  type TestWarehouse,
  tempDir,
} from '../helpers/e2e.ts';
import { type StaticServer, serveDirectory } from '../helpers/static-server.ts';
import { expectWarehouseValid, servedFolderIo } from '../helpers/warehouse-validation.ts';

const N = 2000;
const NS = 'default';

// ---------------------------------------------------------------------------------------------
// Column leaves: SQL to read each primitive column (top level and inside structs) as text-comparable
// values, and the same value taken from a generated event.

interface Leaf {
  readonly path: readonly string[];
  readonly type: IcebergType;
}

function leaves(fields: Schema['fields'], prefix: string[] = []): Leaf[] {
  const out: Leaf[] = [];
  for (const f of fields) {
    const path = [...prefix, f.name];
    if (f.type.kind === 'struct') out.push(...leaves(f.type.fields, path));
    else if (f.type.kind !== 'list' && f.type.kind !== 'map') out.push({ path, type: f.type });
  }
  return out;
}

function leafSql(leaf: Leaf): string {
  const ref = leaf.path.map((p) => `"${p}"`).join('.');
  switch (leaf.type.kind) {
    case 'timestamptz':
    case 'timestamp':
      return `epoch_us(${ref})`;
    case 'date':
      return `CAST(${ref} AS VARCHAR)`;
    default:
      return ref;
  }
}

function selectList(ls: readonly Leaf[]): string {
  return ls.map((l, i) => `${leafSql(l)} AS c${i}`).join(', ');
}

/** What a reader must return for `leaf` of a generated event (null when the event lacks it). */
function expectedLeaf(ev: Json, leaf: Leaf): string | null {
  let v: unknown = ev;
  for (const p of leaf.path) v = v !== null && typeof v === 'object' ? (v as Json)[p] : undefined;
  if (v === undefined || v === null) return null;
  if (leaf.type.kind === 'timestamptz' || leaf.type.kind === 'timestamp') {
    const ms = Date.parse(String(v));
    expect(Number.isNaN(ms), `event time ${String(v)}`).toBe(false);
    return String(BigInt(ms) * 1000n);
  }
  return String(v);
}

function rowKey(values: readonly unknown[]): string {
  return JSON.stringify(values.map((v) => (v === null || v === undefined ? null : String(v))));
}

function expectedKeys(events: readonly Json[], ls: readonly Leaf[]): string[] {
  return sorted(events.map((ev) => rowKey(ls.map((l) => expectedLeaf(ev, l)))));
}

function resultKeys(rows: readonly Record<string, unknown>[], ls: readonly Leaf[]): string[] {
  return sorted(rows.map((r) => rowKey(ls.map((_, i) => r[`c${i}`]))));
}

/** `map{id: {name, type, default_value: NULL}, ...}` for the top-level columns of `schema`. */
function schemaMap(schema: Schema): string {
  return `map{${schema.fields
    .map(
      (f) =>
        `${f.id}: {name: ${sqlString(f.name)}, type: ${sqlString(duckType(f.type))}, default_value: NULL}`,
    )
    .join(', ')}}`;
}

function currentSchemaOf(m: TableMetadata): Schema {
  const s = m.schemas.find((x) => x.schemaId === m['current-schema-id']);
  if (!s) throw new Error('no current schema');
  return s;
}

// ---------------------------------------------------------------------------------------------

describe('load v1 then v2, read back with DuckDB directly and with our query engine', () => {
  let tmp: ReturnType<typeof tempDir>;
  let wh: TestWarehouse;
  let v1: Generated;
  let v2: Generated;
  let expected: Map<string, Json[]>;
  let duck: Duck;

  beforeAll(async () => {
    tmp = tempDir();
    wh = fileWarehouse(tmp.dir);
    v1 = generate(N, 'v1', 101);
    v2 = generate(N, 'v2', 202, NOW_MS + 10 * 60_000);
    const r1 = await load(wh, [{ name: 'v1.ndjson', lines: v1.lines }]);
    const r2 = await load(wh, [{ name: 'v2.ndjson', lines: v2.lines }]);
    expect(r1.dead).toEqual([]);
    expect(r2.dead).toEqual([]);
    expected = groupByTable([...v1.events, ...v2.events]);
    duck = await openDuck();
  });

  afterAll(() => {
    duck?.close();
    tmp?.cleanup();
  });

  it('creates one table per event type', async () => {
    expect(sorted(await wh.catalog.listTables(NS))).toEqual(sorted(expected.keys()));
  });

  it('writes every Parquet column (nested children too) with the Iceberg field id of its path, timestamptz as UTC-adjusted', async () => {
    let checkedFiles = 0;
    let checkedTimestamps = 0;
    for (const table of expected.keys()) {
      const { metadata } = await wh.catalog.loadTable({ namespace: NS, name: table });
      const snap = currentSnapshotOf(metadata)!;
      const schemasBySnapshot = new Map(metadata.snapshots.map((s) => [s['snapshot-id'], s['schema-id']]));
      for (const { file, entry, manifest } of await liveFiles(wh.store, snap)) {
        const added = entry.snapshot_id ?? manifest.added_snapshot_id;
        const schemaId = schemasBySnapshot.get(added);
        const writeSchema = metadata.schemas.find((s) => s.schemaId === schemaId);
        expect(writeSchema, `schema of snapshot ${added}`).toBeDefined();
        const want = expectedParquetIds(writeSchema!.fields);
        const rows = (await duck.rows(
          `SELECT name, num_children, field_id, logical_type, type FROM parquet_schema(${sqlString(wh.store.pathOf(file.file_path))})`,
        )) as unknown as ParquetSchemaRow[];
        const got = parquetPaths(rows);
        // Same set of column paths as the schema the file was written with …
        expect(sorted(got.keys()), file.file_path).toEqual(sorted(want.keys()));
        // … and every one carrying exactly that column's Iceberg field id.
        for (const [path, row] of got) {
          const id = want.get(path);
          expect(row.field_id === null ? undefined : Number(row.field_id), `${table} ${path}`).toBe(id);
        }
        // timestamptz columns are INT64 TIMESTAMP(isAdjustedToUTC=true, MICROS).
        const tsPaths = [...want.keys()].filter((p) => typeOfPath(writeSchema!, p)?.kind === 'timestamptz');
        expect(tsPaths.length).toBeGreaterThan(0);
        for (const p of tsPaths) {
          const lt = got.get(p)?.logical_type ?? '';
          expect(lt, `${table} ${p}`).toMatch(/^TimestampType\(isAdjustedToUTC=1\b/);
          expect(lt).toContain('MICROS=MicroSeconds()');
          checkedTimestamps++;
        }
        checkedFiles++;
      }
    }
    expect(checkedFiles).toBeGreaterThanOrEqual(2 * expected.size);
    expect(checkedTimestamps).toBe(checkedFiles);
  });

  it('read_parquet by field id over the manifests’ live files returns exactly the generated events', async () => {
    for (const [table, events] of expected) {
      const { metadata } = await wh.catalog.loadTable({ namespace: NS, name: table });
      const schema = currentSchemaOf(metadata);
      // The table has a column for every field the events carry (empty arrays have no element type).
      const eventKeys = new Set(
        events.flatMap((e) =>
          Object.entries(e)
            .filter(([, v]) => !(Array.isArray(v) && v.length === 0))
            .map(([k]) => k),
        ),
      );
      expect(sorted(schema.fields.map((f) => f.name))).toEqual(sorted(eventKeys));

      const files = (await liveFiles(wh.store, currentSnapshotOf(metadata)!)).map((f) =>
        wh.store.pathOf(f.file.file_path),
      );
      const ls = leaves(schema.fields);
      const rows = await duck.rows(
        `SELECT ${selectList(ls)} FROM read_parquet([${files.map(sqlString).join(', ')}], schema=${schemaMap(schema)}, hive_partitioning=false)`,
      );
      expect(rows.length, table).toBe(events.length);
      expect(resultKeys(rows, ls), table).toEqual(expectedKeys(events, ls));
    }
  });

  it('v2-only columns are null for v1 rows and set for v2 rows (read by field id)', async () => {
    const added = { user_events: 'user_agent', click_events: 'scroll_depth' } as const;
    for (const [table, column] of Object.entries(added)) {
      const { metadata } = await wh.catalog.loadTable({ namespace: NS, name: table });
      const schema = currentSchemaOf(metadata);
      const files = (await liveFiles(wh.store, currentSnapshotOf(metadata)!)).map((f) =>
        wh.store.pathOf(f.file.file_path),
      );
      const rows = await duck.rows(
        `SELECT "metadata"."schema_version" AS v, count(*) AS n, count("${column}") AS set
         FROM read_parquet([${files.map(sqlString).join(', ')}], schema=${schemaMap(schema)}, hive_partitioning=false)
         GROUP BY ALL ORDER BY v`,
      );
      const events = expected.get(table)!;
      const count = (v: string) => events.filter((e) => (e.metadata as Json).schema_version === v).length;
      expect(rows.map((r) => [r.v, Number(r.n), Number(r.set)])).toEqual([
        ['v1', count('v1'), 0],
        ['v2', count('v2'), count('v2')],
      ]);
    }
  });

  it('our query engine (the `floe query` path) returns the same rows as the direct DuckDB read', async () => {
    const engine = new IcebergQueryEngine({
      read: (uri) => wh.store.get(uri),
      resolvePath: (uri) => wh.store.pathOf(uri),
    });
    try {
      for (const [table, events] of expected) {
        const { metadata } = await wh.catalog.loadTable({ namespace: NS, name: table });
        const schema = currentSchemaOf(metadata);
        await engine.registerTable(table, metadata);
        const ls = leaves(schema.fields);
        const ours = await engine.query(`SELECT ${selectList(ls)} FROM "${table}"`);
        const files = (await liveFiles(wh.store, currentSnapshotOf(metadata)!)).map((f) =>
          wh.store.pathOf(f.file.file_path),
        );
        const direct = await duck.rows(
          `SELECT ${selectList(ls)} FROM read_parquet([${files.map(sqlString).join(', ')}], schema=${schemaMap(schema)}, hive_partitioning=false)`,
        );
        expect(resultKeys(ours.rows, ls), table).toEqual(resultKeys(direct, ls));
        expect(ours.rows.length).toBe(events.length);
        // And an aggregate both ways, compared with the input.
        const agg = await engine.query(
          `SELECT count(*) AS n, count(DISTINCT event_id) AS ids FROM "${table}"`,
        );
        expect(Number(agg.rows[0]!.n)).toBe(events.length);
        expect(Number(agg.rows[0]!.ids)).toBe(new Set(events.map((e) => e.event_id)).size);
      }
    } finally {
      engine.close();
    }
  });

  it('an independent validator accepts every table, every snapshot', async () => {
    const reports = await expectWarehouseValid(wh);
    for (const [table, events] of expected)
      expect(reports.get(`${NS}.${table}`)?.stats.liveRecords, table).toBe(BigInt(events.length));
  });
});

function typeOfPath(schema: Schema, path: string): IcebergType | undefined {
  let fields: Schema['fields'] | undefined = schema.fields;
  let t: IcebergType | undefined;
  for (const part of path.split('.')) {
    const f: Schema['fields'][number] | undefined = fields?.find((x) => x.name === part);
    if (!f) return undefined;
    t = f.type;
    fields = t.kind === 'struct' ? t.fields : undefined;
  }
  return t;
}

// ---------------------------------------------------------------------------------------------

describe('icebird reads a table written with HTTP locations', () => {
  let tmp: ReturnType<typeof tempDir>;
  let server: StaticServer;
  let base: string;
  let orders: Json[];
  let store: LocalObjectStore;
  let catalog: FileCatalog;

  beforeAll(async () => {
    tmp = tempDir();
    server = await serveDirectory(tmp.dir);
    base = `${server.url}/wh`;
    // The server serves tmp.dir at `/`, so `<url>/wh/…` lives in `<tmp>/wh/…`.
    store = new LocalObjectStore([{ prefix: base, dir: join(tmp.dir, 'wh') }]);
    catalog = new FileCatalog(store, base);
    const v1 = generate(1500, 'v1', 303);
    const v2 = generate(1500, 'v2', 404, NOW_MS + 10 * 60_000);
    const r1 = await load({ store, catalog }, [{ name: 'v1', lines: v1.lines }]);
    const r2 = await load({ store, catalog }, [{ name: 'v2', lines: v2.lines }]);
    expect([...r1.dead, ...r2.dead]).toEqual([]);
    orders = groupByTable([...v1.events, ...v2.events]).get('order_events')!;
    const { metadata } = await catalog.loadTable({ namespace: NS, name: 'order_events' });
    // The whole table is addressed by HTTP URLs: icebird has no other way in.
    expect(metadata.location).toBe(`${base}/${NS}/order_events`);
  });

  afterAll(async () => {
    await server?.close();
    tmp?.cleanup();
  });

  it('icebergRead returns exactly the generated ORDER events (ids, amounts, times, dates)', async () => {
    const rows = (await icebergRead({ tableUrl: `${base}/${NS}/order_events` })) as Json[];
    expect(rows.length).toBe(orders.length);
    const key = (id: unknown, amount: unknown, timeMs: number, date: string) =>
      JSON.stringify([id, amount, timeMs, date]);
    const got = sorted(
      rows.map((r) => key(r.event_id, r.amount, toMs(r.event_time), toIsoDate(r.event_date))),
    );
    const want = sorted(
      orders.map((e) => key(e.event_id, e.amount, Date.parse(String(e.event_time)), String(e.event_date))),
    );
    expect(got).toEqual(want);
  });

  it('icebergRead sees the v2 column of user_events, null for v1 rows', async () => {
    const rows = (await icebergRead({ tableUrl: `${base}/${NS}/user_events` })) as Json[];
    const set = rows.filter((r) => r.user_agent !== undefined && r.user_agent !== null);
    const users = groupByTable([
      ...generate(1500, 'v1', 303).events,
      ...generate(1500, 'v2', 404, NOW_MS + 10 * 60_000).events,
    ]).get('user_events')!;
    expect(rows.length).toBe(users.length);
    expect(sorted(set.map((r) => `${r.event_id}|${r.user_agent}`))).toEqual(
      sorted(users.filter((u) => u.user_agent !== undefined).map((u) => `${u.event_id}|${u.user_agent}`)),
    );
  });

  it('an independent validator accepts every table, every snapshot (HTTP URLs read from the served folder)', async () => {
    // Mapped as the test's server maps them: `<url>/…` is `<tmp>/…`.
    const io = servedFolderIo(server.url, tmp.dir);
    const reports = await expectWarehouseValid({ store, catalog }, { io });
    expect(reports.get(`${NS}.order_events`)?.stats.liveRecords).toBe(BigInt(orders.length));
  });
});

function toMs(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'bigint') return Number(v / 1000n); // micros
  if (typeof v === 'string') return Date.parse(v);
  return Number(v);
}

function toIsoDate(v: unknown): string {
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (typeof v === 'number') return new Date(v * 86_400_000).toISOString().slice(0, 10); // days
  return String(v);
}

// ---------------------------------------------------------------------------------------------

describe('nested columns (lists of structs, structs in structs) evolved across loads', () => {
  const first = [
    {
      event_type: 'CART',
      event_id: 'C1',
      items: [{ sku: 'a', qty: 1 }],
      tags: ['x', 'y'],
      meta: { a: { b: 1 } },
    },
    { event_type: 'CART', event_id: 'C2', items: [], tags: ['z'], meta: { a: { b: 2 } } },
  ];
  const second = [
    {
      event_type: 'CART',
      event_id: 'C3',
      items: [
        { sku: 'b', qty: 2, price: 1.5 },
        { sku: 'c', qty: 3 },
      ],
      tags: [],
      meta: { a: { b: 3, c: 'n' } },
    },
  ];
  let tmp: ReturnType<typeof tempDir>;
  let wh: TestWarehouse;
  let duck: Duck;

  beforeAll(async () => {
    tmp = tempDir();
    wh = fileWarehouse(tmp.dir);
    for (const [i, batch] of [first, second].entries()) {
      const { dead } = await load(wh, [{ name: `cart-${i}`, lines: batch.map((e) => JSON.stringify(e)) }]);
      expect(dead).toEqual([]);
    }
    duck = await openDuck();
  });

  afterAll(() => {
    duck?.close();
    tmp?.cleanup();
  });

  it('writes the field id of every list element and struct child, as of the schema each file was written with', async () => {
    const { metadata } = await wh.catalog.loadTable({ namespace: NS, name: 'cart_events' });
    expect(metadata.schemas).toHaveLength(2);
    const schemaOfSnapshot = new Map(metadata.snapshots.map((s) => [s['snapshot-id'], s['schema-id']]));
    const files = await liveFiles(wh.store, currentSnapshotOf(metadata)!);
    expect(files).toHaveLength(2);
    const seen = new Set<string>();
    for (const { file, entry, manifest } of files) {
      const schema = metadata.schemas.find(
        (s) => s.schemaId === schemaOfSnapshot.get(entry.snapshot_id ?? manifest.added_snapshot_id),
      )!;
      const want = expectedParquetIds(schema.fields);
      const got = parquetPaths(
        (await duck.rows(
          `SELECT name, num_children, field_id, logical_type, type FROM parquet_schema(${sqlString(wh.store.pathOf(file.file_path))})`,
        )) as unknown as ParquetSchemaRow[],
      );
      expect(sorted(got.keys())).toEqual(sorted(want.keys()));
      for (const [path, row] of got) {
        expect(row.field_id === null ? undefined : Number(row.field_id), path).toBe(want.get(path));
        seen.add(path);
      }
    }
    // The second file has the evolved nested children (new ids inside a list element and a struct).
    expect(seen).toContain('items.list.element.price');
    expect(seen).toContain('meta.a.c');
    expect(seen).toContain('tags.list.element');
  });

  it('reads back the nested values by field id', async () => {
    const { metadata } = await wh.catalog.loadTable({ namespace: NS, name: 'cart_events' });
    const schema = currentSchemaOf(metadata);
    const files = (await liveFiles(wh.store, currentSnapshotOf(metadata)!)).map((f) =>
      sqlString(wh.store.pathOf(f.file.file_path)),
    );
    const rows = await duck.rows(
      `SELECT to_json(items)::VARCHAR AS items, to_json(tags)::VARCHAR AS tags, to_json(meta)::VARCHAR AS meta, event_id
       FROM read_parquet([${files.join(', ')}], schema=${schemaMap(schema)}, hive_partitioning=false) ORDER BY event_id`,
    );
    // Missing struct children read as null; everything else as sent.
    const norm = (e: Json) => ({
      event_id: e.event_id,
      items: (e.items as Json[]).map((i) => ({ sku: i.sku, qty: i.qty, price: i.price ?? null })),
      tags: e.tags,
      meta: { a: { b: (e.meta as { a: Json }).a.b, c: (e.meta as { a: Json }).a.c ?? null } },
    });
    expect(
      rows.map((r) => ({
        event_id: r.event_id,
        items: JSON.parse(String(r.items)),
        tags: JSON.parse(String(r.tags)),
        meta: JSON.parse(String(r.meta)),
      })),
    ).toEqual([...first, ...second].map(norm));
  });

  it('an independent validator accepts the table, every snapshot', async () => {
    const reports = await expectWarehouseValid(wh);
    expect(reports.get(`${NS}.cart_events`)?.stats).toMatchObject({ snapshots: 2, liveRecords: 3n });
  });
});
