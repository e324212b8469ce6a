/**
 * Strict ISO-8601 parsing for dates, times and timestamps, shared by inference (is this string
 * an instant?) and conversion (its exact epoch value). One grammar for both, so a string that
 * made a column `timestamptz` always converts into it:
 *
 * - date: `yyyy-MM-dd` (a real calendar day, proleptic Gregorian);
 * - time: `HH:mm:ss[.f{1,9}]`;
 * - timestamp: `yyyy-MM-ddTHH:mm:ss[.f{1,9}][Z | ±HH:MM]` (`t`/`z` accepted as RFC 3339 allows).
 *
 * Fractions beyond the target unit (e.g. nanoseconds into a microsecond column) are truncated
 * toward the past, as Iceberg's Java and Spark writers do.
 */

import { daysFromCivil } from '../iceberg/conversions.ts';

const MICROS_PER_SECOND = 1_000_000n;
const NANOS_PER_SECOND = 1_000_000_000n;
const SECONDS_PER_DAY = 86_400;
/** |seconds| below this keep `seconds × 10^6 + micros` under 2^53. */
const SAFE_SECONDS_FOR_MICROS = 9_000_000_000;
/** Java's ZoneOffset bound. */
const MAX_OFFSET_SECONDS = 18 * 3600;

/** Days since 1970-01-01 of a proleptic Gregorian date (one implementation, in the Iceberg core). */
export { daysFromCivil };

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Value of the two ASCII digits at `i`, or -1. */
function d2(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** Days since the epoch of `yyyy-MM-dd` starting at `i`, or NaN. */
function scanDate(s: string, i: number): number {
  const hi = d2(s, i);
  const lo = d2(s, i + 2);
  if (hi < 0 || lo < 0 || s.charCodeAt(i + 4) !== 45 || s.charCodeAt(i + 7) !== 45) return Number.NaN;
  const year = hi * 100 + lo;
  const month = d2(s, i + 5);
  const day = d2(s, i + 8);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return Number.NaN;
  return daysFromCivil(year, month, day);
}

/** Days since 1970-01-01 of a `yyyy-MM-dd` string, or `undefined`. */
export function parseDate(s: string): number | undefined {
  if (s.length !== 10) return undefined;
  const days = scanDate(s, 0);
  return Number.isNaN(days) ? undefined : days;
}

// Scratch results of the last successful scanTime / scanTimestamp (synchronous, not re-entrant).
let secondOfDay = 0;
let fractionNanos = 0;
let scanEnd = 0;
let offsetSeconds = 0;
let zoned = false;

/** Scans `HH:mm:ss[.f{1,9}]` at `i`; sets secondOfDay, fractionNanos and scanEnd. */
function scanTime(s: string, i: number): boolean {
  const h = d2(s, i);
  const m = d2(s, i + 3);
  const sec = d2(s, i + 6);
  if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59) return false;
  if (s.charCodeAt(i + 2) !== 58 || s.charCodeAt(i + 5) !== 58) return false;
  secondOfDay = h * 3600 + m * 60 + sec;
  fractionNanos = 0;
  let j = i + 8;
  if (s.charCodeAt(j) === 46) {
    j++;
    let scale = 100_000_000;
    const start = j;
    for (;;) {
      const c = s.charCodeAt(j) - 48;
      if (!(c >= 0 && c <= 9)) break;
      if (j - start >= 9) return false; // more than nanosecond precision
      fractionNanos += c * scale;
      scale /= 10;
      j++;
    }
    if (j === start) return false;
  }
  scanEnd = j;
  return true;
}

/** Scans a whole timestamp string; sets the scratch fields and `zoned`. */
function scanTimestamp(s: string): number {
  if (s.length < 19) return Number.NaN;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116) return Number.NaN; // T or t
  const days = scanDate(s, 0);
  if (Number.isNaN(days) || !scanTime(s, 11)) return Number.NaN;
  let j = scanEnd;
  const c = s.charCodeAt(j);
  offsetSeconds = 0;
  zoned = true;
  if (c === 90 || c === 122) {
    j++; // Z or z
  } else if (c === 43 || c === 45) {
    const oh = d2(s, j + 1);
    const om = d2(s, j + 4);
    if (oh < 0 || om < 0 || om > 59 || s.charCodeAt(j + 3) !== 58) return Number.NaN;
    offsetSeconds = (c === 45 ? -1 : 1) * (oh * 3600 + om * 60);
    if (Math.abs(offsetSeconds) > MAX_OFFSET_SECONDS) return Number.NaN;
    j += 6;
  } else {
    zoned = false;
  }
  return j === s.length ? days : Number.NaN;
}

/** True for an ISO-8601 instant with a zone (`Z` or `±HH:MM`): what infers as `timestamptz`. */
export function isInstantString(s: string): boolean {
  return !Number.isNaN(scanTimestamp(s)) && zoned;
}

/** How a timestamp string may carry a zone. */
export type ZoneRule = 'required' | 'optional';

/**
 * Epoch value of a timestamp string in `unit`, or `undefined` if it does not parse (or has no
 * zone when `zone` is `required`). Zoned values are converted to UTC; unzoned ones are taken as
 * wall-clock time, which is what Iceberg's `timestamp` (without zone) stores.
 */
export function parseTimestamp(s: string, unit: 'micros' | 'nanos', zone: ZoneRule): bigint | undefined {
  const days = scanTimestamp(s);
  if (Number.isNaN(days) || (zone === 'required' && !zoned)) return undefined;
  const secs = days * SECONDS_PER_DAY + secondOfDay - offsetSeconds;
  if (unit === 'micros') {
    const micros = Math.floor(fractionNanos / 1000);
    // Within ±2^53 µs (years 1685–2255) the double is exact: one BigInt instead of three ops.
    if (Math.abs(secs) < SAFE_SECONDS_FOR_MICROS) return BigInt(secs * 1_000_000 + micros);
    return BigInt(secs) * MICROS_PER_SECOND + BigInt(micros);
  }
  return BigInt(secs) * NANOS_PER_SECOND + BigInt(fractionNanos);
}

/** Microseconds since midnight of `HH:mm:ss[.f]`, or `undefined`. */
export function parseTime(s: string): bigint | undefined {
  if (!scanTime(s, 0) || scanEnd !== s.length) return undefined;
  return BigInt(secondOfDay) * MICROS_PER_SECOND + BigInt(Math.floor(fractionNanos / 1000));
}

// ---- The same grammar over UTF-8 bytes (the columnar fast path keeps strings as bytes) ----------
// Mirrors d2 / scanDate / scanTime / scanTimestamp above exactly; test/unit/schema/temporal-bytes
// checks that both agree on every input.

function d2b(b: Uint8Array, i: number, end: number): number {
  if (i + 1 >= end) return -1;
  const x = b[i]! - 48;
  const y = b[i + 1]! - 48;
  return x >= 0 && x <= 9 && y >= 0 && y <= 9 ? x * 10 + y : -1;
}

function scanDateBytes(b: Uint8Array, i: number, end: number): number {
  const hi = d2b(b, i, end);
  const lo = d2b(b, i + 2, end);
  if (hi < 0 || lo < 0 || i + 7 >= end || b[i + 4] !== 45 || b[i + 7] !== 45) return Number.NaN;
  const year = hi * 100 + lo;
  const month = d2b(b, i + 5, end);
  const day = d2b(b, i + 8, end);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return Number.NaN;
  return daysFromCivil(year, month, day);
}

/** As {@link parseDate}, for the UTF-8 bytes `b[start..end)`. */
export function parseDateBytes(b: Uint8Array, start: number, end: number): number | undefined {
  if (end - start !== 10) return undefined;
  const days = scanDateBytes(b, start, end);
  return Number.isNaN(days) ? undefined : days;
}

function scanTimeBytes(b: Uint8Array, i: number, end: number): boolean {
  const h = d2b(b, i, end);
  const m = d2b(b, i + 3, end);
  const sec = d2b(b, i + 6, end);
  if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59) return false;
  if (b[i + 2] !== 58 || b[i + 5] !== 58) return false;
  secondOfDay = h * 3600 + m * 60 + sec;
  fractionNanos = 0;
  let j = i + 8;
  if (j < end && b[j] === 46) {
    j++;
    let scale = 100_000_000;
    const start = j;
    for (;;) {
      const c = j < end ? b[j]! - 48 : -1;
      if (!(c >= 0 && c <= 9)) break;
      if (j - start >= 9) return false;
      fractionNanos += c * scale;
      scale /= 10;
      j++;
    }
    if (j === start) return false;
  }
  scanEnd = j;
  return true;
}

function scanTimestampBytes(b: Uint8Array, start: number, end: number): number {
  if (end - start < 19) return Number.NaN;
  const t = b[start + 10];
  if (t !== 84 && t !== 116) return Number.NaN;
  const days = scanDateBytes(b, start, end);
  if (Number.isNaN(days) || !scanTimeBytes(b, start + 11, end)) return Number.NaN;
  let j = scanEnd;
  const c = j < end ? b[j] : -1;
  offsetSeconds = 0;
  zoned = true;
  if (c === 90 || c === 122) {
    j++;
  } else if (c === 43 || c === 45) {
    const oh = d2b(b, j + 1, end);
    const om = d2b(b, j + 4, end);
    if (oh < 0 || om < 0 || om > 59 || b[j + 3] !== 58) return Number.NaN;
    offsetSeconds = (c === 45 ? -1 : 1) * (oh * 3600 + om * 60);
    if (Math.abs(offsetSeconds) > MAX_OFFSET_SECONDS) return Number.NaN;
    j += 6;
  } else {
    zoned = false;
  }
  return j === end ? days : Number.NaN;
}

/**
 * As {@link parseTimestamp} with unit micros and a required zone, for the UTF-8 bytes
 * `b[start..end)`: the epoch microseconds of an instant, or `undefined`.
 */
/**
 * As `parseInstantMicrosBytes`, as a number: NaN when the bytes are no instant with a zone,
 * Infinity when it lies too far from the epoch for a double to hold its microseconds exactly
 * (then take the bigint one). No bigint per value: the fast path parses millions of these.
 */
export function instantMicrosNumberBytes(b: Uint8Array, start: number, end: number): number {
  const days = scanTimestampBytes(b, start, end);
  if (Number.isNaN(days) || !zoned) return Number.NaN;
  const secs = days * SECONDS_PER_DAY + secondOfDay - offsetSeconds;
  if (Math.abs(secs) >= SAFE_SECONDS_FOR_MICROS) return Number.POSITIVE_INFINITY;
  return secs * 1_000_000 + Math.floor(fractionNanos / 1000);
}

export function parseInstantMicrosBytes(b: Uint8Array, start: number, end: number): bigint | undefined {
  const days = scanTimestampBytes(b, start, end);
  if (Number.isNaN(days) || !zoned) return undefined;
  const secs = days * SECONDS_PER_DAY + secondOfDay - offsetSeconds;
  const micros = Math.floor(fractionNanos / 1000);
  if (Math.abs(secs) < SAFE_SECONDS_FOR_MICROS) return BigInt(secs * 1_000_000 + micros);
  return BigInt(secs) * MICROS_PER_SECOND + BigInt(micros);
}
