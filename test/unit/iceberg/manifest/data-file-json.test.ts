import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../../lambdas/src/errors.ts';
import {
  dataFileFromJson,
  dataFileToJson,
  withoutColumnMetrics,
} from '../../../../lambdas/src/iceberg/manifest/data-file-json.ts';
import { type DataFile, DataFileContent } from '../../../../lambdas/src/iceberg/manifest/types.ts';

const BIG = 2n ** 63n + 12345n; // beyond a signed long and far beyond 2^53

const full: DataFile = {
  content: DataFileContent.EQUALITY_DELETES,
  file_path: 's3://bucket/warehouse/db/t/data/ds=2024-01-01/00000-0-äöü.parquet',
  file_format: 'PARQUET',
  partition: [
    null,
    true,
    0,
    -0,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    1.5,
    BIG,
    'zoë ☃ 😀',
    new Uint8Array([0, 255, 7]),
  ],
  record_count: 9_007_199_254_740_993n, // 2^53 + 1: not a safe JS number
  file_size_in_bytes: 123_456_789_012n,
  column_sizes: new Map([
    [3, 100n],
    [1, 2n ** 60n],
    [2, 0n],
  ]),
  value_counts: new Map([
    [1, 10n],
    [2, 11n],
    [3, 12n],
  ]),
  null_value_counts: new Map([
    [1, 0n],
    [2, 5n],
  ]),
  nan_value_counts: new Map([[7, 3n]]),
  lower_bounds: new Map([
    [1, new Uint8Array([0x00, 0x00, 0x01])],
    [2, new Uint8Array([])],
    [5, new Uint8Array([0xff])],
  ]),
  upper_bounds: new Map([
    [1, new Uint8Array([0xff, 0xff, 0xff, 0xff])],
    [2, new Uint8Array([0x00])],
  ]),
  key_metadata: new Uint8Array([1, 2, 3, 0, 255]),
  split_offsets: [4n, 1_048_576n, BIG],
  equality_ids: [1, 3],
  sort_order_id: 0,
  first_row_id: 2n ** 62n,
  referenced_data_file: 's3://bucket/warehouse/db/t/data/other.parquet',
  content_offset: 17n,
  content_size_in_bytes: 4096n,
};

const minimal: DataFile = {
  content: DataFileContent.DATA,
  file_path: 's3://b/t/data/a.parquet',
  file_format: 'PARQUET',
  partition: [],
  record_count: 3n,
  file_size_in_bytes: 1024n,
};

const METRIC_MAPS = [
  'column_sizes',
  'value_counts',
  'null_value_counts',
  'nan_value_counts',
  'lower_bounds',
  'upper_bounds',
] as const;

function dataInvalid(text: string): string {
  try {
    dataFileFromJson(text);
  } catch (e) {
    expect(isFloeError(e, ErrorKind.DataInvalid)).toBe(true);
    return (e as Error).message;
  }
  throw new Error(`expected DataInvalid for ${text}`);
}

describe('dataFileToJson / dataFileFromJson', () => {
  it('round trips a fully populated DataFile exactly', () => {
    const json = dataFileToJson(full);
    expect(json).toBe(JSON.stringify(JSON.parse(json))); // compact: no whitespace
    const back = dataFileFromJson(json);
    expect(back).toEqual(full);
    expect(Object.keys(back).sort()).toEqual(Object.keys(full).sort());
    // Encoding the decoded file gives the very same text.
    expect(dataFileToJson(back)).toBe(json);
  });

  it('keeps bigints bigint, -0 negative, non-finite numbers and bytes', () => {
    const back = dataFileFromJson(dataFileToJson(full));
    expect(typeof back.record_count).toBe('bigint');
    expect(back.record_count).toBe(9_007_199_254_740_993n);
    expect(typeof back.file_size_in_bytes).toBe('bigint');
    expect(back.split_offsets).toEqual([4n, 1_048_576n, BIG]);
    expect(back.split_offsets!.every((o) => typeof o === 'bigint')).toBe(true);
    expect(back.first_row_id).toBe(2n ** 62n);
    expect(back.content_offset).toBe(17n);
    expect(back.content_size_in_bytes).toBe(4096n);

    const p = back.partition;
    expect(p).toHaveLength(full.partition.length);
    expect(p[0]).toBeNull();
    expect(p[1]).toBe(true);
    expect(Object.is(p[2], 0)).toBe(true);
    expect(Object.is(p[3], -0)).toBe(true);
    expect(Number.isNaN(p[4])).toBe(true);
    expect(p[5]).toBe(Number.POSITIVE_INFINITY);
    expect(p[6]).toBe(1.5);
    expect(typeof p[7]).toBe('bigint');
    expect(p[7]).toBe(BIG);
    expect(p[8]).toBe('zoë ☃ 😀');
    expect(p[9]).toBeInstanceOf(Uint8Array);
    expect([...(p[9] as Uint8Array)]).toEqual([0, 255, 7]);

    expect(back.key_metadata).toBeInstanceOf(Uint8Array);
    expect([...back.key_metadata!]).toEqual([1, 2, 3, 0, 255]);
  });

  it('rebuilds metric maps as Maps with number keys in the original order', () => {
    const back = dataFileFromJson(dataFileToJson(full));
    expect(back.column_sizes).toBeInstanceOf(Map);
    expect([...back.column_sizes!.keys()]).toEqual([3, 1, 2]);
    expect([...back.column_sizes!.values()]).toEqual([100n, 2n ** 60n, 0n]);
    for (const name of METRIC_MAPS) {
      const m = back[name]!;
      expect(m).toBeInstanceOf(Map);
      expect([...m.keys()]).toEqual([...full[name]!.keys()]);
      for (const k of m.keys()) expect(typeof k).toBe('number');
    }
    for (const name of ['column_sizes', 'value_counts', 'null_value_counts', 'nan_value_counts'] as const) {
      for (const v of back[name]!.values()) expect(typeof v).toBe('bigint');
    }
    expect([...back.lower_bounds!.get(1)!]).toEqual([0x00, 0x00, 0x01]);
    expect(back.lower_bounds!.get(2)).toEqual(new Uint8Array([]));
    expect([...back.lower_bounds!.get(5)!]).toEqual([0xff]);
    expect([...back.upper_bounds!.get(1)!]).toEqual([0xff, 0xff, 0xff, 0xff]);
    expect(back.upper_bounds!.get(1)).toBeInstanceOf(Uint8Array);
  });

  it('encodes bytes that are a view into a larger buffer by their own bytes only', () => {
    const backing = new Uint8Array([9, 9, 0xde, 0xad, 9]);
    const f: DataFile = {
      ...minimal,
      key_metadata: backing.subarray(2, 4),
      partition: [backing.subarray(1, 3)],
    };
    const back = dataFileFromJson(dataFileToJson(f));
    expect([...back.key_metadata!]).toEqual([0xde, 0xad]);
    expect([...(back.partition[0] as Uint8Array)]).toEqual([9, 0xde]);
  });

  it('round trips a minimal DataFile without adding keys', () => {
    const json = dataFileToJson(minimal);
    expect(Object.keys(JSON.parse(json))).toEqual([
      'content',
      'file_path',
      'file_format',
      'partition',
      'record_count',
      'file_size_in_bytes',
    ]);
    const back = dataFileFromJson(json);
    expect(back).toEqual(minimal);
    expect(Object.keys(back).sort()).toEqual(Object.keys(minimal).sort());
  });

  it('writes undefined partition values as null and tags only what JSON cannot hold', () => {
    const f: DataFile = {
      ...minimal,
      partition: [undefined, 'x', -1.25, false, 7n, -0, Number.NEGATIVE_INFINITY, new Uint8Array([0xff])],
    };
    const json = dataFileToJson(f);
    expect(JSON.parse(json).partition).toEqual([
      null,
      'x',
      -1.25,
      false,
      { b: '7' },
      { n: '-0' },
      { n: '-Infinity' },
      { x: '/w==' },
    ]);
    const back = dataFileFromJson(json);
    expect(back.partition[0]).toBeNull();
    expect(back.partition[4]).toBe(7n);
    expect(Object.is(back.partition[5], -0)).toBe(true);
    expect(back.partition[6]).toBe(Number.NEGATIVE_INFINITY);
  });

  it('rejects partition values that are not scalars', () => {
    expect(() => dataFileToJson({ ...minimal, partition: [{ a: 1 }] })).toThrow(/partition value 0/);
  });
});

describe('dataFileFromJson rejects malformed input with DataInvalid', () => {
  const good = JSON.parse(dataFileToJson(full)) as Record<string, unknown>;
  const variant = (patch: Record<string, unknown>): string => JSON.stringify({ ...good, ...patch });
  const without = (key: string): string => {
    const { [key]: _, ...rest } = good;
    return JSON.stringify(rest);
  };

  it('names what is wrong', () => {
    expect(dataInvalid('not json')).toMatch(/not JSON/);
    expect(dataInvalid('')).toMatch(/not JSON/);
    expect(dataInvalid('[1,2]')).toMatch(/not a JSON object/);
    expect(dataInvalid('null')).toMatch(/not a JSON object/);
    expect(dataInvalid(without('file_path'))).toMatch(/file_path/);
    expect(dataInvalid(without('record_count'))).toMatch(/record_count/);
    expect(dataInvalid(without('file_size_in_bytes'))).toMatch(/file_size_in_bytes/);
    expect(dataInvalid(without('partition'))).toMatch(/partition/);
    expect(dataInvalid(without('content'))).toMatch(/content/);
    expect(dataInvalid(variant({ record_count: 3 }))).toMatch(/record_count/); // a number, not a string
    expect(dataInvalid(variant({ record_count: '1.5' }))).toMatch(/record_count/);
    expect(dataInvalid(variant({ record_count: '007' }))).toMatch(/record_count/);
    expect(dataInvalid(variant({ content: 3 }))).toMatch(/content/);
    expect(dataInvalid(variant({ surprise: 1 }))).toMatch(/surprise/);
  });

  it('rejects bad tags and values in the partition', () => {
    for (const bad of [
      { q: '1' },
      { b: 'x1' },
      { b: 1 },
      { n: 'nan' },
      { x: 'not base64!' },
      { x: '/w=' },
      { b: '1', x: 'AA==' },
      {},
      [1],
    ]) {
      expect(dataInvalid(variant({ partition: [1, bad] }))).toMatch(/partition\[1\]/);
    }
  });

  it('rejects malformed metric maps and byte fields', () => {
    expect(dataInvalid(variant({ column_sizes: { 1: '2' } }))).toMatch(/column_sizes/);
    expect(dataInvalid(variant({ column_sizes: [[1]] }))).toMatch(/column_sizes\[0\]/);
    expect(dataInvalid(variant({ column_sizes: [['1', '2']] }))).toMatch(/column_sizes\[0\]/);
    expect(dataInvalid(variant({ value_counts: [[1, 2]] }))).toMatch(/value_counts\[0\]/);
    expect(
      dataInvalid(
        variant({
          null_value_counts: [
            [1, '2'],
            [1, '3'],
          ],
        }),
      ),
    ).toMatch(/null_value_counts has field id 1 twice/);
    expect(dataInvalid(variant({ lower_bounds: [[1, '***']] }))).toMatch(/lower_bounds\[0\]/);
    expect(dataInvalid(variant({ key_metadata: 'a' }))).toMatch(/key_metadata/);
    expect(dataInvalid(variant({ split_offsets: ['1', 2] }))).toMatch(/split_offsets\[1\]/);
    expect(dataInvalid(variant({ equality_ids: [1.5] }))).toMatch(/equality_ids\[0\]/);
    expect(dataInvalid(variant({ sort_order_id: '0' }))).toMatch(/sort_order_id/);
    expect(dataInvalid(variant({ first_row_id: 1 }))).toMatch(/first_row_id/);
  });
});

describe('withoutColumnMetrics', () => {
  it('drops exactly the six per-column maps', () => {
    const slim = withoutColumnMetrics(full);
    for (const name of METRIC_MAPS) expect(name in slim).toBe(false);
    const expected: Record<string, unknown> = { ...full };
    for (const name of METRIC_MAPS) delete expected[name];
    expect(slim).toEqual(expected);
    expect(Object.keys(slim).sort()).toEqual(Object.keys(expected).sort());
    expect(Object.keys(slim)).toHaveLength(Object.keys(full).length - 6);
    // Still a valid descriptor, and smaller.
    expect(dataFileFromJson(dataFileToJson(slim))).toEqual(slim);
    expect(dataFileToJson(slim).length).toBeLessThan(dataFileToJson(full).length);
    // The input is left alone.
    expect(full.column_sizes?.size).toBe(3);
  });

  it('leaves a file without metrics unchanged', () => {
    expect(withoutColumnMetrics(minimal)).toEqual(minimal);
  });
});
