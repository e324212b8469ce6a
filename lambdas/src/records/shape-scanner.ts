/**
 * A fast path for the common NDJSON record: an object whose values are strings, numbers,
 * booleans, null, `[]` or nested objects of the same. Such a line is scanned into a reusable slot
 * array without building any object; the keys it carries (its *shape*) are matched against a trie
 * of shapes seen before, so a stream of a few event types costs a few `startsWith` checks per key.
 * Keys are taken as they are written (`FL_DATE`, `userId`, `café`): each is mapped once, when its
 * trie edge is made, to its column name (`columnNameOf`); string values may hold escapes
 * (`\n`, `\"`, `\u00e9`, surrogate pairs), decoded into a scratch buffer.
 *
 * Anything else (escapes in keys, lone surrogates, control characters, arrays with elements, keys
 * without a legal column name or two keys of one object with the same column name, duplicate
 * keys, integers beyond 15 digits, invalid JSON) makes `scan` return undefined and the caller
 * uses the generic parser, which is the reference for every rule (and reports errors with offsets).
 */
import { columnNameOf } from '../schema/column-name.ts';
import { JsonNumberText, parseJsonRecord } from './json-line.ts';

/** What a slot holds after a scan. */
export const SlotKind = { Null: 0, String: 1, Int: 2, Double: 3, Bool: 4, EmptyList: 5 } as const;
export type SlotKind = (typeof SlotKind)[keyof typeof SlotKind];

/** One primitive position of a shape: a dotted column path. */
export interface ShapeSlot {
  /** Dotted column names (`payload.kind`). */
  readonly path: string;
  /** Column names along the path (struct nesting). */
  readonly segments: readonly string[];
  /** The JSON keys along the path, as written (routing and key paths name keys, not columns). */
  readonly keys: readonly string[];
}

/** A nested object of a shape. */
export interface ShapeStruct {
  /** Dotted column names. */
  readonly path: string;
  readonly segments: readonly string[];
  /** The JSON keys along the path, as written. */
  readonly keys: readonly string[];
}

/** A distinct key layout. Slots are the primitive values in document order. */
export interface Shape {
  readonly id: number;
  readonly slots: readonly ShapeSlot[];
  /** Dotted column paths of the nested objects the shape contains (present in every record of it). */
  readonly structs: readonly string[];
  /** The same nested objects with their segments and keys. */
  readonly structNodes: readonly ShapeStruct[];
}

interface Edge {
  /** `"key":` as it appears in the text (UTF-8). */
  readonly prefix: Uint8Array;
  readonly key: string;
  /** The key's column name. */
  readonly column: string;
  readonly node: TrieNode;
}

/**
 * A point in a record's layout: reached by a key (`column` set), by opening the key's value as a
 * nested object (`opens`), or by closing the current nested object (neither). Opening is a step
 * of its own, so `{"a":1,"b":{"c":2}}` and `{"a":{"b":1,"c":2}}` end at different nodes.
 */
interface TrieNode {
  readonly edges: Edge[];
  /** Where this node was reached from (the record so far). */
  readonly parent?: TrieNode;
  /** The column of the key that led here. */
  readonly column?: string;
  /** Reached by opening a nested object. */
  readonly opens?: true;
  /** Shape completed at this node (the object closed here). */
  shape?: Shape;
  /** Node reached by opening the value of the key that led here as a nested object. */
  open?: TrieNode;
  /** Node reached by closing the current nested object here. */
  close?: TrieNode;
}

const MAX_SAFE_DIGITS = 15;

/**
 * Scans records into `values` / `kinds` (valid until the next scan). The scan works on UTF-8
 * bytes (a file chunk, a Kinesis record): string values are not turned into JS strings at all —
 * `byteStart[i]..byteEnd[i]` locate them in `bytes` (or, for a string with escapes, its decoded
 * UTF-8 in `unescaped`: see `bytesOf`), checked for control characters and valid UTF-8 in the
 * same pass, which is what the Parquet writer wants; `stringAt(i)` decodes one when a JS string is
 * really needed. Every other primitive slot has its text's range in `bytes` too (numbers as
 * written: routing keys are made of them).
 */
export class ShapeScanner {
  private readonly root: TrieNode = { edges: [] };
  private nextShapeId = 0;
  /** Per slot: what it holds (a SlotKind). */
  kinds = new Uint8Array(64);
  /** Per slot: its number (booleans as 0 / 1). */
  nums = new Float64Array(64);
  /** The bytes the last scan read; string slots point into them. */
  bytes: Uint8Array = new Uint8Array(0);
  byteStart = new Int32Array(64);
  byteEnd = new Int32Array(64);
  /** Decoded UTF-8 of the last scan's strings that had escapes (slots flagged in `escaped`). */
  unescaped = new Uint8Array(1 << 10);
  /** 1 where slot i's string is in `unescaped` (valid when `hasEscapes`). */
  escaped = new Uint8Array(64);
  /** Whether the last scan decoded any escape. */
  hasEscapes = false;
  private unescapedLen = 0;
  private encoded = new Uint8Array(1 << 12);
  private readonly maxShapes: number;
  private shapes = 0;

  private readonly maxDepth: number;

  constructor(options: { maxShapes?: number; maxDepth?: number } = {}) {
    this.maxShapes = options.maxShapes ?? 4096;
    // Deeper records go to the generic parser, which refuses them with the guard's reason.
    this.maxDepth = options.maxDepth ?? 512;
  }

  /** The buffer holding slot i's bytes (`byteStart[i]..byteEnd[i]`): `bytes`, or `unescaped`. */
  bytesOf(i: number): Uint8Array {
    return this.hasEscapes && this.escaped[i] === 1 ? this.unescaped : this.bytes;
  }

  /** The JS string of string slot `i` of the last scan. */
  stringAt(i: number): string {
    return utf8.decode(this.bytesOf(i).subarray(this.byteStart[i], this.byteEnd[i]));
  }

  /** Scans a line given as a JS string (encoded to UTF-8 first). */
  scan(line: string): Shape | undefined {
    if (this.encoded.length < line.length * 3) this.encoded = new Uint8Array(line.length * 3);
    const { written } = encoder.encodeInto(line, this.encoded);
    return this.scanBytes(this.encoded, 0, written);
  }

  /** The shape of `buf[start..end)`, with its values in `kinds` / `nums`, or undefined: use the generic parser. */
  scanBytes(buf: Uint8Array, start: number, end: number): Shape | undefined {
    this.bytes = buf;
    if (this.hasEscapes) {
      this.escaped.fill(0);
      this.hasEscapes = false;
      this.unescapedLen = 0;
    }
    let i = skipWs(buf, start, end);
    if (i >= end || buf[i] !== 123 /* { */) return undefined;
    i++;
    let node = this.root;
    let slot = 0;
    let depth = 1;
    let first = true;
    // Column names of each open object so far (by depth), built only when a new edge is added
    // there (see keysOfObject); the set of an object that closed is dropped.
    let seenKeys: (Set<string> | undefined)[] | undefined;
    let kinds = this.kinds;
    let nums = this.nums;
    let bs = this.byteStart;
    let be = this.byteEnd;
    for (;;) {
      if (i >= end) return undefined;
      let c = buf[i]!;
      if (c <= 32) {
        i = skipWs(buf, i, end);
        if (i >= end) return undefined;
        c = buf[i]!;
      }
      if (c === 125 /* } */) {
        i++;
        if (seenKeys) seenKeys[depth] = undefined;
        depth--;
        if (depth === 0) break;
        if (!node.close) node.close = { edges: [], parent: node };
        node = node.close;
        first = false;
        continue;
      }
      if (!first) {
        if (c !== 44 /* , */) return undefined;
        i++;
        if (i >= end) return undefined;
        c = buf[i]!;
        if (c <= 32) {
          i = skipWs(buf, i, end);
          if (i >= end) return undefined;
          c = buf[i]!;
        }
      }
      if (c !== 34 /* " */) return undefined;
      // Key: try known edges first (no allocation), else read and validate it.
      let edge: Edge | undefined;
      const edges = node.edges;
      for (let e = 0; e < edges.length; e++) {
        const p = edges[e]!.prefix;
        const n = p.length;
        if (i + n > end) continue;
        let k = 1; // every prefix starts with the quote
        while (k < n && buf[i + k] === p[k]) k++;
        if (k === n) {
          edge = edges[e];
          break;
        }
      }
      if (edge) {
        i += edge.prefix.length;
        if (seenKeys) seenKeys[depth]?.add(edge.column);
      } else {
        const close = indexOfByte(buf, 34, i + 1, end);
        if (close < 0) return undefined;
        const key = keyText(buf, i + 1, close);
        if (key === undefined) return undefined;
        const column = columnNameOf(key);
        if (column === undefined) return undefined;
        let j = skipWs(buf, close + 1, end);
        if (j >= end || buf[j] !== 58 /* : */) return undefined;
        j++;
        if (this.shapes >= this.maxShapes) return undefined;
        // A key repeated within one object, or two keys of one column, are the generic parser's
        // business (collision rules).
        seenKeys ??= [];
        let here = seenKeys[depth];
        if (here === undefined) {
          here = keysOfObject(node);
          seenKeys[depth] = here;
        }
        if (here.has(column)) return undefined;
        here.add(column);
        edge = { prefix: buf.slice(i, j), key, column, node: { edges: [], parent: node, column } };
        node.edges.push(edge);
        i = j;
      }
      node = edge.node;
      if (i >= end) return undefined;
      c = buf[i]!;
      if (c <= 32) {
        i = skipWs(buf, i, end);
        if (i >= end) return undefined;
        c = buf[i]!;
      }
      first = false;
      if (c === 123 /* { */) {
        // `{}` adds no column and never conflicts: the generic path knows those rules.
        const next = skipWs(buf, i + 1, end);
        if (next >= end || buf[next] === 125) return undefined;
        if (++depth > this.maxDepth) return undefined;
        if (!node.open) node.open = { edges: [], parent: node, opens: true };
        node = node.open;
        i++;
        first = true;
        continue;
      }
      // Primitive value into the next slot.
      if (slot >= bs.length) {
        this.growSlots();
        kinds = this.kinds;
        nums = this.nums;
        bs = this.byteStart;
        be = this.byteEnd;
      }
      if (c === 34) {
        // Check the string in place: a control character (invalid JSON) or invalid UTF-8 sends
        // the record to the generic parser; an escape has the string decoded (`unescape`).
        let j = i + 1;
        let escaped = false;
        for (;;) {
          // Plain printable ASCII in one table lookup per byte.
          while (j < end && STRING_BYTE[buf[j]!] === 0) j++;
          if (j >= end) return undefined;
          const b = buf[j]!;
          if (b === 34) break;
          if (b < 0x80) {
            if (b !== 92) return undefined; // a control character
            j = this.unescape(buf, i + 1, j, end, slot);
            if (j < 0) return undefined;
            escaped = true;
            break;
          }
          j = utf8Sequence(buf, j, end);
          if (j < 0) return undefined;
        }
        kinds[slot] = SlotKind.String;
        if (!escaped) {
          bs[slot] = i + 1;
          be[slot] = j;
        }
        i = j + 1;
      } else if (c === 116 /* t */) {
        if (!(i + 4 <= end && buf[i + 1] === 114 && buf[i + 2] === 117 && buf[i + 3] === 101))
          return undefined;
        nums[slot] = 1;
        kinds[slot] = SlotKind.Bool;
        bs[slot] = i;
        be[slot] = i + 4;
        i += 4;
      } else if (c === 102 /* f */) {
        if (!startsWithBytes(buf, i, end, FALSE)) return undefined;
        nums[slot] = 0;
        kinds[slot] = SlotKind.Bool;
        bs[slot] = i;
        be[slot] = i + 5;
        i += 5;
      } else if (c === 110 /* n */) {
        if (!(i + 4 <= end && buf[i + 1] === 117 && buf[i + 2] === 108 && buf[i + 3] === 108))
          return undefined;
        kinds[slot] = SlotKind.Null;
        bs[slot] = i;
        be[slot] = i + 4;
        i += 4;
      } else if (c === 91 /* [ */) {
        // An empty list is a level of nesting too (as the guard counts them): deeper goes generic.
        if (depth + 1 > this.maxDepth) return undefined;
        const j = skipWs(buf, i + 1, end);
        if (j >= end || buf[j] !== 93 /* ] */) return undefined;
        kinds[slot] = SlotKind.EmptyList;
        bs[slot] = i;
        be[slot] = j + 1;
        i = j + 1;
      } else {
        const numEnd = scanNumber(buf, i, end);
        if (numEnd < 0) return undefined;
        if (numberIsInt) {
          if (numEnd - i - (c === 45 ? 1 : 0) > MAX_SAFE_DIGITS) return undefined; // exactness: generic path
          nums[slot] = numberValue; // accumulated while scanning: exact below 10^15
          kinds[slot] = SlotKind.Int;
        } else {
          // Clinger's fast path: up to 15 significant digits and at most 22 fraction digits make
          // mantissa / 10^k one correctly rounded division, equal to parsing the text.
          const v =
            numberFracDigits >= 0 && numberDigits <= MAX_SAFE_DIGITS && numberFracDigits <= 22
              ? (c === 45 ? -numberMantissa : numberMantissa) / POW10[numberFracDigits]!
              : +latin1.decode(buf.subarray(i, numEnd));
          // Beyond the double range (`1e400`): the generic path refuses it with a reason.
          if (!Number.isFinite(v)) return undefined;
          nums[slot] = v;
          kinds[slot] = SlotKind.Double;
        }
        bs[slot] = i;
        be[slot] = numEnd;
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

  /** Slot i's value as JS: a string, a number, a boolean, null (also for `[]`). */
  valueAt(i: number): string | number | boolean | null {
    switch (this.kinds[i]) {
      case SlotKind.String:
        return this.stringAt(i);
      case SlotKind.Int:
      case SlotKind.Double:
        return this.nums[i]!;
      case SlotKind.Bool:
        return this.nums[i] === 1;
      default:
        return null;
    }
  }

  private growSlots(): void {
    const n = this.byteStart.length * 2;
    const s = new Int32Array(n);
    s.set(this.byteStart);
    this.byteStart = s;
    const e = new Int32Array(n);
    e.set(this.byteEnd);
    this.byteEnd = e;
    const x = new Uint8Array(n);
    x.set(this.escaped);
    this.escaped = x;
    const k = new Uint8Array(n);
    k.set(this.kinds);
    this.kinds = k;
    const v = new Float64Array(n);
    v.set(this.nums);
    this.nums = v;
  }

  /**
   * Decodes the string whose content starts at `from` (its first escape at `at`) into
   * `unescaped` as UTF-8, and points slot `slot` at it. Returns the index of the closing quote,
   * or -1 when the string is not one the fast path takes (a lone surrogate, a control character,
   * invalid UTF-8, a bad escape, no closing quote).
   */
  private unescape(buf: Uint8Array, from: number, at: number, end: number, slot: number): number {
    // Room for the worst case: every input byte one output byte, `\uXXXX` (6) → at most 3 bytes.
    const need = this.unescapedLen + (end - from);
    if (need > this.unescaped.length) {
      const grown = new Uint8Array(Math.max(need, this.unescaped.length * 2));
      grown.set(this.unescaped.subarray(0, this.unescapedLen));
      this.unescaped = grown;
    }
    const out = this.unescaped;
    const start = this.unescapedLen;
    let o = start;
    for (let k = from; k < at; k++) out[o++] = buf[k]!;
    let j = at;
    for (;;) {
      if (j >= end) return -1;
      const b = buf[j]!;
      if (b === 34) break;
      if (b === 92) {
        if (j + 1 >= end) return -1;
        const e = buf[j + 1]!;
        j += 2;
        if (e === 34 || e === 92 || e === 47) out[o++] = e;
        else if (e === 98) out[o++] = 8;
        else if (e === 102) out[o++] = 12;
        else if (e === 110) out[o++] = 10;
        else if (e === 114) out[o++] = 13;
        else if (e === 116) out[o++] = 9;
        else if (e === 117) {
          let cp = hex4(buf, j, end);
          if (cp < 0) return -1;
          j += 4;
          if (cp >= 0xd800 && cp <= 0xdbff) {
            // A high surrogate must be followed by an escaped low one (else the generic path decides).
            if (buf[j] !== 92 || buf[j + 1] !== 117) return -1;
            const lo = hex4(buf, j + 2, end);
            if (lo < 0xdc00 || lo > 0xdfff) return -1;
            j += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) return -1;
          if (cp < 0x80) out[o++] = cp;
          else if (cp < 0x800) {
            out[o++] = 0xc0 | (cp >> 6);
            out[o++] = 0x80 | (cp & 0x3f);
          } else if (cp < 0x10000) {
            out[o++] = 0xe0 | (cp >> 12);
            out[o++] = 0x80 | ((cp >> 6) & 0x3f);
            out[o++] = 0x80 | (cp & 0x3f);
          } else {
            out[o++] = 0xf0 | (cp >> 18);
            out[o++] = 0x80 | ((cp >> 12) & 0x3f);
            out[o++] = 0x80 | ((cp >> 6) & 0x3f);
            out[o++] = 0x80 | (cp & 0x3f);
          }
        } else return -1;
      } else if (b < 0x80) {
        if (b < 0x20) return -1;
        out[o++] = b;
        j++;
      } else {
        const next = utf8Sequence(buf, j, end);
        if (next < 0) return -1;
        while (j < next) out[o++] = buf[j++]!;
      }
    }
    this.unescapedLen = o;
    this.hasEscapes = true;
    this.escaped[slot] = 1;
    this.byteStart[slot] = start;
    this.byteEnd[slot] = o;
    return j;
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
    const structNodes: ShapeStruct[] = [];
    let textOrder = true;
    const walk = (o: Record<string, unknown>, segments: string[], keys: string[]) => {
      for (const key of Object.keys(o)) {
        // JS objects list integer-like keys first: their order would differ from the text's.
        if (/^(0|[1-9][0-9]*)$/.test(key)) textOrder = false;
        const v = o[key];
        const column = columnNameOf(key);
        if (column === undefined) {
          textOrder = false;
          continue;
        }
        const segs = [...segments, column];
        const ks = [...keys, key];
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof JsonNumberText)) {
          structNodes.push({ path: segs.join('.'), segments: segs, keys: ks });
          walk(v as Record<string, unknown>, segs, ks);
        } else slots.push({ path: segs.join('.'), segments: segs, keys: ks });
      }
    };
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return undefined;
    walk(record as Record<string, unknown>, [], []);
    if (!textOrder) return undefined;
    return { id: this.nextShapeId++, slots, structs: structNodes.map((s) => s.path), structNodes };
  }
}

const utf8 = new TextDecoder('utf-8');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const latin1 = new TextDecoder('latin1');

/**
 * A key's text from its bytes `buf[from..to)` (no quotes), or undefined when it has an escape or
 * is not valid UTF-8 (the generic parser decides those).
 */
function keyText(buf: Uint8Array, from: number, to: number): string | undefined {
  let ascii = true;
  for (let k = from; k < to; k++) {
    const b = buf[k]!;
    if (b === 92 || b < 0x20) return undefined;
    if (b >= 0x80) ascii = false;
  }
  if (ascii) return latin1.decode(buf.subarray(from, to));
  try {
    return strictUtf8.decode(buf.subarray(from, to));
  } catch {
    return undefined;
  }
}

/** The value of 4 hex digits at `buf[j..j+4)`, or -1. */
function hex4(buf: Uint8Array, j: number, end: number): number {
  if (j + 4 > end) return -1;
  let v = 0;
  for (let k = 0; k < 4; k++) {
    const c = buf[j + k]!;
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}
const encoder = new TextEncoder();
const FALSE = Uint8Array.of(102, 97, 108, 115, 101);
/** 0 for the bytes a string takes as they are (printable ASCII but `"` and `\\`), 1 for the rest. */
const STRING_BYTE = new Uint8Array(256).map((_, b) =>
  b >= 0x20 && b < 0x80 && b !== 34 && b !== 92 ? 0 : 1,
);

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
 * The column names of the keys the object being scanned at `node` has so far (not those of
 * objects nested in it or around it), by walking parent links back to where it opened. Built at
 * most once per object of a record, at its first new edge: linear in the record.
 */
function keysOfObject(node: TrieNode): Set<string> {
  const keys = new Set<string>();
  let nested = 0;
  for (let n: TrieNode | undefined = node; n; n = n.parent) {
    if (n.opens) {
      if (nested === 0) break;
      nested--;
    } else if (n.column !== undefined) {
      if (nested === 0) keys.add(n.column);
    } else if (n.parent !== undefined) nested++; // a close node: an object nested in this one ended
  }
  return keys;
}
