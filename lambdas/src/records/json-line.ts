/**
 * A hand-written JSON parser for event records (RFC 8259), built for the inference rules of
 * DESIGN §3: the *source text* of a number decides its type, which `JSON.parse` throws away.
 *
 * - integer literals (no fraction, no exponent) → `bigint`, exact at any size;
 * - numbers with a fraction or exponent → `number` (so `1.0` stays a double);
 * - objects → plain objects (own `__proto__` keys are stored as data, never as a prototype);
 * - arrays, strings (all escapes, surrogate pairs), `true`, `false`, `null` as usual.
 *
 * Malformed input throws `FloeError(DataInvalid)` naming the UTF-8 byte offset and an excerpt.
 */
import { ErrorKind, FloeError } from '../errors.ts';

/** A fractional number kept with its source text (see {@link ParseOptions.exactFractions}). */
export class JsonNumberText {
  /** @param text the literal as written, e.g. `1234567890123456.78`; @param value `Number(text)` */
  constructor(
    readonly text: string,
    readonly value: number,
  ) {}
}

/** A parsed JSON value. Integers are `bigint`; see the module doc. */
export type JsonValue = null | boolean | number | bigint | string | JsonNumberText | JsonValue[] | JsonObject;
/** A parsed JSON object. */
export interface JsonObject {
  [key: string]: JsonValue;
}

export interface ParseOptions {
  /**
   * Keep fractional numbers with more than 15 significant digits as {@link JsonNumberText}, so a
   * `decimal(P,S)` column can take them exactly. Up to 15 digits a double's shortest form
   * (`String(n)`) gives back the written decimal, so plain numbers suffice there. Default false.
   */
  readonly exactFractions?: boolean;
  /** Deepest nesting of arrays and objects accepted (guards the call stack). Default 512. */
  readonly maxDepth?: number;
}

/** Significant digits a double always round-trips (DBL_DIG). */
const EXACT_DIGITS = 15;
const DEFAULT_MAX_DEPTH = 512;

// Parser state lives in module scope: parsing is synchronous and not re-entrant, and plain
// variables are what V8 optimises best in this hot loop.
let src = '';
let pos = 0;
let len = 0;
let depthLeft = 0;
let maxDepth = 0;
let keepText = false;
/** Index of the next backslash at or after `pos` (`len` when none): strings before it need no unescaping. */
let nextBackslash = 0;
/** Whether the text has any control character; if not, strings can be cut out with `indexOf`. */
let hasControl = false;

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_RE = /[\u0000-\u001f]/;

/**
 * Parses one JSON text (one NDJSON line / one Kinesis record) into a {@link JsonValue}.
 * Leading and trailing JSON whitespace is allowed; anything else after the value is an error.
 */
export function parseJsonRecord(text: string, options?: ParseOptions): JsonValue {
  src = text;
  pos = 0;
  len = text.length;
  maxDepth = options?.maxDepth ?? DEFAULT_MAX_DEPTH;
  depthLeft = maxDepth;
  keepText = options?.exactFractions === true;
  // Two native scans up front let the common string (no escapes) be found with `indexOf`
  // instead of a per-character loop: about twice as fast on event records.
  const bs = text.indexOf('\\');
  nextBackslash = bs < 0 ? len : bs;
  hasControl = CONTROL_RE.test(text);
  try {
    skipWs();
    const value = parseValue();
    skipWs();
    if (pos < len) fail('unexpected data after the JSON value');
    return value;
  } finally {
    src = ''; // don't pin a large input in memory between calls
  }
}

function skipWs(): void {
  while (pos < len) {
    const c = src.charCodeAt(pos);
    // space, \t, \n, \r are the only JSON whitespace
    if (c === 32 || c === 10 || c === 13 || c === 9) pos++;
    else return;
  }
}

function parseValue(): JsonValue {
  const c = src.charCodeAt(pos);
  switch (c) {
    case 34: // "
      return parseString();
    case 123: // {
      return parseObject();
    case 91: // [
      return parseArray();
    case 116: // t
      return literal('true', true);
    case 102: // f
      return literal('false', false);
    case 110: // n
      return literal('null', null);
    default:
      if (c === 45 || (c >= 48 && c <= 57)) return parseNumber();
      if (pos >= len) fail('unexpected end of input, expected a value');
      return fail('expected a value');
  }
}

function literal<V extends JsonValue>(word: string, value: V): V {
  if (!src.startsWith(word, pos)) fail(`invalid literal, expected '${word}'`);
  pos += word.length;
  return value;
}

function enter(): void {
  if (--depthLeft < 0) {
    // Not malformed: valid JSON beyond the configured depth (the caller names the guard).
    throw new FloeError(ErrorKind.DataInvalid, `nests deeper than ${maxDepth} levels of objects and arrays`, {
      context: { tooDeep: true, limit: maxDepth, byteOffset: utf8Length(src, pos) },
    });
  }
}

/** Whether a parse failed because the record nests deeper than `maxDepth` (a guard, not bad JSON). */
export function isTooDeep(e: unknown): boolean {
  return e instanceof FloeError && e.context.tooDeep === true;
}

function parseObject(): JsonObject {
  enter();
  pos++; // {
  const obj: JsonObject = {};
  skipWs();
  if (src.charCodeAt(pos) === 125) {
    pos++;
    depthLeft++;
    return obj;
  }
  for (;;) {
    if (src.charCodeAt(pos) !== 34) fail(pos >= len ? 'unterminated object' : 'expected a string key');
    const key = parseString();
    skipWs();
    if (src.charCodeAt(pos) !== 58) fail("expected ':' after the key");
    pos++;
    skipWs();
    const value = parseValue();
    // `obj.__proto__ = v` would replace the prototype; JSON.parse makes it an own property too.
    if (key === '__proto__') {
      Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
    } else {
      obj[key] = value;
    }
    skipWs();
    const c = src.charCodeAt(pos);
    if (c === 44) {
      pos++;
      skipWs();
      continue;
    }
    if (c === 125) {
      pos++;
      depthLeft++;
      return obj;
    }
    fail(pos >= len ? 'unterminated object' : "expected ',' or '}'");
  }
}

function parseArray(): JsonValue[] {
  enter();
  pos++; // [
  const arr: JsonValue[] = [];
  skipWs();
  if (src.charCodeAt(pos) === 93) {
    pos++;
    depthLeft++;
    return arr;
  }
  for (;;) {
    arr.push(parseValue());
    skipWs();
    const c = src.charCodeAt(pos);
    if (c === 44) {
      pos++;
      skipWs();
      continue;
    }
    if (c === 93) {
      pos++;
      depthLeft++;
      return arr;
    }
    fail(pos >= len ? 'unterminated array' : "expected ',' or ']'");
  }
}

function parseString(): string {
  const start = ++pos; // past the opening quote
  if (!hasControl) {
    const end = src.indexOf('"', start);
    if (end >= 0 && end < nextBackslash) {
      pos = end + 1;
      return src.slice(start, end);
    }
  }
  for (;;) {
    const c = src.charCodeAt(pos);
    if (c === 34) {
      pos++;
      return src.slice(start, pos - 1);
    }
    if (c === 92) return parseEscapedString(start);
    // `!(c >= 32)` also catches NaN, i.e. the end of the input
    if (!(c >= 32)) fail(pos >= len ? 'unterminated string' : 'control character in string');
    pos++;
  }
}

/** The slow path once a backslash is seen: build the string in chunks. */
function parseEscapedString(start: number): string {
  let out = '';
  let chunk = start;
  for (;;) {
    const c = src.charCodeAt(pos);
    if (c === 34) {
      out += src.slice(chunk, pos);
      pos++;
      if (pos > nextBackslash) {
        const bs = src.indexOf('\\', pos);
        nextBackslash = bs < 0 ? len : bs;
      }
      return out;
    }
    if (c === 92) {
      out += src.slice(chunk, pos);
      pos++;
      out += parseEscape();
      chunk = pos;
      continue;
    }
    if (!(c >= 32)) fail(pos >= len ? 'unterminated string' : 'control character in string');
    pos++;
  }
}

function parseEscape(): string {
  const c = src.charCodeAt(pos++);
  switch (c) {
    case 34:
      return '"';
    case 92:
      return '\\';
    case 47:
      return '/';
    case 98:
      return '\b';
    case 102:
      return '\f';
    case 110:
      return '\n';
    case 114:
      return '\r';
    case 116:
      return '\t';
    case 117: {
      // \uXXXX: a UTF-16 code unit; a pair \uD83D\uDE00 is one code point. A lone surrogate is
      // legal JSON syntax but no character: it has no UTF-8 form, so a Parquet string could only
      // hold a replacement for it. Refused here, so the record is a dead letter, never altered.
      const code = hexEscape();
      if (code < 0xd800 || code > 0xdfff) return String.fromCharCode(code);
      if (code <= 0xdbff && src.charCodeAt(pos) === 92 && src.charCodeAt(pos + 1) === 117) {
        pos += 2;
        const low = hexEscape();
        if (low >= 0xdc00 && low <= 0xdfff) return String.fromCharCode(code, low);
        pos -= 6;
      }
      pos -= 6;
      return fail(`lone surrogate \\u${code.toString(16)}: not valid Unicode`);
    }
    default:
      pos--;
      return fail(pos >= len ? 'unterminated string' : 'invalid escape sequence');
  }
}

/** The 4 hex digits of a `\\u` escape at `pos` (advanced past them). */
function hexEscape(): number {
  let code = 0;
  for (let i = 0; i < 4; i++) {
    const h = hexValue(src.charCodeAt(pos + i));
    if (h < 0) {
      pos += i;
      fail('invalid \\u escape, expected 4 hex digits');
    }
    code = code * 16 + h;
  }
  pos += 4;
  return code;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

function parseNumber(): bigint | number | JsonNumberText {
  const start = pos;
  const negative = src.charCodeAt(pos) === 45;
  if (negative) pos++;
  let c = src.charCodeAt(pos);
  let acc = 0;
  let sig = 0; // significant digits seen so far (leading zeros excluded)
  if (c === 48) {
    pos++;
    c = src.charCodeAt(pos);
    if (c >= 48 && c <= 57) fail('leading zeros are not allowed');
  } else if (c >= 49 && c <= 57) {
    do {
      acc = acc * 10 + (c - 48);
      sig++;
      c = src.charCodeAt(++pos);
    } while (c >= 48 && c <= 57);
  } else {
    fail('invalid number, expected a digit');
  }
  let integral = true;
  if (c === 46) {
    integral = false;
    c = src.charCodeAt(++pos);
    if (!(c >= 48 && c <= 57)) fail('invalid number, expected a digit after the decimal point');
    do {
      if (sig > 0 || c !== 48) sig++;
      c = src.charCodeAt(++pos);
    } while (c >= 48 && c <= 57);
  }
  if (c === 101 || c === 69) {
    integral = false;
    c = src.charCodeAt(++pos);
    if (c === 43 || c === 45) c = src.charCodeAt(++pos);
    if (!(c >= 48 && c <= 57)) fail('invalid number, expected a digit in the exponent');
    do c = src.charCodeAt(++pos);
    while (c >= 48 && c <= 57);
  }
  if (integral) {
    // Up to 15 digits the running double is exact; beyond, let BigInt read every digit.
    if (sig <= EXACT_DIGITS) return BigInt(negative ? -acc : acc);
    return BigInt(src.slice(start, pos));
  }
  const text = src.slice(start, pos);
  const value = Number(text);
  if (keepText && sig > EXACT_DIGITS) return new JsonNumberText(text, value);
  return value;
}

function fail(message: string): never {
  const at = Math.min(pos, len);
  const from = Math.max(0, at - 20);
  const excerpt = `${from > 0 ? '…' : ''}${src.slice(from, at)}⟨here⟩${src.slice(at, at + 20)}${at + 20 < len ? '…' : ''}`;
  const byteOffset = utf8Length(src, at);
  throw new FloeError(
    ErrorKind.DataInvalid,
    `invalid JSON at byte ${byteOffset}: ${message} near '${excerpt}'`,
    {
      context: { byteOffset, charOffset: at, excerpt },
    },
  );
}

/** UTF-8 length of `s.slice(0, end)` (only computed on the error path). */
function utf8Length(s: string, end: number): number {
  let n = 0;
  for (let i = 0; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** One non-blank line of an NDJSON text. */
export interface NdjsonLine {
  /** The line without its terminator (`\n` or `\r\n`). */
  readonly text: string;
  /** 1-based line number in the input, for error reports. */
  readonly line: number;
}

/**
 * Splits NDJSON text into its non-blank lines. Blank and whitespace-only lines are skipped
 * (common at the end of files); line numbers still count them.
 */
export function splitLines(text: string): NdjsonLine[] {
  const out: NdjsonLine[] = [];
  let start = 0;
  let line = 1;
  const n = text.length;
  while (start <= n) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = n;
    let stop = end;
    if (stop > start && text.charCodeAt(stop - 1) === 13) stop--;
    if (!isBlank(text, start, stop)) out.push({ text: text.slice(start, stop), line });
    start = end + 1;
    line++;
  }
  return out;
}

function isBlank(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

/**
 * Writes a parsed record back as JSON text that `parseJsonRecord` reads to the same value and the
 * same inferred types: bigints stay integers, fractional numbers keep a fraction (`1.0`, never `1`,
 * which would read back as a long), `JsonNumberText` keeps its source literal.
 */
export function formatJsonRecord(v: JsonValue): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number': {
      if (!Number.isFinite(v)) return 'null';
      if (Object.is(v, -0)) return '-0.0';
      const s = String(v);
      return /[.eE]/.test(s) ? s : `${s}.0`;
    }
    default:
      break;
  }
  if (v instanceof JsonNumberText) return v.text;
  if (Array.isArray(v)) return `[${v.map(formatJsonRecord).join(',')}]`;
  const parts: string[] = [];
  for (const [k, x] of Object.entries(v as JsonObject))
    parts.push(`${JSON.stringify(k)}:${formatJsonRecord(x)}`);
  return `{${parts.join(',')}}`;
}

/** A parsed JSON object (not an array, not a kept number text). */
export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumberText);
}

/** A parsed value shown in an error message: its JSON text (bigints and number texts exact), at most 60 characters; `missing` for none. */
export function describeJson(v: JsonValue | undefined): string {
  if (v === undefined) return 'missing';
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof JsonNumberText) return v.text;
  const text =
    JSON.stringify(v, (_k, x) =>
      typeof x === 'bigint' ? x.toString() : x instanceof JsonNumberText ? x.text : x,
    ) ?? String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
