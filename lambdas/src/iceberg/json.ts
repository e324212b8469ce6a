/**
 * Lossless JSON for Iceberg metadata (spec Appendix C: ids and timestamps are `long`).
 *
 * Snapshot ids are random 63-bit values, so `JSON.parse` would silently round them. Integer
 * literals outside the safe range become `bigint`; everything else parses exactly as
 * `JSON.parse` would. Parsing stays on the native parser: a linear scan rewrites only the unsafe
 * integer tokens into tagged strings that are turned back into bigints afterwards.
 */
import { parse as losslessParse } from 'lossless-json';
import { ErrorKind, FloeError } from '../errors.ts';

/** Tag placed in front of an unsafe integer's digits while the native parser runs. */
const TAG = '\u0001bigint:';
/** How the tag is spelled inside JSON text. */
const TAG_JSON = '\\u0001bigint:';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * Parses JSON text. Integers outside `Number.isSafeInteger` become `bigint`; everything else
 * (fractions, exponents, safe integers, `-0`) becomes what `JSON.parse` returns.
 * Throws FloeError DataInvalid on malformed text.
 */
export function parseJson(text: string): unknown {
  const tokens = unsafeIntegerTokens(text);
  try {
    if (tokens.length === 0) return JSON.parse(text);
    // A real string could only collide with the tag if the text escapes U+0001 itself.
    if (text.includes('\\u0001')) return parseSlow(text);
    let out = '';
    let last = 0;
    for (const [start, end] of tokens) {
      out += `${text.slice(last, start)}"${TAG_JSON}${text.slice(start, end)}"`;
      last = end;
    }
    out += text.slice(last);
    return untag(JSON.parse(out));
  } catch (e) {
    if (e instanceof FloeError) throw e;
    throw new FloeError(ErrorKind.DataInvalid, `invalid JSON: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Finds the [start, end) offsets of integer literals that are JSON *values* (not object keys)
 * and do not fit a double exactly. Tracks just enough structure to know keys from values, so a
 * malformed `{123456789012345678: 1}` still fails in `JSON.parse` instead of being repaired.
 */
function unsafeIntegerTokens(text: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  // Cheap native pre-check: an unsafe integer has at least 16 digits.
  if (!/\d{16}/.test(text)) return found;
  const stack: number[] = []; // 0 = array, 1 = object
  let prev = 0; // last structural char seen: 0 (start), '[', '{', ':', ','
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = skipString(text, i);
      prev = 1; // a string token: whatever follows is not a number value position
      continue;
    }
    if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const start = i;
      let integer = true;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d >= ZERO && d <= NINE) i++;
        else if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === MINUS) {
          integer = false;
          i++;
        } else break;
      }
      const isValue =
        prev === 0 ||
        prev === 0x5b ||
        prev === 0x3a ||
        (prev === 0x2c && stack.length > 0 && stack[stack.length - 1] === 0);
      if (integer && isValue && i - start >= 16) {
        const lit = text.slice(start, i);
        if (!Number.isSafeInteger(Number(lit)) && /^-?(0|[1-9]\d*)$/.test(lit)) found.push([start, i]);
      }
      prev = 1;
      continue;
    }
    if (c === 0x5b) stack.push(0);
    else if (c === 0x7b) stack.push(1);
    else if (c === 0x5d || c === 0x7d) stack.pop();
    if (c === 0x5b || c === 0x7b || c === 0x3a || c === 0x2c) prev = c;
    else if (c > 0x20) prev = 1; // true/false/null letters, closing brackets
    i++;
  }
  return found;
}

/** Index just past the string starting at `i` (which holds a quote). */
function skipString(text: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = text.indexOf('"', j);
    if (q < 0) return text.length;
    let backslashes = 0;
    for (let k = q - 1; k > i && text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

function untag(v: unknown): unknown {
  if (typeof v === 'string') {
    return v.charCodeAt(0) === 1 && v.startsWith(TAG) ? BigInt(v.slice(TAG.length)) : v;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = untag(v[i]);
    return v;
  }
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = untag(o[k]);
  }
  return v;
}

/**
 * Rare fallback (the text itself escapes U+0001, so the tag could collide): a JS parser that
 * hands us every number literal.
 */
function parseSlow(text: string): unknown {
  return losslessParse(text, null, (lit: string) => {
    if (/^-?(0|[1-9]\d*)$/.test(lit)) {
      const n = Number(lit);
      return Number.isSafeInteger(n) ? n : BigInt(lit);
    }
    return Number(lit);
  });
}

/**
 * Serialises like `JSON.stringify(value, null, indent)`, except that bigints are written as bare
 * integer literals. `undefined`, functions and symbols are skipped in objects and become `null`
 * in arrays; non-finite numbers become `null`; `toJSON` is honoured.
 */
export function stringifyJson(value: unknown, indent?: number): string {
  // Fast path: the engine's JSON.stringify, with bigints written as marker strings through a
  // temporary BigInt.prototype.toJSON (no replacer call per value), then the markers unquoted. A
  // string of the data could look like a marker: when more markers are found than were made, the
  // slow path writes it instead.
  const proto = BigInt.prototype as unknown as { toJSON?: unknown };
  const had = Object.hasOwn(proto, 'toJSON');
  const previous = proto.toJSON;
  let markers = 0;
  proto.toJSON = function (this: bigint) {
    markers++;
    return `\u0000B${this}`;
  };
  let fast: string | undefined;
  try {
    fast = JSON.stringify(value, null, indent) as string | undefined;
  } finally {
    if (had) proto.toJSON = previous;
    else delete proto.toJSON;
  }
  if (fast === undefined) return stringifyJsonSlow(value, indent);
  if (markers === 0) return fast;
  let replaced = 0;
  const out = fast.replace(BIGINT_MARKER, (_, digits: string) => {
    replaced++;
    return digits;
  });
  // A string of the data that looks like a marker was unquoted too: write it the slow way.
  return replaced === markers ? out : stringifyJsonSlow(value, indent);
}

const BIGINT_MARKER = /"\\u0000B(-?\d+)"/g;

function stringifyJsonSlow(value: unknown, indent?: number): string {
  const gap = indent && indent > 0 ? ' '.repeat(Math.min(indent, 10)) : '';
  const out = write(value, gap, '');
  if (out === undefined) throw new FloeError(ErrorKind.DataInvalid, 'cannot serialise a top-level undefined');
  return out;
}

function write(v: unknown, gap: string, current: string): string | undefined {
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  if (v === null) return 'null';
  const inner = current + gap;
  const open = gap ? `\n${inner}` : '';
  const sep = gap ? `,\n${inner}` : ',';
  const close = gap ? `\n${current}` : '';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    const parts = v.map((x) => write(x, gap, inner) ?? 'null');
    return `[${open}${parts.join(sep)}${close}]`;
  }
  const parts: string[] = [];
  const colon = gap ? ': ' : ':';
  for (const k of Object.keys(v as object)) {
    const s = write((v as Record<string, unknown>)[k], gap, inner);
    if (s !== undefined) parts.push(JSON.stringify(k) + colon + s);
  }
  if (parts.length === 0) return '{}';
  return `{${open}${parts.join(sep)}${close}}`;
}
