/**
 * tableViewSql over small Parquet files written by DuckDB with explicit field ids and physical column
 * names that differ from the table's, so reading by name would give wrong answers.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DataFile, DataFileContent } from '../../../lambdas/src/iceberg/manifest/types.ts';
import type { FileScanTask, ScanPlan } from '../../../lambdas/src/iceberg/scan.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import { decimal, T } from '../../../lambdas/src/iceberg/types.ts';
import { resultValueConverter } from '../../../lambdas/src/query/result-values.ts';
import { tableViewSql } from '../../../lambdas/src/query/table-view.ts';

const LOC = 's3://bucket/t';
let dir: string;
let instance: DuckDBInstance;
let conn: DuckDBConnection;
const resolvePath = (uri: string) => join(dir, uri.slice(LOC.length + 1).replaceAll('/', '_'));

async function write(uri: string, select: string, fieldIds: string): Promise<void> {
  await conn.run(`COPY (${select}) TO '${resolvePath(uri)}' (FORMAT parquet, FIELD_IDS ${fieldIds})`);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'floe-view-'));
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
  // a.parquet: ids 1,2 under other physical names; no column 3 (the identity partition source) nor 4.
  await write(
    `${LOC}/data/a.parquet`,
    `SELECT * FROM (VALUES (1::BIGINT, 'ann'), (2, 'bob'), (3, NULL), (4, 'dan')) v(phys_id, "Phys Name")`,
    `{phys_id: 1, "Phys Name": 2}`,
  );
  // b.parquet: has column 3 and the dropped column 9 (used by an equality delete).
  await write(
    `${LOC}/data/b.parquet`,
    `SELECT * FROM (VALUES (5::BIGINT, 'eve', 'x', 100::INTEGER, TIMESTAMPTZ '2024-01-01 00:00:00.000001+00', 12.5::DECIMAL(9,2)),
                           (6, NULL, 'x', 200, NULL, -0.01)) v(i, n, p, gone, ts, amount)`,
    `{i: 1, n: 2, p: 3, gone: 9, ts: 5, amount: 6}`,
  );
  await write(
    `${LOC}/data/pos.parquet`,
    `SELECT * FROM (VALUES ('${LOC}/data/a.parquet', 1::BIGINT), ('${LOC}/data/other.parquet', 0)) v(file_path, pos)`,
    `{file_path: 2147483546, pos: 2147483545}`,
  );
  // Equality delete on name: NULL must match NULL, 'dan' matches a row.
  await write(
    `${LOC}/data/eq-name.parquet`,
    `SELECT * FROM (VALUES (NULL::VARCHAR), ('dan')) v(nm)`,
    `{nm: 2}`,
  );
  // Equality delete on dropped column 9.
  await write(`${LOC}/data/eq-gone.parquet`, `SELECT 200::INTEGER AS g`, `{g: 9}`);
});

afterAll(() => {
  conn?.closeSync();
  instance?.closeSync();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const schema: Schema = {
  schemaId: 3,
  fields: [
    { id: 1, name: 'id', required: true, type: T.long },
    { id: 2, name: 'name', required: false, type: T.string },
    { id: 3, name: 'part', required: false, type: T.string },
    { id: 4, name: 'added', required: false, type: T.int, initialDefault: 7 },
    { id: 5, name: 'ts', required: false, type: T.timestamptz },
    { id: 6, name: 'amount', required: false, type: decimal(9, 2) },
  ],
};
const oldSchema: Schema = {
  schemaId: 1,
  fields: [...schema.fields, { id: 9, name: 'gone', required: false, type: T.int }],
};
const spec = {
  'spec-id': 1,
  fields: [{ 'source-id': 3, 'field-id': 1000, name: 'part', transform: 'identity' }],
};

function dataFile(name: string, content: DataFile['content'], extra: Partial<DataFile> = {}): DataFile {
  return {
    content,
    file_path: `${LOC}/data/${name}`,
    file_format: 'PARQUET',
    partition: ['p-a'],
    record_count: 1n,
    file_size_in_bytes: 1n,
    ...extra,
  };
}

function plan(tasks: FileScanTask[]): ScanPlan {
  return { schema, schemas: [oldSchema, schema], specs: [spec], tasks };
}

async function rows(p: ScanPlan): Promise<Record<string, unknown>[]> {
  const reader = await conn.runAndReadAll(`SELECT * FROM (${tableViewSql(p, resolvePath)}) ORDER BY id`);
  return reader.convertRowObjects(resultValueConverter);
}

const a = dataFile('a.parquet', DataFileContent.DATA);
const b = dataFile('b.parquet', DataFileContent.DATA, { partition: ['x'] });
const pos = dataFile('pos.parquet', DataFileContent.POSITION_DELETES);
const eqName = dataFile('eq-name.parquet', DataFileContent.EQUALITY_DELETES, { equality_ids: [2] });
const eqGone = dataFile('eq-gone.parquet', DataFileContent.EQUALITY_DELETES, {
  equality_ids: [9],
  partition: ['x'],
});
const task = (file: DataFile, deletes: DataFile[] = []): FileScanTask => ({
  file,
  dataSequenceNumber: 1n,
  specId: 1,
  deletes: deletes.map((d) => ({ file: d, dataSequenceNumber: 2n, specId: 1 })),
});

describe('tableViewSql', () => {
  it('reads by field id with current names, partition values and initial defaults for missing ids', async () => {
    const out = await rows(plan([task(a), task(b)]));
    expect(out.map((r) => r.id)).toEqual([1n, 2n, 3n, 4n, 5n, 6n]);
    expect(out[0]).toEqual({ id: 1n, name: 'ann', part: 'p-a', added: 7, ts: null, amount: null });
    // b.parquet stores column 3 itself; added (4) is missing ⇒ initial-default 7.
    expect(out[4]).toEqual({
      id: 5n,
      name: 'eve',
      part: 'x',
      added: 7,
      ts: '2024-01-01T00:00:00.000001+00:00',
      amount: '12.50',
    });
    expect(out[5]?.amount).toBe('-0.01');
  });

  it('applies position deletes by data file URI and row position', async () => {
    const out = await rows(plan([task(a, [pos]), task(b)]));
    expect(out.map((r) => r.id)).toEqual([1n, 3n, 4n, 5n, 6n]);
  });

  it('applies equality deletes with null-safe equality', async () => {
    const out = await rows(plan([task(a, [eqName])]));
    // NULL name (id 3) and 'dan' (id 4) are deleted.
    expect(out.map((r) => r.id)).toEqual([1n, 2n]);
  });

  it('applies equality deletes on a column dropped from the current schema', async () => {
    const out = await rows(plan([task(a), task(b, [eqGone])]));
    expect(out.map((r) => r.id)).toEqual([1n, 2n, 3n, 4n, 5n]);
    expect(Object.keys(out[0] ?? {})).toEqual(['id', 'name', 'part', 'added', 'ts', 'amount']);
  });

  it('combines position and equality deletes on one file', async () => {
    const out = await rows(plan([task(a, [pos, eqName])]));
    expect(out.map((r) => r.id)).toEqual([1n]);
  });

  it('yields a typed empty relation when there are no files', async () => {
    const reader = await conn.runAndReadAll(`SELECT * FROM (${tableViewSql(plan([]), resolvePath)})`);
    expect(reader.columnNames()).toEqual(['id', 'name', 'part', 'added', 'ts', 'amount']);
    expect(reader.currentRowCount).toBe(0);
  });

  it('ignores hive-style directory names: partition values come from the manifest', async () => {
    mkdirSync(join(dir, 'part=zzz'), { recursive: true });
    copyFileSync(resolvePath(a.file_path), join(dir, 'part=zzz', 'a.parquet'));
    const sql = tableViewSql(plan([task(a)]), () => join(dir, 'part=zzz', 'a.parquet'));
    const reader = await conn.runAndReadAll(sql);
    expect(reader.columnNames()).toEqual(['id', 'name', 'part', 'added', 'ts', 'amount']);
    expect(new Set(reader.convertRowObjects(resultValueConverter).map((r) => r.part))).toEqual(
      new Set(['p-a']),
    );
  });
});
