import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFloeError } from '../../../lambdas/src/errors.ts';
import { formatDecimal, fromBinary, toBinary } from '../../../lambdas/src/iceberg/conversions.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import { decimal, field, fixed, list, map, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import type { Row } from '../../../lambdas/src/iceberg/values.ts';
import { RowBatchBuilder, warmUp, writeDataFile } from '../../../lambdas/src/parquet/index.ts';
import { type Duck, openDuck } from './duck.ts';

// ---- a schema with every supported type ----

const schema: Schema = {
  schemaId: 3,
  fields: [
    field(1, 'b', T.boolean),
    field(2, 'i', T.int, true),
    field(3, 'l', T.long),
    field(4, 'f', T.float),
    field(5, 'd', T.double),
    field(6, 'dec9', decimal(9, 2)),
    field(7, 'dec18', decimal(18, 4)),
    field(8, 'dec38', decimal(38, 10)),
    field(9, 'day', T.date),
    field(10, 't', T.time),
    field(11, 'ts', T.timestamp),
    field(12, 'tstz', T.timestamptz),
    field(13, 'tsn', T.timestamp_ns),
    field(14, 'tstzn', T.timestamptz_ns),
    field(15, 's', T.string),
    field(16, 'u', T.uuid),
    field(17, 'fx', fixed(4)),
    field(18, 'bin', T.binary),
    field(
      19,
      'st',
      struct([
        field(20, 'a', T.int, true),
        field(21, 'b', T.string),
        field(22, 'inner', struct([field(23, 'z', T.long)])),
      ]),
    ),
    field(24, 'tags', list(25, T.string)),
    field(26, 'pts', list(27, struct([field(28, 'x', T.double), field(29, 'y', T.double)]))),
    field(30, 'm', map(31, T.string, 32, T.long)),
    field(33, 'unk', T.unknown),
    field(34, 'dec20', decimal(20, 0)),
  ],
};

const rows: Row[] = [
  {
    b: true,
    i: 1,
    l: 10n,
    f: 1.5,
    d: 2.25,
    dec9: 1420n,
    dec18: -123456789012345678n,
    dec38: 10n ** 37n + 5n,
    day: 0,
    t: 3723000004n,
    ts: -1n,
    tstz: 1700000000000000n,
    tsn: 1700000000123456789n,
    tstzn: 1700000000123456000n,
    s: 'héllo',
    u: '123e4567-e89b-12d3-a456-426614174000',
    fx: Uint8Array.of(1, 2, 3, 4),
    bin: Uint8Array.of(0xde, 0xad),
    st: { a: 1, b: 'x', inner: { z: 5n } },
    tags: ['a', null, 'ccc'],
    pts: [{ x: 1, y: 2 }],
    m: new Map([['k1', 1n]]),
    dec20: -(10n ** 19n),
  },
  { i: 2, st: null, tags: [], m: new Map() },
  {
    b: false,
    i: -3,
    l: -20n,
    f: -0,
    d: -1e300,
    dec9: -99n,
    dec18: 0n,
    dec38: -(10n ** 37n),
    day: -365,
    t: 0n,
    ts: 0n,
    tstz: -5n,
    tsn: -1n,
    tstzn: 5000n,
    s: 'abc',
    u: 'ffffffff-0000-0000-0000-000000000001',
    fx: Uint8Array.of(0, 0, 0, 0),
    bin: new Uint8Array(0),
    st: { a: 3, b: null, inner: null },
    tags: null,
    pts: [{ x: -0.5, y: null }, null],
    m: new Map<string, bigint | null>([
      ['a', 2n],
      ['b', null],
    ]),
    dec20: 5n,
  },
  { i: 4, f: 0, d: Number.NaN, s: 'zzz', st: { a: 7 }, tags: ['zz'], pts: [], m: null },
];

const DUCK_TYPES: Record<number, string> = {
  1: 'BOOLEAN',
  2: 'INTEGER',
  3: 'BIGINT',
  4: 'FLOAT',
  5: 'DOUBLE',
  6: 'DECIMAL(9,2)',
  7: 'DECIMAL(18,4)',
  8: 'DECIMAL(38,10)',
  9: 'DATE',
  10: 'TIME',
  11: 'TIMESTAMP',
  12: 'TIMESTAMPTZ',
  13: 'TIMESTAMP_NS',
  14: 'TIMESTAMP_NS',
  15: 'VARCHAR',
  16: 'UUID',
  17: 'BLOB',
  18: 'BLOB',
  19: 'STRUCT(a INTEGER, b VARCHAR, "inner" STRUCT(z BIGINT))',
  24: 'VARCHAR[]',
  26: 'STRUCT(x DOUBLE, y DOUBLE)[]',
  30: 'MAP(VARCHAR, BIGINT)',
  34: 'DECIMAL(20,0)',
};

/** `read_parquet` that resolves columns by field id only: every column is renamed `c<id>`. */
function byFieldId(path: string): string {
  const entries = Object.entries(DUCK_TYPES).map(
    ([id, t]) => `${id}: {name: 'c${id}', type: '${t}', default_value: NULL}`,
  );
  return `read_parquet('${path}', schema = map {${entries.join(', ')}})`;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex').toUpperCase();
const json = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    typeof x === 'bigint' ? Number(x) : x instanceof Map ? Object.fromEntries(x) : x,
  );

let duck: Duck;
let written: ReturnType<typeof writeDataFile>;
let path: string;

beforeAll(async () => {
  duck = await openDuck();
  written = writeDataFile(schema, rows, { rowGroupRows: 2 });
  path = duck.file(written.bytes);
});
afterAll(() => duck.close());

describe('writeDataFile: values read back by field id', () => {
  it('reports the record count', () => {
    expect(written.recordCount).toBe(4);
  });

  it('round-trips every primitive value through DuckDB', async () => {
    const got = await duck.rows(`
      SELECT c1 AS "b", c2 AS "i", c3 AS "l", c4 AS "f", c5 AS "d", c6::VARCHAR AS "dec9", c7::VARCHAR AS "dec18",
             c8::VARCHAR AS "dec38", c34::VARCHAR AS "dec20", (c9 - DATE '1970-01-01')::INTEGER AS "day",
             epoch_us(DATE '1970-01-01' + c10) AS "t", epoch_us(c11) AS "ts", epoch_us(c12) AS "tstz",
             epoch_ns(c13) AS "tsn", epoch_ns(c14) AS "tstzn", c15 AS "s", c16::VARCHAR AS "u", hex(c17) AS "fx",
             hex(c18) AS "bin"
      FROM ${byFieldId(path)}`);
    expect(got).toHaveLength(rows.length);
    const dec = (v: unknown, scale: number) => (typeof v === 'bigint' ? formatDecimal(v, scale) : null);
    const bytes = (v: unknown) => (v instanceof Uint8Array ? hex(v) : null);
    const expected = rows.map((r) => ({
      b: r.b ?? null,
      i: r.i,
      l: r.l ?? null,
      f: typeof r.f === 'number' ? Math.fround(r.f) : null,
      d: r.d ?? null,
      dec9: dec(r.dec9, 2),
      dec18: dec(r.dec18, 4),
      dec38: dec(r.dec38, 10),
      dec20: dec(r.dec20, 0),
      day: r.day ?? null,
      t: r.t ?? null,
      ts: r.ts ?? null,
      tstz: r.tstz ?? null,
      tsn: r.tsn ?? null,
      tstzn: r.tstzn ?? null,
      s: r.s ?? null,
      u: r.u ?? null,
      fx: bytes(r.fx),
      bin: bytes(r.bin),
    }));
    // -0.0 and +0.0 are equal for DuckDB; compare NaN and signed zero separately below.
    expect(got.map((g) => ({ ...g, d: Number.isNaN(g.d) ? 'NaN' : g.d }))).toEqual(
      expected.map((e) => ({ ...e, d: Number.isNaN(e.d) ? 'NaN' : e.d })),
    );
    expect(Object.is(got[2]!.f, -0)).toBe(true);
  });

  it('round-trips structs, lists, lists of structs and maps', async () => {
    const got = await duck.rows(`
      SELECT to_json(c19)::VARCHAR AS "st", to_json(c24)::VARCHAR AS "tags", to_json(c26)::VARCHAR AS "pts",
             to_json(c30)::VARCHAR AS "m"
      FROM ${byFieldId(path)}`);
    const expected = rows.map((r) => {
      const st = r.st as Record<string, unknown> | null | undefined;
      return {
        st: st == null ? null : json({ a: st.a, b: st.b ?? null, inner: st.inner == null ? null : st.inner }),
        tags: r.tags == null ? null : json(r.tags),
        pts: r.pts == null ? null : json(r.pts),
        m: r.m == null ? null : json(r.m),
      };
    });
    // Compare parsed JSON (DuckDB prints doubles as 1.0).
    const parse = (o: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v === null ? null : JSON.parse(String(v))]));
    expect(got.map(parse)).toEqual(expected.map(parse));
  });
});

describe('writeDataFile: Parquet schema', () => {
  type SchemaRow = Record<string, unknown> & { name: string };
  let els: SchemaRow[];
  const el = (name: string, nth = 0): SchemaRow => {
    const found = els.filter((e) => e.name === name)[nth];
    if (!found) throw new Error(`no schema element ${name}`);
    return found;
  };
  beforeAll(async () => {
    els = (await duck.rows(
      `SELECT name, type, type_length::INTEGER AS "type_length", repetition_type, converted_type,
              field_id::INTEGER AS "field_id", logical_type, scale::INTEGER AS "scale",
              "precision"::INTEGER AS "precision"
       FROM parquet_schema('${path}')`,
    )) as SchemaRow[];
  });

  it('puts the Iceberg field id on every column, incl. list elements and map keys/values', () => {
    const ids = Object.fromEntries(els.filter((e) => e.field_id !== null).map((e) => [e.field_id, e.name]));
    expect(ids).toEqual({
      1: 'b',
      2: 'i',
      3: 'l',
      4: 'f',
      5: 'd',
      6: 'dec9',
      7: 'dec18',
      8: 'dec38',
      9: 'day',
      10: 't',
      11: 'ts',
      12: 'tstz',
      13: 'tsn',
      14: 'tstzn',
      15: 's',
      16: 'u',
      17: 'fx',
      18: 'bin',
      19: 'st',
      20: 'a',
      21: 'b',
      22: 'inner',
      23: 'z',
      24: 'tags',
      25: 'element',
      26: 'pts',
      27: 'element',
      28: 'x',
      29: 'y',
      30: 'm',
      31: 'key',
      32: 'value',
      34: 'dec20',
    });
    // Only the root and the synthetic repeated groups have no id.
    expect(els.filter((e) => e.field_id === null).map((e) => e.name)).toEqual([
      'table',
      'list',
      'list',
      'key_value',
    ]);
  });

  it('omits the unknown column', () => {
    expect(els.some((e) => e.name === 'unk')).toBe(false);
  });

  it('uses 3-level lists and maps with REQUIRED keys and required fields', () => {
    expect(el('list').repetition_type).toBe('REPEATED');
    expect(el('key_value').repetition_type).toBe('REPEATED');
    expect(el('tags').converted_type).toBe('LIST');
    expect(el('m').converted_type).toBe('MAP');
    expect(el('key').repetition_type).toBe('REQUIRED');
    expect(el('value').repetition_type).toBe('OPTIONAL');
    expect(el('i').repetition_type).toBe('REQUIRED');
    expect(el('a').repetition_type).toBe('REQUIRED');
    expect(el('l').repetition_type).toBe('OPTIONAL');
  });

  it('writes timestamps as INT64 with the right unit and UTC adjustment, and no legacy type for local time', () => {
    expect(el('tstz')).toMatchObject({ type: 'INT64', converted_type: 'TIMESTAMP_MICROS' });
    expect(el('tstz').logical_type).toMatch(/isAdjustedToUTC=1.*MICROS=MicroSeconds/);
    expect(el('ts')).toMatchObject({ type: 'INT64', converted_type: null });
    expect(el('ts').logical_type).toMatch(/isAdjustedToUTC=0.*MICROS=MicroSeconds/);
    expect(el('tsn').logical_type).toMatch(/isAdjustedToUTC=0.*NANOS=NanoSeconds/);
    expect(el('tstzn').logical_type).toMatch(/isAdjustedToUTC=1.*NANOS=NanoSeconds/);
    expect(el('t')).toMatchObject({ type: 'INT64', converted_type: null });
    expect(el('t').logical_type).toMatch(/TimeType\(isAdjustedToUTC=0.*MICROS=MicroSeconds/);
    expect(el('day')).toMatchObject({ type: 'INT32', converted_type: 'DATE' });
  });

  it('stores decimals by precision and uuid as FIXED_LEN_BYTE_ARRAY(16) + UUID', () => {
    expect(el('dec9')).toMatchObject({ type: 'INT32', precision: 9, scale: 2, converted_type: 'DECIMAL' });
    expect(el('dec18')).toMatchObject({ type: 'INT64', precision: 18, scale: 4 });
    expect(el('dec38')).toMatchObject({
      type: 'FIXED_LEN_BYTE_ARRAY',
      type_length: 16,
      precision: 38,
      scale: 10,
    });
    expect(el('dec20')).toMatchObject({
      type: 'FIXED_LEN_BYTE_ARRAY',
      type_length: 9,
      precision: 20,
      scale: 0,
    });
    expect(el('u')).toMatchObject({
      type: 'FIXED_LEN_BYTE_ARRAY',
      type_length: 16,
      logical_type: 'UUIDType()',
    });
    expect(el('fx')).toMatchObject({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 4 });
    expect(el('s')).toMatchObject({ type: 'BYTE_ARRAY', converted_type: 'UTF8' });
  });

  it('stores the Iceberg schema in the key/value metadata instead of the Arrow schema', async () => {
    const kv = await duck.rows(`SELECT decode(key) k, decode(value) v FROM parquet_kv_metadata('${path}')`);
    expect(kv.map((r) => r.k)).toEqual(['iceberg.schema']);
    const parsed = JSON.parse(String(kv[0]!.v));
    expect(parsed['schema-id']).toBe(3);
    expect(parsed.fields).toHaveLength(schema.fields.length);
  });
});

describe('writeDataFile: metrics', () => {
  const leafPaths: Record<string, number> = {
    b: 1,
    i: 2,
    l: 3,
    f: 4,
    d: 5,
    dec9: 6,
    dec18: 7,
    dec38: 8,
    day: 9,
    t: 10,
    ts: 11,
    tstz: 12,
    tsn: 13,
    tstzn: 14,
    s: 15,
    u: 16,
    fx: 17,
    bin: 18,
    'st, a': 20,
    'st, b': 21,
    'st, inner, z': 23,
    'tags, list, element': 25,
    'pts, list, element, x': 28,
    'pts, list, element, y': 29,
    'm, key_value, key': 31,
    'm, key_value, value': 32,
    dec20: 34,
  };
  let chunks: {
    path: string;
    rg: number;
    num_values: bigint;
    nulls: bigint;
    size: bigint;
    data: bigint;
    dict: bigint | null;
  }[];
  beforeAll(async () => {
    chunks = (await duck.rows(
      `SELECT path_in_schema AS "path", row_group_id::INTEGER AS "rg", num_values, stats_null_count AS "nulls",
              total_compressed_size AS "size", data_page_offset AS "data", dictionary_page_offset AS "dict"
       FROM parquet_metadata('${path}') ORDER BY row_group_id, column_id`,
    )) as typeof chunks;
  });
  const sumBy = (pick: (c: (typeof chunks)[number]) => bigint) => {
    const out = new Map<number, bigint>();
    for (const c of chunks) {
      const id = leafPaths[c.path];
      if (id === undefined) throw new Error(`unexpected column ${c.path}`);
      out.set(id, (out.get(id) ?? 0n) + pick(c));
    }
    return out;
  };

  it('has column sizes equal to the footer total_compressed_size summed over row groups', () => {
    expect(new Set(chunks.map((c) => c.rg)).size).toBe(2);
    expect(written.metrics.columnSizes).toEqual(sumBy((c) => c.size));
  });

  it('has split offsets at the start of every row group', () => {
    const starts = [0, 1].map((rg) => {
      const first = chunks.find((c) => c.rg === rg)!;
      return first.dict !== null && first.dict > 0n && first.dict < first.data ? first.dict : first.data;
    });
    expect(written.metrics.splitOffsets).toEqual(starts);
    expect(written.metrics.splitOffsets[0]).toBe(4n);
  });

  it('counts values and nulls like the Parquet footer does', () => {
    expect(written.metrics.valueCounts).toEqual(sumBy((c) => c.num_values));
    expect(written.metrics.nullValueCounts).toEqual(sumBy((c) => c.nulls));
  });

  it('counts values and nulls as computed by hand', () => {
    const v = written.metrics.valueCounts;
    const n = written.metrics.nullValueCounts;
    for (const id of [1, 2, 3, 4, 5, 6, 15, 20, 21, 23]) expect(v.get(id)).toBe(4n);
    // tags: 3 elements + [] + null + 1 element; nulls: the null element, [] and null.
    expect([v.get(25), n.get(25)]).toEqual([6n, 3n]);
    // pts: 1 + null + 2 + []; x null for null list, null element, []; y also for the null y.
    expect([v.get(28), n.get(28), n.get(29)]).toEqual([5n, 3n, 4n]);
    // m: 1 + empty + 2 + null; the value null in row 2 counts too.
    expect([v.get(31), n.get(31), n.get(32)]).toEqual([5n, 2n, 3n]);
    expect([n.get(1), n.get(2), n.get(4), n.get(5), n.get(15)]).toEqual([2n, 0n, 1n, 1n, 1n]);
    // st.a is required: null only where the struct itself is null (row 1).
    expect([n.get(20), n.get(21), n.get(23)]).toEqual([1n, 3n, 3n]);
    expect(v.has(33)).toBe(false);
  });

  it('counts NaN only for float and double columns', () => {
    expect(Object.fromEntries(written.metrics.nanValueCounts)).toEqual({ 4: 0n, 5: 1n, 28: 0n, 29: 0n });
  });

  it('keeps bounds for leaves outside lists and maps only, NaN excluded, -0.0 below +0.0', () => {
    const lower = written.metrics.lowerBounds;
    const upper = written.metrics.upperBounds;
    const byId = new Map<number, { type: Parameters<typeof fromBinary>[0] }>();
    const visit = (fields: typeof schema.fields) => {
      for (const f of fields) {
        if (f.type.kind === 'struct') visit(f.type.fields);
        else byId.set(f.id, { type: f.type as Parameters<typeof fromBinary>[0] });
      }
    };
    visit(schema.fields);
    const decode = (m: Map<number, Uint8Array>) =>
      Object.fromEntries([...m].map(([id, b]) => [id, fromBinary(byId.get(id)!.type, b)]));
    expect(decode(lower)).toEqual({
      1: false,
      2: -3,
      3: -20n,
      4: -0,
      5: -1e300,
      6: -99n,
      7: -123456789012345678n,
      8: -(10n ** 37n),
      9: -365,
      10: 0n,
      11: -1n,
      12: -5n,
      13: -1n,
      14: 5000n,
      15: 'abc',
      16: '123e4567-e89b-12d3-a456-426614174000',
      17: Uint8Array.of(0, 0, 0, 0),
      18: new Uint8Array(0),
      20: 1,
      21: 'x',
      23: 5n,
      34: -(10n ** 19n),
    });
    expect(decode(upper)).toEqual({
      1: true,
      2: 4,
      3: 10n,
      4: 1.5,
      5: 2.25,
      6: 1420n,
      7: 0n,
      8: 10n ** 37n + 5n,
      9: 0,
      10: 3723000004n,
      11: 0n,
      12: 1700000000000000n,
      13: 1700000000123456789n,
      14: 1700000000123456000n,
      15: 'zzz',
      16: 'ffffffff-0000-0000-0000-000000000001',
      17: Uint8Array.of(1, 2, 3, 4),
      18: Uint8Array.of(0xde, 0xad),
      20: 7,
      21: 'x',
      23: 5n,
      34: 5n,
    });
    expect(lower.get(4)).toEqual(toBinary(T.float, -0)); // sign bit set
    expect(lower.get(4)![3]).toBe(0x80);
  });
});

describe('writeDataFile: string bounds', () => {
  const s = (): Schema => ({ schemaId: 0, fields: [field(1, 's', T.string)] });

  it('truncates to 16 code points, incrementing the last code point of the upper bound', () => {
    const r = writeDataFile(s(), [
      { s: 'abcdefghijklmnopqrstuvwxyz' },
      { s: 'zyxwvutsrqponmlkjihgfedcba' },
      { s: 'm' },
    ]);
    expect(fromBinary(T.string, r.metrics.lowerBounds.get(1)!)).toBe('abcdefghijklmnop');
    expect(fromBinary(T.string, r.metrics.upperBounds.get(1)!)).toBe('zyxwvutsrqponmll');
  });

  it('honours metricsTruncateLength', () => {
    const r = writeDataFile(s(), [{ s: 'abcdef' }, { s: 'uvwxyz' }], { metricsTruncateLength: 3 });
    expect(fromBinary(T.string, r.metrics.lowerBounds.get(1)!)).toBe('abc');
    expect(fromBinary(T.string, r.metrics.upperBounds.get(1)!)).toBe('uvx');
  });

  it('counts code points, not UTF-16 units, and orders by code point', () => {
    // UTF-16 order puts U+1F600 (a surrogate pair) before U+FFFD; code-point order after.
    const emoji = '😀'.repeat(20);
    const r = writeDataFile(s(), [{ s: emoji }, { s: '\uFFFD' }, { s: 'a' }]);
    expect(fromBinary(T.string, r.metrics.lowerBounds.get(1)!)).toBe('a');
    expect(fromBinary(T.string, r.metrics.upperBounds.get(1)!)).toBe(`${'😀'.repeat(15)}😁`);
  });

  it('omits the upper bound when no code point can be incremented', () => {
    const r = writeDataFile(s(), [{ s: '\u{10FFFF}'.repeat(17) }, { s: 'b' }]);
    expect(fromBinary(T.string, r.metrics.lowerBounds.get(1)!)).toBe('b');
    expect(r.metrics.upperBounds.has(1)).toBe(false);
  });
});

describe('writeDataFile: invalid data', () => {
  const catchErr = (f: () => unknown): unknown => {
    try {
      f();
    } catch (e) {
      return e;
    }
    throw new Error('expected an error');
  };

  it('rejects a null in a required column, naming it', () => {
    const e = catchErr(() => writeDataFile(schema, [{ i: 1 }, { i: null }]));
    expect(isFloeError(e, 'DataInvalid')).toBe(true);
    expect((e as Error).message).toContain("'i'");
  });

  it('rejects a null required struct field when the struct is present, but not when it is null', () => {
    expect(() => writeDataFile(schema, [{ i: 1, st: null }])).not.toThrow();
    const e = catchErr(() => writeDataFile(schema, [{ i: 1, st: { b: 'x' } }]));
    expect(isFloeError(e, 'DataInvalid')).toBe(true);
    expect((e as Error).message).toContain("'st.a'");
  });

  it('rejects a null map key', () => {
    const e = catchErr(() => writeDataFile(schema, [{ i: 1, m: new Map([[null, 1n]]) }]));
    expect((e as Error).message).toContain("'m.key'");
  });

  it('rejects a value of the wrong type, naming the column and the value', () => {
    const e = catchErr(() => writeDataFile(schema, [{ i: 1, l: 'twelve' }]));
    expect(isFloeError(e, 'DataInvalid')).toBe(true);
    expect((e as Error).message).toMatch(/'l' \(long\).*"twelve"/);
    expect(() => writeDataFile(schema, [{ i: 1.5 }])).toThrow(/'i' \(int\)/);
    expect(() => writeDataFile(schema, [{ i: 1, u: 'not-a-uuid' }])).toThrow(/'u' \(uuid\)/);
    expect(() => writeDataFile(schema, [{ i: 1, dec9: 10n ** 9n }])).toThrow(/'dec9'.*precision/);
    expect(() => writeDataFile(schema, [{ i: 1, l: 1n << 63n }])).toThrow(/'l'.*64-bit/);
    expect(() => writeDataFile(schema, [{ i: 1, fx: Uint8Array.of(1) }])).toThrow(/'fx'/);
  });
});

describe('writeDataFile: edge cases', () => {
  it('writes an empty file that reads back with zero rows', async () => {
    const r = writeDataFile(schema, []);
    expect(r.recordCount).toBe(0);
    const [row] = await duck.rows(`SELECT count(*)::INTEGER n FROM read_parquet('${duck.file(r.bytes)}')`);
    expect(row!.n).toBe(0);
    expect(r.metrics.lowerBounds.size).toBe(0);
  });

  it('keeps earlier files intact when buffers are reused for the next file', async () => {
    const s: Schema = { schemaId: 0, fields: [field(1, 'n', T.long), field(2, 's', T.string)] };
    const a = writeDataFile(s, [{ n: 1n, s: 'first' }]);
    const copy = a.bytes.slice();
    writeDataFile(s, [{ n: 2n, s: 'second, longer string' }]);
    expect(a.bytes).toEqual(copy);
    const got = await duck.rows(`SELECT n, s FROM read_parquet('${duck.file(a.bytes)}')`);
    expect(got).toEqual([{ n: 1n, s: 'first' }]);
  });

  it('accepts numbers for longs and plain objects for string-keyed maps', async () => {
    const s: Schema = {
      schemaId: 0,
      fields: [field(1, 'n', T.long), field(2, 'm', map(3, T.string, 4, T.int))],
    };
    const r = writeDataFile(s, [{ n: 7, m: { a: 1, b: 2 } }]);
    const got = await duck.rows(`SELECT n, to_json(m)::VARCHAR m FROM read_parquet('${duck.file(r.bytes)}')`);
    expect(got).toEqual([{ n: 7n, m: '{"a":1,"b":2}' }]);
  });

  it('counts NaN inside lists and writes snappy/gzip/uncompressed files', async () => {
    const s: Schema = { schemaId: 0, fields: [field(1, 'xs', list(2, T.float))] };
    for (const compression of ['snappy', 'gzip', 'uncompressed'] as const) {
      const r = writeDataFile(s, [{ xs: [1, Number.NaN, 2] }, { xs: [Number.NaN] }], { compression });
      expect(r.metrics.nanValueCounts.get(2)).toBe(2n);
      expect(r.metrics.lowerBounds.has(2)).toBe(false);
      const [row] = await duck.rows(
        `SELECT count(*)::INTEGER n, any_value(compression) c FROM parquet_metadata('${duck.file(r.bytes)}')`,
      );
      expect(row!.c).toBe(compression.toUpperCase());
    }
  });

  it('RowBatchBuilder accumulates rows, writes them once and starts over', async () => {
    const s: Schema = { schemaId: 0, fields: [field(1, 'n', T.long, true)] };
    const b = new RowBatchBuilder(s, { compression: 'snappy' });
    b.add({ n: 1n });
    b.add({ n: 2n });
    expect(b.rowCount).toBe(2);
    const r = b.finish();
    expect([r.recordCount, b.rowCount]).toEqual([2, 0]);
    const got = await duck.rows(`SELECT n FROM read_parquet('${duck.file(r.bytes)}') ORDER BY n`);
    expect(got.map((x) => x.n)).toEqual([1n, 2n]);
  });

  it('warmUp writes a throwaway file without error', () => {
    expect(() => warmUp(50)).not.toThrow();
  });
});
