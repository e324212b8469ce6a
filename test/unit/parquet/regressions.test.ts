/**
 * Named regressions of the Parquet writer, each found on real data or by the shape fuzzer
 * (test/fuzz). This file runs in a fresh module (vitest isolates files), which matters: the
 * writer reuses module-level scratch arrays, and some bugs only show in a process whose first
 * write has a particular shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import { field, list, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import { writeDataFile } from '../../../lambdas/src/parquet/index.ts';
import { WIDE_FILE_LEAF_COLUMNS } from '../../../lambdas/src/parquet/writer.ts';
import { type Duck, openDuck } from './duck.ts';

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());

describe('Parquet writer regressions', () => {
  // Issue 10 #1: `{"sensors":[]}` then `{"sensors":[{"name":"t","reading":1.5}]}` failed the whole
  // table with "Cannot read properties of undefined (reading 'length')": the list's element struct
  // took scratch arrays at depth 2 while depth 1 had none, and clearing skipped no holes.
  it('writes a list of structs as the first write of the process (sparse scratch levels)', async () => {
    const s: Schema = {
      schemaId: 0,
      fields: [
        field(1, 'id', T.long),
        field(2, 'sensors', list(3, struct([field(4, 'name', T.string), field(5, 'reading', T.double)]))),
      ],
    };
    const r = writeDataFile(s, [
      { id: 1n, sensors: [] },
      { id: 2n, sensors: [{ name: 't', reading: 1.5 }] },
    ]);
    const got = await duck.rows(
      `SELECT id, to_json(sensors)::VARCHAR s FROM read_parquet('${duck.file(r.bytes)}') ORDER BY id`,
    );
    expect(got).toEqual([
      { id: 1n, s: '[]' },
      { id: 2n, s: '[{"name":"t","reading":1.5}]' },
    ]);
  });

  // Issue 10 #2: one record with thousands of keys took minutes. Part of it was parquet-rs's
  // zstd context per column (super-linear wasm memory growth); very wide files use snappy.
  it('writes very wide files with snappy and narrower ones with the table codec (zstd)', async () => {
    const codecs = async (columns: number) => {
      const fields = Array.from({ length: columns }, (_, i) => field(i + 1, `c${i}`, T.long));
      const row = Object.fromEntries(fields.map((f, i) => [f.name, BigInt(i)]));
      const r = writeDataFile({ schemaId: 0, fields }, [row]);
      const got = await duck.rows(
        `SELECT DISTINCT compression c FROM parquet_metadata('${duck.file(r.bytes)}') ORDER BY c`,
      );
      const back = await duck.rows(
        `SELECT c0, c${columns - 1} AS final FROM read_parquet('${duck.file(r.bytes)}')`,
      );
      expect(back).toEqual([{ c0: 0n, final: BigInt(columns - 1) }]);
      return got.map((x) => x.c);
    };
    expect(await codecs(WIDE_FILE_LEAF_COLUMNS)).toEqual(['ZSTD']);
    expect(await codecs(WIDE_FILE_LEAF_COLUMNS + 1)).toEqual(['SNAPPY']);
  });
});
