/**
 * SQL text helpers for DuckDB: identifier/string quoting, Iceberg → DuckDB types, and Iceberg values as
 * VARCHAR literals (DuckDB casts a `read_parquet` schema default from VARCHAR to the column's type).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import type { IcebergType } from '../iceberg/types.ts';

/** `"name"` with embedded quotes doubled: safe for any column or view name. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `'text'` with embedded quotes doubled. */
export function quoteString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/**
 * The DuckDB type that holds an Iceberg type. `timestamp_ns`/`timestamptz_ns` become TIMESTAMP_NS
 * (DuckDB has no zoned nanosecond type; values are UTC either way); `fixed` and `binary` become BLOB.
 */
export function duckdbType(t: IcebergType): string {
  switch (t.kind) {
    case 'boolean':
      return 'BOOLEAN';
    case 'int':
      return 'INTEGER';
    case 'long':
      return 'BIGINT';
    case 'float':
      return 'FLOAT';
    case 'double':
      return 'DOUBLE';
    case 'decimal':
      return `DECIMAL(${t.precision},${t.scale})`;
    case 'date':
      return 'DATE';
    case 'time':
      return 'TIME';
    case 'timestamp':
      return 'TIMESTAMP';
    case 'timestamptz':
      return 'TIMESTAMPTZ';
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return 'TIMESTAMP_NS';
    case 'string':
      return 'VARCHAR';
    case 'uuid':
      return 'UUID';
    case 'fixed':
    case 'binary':
      return 'BLOB';
    case 'unknown':
      return '"NULL"';
    case 'struct':
      if (t.fields.length === 0) {
        throw new FloeError(ErrorKind.FeatureUnsupported, 'DuckDB cannot represent an empty struct');
      }
      return `STRUCT(${t.fields.map((f) => `${quoteIdent(f.name)} ${duckdbType(f.type)}`).join(', ')})`;
    case 'list':
      return `${duckdbType(t.element)}[]`;
    case 'map':
      return `MAP(${duckdbType(t.key)}, ${duckdbType(t.value)})`;
  }
}

// ---- values as text DuckDB casts back ----

const MICROS_PER_DAY = 86_400_000_000n;

function pad(n: number | bigint, width: number): string {
  return String(n).padStart(width, '0');
}

/** Days since 1970-01-01 → `YYYY-MM-DD` (proleptic Gregorian, UTC). */
export function daysToIsoDate(days: number): string {
  const d = new Date(days * 86_400_000);
  const y = d.getUTCFullYear();
  const year = y < 0 ? `-${pad(-y, 4)}` : pad(y, 4);
  return `${year}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
}

/** Microseconds (or nanoseconds with `fractionDigits` 9) since midnight → `HH:MM:SS.ffffff`. */
export function timeOfDayToIso(units: bigint, fractionDigits: 6 | 9 = 6): string {
  const perSecond = fractionDigits === 6 ? 1_000_000n : 1_000_000_000n;
  const secs = units / perSecond;
  const frac = units % perSecond;
  return `${pad(secs / 3600n, 2)}:${pad((secs / 60n) % 60n, 2)}:${pad(secs % 60n, 2)}.${pad(frac, fractionDigits)}`;
}

/** Epoch microseconds (or nanoseconds) → `YYYY-MM-DDTHH:MM:SS.ffffff`, no offset. */
export function epochToIso(units: bigint, fractionDigits: 6 | 9 = 6): string {
  const perDay = fractionDigits === 6 ? MICROS_PER_DAY : MICROS_PER_DAY * 1000n;
  let days = units / perDay;
  let rest = units % perDay;
  if (rest < 0n) {
    rest += perDay;
    days -= 1n;
  }
  return `${daysToIsoDate(Number(days))}T${timeOfDayToIso(rest, fractionDigits)}`;
}

/** Unscaled decimal → `-12.34`. */
export function decimalToString(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const body = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return neg ? `-${body}` : body;
}

function bytesLiteral(b: Uint8Array): string {
  return [...b].map((x) => `\\x${x.toString(16).padStart(2, '0').toUpperCase()}`).join('');
}

function asBigInt(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new FloeError(ErrorKind.DataInvalid, `expected an integer ${what}, got ${String(v)}`);
}

/**
 * An in-memory Iceberg value (values.ts form, e.g. a partition value) as text DuckDB casts to `t`.
 * Returns undefined for null and for nested types (they default to NULL).
 */
export function valueToText(t: IcebergType, v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (v instanceof Date) {
    // Some Avro decoders surface logical dates/timestamps as Date.
    const iso = v.toISOString();
    return t.kind === 'date' ? iso.slice(0, 10) : iso;
  }
  switch (t.kind) {
    case 'struct':
    case 'list':
    case 'map':
    case 'unknown':
      return undefined;
    case 'date':
      return typeof v === 'string' ? v : daysToIsoDate(Number(v));
    case 'time':
      return typeof v === 'string' ? v : timeOfDayToIso(asBigInt(v, 'time'));
    case 'timestamp':
      return typeof v === 'string' ? v : epochToIso(asBigInt(v, 'timestamp'));
    case 'timestamptz':
      return typeof v === 'string' ? v : `${epochToIso(asBigInt(v, 'timestamptz'))}+00:00`;
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return typeof v === 'string' ? v : epochToIso(asBigInt(v, 'timestamp_ns'), 9);
    case 'decimal':
      return typeof v === 'string' ? v : decimalToString(asBigInt(v, 'decimal'), t.scale);
    case 'fixed':
    case 'binary':
      if (v instanceof Uint8Array) return bytesLiteral(v);
      if (typeof v === 'string') return bytesLiteral(hexToBytes(v)); // JSON single-value form is hex
      throw new FloeError(ErrorKind.DataInvalid, `expected bytes for ${t.kind}, got ${typeof v}`);
    default:
      return String(v);
  }
}

function hexToBytes(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    throw new FloeError(ErrorKind.DataInvalid, `invalid hex binary default '${hex}'`);
  }
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** `'text'` or `NULL` as a VARCHAR expression. */
export function varcharLiteral(text: string | undefined): string {
  return text === undefined ? 'NULL::VARCHAR' : quoteString(text);
}
