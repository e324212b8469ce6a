/**
 * Avro writer schema → Iceberg struct, and decoded Avro datum → row (DESIGN §3, Avro line). Pure.
 *
 * | Avro (logical type)                             | Iceberg                 | row value (values.ts)        |
 * |-------------------------------------------------|-------------------------|------------------------------|
 * | int                                             | int                     | number                       |
 * | long                                            | long                    | bigint                       |
 * | float, double, boolean                          | float, double, boolean  | number, number, boolean      |
 * | string, enum                                    | string                  | string (enum: the symbol)    |
 * | bytes                                           | binary                  | Uint8Array (copied)          |
 * | fixed(L)                                        | fixed[L]                | Uint8Array (copied)          |
 * | bytes/fixed + decimal(P,S), P ≤ 38              | decimal(P,S)            | bigint, the unscaled value   |
 * | int + date                                      | date                    | number, days since epoch     |
 * | int + time-millis, long + time-micros           | time                    | bigint µs since midnight     |
 * | long + timestamp-millis / timestamp-micros      | timestamptz (UTC)       | bigint µs since epoch        |
 * | long + local-timestamp-millis / -micros         | timestamp (no zone)     | bigint µs                    |
 * | long + timestamp-nanos / local-timestamp-nanos  | timestamptz_ns / _ns    | bigint ns (v3 tables only)   |
 * | fixed(16) + uuid                                | uuid                    | canonical lower-case string  |
 * | string + uuid                                   | string (see below)      | string as written            |
 * | record                                          | struct                  | object keyed by column name  |
 * | array                                           | list                    | array                        |
 * | map                                             | map<string, V>          | Map                          |
 * | ["null", T] or [T, "null"]                      | optional T              | null or T's value            |
 *
 * - Requiredness follows the writer: a field, list element or map value whose Avro type is not a
 *   union with `null` is required (as Iceberg's own `AvroSchemaUtil` does); schema evolution
 *   relaxes a required column when a later writer version drops the field or makes it nullable.
 * - `uuid` on a `string` maps to `string`, not `uuid`: the producer wrote text, which is kept
 *   byte for byte (a non-canonical spelling never fails a record), and Athena/Glue have no uuid
 *   column type. `uuid` on `fixed(16)` is Iceberg's own encoding of a uuid and maps to `uuid`.
 * - A logical type that is invalid for its underlying type (decimal scale > precision, decimal on
 *   a `fixed` too small for the precision, `date` on a long …) or unknown is ignored, as the Avro
 *   spec requires: the field gets the underlying type's mapping. A valid decimal with precision
 *   above 38 cannot be held by Iceberg: FeatureUnsupported.
 * - Other unions (`["string","long"]`, `["null","a","b"]`), a field of type `null`, recursive
 *   types and nested records with no fields are `FloeError(FeatureUnsupported)` naming the field.
 * - Field names become columns by the JSON rule (`columnNameOf`: lower-cased, `[a-z0-9_]`); two
 *   fields of one record mapping to one column are `FeatureUnsupported` naming both. Avro `doc`
 *   becomes the column doc.
 *
 * Field ids in the struct are placeholders (1, 2, … like `inferStruct`); the table's real ids
 * come from schema evolution (`unionByName`).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import {
  decimal,
  fixed,
  type IcebergType,
  list,
  map,
  type NestedField,
  type StructType,
  T,
} from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import { columnNameOf } from './column-name.ts';
import { assignIds } from './infer.ts';

/** A compiled writer schema: its Iceberg struct and the datum → row converter. */
export interface CompiledAvroSchema {
  /** Full name of the writer's record, e.g. `com.example.OrderEvent`. */
  readonly fullName: string;
  /** Its short name, e.g. `OrderEvent`. */
  readonly name: string;
  /** The Iceberg struct, placeholder field ids. */
  readonly struct: StructType;
  /**
   * A decoded datum (as `avsc` / `avro/datum.ts` give it) → row. Throws `FloeError(DataInvalid)`
   * naming the column when the datum does not fit the schema (e.g. a decimal beyond its precision).
   */
  readonly toRow: (datum: unknown) => Row;
}

type Conv = (v: unknown) => IcebergValue;

interface Mapped {
  readonly type: IcebergType;
  readonly nullable: boolean;
  /** undefined = value passes through unchanged (already in values.ts form). */
  readonly conv: Conv | undefined;
}

interface Ctx {
  /** Named types seen so far: full name → definition and the namespace it was defined in. */
  readonly named: Map<string, { readonly schema: Record<string, unknown>; readonly ns: string }>;
  /** Full names of the records being mapped (recursion guard). */
  readonly stack: string[];
}

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

function unsupported(path: string, what: string, reason: string): FloeError {
  const where = path === '' ? 'the writer schema' : `field '${path}'`;
  return new FloeError(ErrorKind.FeatureUnsupported, `Avro ${where}: ${what}`, {
    context: { field: path, reason },
  });
}

function invalid(path: string, what: string): FloeError {
  const where = path === '' ? 'the writer schema' : `field '${path}'`;
  return new FloeError(ErrorKind.DataInvalid, `Avro ${where}: ${what}`, { context: { field: path } });
}

/** Compiles a writer schema (Avro schema JSON, parsed). The top level must be a record. */
export function compileAvroSchema(writerSchema: unknown): CompiledAvroSchema {
  const ctx: Ctx = { named: new Map(), stack: [] };
  const top = writerSchema;
  if (typeof top === 'string' && !PRIMITIVES.has(top)) {
    throw unsupported('', `the top level must be a record, got a reference to '${top}'`, 'not-a-record');
  }
  if (top === null || typeof top !== 'object' || Array.isArray(top)) {
    const got = Array.isArray(top) ? 'a union' : JSON.stringify(top);
    throw unsupported('', `the top level must be a record, got ${got}`, 'not-a-record');
  }
  const t = (top as Record<string, unknown>).type;
  if (t !== 'record' && t !== 'error') {
    throw unsupported('', `the top level must be a record, got type ${JSON.stringify(t)}`, 'not-a-record');
  }
  const { fullName } = nameOf(top as Record<string, unknown>, '', '');
  const built = mapNamed(top as Record<string, unknown>, '', '', ctx, true);
  const struct = assignIds(built.type as StructType);
  const rowConv = built.conv!;
  return {
    fullName,
    name: fullName.slice(fullName.lastIndexOf('.') + 1),
    struct,
    toRow: (datum) => rowConv(datum) as Row,
  };
}

/** The Iceberg struct (placeholder ids) for an Avro writer schema whose top level is a record. */
export function avroToIcebergStruct(writerSchema: object): StructType {
  return compileAvroSchema(writerSchema).struct;
}

/** A compiled datum → row converter for `writerSchema` (see {@link CompiledAvroSchema.toRow}). */
export function compileAvroRowConverter(writerSchema: object): (datum: unknown) => Row {
  return compileAvroSchema(writerSchema).toRow;
}

const compiled = new WeakMap<object, CompiledAvroSchema>();

/** Converts one decoded datum; compiles once per schema object (cached weakly). */
export function avroDatumToRow(writerSchema: object, datum: unknown): Row {
  let c = compiled.get(writerSchema);
  if (c === undefined) {
    c = compileAvroSchema(writerSchema);
    compiled.set(writerSchema, c);
  }
  return c.toRow(datum);
}

// ---------------------------------------------------------------------------------------------
// Schema walk.

function nameOf(s: Record<string, unknown>, ns: string, path: string): { fullName: string; ns: string } {
  const name = s.name;
  if (typeof name !== 'string' || name === '') throw invalid(path, `named type without a name`);
  if (name.includes('.')) return { fullName: name, ns: name.slice(0, name.lastIndexOf('.')) };
  const own = typeof s.namespace === 'string' ? s.namespace : ns;
  return { fullName: own === '' ? name : `${own}.${name}`, ns: own };
}

/** Registers a named type's definition (first sighting only). */
function define(s: Record<string, unknown>, ns: string, path: string, ctx: Ctx, register: boolean): string {
  const { fullName, ns: own } = nameOf(s, ns, path);
  if (register) {
    const seen = ctx.named.get(fullName);
    // The same definition object is walked again when the record around it is referenced twice.
    if (seen !== undefined && seen.schema !== s) throw invalid(path, `type '${fullName}' is defined twice`);
    ctx.named.set(fullName, { schema: s, ns: own });
  }
  return fullName;
}

function mapSchema(s: unknown, ns: string, path: string, ctx: Ctx): Mapped {
  if (typeof s === 'string') {
    if (PRIMITIVES.has(s)) return mapPrimitive(s, undefined, path);
    const ref = ctx.named.get(s.includes('.') || ns === '' ? s : `${ns}.${s}`) ?? ctx.named.get(s);
    if (ref === undefined) throw invalid(path, `unknown type '${s}'`);
    return mapNamed(ref.schema, ref.ns, path, ctx, false);
  }
  if (Array.isArray(s)) return mapUnion(s, ns, path, ctx);
  if (s === null || typeof s !== 'object') throw invalid(path, `invalid type ${JSON.stringify(s)}`);
  const o = s as Record<string, unknown>;
  const t = o.type;
  if (typeof t === 'string') {
    if (PRIMITIVES.has(t)) return mapPrimitive(t, o, path);
    switch (t) {
      case 'record':
      case 'error':
      case 'enum':
      case 'fixed':
        return mapNamed(o, ns, path, ctx, true);
      case 'array': {
        const item = mapSchema(o.items, ns, `${path}.element`, ctx);
        const conv = item.conv;
        const nullable = item.nullable;
        return {
          type: list(0, item.type, !item.nullable),
          nullable: false,
          conv: (v) => {
            if (!Array.isArray(v)) return bad(path, 'an array', v);
            if (conv === undefined) return v as IcebergValue[];
            const out: IcebergValue[] = new Array(v.length);
            for (let i = 0; i < v.length; i++) {
              const e = v[i];
              out[i] = e === null && nullable ? null : conv(e);
            }
            return out;
          },
        };
      }
      case 'map': {
        const value = mapSchema(o.values, ns, `${path}.value`, ctx);
        const conv = value.conv;
        const nullable = value.nullable;
        return {
          type: map(0, T.string, 0, value.type, !value.nullable),
          nullable: false,
          conv: (v) => {
            if (v === null || typeof v !== 'object') return bad(path, 'a map object', v);
            if (v instanceof Map) return v as Map<IcebergValue, IcebergValue>;
            const out = new Map<IcebergValue, IcebergValue>();
            const obj = v as Record<string, unknown>;
            for (const k of Object.keys(obj)) {
              const e = obj[k];
              out.set(k, conv === undefined || (e === null && nullable) ? (e as IcebergValue) : conv(e));
            }
            return out;
          },
        };
      }
      default: {
        // A named-type reference written as {"type": "com.x.Name"}.
        return mapSchema(t, ns, path, ctx);
      }
    }
  }
  if (t !== null && typeof t === 'object') return mapSchema(t, ns, path, ctx); // {"type": {...}}
  throw invalid(path, `invalid type ${JSON.stringify(s)}`);
}

function mapUnion(branches: unknown[], ns: string, path: string, ctx: Ctx): Mapped {
  const isNull = (b: unknown) =>
    b === 'null' || (b !== null && typeof b === 'object' && (b as { type?: unknown }).type === 'null');
  const nonNull = branches.filter((b) => !isNull(b));
  const hasNull = nonNull.length < branches.length;
  if (nonNull.length === 1) {
    const m = mapSchema(nonNull[0], ns, path, ctx);
    if (m.nullable) throw invalid(path, 'unions may not contain unions');
    if (!hasNull) return m;
    const conv = m.conv;
    return {
      type: m.type,
      nullable: true,
      conv: conv === undefined ? undefined : (v) => (v === null || v === undefined ? null : conv(v)),
    };
  }
  const shown = JSON.stringify(branches.map(branchName));
  if (nonNull.length === 0) {
    throw unsupported(path, `union ${shown} has no non-null branch (no Iceberg type)`, 'null-type');
  }
  throw unsupported(
    path,
    `union ${shown} is not supported: only a union of null and one type (["null", T]) maps to Iceberg`,
    'union',
  );
}

function branchName(b: unknown): string {
  if (typeof b === 'string') return b;
  if (b !== null && typeof b === 'object') {
    const o = b as Record<string, unknown>;
    if (typeof o.name === 'string') return o.name;
    if (typeof o.type === 'string') return o.type;
  }
  return JSON.stringify(b);
}

function mapNamed(o: Record<string, unknown>, ns: string, path: string, ctx: Ctx, register: boolean): Mapped {
  const fullName = define(o, ns, path, ctx, register);
  switch (o.type) {
    case 'record':
    case 'error':
      return mapRecord(o, ns, path, ctx);
    case 'enum':
      if (!Array.isArray(o.symbols)) throw invalid(path, `enum '${fullName}' has no symbols`);
      return { type: T.string, nullable: false, conv: expectString(path) };
    default: {
      const size = o.size;
      if (!Number.isInteger(size) || (size as number) < 0) {
        throw invalid(path, `fixed '${fullName}' has an invalid size ${JSON.stringify(size)}`);
      }
      return mapFixed(size as number, o, path);
    }
  }
}

function mapRecord(o: Record<string, unknown>, ns: string, path: string, ctx: Ctx): Mapped {
  const { fullName, ns: own } = nameOf(o, ns, path);
  if (ctx.stack.includes(fullName)) {
    throw unsupported(
      path,
      `recursive type '${fullName}' cannot be mapped to an Iceberg struct`,
      'recursive',
    );
  }
  if (!Array.isArray(o.fields)) throw invalid(path, `record '${fullName}' has no fields array`);
  if (o.fields.length === 0 && path !== '') {
    throw unsupported(
      path,
      `record '${fullName}' has no fields (an empty struct cannot be stored)`,
      'empty-record',
    );
  }
  ctx.stack.push(fullName);
  const fields: NestedField[] = [];
  const avroNames: string[] = [];
  const colNames: string[] = [];
  const convs: (Conv | undefined)[] = [];
  const nullable: boolean[] = [];
  const byColumn = new Map<string, string>();
  for (const f of o.fields as unknown[]) {
    if (f === null || typeof f !== 'object') throw invalid(path, `record '${fullName}' has an invalid field`);
    const fo = f as Record<string, unknown>;
    const avroName = fo.name;
    if (typeof avroName !== 'string' || avroName === '') {
      throw invalid(path, `record '${fullName}' has a field without a name`);
    }
    const col = columnNameOf(avroName);
    const at = path === '' ? (col ?? avroName) : `${path}.${col ?? avroName}`;
    if (col === undefined) {
      throw unsupported(at, `name '${avroName}' cannot be made a legal column name`, 'illegal-name');
    }
    const other = byColumn.get(col);
    if (other !== undefined) {
      throw unsupported(
        at,
        `fields '${other}' and '${avroName}' both map to column '${col}'`,
        'name-collision',
      );
    }
    byColumn.set(col, avroName);
    const m = mapSchema(fo.type, own, at, ctx);
    fields.push({
      id: 0,
      name: col,
      required: !m.nullable,
      type: m.type,
      ...(typeof fo.doc === 'string' ? { doc: fo.doc } : {}),
    });
    avroNames.push(avroName);
    colNames.push(col);
    convs.push(m.conv);
    nullable.push(m.nullable);
  }
  ctx.stack.pop();
  const n = fields.length;
  const conv: Conv = (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return bad(path, `a ${fullName} record`, v);
    const rec = v as Record<string, unknown>;
    const out: Record<string, IcebergValue> = {};
    for (let i = 0; i < n; i++) {
      const x = rec[avroNames[i]!];
      const c = convs[i];
      if (x === null || x === undefined) {
        if (!nullable[i]) return bad(path === '' ? colNames[i]! : `${path}.${colNames[i]}`, 'a value', x);
        out[colNames[i]!] = null;
      } else out[colNames[i]!] = c === undefined ? (x as IcebergValue) : c(x);
    }
    return out;
  };
  return { type: { kind: 'struct', fields }, nullable: false, conv };
}

// ---------------------------------------------------------------------------------------------
// Primitives and logical types.

const LONG_MIN = -(1n << 63n);
const LONG_MAX = (1n << 63n) - 1n;

function mapPrimitive(t: string, o: Record<string, unknown> | undefined, path: string): Mapped {
  const logical = typeof o?.logicalType === 'string' ? o.logicalType : undefined;
  switch (t) {
    case 'null':
      throw unsupported(path, 'type null has no Iceberg equivalent', 'null-type');
    case 'boolean':
      return { type: T.boolean, nullable: false, conv: expectBoolean(path) };
    case 'int':
      if (logical === 'date') return { type: T.date, nullable: false, conv: expectInt(path) };
      if (logical === 'time-millis') return { type: T.time, nullable: false, conv: scaledLong(path, 1000n) };
      return { type: T.int, nullable: false, conv: expectInt(path) };
    case 'long':
      switch (logical) {
        case 'time-micros':
          return { type: T.time, nullable: false, conv: scaledLong(path, 1n) };
        case 'timestamp-millis':
          return { type: T.timestamptz, nullable: false, conv: scaledLong(path, 1000n) };
        case 'timestamp-micros':
          return { type: T.timestamptz, nullable: false, conv: scaledLong(path, 1n) };
        case 'timestamp-nanos':
          return { type: T.timestamptz_ns, nullable: false, conv: scaledLong(path, 1n) };
        case 'local-timestamp-millis':
          return { type: T.timestamp, nullable: false, conv: scaledLong(path, 1000n) };
        case 'local-timestamp-micros':
          return { type: T.timestamp, nullable: false, conv: scaledLong(path, 1n) };
        case 'local-timestamp-nanos':
          return { type: T.timestamp_ns, nullable: false, conv: scaledLong(path, 1n) };
        default:
          return { type: T.long, nullable: false, conv: scaledLong(path, 1n) };
      }
    case 'float':
      return { type: T.float, nullable: false, conv: expectNumber(path) };
    case 'double':
      return { type: T.double, nullable: false, conv: expectNumber(path) };
    case 'string':
      // uuid on string stays string (module doc).
      return { type: T.string, nullable: false, conv: expectString(path) };
    default: {
      // bytes
      const dec = logical === 'decimal' ? decimalOf(o!, undefined, path) : undefined;
      if (dec !== undefined) return dec;
      return { type: T.binary, nullable: false, conv: copyBytes(path, undefined) };
    }
  }
}

function mapFixed(size: number, o: Record<string, unknown>, path: string): Mapped {
  const logical = o.logicalType;
  if (logical === 'decimal') {
    const dec = decimalOf(o, size, path);
    if (dec !== undefined) return dec;
  }
  if (logical === 'uuid' && size === 16) {
    return {
      type: T.uuid,
      nullable: false,
      conv: (v) => {
        if (!(v instanceof Uint8Array) || v.length !== 16) return bad(path, '16 bytes (uuid)', v);
        return uuidText(v);
      },
    };
  }
  return { type: fixed(size), nullable: false, conv: copyBytes(path, size) };
}

/** Most decimal digits a two's complement of `size` bytes always holds (Avro spec). */
function maxDecimalDigits(size: number): number {
  return Math.floor(Math.log10(2) * (8 * size - 1));
}

function decimalOf(o: Record<string, unknown>, size: number | undefined, path: string): Mapped | undefined {
  const p = o.precision;
  const s = o.scale ?? 0;
  // Invalid decimal attributes: the spec says to ignore the logical type.
  if (!Number.isInteger(p) || (p as number) < 1) return undefined;
  if (!Number.isInteger(s) || (s as number) < 0 || (s as number) > (p as number)) return undefined;
  if (size !== undefined && (p as number) > maxDecimalDigits(size)) return undefined;
  const precision = p as number;
  const scale = s as number;
  if (precision > 38) {
    throw unsupported(
      path,
      `decimal(${precision},${scale}) exceeds Iceberg's maximum precision of 38`,
      'decimal-precision',
    );
  }
  const limit = 10n ** BigInt(precision);
  return {
    type: decimal(precision, scale),
    nullable: false,
    conv: (v) => {
      if (!(v instanceof Uint8Array)) return bad(path, 'decimal bytes', v);
      const u = unscaledOf(v);
      if (u >= limit || u <= -limit) {
        throw new FloeError(
          ErrorKind.DataInvalid,
          `Avro field '${path}': unscaled value ${u} needs more than ${precision} digits (decimal(${precision},${scale}))`,
          { context: { field: path, value: u.toString() } },
        );
      }
      return u;
    },
  };
}

/** Big-endian two's complement bytes → bigint (empty → 0). */
export function unscaledOf(b: Uint8Array): bigint {
  if (b.length === 0) return 0n;
  let u = 0n;
  for (let i = 0; i < b.length; i++) u = (u << 8n) | BigInt(b[i]!);
  return b[0]! & 0x80 ? u - (1n << BigInt(8 * b.length)) : u;
}

function uuidText(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
    s += b[i]!.toString(16).padStart(2, '0');
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Value converters: avsc gives the right JS types; these checks make hand-built datums (and a
// schema/datum mismatch) fail loudly, naming the field, instead of producing a bad row.

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (Array.isArray(v)) return 'an array';
  return typeof v;
}

function bad(path: string, what: string, v: unknown): never {
  const where = path === '' ? 'the record' : `field '${path}'`;
  throw new FloeError(ErrorKind.DataInvalid, `Avro datum: ${where} expected ${what}, got ${describe(v)}`, {
    context: { field: path },
  });
}

function expectBoolean(path: string): Conv {
  return (v) => (typeof v === 'boolean' ? v : bad(path, 'a boolean', v));
}
function expectString(path: string): Conv {
  return (v) => (typeof v === 'string' ? v : bad(path, 'a string', v));
}
function expectNumber(path: string): Conv {
  return (v) => (typeof v === 'number' ? v : bad(path, 'a number', v));
}
function expectInt(path: string): Conv {
  return (v) => (typeof v === 'number' && Number.isInteger(v) ? v : bad(path, 'an int', v));
}

/** A long (bigint; a safe-integer number also accepted) times `factor`, range-checked. */
function scaledLong(path: string, factor: bigint): Conv {
  return (v) => {
    let n: bigint;
    if (typeof v === 'bigint') n = v;
    else if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
    else return bad(path, 'a long', v);
    if (factor === 1n) return n;
    const r = n * factor;
    if (r < LONG_MIN || r > LONG_MAX) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `Avro field '${path}': ${n} is out of range once scaled to micros`,
        {
          context: { field: path, value: n.toString() },
        },
      );
    }
    return r;
  };
}

function copyBytes(path: string, size: number | undefined): Conv {
  return (v) => {
    if (!(v instanceof Uint8Array)) return bad(path, size === undefined ? 'bytes' : `${size} bytes`, v);
    if (size !== undefined && v.length !== size) return bad(path, `${size} bytes`, v);
    // A copy: a decoded Buffer may be a view into the whole Kinesis record.
    return new Uint8Array(v);
  };
}
