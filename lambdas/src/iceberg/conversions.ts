/**
 * Single-value conversions (spec Appendix D "Single-value serialization", §"Field-level Metrics"):
 * binary encoding of bounds and partition summaries, JSON encoding of defaults, bound truncation
 * and the total order used to pick min/max values.
 *
 * Values use the in-memory representation documented in `values.ts`.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { type PrimitiveType, primitiveToString } from './types.ts';
import type { IcebergValue } from './values.ts';

// ---- shared helpers ----

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const LONG_MIN = -(1n << 63n);
const LONG_MAX = (1n << 63n) - 1n;
export const MICROS_PER_DAY = 86_400_000_000n;
export const NANOS_PER_DAY = 86_400_000_000_000n;

function invalid(type: PrimitiveType, value: unknown, why: string): FloeError {
  return new FloeError(
    ErrorKind.DataInvalid,
    `invalid ${primitiveToString(type)} value ${describe(value)}: ${why}`,
    { context: { type: primitiveToString(type) } },
  );
}

function describe(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `Uint8Array(${v.length})`;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  return String(v);
}

/** Floor division for bigints (BigInt `/` truncates toward zero). */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** Floor modulo for bigints: result has the sign of the divisor. */
export function floorMod(a: bigint, b: bigint): bigint {
  return a - floorDiv(a, b) * b;
}

function asInt(type: PrimitiveType, v: IcebergValue): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < INT_MIN || v > INT_MAX) {
    throw invalid(type, v, 'expected a 32-bit integer number');
  }
  return v;
}

/** Longs are bigints; safe-integer numbers are accepted too so callers need not pre-convert. */
function asLong(type: PrimitiveType, v: IcebergValue): bigint {
  let b: bigint;
  if (typeof v === 'bigint') b = v;
  else if (typeof v === 'number' && Number.isSafeInteger(v)) b = BigInt(v);
  else throw invalid(type, v, 'expected a 64-bit integer bigint');
  if (b < LONG_MIN || b > LONG_MAX) throw invalid(type, v, 'out of 64-bit range');
  return b;
}

function asNumber(type: PrimitiveType, v: IcebergValue): number {
  if (typeof v !== 'number') throw invalid(type, v, 'expected a number');
  return v;
}

function asBytes(type: PrimitiveType, v: IcebergValue): Uint8Array {
  if (!(v instanceof Uint8Array)) throw invalid(type, v, 'expected a Uint8Array');
  return v;
}

function asString(type: PrimitiveType, v: IcebergValue): string {
  if (typeof v !== 'string') throw invalid(type, v, 'expected a string');
  return v;
}

function asBoolean(type: PrimitiveType, v: IcebergValue): boolean {
  if (typeof v !== 'boolean') throw invalid(type, v, 'expected a boolean');
  return v;
}

function checkDecimal(type: PrimitiveType & { kind: 'decimal' }, v: IcebergValue): bigint {
  if (typeof v !== 'bigint') throw invalid(type, v, 'expected the unscaled value as a bigint');
  const limit = 10n ** BigInt(type.precision);
  if (v >= limit || v <= -limit) throw invalid(type, v, `exceeds precision ${type.precision}`);
  return v;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** 16 big-endian bytes of a canonical UUID string (spec: uuid is stored big-endian). */
export function uuidToBytes(s: string): Uint8Array {
  if (!UUID_RE.test(s)) throw new FloeError(ErrorKind.DataInvalid, `invalid uuid value ${JSON.stringify(s)}`);
  const hex = s.replace(/-/g, '');
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Canonical lower-case UUID string from 16 big-endian bytes. */
export function uuidFromBytes(b: Uint8Array): string {
  const h = bytesToHex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function bytesToHex(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

function hexToBytes(type: PrimitiveType, s: string): Uint8Array {
  if (s.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(s)) throw invalid(type, s, 'expected a hex string');
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(s.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Minimal two's-complement big-endian bytes (Java `BigInteger.toByteArray`): 1420 → 05 8C. */
export function decimalToBytes(unscaled: bigint): Uint8Array {
  const le: number[] = [];
  let n = unscaled;
  for (;;) {
    const byte = Number(n & 0xffn);
    le.push(byte);
    n >>= 8n; // arithmetic shift keeps the sign
    const signBit = (byte & 0x80) !== 0;
    if ((n === 0n && !signBit) || (n === -1n && signBit)) break;
  }
  return Uint8Array.from(le.reverse());
}

/** Inverse of `decimalToBytes`; accepts any length ≥ 1 (sign-extended). */
export function decimalFromBytes(b: Uint8Array): bigint {
  let n = 0n;
  for (const x of b) n = (n << 8n) | BigInt(x);
  if (b.length > 0 && (b[0]! & 0x80) !== 0) n -= 1n << BigInt(8 * b.length);
  return n;
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

// ---- binary single-value encoding (Appendix D) ----

/**
 * Encodes one non-null value with the spec's binary single-value serialization (Appendix D),
 * as used for `lower_bounds`/`upper_bounds` and manifest-list partition summaries.
 */
export function toBinary(type: PrimitiveType, value: IcebergValue): Uint8Array {
  if (value === null || value === undefined) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `cannot encode null as a ${primitiveToString(type)} single value`,
    );
  }
  switch (type.kind) {
    case 'boolean':
      return Uint8Array.of(asBoolean(type, value) ? 1 : 0);
    case 'int':
    case 'date': {
      const out = new Uint8Array(4);
      new DataView(out.buffer).setInt32(0, asInt(type, value), true);
      return out;
    }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const out = new Uint8Array(8);
      new DataView(out.buffer).setBigInt64(0, asLong(type, value), true);
      return out;
    }
    case 'float': {
      const out = new Uint8Array(4);
      new DataView(out.buffer).setFloat32(0, asNumber(type, value), true);
      return out;
    }
    case 'double': {
      const out = new Uint8Array(8);
      new DataView(out.buffer).setFloat64(0, asNumber(type, value), true);
      return out;
    }
    case 'string':
      return utf8Encoder.encode(asString(type, value));
    case 'uuid':
      return value instanceof Uint8Array && value.length === 16
        ? value.slice()
        : uuidToBytes(asString(type, value));
    case 'fixed': {
      const b = asBytes(type, value);
      if (b.length !== type.length) throw invalid(type, value, `expected exactly ${type.length} bytes`);
      return b.slice();
    }
    case 'binary':
      return asBytes(type, value).slice();
    case 'decimal':
      return decimalToBytes(checkDecimal(type, value));
    case 'unknown':
      throw new FloeError(ErrorKind.FeatureUnsupported, 'type unknown has no single-value serialization');
  }
}

function needLength(type: PrimitiveType, bytes: Uint8Array, ...allowed: number[]): void {
  if (!allowed.includes(bytes.length)) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `invalid ${primitiveToString(type)} single value: ${bytes.length} bytes, expected ${allowed.join(' or ')}`,
    );
  }
}

/**
 * Decodes a binary single value (Appendix D). Applies the type-promotion rule for bounds written
 * before a promotion (spec §"Schema Evolution"): long with 4 bytes ⇒ int value, double with
 * 4 bytes ⇒ float value, timestamp(_ns) with 4 bytes ⇒ date value (converted to µs / ns).
 */
export function fromBinary(type: PrimitiveType, bytes: Uint8Array): IcebergValue {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (type.kind) {
    case 'boolean':
      needLength(type, bytes, 1);
      return bytes[0] !== 0;
    case 'int':
    case 'date':
      needLength(type, bytes, 4);
      return dv.getInt32(0, true);
    case 'long':
      needLength(type, bytes, 4, 8);
      return bytes.length === 4 ? BigInt(dv.getInt32(0, true)) : dv.getBigInt64(0, true);
    case 'time':
      needLength(type, bytes, 8);
      return dv.getBigInt64(0, true);
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      needLength(type, bytes, 4, 8);
      if (bytes.length === 8) return dv.getBigInt64(0, true);
      const perDay = type.kind.endsWith('_ns') ? NANOS_PER_DAY : MICROS_PER_DAY;
      return BigInt(dv.getInt32(0, true)) * perDay;
    }
    case 'float':
      needLength(type, bytes, 4);
      return dv.getFloat32(0, true);
    case 'double':
      needLength(type, bytes, 4, 8);
      return bytes.length === 4 ? dv.getFloat32(0, true) : dv.getFloat64(0, true);
    case 'string':
      try {
        return utf8Decoder.decode(bytes);
      } catch (cause) {
        throw new FloeError(ErrorKind.DataInvalid, 'invalid string single value: not valid UTF-8', { cause });
      }
    case 'uuid':
      needLength(type, bytes, 16);
      return uuidFromBytes(bytes);
    case 'fixed':
      needLength(type, bytes, type.length);
      return bytes.slice();
    case 'binary':
      return bytes.slice();
    case 'decimal':
      if (bytes.length === 0) throw invalid(type, bytes, 'empty decimal bytes');
      return decimalFromBytes(bytes);
    case 'unknown':
      throw new FloeError(ErrorKind.FeatureUnsupported, 'type unknown has no single-value serialization');
  }
}

// ---- bound truncation (spec §"Field-level Metrics"; Java UnicodeUtil / BinaryUtil) ----

/** Code-unit index just after the first `n` code points, or -1 if `s` has at most `n` code points. */
function codePointPrefixEnd(s: string, n: number): number {
  let i = 0;
  for (let count = 0; count < n; count++) {
    if (i >= s.length) return -1;
    i += (s.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
  }
  return i >= s.length ? -1 : i;
}

function checkWidth(width: number): void {
  if (!Number.isInteger(width) || width < 1) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `bound truncation width must be a positive integer, got ${width}`,
    );
  }
}

/**
 * A lower bound for `value` of at most `width` code points (string) or bytes (binary): the prefix.
 * Other types are returned unchanged.
 */
export function truncateLowerBound(type: PrimitiveType, value: IcebergValue, width = 16): IcebergValue {
  checkWidth(width);
  if (type.kind === 'string' && typeof value === 'string') {
    const end = codePointPrefixEnd(value, width);
    return end < 0 ? value : value.slice(0, end);
  }
  if (type.kind === 'binary' && value instanceof Uint8Array) {
    return value.length <= width ? value : value.slice(0, width);
  }
  return value;
}

/** Next Unicode scalar value, skipping surrogates; 0 when `cp` is the last code point. */
function incrementCodePoint(cp: number): number {
  if (cp === 0xd7ff) return 0xe000;
  if (cp === 0x10ffff) return 0;
  return cp + 1;
}

/**
 * An upper bound for `value` of at most `width` code points / bytes: the prefix with its last
 * incrementable code point (string, skipping surrogates) or byte < 0xFF (binary) incremented.
 * Returns `undefined` when no such bound exists (the bound must then be omitted).
 * Values already within `width` and other types are returned unchanged.
 */
export function truncateUpperBound(
  type: PrimitiveType,
  value: IcebergValue,
  width = 16,
): IcebergValue | undefined {
  checkWidth(width);
  if (type.kind === 'string' && typeof value === 'string') {
    const end = codePointPrefixEnd(value, width);
    if (end < 0) return value;
    // A lone surrogate is written as U+FFFD in UTF-8, so increment what will actually be stored.
    const cps = Array.from(value.slice(0, end), (c) => {
      const cp = c.codePointAt(0) ?? 0;
      return cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp;
    });
    for (let i = cps.length - 1; i >= 0; i--) {
      const next = incrementCodePoint(cps[i]!);
      if (next !== 0) return String.fromCodePoint(...cps.slice(0, i), next);
    }
    return undefined;
  }
  if (type.kind === 'binary' && value instanceof Uint8Array) {
    if (value.length <= width) return value;
    for (let i = width - 1; i >= 0; i--) {
      if (value[i]! < 0xff) {
        const out = value.slice(0, i + 1);
        out[i] = value[i]! + 1;
        return out;
      }
    }
    return undefined;
  }
  return value;
}

// ---- ordering ----

/** Compares strings by Unicode code point, which equals UTF-8 byte order. */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // At the first differing unit, full code points order correctly even across surrogate pairs.
      const cx = a.codePointAt(i) ?? x;
      const cy = b.codePointAt(i) ?? y;
      return cx < cy ? -1 : 1;
    }
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** Unsigned lexicographic byte comparison. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** IEEE totalOrder-like: -0.0 < +0.0; NaN sorts last (callers exclude NaN from bounds). */
function compareFloats(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) ? (Number.isNaN(b) ? 0 : 1) : -1;
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === 0 && b === 0) {
    const na = Object.is(a, -0);
    const nb = Object.is(b, -0);
    return na === nb ? 0 : na ? -1 : 1;
  }
  return 0;
}

function cmp<V extends number | bigint>(a: V, b: V): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The total order used for min/max metrics and partition summaries (spec §"Field-level Metrics"):
 * numbers and bigints numerically, floats with -0.0 < +0.0, strings by code point (= UTF-8 bytes),
 * uuids by their big-endian bytes, fixed/binary unsigned lexicographically, false < true.
 * Null/undefined sort first.
 */
export function compareValues(type: PrimitiveType, a: IcebergValue, b: IcebergValue): number {
  const an = a === null || a === undefined;
  const bn = b === null || b === undefined;
  if (an || bn) return an && bn ? 0 : an ? -1 : 1;
  switch (type.kind) {
    case 'boolean':
      return cmp(Number(asBoolean(type, a)), Number(asBoolean(type, b)));
    case 'int':
    case 'date':
      return cmp(asInt(type, a), asInt(type, b));
    case 'float':
    case 'double':
      return compareFloats(asNumber(type, a), asNumber(type, b));
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return cmp(asLong(type, a), asLong(type, b));
    case 'decimal':
      if (typeof a !== 'bigint' || typeof b !== 'bigint')
        throw invalid(type, typeof a !== 'bigint' ? a : b, 'expected a bigint');
      return cmp(a, b);
    case 'string':
      return compareStrings(asString(type, a), asString(type, b));
    case 'uuid':
      // Lower-case canonical hex compares like the unsigned big-endian bytes.
      return compareBytes(toBinary(type, a), toBinary(type, b));
    case 'fixed':
    case 'binary':
      return compareBytes(asBytes(type, a), asBytes(type, b));
    case 'unknown':
      throw new FloeError(ErrorKind.FeatureUnsupported, 'values of type unknown cannot be ordered');
  }
}

// ---- calendar helpers (proleptic Gregorian, Java `LocalDate`) ----

/** Civil date of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`). */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** Days since 1970-01-01 of a civil date (`days_from_civil`). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const pad = (n: number | bigint, w: number): string => String(n).padStart(w, '0');

/** Year as Java's `LocalDate` prints it: 4 digits, `+` above 9999, `-` before year 0. */
export function formatYear(year: number): string {
  if (year > 9999) return `+${year}`;
  if (year < 0) return `-${pad(-year, 4)}`;
  return pad(year, 4);
}

/** `yyyy-MM-dd` for a day count since the epoch. */
export function formatDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${formatYear(year)}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** `HH:mm:ss.ffffff` (or 9 digits) for a time of day in `perSecond` units. */
function formatTimeOfDay(units: bigint, perSecond: bigint, digits: number): string {
  const secs = units / perSecond;
  const frac = units % perSecond;
  return `${pad(secs / 3600n, 2)}:${pad((secs / 60n) % 60n, 2)}:${pad(secs % 60n, 2)}.${pad(frac, digits)}`;
}

function formatTimestamp(value: bigint, perSecond: bigint, digits: number): string {
  const perDay = perSecond * 86_400n;
  const days = floorDiv(value, perDay);
  return `${formatDate(Number(days))}T${formatTimeOfDay(floorMod(value, perDay), perSecond, digits)}`;
}

const DATE_RE = /^([+-]?\d{4,})-(\d{2})-(\d{2})$/;
const TIME_RE = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;

function parseDate(type: PrimitiveType, s: string): number {
  const m = DATE_RE.exec(s);
  if (!m) throw invalid(type, s, 'expected yyyy-MM-dd');
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = daysFromCivil(y, mo, d);
  const back = civilFromDays(days);
  if (mo < 1 || mo > 12 || back.month !== mo || back.day !== d) throw invalid(type, s, 'no such date');
  return days;
}

function parseTimeOfDay(type: PrimitiveType, s: string, digits: number): bigint {
  const m = TIME_RE.exec(s);
  if (!m) throw invalid(type, s, 'expected HH:mm:ss[.f]');
  const [h, mi, sec] = [Number(m[1]), Number(m[2]), Number(m[3] ?? '0')];
  const frac = m[4] ?? '';
  if (h > 23 || mi > 59 || sec > 59) throw invalid(type, s, 'time field out of range');
  if (frac.length > digits && !/^0*$/.test(frac.slice(digits))) {
    throw invalid(type, s, `more than ${digits} fractional digits`);
  }
  const unitsFrac = BigInt(frac.slice(0, digits).padEnd(digits, '0'));
  return BigInt(h * 3600 + mi * 60 + sec) * 10n ** BigInt(digits) + unitsFrac;
}

function parseTimestamp(type: PrimitiveType, s: string, digits: number, withZone: boolean): bigint {
  let body = s;
  if (withZone) {
    if (!s.endsWith('+00:00')) throw invalid(type, s, 'offset must be +00:00');
    body = s.slice(0, -6);
  }
  const t = body.indexOf('T');
  if (t < 0) throw invalid(type, s, 'expected yyyy-MM-ddTHH:mm:ss[.f]');
  const perDay = 86_400n * 10n ** BigInt(digits);
  return BigInt(parseDate(type, body.slice(0, t))) * perDay + parseTimeOfDay(type, body.slice(t + 1), digits);
}

// ---- JSON single-value encoding (Appendix D) ----

/** Decimal string of an unscaled value at `scale`: (1420n, 2) → "14.20". */
export function formatDecimal(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const body = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return neg ? `-${body}` : body;
}

function jsonLong(v: bigint): number | bigint {
  // Keep exactness: a bigint beyond 2^53 must be written by a lossless JSON serializer.
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

function jsonFloat(v: number): number | string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return 'Infinity';
  if (v === Number.NEGATIVE_INFINITY) return '-Infinity';
  return v;
}

/**
 * JSON single-value form (Appendix D), used for `initial-default` / `write-default`.
 * Longs come back as numbers when safe, else as bigints (serialize those losslessly).
 */
export function toJsonSingleValue(type: PrimitiveType, value: IcebergValue): unknown {
  if (value === null || value === undefined) return null;
  switch (type.kind) {
    case 'boolean':
      return asBoolean(type, value);
    case 'int':
      return asInt(type, value);
    case 'long':
      return jsonLong(asLong(type, value));
    case 'float':
    case 'double':
      return jsonFloat(asNumber(type, value));
    case 'decimal':
      return formatDecimal(checkDecimal(type, value), type.scale);
    case 'date':
      return formatDate(asInt(type, value));
    case 'time': {
      const v = asLong(type, value);
      if (v < 0n || v >= MICROS_PER_DAY) throw invalid(type, value, 'time of day out of range');
      return formatTimeOfDay(v, 1_000_000n, 6);
    }
    case 'timestamp':
      return formatTimestamp(asLong(type, value), 1_000_000n, 6);
    case 'timestamptz':
      return `${formatTimestamp(asLong(type, value), 1_000_000n, 6)}+00:00`;
    case 'timestamp_ns':
      return formatTimestamp(asLong(type, value), 1_000_000_000n, 9);
    case 'timestamptz_ns':
      return `${formatTimestamp(asLong(type, value), 1_000_000_000n, 9)}+00:00`;
    case 'string':
      return asString(type, value);
    case 'uuid':
      return uuidFromBytes(toBinary(type, value));
    case 'fixed':
    case 'binary':
      return bytesToHex(toBinary(type, value));
    case 'unknown':
      throw new FloeError(ErrorKind.FeatureUnsupported, 'type unknown has no JSON single value');
  }
}

/** Integer from a JSON number, bigint or lossless-json `LosslessNumber`-like `{ value: string }`. */
function jsonInteger(type: PrimitiveType, j: unknown): bigint {
  if (typeof j === 'bigint') return j;
  if (typeof j === 'number' && Number.isInteger(j)) return BigInt(j);
  if (j !== null && typeof j === 'object' && typeof (j as { value?: unknown }).value === 'string') {
    const s = (j as { value: string }).value;
    if (/^-?\d+$/.test(s)) return BigInt(s);
  }
  throw invalid(type, j, 'expected a JSON integer');
}

function jsonFloatValue(type: PrimitiveType, j: unknown): number {
  if (typeof j === 'number') return j;
  if (j === 'NaN') return Number.NaN;
  if (j === 'Infinity') return Number.POSITIVE_INFINITY;
  if (j === '-Infinity') return Number.NEGATIVE_INFINITY;
  if (j !== null && typeof j === 'object' && typeof (j as { value?: unknown }).value === 'string') {
    const n = Number((j as { value: string }).value);
    if (!Number.isNaN(n)) return n;
  }
  throw invalid(type, j, 'expected a JSON number');
}

function parseDecimal(type: PrimitiveType & { kind: 'decimal' }, s: string): bigint {
  const m = /^([+-]?)(\d+)(?:\.(\d*))?$/.exec(s.trim());
  if (!m) throw invalid(type, s, 'expected a decimal string such as "14.20"');
  const frac = m[3] ?? '';
  if (frac.length > type.scale) throw invalid(type, s, `more than scale ${type.scale} fractional digits`);
  const unscaled = BigInt(`${m[2]}${frac.padEnd(type.scale, '0')}`);
  return checkDecimal(type, m[1] === '-' ? -unscaled : unscaled);
}

function jsonStr(type: PrimitiveType, j: unknown): string {
  if (typeof j !== 'string') throw invalid(type, j, 'expected a JSON string');
  return j;
}

/** Parses a JSON single value (Appendix D) into the in-memory representation. */
export function fromJsonSingleValue(type: PrimitiveType, json: unknown): IcebergValue {
  if (json === null || json === undefined) return null;
  switch (type.kind) {
    case 'boolean':
      if (typeof json !== 'boolean') throw invalid(type, json, 'expected a JSON boolean');
      return json;
    case 'int': {
      const v = jsonInteger(type, json);
      return asInt(type, Number(v));
    }
    case 'long':
      return asLong(type, jsonInteger(type, json));
    case 'float':
      return Math.fround(jsonFloatValue(type, json));
    case 'double':
      return jsonFloatValue(type, json);
    case 'decimal':
      return parseDecimal(type, jsonStr(type, json));
    case 'date':
      return parseDate(type, jsonStr(type, json));
    case 'time':
      return parseTimeOfDay(type, jsonStr(type, json), 6);
    case 'timestamp':
      return parseTimestamp(type, jsonStr(type, json), 6, false);
    case 'timestamptz':
      return parseTimestamp(type, jsonStr(type, json), 6, true);
    case 'timestamp_ns':
      return parseTimestamp(type, jsonStr(type, json), 9, false);
    case 'timestamptz_ns':
      return parseTimestamp(type, jsonStr(type, json), 9, true);
    case 'string':
      return jsonStr(type, json);
    case 'uuid':
      return uuidFromBytes(uuidToBytes(jsonStr(type, json)));
    case 'fixed': {
      const b = hexToBytes(type, jsonStr(type, json));
      if (b.length !== type.length) throw invalid(type, json, `expected exactly ${type.length} bytes`);
      return b;
    }
    case 'binary':
      return hexToBytes(type, jsonStr(type, json));
    case 'unknown':
      throw new FloeError(ErrorKind.FeatureUnsupported, 'type unknown has no JSON single value');
  }
}
