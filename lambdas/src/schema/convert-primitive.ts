/**
 * Per-type value converters: one JSON value (as `parseJsonRecord` gives it) → the in-memory
 * representation of `iceberg/values.ts` for one primitive column type. Strict by design: a value
 * that does not fit is a {@link ConvertFailure}, never coerced or dropped (DESIGN §3: conflicts
 * follow the table's `typeConflict` policy, which lives with the caller).
 *
 * | column type            | accepted JSON values                                             |
 * |------------------------|------------------------------------------------------------------|
 * | boolean                | true / false                                                     |
 * | int, long              | integers in range (also integral doubles up to 2^53: `1.0`)      |
 * | float, double          | finite numbers; integers only where exact (|i| ≤ 2^53 / 2^24)    |
 * | decimal(P,S)           | integers, numbers (exact up to 15 significant digits, or kept     |
 * |                        | text), decimal strings (`"12.50"`); never rounded                |
 * | date                   | `"yyyy-MM-dd"`                                                   |
 * | time                   | `"HH:mm:ss[.ffffff]"`                                            |
 * | timestamptz(_ns)       | ISO-8601 with `Z`/`±HH:MM`; integers if `epochUnit` is set       |
 * | timestamp(_ns)         | ISO-8601 with or without zone (zoned → UTC wall clock); integers |
 * |                        | if `epochUnit` is set                                            |
 * | string                 | strings only (an object is not silently stringified)             |
 * | uuid                   | canonical 8-4-4-4-12 hex (stored lower-case)                     |
 * | binary, fixed[L]       | standard base64 (fixed: exactly L bytes)                         |
 */
import type { PrimitiveType } from '../iceberg/types.ts';
import type { IcebergValue } from '../iceberg/values.ts';
import { JsonNumberText } from '../records/json-line.ts';
import { decimalFromBigint, decimalFromText } from './decimal-text.ts';
import { parseDate, parseTime, parseTimestamp } from './temporal.ts';

/** Thrown by converters (not an Error: no stack capture on a hot failure path). */
export class ConvertFailure {
  /** Path segments, innermost last; filled in while unwinding (`['items', '[3]', 'sku']`). */
  readonly path: string[] = [];
  constructor(
    readonly reason: string,
    readonly value: unknown,
  ) {}
}

/** A compiled converter for non-null values; throws {@link ConvertFailure}. */
export type ValueConverter = (v: unknown) => IcebergValue;

/** Options shared by all converters. */
export interface ConvertOptions {
  /** Record fields with no column: `fail` (default; never drop silently) or `ignore`. */
  readonly unknownFields?: 'fail' | 'ignore';
  /**
   * Accept integer epoch numbers for timestamp columns, in this unit. Default: rejected, because
   * the unit is ambiguous and a wrong guess lands silently in 1970 or in the far future.
   */
  readonly epochUnit?: 'seconds' | 'millis' | 'micros';
}

function fail(reason: string, v: unknown): never {
  throw new ConvertFailure(reason, v);
}

/** What a JSON value is, for messages. */
export function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof JsonNumberText) return 'number';
  if (typeof v === 'bigint') return 'integer';
  return typeof v;
}

const expected = (what: string, v: unknown): never => fail(`expected ${what}, got ${jsonKind(v)}`, v);

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
const FLOAT_MAX = 3.4028234663852886e38;

/** An integer value as bigint, or undefined if `v` is not an exact integer. */
function integerOf(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  // `1.0` or `1e3` written by the producer: integral and exactly representable, so lossless.
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : undefined;
  if (v instanceof JsonNumberText) {
    const r = decimalFromText(v.text, 38, 0);
    return r.ok ? r.unscaled : undefined;
  }
  return undefined;
}

const toBoolean: ValueConverter = (v) => (typeof v === 'boolean' ? v : expected('a boolean', v));

const toStringValue: ValueConverter = (v) => (typeof v === 'string' ? v : expected('a string', v));

const toLong: ValueConverter = (v) => {
  if (typeof v === 'bigint') return v >= LONG_MIN && v <= LONG_MAX ? v : fail('out of range for long', v);
  const i = integerOf(v);
  if (i === undefined)
    return typeof v === 'number' || v instanceof JsonNumberText
      ? fail('not an integer', v)
      : expected('an integer', v);
  return i >= LONG_MIN && i <= LONG_MAX ? i : fail('out of range for long', v);
};

const toInt: ValueConverter = (v) => {
  const i = integerOf(v);
  if (i === undefined)
    return typeof v === 'number' || v instanceof JsonNumberText
      ? fail('not an integer', v)
      : expected('an integer', v);
  const n = Number(i);
  return n >= INT_MIN && n <= INT_MAX ? n : fail('out of range for int', v);
};

// A JSON number literal means the nearest double; a literal beyond the double range (`1e400`)
// would become Infinity and an integer beyond 2^53 another integer, so both are refused.
const toDouble: ValueConverter = (v) => {
  if (typeof v === 'bigint') {
    const d = Number(v);
    return Number.isFinite(d) && BigInt(d) === v ? d : fail('has no exact double (beyond 2^53)', v);
  }
  const d = typeof v === 'number' ? v : v instanceof JsonNumberText ? v.value : expected('a number', v);
  return Number.isFinite(d) ? d : fail('is beyond the range of double', v);
};

const toFloat: ValueConverter = (v) => {
  const d = toDouble(v) as number;
  if (Math.abs(d) > FLOAT_MAX) return fail('out of range for float', v);
  return typeof v === 'bigint' && Math.fround(d) !== d ? fail('has no exact float (beyond 2^24)', v) : d;
};

function decimalConverter(precision: number, scale: number): ValueConverter {
  return (v) => {
    if (typeof v === 'bigint') {
      const u = decimalFromBigint(v, precision, scale);
      return u !== undefined
        ? u
        : fail(`needs more than ${precision} digits (decimal(${precision},${scale}))`, v);
    }
    let text: string;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return fail('not a finite number', v);
      text = String(v); // shortest round-trip text: the written literal up to 15 digits
      // More digits than a double carries: the literal may have differed; refuse, never guess.
      if (significantDigits(text) > 15) {
        return fail(
          'has more than 15 significant digits, more than a double keeps (parse with exactFractions)',
          v,
        );
      }
    } else if (v instanceof JsonNumberText) text = v.text;
    else if (typeof v === 'string') text = v.trim();
    else return expected('a number or decimal string', v);
    const r = decimalFromText(text, precision, scale);
    return r.ok ? r.unscaled : fail(r.reason, v);
  };
}

/** Significant digits of a number's text (mantissa without sign, point, leading/trailing zeros). */
function significantDigits(text: string): number {
  const e = text.search(/[eE]/);
  const mantissa = (e < 0 ? text : text.slice(0, e)).replace(/[-.]/g, '');
  return mantissa.replace(/^0+/, '').replace(/0+$/, '').length;
}

const toDate: ValueConverter = (v) => {
  if (typeof v !== 'string') return expected("a 'yyyy-MM-dd' string", v);
  const d = parseDate(v);
  return d !== undefined ? d : fail("not a valid 'yyyy-MM-dd' date", v);
};

const toTime: ValueConverter = (v) => {
  if (typeof v !== 'string') return expected("an 'HH:mm:ss' string", v);
  const t = parseTime(v);
  return t !== undefined ? t : fail("not a valid 'HH:mm:ss[.ffffff]' time", v);
};

const EPOCH_FACTOR = { seconds: 1_000_000n, millis: 1_000n, micros: 1n } as const;

function timestampConverter(
  unit: 'micros' | 'nanos',
  zoned: boolean,
  options: ConvertOptions,
): ValueConverter {
  const zone = zoned ? 'required' : 'optional';
  const epochUnit = options.epochUnit;
  const what = zoned ? 'an ISO-8601 timestamp with zone' : 'an ISO-8601 timestamp';
  return (v) => {
    if (typeof v === 'string') {
      const t = parseTimestamp(v, unit, zone);
      if (t !== undefined) return t;
      return fail(zoned ? 'not an ISO-8601 instant with zone (Z or ±HH:MM)' : 'not an ISO-8601 timestamp', v);
    }
    if (epochUnit !== undefined && (typeof v === 'bigint' || typeof v === 'number')) {
      const i = integerOf(v);
      if (i === undefined) return fail(`not an integer epoch in ${epochUnit}`, v);
      const t = i * EPOCH_FACTOR[epochUnit] * (unit === 'nanos' ? 1000n : 1n);
      return t >= LONG_MIN && t <= LONG_MAX ? t : fail('timestamp out of range', v);
    }
    return expected(what, v);
  };
}

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const toUuid: ValueConverter = (v) => {
  if (typeof v !== 'string') return expected('a UUID string', v);
  return UUID_RE.test(v) ? v.toLowerCase() : fail('not a canonical UUID', v);
};

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < B64.length; i++) B64_VALUE[B64.charCodeAt(i)] = i;

/** Strict standard base64 (padding required) → bytes, or undefined. */
export function decodeBase64(s: string): Uint8Array | undefined {
  if (s.length % 4 !== 0) return undefined;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  const out = new Uint8Array((s.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < s.length; i += 4) {
    let acc = 0;
    for (let j = 0; j < 4; j++) {
      const c = s.charCodeAt(i + j);
      const isPad = c === 61 && i + j >= s.length - pad;
      const d = isPad ? 0 : c < 128 ? B64_VALUE[c]! : -1;
      if (d < 0) return undefined;
      acc = acc * 64 + d;
    }
    if (o < out.length) out[o++] = (acc >> 16) & 0xff;
    if (o < out.length) out[o++] = (acc >> 8) & 0xff;
    if (o < out.length) out[o++] = acc & 0xff;
  }
  return out;
}

function binaryConverter(length: number | undefined): ValueConverter {
  return (v) => {
    if (typeof v !== 'string') return expected('a base64 string', v);
    const bytes = decodeBase64(v);
    if (bytes === undefined) return fail('not valid base64', v);
    if (length !== undefined && bytes.length !== length)
      return fail(`expected ${length} bytes, got ${bytes.length}`, v);
    return bytes;
  };
}

/** The converter for one primitive column type. */
export function primitiveConverter(t: PrimitiveType, options: ConvertOptions): ValueConverter {
  switch (t.kind) {
    case 'boolean':
      return toBoolean;
    case 'int':
      return toInt;
    case 'long':
      return toLong;
    case 'float':
      return toFloat;
    case 'double':
      return toDouble;
    case 'decimal':
      return decimalConverter(t.precision, t.scale);
    case 'date':
      return toDate;
    case 'time':
      return toTime;
    case 'timestamp':
      return timestampConverter('micros', false, options);
    case 'timestamptz':
      return timestampConverter('micros', true, options);
    case 'timestamp_ns':
      return timestampConverter('nanos', false, options);
    case 'timestamptz_ns':
      return timestampConverter('nanos', true, options);
    case 'string':
      return toStringValue;
    case 'uuid':
      return toUuid;
    case 'binary':
      return binaryConverter(undefined);
    case 'fixed':
      return binaryConverter(t.length);
    case 'unknown':
      return (v) => fail('a column of type unknown only holds null', v);
    default: {
      const never: never = t;
      throw new Error(`unhandled type ${JSON.stringify(never)}`);
    }
  }
}
