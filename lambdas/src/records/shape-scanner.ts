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
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids raw control characters in strings; finding them is the point.
const CONTROL_OR_ESCAPE = /[\u0000-\u001f\\]/;

/** Scans lines into `values` / `kinds` (valid until the next scan). */
export class ShapeScanner {
  private readonly root: TrieNode = { edges: [] };
  private nextShapeId = 0;
  readonly values: (string | number | boolean | null)[] = [];
  readonly kinds: SlotKind[] = [];
  private readonly maxShapes: number;
  private shapes = 0;

  constructor(options: { maxShapes?: number } = {}) {
    this.maxShapes = options.maxShapes ?? 4096;
  }

  /** The shape of `line`, with its values in `this.values`, or undefined: use the generic parser. */
  scan(line: string): Shape | undefined {
    if (CONTROL_OR_ESCAPE.test(line)) return undefined;
    const len = line.length;
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
      if (c === 34) {
        const end = line.indexOf('"', i + 1);
        if (end < 0) return undefined;
        values[slot] = line.slice(i + 1, end);
        kinds[slot] = SlotKind.String;
        i = end + 1;
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
        const text = line.slice(i, end);
        if (numberIsInt) {
          if (end - i - (c === 45 ? 1 : 0) > MAX_SAFE_DIGITS) return undefined; // exactness: generic path
          values[slot] = +text;
          kinds[slot] = SlotKind.Int;
        } else {
          values[slot] = +text;
          kinds[slot] = SlotKind.Double;
        }
        i = end;
      }
      slot++;
    }
    if (skipWs(line, i) !== len) return undefined; // trailing garbage
    if (node.shape === undefined) {
      // First record of this layout: rebuild its slot paths from a walk of the trie path.
      const shape = this.buildShape(line);
      if (!shape || shape.slots.length !== slot) return undefined;
      node.shape = shape;
      this.shapes++;
    }
    return node.shape;
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

// Set by scanNumber: whether the last number had no fraction and no exponent.
let numberIsInt = true;

/** End of a JSON number starting at `i` (RFC 8259 grammar), or -1. */
function scanNumber(s: string, i: number): number {
  const len = s.length;
  let j = i;
  if (s.charCodeAt(j) === 45) j++;
  const d0 = s.charCodeAt(j);
  if (d0 === 48) j++;
  else if (d0 >= 49 && d0 <= 57) {
    j++;
    while (j < len && isDigit(s.charCodeAt(j))) j++;
  } else return -1;
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
