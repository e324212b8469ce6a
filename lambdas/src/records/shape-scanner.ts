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
  /** `"key":` as it appears in the text. */
  readonly prefix: string;
  readonly key: string;
  readonly node: TrieNode;
}

interface TrieNode {
  readonly edges: Edge[];
  /** Shape completed at this node (the object closed here). */
  shape?: Shape;
  /** Node reached by closing the current nested object here. */
  close?: TrieNode;
}

const MAX_SAFE_DIGITS = 15;

/**
 * Scans lines into `values` / `kinds` (valid until the next scan). String values are not sliced
 * out as JS strings: their UTF-8 bytes are copied into `bytes` (`byteStart[i]..byteEnd[i]`) in the
 * same pass that checks them for escapes and control characters, which is what the Parquet writer
 * wants anyway; `stringAt(i)` gives the JS string when one is really needed.
 */
export class ShapeScanner {
  private readonly root: TrieNode = { edges: [] };
  private nextShapeId = 0;
  readonly values: (string | number | boolean | null)[] = [];
  readonly kinds: SlotKind[] = [];
  /** UTF-8 of the string slots of the last scan. */
  bytes = new Uint8Array(1 << 16);
  byteStart = new Int32Array(64);
  byteEnd = new Int32Array(64);
  private readonly charStart: number[] = [];
  private readonly charEnd: number[] = [];
  private line = '';
  private readonly maxShapes: number;
  private shapes = 0;

  constructor(options: { maxShapes?: number } = {}) {
    this.maxShapes = options.maxShapes ?? 4096;
  }

  /** The JS string of string slot `i` of the last scan. */
  stringAt(i: number): string {
    return this.line.slice(this.charStart[i], this.charEnd[i]);
  }

  /** The shape of `line`, with its values in `this.values`, or undefined: use the generic parser. */
  scan(line: string): Shape | undefined {
    this.line = line;
    const len = line.length;
    if (this.bytes.length < len * 3) this.bytes = new Uint8Array(len * 3);
    const bytes = this.bytes;
    let pos = 0;
    let i = skipWs(line, 0);
    if (line.charCodeAt(i) !== 123 /* { */) return undefined;
    i++;
    let node = this.root;
    let slot = 0;
    let depth = 1;
    let first = true;
    const values = this.values;
    const kinds = this.kinds;
    for (;;) {
      i = skipWs(line, i);
      let c = line.charCodeAt(i);
      if (c === 125 /* } */) {
        i++;
        depth--;
        if (depth === 0) break;
        if (!node.close) node.close = { edges: [] };
        node = node.close;
        first = false;
        continue;
      }
      if (!first) {
        if (c !== 44 /* , */) return undefined;
        i = skipWs(line, i + 1);
        c = line.charCodeAt(i);
      }
      if (c !== 34 /* " */) return undefined;
      // Key: try known edges first (no allocation), else read and validate it.
      let edge: Edge | undefined;
      for (const e of node.edges) {
        if (line.startsWith(e.prefix, i)) {
          edge = e;
          break;
        }
      }
      if (edge) {
        i += edge.prefix.length;
      } else {
        const end = line.indexOf('"', i + 1);
        if (end < 0) return undefined;
        const key = line.slice(i + 1, end);
        if (!isLegalColumnName(key)) return undefined;
        let j = skipWs(line, end + 1);
        if (line.charCodeAt(j) !== 58 /* : */) return undefined;
        j++;
        if (this.shapes >= this.maxShapes) return undefined;
        // A key repeated within one object is the generic parser's business (collision rules).
        if (keysBefore(node, this.root, key)) return undefined;
        edge = { prefix: line.slice(i, j), key, node: { edges: [] } };
        node.edges.push(edge);
        i = j;
      }
      node = edge.node;
      i = skipWs(line, i);
      c = line.charCodeAt(i);
      first = false;
      if (c === 123 /* { */) {
        // `{}` adds no column and never conflicts: the generic path knows those rules.
        if (line.charCodeAt(skipWs(line, i + 1)) === 125) return undefined;
        depth++;
        i++;
        first = true;
        continue;
      }
      // Primitive value into the next slot.
      if (slot >= this.byteStart.length) this.growSlots();
      if (c === 34) {
        // Copy the string's UTF-8 while checking it: a backslash (escape) or a control character
        // (invalid JSON) sends the line to the generic parser.
        const start = pos;
        let j = i + 1;
        for (;;) {
          const ch = line.charCodeAt(j);
          if (ch === 34) break;
          if (ch < 0x80) {
            if (ch < 0x20 || ch === 92) return undefined;
            bytes[pos++] = ch;
          } else if (!Number.isNaN(ch)) {
            pos = encodeUtf8(line, j, ch, bytes, pos);
            if (ch >= 0xd800 && ch <= 0xdbff && isLowSurrogate(line.charCodeAt(j + 1))) j++;
          } else return undefined; // NaN: the line ended inside the string
          j++;
        }
        values[slot] = null;
        kinds[slot] = SlotKind.String;
        this.byteStart[slot] = start;
        this.byteEnd[slot] = pos;
        this.charStart[slot] = i + 1;
        this.charEnd[slot] = j;
        i = j + 1;
      } else if (c === 116 /* t */ && line.startsWith('true', i)) {
        values[slot] = true;
        kinds[slot] = SlotKind.Bool;
        i += 4;
      } else if (c === 102 /* f */ && line.startsWith('false', i)) {
        values[slot] = false;
        kinds[slot] = SlotKind.Bool;
        i += 5;
      } else if (c === 110 /* n */ && line.startsWith('null', i)) {
        values[slot] = null;
        kinds[slot] = SlotKind.Null;
        i += 4;
      } else if (c === 91 /* [ */) {
        const j = skipWs(line, i + 1);
        if (line.charCodeAt(j) !== 93 /* ] */) return undefined;
        values[slot] = null;
        kinds[slot] = SlotKind.EmptyList;
        i = j + 1;
      } else {
        const end = scanNumber(line, i);
        if (end < 0) return undefined;
        if (numberIsInt) {
          if (end - i - (c === 45 ? 1 : 0) > MAX_SAFE_DIGITS) return undefined; // exactness: generic path
          values[slot] = numberValue; // accumulated while scanning: exact below 10^15
          kinds[slot] = SlotKind.Int;
        } else {
          values[slot] = +line.slice(i, end);
          kinds[slot] = SlotKind.Double;
        }
        i = end;
      }
      slot++;
    }
    if (i > len || skipWs(line, i) !== len) return undefined; // trailing garbage
    if (node.shape === undefined) {
      // First record of this layout: rebuild its slot paths from a walk of the trie path.
      const shape = this.buildShape(line);
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

  /** Slot paths of `line` (a line that just scanned fine), by a second, allocating pass. */
  private buildShape(line: string): Shape | undefined {
    const slots: ShapeSlot[] = [];
    const structs: string[] = [];
    const path: string[] = [];
    let i = skipWs(line, 0) + 1;
    let first = true;
    for (;;) {
      i = skipWs(line, i);
      let c = line.charCodeAt(i);
      if (c === 125) {
        i++;
        if (path.length === 0) break;
        path.pop();
        first = false;
        continue;
      }
      if (!first) {
        i = skipWs(line, i + 1);
        c = line.charCodeAt(i);
      }
      const end = line.indexOf('"', i + 1);
      const key = line.slice(i + 1, end);
      i = skipWs(line, end + 1) + 1;
      i = skipWs(line, i);
      c = line.charCodeAt(i);
      first = false;
      if (c === 123) {
        path.push(key);
        structs.push(path.join('.'));
        i++;
        first = true;
        continue;
      }
      const segments = [...path, key];
      slots.push({ path: segments.join('.'), segments });
      if (c === 34) i = line.indexOf('"', i + 1) + 1;
      else if (c === 91) i = skipWs(line, i + 1) + 1;
      else if (c === 116 || c === 110) i += 4;
      else if (c === 102) i += 5;
      else i = scanNumber(line, i);
    }
    return { id: this.nextShapeId++, slots, structs };
  }
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/**
 * Writes the UTF-8 of the non-ASCII code unit `ch` at `line[j]` (with its low surrogate when it is
 * a high one) into `out` at `pos`; a lone surrogate becomes U+FFFD, as Node's encoder does.
 */
function encodeUtf8(line: string, j: number, ch: number, out: Uint8Array, pos: number): number {
  if (ch < 0x800) {
    out[pos++] = 0xc0 | (ch >> 6);
    out[pos++] = 0x80 | (ch & 0x3f);
    return pos;
  }
  if (ch >= 0xd800 && ch <= 0xdfff) {
    const lo = line.charCodeAt(j + 1);
    if (ch <= 0xdbff && isLowSurrogate(lo)) {
      const cp = 0x10000 + ((ch - 0xd800) << 10) + (lo - 0xdc00);
      out[pos++] = 0xf0 | (cp >> 18);
      out[pos++] = 0x80 | ((cp >> 12) & 0x3f);
      out[pos++] = 0x80 | ((cp >> 6) & 0x3f);
      out[pos++] = 0x80 | (cp & 0x3f);
      return pos;
    }
    ch = 0xfffd;
  }
  out[pos++] = 0xe0 | (ch >> 12);
  out[pos++] = 0x80 | ((ch >> 6) & 0x3f);
  out[pos++] = 0x80 | (ch & 0x3f);
  return pos;
}

// Set by scanNumber: whether the last number had no fraction and no exponent, and its value then.
let numberIsInt = true;
let numberValue = 0;

/** End of a JSON number starting at `i` (RFC 8259 grammar), or -1. */
function scanNumber(s: string, i: number): number {
  const len = s.length;
  let j = i;
  const negative = s.charCodeAt(j) === 45;
  if (negative) j++;
  const d0 = s.charCodeAt(j);
  let v = 0;
  if (d0 === 48) j++;
  else if (d0 >= 49 && d0 <= 57) {
    v = d0 - 48;
    j++;
    for (let d = s.charCodeAt(j); j < len && isDigit(d); d = s.charCodeAt(++j)) v = v * 10 + (d - 48);
  } else return -1;
  numberValue = negative ? -v : v;
  numberIsInt = true;
  if (s.charCodeAt(j) === 46) {
    numberIsInt = false;
    j++;
    if (!isDigit(s.charCodeAt(j))) return -1;
    while (j < len && isDigit(s.charCodeAt(j))) j++;
  }
  const e = s.charCodeAt(j);
  if (e === 101 || e === 69) {
    numberIsInt = false;
    j++;
    const sign = s.charCodeAt(j);
    if (sign === 43 || sign === 45) j++;
    if (!isDigit(s.charCodeAt(j))) return -1;
    while (j < len && isDigit(s.charCodeAt(j))) j++;
  }
  return j;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function skipWs(s: string, i: number): number {
  if (s.charCodeAt(i) > 32) return i; // the common case: no whitespace
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) i++;
    else return i;
  }
}

/**
 * True when `key` already occurs on the trie path from the root to `node` (the record so far).
 * Conservative: the same key in an enclosing or sibling object also counts, and such records go
 * to the generic parser. Runs only when a new edge is added, so its cost does not matter.
 */
function keysBefore(node: TrieNode, root: TrieNode, key: string): boolean {
  return hasKeyOnPath(root, node, key, []);
}

function hasKeyOnPath(from: TrieNode, target: TrieNode, key: string, seen: string[]): boolean {
  if (from === target) return seen.includes(key);
  for (const e of from.edges) {
    if (reaches(e.node, target)) return hasKeyOnPath(e.node, target, key, [...seen, e.key]);
  }
  if (from.close && reaches(from.close, target)) return hasKeyOnPath(from.close, target, key, seen);
  return false;
}

function reaches(from: TrieNode, target: TrieNode): boolean {
  if (from === target) return true;
  for (const e of from.edges) if (reaches(e.node, target)) return true;
  return from.close ? reaches(from.close, target) : false;
}
