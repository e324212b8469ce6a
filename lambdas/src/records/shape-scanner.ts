/**
 * A fast path for the common NDJSON record: an object whose keys are already legal column names
 * and whose values are strings without escapes, numbers, booleans, null, `[]` or nested objects of
 * the same. Such a line is scanned into a reusable slot array without building any object; the
 * keys it carries (its *shape*) are matched against a trie of shapes seen before, so a stream of
 * a few event types costs a few `startsWith` checks per key.
 *
 * Anything else (escapes, control characters, arrays with elements, unusual keys, duplicate keys,
 * integers beyond 15 digits, invalid JSON) makes `scan` return undefined and the caller uses the
 * generic parser, which is the reference for every rule (and reports errors with offsets).
 */
import { isLegalColumnName } from '../schema/column-name.ts';
import { JsonNumberText, parseJsonRecord } from './json-line.ts';

/** What a slot holds after a scan. */
export const SlotKind = { Null: 0, String: 1, Int: 2, Double: 3, Bool: 4, EmptyList: 5 } as const;
export type SlotKind = (typeof SlotKind)[keyof typeof SlotKind];

/** One primitive position of a shape: a dotted column path. */
export interface ShapeSlot {
  readonly path: string;
  /** Path segments (struct nesting). */
  readonly segments: readonly string[];
}

/** A distinct key layout. Slots are the primitive values in document order. */
export interface Shape {
  readonly id: number;
  readonly slots: readonly ShapeSlot[];
  /** Dotted paths of the nested objects the shape contains (present in every record of it). */
  readonly structs: readonly string[];
}

interface Edge {
  /** `"key":` as it appears in the text (UTF-8). */
  readonly prefix: Uint8Array;
  readonly key: string;
  readonly node: TrieNode;
}

interface TrieNode {
  readonly edges: Edge[];
  /** Where this node was reached from, and by which key (none for a close node): the record so far. */
  readonly parent?: TrieNode;
  readonly key?: string;
  /** Shape completed at this node (the object closed here). */
  shape?: Shape;
  /** Node reached by closing the current nested object here. */
  close?: TrieNode;
}

const MAX_SAFE_DIGITS = 15;

/**
 * Scans records into `values` / `kinds` (valid until the next scan). The scan works on UTF-8
 * bytes (a file chunk, a Kinesis record): string values are not turned into JS strings at all —
 * `byteStart[i]..byteEnd[i]` locate them in `bytes`, checked for escapes, control characters and
 * valid UTF-8 in the same pass, which is what the Parquet writer wants; `stringAt(i)` decodes one
 * when a JS string is really needed (the routing value).
 */
export class ShapeScanner {
  private readonly root: TrieNode = { edges: [] };
  private nextShapeId = 0;
  readonly values: (string | number | boolean | null)[] = [];
  readonly kinds: SlotKind[] = [];
  /** The bytes the last scan read; string slots point into them. */
  bytes: Uint8Array = new Uint8Array(0);
  byteStart = new Int32Array(64);
  byteEnd = new Int32Array(64);
  private encoded = new Uint8Array(1 << 12);
  private readonly maxShapes: number;
  private shapes = 0;

  private readonly maxDepth: number;

  constructor(options: { maxShapes?: number; maxDepth?: number } = {}) {
    this.maxShapes = options.maxShapes ?? 4096;
    // Deeper records go to the generic parser, which refuses them with the guard's reason.
    this.maxDepth = options.maxDepth ?? 512;
  }

  /** The JS string of string slot `i` of the last scan. */
  stringAt(i: number): string {
    return utf8.decode(this.bytes.subarray(this.byteStart[i], this.byteEnd[i]));
  }

  /** Scans a line given as a JS string (encoded to UTF-8 first). */
  scan(line: string): Shape | undefined {
    if (this.encoded.length < line.length * 3) this.encoded = new Uint8Array(line.length * 3);
    const { written } = encoder.encodeInto(line, this.encoded);
    return this.scanBytes(this.encoded, 0, written);
  }

  /** The shape of `buf[start..end)`, with its values in `this.values`, or undefined: use the generic parser. */
  scanBytes(buf: Uint8Array, start: number, end: number): Shape | undefined {
    this.bytes = buf;
    let i = skipWs(buf, start, end);
    if (buf[i] !== 123 /* { */) return undefined;
    i++;
    let node = this.root;
    let slot = 0;
    let depth = 1;
    let first = true;
    // Keys of this record so far, built only when a new edge is added (see keysOfRecord).
    let seenKeys: Set<string> | undefined;
    const values = this.values;
    const kinds = this.kinds;
    for (;;) {
      i = skipWs(buf, i, end);
      if (i >= end) return undefined;
      let c = buf[i]!;
      if (c === 125 /* } */) {
        i++;
        depth--;
        if (depth === 0) break;
        if (!node.close) node.close = { edges: [], parent: node };
        node = node.close;
        first = false;
        continue;
      }
      if (!first) {
        if (c !== 44 /* , */) return undefined;
        i = skipWs(buf, i + 1, end);
        c = buf[i]!;
      }
      if (c !== 34 /* " */) return undefined;
      // Key: try known edges first (no allocation), else read and validate it.
      let edge: Edge | undefined;
      for (const e of node.edges) {
        if (startsWithBytes(buf, i, end, e.prefix)) {
          edge = e;
          break;
        }
      }
      if (edge) {
        i += edge.prefix.length;
        seenKeys?.add(edge.key);
      } else {
        const close = indexOfByte(buf, 34, i + 1, end);
        if (close < 0) return undefined;
        const key = latin1.decode(buf.subarray(i + 1, close));
        if (!isLegalColumnName(key)) return undefined;
        let j = skipWs(buf, close + 1, end);
        if (buf[j] !== 58 /* : */) return undefined;
        j++;
        if (this.shapes >= this.maxShapes) return undefined;
        // A key repeated within one object is the generic parser's business (collision rules).
        seenKeys ??= keysOfRecord(node);
        if (seenKeys.has(key)) return undefined;
        seenKeys.add(key);
        edge = { prefix: buf.slice(i, j), key, node: { edges: [], parent: node, key } };
        node.edges.push(edge);
        i = j;
      }
      node = edge.node;
      i = skipWs(buf, i, end);
      c = buf[i]!;
      first = false;
      if (c === 123 /* { */) {
        // `{}` adds no column and never conflicts: the generic path knows those rules.
        if (buf[skipWs(buf, i + 1, end)] === 125) return undefined;
        if (++depth > this.maxDepth) return undefined;
        i++;
        first = true;
        continue;
      }
      // Primitive value into the next slot.
      if (slot >= this.byteStart.length) this.growSlots();
      if (c === 34) {
        // Check the string in place: an escape, a control character (invalid JSON) or invalid
        // UTF-8 sends the record to the generic parser.
        let j = i + 1;
        for (;;) {
          if (j >= end) return undefined;
          const b = buf[j]!;
          if (b === 34) break;
          if (b < 0x80) {
            if (b < 0x20 || b === 92) return undefined;
            j++;
          } else {
            j = utf8Sequence(buf, j, end);
            if (j < 0) return undefined;
          }
        }
        values[slot] = null;
        kinds[slot] = SlotKind.String;
        this.byteStart[slot] = i + 1;
        this.byteEnd[slot] = j;
        i = j + 1;
      } else if (c === 116 /* t */ && startsWithBytes(buf, i, end, TRUE)) {
        values[slot] = true;
        kinds[slot] = SlotKind.Bool;
        i += 4;
      } else if (c === 102 /* f */ && startsWithBytes(buf, i, end, FALSE)) {
        values[slot] = false;
        kinds[slot] = SlotKind.Bool;
        i += 5;
      } else if (c === 110 /* n */ && startsWithBytes(buf, i, end, NULL)) {
        values[slot] = null;
        kinds[slot] = SlotKind.Null;
        i += 4;
      } else if (c === 91 /* [ */) {
        const j = skipWs(buf, i + 1, end);
        if (buf[j] !== 93 /* ] */) return undefined;
        values[slot] = null;
        kinds[slot] = SlotKind.EmptyList;
        i = j + 1;
      } else {
        const numEnd = scanNumber(buf, i, end);
        if (numEnd < 0) return undefined;
        if (numberIsInt) {
          if (numEnd - i - (c === 45 ? 1 : 0) > MAX_SAFE_DIGITS) return undefined; // exactness: generic path
          values[slot] = numberValue; // accumulated while scanning: exact below 10^15
          kinds[slot] = SlotKind.Int;
        } else {
          // Clinger's fast path: up to 15 significant digits and at most 22 fraction digits make
          // mantissa / 10^k one correctly rounded division, equal to parsing the text.
          values[slot] =
            numberFracDigits >= 0 && numberDigits <= MAX_SAFE_DIGITS && numberFracDigits <= 22
              ? (c === 45 ? -numberMantissa : numberMantissa) / POW10[numberFracDigits]!
              : +latin1.decode(buf.subarray(i, numEnd));
          // Beyond the double range (`1e400`): the generic path refuses it with a reason.
          if (!Number.isFinite(values[slot])) return undefined;
          kinds[slot] = SlotKind.Double;
        }
        i = numEnd;
      }
      slot++;
    }
    if (skipWs(buf, i, end) !== end) return undefined; // trailing garbage
    if (node.shape === undefined) {
      // First record of this layout: its slot paths come from a generic parse of the same text.
      const shape = this.buildShape(utf8.decode(buf.subarray(start, end)));
      if (!shape || shape.slots.length !== slot) return undefined;
      node.shape = shape;
      this.shapes++;
    }
    return node.shape;
  }

  private growSlots(): void {
    const n = this.byteStart.length * 2;
    const s = new Int32Array(n);
    s.set(this.byteStart);
    this.byteStart = s;
    const e = new Int32Array(n);
    e.set(this.byteEnd);
    this.byteEnd = e;
  }

  /** Slot paths of a record that just scanned fine, from the generic parser's view of it. */
  private buildShape(line: string): Shape | undefined {
    let record: unknown;
    try {
      record = parseJsonRecord(line);
    } catch {
      return undefined;
    }
    const slots: ShapeSlot[] = [];
    const structs: string[] = [];
    let textOrder = true;
    const walk = (o: Record<string, unknown>, path: string[]) => {
      for (const key of Object.keys(o)) {
        // JS objects list integer-like keys first: their order would differ from the text's.
        if (/^(0|[1-9][0-9]*)$/.test(key)) textOrder = false;
        const v = o[key];
        const segments = [...path, key];
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof JsonNumberText)) {
          structs.push(segments.join('.'));
          walk(v as Record<string, unknown>, segments);
        } else slots.push({ path: segments.join('.'), segments });
      }
    };
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
    walk(record as Record<string, unknown>, []);
    if (!textOrder) return undefined;
    return { id: this.nextShapeId++, slots, structs };
  }
}

const utf8 = new TextDecoder('utf-8');
const latin1 = new TextDecoder('latin1');
const encoder = new TextEncoder();
const TRUE = Uint8Array.of(116, 114, 117, 101);
const FALSE = Uint8Array.of(102, 97, 108, 115, 101);
const NULL = Uint8Array.of(110, 117, 108, 108);

function startsWithBytes(buf: Uint8Array, i: number, end: number, prefix: Uint8Array): boolean {
  const n = prefix.length;
  if (i + n > end) return false;
  for (let k = 0; k < n; k++) if (buf[i + k] !== prefix[k]) return false;
  return true;
}

function indexOfByte(buf: Uint8Array, b: number, from: number, end: number): number {
  const at = buf.indexOf(b, from);
  return at < 0 || at >= end ? -1 : at;
}

/** Offset of the first byte of `buf[start..end)` that is not well-formed UTF-8, or -1. */
export function invalidUtf8Offset(buf: Uint8Array, start: number, end: number): number {
  let j = start;
  while (j < end) {
    if (buf[j]! < 0x80) j++;
    else {
      const next = utf8Sequence(buf, j, end);
      if (next < 0) return j - start;
      j = next;
    }
  }
  return -1;
}

/**
 * End of the valid UTF-8 sequence starting at `buf[j]` (a byte ≥ 0x80), or -1 when it is not
 * well-formed (stray continuation, overlong form, surrogate, beyond U+10FFFF, truncated).
 */
function utf8Sequence(buf: Uint8Array, j: number, end: number): number {
  const b0 = buf[j]!;
  let need: number;
  let min: number;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    need = 1;
    min = 0x80;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    need = 2;
    min = 0x800;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    need = 3;
    min = 0x10000;
  } else return -1;
  if (j + need >= end) return -1;
  let cp = b0 & (0x3f >> need);
  for (let k = 1; k <= need; k++) {
    const b = buf[j + k]!;
    if ((b & 0xc0) !== 0x80) return -1;
    cp = (cp << 6) | (b & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return -1;
  return j + need + 1;
}

// Set by scanNumber: whether the last number had no fraction and no exponent, and its value then;
// for a plain decimal (no exponent) its digits as one integer and how many follow the point.
let numberIsInt = true;
let numberValue = 0;
let numberMantissa = 0;
let numberDigits = 0;
let numberFracDigits = -1;
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** End of a JSON number starting at `i` (RFC 8259 grammar), or -1. */
function scanNumber(s: Uint8Array, i: number, end: number): number {
  let j = i;
  const negative = s[j] === 45;
  if (negative) j++;
  const d0 = j < end ? s[j]! : -1;
  let v = 0;
  if (d0 === 48) j++;
  else if (d0 >= 49 && d0 <= 57) {
    v = d0 - 48;
    j++;
    while (j < end && isDigit(s[j]!)) v = v * 10 + (s[j++]! - 48);
  } else return -1;
  numberValue = negative ? 0 - v : v; // `-0` is the integer 0, not the double -0
  numberIsInt = true;
  numberFracDigits = -1;
  if (j < end && s[j] === 46) {
    numberIsInt = false;
    const intDigits = j - i - (negative ? 1 : 0);
    j++;
    if (!(j < end && isDigit(s[j]!))) return -1;
    let m = v;
    const fracStart = j;
    while (j < end && isDigit(s[j]!)) m = m * 10 + (s[j++]! - 48);
    numberMantissa = m;
    numberFracDigits = j - fracStart;
    // A leading 0 of the integer part is not a significant digit (m is then exact below 10^15 anyway).
    numberDigits = (v === 0 ? 0 : intDigits) + numberFracDigits;
  }
  const e = j < end ? s[j] : -1;
  if (e === 101 || e === 69) {
    numberFracDigits = -1;
    numberIsInt = false;
    j++;
    const sign = j < end ? s[j] : -1;
    if (sign === 43 || sign === 45) j++;
    if (!(j < end && isDigit(s[j]!))) return -1;
    while (j < end && isDigit(s[j]!)) j++;
  }
  return j;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function skipWs(s: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = s[i]!;
    if (c === 32 || c === 9 || c === 10 || c === 13) i++;
    else return i;
  }
  return i;
}

/**
 * The keys on the trie path from the root to `node` (the record so far). Conservative: the same
 * key in an enclosing or sibling object also counts, and such records go to the generic parser.
 * Built once per record, at its first new edge, by walking parent links: linear in the record.
 */
function keysOfRecord(node: TrieNode): Set<string> {
  const keys = new Set<string>();
  for (let n: TrieNode | undefined = node; n; n = n.parent) if (n.key !== undefined) keys.add(n.key);
  return keys;
}
