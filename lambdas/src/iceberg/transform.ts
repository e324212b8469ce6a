/**
 * Partition transforms (spec §"Partition Transforms", §"Bucket Transform Details",
 * §"Truncate Transform Details", Appendix B for human-readable path forms).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import {
  civilFromDays,
  decimalToBytes,
  floorDiv,
  formatDate,
  formatDecimal,
  MICROS_PER_DAY,
  NANOS_PER_DAY,
  uuidToBytes,
} from './conversions.ts';
import { murmur3Hash32, murmur3HashLong } from './murmur3.ts';
import { type IcebergType, isPrimitive, type PrimitiveType, primitiveToString, T } from './types.ts';
import type { IcebergValue } from './values.ts';

export type Transform =
  | { readonly kind: 'identity' }
  | { readonly kind: 'bucket'; readonly n: number }
  | { readonly kind: 'truncate'; readonly width: number }
  | { readonly kind: 'year' | 'month' | 'day' | 'hour' | 'void' }
  /** A transform this writer does not know; kept verbatim, never committed. */
  | { readonly kind: 'unknown'; readonly text: string };

const SIMPLE = new Set(['identity', 'year', 'month', 'day', 'hour', 'void']);
const PARAM_RE = /^(bucket|truncate)\[\s*(\d+)\s*\]$/;

/** Parses a transform's JSON string form (`bucket[16]`, `day` …); unknown names become `unknown`. */
export function parseTransform(s: string): Transform {
  const lower = s.trim().toLowerCase();
  if (SIMPLE.has(lower)) return { kind: lower } as Transform;
  const m = PARAM_RE.exec(lower);
  if (m) {
    const arg = Number(m[2]);
    if (!Number.isSafeInteger(arg) || arg < 1 || arg > 2147483647) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `invalid transform '${s}': parameter must be a positive int`,
      );
    }
    return m[1] === 'bucket' ? { kind: 'bucket', n: arg } : { kind: 'truncate', width: arg };
  }
  return { kind: 'unknown', text: s };
}

/** The transform's canonical JSON string form. */
export function transformToString(t: Transform): string {
  switch (t.kind) {
    case 'bucket':
      return `bucket[${t.n}]`;
    case 'truncate':
      return `truncate[${t.width}]`;
    case 'unknown':
      return t.text;
    default:
      return t.kind;
  }
}

const BUCKETABLE = new Set([
  'int',
  'long',
  'decimal',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
  'string',
  'uuid',
  'fixed',
  'binary',
]);
const TRUNCATABLE = new Set(['int', 'long', 'decimal', 'string', 'binary']);
const TIMESTAMPS = new Set(['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);

/** Whether `t` applies to a source of type `source` (spec §"Partition Transforms" table). */
export function canTransform(t: Transform, source: IcebergType): boolean {
  if (t.kind === 'void') return true;
  if (!isPrimitive(source)) return false;
  switch (t.kind) {
    case 'identity':
      return source.kind !== 'unknown';
    case 'bucket':
      return BUCKETABLE.has(source.kind);
    case 'truncate':
      return TRUNCATABLE.has(source.kind);
    case 'year':
    case 'month':
    case 'day':
      return source.kind === 'date' || TIMESTAMPS.has(source.kind);
    case 'hour':
      return TIMESTAMPS.has(source.kind);
    case 'unknown':
      return false;
  }
}

/** Result type of `t` on `source`: day ⇒ date; year/month/hour/bucket ⇒ int; others ⇒ source. */
export function transformResultType(t: Transform, source: PrimitiveType): PrimitiveType {
  switch (t.kind) {
    case 'bucket':
    case 'year':
    case 'month':
    case 'hour':
      return T.int;
    case 'day':
      return T.date;
    case 'unknown':
      return T.string; // Java's UnknownTransform reports string
    default:
      return source;
  }
}

function bad(t: Transform, source: PrimitiveType, value: unknown, why: string): FloeError {
  const shown =
    typeof value === 'bigint' ? `${value}n` : value instanceof Uint8Array ? 'bytes' : JSON.stringify(value);
  return new FloeError(
    ErrorKind.DataInvalid,
    `cannot apply ${transformToString(t)} to ${primitiveToString(source)} value ${shown}: ${why}`,
  );
}

function toBig(t: Transform, source: PrimitiveType, v: IcebergValue): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw bad(t, source, v, 'expected an integer');
}

/** Narrows a transform result to int; `input` is the source value, named in the error. */
function toInt32(t: Transform, source: PrimitiveType, input: IcebergValue, result: bigint): number {
  if (result < -2147483648n || result > 2147483647n)
    throw bad(t, source, input, `result ${result} out of int range`);
  return Number(result);
}

/** Murmur3 bucket hash per source type (spec §"Bucket Transform Details"; 8-byte rule for ints). */
function bucketHash(t: Transform, source: PrimitiveType, v: IcebergValue): number {
  switch (source.kind) {
    case 'int':
    case 'date':
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return murmur3HashLong(toBig(t, source, v));
    case 'timestamp_ns':
    case 'timestamptz_ns':
      // Hash as micros so a ns column buckets like its µs counterpart (Java floorDiv(nanos, 1000)).
      return murmur3HashLong(floorDiv(toBig(t, source, v), 1000n));
    case 'decimal':
      if (typeof v !== 'bigint') throw bad(t, source, v, 'expected the unscaled bigint');
      return murmur3Hash32(decimalToBytes(v));
    case 'string':
      if (typeof v !== 'string') throw bad(t, source, v, 'expected a string');
      return murmur3Hash32(new TextEncoder().encode(v));
    case 'uuid':
      if (v instanceof Uint8Array && v.length === 16) return murmur3Hash32(v);
      if (typeof v !== 'string') throw bad(t, source, v, 'expected a uuid string');
      return murmur3Hash32(uuidToBytes(v));
    case 'fixed':
    case 'binary':
      if (!(v instanceof Uint8Array)) throw bad(t, source, v, 'expected a Uint8Array');
      return murmur3Hash32(v);
    default:
      throw bad(t, source, v, 'type cannot be bucketed');
  }
}

/** `v − floorMod(v, w)`: truncation toward −∞ to a multiple of `w` (spec §"Truncate Transform Details"). */
function truncateInteger(v: bigint, w: bigint): bigint {
  return v - (((v % w) + w) % w);
}

/** Time units since the epoch for year/month/day/hour, with floor semantics before 1970. */
function timeTransform(
  t: Transform,
  unit: 'year' | 'month' | 'day' | 'hour',
  source: PrimitiveType,
  v: IcebergValue,
): number {
  let days: number;
  if (source.kind === 'date') {
    if (typeof v !== 'number' || !Number.isInteger(v)) throw bad(t, source, v, 'expected days as an integer');
    if (unit === 'hour') throw bad(t, source, v, 'hour does not apply to date');
    days = v;
  } else {
    const units = toBig(t, source, v);
    const perDay = source.kind.endsWith('_ns') ? NANOS_PER_DAY : MICROS_PER_DAY;
    if (unit === 'hour') return toInt32(t, source, v, floorDiv(units, perDay / 24n));
    days = toInt32(t, source, v, floorDiv(units, perDay));
  }
  if (unit === 'day') return days;
  const { year, month } = civilFromDays(days);
  return unit === 'year' ? year - 1970 : (year - 1970) * 12 + (month - 1);
}

/**
 * Applies `t` to one source value (spec §"Partition Transforms"). Null → null; `void` → null.
 * Results use the in-memory representation of `transformResultType(t, source)`.
 */
export function applyTransform(t: Transform, source: PrimitiveType, value: IcebergValue): IcebergValue {
  if (value === null || value === undefined) return null;
  if (!canTransform(t, source)) {
    throw new FloeError(
      ErrorKind.SchemaIncompatible,
      `transform ${transformToString(t)} does not apply to type ${primitiveToString(source)}`,
    );
  }
  switch (t.kind) {
    case 'identity':
      return value;
    case 'void':
      return null;
    case 'bucket':
      return (bucketHash(t, source, value) & 0x7fffffff) % t.n;
    case 'truncate':
      switch (source.kind) {
        case 'int':
          if (typeof value !== 'number' || !Number.isInteger(value))
            throw bad(t, source, value, 'expected an int');
          // Java's TruncateInteger / TruncateLong compute in int / long and wrap on overflow
          // (only for values within W of the minimum); the same result keeps partitions identical.
          return Number(BigInt.asIntN(32, truncateInteger(BigInt(value), BigInt(t.width))));
        case 'long':
        case 'decimal': {
          if (typeof value !== 'bigint') throw bad(t, source, value, 'expected a bigint');
          const r = truncateInteger(value, BigInt(t.width));
          return source.kind === 'long' ? BigInt.asIntN(64, r) : r;
        }
        case 'string': {
          if (typeof value !== 'string') throw bad(t, source, value, 'expected a string');
          // First W code points (never splits a surrogate pair).
          let end = 0;
          for (let i = 0; i < t.width && end < value.length; i++)
            end += (value.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
          return value.slice(0, end);
        }
        case 'binary':
          if (!(value instanceof Uint8Array)) throw bad(t, source, value, 'expected a Uint8Array');
          return value.length <= t.width ? value : value.slice(0, t.width);
        default:
          throw bad(t, source, value, 'type cannot be truncated');
      }
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
      return timeTransform(t, t.kind, source, value);
    case 'unknown':
      throw new FloeError(ErrorKind.FeatureUnsupported, `unknown partition transform '${t.text}'`);
  }
}

// ---- human-readable forms (Java TransformUtil) ----

const pad = (n: number | bigint, w: number): string => {
  const neg = typeof n === 'bigint' ? n < 0n : n < 0;
  const abs = String(neg ? -n : n);
  return neg ? `-${abs.padStart(w - 1, '0')}` : abs.padStart(w, '0'); // like Java %0Nd
};

/** `HH:mm:ss` plus `.SSS`/`.SSSSSS`/`.SSSSSSSSS` when non-zero (Java ISO forms). */
function humanTimeOfDay(units: bigint, perSecond: bigint): string {
  const secs = units / perSecond;
  let frac = units % perSecond;
  let s = `${pad(secs / 3600n, 2)}:${pad((secs / 60n) % 60n, 2)}:${pad(secs % 60n, 2)}`;
  if (frac === 0n) return s;
  let digits = perSecond === 1_000_000n ? 6 : 9;
  // Drop whole trailing groups of three zeros.
  while (digits > 3 && frac % 1000n === 0n) {
    frac /= 1000n;
    digits -= 3;
  }
  s += `.${pad(frac, digits)}`;
  return s;
}

function humanTimestamp(value: bigint, perSecond: bigint): string {
  const perDay = perSecond * 86_400n;
  const days = floorDiv(value, perDay);
  return `${formatDate(Number(days))}T${humanTimeOfDay(value - days * perDay, perSecond)}`;
}

function base64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

/** Java `Float/Double.toString` for typical values: integral values keep a `.0`. */
function humanFloat(v: number): string {
  if (Number.isInteger(v) && Math.abs(v) < 1e7) return Object.is(v, -0) ? '-0.0' : `${v}.0`;
  return String(v);
}

/** Human string of a value of `type` (Java `Transform.toHumanString`, identity/truncate results). */
function humanValue(type: PrimitiveType, value: IcebergValue): string {
  switch (type.kind) {
    case 'date':
      return formatDate(value as number);
    case 'time':
      return humanTimeOfDay(BigInt(value as bigint), 1_000_000n);
    case 'timestamp':
      return humanTimestamp(BigInt(value as bigint), 1_000_000n);
    case 'timestamptz':
      return `${humanTimestamp(BigInt(value as bigint), 1_000_000n)}+00:00`;
    case 'timestamp_ns':
      return humanTimestamp(BigInt(value as bigint), 1_000_000_000n);
    case 'timestamptz_ns':
      return `${humanTimestamp(BigInt(value as bigint), 1_000_000_000n)}+00:00`;
    case 'float':
    case 'double':
      return humanFloat(value as number);
    case 'decimal':
      return formatDecimal(value as bigint, type.scale);
    case 'fixed':
    case 'binary':
      return base64(value as Uint8Array);
    default:
      return String(value);
  }
}

/**
 * Human-readable partition value used in data file paths (Java `toHumanString`): year `yyyy`,
 * month `yyyy-MM`, day `yyyy-MM-dd`, hour `yyyy-MM-dd-HH`, null `null`, bucket as decimal,
 * timestamps ISO-8601 (`+00:00` for tz), binary/fixed as base64.
 */
export function partitionValueToPath(t: Transform, resultType: PrimitiveType, value: IcebergValue): string {
  if (value === null || value === undefined) return 'null';
  switch (t.kind) {
    case 'year':
      return pad(1970 + (value as number), 4);
    case 'month': {
      const m = value as number;
      const y = 1970 + Math.floor(m / 12);
      return `${pad(y, 4)}-${pad(m - (y - 1970) * 12 + 1, 2)}`;
    }
    case 'day':
      return formatDate(value as number);
    case 'hour': {
      const h = value as number;
      const days = Math.floor(h / 24);
      const { year, month, day } = civilFromDays(days);
      return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}-${pad(h - days * 24, 2)}`;
    }
    case 'bucket':
      return String(value);
    default:
      return humanValue(resultType, value);
  }
}

/** Java's default partition field name (`PartitionSpec.Builder`). */
export function defaultPartitionFieldName(t: Transform, sourceName: string): string {
  switch (t.kind) {
    case 'identity':
      return sourceName;
    case 'bucket':
      return `${sourceName}_bucket`;
    case 'truncate':
      return `${sourceName}_trunc`;
    case 'void':
      return `${sourceName}_null`;
    case 'unknown':
      return `${sourceName}_${t.text.replace(/[^A-Za-z0-9_]/g, '_')}`;
    default:
      return `${sourceName}_${t.kind}`;
  }
}
