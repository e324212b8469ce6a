/**
 * Kafka Connect schemas, as Debezium Server writes them with its JSON converter's schemas on (the
 * default): `{"schema": {...}, "payload": {...}}`, where `schema` describes `payload` field by
 * field (`type`, `optional`, a logical `name` with `parameters`). Types then come from the schema,
 * not from inference over the payload:
 *
 * | Connect schema                                              | column        | value as sent                     |
 * |-------------------------------------------------------------|---------------|-----------------------------------|
 * | `int8`, `int16`, `int32`                                    | int           | number                            |
 * | `int64`                                                     | long          | number                            |
 * | `float32` / `float64`                                       | float / double| number                            |
 * | `boolean`, `string`                                         | boolean, string |                                 |
 * | `bytes`                                                     | binary        | base64                            |
 * | `org.apache.kafka.connect.data.Decimal` (bytes, `scale`, `connect.decimal.precision`) | decimal(P,S) | base64 big-endian two's complement of the unscaled value |
 * | `io.debezium.data.VariableScaleDecimal` (struct `scale`, `value`) | string (exact decimal text) | a scale per value: no one decimal(P,S) holds them |
 * | `org.apache.kafka.connect.data.Date`, `io.debezium.time.Date` | date        | days since the epoch              |
 * | `org.apache.kafka.connect.data.Timestamp`, `io.debezium.time.Timestamp` | timestamp | epoch milliseconds   |
 * | `io.debezium.time.MicroTimestamp` / `NanoTimestamp`         | timestamp     | epoch µs / ns (ns floored to µs)  |
 * | `io.debezium.time.ZonedTimestamp`                           | timestamptz   | ISO-8601 text with offset         |
 * | `io.debezium.time.MicroTime`, `NanoTime`, `Time`, `org.apache.kafka.connect.data.Time` | time | µs / ns / ms since midnight |
 *
 * The typed image is the payload's image with those values rewritten into the forms the column
 * types read exactly (decimal text, `yyyy-MM-dd`, ISO timestamps), plus type hints per column path
 * (schema/infer.ts applies them) and each struct field's `optional` flag (schema/nullability.ts
 * makes a field the schema declares `optional: false` a required column while the data keeps to
 * it; list elements are left optional). Pure.
 */
import {
  decimalFromBytes,
  floorDiv,
  formatDate,
  formatDecimal,
  toJsonSingleValue,
} from '../iceberg/conversions.ts';
import { T } from '../iceberg/types.ts';
import { columnNameOf } from '../schema/column-name.ts';
import type { JsonObject, JsonValue } from './json-line.ts';
import { describeJson, isJsonObject, JsonNumberText } from './json-line.ts';

/** One Connect schema node (a field's, when `field` names it). */
export interface ConnectSchema {
  readonly type: string;
  readonly optional?: boolean;
  readonly name?: string;
  readonly parameters?: Readonly<Record<string, string>>;
  readonly field?: string;
  readonly fields?: readonly ConnectSchema[];
  readonly items?: ConnectSchema;
}

/** Column types a Connect schema declares for a table. */
export interface DeclaredTypes {
  /** Dotted column path (list elements: `path.element`) → Iceberg type, as config hints spell them. */
  readonly hints: Readonly<Record<string, string>>;
  /**
   * Dotted column path of each struct field the schema names → whether it declares the field
   * required (`optional` not true, as Connect reads it). Absent: nothing declared.
   */
  readonly required?: Readonly<Record<string, boolean>>;
}

export interface TypedImage extends DeclaredTypes {
  readonly row: JsonObject;
  readonly required: Readonly<Record<string, boolean>>;
}

/** The schema of `payload.<image>` in a `{schema, payload}` envelope, when it has one. */
export function imageSchema(schema: JsonValue | undefined, image: string): ConnectSchema | undefined {
  if (!isSchema(schema) || schema.type !== 'struct' || !Array.isArray(schema.fields)) return undefined;
  const f = schema.fields.find((x) => x.field === image);
  return f?.type === 'struct' ? f : undefined;
}

/**
 * The image typed by its schema; a value its schema cannot read (a Decimal that is not base64, a
 * date that is not a number) throws {@link ConnectValueError} naming the field.
 */
export function typedImage(schema: ConnectSchema, image: JsonObject): TypedImage {
  // Without prototypes: a column named `__proto__` keeps its entry.
  const hints: Record<string, string> = Object.create(null);
  const required: Record<string, boolean> = Object.create(null);
  const row = structValue(schema, image, '', { hints });
  declaredRequired(schema, '', required);
  return { row, hints, required };
}

/**
 * Each struct field's path → whether `s` declares it required, from the schema alone (a field the
 * value lacks is declared all the same). Not inside list elements: those stay optional.
 */
function declaredRequired(s: ConnectSchema, path: string, out: Record<string, boolean>): void {
  for (const f of s.fields ?? []) {
    if (!isSchema(f) || typeof f.field !== 'string') continue;
    const col = columnNameOf(f.field) ?? f.field;
    const p = path === '' ? col : `${path}.${col}`;
    // As Connect's JsonConverter reads a schema: a field is optional only when it says so.
    out[p] = f.optional !== true;
    // A logical type's struct (VariableScaleDecimal) is one column, not a struct of them.
    if (f.type === 'struct' && f.name !== VARIABLE_DECIMAL) declaredRequired(f, p, out);
  }
}

/** A payload value its schema cannot read, with the field's path. */
export class ConnectValueError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

interface Acc {
  readonly hints: Record<string, string>;
}

function structValue(s: ConnectSchema, v: JsonObject, path: string, acc: Acc): JsonObject {
  const out: JsonObject = { ...v };
  for (const f of s.fields ?? []) {
    if (!isSchema(f) || typeof f.field !== 'string') continue;
    const col = columnNameOf(f.field) ?? f.field;
    const p = path === '' ? col : `${path}.${col}`;
    if (!Object.hasOwn(v, f.field)) continue;
    out[f.field] = fieldValue(f, v[f.field]!, p, acc);
  }
  return out;
}

const DECIMAL = 'org.apache.kafka.connect.data.Decimal';
const VARIABLE_DECIMAL = 'io.debezium.data.VariableScaleDecimal';
const DATES = new Set(['org.apache.kafka.connect.data.Date', 'io.debezium.time.Date']);
const MILLI_TIMESTAMPS = new Set(['org.apache.kafka.connect.data.Timestamp', 'io.debezium.time.Timestamp']);
const MICRO_TIMESTAMP = 'io.debezium.time.MicroTimestamp';
const NANO_TIMESTAMP = 'io.debezium.time.NanoTimestamp';
const ZONED_TIMESTAMP = 'io.debezium.time.ZonedTimestamp';
const MILLI_TIMES = new Set(['org.apache.kafka.connect.data.Time', 'io.debezium.time.Time']);
const MICRO_TIME = 'io.debezium.time.MicroTime';
const NANO_TIME = 'io.debezium.time.NanoTime';

const PRIMITIVES: Readonly<Record<string, string>> = {
  int8: 'int',
  int16: 'int',
  int32: 'int',
  int64: 'long',
  float32: 'float',
  float64: 'double',
  boolean: 'boolean',
  string: 'string',
  bytes: 'binary',
};

function fieldValue(s: ConnectSchema, v: JsonValue, path: string, acc: Acc): JsonValue {
  const name = s.name;
  const hint = (type: string, value: JsonValue): JsonValue => {
    acc.hints[path] = type;
    return value;
  };
  if (name === DECIMAL) {
    const scale = Number(s.parameters?.scale ?? 0);
    const precision = Number(s.parameters?.['connect.decimal.precision'] ?? 38);
    const type =
      precision >= 1 && precision <= 38 && scale >= 0 && scale <= precision
        ? `decimal(${precision},${scale})`
        : 'string';
    if (v === null) return hint(type, v);
    // The JSON converter's `decimal.format: NUMERIC` writes a number instead: kept as it is.
    if (typeof v === 'number' || typeof v === 'bigint' || v instanceof JsonNumberText) return hint(type, v);
    return hint(type, formatDecimal(unscaledOf(v, path), scale));
  }
  if (name === VARIABLE_DECIMAL && isJsonObject(v)) {
    const scale = v.scale;
    const value = v.value;
    if (typeof scale !== 'number' && typeof scale !== 'bigint')
      throw new ConnectValueError(path, `VariableScaleDecimal has no scale (${describeJson(scale)})`);
    return hint('string', formatDecimal(unscaledOf(value ?? null, path), Number(scale)));
  }
  if (name === VARIABLE_DECIMAL) return hint('string', v);
  if (v === null) {
    const t = typeOf(s);
    return t === undefined ? v : hint(t, v);
  }
  if (DATES.has(name ?? '')) return hint('date', formatDate(Number(integer(v, path, 'days'))));
  if (MILLI_TIMESTAMPS.has(name ?? ''))
    return hint('timestamp', timestamp(integer(v, path, 'milliseconds') * 1000n));
  if (name === MICRO_TIMESTAMP) return hint('timestamp', timestamp(integer(v, path, 'microseconds')));
  if (name === NANO_TIMESTAMP)
    return hint('timestamp', timestamp(floorDiv(integer(v, path, 'nanoseconds'), 1000n)));
  if (name === ZONED_TIMESTAMP) return hint('timestamptz', v);
  if (MILLI_TIMES.has(name ?? ''))
    return hint('time', timeOfDay(integer(v, path, 'milliseconds') * 1000n, path));
  if (name === MICRO_TIME) return hint('time', timeOfDay(integer(v, path, 'microseconds'), path));
  if (name === NANO_TIME)
    return hint('time', timeOfDay(floorDiv(integer(v, path, 'nanoseconds'), 1000n), path));
  if (s.type === 'struct' && isJsonObject(v)) return structValue(s, v, path, acc);
  if (s.type === 'array' && Array.isArray(v)) {
    const items = s.items;
    if (!isSchema(items)) return v;
    return v.map((x) => (x === null ? x : fieldValue(items, x, `${path}.element`, acc)));
  }
  const t = PRIMITIVES[s.type];
  return t === undefined ? v : hint(t, v);
}

/** The column type of a field whose value is null (so a column first seen null is still typed). */
function typeOf(s: ConnectSchema): string | undefined {
  const name = s.name ?? '';
  if (DATES.has(name)) return 'date';
  if (MILLI_TIMESTAMPS.has(name) || name === MICRO_TIMESTAMP || name === NANO_TIMESTAMP) return 'timestamp';
  if (name === ZONED_TIMESTAMP) return 'timestamptz';
  if (MILLI_TIMES.has(name) || name === MICRO_TIME || name === NANO_TIME) return 'time';
  return PRIMITIVES[s.type];
}

/** A Decimal's unscaled value: base64 of its big-endian two's complement bytes. */
function unscaledOf(v: JsonValue, path: string): bigint {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0 || v.length === 0)
    throw new ConnectValueError(
      path,
      `a Decimal must be base64 of its unscaled bytes, got ${describeJson(v)}`,
    );
  return decimalFromBytes(Buffer.from(v, 'base64'));
}

function integer(v: JsonValue, path: string, unit: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new ConnectValueError(path, `expected an integer count of ${unit}, got ${describeJson(v)}`);
}

function timestamp(micros: bigint): string {
  return toJsonSingleValue(T.timestamp, micros) as string;
}

function timeOfDay(micros: bigint, path: string): string {
  if (micros < 0n || micros >= 86_400_000_000n)
    throw new ConnectValueError(path, `time of day ${micros} µs is out of range`);
  return toJsonSingleValue(T.time, micros) as string;
}

function isSchema(v: unknown): v is ConnectSchema {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    typeof (v as { type?: unknown }).type === 'string'
  );
}
