import fc from 'fast-check';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import {
  decimal,
  field,
  fixed,
  list,
  map,
  type NestedField,
  type PrimitiveType,
  struct,
  T,
} from '../../../lambdas/src/iceberg/types.ts';
import type { IcebergValue, Row } from '../../../lambdas/src/iceberg/values.ts';
import {
  type ColumnarBatch,
  type ColumnarLeaf,
  type ColumnValues,
  type DataFileResult,
  type ParquetCompression,
  supportsColumnar,
  writeColumnarDataFile,
  writeDataFile,
  writesNatively,
} from '../../../lambdas/src/parquet/index.ts';
import { type Duck, openDuck } from './duck.ts';

// ---- a schema with every primitive a columnar batch can carry, nested structs, required columns ----

const schema: Schema = {
  schemaId: 1,
  fields: [
    field(1, 'b', T.boolean),
    field(2, 'i', T.int, true),
    field(3, 'l', T.long),
    field(4, 'f', T.float),
    field(5, 'd', T.double),
    field(6, 'dec9', decimal(9, 2)),
    field(7, 'dec38', decimal(38, 10)),
    field(8, 'day', T.date),
    field(9, 't', T.time),
    field(10, 'ts', T.timestamp),
    field(11, 'tstz', T.timestamptz),
    field(12, 'tsn', T.timestamp_ns),
    field(13, 'tstzn', T.timestamptz_ns),
    field(14, 's', T.string),
    field(15, 'sreq', T.string, true),
    field(16, 'u', T.uuid),
    field(17, 'fx', fixed(4)),
    field(18, 'bin', T.binary),
    field(
      19,
      'st',
      struct([
        field(20, 'a', T.int, true),
        field(21, 'b', T.string),
        field(22, 'inner', struct([field(23, 'z', T.long), field(24, 'w', T.double, true)])),
        field(25, 'g', T.boolean),
        field(33, 'c', T.string, true),
      ]),
    ),
    field(26, 'unk', T.unknown),
    field(
      27,
      'rs',
      struct([
        field(28, 'x', T.string, true),
        field(29, 'y', T.timestamptz),
        field(30, 'deep', struct([field(31, 'q', T.date), field(32, 'r', T.float, true)]), true),
      ]),
      true,
    ),
  ],
};

const DUCK_TYPES: Record<number, string> = {
  1: 'BOOLEAN',
  2: 'INTEGER',
  3: 'BIGINT',
  4: 'FLOAT',
  5: 'DOUBLE',
  6: 'DECIMAL(9,2)',
  7: 'DECIMAL(38,10)',
  8: 'DATE',
  9: 'TIME',
  10: 'TIMESTAMP',
  11: 'TIMESTAMPTZ',
  12: 'TIMESTAMP_NS',
  13: 'TIMESTAMP_NS',
  14: 'VARCHAR',
  15: 'VARCHAR',
  16: 'UUID',
  17: 'BLOB',
  18: 'BLOB',
  19: 'STRUCT(a INTEGER, b VARCHAR, "inner" STRUCT(z BIGINT, w DOUBLE), g BOOLEAN, c VARCHAR)',
  27: 'STRUCT(x VARCHAR, y TIMESTAMPTZ, deep STRUCT(q DATE, r FLOAT))',
};

/** `read_parquet` resolving columns by field id only (every column renamed `c<id>`), all as text. */
function byFieldId(path: string, ids: readonly string[] = Object.keys(DUCK_TYPES)): string {
  const entries = ids.map(
    (id) => `${id}: {name: 'c${id}', type: '${DUCK_TYPES[Number(id)]}', default_value: NULL}`,
  );
  return `read_parquet('${path}', schema = map {${entries.join(', ')}})`;
}
const selectAll = (ids: readonly string[]) =>
  ids.map((id) => `to_json(c${id})::VARCHAR AS c${id}`).join(', ');
const SELECT_ALL = selectAll(Object.keys(DUCK_TYPES));

// ---- leaves of the schema, with how to generate their values ----

interface LeafSpec {
  readonly id: number;
  /** Names from the root. */
  readonly path: readonly string[];
  readonly type: PrimitiveType;
  readonly required: boolean;
  /** Ids of the struct fields above it, outermost first. */
  readonly structs: readonly number[];
}
interface StructSpec {
  readonly id: number;
  readonly required: boolean;
}

function specs(s: Schema): { leaves: LeafSpec[]; structs: StructSpec[] } {
  const leaves: LeafSpec[] = [];
  const structs: StructSpec[] = [];
  const visit = (f: NestedField, path: string[], above: number[]): void => {
    if (f.type.kind === 'struct') {
      structs.push({ id: f.id, required: f.required });
      for (const c of f.type.fields) visit(c, [...path, c.name], [...above, f.id]);
    } else if (f.type.kind !== 'list' && f.type.kind !== 'map' && f.type.kind !== 'unknown') {
      leaves.push({ id: f.id, path, type: f.type, required: f.required, structs: above });
    }
  };
  for (const f of s.fields) visit(f, [f.name], []);
  return { leaves, structs };
}
const { leaves: LEAVES, structs: STRUCTS } = specs(schema);

/** A schema and its leaves, for the generators: `schema` itself, or the native writer's part of it. */
interface Shape {
  readonly schema: Schema;
  readonly leaves: readonly LeafSpec[];
  readonly structs: readonly StructSpec[];
  /** Leaves are never handed over as `any` (the native writer takes typed values only). */
  readonly typedOnly: boolean;
}
const FULL: Shape = { schema, leaves: LEAVES, structs: STRUCTS, typedOnly: false };
/** Every type the native writer (parquet/file-writer.ts) writes: `schema` less decimals, uuid, fixed, binary. */
const nativeSchema: Schema = {
  schemaId: 1,
  fields: schema.fields.filter((f) => ![6, 7, 16, 17, 18].includes(f.id)),
};
const NATIVE: Shape = { schema: nativeSchema, ...specs(nativeSchema), typedOnly: true };
const NATIVE_IDS = Object.keys(DUCK_TYPES).filter((id) => ![6, 7, 16, 17, 18].includes(Number(id)));

const int64 = fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n });
const text = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', 'a', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaa', '\u{10ffff}', '\u{1f600}x', 'é', '\uffff'),
);
const bytes = fc.uint8Array({ maxLength: 20 });

function valueArb(t: PrimitiveType): fc.Arbitrary<IcebergValue> {
  switch (t.kind) {
    case 'boolean':
      return fc.boolean();
    case 'int':
      return fc.oneof(fc.integer(), fc.constantFrom(-(2 ** 31), 2 ** 31 - 1, 0));
    case 'date':
      return fc.integer({ min: -1_000_000, max: 1_000_000 });
    case 'timestamp_ns':
    case 'timestamptz_ns':
      // DuckDB reads ±(2^63 - 1) as ±infinity and cannot print them.
      return fc.bigInt({ min: -(1n << 62n), max: 1n << 62n });
    case 'long':
      return fc.oneof(
        int64,
        fc.bigInt({ min: -5n, max: 5n }),
        fc.constantFrom(-(1n << 63n), (1n << 63n) - 1n),
      );
    case 'time':
      return fc.bigInt({ min: 0n, max: 86_400_000_000n - 1n });
    case 'timestamp':
    case 'timestamptz':
      return fc.bigInt({ min: -62_135_596_800_000_000n, max: 253_402_300_799_999_999n });
    case 'float':
      return fc.float();
    case 'double':
      return fc.oneof(fc.double(), fc.constantFrom(0, -0, Number.NaN));
    case 'decimal': {
      const lim = 10n ** BigInt(t.precision) - 1n;
      return fc.bigInt({ min: -lim, max: lim });
    }
    case 'string':
      return text;
    case 'uuid':
      return fc.uuid();
    case 'fixed':
      return fc.uint8Array({ minLength: t.length, maxLength: t.length });
    case 'binary':
      return bytes;
    default:
      throw new Error(`no generator for ${t.kind}`);
  }
}

/** How a leaf is handed to the columnar writer. */
type Encoding = 'typed' | 'any' | 'absent';
/**
 * How nulls of a utf8/any leaf are given: validity bytes with junk values under them, validity
 * bytes with undefined under every null (also under null structs), or only null/undefined values.
 * Typed leaves always use validity bytes.
 */
type NullStyle = 'valid' | 'valid-blank' | 'inline';

interface LeafData {
  readonly spec: LeafSpec;
  /** The row values, null where null (ignoring null structs). */
  readonly values: IcebergValue[];
  readonly encoding: Encoding;
  readonly nullStyle: NullStyle;
}
interface Case {
  readonly n: number;
  readonly leaves: LeafData[];
  /** Struct id → validity (only optional structs; absent = never null). */
  readonly structValid: Map<number, Uint8Array>;
  /** Seed for the junk written under nulls and beyond `n`. */
  readonly seed: number;
  /** Put all typed arrays into one shared ArrayBuffer. */
  readonly slab: boolean;
  /** Extra (junk) entries after the n rows in typed arrays. */
  readonly capacity: number;
  /** Drop the key of null top-level values in the rows (instead of `null`). */
  readonly omitNullKeys: boolean;
}

function caseArb(maxRows: number, shape: Shape = FULL): fc.Arbitrary<Case> {
  return fc.integer({ min: 0, max: maxRows }).chain((n) => {
    const leafArbs = shape.leaves.map((spec) =>
      fc
        .record({
          encoding: fc.constantFrom<Encoding>(
            'typed',
            'typed',
            ...(shape.typedOnly ? [] : ['any' as const]),
            ...(spec.required ? [] : ['absent' as const]),
          ),
          nullStyle: fc.constantFrom<NullStyle>('valid', 'valid-blank', 'inline'),
          nullRate: spec.required ? fc.constant(0) : fc.constantFrom(0, 0.1, 0.5, 1),
          values: fc.array(valueArb(spec.type), { minLength: n, maxLength: n }),
          // Values drawn again and again from a few (a dictionary column), or not.
          pool: fc.constantFrom(0, 0, 1, 3, 40),
          coins: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: n, maxLength: n }),
        })
        .map(
          ({ encoding, nullStyle, nullRate, values, pool, coins }): LeafData => ({
            spec,
            encoding,
            nullStyle,
            values:
              encoding === 'absent'
                ? values.map(() => null)
                : values.map((v, i) =>
                    coins[i]! < nullRate
                      ? null
                      : pool === 0
                        ? v
                        : values[Math.floor(coins[i]! * 1e6) % Math.min(pool, values.length)]!,
                  ),
          }),
        ),
    );
    const structArbs = shape.structs.map((s) =>
      s.required
        ? fc.constant(undefined)
        : fc.option(fc.array(fc.constantFrom(0, 1, 1, 1, 7), { minLength: n, maxLength: n }), {
            nil: undefined,
          }),
    );
    return fc
      .record({
        n: fc.constant(n),
        leaves: fc.tuple(...leafArbs),
        structs: fc.tuple(...structArbs),
        seed: fc.integer(),
        slab: fc.boolean(),
        capacity: fc.constantFrom(0, 0, 3),
        omitNullKeys: fc.boolean(),
      })
      .map(({ leaves, structs, ...rest }) => {
        const structValid = new Map<number, Uint8Array>();
        shape.structs.forEach((s, j) => {
          const v = structs[j];
          if (v !== undefined) structValid.set(s.id, Uint8Array.from(v));
        });
        return { ...rest, leaves, structValid };
      });
  });
}

/** Small deterministic PRNG for junk values. */
function junk(seed: number): () => number {
  let x = seed | 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x;
  };
}

/** The rows `writeDataFile` gets for a case. */
function toRows(c: Case): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < c.n; i++) {
    const row: Row = {};
    const objects = new Map<number, Record<string, IcebergValue> | null>();
    const container = (spec: LeafSpec): Record<string, IcebergValue> | null => {
      let parent: Record<string, IcebergValue> = row;
      for (let k = 0; k < spec.structs.length; k++) {
        const id = spec.structs[k]!;
        let o = objects.get(id);
        if (o === undefined) {
          const v = c.structValid.get(id);
          o = v !== undefined && v[i] === 0 ? null : {};
          objects.set(id, o);
          parent[spec.path[k]!] = o;
        }
        if (o === null) return null;
        parent = o;
      }
      return parent;
    };
    for (const leaf of c.leaves) {
      const obj = container(leaf.spec);
      if (obj === null) continue;
      const v = leaf.values[i];
      if (v === null && c.omitNullKeys && obj === row) continue;
      obj[leaf.spec.path[leaf.spec.path.length - 1]!] = v ?? null;
    }
    rows.push(row);
  }
  return rows;
}

type TypedKind = 'int64' | 'int32' | 'float64' | 'float32' | 'bool' | 'utf8';
function typedKind(t: PrimitiveType): TypedKind | undefined {
  switch (t.kind) {
    case 'boolean':
      return 'bool';
    case 'int':
    case 'date':
      return 'int32';
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return 'int64';
    case 'float':
      return 'float32';
    case 'double':
      return 'float64';
    case 'string':
    case 'uuid':
      return 'utf8';
    default:
      return undefined;
  }
}

const WIDTH: Record<string, number> = { int64: 8, int32: 4, float64: 8, float32: 4, bool: 1 };

/** The columnar batch for a case: junk under every null (typed), validity bytes with junk non-zeros. */
function toBatch(c: Case): ColumnarBatch {
  const rnd = junk(c.seed);
  const len = c.n + c.capacity;
  // One slab for all typed arrays when asked (8-byte aligned views).
  let slab: ArrayBuffer | undefined;
  let slabAt = 0;
  if (c.slab) slab = new ArrayBuffer(c.leaves.length * (len * 8 + 8) + 64);
  const alloc = (kind: string): ArrayBuffer | [ArrayBuffer, number] => {
    const size = len * WIDTH[kind]!;
    if (!slab) return new ArrayBuffer(size);
    const at = slabAt;
    slabAt += Math.ceil(size / 8) * 8;
    return [slab, at];
  };
  const view = <A>(C: new (b: ArrayBuffer, o: number, l: number) => A, kind: string): A => {
    const b = alloc(kind);
    return Array.isArray(b) ? new C(b[0], b[1], len) : new C(b, 0, len);
  };
  const leaves = new Map<number, ColumnarLeaf>();
  for (const leaf of c.leaves) {
    if (leaf.encoding === 'absent') continue;
    const kind = leaf.encoding === 'any' ? undefined : typedKind(leaf.spec.type);
    const isNull = (i: number) => leaf.values[i] === null;
    const anyNull = leaf.values.some((v) => v === null);
    let valid: Uint8Array | undefined;
    const underNull = (i: number) => leaf.spec.structs.some((id) => c.structValid.get(id)?.[i] === 0);
    const blank = leaf.nullStyle === 'valid-blank';
    if (anyNull && (leaf.nullStyle !== 'inline' || (kind !== undefined && kind !== 'utf8'))) {
      valid = new Uint8Array(len);
      for (let i = 0; i < len; i++) valid[i] = i < c.n && isNull(i) ? 0 : (rnd() & 0xfe) | 1;
    }
    let values: ColumnValues;
    switch (kind) {
      case 'int64': {
        const a = view(BigInt64Array, kind);
        for (let i = 0; i < len; i++)
          a[i] = i < c.n && !isNull(i) ? (leaf.values[i] as bigint) : BigInt(rnd());
        values = { kind, values: a };
        break;
      }
      case 'int32': {
        const a = view(Int32Array, kind);
        for (let i = 0; i < len; i++) a[i] = i < c.n && !isNull(i) ? (leaf.values[i] as number) : rnd();
        values = { kind, values: a };
        break;
      }
      case 'float64':
      case 'float32': {
        const a = kind === 'float64' ? view(Float64Array, kind) : view(Float32Array, kind);
        for (let i = 0; i < len; i++) a[i] = i < c.n && !isNull(i) ? (leaf.values[i] as number) : rnd() / 7;
        values =
          kind === 'float64' ? { kind, values: a as Float64Array } : { kind, values: a as Float32Array };
        break;
      }
      case 'bool': {
        const a = view(Uint8Array, kind);
        for (let i = 0; i < len; i++)
          a[i] = i < c.n && !isNull(i) ? (leaf.values[i] ? 1 + (rnd() & 1) : 0) : rnd();
        values = { kind, values: a };
        break;
      }
      case 'utf8': {
        const a: (string | undefined)[] = [];
        for (let i = 0; i < c.n; i++) {
          const v = leaf.values[i];
          a.push(
            blank && underNull(i)
              ? undefined
              : typeof v === 'string'
                ? v
                : valid && !blank
                  ? `junk${rnd()}`
                  : undefined,
          );
        }
        for (let i = c.n; i < len; i++) a.push(`junk${rnd()}`);
        values = { kind, values: a };
        break;
      }
      default: {
        const a: IcebergValue[] = [];
        for (let i = 0; i < c.n; i++) {
          const v = leaf.values[i];
          // Junk under a validity null is never read; without one, null is the value.
          a.push(
            blank && underNull(i)
              ? undefined
              : v !== null
                ? v
                : valid && !blank
                  ? (rnd() as unknown as IcebergValue)
                  : null,
          );
        }
        for (let i = c.n; i < len; i++) a.push(rnd());
        values = { kind: 'any', values: a };
      }
    }
    leaves.set(leaf.spec.id, valid ? { values, valid } : { values });
  }
  return { rowCount: c.n, leaves, structValid: c.structValid };
}

function both(c: Case, opts = {}, s: Schema = schema): { rows: DataFileResult; cols: DataFileResult } {
  return {
    rows: writeDataFile(s, toRows(c), opts),
    cols: writeColumnarDataFile(s, toBatch(c), opts),
  };
}

/** Metrics of two writers of one file, which differ only where bytes are laid out differently. */
function layoutFree(m: DataFileResult['metrics']) {
  const { columnSizes, splitOffsets, ...rest } = m;
  return { ...rest, columns: [...columnSizes.keys()].sort(), rowGroups: splitOffsets.length };
}

/** hyparquet's rows of a file (another reader than DuckDB), timestamps and longs as text. */
async function hyparquetRows(bytes: Uint8Array): Promise<unknown[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = await parquetReadObjects({ file, compressors });
  return JSON.parse(
    JSON.stringify(rows, (_k, v) =>
      typeof v === 'bigint' ? `${v}n` : v instanceof Date ? `d${v.getTime()}` : Number.isNaN(v) ? 'NaN' : v,
    ),
  );
}

/** Each column chunk's statistics (row group, column, values, nulls, min / max) as DuckDB reads them. */
async function chunkStatistics(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  return duck.rows(
    `SELECT row_group_id, path_in_schema, num_values, stats_null_count, stats_min_value, stats_max_value
       FROM parquet_metadata('${duck.file(bytes)}') ORDER BY row_group_id, column_id`,
  );
}

/** Strings as a `utf8-bytes` column (their UTF-8 back to back, with offsets). */
function utf8Bytes(parts: readonly string[]): ColumnValues {
  const offsets = new Int32Array(parts.length + 1);
  parts.forEach((p, i) => {
    offsets[i + 1] = offsets[i]! + Buffer.byteLength(p);
  });
  return { kind: 'utf8-bytes', data: Buffer.from(parts.join('')), offsets };
}

/** Parquet's schema elements as DuckDB reads them. */
async function parquetSchemaOf(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  return duck.rows(
    `SELECT name, type, repetition_type, num_children, converted_type, field_id, logical_type
       FROM parquet_schema('${duck.file(bytes)}')`,
  );
}

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());

describe('writeColumnarDataFile: equivalent to writeDataFile', () => {
  it('writes the same file and metrics on randomized batches', () => {
    fc.assert(
      fc.property(caseArb(40), (c) => {
        const { rows, cols } = both(c);
        expect(cols.recordCount).toBe(rows.recordCount);
        expect(cols.metrics).toEqual(rows.metrics);
        expect(Buffer.from(cols.bytes).equals(Buffer.from(rows.bytes))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('reads back the same by field id in DuckDB, also with small row groups and short bounds', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb(300), fc.integer({ min: 1, max: 120 }), async (c, rowGroupRows) => {
        const opts = { rowGroupRows, metricsTruncateLength: 3 };
        const { rows, cols } = both(c, opts);
        expect(cols.metrics).toEqual(rows.metrics);
        const q = (bytes: Uint8Array) =>
          duck.rows(`SELECT ${SELECT_ALL} FROM ${byFieldId(duck.file(bytes))}`);
        const [fromRows, fromCols] = await Promise.all([q(rows.bytes), q(cols.bytes)]);
        expect(fromCols).toHaveLength(c.n);
        expect(fromCols).toEqual(fromRows);
      }),
      { numRuns: 25 },
    );
  }, 30_000);

  it('dictionary-encodes the top-level string columns it is told to, and reads back the same', async () => {
    const strings = LEAVES.filter((l) => l.type.kind === 'string').map((l) => l.id);
    await fc.assert(
      fc.asyncProperty(caseArb(200), fc.subarray(strings, { minLength: 1 }), async (c, chosen) => {
        const plain = writeDataFile(schema, toRows(c));
        const dict = writeColumnarDataFile(schema, toBatch(c), { dictionaryColumns: new Set(chosen) });
        // Same metrics but for the encoded sizes of the dictionary columns.
        const { columnSizes: _a, ...dictMetrics } = dict.metrics;
        const { columnSizes: _b, ...plainMetrics } = plain.metrics;
        expect(dictMetrics).toEqual(plainMetrics);
        const q = (bytes: Uint8Array) =>
          duck.rows(`SELECT ${SELECT_ALL} FROM ${byFieldId(duck.file(bytes))}`);
        expect(await q(dict.bytes)).toEqual(await q(plain.bytes));
        if (c.n === 0) return;
        const meta = await duck.rows(
          `SELECT DISTINCT path_in_schema p, dictionary_page_offset IS NOT NULL AS d
             FROM parquet_metadata('${duck.file(dict.bytes)}')`,
        );
        const named = new Map(LEAVES.map((l) => [l.path.join(', '), l.id]));
        const dictionaryIds = meta.filter((m) => m.d).map((m) => named.get(String(m.p)));
        // Top-level columns only (parquet-wasm names a column by one name, not a nested path).
        const top = new Set(schema.fields.map((f) => f.id));
        expect(new Set(dictionaryIds)).toEqual(new Set(chosen.filter((id) => top.has(id))));
      }),
      { numRuns: 15 },
    );
  }, 30_000);

  it('reads back the values it was given', async () => {
    const batch: ColumnarBatch = {
      rowCount: 3,
      leaves: new Map<number, ColumnarLeaf>([
        [2, { values: { kind: 'int32', values: Int32Array.of(1, 2, 3) } }],
        [
          3,
          {
            values: { kind: 'int64', values: BigInt64Array.of(-1n, 99n, 7n) },
            valid: Uint8Array.of(1, 0, 1),
          },
        ],
        [5, { values: { kind: 'float64', values: Float64Array.of(0.5, Number.NaN, -0) } }],
        [11, { values: { kind: 'int64', values: BigInt64Array.of(1_700_000_000_000_000n, 0n, 0n) } }],
        [14, { values: { kind: 'utf8', values: ['héllo', undefined, 'z'] } }],
        [15, { values: { kind: 'utf8', values: ['a', 'b', 'c'] } }],
        [6, { values: { kind: 'any', values: [1420n, null, -1n] } }],
        [20, { values: { kind: 'int32', values: Int32Array.of(5, 6, 7) } }],
        [33, { values: { kind: 'utf8', values: ['c0', undefined, 'c2'] } }],
        [21, { values: { kind: 'utf8', values: ['x', 'y', 'q'] } }],
        [28, { values: { kind: 'utf8', values: ['r0', 'r1', 'r2'] } }],
        [32, { values: { kind: 'float32', values: Float32Array.of(1.5, 2.5, 3.5) } }],
      ]),
      structValid: new Map([
        [19, Uint8Array.of(1, 0, 1)],
        [22, Uint8Array.of(0, 0, 0)],
      ]),
    };
    const out = writeColumnarDataFile(schema, batch);
    const got = await duck.rows(`
      SELECT c2 AS i, c3 AS l, c5::VARCHAR AS d, epoch_us(c11) AS tstz, c14 AS s, c15 AS sreq, c6::VARCHAR AS dec9,
             to_json(c19)::VARCHAR AS st, to_json(c27)::VARCHAR AS rs
      FROM ${byFieldId(duck.file(out.bytes))}`);
    expect(got).toEqual([
      {
        i: 1,
        l: -1n,
        d: '0.5',
        tstz: 1_700_000_000_000_000n,
        s: 'héllo',
        sreq: 'a',
        dec9: '14.20',
        st: '{"a":5,"b":"x","inner":null,"g":null,"c":"c0"}',
        rs: '{"x":"r0","y":null,"deep":{"q":null,"r":1.5}}',
      },
      {
        i: 2,
        l: null,
        d: 'nan',
        tstz: 0n,
        s: null,
        sreq: 'b',
        dec9: null,
        st: null,
        rs: '{"x":"r1","y":null,"deep":{"q":null,"r":2.5}}',
      },
      {
        i: 3,
        l: 7n,
        d: '-0.0',
        tstz: 0n,
        s: 'z',
        sreq: 'c',
        dec9: '-0.01',
        st: '{"a":7,"b":"q","inner":null,"g":null,"c":"c2"}',
        rs: '{"x":"r2","y":null,"deep":{"q":null,"r":3.5}}',
      },
    ]);
    // Nulls under the null struct count as nulls; the double's NaN is counted, not a bound.
    expect(out.metrics.nullValueCounts.get(20)).toBe(1n);
    expect(out.metrics.nullValueCounts.get(21)).toBe(1n);
    expect(out.metrics.nullValueCounts.get(23)).toBe(3n);
    expect(out.metrics.nanValueCounts.get(5)).toBe(1n);
    expect(out.metrics.valueCounts.get(3)).toBe(3n);
    expect(out.metrics.nullValueCounts.get(3)).toBe(1n);
  });

  it('does not modify the caller arrays, and copies arrays that share memory', async () => {
    const s: Schema = {
      schemaId: 0,
      fields: [
        field(1, 'a', T.long),
        field(2, 'b', T.long),
        field(3, 'c', T.double),
        field(4, 'x', T.boolean),
      ],
    };
    const longs = BigInt64Array.of(3n, -4n, 5n, 6n, 99n);
    const slab = new ArrayBuffer(64);
    const d = new Float64Array(slab, 8, 4);
    d.set([1, 2, 3, 4]);
    const bools = Uint8Array.of(0, 1, 2, 0);
    const before = [longs.slice(), d.slice(), bools.slice()];
    const batch: ColumnarBatch = {
      rowCount: 4,
      leaves: new Map<number, ColumnarLeaf>([
        // The same array for two columns, and a view into a larger buffer.
        [1, { values: { kind: 'int64', values: longs }, valid: Uint8Array.of(1, 1, 0, 1) }],
        [2, { values: { kind: 'int64', values: longs } }],
        [3, { values: { kind: 'float64', values: d } }],
        [4, { values: { kind: 'bool', values: bools } }],
      ]),
    };
    const cols = writeColumnarDataFile(s, batch);
    const rows = writeDataFile(s, [
      { a: 3n, b: 3n, c: 1, x: false },
      { a: -4n, b: -4n, c: 2, x: true },
      { b: 5n, c: 3, x: true },
      { a: 6n, b: 6n, c: 4, x: false },
    ]);
    expect(layoutFree(cols.metrics)).toEqual(layoutFree(rows.metrics));
    expect(await hyparquetRows(cols.bytes)).toEqual(await hyparquetRows(rows.bytes));
    expect([longs, d, bools]).toEqual(before);
  });

  it('handles an empty batch and all-null / absent leaves', async () => {
    const s: Schema = {
      schemaId: 0,
      fields: [
        field(1, 'a', T.long),
        field(2, 'st', struct([field(3, 'x', T.string), field(4, 'y', T.int, true)])),
      ],
    };
    for (const n of [0, 5]) {
      const cols = writeColumnarDataFile(s, {
        rowCount: n,
        leaves: new Map(),
        structValid: new Map([[2, new Uint8Array(n)]]),
      });
      const rows = writeDataFile(
        s,
        Array.from({ length: n }, () => ({})),
      );
      expect(layoutFree(cols.metrics)).toEqual(layoutFree(rows.metrics));
      expect(await hyparquetRows(cols.bytes)).toEqual(await hyparquetRows(rows.bytes));
    }
  });
});

describe('writeColumnarDataFile: the native writer (parquet/file-writer.ts)', () => {
  it('writes what parquet-wasm writes for the same rows: values by field id (DuckDB and hyparquet), schema, metrics', async () => {
    await fc.assert(
      fc.asyncProperty(
        caseArb(300, NATIVE).filter((c) => c.n > 0),
        fc.constantFrom(undefined, 1, 7, 1000),
        fc.constantFrom<ParquetCompression>('zstd', 'gzip', 'uncompressed'),
        async (c, rowGroupRows, compression) => {
          const opts = { compression, metricsTruncateLength: 3, ...(rowGroupRows ? { rowGroupRows } : {}) };
          expect(writesNatively(nativeSchema, toBatch(c), opts)).toBe(true);
          const { rows, cols } = both(c, opts, nativeSchema);
          expect(cols.recordCount).toBe(c.n);
          expect(layoutFree(cols.metrics)).toEqual(layoutFree(rows.metrics));
          const q = (bytes: Uint8Array) =>
            duck.rows(`SELECT ${selectAll(NATIVE_IDS)} FROM ${byFieldId(duck.file(bytes), NATIVE_IDS)}`);
          const [fromRows, fromCols] = await Promise.all([q(rows.bytes), q(cols.bytes)]);
          expect(fromCols).toHaveLength(c.n);
          expect(fromCols).toEqual(fromRows);
          expect(await hyparquetRows(cols.bytes)).toEqual(await hyparquetRows(rows.bytes));
          expect(await parquetSchemaOf(cols.bytes)).toEqual(await parquetSchemaOf(rows.bytes));
          expect(await chunkStatistics(cols.bytes)).toEqual(await chunkStatistics(rows.bytes));
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);

  it('dictionary-encodes the columns whose values repeat, and only those', async () => {
    const n = 5000;
    const s: Schema = {
      schemaId: 0,
      fields: [
        field(1, 'few', T.long),
        field(2, 'many', T.long),
        field(3, 'code', T.string),
        field(4, 'id', T.string),
      ],
    };
    const few = BigInt64Array.from({ length: n }, (_, i) => BigInt(i % 17));
    const many = BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 7919n);
    const utf = (f: (i: number) => string) => utf8Bytes(Array.from({ length: n }, (_, i) => f(i)));
    const out = writeColumnarDataFile(s, {
      rowCount: n,
      leaves: new Map<number, ColumnarLeaf>([
        [1, { values: { kind: 'int64', values: few } }],
        [2, { values: { kind: 'int64', values: many } }],
        [3, { values: utf((i) => ['ATL', 'DFW', 'ORD'][i % 3]!) }],
        [4, { values: utf((i) => `id-${i}`) }],
      ]),
    });
    const meta = await duck.rows(
      `SELECT path_in_schema p, encodings e, dictionary_page_offset IS NOT NULL AS d
         FROM parquet_metadata('${duck.file(out.bytes)}') ORDER BY column_id`,
    );
    expect(meta.map((m) => [m.p, m.d])).toEqual([
      ['few', true],
      ['many', false],
      ['code', true],
      ['id', false],
    ]);
    const back = await duck.rows(
      `SELECT sum(few)::VARCHAR a, sum(many)::VARCHAR b, count(DISTINCT code) c, count(DISTINCT id) d
         FROM read_parquet('${duck.file(out.bytes)}')`,
    );
    const sum = (a: BigInt64Array) => a.reduce((x, y) => x + y, 0n).toString();
    expect(back).toEqual([{ a: sum(few), b: sum(many), c: 3n, d: BigInt(n) }]);
  });
});

describe('writeColumnarDataFile: the native writer, pages', () => {
  it('splits large chunks into pages (rows and bytes) and reads back every value, nulls in place', async () => {
    const n = 150_000;
    const s: Schema = {
      schemaId: 0,
      fields: [
        field(1, 'k', T.long, true),
        field(2, 'v', T.long),
        field(3, 'txt', T.string),
        field(4, 'd', T.double),
      ],
    };
    const k = BigInt64Array.from({ length: n }, (_, i) => BigInt(i));
    const v = BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 1_000_003n - 77n);
    const vValid = Uint8Array.from({ length: n }, (_, i) => (i % 7 === 3 ? 0 : 1));
    // Unique strings of ~20 bytes (PLAIN, ~3 MiB: pages cut by bytes), every 11th null.
    const parts = Array.from({ length: n }, (_, i) => (i % 11 === 5 ? '' : `row-${i}-${'é'.repeat(i % 9)}`));
    const tValid = Uint8Array.from({ length: n }, (_, i) => (i % 11 === 5 ? 0 : 1));
    const d = Float64Array.from({ length: n }, (_, i) => (i % 5) * 0.5);
    const out = writeColumnarDataFile(s, {
      rowCount: n,
      leaves: new Map<number, ColumnarLeaf>([
        [1, { values: { kind: 'int64', values: k } }],
        [2, { values: { kind: 'int64', values: v }, valid: vValid }],
        [3, { values: utf8Bytes(parts), valid: tValid }],
        [4, { values: { kind: 'float64', values: d } }],
      ]),
    });
    expect(
      writesNatively(s, { rowCount: n, leaves: new Map([[1, { values: { kind: 'int64', values: k } }]]) }),
    ).toBe(true);
    const path = duck.file(out.bytes);
    const back = await duck.rows(`SELECT k, v, txt, d FROM read_parquet('${path}') ORDER BY k`);
    expect(back).toHaveLength(n);
    let wrong = 0;
    back.forEach((r, i) => {
      const ok =
        r.k === BigInt(i) &&
        r.v === (vValid[i] ? v[i] : null) &&
        r.txt === (tValid[i] ? parts[i] : null) &&
        r.d === d[i];
      if (!ok) wrong++;
    });
    expect(wrong).toBe(0);
    expect(out.metrics.nullValueCounts.get(2)).toBe(BigInt(vValid.filter((x) => x === 0).length));
    expect(out.metrics.nullValueCounts.get(3)).toBe(BigInt(tValid.filter((x) => x === 0).length));
    // hyparquet reads it too (another reader), the same values.
    const rows = (await parquetReadObjects({
      file: out.bytes.buffer.slice(
        out.bytes.byteOffset,
        out.bytes.byteOffset + out.bytes.byteLength,
      ) as ArrayBuffer,
      compressors,
    })) as Record<string, unknown>[];
    expect(
      rows.filter((r, i) => r.txt !== (tValid[i] ? parts[i] : null) || r.v !== (vValid[i] ? v[i] : null)),
    ).toEqual([]);
  }, 60_000);
});

describe('writeColumnarDataFile: utf8-bytes columns', () => {
  it('writes pre-encoded UTF-8 exactly as the same strings given as JS strings', () => {
    const s: Schema = { schemaId: 0, fields: [field(1, 's', T.string), field(2, 'n', T.long)] };
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.string({ unit: 'binary', maxLength: 24 }), { nil: undefined }), {
          maxLength: 40,
        }),
        (vals) => {
          const enc = vals.map((v) => Buffer.from(v ?? '', 'utf8'));
          const offsets = new Int32Array(vals.length + 1);
          enc.forEach((b, i) => {
            offsets[i + 1] = offsets[i]! + b.length;
          });
          const data = new Uint8Array(Buffer.concat(enc));
          const valid = Uint8Array.from(vals, (v) => (v === undefined ? 0 : 1));
          const n = vals.length;
          const ids = {
            values: { kind: 'int64' as const, values: BigInt64Array.from(vals, (_, i) => BigInt(i)) },
          };
          const asBytes = writeColumnarDataFile(s, {
            rowCount: n,
            leaves: new Map<number, ColumnarLeaf>([
              [1, { values: { kind: 'utf8-bytes', data, offsets }, valid }],
              [2, ids],
            ]),
          });
          const asStrings = writeColumnarDataFile(s, {
            rowCount: n,
            leaves: new Map<number, ColumnarLeaf>([
              [1, { values: { kind: 'utf8', values: vals }, valid }],
              [2, ids],
            ]),
          });
          expect(asBytes.metrics).toEqual(asStrings.metrics);
          expect(Buffer.from(asBytes.bytes).equals(Buffer.from(asStrings.bytes))).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('rejects offsets that do not fit the data', () => {
    const s: Schema = { schemaId: 0, fields: [field(1, 's', T.string)] };
    const bad = () =>
      writeColumnarDataFile(s, {
        rowCount: 1,
        leaves: new Map([
          [1, { values: { kind: 'utf8-bytes', data: new Uint8Array(2), offsets: Int32Array.of(0, 5) } }],
        ]),
      });
    expect(bad).toThrow(/string offsets/);
  });
});

describe('writeColumnarDataFile: errors', () => {
  const s: Schema = {
    schemaId: 0,
    fields: [
      field(1, 'id', T.long, true),
      field(2, 'st', struct([field(3, 'x', T.int, true), field(4, 'y', T.string)])),
      field(5, 'req', struct([field(6, 'z', T.double)]), true),
      field(7, 'dec', decimal(9, 2)),
    ],
  };
  const ok = (): Map<number, ColumnarLeaf> =>
    new Map<number, ColumnarLeaf>([
      [1, { values: { kind: 'int64', values: BigInt64Array.of(1n, 2n) } }],
      [3, { values: { kind: 'int32', values: Int32Array.of(1, 2) } }],
    ]);
  const fails = (
    batch: ColumnarBatch,
    pattern: RegExp,
    kind: ErrorKind = ErrorKind.DataInvalid,
    sch = s,
  ): void => {
    let err: unknown;
    try {
      writeColumnarDataFile(sch, batch);
    } catch (e) {
      err = e;
    }
    expect(isFloeError(err, kind), String(err)).toBe(true);
    expect((err as Error).message).toMatch(pattern);
  };

  it('accepts the valid baseline', () => {
    expect(writeColumnarDataFile(s, { rowCount: 2, leaves: ok() }).recordCount).toBe(2);
  });

  it('rejects a null in a required column, naming it', () => {
    const leaves = ok();
    leaves.set(1, {
      values: { kind: 'int64', values: BigInt64Array.of(1n, 2n) },
      valid: Uint8Array.of(1, 0),
    });
    fails({ rowCount: 2, leaves }, /required column 'id' is null at index 1/);
  });

  it('rejects a required leaf missing from the batch', () => {
    const leaves = ok();
    leaves.delete(1);
    fails({ rowCount: 2, leaves }, /required column 'id' is null at index 0/);
  });

  it('rejects a null required leaf inside a present struct, but not under a null struct', () => {
    const leaves = ok();
    leaves.set(3, { values: { kind: 'int32', values: Int32Array.of(1, 2) }, valid: Uint8Array.of(0, 1) });
    fails({ rowCount: 2, leaves }, /required column 'st\.x' is null at index 0/);
    const out = writeColumnarDataFile(s, {
      rowCount: 2,
      leaves,
      structValid: new Map([[2, Uint8Array.of(0, 1)]]),
    });
    expect(out.metrics.nullValueCounts.get(3)).toBe(1n);
  });

  it('rejects a null required struct', () => {
    fails(
      { rowCount: 2, leaves: ok(), structValid: new Map([[5, Uint8Array.of(1, 0)]]) },
      /required column 'req' is null at index 1/,
    );
  });

  it('rejects column kinds that do not fit the type', () => {
    const leaves = ok();
    leaves.set(6, { values: { kind: 'float32', values: Float32Array.of(1, 2) } });
    fails({ rowCount: 2, leaves }, /column 'req\.z' \(double\) cannot take 'float32'/);
    leaves.set(6, { values: { kind: 'int64', values: new Float64Array(2) } } as unknown as ColumnarLeaf);
    fails({ rowCount: 2, leaves }, /column 'req\.z' \(double\) cannot take 'int64'/);
    leaves.set(6, { values: { kind: 'float64', values: new Float32Array(2) } } as unknown as ColumnarLeaf);
    fails({ rowCount: 2, leaves }, /column 'req\.z': values must be a Float64Array, got Float32Array/);
  });

  it('rejects arrays shorter than the row count', () => {
    const leaves = ok();
    leaves.set(4, { values: { kind: 'utf8', values: ['a'] } });
    fails({ rowCount: 2, leaves }, /column 'st\.y': values has 1 entries for 2 rows/);
    leaves.set(4, { values: { kind: 'utf8', values: ['a', 'b'] }, valid: Uint8Array.of(1) });
    fails({ rowCount: 2, leaves }, /column 'st\.y': valid has 1 entries for 2 rows/);
    fails(
      { rowCount: 2, leaves: ok(), structValid: new Map([[2, Uint8Array.of(1)]]) },
      /'st': structValid has 1/,
    );
  });

  it('rejects wrong values in utf8/any columns through the row builders', () => {
    const leaves = ok();
    leaves.set(7, { values: { kind: 'any', values: [1n, 1.5] } });
    fails({ rowCount: 2, leaves }, /column 'dec' \(decimal\(9,2\)\) cannot hold value 1\.5 at index 1/);
    leaves.set(7, { values: { kind: 'any', values: [1n, 10n ** 9n] } });
    fails({ rowCount: 2, leaves }, /column 'dec'.*exceeds precision 9/);
    leaves.delete(7);
    leaves.set(4, { values: { kind: 'utf8', values: ['a', 5 as unknown as string] } });
    fails({ rowCount: 2, leaves }, /column 'st\.y' \(string\) cannot hold value 5 at index 1/);
  });

  it('rejects field ids that are not leaves (or structs) of the schema', () => {
    const leaves = ok();
    leaves.set(99, { values: { kind: 'int32', values: Int32Array.of(1, 2) } });
    fails({ rowCount: 2, leaves }, /field id 99, which is not in the schema/);
    fails(
      {
        rowCount: 2,
        leaves: new Map([...ok(), [2, { values: { kind: 'int32', values: Int32Array.of(1, 2) } }]]),
      },
      /field id 2 \('st'\), which is not a primitive column/,
    );
    fails(
      { rowCount: 2, leaves: ok(), structValid: new Map([[3, Uint8Array.of(1, 1)]]) },
      /field id 3 \('st\.x'\), which is not a struct/,
    );
    fails({ rowCount: -1, leaves: ok() }, /rowCount must be a non-negative integer/);
  });

  it('rejects list and map schemas', () => {
    const withList: Schema = {
      schemaId: 0,
      fields: [field(1, 'a', T.long), field(2, 'xs', list(3, T.string))],
    };
    const withMap: Schema = {
      schemaId: 0,
      fields: [field(1, 'st', struct([field(2, 'm', map(3, T.string, 4, T.long))]))],
    };
    expect(supportsColumnar(schema)).toBe(true);
    expect(supportsColumnar(withList)).toBe(false);
    expect(supportsColumnar(withMap)).toBe(false);
    fails({ rowCount: 0, leaves: new Map() }, /list or map/, ErrorKind.FeatureUnsupported, withList);
  });

  it('rejects bad options like writeDataFile', () => {
    expect(() => writeColumnarDataFile(s, { rowCount: 2, leaves: ok() }, { rowGroupRows: 0 })).toThrow(
      /rowGroupRows/,
    );
  });
});
