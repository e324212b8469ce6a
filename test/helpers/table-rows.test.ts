/**
 * Tests of the independent row reader (iceberg-rows.ts): hand-built tables (iceberg-table-builder.ts)
 * for each delete-scoping rule of format/spec.md §Scan Planning, then the fixture tables with
 * deletes against their READMEs' expected rows and the query engine.
 */
import { promises as fs, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maintainTable } from '../../lambdas/src/app/maintain/index.ts';
import { ALL_STEPS } from '../../lambdas/src/app/maintain/options.ts';
import { planScan } from '../../lambdas/src/iceberg/scan.ts';
import { commitDeletes } from '../unit/app/maintain/deletes.ts';
import { CLICKS, smallLoads } from '../unit/app/maintain/small-loads.ts';
import { tempDir } from './e2e.ts';
import { FIXTURES_ROOT, findMetadataFile, fixtureResolver, queryFixture } from './fixtures.ts';
import { readTableRows, type TableRows, tableRowStats } from './iceberg-rows.ts';
import {
  type Column,
  type NewFile,
  type PartitionField,
  parquetOf,
  positionDeletesOf,
  type SchemaField,
  TableBuilder,
} from './iceberg-table-builder.ts';
import { expectValidTable, localTableIo } from './iceberg-validator.ts';
import { decodeDeletionVector, encodeDeletionVector, puffinOf } from './puffin-dv.ts';

/** Reads the built table after checking it is a valid table (so the rules tested are the spec's). */
async function rowsOf(b: TableBuilder, snapshotId?: bigint): Promise<TableRows> {
  const t = b.table();
  await expectValidTable({ ...t, snapshots: 'all' });
  return readTableRows({ ...t, ...(snapshotId === undefined ? {} : { snapshotId }) });
}

/** The given columns of each row, rows sorted (numbers by value, null first). */
const pick = (rows: Record<string, unknown>[], ...cols: string[]): unknown[][] =>
  rows.map((r) => cols.map((c) => r[c])).sort(compareTuples);

function compareTuples(a: unknown[], b: unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === null || x === undefined) return -1;
    if (y === null || y === undefined) return 1;
    return (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0;
  }
  return 0;
}

const ID_NAME: SchemaField[] = [
  { id: 1, name: 'id', type: 'long' },
  { id: 2, name: 'name', type: 'string' },
];
const idCol = (values: unknown[]): Column => ({ id: 1, name: 'id', type: 'long', values });

function data(name: string, ids: unknown[], names: unknown[], more: Partial<NewFile> = {}): NewFile {
  const bytes = parquetOf([idCol(ids), { id: 2, name: 'name', type: 'string', values: names }]);
  return { name, bytes, recordCount: ids.length, ...more };
}

function eqDelete(name: string, cols: Column[], more: Partial<NewFile> = {}): NewFile {
  const ids = cols.map((c) => c.id ?? -1);
  return {
    name,
    bytes: parquetOf(cols),
    recordCount: cols[0]?.values.length ?? 0,
    content: 2,
    equalityIds: ids,
    ...more,
  };
}

function posDelete(name: string, deletes: [string, number][], more: Partial<NewFile> = {}): NewFile {
  return { name, bytes: positionDeletesOf(deletes), recordCount: deletes.length, content: 1, ...more };
}

describe('equality deletes and sequence numbers', () => {
  it('apply to strictly older data files only; ADDED entries inherit, explicit numbers are kept', async () => {
    const b = new TableBuilder({ fields: ID_NAME });
    const first = b.commit([data('a.parquet', [1, 2, 3], ['a1', 'a2', 'a3'])]);
    // Seq 2: an upsert of keys 2 and 3 as Floe writes it: delete the keys, add the new rows.
    b.commit([data('b.parquet', [2, 4], ['b2', 'b4']), eqDelete('d2.parquet', [idCol([2, 3])])]);
    expect(pick((await rowsOf(b)).rows, 'id', 'name')).toEqual([
      [1n, 'a1'],
      [2n, 'b2'],
      [4n, 'b4'],
    ]);
    // Explicit data sequence numbers: 1 (< 2: the seq-2 delete applies), 2 (not < 2: it does not).
    b.commit([
      data('c.parquet', [2, 3], ['c2', 'c3'], { dataSeq: 1n }),
      data('e.parquet', [3], ['e3'], { dataSeq: 2n }),
    ]);
    const now = await rowsOf(b);
    expect(pick(now.rows, 'id', 'name')).toEqual([
      [1n, 'a1'],
      [2n, 'b2'],
      [3n, 'e3'],
      [4n, 'b4'],
    ]);
    expect(now.stats).toMatchObject({
      dataFiles: 4,
      equalityDeleteFiles: 1,
      rowsBeforeDeletes: 8,
      deletedByEquality: 4,
    });
    // Time travel: the first snapshot's rows.
    expect(pick((await rowsOf(b, first)).rows, 'name')).toEqual([['a1'], ['a2'], ['a3']]);
  });

  it('null equals null, per column of a composite key; a null delete column matches only null', async () => {
    const fields: SchemaField[] = [
      { id: 1, name: 'tenant', type: 'string' },
      { id: 2, name: 'order_id', type: 'long' },
      { id: 3, name: 'v', type: 'string' },
    ];
    const tenant = (values: unknown[]): Column => ({ id: 1, name: 'tenant', type: 'string', values });
    const order = (values: unknown[]): Column => ({ id: 2, name: 'order_id', type: 'long', values });
    const b = new TableBuilder({ fields });
    const bytes = parquetOf([
      tenant(['t1', null, 't1', null, 't2']),
      order([1, 1, null, null, 2]),
      { id: 3, name: 'v', type: 'string', values: ['a', 'b', 'c', 'd', 'e'] },
    ]);
    b.commit([{ name: 'a.parquet', bytes, recordCount: 5 }]);
    const composite = b.commit([eqDelete('d1.parquet', [tenant([null, 't1']), order([1, null])])]);
    b.commit([eqDelete('d2.parquet', [order([null])])]);
    expect(pick((await rowsOf(b, composite)).rows, 'v')).toEqual([['a'], ['d'], ['e']]);
    expect(pick((await rowsOf(b)).rows, 'v')).toEqual([['a'], ['e']]);
  });
});

describe('partition scope', () => {
  const fields: SchemaField[] = [...ID_NAME, { id: 3, name: 'region', type: 'string' }];
  const byRegion: PartitionField[] = [
    { 'field-id': 1000, 'source-id': 3, transform: 'identity', name: 'region' },
  ];

  it('partitioned equality and position deletes stay in their partition; unpartitioned-spec deletes are global', async () => {
    const b = new TableBuilder({ fields, specs: [[], byRegion] });
    const eu = (v: string) => ({ specId: 1, partition: { region: v } });
    b.commit([
      {
        name: 'eu.parquet',
        bytes: parquetOf([
          idCol([1, 2]),
          { id: 2, name: 'name', type: 'string', values: ['eu1', 'eu2'] },
          { id: 3, name: 'region', type: 'string', values: ['eu', 'eu'] },
        ]),
        recordCount: 2,
        ...eu('eu'),
      },
      // No region column: it is read from the partition (§Column Projection, identity transform).
      data('us.parquet', [1, 3], ['us1', 'us3'], eu('us')),
    ]);
    b.commit([
      eqDelete('d-eu.parquet', [idCol([1])], eu('eu')),
      eqDelete('d-us.parquet', [idCol([2])], eu('us')),
      // Names eu.parquet, but sits in partition us: must not apply.
      posDelete('p-us.parquet', [[b.uri('eu.parquet'), 1]], eu('us')),
    ]);
    expect(pick((await rowsOf(b)).rows, 'name', 'region')).toEqual([
      ['eu2', 'eu'],
      ['us1', 'us'],
      ['us3', 'us'],
    ]);
    // A key that moved partition: the global (spec 0) delete removes it in every partition.
    b.commit([eqDelete('d-global.parquet', [idCol([3, 2])], { specId: 0 })]);
    expect(pick((await rowsOf(b)).rows, 'name', 'region')).toEqual([['us1', 'us']]);
  });
});

describe('position deletes', () => {
  it('apply to data files with data sequence number <= theirs, by file_path and referenced_data_file', async () => {
    const b = new TableBuilder({ fields: ID_NAME });
    const a = b.uri('a.parquet');
    const bb = b.uri('b.parquet');
    const names = (ids: number[]) => ids.map((i) => `r${i}`);
    // Same commit (equal sequence numbers): applies.
    b.commit([
      data('a.parquet', [0, 1, 2, 3, 4], names([0, 1, 2, 3, 4])),
      posDelete('p1.parquet', [
        [a, 1],
        [a, 3],
      ]),
    ]);
    b.commit([
      data('b.parquet', [5, 6], names([5, 6])),
      posDelete('p2.parquet', [
        [a, 0],
        [bb, 1],
      ]),
    ]);
    // Older than b (explicit sequence number 1): does not apply to b.
    b.commit([posDelete('p3.parquet', [[bb, 0]], { dataSeq: 1n })]);
    // Restricted to a by referenced_data_file: its row naming b does not apply.
    b.commit([posDelete('p4.parquet', [[bb, 0]], { referencedDataFile: a })]);
    const r = await rowsOf(b);
    expect(pick(r.rows, 'id')).toEqual([[2n], [4n], [5n]]);
    expect(await tableRowStats(b.table())).toEqual({
      dataFiles: 2,
      positionDeleteFiles: 4,
      equalityDeleteFiles: 0,
      deletionVectors: 0,
      rowsBeforeDeletes: 7,
      rowsAfterDeletes: 3,
      deletedByPosition: 4,
      deletedByEquality: 0,
    });
  });
});

describe('deletion-vector-v1 blobs (puffin-dv.ts)', () => {
  const cmp = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

  it('decode the bytes Iceberg Java writes for positions 1, 3, 5, 7, 9', () => {
    // Byte for byte apache/iceberg core/src/test/resources/.../small-alternating-values-position-index.bin:
    // length, magic, 1 bitmap, key 0, no-run cookie, 1 container of 5 values, offset, values, CRC.
    const java = Buffer.from(
      '0000002ad1d339640100000000000000000000003a30000001000000000004001000000001000300050007000900b3fb20be',
      'hex',
    );
    expect(decodeDeletionVector(new Uint8Array(java))).toEqual([1n, 3n, 5n, 7n, 9n]);
    expect(Buffer.from(encodeDeletionVector([9n, 1n, 5n, 3n, 7n])).equals(java)).toBe(true);
  });

  it('round-trip array, bitset and run containers, with and without offset headers, over 64-bit keys', () => {
    const dense = Array.from({ length: 6000 }, (_, i) => BigInt(i * 2)); // > 4096 in one container: bitset
    const spread = [0n, 70_000n, 140_000n, 210_000n, 280_000n]; // 5 containers: offsets with runs too
    const high = [(5n << 32n) + 3n, (1n << 62n) + 1n];
    for (const positions of [dense, spread, [...spread, ...high], [1n, 2n, 3n, 10n]]) {
      for (const runs of [false, true]) {
        const want = [...new Set(positions)].sort(cmp);
        expect(decodeDeletionVector(encodeDeletionVector(positions, { runs }))).toEqual(want);
      }
    }
  });

  it('reject a wrong length, magic or CRC', () => {
    const good = encodeDeletionVector([1n]);
    for (const at of [3, 5, good.length - 1]) {
      const bad = new Uint8Array(good);
      bad[at] = (bad[at] ?? 0) ^ 1;
      expect(() => decodeDeletionVector(bad)).toThrow();
    }
  });
});

describe('deletion vectors (v3, Puffin deletion-vector-v1)', () => {
  const longs = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

  function dvTable(): {
    b: TableBuilder;
    dvFile: (vectors: Parameters<typeof puffinOf>[0], name: string) => NewFile[];
  } {
    const b = new TableBuilder({ fields: [{ id: 1, name: 'id', type: 'long' }], formatVersion: 3 });
    const dvFile = (vectors: Parameters<typeof puffinOf>[0], name: string): NewFile[] => {
      const { bytes, blobs } = puffinOf(vectors);
      return vectors.map((v, i) => ({
        name,
        bytes,
        content: 1 as const,
        format: 'puffin' as const,
        recordCount: new Set(v.positions).size,
        referencedDataFile: v.referencedDataFile,
        blob: blobs[i]!,
      }));
    };
    return { b, dvFile };
  }

  it('apply by referenced data file (same sequence number too) and replace its position delete files', async () => {
    const { b, dvFile } = dvTable();
    const a = b.uri('a.parquet');
    b.commit([
      { name: 'a.parquet', bytes: parquetOf([idCol(longs(0, 10))]), recordCount: 10 },
      { name: 'b.parquet', bytes: parquetOf([idCol(longs(10, 5))]), recordCount: 5 },
    ]);
    b.commit([posDelete('p.parquet', [[a, 9]])]);
    // "readers can safely ignore matching position delete files" once a DV exists for the file.
    b.commit(
      dvFile(
        [
          { referencedDataFile: a, positions: [1n, 2n, 3n], runs: true },
          { referencedDataFile: b.uri('b.parquet'), positions: [0n] },
        ],
        'dv1.puffin',
      ),
    );
    b.commit([
      { name: 'c.parquet', bytes: parquetOf([idCol([20, 21])]), recordCount: 2 },
      ...dvFile([{ referencedDataFile: b.uri('c.parquet'), positions: [1n] }], 'dv2.puffin'),
    ]);
    const r = await rowsOf(b);
    expect(pick(r.rows, 'id').flat()).toEqual([0n, 4n, 5n, 6n, 7n, 8n, 9n, 11n, 12n, 13n, 14n, 20n]);
    expect(r.stats).toMatchObject({ deletionVectors: 3, positionDeleteFiles: 1, deletedByPosition: 5 });
  });

  it('reject a corrupt vector (CRC) and a record_count that is not its cardinality', async () => {
    const { b, dvFile } = dvTable();
    b.commit([{ name: 'a.parquet', bytes: parquetOf([idCol(longs(0, 4))]), recordCount: 4 }]);
    const [dv] = dvFile([{ referencedDataFile: b.uri('a.parquet'), positions: [1n] }], 'dv.puffin');
    const corrupt = new Uint8Array(dv!.bytes);
    const crcAt = dv!.blob!.offset + dv!.blob!.length - 1;
    corrupt[crcAt] = (corrupt[crcAt] ?? 0) ^ 1;
    const bad = new TableBuilder({ fields: [{ id: 1, name: 'id', type: 'long' }], formatVersion: 3 });
    bad.commit([{ name: 'a.parquet', bytes: parquetOf([idCol(longs(0, 4))]), recordCount: 4 }]);
    bad.commit([{ ...dv!, bytes: corrupt }]);
    await expect(readTableRows(bad.table())).rejects.toThrow(/CRC/);
    b.commit([{ ...dv!, recordCount: 2 }]);
    await expect(readTableRows(b.table())).rejects.toThrow(/record_count 2/);
  });
});

describe('column projection', () => {
  it('finds columns by field id, else by name mapping or name; absent columns read null', async () => {
    const b = new TableBuilder({
      fields: ID_NAME,
      properties: {
        'schema.name-mapping.default': JSON.stringify([
          { 'field-id': 1, names: ['id'] },
          { 'field-id': 2, names: ['name', 'old_name'] },
        ]),
      },
    });
    // Ids that disagree with the names: ids win.
    const swapped = parquetOf([
      { id: 2, name: 'id', type: 'string', values: ['by-id'] },
      { id: 1, name: 'name', type: 'long', values: [7] },
    ]);
    // No field ids at all: the name mapping (old_name → 2).
    const unmapped = parquetOf([
      { name: 'id', type: 'long', values: [8] },
      { name: 'old_name', type: 'string', values: ['mapped'] },
    ]);
    b.commit([
      { name: 'swapped.parquet', bytes: swapped, recordCount: 1 },
      { name: 'unmapped.parquet', bytes: unmapped, recordCount: 1 },
    ]);
    b.evolve([...ID_NAME, { id: 3, name: 'added', type: 'string' }]);
    const r = await readTableRows(b.table());
    expect(r.columns).toEqual(['id', 'name', 'added']);
    expect(pick(r.rows, 'id', 'name', 'added')).toEqual([
      [7n, 'by-id', null],
      [8n, 'mapped', null],
    ]);
  });

  it('nested key: equality on a struct field id; a null parent struct is a null leaf', async () => {
    const dir = tempDir('floe-rows-');
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    try {
      const write = async (name: string, select: string, ids: string): Promise<Uint8Array> => {
        const path = join(dir.dir, name);
        await duck.run(`COPY (${select}) TO '${path}' (FORMAT parquet, FIELD_IDS ${ids})`);
        return new Uint8Array(await fs.readFile(path));
      };
      const dataBytes = await write(
        'a.parquet',
        `SELECT * FROM (VALUES ({'id': 'c1', 'name': 'A'}, 1::BIGINT), (NULL, 2::BIGINT),
           ({'id': NULL, 'name': 'B'}, 3::BIGINT), ({'id': 'c2', 'name': 'C'}, 4::BIGINT)) t(customer, n)`,
        '{customer: {__duckdb_field_id: 1, id: 2, name: 3}, n: 4}',
      );
      const delBytes = await write(
        'd.parquet',
        `SELECT * FROM (VALUES ({'id': 'c1'}), ({'id': NULL})) t(customer)`,
        '{customer: {__duckdb_field_id: 1, id: 2}}',
      );
      const customer = {
        type: 'struct',
        fields: [
          { id: 2, name: 'id', type: 'string', required: false },
          { id: 3, name: 'name', type: 'string', required: false },
        ],
      };
      const b = new TableBuilder({
        fields: [
          { id: 1, name: 'customer', type: customer },
          { id: 4, name: 'n', type: 'long' },
        ],
      });
      b.commit([{ name: 'a.parquet', bytes: dataBytes, recordCount: 4 }]);
      b.commit([{ name: 'd.parquet', bytes: delBytes, recordCount: 2, content: 2, equalityIds: [2] }]);
      const r = await rowsOf(b);
      expect(r.rows).toEqual([{ customer: { id: 'c2', name: 'C' }, n: 4n }]);
    } finally {
      duck.closeSync();
      dir.cleanup();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// A Floe table with deletes another engine committed (test/unit/app/maintain/deletes.ts)

describe('a Floe table with position and equality deletes', () => {
  it('reads the same rows merged on read as after compaction applied the deletes', async () => {
    const t = await smallLoads(6, 5);
    try {
      const read = async () => {
        const m = await t.wh.catalog.loadTable(CLICKS);
        return readTableRows({
          metadataJson: await fs.readFile(fileURLToPath(m.metadataLocation)),
          ...localTableIo(),
        });
      };
      const base = await t.wh.catalog.loadTable(CLICKS);
      const first = (await planScan(base.metadata, (u) => t.wh.store.get(u))).tasks[0]!;
      const before = await read();
      await commitDeletes(t.deps(), CLICKS, {
        kind: 'position',
        filePath: first.file.file_path,
        positions: [0n],
      });
      await commitDeletes(t.deps(), CLICKS, { kind: 'equality', ids: [4n, 7n, 22n] });
      const merged = await read();
      expect(merged.stats).toMatchObject({
        rowsBeforeDeletes: 30,
        rowsAfterDeletes: 26,
        deletedByPosition: 1,
      });
      // Gone: the three ids deleted by equality and the row at position 0 of the first file.
      const left = new Set(pick(merged.rows, 'id').flat());
      const gone = pick(before.rows, 'id')
        .flat()
        .filter((id) => !left.has(id));
      expect(gone).toHaveLength(4);
      expect(gone).toEqual(expect.arrayContaining([4n, 7n, 22n]));
      const steps = { ...ALL_STEPS, expire: false, orphans: false };
      const opts = { retainLast: 1, expireOlderThanMs: 0, orphansOlderThanMs: 0 };
      expect((await maintainTable(t.deps(), CLICKS, { steps, ...opts })).failed).toEqual([]);
      const compacted = await read();
      expect(compacted.stats).toMatchObject({
        positionDeleteFiles: 0,
        equalityDeleteFiles: 0,
        rowsAfterDeletes: 26,
      });
      expect(pick(compacted.rows, ...compacted.columns)).toEqual(pick(merged.rows, ...merged.columns));
    } finally {
      t.cleanup();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Fixture tables (test/fixtures/iceberg, READMEs' "Expected rows")

function fixtureRows(name: string, version: number): Promise<TableRows> {
  const path = findMetadataFile(name, version);
  const text = readFileSync(path, 'utf8');
  const io = localTableIo(fixtureResolver(join(FIXTURES_ROOT, name), String(JSON.parse(text).location)));
  return readTableRows({ metadataJson: text, read: io.read });
}

const README_ROWS: Record<string, Record<number, number>> = {
  'duckdb-equality-deletes': { 2: 4, 7: 2 },
  'duckdb-equality-deletes-partitioned': { 2: 4, 3: 3, 4: 2, 5: 4, 6: 3 },
  'duckdb-lineitem-iceberg': { 2: 51793 },
  'duckdb-partition-evolution': { 4: 6 },
  'duckdb-v1-legacy-manifests-field': { 2: 3 },
  'duckdb-v1-pyiceberg-merch': { 3: 4, 4: 4 },
  'icebird-java-bunnies': { 2: 21, 3: 21, 4: 15, 5: 15 },
  'icebird-spark-bunnies': { 1: 21, 2: 21, 3: 20, 4: 20, 5: 20 },
  'icebird-spark-rename-column': { 2: 4, 3: 4 },
};

describe('fixture tables', () => {
  const cases = Object.entries(README_ROWS).flatMap(([name, vs]) =>
    Object.entries(vs).map(([v, n]) => [name, Number(v), n] as const),
  );
  it.each(cases)('%s v%i: %i rows (README)', async (name, version, n) => {
    const r = await fixtureRows(name, version);
    expect(r.rows).toHaveLength(n);
    expect(r.stats.rowsAfterDeletes).toBe(n);
  });

  it('icebird-java-bunnies v5: 6 positional + 1 equality delete; the updated New Zealand row is kept', async () => {
    const r = await fixtureRows('icebird-java-bunnies', 5);
    expect(r.stats).toMatchObject({
      positionDeleteFiles: 1,
      equalityDeleteFiles: 1,
      deletedByPosition: 6,
      deletedByEquality: 1,
    });
    const nz = r.rows.filter((x) => x['Breed Name'] === 'New Zealand');
    expect(nz).toEqual([expect.objectContaining({ __happy__: true, Lifespan: 8n })]);
  });

  it('icebird-spark-bunnies v5: the dangling position delete removes nothing', async () => {
    const r = await fixtureRows('icebird-spark-bunnies', 5);
    expect(r.stats).toMatchObject({ positionDeleteFiles: 1, deletedByPosition: 0, rowsBeforeDeletes: 20 });
  });

  it('duckdb-partition-evolution v4: identity partition values fill the columns the files lack', async () => {
    const r = await fixtureRows('duckdb-partition-evolution', 4);
    expect(r.rows.every((x) => typeof x.event_date === 'string' && typeof x.event_type === 'string')).toBe(
      true,
    );
    expect(r.rows).toContainEqual({ event_date: '2024-01-01', user_id: 12345n, event_type: 'click' });
  });

  describe('equality-delete tables agree with the query engine (DuckDB) row for row', () => {
    const versions = [
      ...[2, 4, 5, 6, 7].map((v) => ['duckdb-equality-deletes', v] as const),
      ...[2, 3, 4, 5, 6].map((v) => ['duckdb-equality-deletes-partitioned', v] as const),
    ];
    let engineRows: Map<string, unknown[][]>;
    beforeAll(async () => {
      engineRows = new Map();
      for (const [name, v] of versions) {
        const { rows } = await queryFixture(name, v, 'SELECT id, name, bir FROM t');
        engineRows.set(
          `${name}@${v}`,
          pick(
            rows.map((r) => ({ ...r, bir: String(r.bir) })),
            'id',
            'name',
            'bir',
          ),
        );
      }
    });
    afterAll(() => engineRows.clear());
    it.each(versions)('%s v%i', async (name, v) => {
      const r = await fixtureRows(name, v);
      expect(pick(r.rows, 'id', 'name', 'bir')).toEqual(engineRows.get(`${name}@${v}`));
    });
  });
});
