/**
 * tableViewSql's grouped anti-joins (data files under the same delete files share one `NOT EXISTS`
 * per kind of delete; delete files are unioned per equality-id set) return exactly the rows of the
 * per-file view it replaced (per-file-table-view.ts: one `NOT EXISTS` per data file × delete file)
 * and of the independent reader (test/helpers/iceberg-rows.ts), on tables with several commits,
 * position deletes, partitioned and global equality deletes on several id sets, nested keys,
 * identity-partition columns missing from some files and equality columns dropped since; and it
 * needs one `NOT EXISTS` per group, not one per data file × delete file.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../lambdas/src/config.ts';
import { planScan, type ReadFile, type ScanPlan } from '../../../lambdas/src/iceberg/scan.ts';
import { parseTableMetadata } from '../../../lambdas/src/iceberg/table-metadata.ts';
import type { TableIdentifier } from '../../../lambdas/src/ports/catalog.ts';
import { resultValueConverter } from '../../../lambdas/src/query/result-values.ts';
import { type ResolvePath, tableViewSql } from '../../../lambdas/src/query/table-view.ts';
import { expectedState, keyOfRow, type UpsertSpecJson } from '../../fuzz/change-streams.ts';
import { fileWarehouse, load, type TestWarehouse, tempDir } from '../../helpers/e2e.ts';
import { readTableRows } from '../../helpers/iceberg-rows.ts';
import {
  type BuiltTable,
  type Column,
  type NewFile,
  type PartitionField,
  parquetOf,
  positionDeletesOf,
  type SchemaField,
  TableBuilder,
} from '../../helpers/iceberg-table-builder.ts';
import { commitDeletes } from '../app/maintain/deletes.ts';
import { CLICKS, smallLoads } from '../app/maintain/small-loads.ts';
import { perFileTableViewSql } from './per-file-table-view.ts';

let tmp: { dir: string; cleanup: () => void };
let instance: DuckDBInstance;
let conn: DuckDBConnection;
let runs = 0;

beforeAll(async () => {
  tmp = tempDir('floe-view-deletes-');
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
});

afterAll(() => {
  conn?.closeSync();
  instance?.closeSync();
  tmp?.cleanup();
});

async function query(sql: string): Promise<Record<string, unknown>[]> {
  const reader = await conn.runAndReadAll(sql);
  return reader.convertRowObjects(resultValueConverter);
}

/** Rows as sorted texts, values normalised (integers as numbers, struct fields sorted). */
function canon(rows: readonly Record<string, unknown>[]): string[] {
  const norm = (v: unknown): unknown => {
    if (typeof v === 'bigint') return Number(v);
    if (Array.isArray(v)) return v.map(norm);
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(
        Object.entries(v)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, x]) => [k, norm(x)]),
      );
    return v ?? null;
  };
  return rows.map((r) => JSON.stringify(norm(r))).sort();
}

const count = (text: string, what: string) => text.split(what).length - 1;

interface Views {
  readonly plan: ScanPlan;
  readonly sql: string;
  readonly grouped: string[];
  /** Empty when not asked for. */
  readonly perFile: string[];
  readonly reader: string[];
}

/** The grouped view, the per-file view and the independent reader over one table. */
async function views(
  metadataJson: string,
  read: ReadFile,
  resolvePath: ResolvePath,
  withPerFile = true,
): Promise<Views> {
  const plan = await planScan(parseTableMetadata(metadataJson), read);
  const sql = tableViewSql(plan, resolvePath);
  const grouped = canon(await query(sql));
  const perFile = withPerFile ? canon(await query(perFileTableViewSql(plan, resolvePath))) : [];
  const reader = canon((await readTableRows({ metadataJson, read })).rows);
  return { plan, sql, grouped, perFile, reader };
}

/** A hand-built table's files on disk (DuckDB reads paths), for `views`. */
async function builtViews(t: BuiltTable, location: string, withPerFile = true): Promise<Views> {
  const dir = join(tmp.dir, `t${runs++}`);
  mkdirSync(dir);
  const resolvePath = (uri: string) => join(dir, uri.slice(location.length + 1).replaceAll('/', '_'));
  const plan = await planScan(parseTableMetadata(t.metadataJson), t.read);
  const uris = plan.tasks.flatMap((task) => [
    task.file.file_path,
    ...task.deletes.map((d) => d.file.file_path),
  ]);
  for (const uri of new Set(uris)) writeFileSync(resolvePath(uri), await t.read(uri));
  return views(t.metadataJson, t.read, resolvePath, withPerFile);
}

function expectSame(v: Views): void {
  expect(v.grouped).toEqual(v.perFile);
  expect(v.grouped).toEqual(v.reader);
}

/** `NOT EXISTS` the per-file view needs: one per data file × applicable delete file. */
const perFilePairs = (plan: ScanPlan) => plan.tasks.reduce((n, t) => n + t.deletes.length, 0);

// ---------------------------------------------------------------------------------------------
// Hand-built tables (iceberg-table-builder.ts), drawn at random

const ID: SchemaField = { id: 1, name: 'id', type: 'long' };
const NAME: SchemaField = { id: 2, name: 'name', type: 'string' };
const P: SchemaField = { id: 3, name: 'p', type: 'string' };
const BY_P: PartitionField[] = [{ 'field-id': 1000, 'source-id': 3, transform: 'identity', name: 'p' }];

type Part = 'a' | 'b';
interface RowSpec {
  readonly id: number;
  readonly name: string | null;
}
interface CommitSpec {
  /** Data files: partition, whether the file has the partition column `p` itself, rows. */
  readonly data: readonly { part: Part; withP: boolean; rows: readonly RowSpec[] }[];
  /** Equality deletes: partition (or global: the unpartitioned spec), equality columns, rows. */
  readonly eq: readonly {
    scope: Part | 'global';
    on: 'id' | 'name' | 'id+name';
    rows: readonly RowSpec[];
  }[];
  /**
   * Position deletes in a partition: picks among that partition's data files so far, by index
   * (`stray`: among every data file so far and the next commit's first one).
   */
  readonly pos: readonly {
    part: Part;
    picks: readonly { file: number; pos: number }[];
    stray: boolean;
    referenced: boolean;
  }[];
}

const rowArb: fc.Arbitrary<RowSpec> = fc.record({
  id: fc.integer({ min: 0, max: 5 }),
  name: fc.constantFrom('x', 'y', null),
});
const partArb = fc.constantFrom<Part>('a', 'b');
const commitArb: fc.Arbitrary<CommitSpec> = fc.record({
  data: fc.array(
    fc.record({ part: partArb, withP: fc.boolean(), rows: fc.array(rowArb, { minLength: 1, maxLength: 5 }) }),
    { maxLength: 3 },
  ),
  eq: fc.array(
    fc.record({
      scope: fc.constantFrom<Part | 'global'>('a', 'b', 'global'),
      on: fc.constantFrom<'id' | 'name' | 'id+name'>('id', 'name', 'id+name'),
      rows: fc.array(rowArb, { minLength: 1, maxLength: 3 }),
    }),
    { maxLength: 2 },
  ),
  pos: fc.array(
    fc.record({
      part: partArb,
      picks: fc.array(fc.record({ file: fc.nat(), pos: fc.nat() }), { minLength: 1, maxLength: 4 }),
      stray: fc.boolean(),
      referenced: fc.boolean(),
    }),
    { maxLength: 2 },
  ),
});

const idCol = (rows: readonly RowSpec[]): Column => ({
  id: 1,
  name: 'id',
  type: 'long',
  values: rows.map((r) => r.id),
});
const nameCol = (rows: readonly RowSpec[]): Column => ({
  id: 2,
  name: 'name',
  type: 'string',
  values: rows.map((r) => r.name),
});

/** Builds the commits; `dropName`: then drops column `name` (equality deletes on it still apply). */
function buildTable(commits: readonly CommitSpec[], dropName: boolean): TableBuilder {
  const b = new TableBuilder({ fields: [ID, NAME, P], specs: [[], BY_P] });
  const dataFiles: { uri: string; part: Part; rows: number }[] = [];
  for (const [k, c] of commits.entries()) {
    const add: NewFile[] = [];
    for (const [i, d] of c.data.entries()) {
      const name = `c${k}-d${i}.parquet`;
      const columns = [idCol(d.rows), nameCol(d.rows)];
      // Without `p`, the file's rows take the identity partition value (a per-file default).
      if (d.withP) columns.push({ id: 3, name: 'p', type: 'string', values: d.rows.map(() => d.part) });
      add.push({
        name,
        bytes: parquetOf(columns),
        recordCount: d.rows.length,
        specId: 1,
        partition: { p: d.part },
      });
      dataFiles.push({ uri: b.uri(name), part: d.part, rows: d.rows.length });
    }
    for (const [i, e] of c.eq.entries()) {
      const columns =
        e.on === 'id'
          ? [idCol(e.rows)]
          : e.on === 'name'
            ? [nameCol(e.rows)]
            : [idCol(e.rows), nameCol(e.rows)];
      add.push({
        name: `c${k}-eq${i}.parquet`,
        bytes: parquetOf(columns),
        content: 2,
        recordCount: e.rows.length,
        equalityIds: e.on === 'id' ? [1] : e.on === 'name' ? [2] : [1, 2],
        ...(e.scope === 'global' ? { specId: 0 } : { specId: 1, partition: { p: e.scope } }),
      });
    }
    for (const [i, p] of c.pos.entries()) {
      // Mostly files of its partition; also files of the other one and the next commit's first
      // file (not written yet): named, but scan planning does not apply the delete file to them.
      const next = { uri: b.uri(`c${k + 1}-d0.parquet`), part: p.part, rows: 5 };
      const targets = [...dataFiles.filter((f) => f.part === p.part || p.stray), ...(p.stray ? [next] : [])];
      if (targets.length === 0) continue;
      const picks = p.picks.map(({ file, pos }) => {
        const f = targets[file % targets.length]!;
        return [f.uri, pos % f.rows] as const;
      });
      const one = new Set(picks.map((x) => x[0])).size === 1;
      add.push({
        name: `c${k}-pos${i}.parquet`,
        bytes: positionDeletesOf(picks),
        content: 1,
        recordCount: picks.length,
        specId: 1,
        partition: { p: p.part },
        ...(p.referenced && one ? { referencedDataFile: picks[0]![0] } : {}),
      });
    }
    if (add.length > 0) b.commit(add);
  }
  if (dropName) b.evolve([ID, P]);
  return b;
}

describe('grouped anti-joins on hand-built tables', () => {
  it('return the per-file view’s rows and the independent reader’s, on random commits of data and deletes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(commitArb, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        async (commits, drop) => {
          const b = buildTable(commits, drop);
          if (!commits.some((c) => c.data.length > 0)) return;
          const v = await builtViews(b.table(), b.location);
          expectSame(v);
          // At most one NOT EXISTS per group and kind of delete: never more than the per-file view.
          expect(count(v.sql, 'NOT EXISTS')).toBeLessThanOrEqual(perFilePairs(v.plan));
        },
      ),
      { numRuns: 60, seed: 20260113 },
    );
  });

  it('one commit of many data files under many delete files of one id set: one NOT EXISTS', async () => {
    const b = new TableBuilder({ fields: [ID, NAME, P], specs: [[], BY_P] });
    const rows = (n: number) =>
      Array.from({ length: 6 }, (_, i) => ({ id: (n + i) % 9, name: i % 3 ? 'x' : null }));
    // 8 data files over 2 partitions (two schema maps: the partition value is the default of `p`),
    // `p` missing from half of them.
    b.commit(
      Array.from({ length: 8 }, (_, i) => ({
        name: `d${i}.parquet`,
        bytes: parquetOf([
          idCol(rows(i)),
          nameCol(rows(i)),
          ...(i % 2
            ? [{ id: 3, name: 'p', type: 'string' as const, values: rows(i).map(() => (i < 4 ? 'a' : 'b')) }]
            : []),
        ]),
        recordCount: 6,
        specId: 1,
        partition: { p: i < 4 ? 'a' : 'b' },
      })),
    );
    // 5 global equality delete files on `id`, in 5 commits.
    for (let k = 0; k < 5; k++) {
      b.commit([
        {
          name: `eq${k}.parquet`,
          bytes: parquetOf([idCol([{ id: k * 2, name: null }])]),
          content: 2,
          recordCount: 1,
          equalityIds: [1],
          specId: 0,
        },
      ]);
    }
    const v = await builtViews(b.table(), b.location);
    expectSame(v);
    expect(v.grouped.length).toBeGreaterThan(0);
    expect(v.grouped.length).toBeLessThan(48);
    expect(perFilePairs(v.plan)).toBe(8 * 5);
    expect(count(v.sql, 'NOT EXISTS')).toBe(1);
    // One read per schema map, one for the delete files.
    expect(count(v.sql, 'read_parquet(')).toBe(2 + 1);
    expect(v.sql).not.toContain('__del IN');
  });

  it('files of several commits under global and partitioned deletes: one NOT EXISTS per group and kind', async () => {
    const b = new TableBuilder({ fields: [ID, NAME, P], specs: [[], BY_P] });
    const rowsOf = (ids: number[]) => ids.map((id) => ({ id, name: 'n' }));
    const data = (name: string, part: Part, ids: number[]): NewFile => ({
      name,
      bytes: parquetOf([idCol(rowsOf(ids)), nameCol(rowsOf(ids))]),
      recordCount: ids.length,
      specId: 1,
      partition: { p: part },
    });
    const eq = (
      name: string,
      ids: number[],
      scope: Part | 'global',
      on: 'id' | 'id+name' = 'id',
    ): NewFile => {
      const rows = ids.map((id) => ({ id, name: on === 'id' ? null : 'n' }));
      return {
        name,
        bytes: parquetOf(on === 'id' ? [idCol(rows)] : [idCol(rows), nameCol(rows)]),
        content: 2,
        recordCount: ids.length,
        equalityIds: on === 'id' ? [1] : [1, 2],
        ...(scope === 'global' ? { specId: 0 } : { specId: 1, partition: { p: scope } }),
      };
    };
    b.commit([
      data('a1.parquet', 'a', [1, 2, 3, 4]),
      data('a2.parquet', 'a', [5, 6]),
      data('b1.parquet', 'b', [1, 2, 7]),
      // Applies to a1 and a2 (same commit: data sequence number <= its own), not to later files.
      {
        name: 'pos-a.parquet',
        bytes: positionDeletesOf([
          [b.uri('a1.parquet'), 3],
          [b.uri('a2.parquet'), 1],
        ]),
        content: 1,
        recordCount: 2,
        specId: 1,
        partition: { p: 'a' },
      },
    ]);
    b.commit([
      data('a3.parquet', 'a', [1, 2, 8]),
      data('b2.parquet', 'b', [3, 9]),
      eq('g1.parquet', [1, 7], 'global'),
      eq('ea1.parquet', [5], 'a'),
      eq('en1.parquet', [2, 9], 'global', 'id+name'),
    ]);
    b.commit([data('a4.parquet', 'a', [1, 2, 3]), eq('g2.parquet', [8, 3], 'global')]);
    const v = await builtViews(b.table(), b.location);
    expectSame(v);
    // a1, a2: ids 1 (g1), 2 (en1), 3 (g2), 4 and 6 (pos-a), 5 (ea1) deleted; b1: 1, 7 (g1), 2 (en1);
    // a3, b2: only g2 applies (8, 3); a4: nothing does.
    expect(v.grouped.map((r) => JSON.parse(r).id as number).sort()).toEqual([1, 1, 2, 2, 3, 9]);
    // Per file: a1, a2 under 5 delete files, b1 under 3, a3 and b2 under 1.
    expect(perFilePairs(v.plan)).toBe(15);
    // Groups: {a1, a2} one read, 2 id sets ({1}: g1 ea1 g2; {1,2}: en1); {b1} 2; {a3, b2} (same
    // delete files, two partitions: two reads) 1; {a4} none; and one for every position delete.
    expect(count(v.sql, 'NOT EXISTS')).toBe(6);
    expect(v.sql).toContain('[file_index::BIGINT + 1]');
  });
});

describe('grouped anti-joins with nested equality keys', () => {
  it('match the per-file view and the independent reader (null parent struct = null key)', async () => {
    const dir = join(tmp.dir, `nested${runs++}`);
    mkdirSync(dir);
    const write = async (name: string, select: string, ids: string): Promise<Uint8Array> => {
      const path = join(dir, name);
      await conn.run(`COPY (${select}) TO '${path}' (FORMAT parquet, FIELD_IDS ${ids})`);
      return new Uint8Array(readFileSync(path));
    };
    const customer = {
      type: 'struct',
      fields: [
        { id: 2, name: 'id', type: 'string', required: false },
        { id: 3, name: 'tier', type: 'string', required: false },
      ],
    };
    const b = new TableBuilder({
      fields: [
        { id: 1, name: 'customer', type: customer },
        { id: 4, name: 'n', type: 'long' },
        { id: 5, name: 'region', type: 'string' },
      ],
      specs: [[], [{ 'field-id': 1000, 'source-id': 5, transform: 'identity', name: 'region' }]],
    });
    const ids = '{customer: {__duckdb_field_id: 1, id: 2, tier: 3}, n: 4, region: 5}';
    const data = async (name: string, region: string, rows: [string | null, number][], withRegion = true) => {
      const values = rows
        .map(
          ([c, n]) =>
            `(${c === null ? 'NULL' : `{'id': ${c === '' ? 'NULL' : `'${c}'`}, 'tier': 'gold'}`}, ${n}::BIGINT, '${region}')`,
        )
        .join(', ');
      const select = `SELECT customer, n${withRegion ? ', region' : ''} FROM (VALUES ${values}) t(customer, n, region)`;
      return {
        name,
        bytes: await write(
          name,
          select,
          withRegion ? ids : '{customer: {__duckdb_field_id: 1, id: 2, tier: 3}, n: 4}',
        ),
        recordCount: rows.length,
        specId: 1,
        partition: { region },
      } satisfies NewFile;
    };
    const eqNested = async (name: string, keys: (string | null)[], part?: string) => ({
      name,
      bytes: await write(
        name,
        `SELECT * FROM (VALUES ${keys.map((k) => `({'id': ${k === null ? 'NULL' : `'${k}'`}})`).join(', ')}) t(customer)`,
        '{customer: {__duckdb_field_id: 1, id: 2}}',
      ),
      content: 2 as const,
      recordCount: keys.length,
      equalityIds: [2],
      ...(part === undefined ? { specId: 0 } : { specId: 1, partition: { region: part } }),
    });
    const eqNestedAndN = async (name: string, keys: [string, number][], part: string) => ({
      name,
      bytes: await write(
        name,
        `SELECT * FROM (VALUES ${keys.map(([k, n]) => `({'id': '${k}'}, ${n}::BIGINT)`).join(', ')}) t(customer, n)`,
        '{customer: {__duckdb_field_id: 1, id: 2}, n: 4}',
      ),
      content: 2 as const,
      recordCount: keys.length,
      equalityIds: [4, 2],
      specId: 1,
      partition: { region: part },
    });
    // '' is a customer struct with a null id; null is a null customer struct.
    b.commit([
      await data('e1.parquet', 'eu', [
        ['c1', 1],
        ['c2', 2],
        [null, 3],
        ['', 4],
      ]),
      await data(
        'e2.parquet',
        'eu',
        [
          ['c3', 5],
          ['c4', 6],
        ],
        false,
      ),
      await data('u1.parquet', 'us', [
        ['c1', 7],
        ['c5', 8],
      ]),
    ]);
    b.commit([
      await data('e3.parquet', 'eu', [
        ['c1', 9],
        ['c6', 10],
      ]),
      await eqNested('g1.parquet', ['c1', null]),
      await eqNestedAndN(
        'k1.parquet',
        [
          ['c4', 6],
          ['c5', 8],
          ['c6', 10],
        ],
        'eu',
      ),
      {
        name: 'pos-e.parquet',
        bytes: positionDeletesOf([
          [b.uri('e2.parquet'), 0],
          [b.uri('e3.parquet'), 1],
        ]),
        content: 1,
        recordCount: 2,
        specId: 1,
        partition: { region: 'eu' },
      },
    ]);
    b.commit([
      await data('u2.parquet', 'us', [
        ['c2', 11],
        ['c5', 12],
      ]),
      await eqNested('g2.parquet', ['c2', 'c6'], 'eu'),
    ]);
    const v = await builtViews(b.table(), b.location);
    expectSame(v);
    // e1: c1 (g1), null customer and null id (g1: null = null), c2 (g2); e2: c3 (pos), c4 (k1);
    // u1: c1 (g1); e3: c6 (pos at 1), c1 stays (g1 is of its commit); u2 stays.
    expect(v.grouped.map((r) => JSON.parse(r).n as number).sort((x, y) => x - y)).toEqual([8, 9, 11, 12]);
    expect(count(v.sql, 'NOT EXISTS')).toBeLessThan(perFilePairs(v.plan));
  });
});

// ---------------------------------------------------------------------------------------------
// Tables written by Floe's own writers

async function floeViews(wh: TestWarehouse, id: TableIdentifier): Promise<Views> {
  const t = await wh.catalog.loadTable(id);
  const read = (uri: string) => wh.store.get(uri);
  const metadataJson = new TextDecoder().decode(await read(t.metadataLocation));
  return views(metadataJson, read, (uri) => wh.store.pathOf(uri));
}

describe('grouped anti-joins on tables Floe wrote', () => {
  it('upsert tables (flat and nested keys) loaded in several commits: the last state of every key', async () => {
    const dir = tempDir('floe-view-upsert-');
    try {
      const wh = fileWarehouse(dir.dir);
      const specs: Record<string, UpsertSpecJson> = {
        flat_keys: { key: ['customer_id'], operationField: 'op' },
        nested_keys: { key: ['customer.id'], operationField: 'op' },
      };
      // Keys from a small pool: updated (region may move, so deletes are global), deleted, re-inserted.
      const lines: string[] = [];
      for (let i = 0; i < 150; i++) {
        const k = (i * 7 + (i >> 3)) % 23;
        const op = i % 11 === 5 ? 'd' : i % 3 === 0 ? 'c' : 'u';
        lines.push(
          JSON.stringify({
            op,
            customer_id: k,
            customer: { id: `k${k}`, tier: ['free', 'pro'][i % 2] },
            region: ['eu', 'us', 'ap'][(i * 5 + k) % 3],
            x: i,
          }),
        );
      }
      for (const [table, spec] of Object.entries(specs)) {
        const config = parseConfig({ routing: { defaultTable: table }, upsert: { [table]: spec } });
        for (let l = 0; l < 6; l++) {
          const run = await load(
            wh,
            [{ name: `${table}-${l}.ndjson`, lines: lines.slice(l * 25, l * 25 + 25) }],
            {
              config,
            },
          );
          expect(run.dead).toEqual([]);
        }
        const v = await floeViews(wh, { namespace: 'default', name: table });
        expectSame(v);
        const want = expectedState(lines, spec).rows;
        const keys = v.grouped.map((r) => keyOfRow(JSON.parse(r) as Record<string, unknown>, spec.key));
        expect(new Set(keys)).toEqual(new Set(want.keys()));
        expect(keys.length).toBe(want.size);
        // Six commits, each an equality delete file: one NOT EXISTS per commit's files, at most.
        const deleteFiles = new Set(v.plan.tasks.flatMap((t) => t.deletes.map((d) => d.file.file_path)));
        expect(deleteFiles.size).toBeGreaterThanOrEqual(4);
        expect(v.plan.tasks.length).toBeGreaterThan(6);
        expect(count(v.sql, 'NOT EXISTS')).toBeLessThanOrEqual(5);
        expect(count(v.sql, 'NOT EXISTS')).toBeLessThan(perFilePairs(v.plan));
      }
    } finally {
      dir.cleanup();
    }
  });

  it('position and partitioned equality deletes committed between loads', async () => {
    const t = await smallLoads(3, 6);
    try {
      const first = await planScan((await t.wh.catalog.loadTable(CLICKS)).metadata, (u) => t.wh.store.get(u));
      const [a, b] = first.tasks;
      await commitDeletes(t.deps(), CLICKS, {
        kind: 'position',
        filePath: a!.file.file_path,
        positions: [0n, 2n],
      });
      await commitDeletes(t.deps(), CLICKS, { kind: 'equality', ids: [2n, 3n, 9n, 14n] });
      await t.more(6);
      await commitDeletes(t.deps(), CLICKS, {
        kind: 'position',
        filePath: b!.file.file_path,
        positions: [1n],
      });
      await commitDeletes(t.deps(), CLICKS, { kind: 'equality', ids: [4n, 5n, 20n, 21n] });
      await t.more(4);
      const v = await floeViews(t.wh, CLICKS);
      expectSame(v);
      const ids = v.grouped.map((r) => JSON.parse(r).id as number);
      for (const gone of [2, 3, 9, 14, 4, 5, 20, 21]) expect(ids).not.toContain(gone);
      expect(ids.length).toBe(28 - 8 - 3);
      expect(count(v.sql, 'NOT EXISTS')).toBeLessThan(perFilePairs(v.plan));
    } finally {
      t.cleanup();
    }
  });
});

describe('table columns named like DuckDB virtual columns', () => {
  it('do not shadow file_index / file_row_number / filename', async () => {
    const cols: SchemaField[] = [
      { id: 1, name: 'file_row_number', type: 'long' },
      { id: 2, name: 'file_index', type: 'long' },
      { id: 3, name: 'filename', type: 'string' },
    ];
    const b = new TableBuilder({ fields: cols });
    const file = (name: string, base: number): NewFile => ({
      name,
      bytes: parquetOf([
        { id: 1, name: 'file_row_number', type: 'long', values: [base + 7, base + 8, base + 9] },
        { id: 2, name: 'file_index', type: 'long', values: [5, 5, 5] },
        { id: 3, name: 'filename', type: 'string', values: ['x', 'y', 'z'] },
      ]),
      recordCount: 3,
    });
    b.commit([file('a.parquet', 0), file('b.parquet', 10)]);
    b.commit([
      {
        name: 'pos.parquet',
        bytes: positionDeletesOf([
          [b.uri('a.parquet'), 0],
          [b.uri('b.parquet'), 2],
        ]),
        content: 1,
        recordCount: 2,
      },
    ]);
    // The per-file view asked for `file_row_number=true`, which fails on a column of that name.
    const v = await builtViews(b.table(), b.location, false);
    expect(v.grouped).toEqual(v.reader);
    expect(v.grouped.map((r) => JSON.parse(r).file_row_number as number)).toEqual([17, 18, 8, 9]);
  });
});
