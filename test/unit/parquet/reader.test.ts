import { readFileSync } from 'node:fs';
import * as arrow from 'apache-arrow';
import fc from 'fast-check';
import * as pw from 'parquet-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { parseNameMapping } from '../../../lambdas/src/iceberg/name-mapping.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import {
  decimal,
  field,
  fixed,
  type IcebergType,
  list,
  map,
  type NestedField,
  type PrimitiveType,
  type StructType,
  struct,
  T,
} from '../../../lambdas/src/iceberg/types.ts';
import type { IcebergValue, Row } from '../../../lambdas/src/iceberg/values.ts';
import {
  POSITION_DELETE_FILE_PATH_ID,
  POSITION_DELETE_POS_ID,
  readDataFile,
  readEqualityDeletes,
  readPositionDeletes,
  writeDataFile,
} from '../../../lambdas/src/parquet/index.ts';
import { canonicalRow, duckCanonicalSql, fromDuckJson } from '../../helpers/parquet-canon.ts';
import { type Duck, openDuck } from './duck.ts';
import { int96ParquetFile } from './int96-file.ts';

const LONG_MAX = (1n << 63n) - 1n;
const LONG_MIN = -(1n << 63n);
const DEC38_MAX = 10n ** 38n - 1n;

/** `{...}` with an own data property for every key, `__proto__` included (as JSON.parse does). */
function obj(entries: [string, IcebergValue][]): Row {
  const o: Row = {};
  for (const [k, v] of entries)
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

/** Expects `fn` to throw a FloeError of `kind` whose message contains every one of `parts`. */
function expectFloeError(fn: () => unknown, kind: ErrorKind, ...parts: string[]): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(isFloeError(caught, kind), String(caught)).toBe(true);
  for (const p of parts) expect((caught as Error).message).toContain(p);
}

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());

// ---------------------------------------------------------------------------------------------

describe('readDataFile: round trip of writeDataFile', () => {
  const schema: Schema = {
    schemaId: 1,
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
      field(35, 'req_list', list(36, T.long, true)),
      field(37, 'mi', map(38, T.int, 39, struct([field(40, 'q', T.string)]), true)),
    ],
  };
  const full: Row = {
    b: true,
    i: 2147483647,
    l: LONG_MAX,
    f: -0,
    d: Number.NaN,
    dec9: 999999999n,
    dec18: -999999999999999999n,
    dec38: DEC38_MAX,
    day: -719162,
    t: 86_399_999_999n,
    ts: 1_700_000_000_123_456n,
    tstz: -1n,
    tsn: 1_700_000_000_123_456_789n,
    tstzn: -1n,
    s: 'héllo wörld 😀',
    u: '123e4567-e89b-12d3-a456-426614174000',
    fx: Uint8Array.of(1, 2, 3, 4),
    bin: new Uint8Array(0),
    st: { a: 1, b: 'x', inner: { z: LONG_MIN } },
    tags: ['a', null, ''],
    pts: [{ x: 1.5, y: null }, null, { x: -0, y: Number.POSITIVE_INFINITY }],
    m: new Map<IcebergValue, IcebergValue>([
      ['k1', 1n],
      ['k2', null],
    ]),
    unk: null,
    dec20: 18446744073709551616n, // 2^64: needs the upper 64-bit word
    req_list: [LONG_MIN, 0n, LONG_MAX],
    mi: new Map<IcebergValue, IcebergValue>([[7, { q: null }]]),
  };
  const nulls: Row = {
    b: false,
    i: -2147483648,
    l: LONG_MIN,
    f: 3.4028234663852886e38,
    d: -0,
    dec9: -999999999n,
    dec18: 1n,
    dec38: -DEC38_MAX,
    day: 2932896,
    t: 0n,
    ts: LONG_MIN,
    tstz: LONG_MAX,
    tsn: LONG_MIN,
    tstzn: LONG_MAX,
    s: '',
    u: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    fx: Uint8Array.of(0, 0, 0, 0),
    bin: Uint8Array.of(0, 255),
    // A struct whose fields are null is not a null struct.
    st: { a: 0, b: null, inner: null },
    // An empty list is not a null list; a list of nulls is neither.
    tags: [],
    pts: [null],
    m: new Map(),
    unk: null,
    dec20: -18446744073709551617n, // -(2^64) - 1
    req_list: [],
    mi: new Map(),
  };
  const allNull: Row = Object.fromEntries(schema.fields.map((f) => [f.name, null]));
  allNull.i = 0;

  it('reads every type back exactly: extremes, NaN and -0, µs and ns timestamps, nested nulls', () => {
    const rows = [full, nulls, allNull];
    const back = readDataFile(writeDataFile(schema, rows).bytes, schema);
    expect(back).toEqual(rows);
    // toEqual treats -0 and 0 as different; say so explicitly anyway.
    expect(Object.is(back[0]!.f, -0)).toBe(true);
    expect(Object.is(back[1]!.d, -0)).toBe(true);
    expect(typeof back[0]!.l).toBe('bigint');
    expect(back[1]!.st).not.toBeNull();
    expect(back[2]!.st).toBeNull();
    expect(back[1]!.tags).toEqual([]);
    expect(back[2]!.tags).toBeNull();
  });

  it('fills absent keys and struct fields with null, so every field is present', () => {
    const back = readDataFile(writeDataFile(schema, [{ i: 1, st: { a: 2 } }]).bytes, schema);
    expect(Object.keys(back[0]!)).toEqual(schema.fields.map((f) => f.name));
    expect(back[0]!.st).toEqual({ a: 2, b: null, inner: null });
    expect(back[0]!.l).toBeNull();
  });

  it('keeps a field named __proto__ as data at the top level and in structs', () => {
    const s: Schema = {
      schemaId: 0,
      fields: [
        field(1, '__proto__', T.string),
        field(2, 'st', struct([field(3, '__proto__', T.long), field(4, 'constructor', T.string)])),
      ],
    };
    const row = obj([
      ['__proto__', 'top'],
      [
        'st',
        obj([
          ['__proto__', 5n],
          ['constructor', 'c'],
        ]),
      ],
    ]);
    const [back] = readDataFile(writeDataFile(s, [row]).bytes, s);
    expect(Object.hasOwn(back!, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toBe('top');
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    const st = back!.st as Row;
    expect(Object.hasOwn(st, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(st, '__proto__')?.value).toBe(5n);
    expect(st.constructor).toBe('c');
  });

  it('keeps file order across row groups and record batches (70,000 rows)', () => {
    const s: Schema = { schemaId: 0, fields: [field(1, 'id', T.long, true), field(2, 's', T.string)] };
    const n = 70_000;
    const rows: Row[] = [];
    for (let k = 0; k < n; k++)
      rows.push({ id: BigInt(k), s: k % 7 === 0 ? null : `v${k}${k % 3 === 0 ? 'é' : ''}` });
    const back = readDataFile(writeDataFile(s, rows, { rowGroupRows: 30_000 }).bytes, s);
    expect(back).toHaveLength(n);
    expect(back).toEqual(rows);
  });

  it('reads a file with no rows as no rows', () => {
    expect(readDataFile(writeDataFile(schema, []).bytes, schema)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: generated schemas and rows survive writeDataFile → readDataFile unchanged.

const PRIMITIVES: PrimitiveType[] = [
  T.boolean,
  T.int,
  T.long,
  T.float,
  T.double,
  decimal(9, 2),
  decimal(18, 4),
  decimal(38, 10),
  decimal(20, 0),
  T.date,
  T.time,
  T.timestamp,
  T.timestamptz,
  T.timestamp_ns,
  T.timestamptz_ns,
  T.string,
  T.uuid,
  fixed(3),
  T.binary,
];
const KEY_TYPES: PrimitiveType[] = [T.string, T.int, T.long, T.date, T.uuid];
const NAMES = ['a', 'b', 'c', 'Breed Name', '__proto__', 'constructor', 'x.y', 'é'];

/** Types with placeholder ids (0); `withIds` numbers them. */
const typeArb: fc.Arbitrary<IcebergType> = fc.letrec<{ type: IcebergType }>((tie) => ({
  type: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...PRIMITIVES),
    fc
      .uniqueArray(
        fc.record({ name: fc.constantFrom(...NAMES), required: fc.boolean(), type: tie('type') }),
        {
          minLength: 1,
          maxLength: 4,
          selector: (f) => f.name,
        },
      )
      .map((fs) => struct(fs.map((f) => field(0, f.name, f.type, f.required)))),
    fc.record({ element: tie('type'), required: fc.boolean() }).map((l) => list(0, l.element, l.required)),
    fc
      .record({ key: fc.constantFrom(...KEY_TYPES), value: tie('type'), required: fc.boolean() })
      .map((m) => map(0, m.key, 0, m.value, m.required)),
  ),
})).type;

function withIds(fields: readonly NestedField[]): NestedField[] {
  let next = 1;
  const type = (t: IcebergType): IcebergType => {
    switch (t.kind) {
      case 'struct':
        return struct(t.fields.map((f) => ({ ...f, id: next++, type: type(f.type) })));
      case 'list':
        return list(next++, type(t.element), t.elementRequired);
      case 'map': {
        const keyId = next++;
        const valueId = next++;
        return map(keyId, type(t.key), valueId, type(t.value), t.valueRequired);
      }
      default:
        return t;
    }
  };
  return (type(struct(fields)) as StructType).fields as NestedField[];
}

const schemaArb: fc.Arbitrary<Schema> = fc
  .uniqueArray(fc.record({ name: fc.constantFrom(...NAMES), required: fc.boolean(), type: typeArb }), {
    minLength: 1,
    maxLength: 5,
    selector: (f) => f.name,
  })
  .map((fs) => ({ schemaId: 0, fields: withIds(fs.map((f) => field(0, f.name, f.type, f.required))) }));

function primitiveArb(t: PrimitiveType): fc.Arbitrary<IcebergValue> {
  const int64 = fc.oneof(
    fc.bigInt({ min: LONG_MIN, max: LONG_MAX }),
    fc.constantFrom(LONG_MIN, LONG_MAX, 0n, -1n),
  );
  switch (t.kind) {
    case 'boolean':
      return fc.boolean();
    case 'int':
      return fc.oneof(fc.integer(), fc.constantFrom(-(2 ** 31), 2 ** 31 - 1));
    case 'date':
      return fc.integer({ min: -1_000_000, max: 1_000_000 });
    case 'long':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return int64;
    case 'time':
      return fc.bigInt({ min: 0n, max: 86_400_000_000n - 1n });
    case 'float':
      return fc.float();
    case 'double':
      return fc.oneof(fc.double(), fc.constantFrom(0, -0, Number.NaN));
    case 'decimal': {
      const lim = 10n ** BigInt(t.precision) - 1n;
      return fc.oneof(
        fc.bigInt({ min: -lim, max: lim }),
        fc.constantFrom(-lim, lim, 0n, ...[1n << 64n, -(1n << 63n)].filter((v) => v >= -lim && v <= lim)),
      );
    }
    case 'string':
      return fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 8 }));
    case 'uuid':
      return fc.uuid();
    case 'fixed':
      return fc.uint8Array({ minLength: t.length, maxLength: t.length });
    case 'binary':
      return fc.uint8Array({ maxLength: 12 });
    default:
      throw new Error(`no generator for ${t.kind}`);
  }
}

function valueArb(t: IcebergType, required: boolean): fc.Arbitrary<IcebergValue> {
  const arb = ((): fc.Arbitrary<IcebergValue> => {
    switch (t.kind) {
      case 'struct':
        return fc
          .tuple(...t.fields.map((f) => valueArb(f.type, f.required)))
          .map((vs) => obj(t.fields.map((f, k) => [f.name, vs[k]!])));
      case 'list':
        return fc.array(valueArb(t.element, t.elementRequired), { maxLength: 3 });
      case 'map':
        return fc
          .array(fc.tuple(primitiveArb(t.key as PrimitiveType), valueArb(t.value, t.valueRequired)), {
            maxLength: 3,
          })
          .map((es) => new Map(es));
      default:
        return primitiveArb(t);
    }
  })();
  return required ? arb : fc.option(arb, { nil: null, freq: 4 });
}

const caseArb = schemaArb.chain((schema) =>
  fc.record({
    schema: fc.constant(schema),
    rows: fc.array(valueArb(struct(schema.fields), true), { maxLength: 12 }) as fc.Arbitrary<Row[]>,
    rowGroupRows: fc.integer({ min: 1, max: 8 }),
  }),
);

describe('readDataFile: property', () => {
  it('reads back generated rows of generated schemas unchanged', () => {
    fc.assert(
      fc.property(caseArb, ({ schema, rows, rowGroupRows }) => {
        const back = readDataFile(writeDataFile(schema, rows, { rowGroupRows }).bytes, schema);
        expect(back).toEqual(rows);
      }),
      { numRuns: 120 },
    );
  });
});

// ---------------------------------------------------------------------------------------------

describe('readDataFile: schema evolution (match by field id)', () => {
  const old: Schema = {
    schemaId: 1,
    fields: [
      field(1, 'id', T.int, true),
      field(2, 'name', T.string),
      field(3, 'score', T.float),
      field(4, 'price', decimal(9, 2)),
      field(5, 'day', T.date),
      field(6, 'st', struct([field(7, 'a', T.int), field(8, 'gone', T.string)])),
      field(9, 'tags', list(10, T.int)),
      field(11, 'm', map(12, T.string, 13, T.float)),
      field(14, 'dropped', T.string),
    ],
  };
  const oldRows: Row[] = [
    {
      id: 1,
      name: 'one',
      score: 0.5,
      price: -12345n,
      day: 19000,
      st: { a: -7, gone: 'x' },
      tags: [1, null, -2147483648],
      m: new Map([['k', 1.25]]),
      dropped: 'd',
    },
    {
      id: -2147483648,
      name: null,
      score: null,
      price: null,
      day: null,
      st: null,
      tags: null,
      m: null,
      dropped: null,
    },
  ];
  const current: Schema = {
    schemaId: 2,
    fields: [
      field(3, 'score', T.double), // promoted, moved first
      field(1, 'id', T.long, true), // promoted
      field(2, 'full_name', T.string), // renamed
      field(4, 'price', decimal(12, 2)), // widened
      field(5, 'day', T.timestamp), // v3: date → timestamp
      field(6, 'st', struct([field(15, 'added', T.boolean), field(7, 'a', T.long)])),
      field(9, 'tags', list(10, T.long)),
      field(11, 'm', map(12, T.string, 13, T.double)),
      field(16, 'note', T.string), // added later
      { ...field(17, 'version', T.int), initialDefault: 1 }, // v3 default
    ],
  };
  const bytes = writeDataFile(old, oldRows).bytes;

  it('reads an older file with the current schema: promotions, rename, added, dropped, reordered', () => {
    expect(readDataFile(bytes, current)).toEqual([
      {
        score: 0.5,
        id: 1n,
        full_name: 'one',
        price: -12345n,
        day: 19000n * 86_400_000_000n,
        st: { added: null, a: -7n },
        tags: [1n, null, -2147483648n],
        m: new Map([['k', 1.25]]),
        note: null,
        version: 1,
      },
      {
        score: null,
        id: -2147483648n,
        full_name: null,
        price: null,
        day: null,
        st: null,
        tags: null,
        m: null,
        note: null,
        version: 1,
      },
    ]);
  });

  it('promotes date to timestamp_ns in nanoseconds', () => {
    const s: Schema = { schemaId: 3, fields: [field(5, 'day', T.timestamp_ns)] };
    expect(readDataFile(bytes, s).map((r) => r.day)).toEqual([19000n * 86_400_000_000_000n, null]);
  });

  it('fills a missing column from constants; a column the file has wins over a constant', () => {
    const s: Schema = { schemaId: 3, fields: [field(2, 'name', T.string), field(20, 'region', T.string)] };
    const constants = new Map<number, IcebergValue>([
      [20, 'eu'],
      [2, 'ignored'],
    ]);
    expect(readDataFile(bytes, s, { constants })).toEqual([
      { name: 'one', region: 'eu' },
      { name: null, region: 'eu' },
    ]);
    expect(readDataFile(bytes, s).map((r) => r.region)).toEqual([null, null]);
  });

  it('applies a struct initial-default of {} through its fields’ own defaults', () => {
    const s: Schema = {
      schemaId: 3,
      fields: [
        {
          ...field(30, 'meta', struct([{ ...field(31, 'v', T.long), initialDefault: 7 }])),
          initialDefault: {},
        },
      ],
    };
    expect(readDataFile(bytes, s)).toEqual([{ meta: { v: 7n } }, { meta: { v: 7n } }]);
  });

  it('refuses a required field the file lacks (no constant, no default), naming file and field', () => {
    const s: Schema = {
      schemaId: 3,
      fields: [field(1, 'id', T.long, true), field(18, 'must', T.string, true)],
    };
    expectFloeError(
      () => readDataFile(bytes, s, { filePath: 's3://b/t/data/f.parquet' }),
      ErrorKind.SchemaIncompatible,
      's3://b/t/data/f.parquet',
      'must',
      'id 18',
    );
    expect(readDataFile(bytes, s, { constants: new Map([[18, 'c']]) }).map((r) => r.must)).toEqual([
      'c',
      'c',
    ]);
  });

  const longIdFile = writeDataFile(
    { ...old, fields: old.fields.map((x) => (x.id === 1 ? field(1, 'id', T.long, true) : x)) },
    oldRows.map((r) => ({ ...r, id: BigInt(r.id as number) })),
  ).bytes;

  it.each<[string, NestedField]>([
    ['long as int (narrowing)', field(1, 'id', T.int, true)],
    ['decimal scale change', field(4, 'price', decimal(12, 3))],
    ['decimal narrowing', field(4, 'price', decimal(8, 2))],
    ['date as timestamptz', field(5, 'day', T.timestamptz)],
    ['string as binary', field(2, 'name', T.binary)],
    ['float as int', field(3, 'score', T.int)],
    ['struct as string', field(6, 'st', T.string)],
    ['string as struct', field(2, 'name', struct([field(40, 'x', T.string)]))],
    ['list as map', field(9, 'tags', map(10, T.int, 41, T.int))],
    ['a list element with another id', field(9, 'tags', list(42, T.int))],
  ])('refuses %s with SchemaIncompatible naming the column', (_, f) => {
    expectFloeError(
      () => readDataFile(longIdFile, { schemaId: 9, fields: [f] }, { filePath: 'x.parquet' }),
      ErrorKind.SchemaIncompatible,
      'x.parquet',
      `(id ${f.id})`,
    );
  });

  it('refuses a TIMESTAMP(NANOS) column read as timestamp (µs) instead of truncating it', () => {
    const s: Schema = { schemaId: 0, fields: [field(1, 'ts', T.timestamp_ns)] };
    const file = writeDataFile(s, [{ ts: 1_000_000_001n }]).bytes;
    expectFloeError(
      () => readDataFile(file, { schemaId: 1, fields: [field(1, 'ts', T.timestamp)] }),
      ErrorKind.SchemaIncompatible,
      'Timestamp',
    );
    expect(readDataFile(file, { schemaId: 1, fields: [field(1, 'ts', T.timestamptz_ns)] })).toEqual([
      { ts: 1_000_000_001n },
    ]);
  });

  it('reads an un-annotated BINARY column as string only when it is valid UTF-8', () => {
    const raw: Schema = { schemaId: 0, fields: [field(1, 'b', T.binary)] };
    const asString: Schema = { schemaId: 1, fields: [field(1, 'b', T.string)] };
    const ok = writeDataFile(raw, [{ b: new TextEncoder().encode('héllo') }, { b: null }]).bytes;
    expect(readDataFile(ok, asString)).toEqual([{ b: 'héllo' }, { b: null }]);
    const bad = writeDataFile(raw, [{ b: Uint8Array.of(0x68, 0xff) }]).bytes;
    expectFloeError(
      () => readDataFile(bad, asString, { filePath: 'h.parquet' }),
      ErrorKind.DataInvalid,
      'h.parquet',
      'UTF-8',
    );
  });

  it('refuses bytes that are not Parquet with DataInvalid naming the file', () => {
    expectFloeError(
      () => readDataFile(Uint8Array.of(1, 2, 3, 4), current, { filePath: 's3://b/not.parquet' }),
      ErrorKind.DataInvalid,
      's3://b/not.parquet',
    );
  });
});

// ---------------------------------------------------------------------------------------------

describe('readDataFile: files written by DuckDB', () => {
  const schema: Schema = {
    schemaId: 0,
    fields: [
      field(1, 'i', T.int),
      field(2, 'l', T.long),
      field(3, 'f', T.float),
      field(4, 'd', T.double),
      field(5, 'dec9', decimal(9, 2)),
      field(6, 'dec18', decimal(18, 4)),
      field(7, 'dec38', decimal(38, 10)),
      field(8, 'day', T.date),
      field(9, 't', T.time),
      field(10, 'ts', T.timestamp),
      field(11, 'tstz', T.timestamptz),
      field(12, 'tsn', T.timestamp_ns),
      field(13, 'ms', T.timestamp), // DuckDB writes TIMESTAMP_MS as TIMESTAMP(MILLIS)
      field(14, 's', T.string),
      field(15, 'u', T.uuid),
      field(16, 'bin', T.binary),
      field(17, 'b', T.boolean),
      field(18, 'st', struct([field(19, 'x', T.int), field(20, 'y', T.string)])),
      field(21, 'xs', list(22, struct([field(23, 'p', T.double)]))),
      field(24, 'mp', map(25, T.string, 26, T.long)),
    ],
  };
  const select = `
    SELECT i::INTEGER AS i, l::BIGINT AS l, f::FLOAT AS f, d::DOUBLE AS d, dec9::DECIMAL(9,2) AS dec9,
      dec18::DECIMAL(18,4) AS dec18, dec38::DECIMAL(38,10) AS dec38, day::DATE AS day, t::TIME AS t,
      ts::TIMESTAMP AS ts, tstz::TIMESTAMPTZ AS tstz, tsn::TIMESTAMP_NS AS tsn, ms::TIMESTAMP_MS AS ms, s,
      u::UUID AS u, bin::BLOB AS bin, b::BOOLEAN AS b, st::STRUCT(x INTEGER, y VARCHAR) AS st,
      xs::STRUCT(p DOUBLE)[] AS xs, mp::MAP(VARCHAR, BIGINT) AS mp
    FROM (VALUES
      ('1', '9223372036854775807', '1.5', '0.1', '1234567.89', '-99999999999999.9999',
       '-9999999999999999999999999999.9999999999', '2024-02-29', '23:59:59.999999', '2024-01-02 03:04:05.123456',
       '1969-12-31 23:59:59.999999+00', '2024-01-02 03:04:05.123456789', '1960-01-01 00:00:00.001', 'ünïcode ☃',
       '0190e5a4-8d5c-7b3a-9f00-aabbccddeeff', '\\x00\\xFF', 'true', {'x': 1, 'y': NULL}, [{'p': 1.0}, NULL],
       MAP {'a': 1, 'b': NULL}),
      (NULL, '-9223372036854775808', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, [], MAP {}),
      ('-2147483648', '0', '-0.0', 'NaN', '-0.01', '0', '0', '1970-01-01', '00:00:00', '1970-01-01',
       '2262-04-11 00:00:00+00', '1970-01-01', '2000-01-01', '', '00000000-0000-0000-0000-000000000000', '', 'false',
       {'x': NULL, 'y': 'q'}, NULL, NULL)
    ) v(i, l, f, d, dec9, dec18, dec38, day, t, ts, tstz, tsn, ms, s, u, bin, b, st, xs, mp)`;
  const ids = `FIELD_IDS {i: 1, l: 2, f: 3, d: 4, dec9: 5, dec18: 6, dec38: 7, day: 8, t: 9, ts: 10, tstz: 11, tsn: 12,
    ms: 13, s: 14, u: 15, bin: 16, b: 17, st: {__duckdb_field_id: 18, x: 19, y: 20},
    xs: {__duckdb_field_id: 21, element: {__duckdb_field_id: 22, p: 23}}, mp: {__duckdb_field_id: 24, key: 25, value: 26}}`;
  let path: string;
  let rows: Row[];

  beforeAll(async () => {
    path = duck.file(new Uint8Array());
    await duck.rows(`COPY (${select}) TO '${path}' (FORMAT parquet, ${ids})`);
    rows = readDataFile(new Uint8Array(readFileSync(path)), schema, { filePath: path });
  });

  it('reads every value as DuckDB reads it by field id', async () => {
    const duckRows = await duck.rows(duckCanonicalSql(path, schema.fields));
    expect(rows.map((r) => canonicalRow(r, schema.fields))).toEqual(
      duckRows.map((r) => fromDuckJson(String(r.j), schema.fields)),
    );
  });

  it('gets the exact values (bigints, decimals, µs, uuid, millis scaled to µs, -0, NaN)', () => {
    const [a, b, c] = rows as [Row, Row, Row];
    expect(a.l).toBe(LONG_MAX);
    expect(b.l).toBe(LONG_MIN);
    expect(a.dec38).toBe(-99999999999999999999999999999999999999n);
    expect(a.dec9).toBe(123456789n);
    expect(a.ts).toBe(1_704_164_645_123_456n);
    expect(a.tstz).toBe(-1n);
    expect(a.tsn).toBe(1_704_164_645_123_456_789n);
    expect(a.ms).toBe(-315_619_199_999_000n);
    expect(a.t).toBe(86_399_999_999n);
    expect(a.day).toBe(19782);
    expect(a.u).toBe('0190e5a4-8d5c-7b3a-9f00-aabbccddeeff');
    expect(a.bin).toEqual(Uint8Array.of(0, 255));
    expect(a.st).toEqual({ x: 1, y: null });
    expect(a.xs).toEqual([{ p: 1 }, null]);
    expect(a.mp).toEqual(
      new Map<IcebergValue, IcebergValue>([
        ['a', 1n],
        ['b', null],
      ]),
    );
    expect(b.xs).toEqual([]);
    expect(c.xs).toBeNull();
    expect(Object.is(c.f, -0)).toBe(true);
    expect(c.d).toBeNaN();
    expect(c.bin).toEqual(new Uint8Array(0));
  });
});

// ---------------------------------------------------------------------------------------------

describe('readDataFile: Arrow encodings a writer’s ARROW:schema asks for', () => {
  it('decodes dictionary and large strings, date64, unsigned and small integers', () => {
    const id = (n: number) => new Map([['PARQUET:field_id', String(n)]]);
    const columns = {
      d: arrow.vectorFromArray(
        ['a', null, 'b', 'a', 'héllo'],
        new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()),
      ),
      l: arrow.vectorFromArray(['x', null, 'yé', '', 'z'], new arrow.LargeUtf8()),
      dt: arrow.vectorFromArray([0, -86_400_000, null, 3 * 86_400_000, 1], new arrow.DateMillisecond()),
      u: arrow.vectorFromArray([0, 4294967295, null, 1, 2], new arrow.Uint32()),
      s: arrow.vectorFromArray([0, -32768, null, 1, 2], new arrow.Int16()),
    };
    const names = Object.keys(columns) as (keyof typeof columns)[];
    const table = new arrow.Table(
      new arrow.Schema(names.map((n, i) => new arrow.Field(n, columns[n].type, true, id(i + 1)))),
      columns,
    );
    // Written by parquet-wasm directly, which keeps the Arrow schema in the footer (Floe's writer drops it).
    const bytes = pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')));
    const schema: Schema = {
      schemaId: 0,
      fields: [
        field(1, 'd', T.string),
        field(2, 'l', T.string),
        field(3, 'dt', T.date),
        field(4, 'u', T.long),
        field(5, 's', T.int),
      ],
    };
    expect(readDataFile(bytes, schema)).toEqual([
      { d: 'a', l: 'x', dt: 0, u: 0n, s: 0 },
      { d: null, l: null, dt: -1, u: 4294967295n, s: -32768 },
      { d: 'b', l: 'yé', dt: null, u: null, s: null },
      { d: 'a', l: '', dt: 3, u: 1n, s: 1 },
      { d: 'héllo', l: 'z', dt: 0, u: 2n, s: 2 },
    ]);
    expectFloeError(
      () => readDataFile(bytes, { schemaId: 0, fields: [field(4, 'u', T.int)] }),
      ErrorKind.SchemaIncompatible,
      'Uint32',
    );
  });
});

// ---------------------------------------------------------------------------------------------

describe('readDataFile: files without field ids (name mapping)', () => {
  const schema: Schema = {
    schemaId: 0,
    fields: [
      field(1, 'id', T.int),
      field(2, 'name', T.string),
      field(3, 's', struct([field(4, 'a', T.int), field(5, 'b', T.string)])),
      field(6, 'l', list(7, T.int)),
      field(8, 'm', map(9, T.string, 10, T.int)),
    ],
  };
  const mappingJson = JSON.stringify([
    { 'field-id': 1, names: ['id'] },
    { 'field-id': 2, names: ['name', 'Old Name'] },
    {
      'field-id': 3,
      names: ['s'],
      fields: [
        { 'field-id': 4, names: ['a'] },
        { 'field-id': 5, names: ['b'] },
      ],
    },
    { 'field-id': 6, names: ['l'], fields: [{ 'field-id': 7, names: ['element'] }] },
    {
      'field-id': 8,
      names: ['m'],
      fields: [
        { 'field-id': 9, names: ['key'] },
        { 'field-id': 10, names: ['value'] },
      ],
    },
  ]);
  let bytes: Uint8Array;

  beforeAll(async () => {
    const path = duck.file(new Uint8Array());
    await duck.rows(`COPY (
      SELECT 1::INTEGER AS id, 'x' AS "Old Name", {'a': 2, 'b': 'y'} AS s, [1, NULL]::INTEGER[] AS l, MAP {'k': 3} AS m
      UNION ALL SELECT NULL, NULL, NULL, [], NULL
    ) TO '${path}' (FORMAT parquet)`);
    bytes = new Uint8Array(readFileSync(path));
  });

  it('reads columns as null without a mapping (spec)', () => {
    expect(readDataFile(bytes, schema)).toEqual([
      { id: null, name: null, s: null, l: null, m: null },
      { id: null, name: null, s: null, l: null, m: null },
    ]);
  });

  it('maps names to ids, any of an entry’s names, recursively (struct fields, element, key, value)', () => {
    expect(readDataFile(bytes, schema, { nameMapping: parseNameMapping(mappingJson) })).toEqual([
      { id: 1, name: 'x', s: { a: 2, b: 'y' }, l: [1, null], m: new Map([['k', 3]]) },
      { id: null, name: null, s: null, l: [], m: null },
    ]);
  });

  it('leaves a name the mapping does not list unread', () => {
    const partial = parseNameMapping([
      { 'field-id': 3, names: ['s'], fields: [{ 'field-id': 4, names: ['a'] }] },
      { 'field-id': 1, names: ['id'] },
    ]);
    const [first] = readDataFile(bytes, schema, { nameMapping: partial });
    expect(first).toEqual({ id: 1, name: null, s: { a: 2, b: null }, l: null, m: null });
  });

  it('ignores the mapping for files that have field ids', () => {
    const s: Schema = { schemaId: 0, fields: [field(1, 'id', T.int), field(2, 'name', T.string)] };
    const withIds = writeDataFile(s, [{ id: 5, name: 'n' }]).bytes;
    const swapped = parseNameMapping([
      { 'field-id': 2, names: ['id'] },
      { 'field-id': 1, names: ['name'] },
    ]);
    expect(readDataFile(withIds, s, { nameMapping: swapped })).toEqual([{ id: 5, name: 'n' }]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('readDataFile: legacy INT96 timestamps', () => {
  const nanos = [1_700_000_000_123_456_789n, -1n, 0n, -86_400_000_000_001_500n];
  const bytes = int96ParquetFile('ts', nanos, 7);

  it('reads INT96 as µs (floor, as Java and DuckDB do) and as ns exactly', async () => {
    const us: Schema = { schemaId: 0, fields: [field(7, 'ts', T.timestamptz)] };
    const rows = readDataFile(bytes, us);
    expect(rows.map((r) => r.ts)).toEqual([1_700_000_000_123_456n, -1n, 0n, -86_400_000_000_002n]);
    const duckRows = await duck.rows(duckCanonicalSql(duck.file(bytes), us.fields));
    expect(rows.map((r) => canonicalRow(r, us.fields))).toEqual(
      duckRows.map((r) => fromDuckJson(String(r.j), us.fields)),
    );
    const ns: Schema = { schemaId: 0, fields: [field(7, 'ts', T.timestamp_ns)] };
    expect(readDataFile(bytes, ns).map((r) => r.ts)).toEqual(nanos);
  });
});

// ---------------------------------------------------------------------------------------------

describe('readPositionDeletes / readEqualityDeletes', () => {
  const posSchema: Schema = {
    schemaId: 0,
    fields: [
      field(POSITION_DELETE_FILE_PATH_ID, 'file_path', T.string, true),
      field(POSITION_DELETE_POS_ID, 'pos', T.long, true),
    ],
  };

  it('reads (file_path, pos) pairs in file order', () => {
    const rows = [
      { file_path: 's3://b/t/data/a.parquet', pos: 0n },
      { file_path: 's3://b/t/data/a.parquet', pos: LONG_MAX },
      { file_path: 's3://b/t/data/b.parquet', pos: 3n },
    ];
    expect(readPositionDeletes(writeDataFile(posSchema, rows).bytes)).toEqual([
      { filePath: 's3://b/t/data/a.parquet', pos: 0n },
      { filePath: 's3://b/t/data/a.parquet', pos: LONG_MAX },
      { filePath: 's3://b/t/data/b.parquet', pos: 3n },
    ]);
  });

  it('refuses a file without the position delete columns', () => {
    const data = writeDataFile({ schemaId: 0, fields: [field(1, 'x', T.long)] }, [{ x: 1n }]).bytes;
    expectFloeError(
      () => readPositionDeletes(data, { filePath: 'd.parquet' }),
      ErrorKind.DataInvalid,
      'd.parquet',
      String(POSITION_DELETE_FILE_PATH_ID),
    );
  });

  const deleteSchema: Schema = {
    schemaId: 1,
    fields: [
      field(1, 'id', T.int),
      field(2, 'name', T.string),
      field(3, 'st', struct([field(4, 'k', T.string)])),
    ],
  };
  const tableSchema: Schema = {
    schemaId: 2,
    fields: [
      field(1, 'id', T.long),
      field(5, 'added', T.string),
      field(2, 'renamed', T.string),
      field(3, 'st', struct([field(4, 'k', T.string), field(6, 'z', T.int)])),
      field(7, 'xs', list(8, T.int)),
    ],
  };
  const eqFile = writeDataFile(deleteSchema, [
    { id: 1, name: 'a', st: { k: 'p' } },
    { id: null, name: 'b', st: null },
  ]).bytes;

  it('reads only the equality columns, by id, with the table schema (promoted, renamed, nested)', () => {
    expect(readEqualityDeletes(eqFile, tableSchema, [1])).toEqual([{ id: 1n }, { id: null }]);
    expect(readEqualityDeletes(eqFile, tableSchema, [2, 4])).toEqual([
      { renamed: 'a', st: { k: 'p' } },
      { renamed: 'b', st: null },
    ]);
  });

  it('refuses an equality id the file lacks, or one that is not a primitive outside collections', () => {
    expectFloeError(
      () => readEqualityDeletes(eqFile, tableSchema, [5], { filePath: 'eq.parquet' }),
      ErrorKind.DataInvalid,
      'eq.parquet',
      'equality field id 5',
    );
    expectFloeError(() => readEqualityDeletes(eqFile, tableSchema, [99]), ErrorKind.SchemaIncompatible, '99');
    expectFloeError(
      () => readEqualityDeletes(eqFile, tableSchema, [8]),
      ErrorKind.SchemaIncompatible,
      'list or map',
    );
    expectFloeError(
      () => readEqualityDeletes(eqFile, tableSchema, [3]),
      ErrorKind.SchemaIncompatible,
      'primitive',
    );
  });
});
