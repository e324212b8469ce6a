/**
 * A Parquet writer for columnar batches of primitive columns in structs (parquet-format: file
 * layout, v1 data pages, dictionary pages, the footer), in TypeScript: no Arrow hand-over, no
 * wasm but zstd's. The fast paths' batches go through it (`writeColumnarDataFile`); what it does
 * not take — a column of decimals, uuids, binary or fixed values, values of kind `any`, a codec
 * without a compressor here (snappy) — is written by parquet-wasm as before.
 *
 * Each column chunk is dictionary-encoded when its values repeat (numbers, strings; see
 * dictionary.ts), else PLAIN: parquet-mr's v1 choice (PLAIN_DICTIONARY pages behind a PLAIN
 * dictionary page), which every Iceberg reader reads. Measured on flights (bench/README.md):
 * parquet-wasm spent most of its time compressing PLAIN int64 and string pages; the dictionary
 * indices of the repeating columns are a few bits a row, so zstd sees ~3 × fewer bytes.
 *
 * The file is the one `writeDataFile` describes for the same rows: the same Parquet schema (field
 * ids on every column, logical types, root `table`, the Iceberg schema in `iceberg.schema`) and
 * the same manifest metrics; the differential test reads both writers' files back.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { compareBytes } from '../iceberg/conversions.ts';
import type { Schema } from '../iceberg/schema.ts';
import type { PrimitiveType } from '../iceberg/types.ts';
import { floatBounds32, floatBounds64, int32Bounds, int64Bounds } from './bounds.ts';
import { badValue } from './build-common.ts';
import type { LeafNode, PlanNode, StructNode, WritePlan } from './column-plan.ts';
import type { ColumnarBatch, ColumnarLeaf } from './columnar.ts';
import { checkArray, checkIds, checkLeafValues } from './columnar-checks.ts';
import { type CodecId, compressorFor } from './compression.ts';
import { bytesDictionary, type Dictionary, numberDictionary } from './dictionary.ts';
import { ByteSink, bitWidth, encodeConstantLevels, encodeHybrid, encodeLevels } from './encoding.ts';
import {
  type DataFileMetrics,
  finishMetrics,
  type LeafStats,
  mergeLeafStats,
  newLeafStats,
} from './metrics.ts';
import { encodeStruct, type TField, type TStruct, TType, type TValue } from './thrift-compact.ts';
import { icebergSchemaJson } from './writer.ts';

// parquet.thrift enums.
const PT = { BOOLEAN: 0, INT32: 1, INT64: 2, FLOAT: 4, DOUBLE: 5, BYTE_ARRAY: 6 } as const;
const ENC_PLAIN = 0;
const ENC_PLAIN_DICTIONARY = 2;
const ENC_RLE = 3;
const PAGE_DATA = 0;
const PAGE_DICTIONARY = 2;
const REQUIRED = 0;
const OPTIONAL = 1;
const CT_UTF8 = 0;
const CT_DATE = 6;
const CT_TIMESTAMP_MICROS = 10;

/** A data page holds at most this many rows, and about this many bytes of values. */
const PAGE_ROWS = 64 * 1024;
const PAGE_BYTES = 1024 * 1024;

const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]);
/** The page being encoded (pages are compressed, or copied, before the next one starts). */
const SINK = new ByteSink(1024 * 1024);
const utf8 = new TextEncoder();

export interface NativeWriteSettings {
  readonly codec: CodecId;
  readonly rowGroupRows: number;
  readonly metricsTruncateLength: number;
}

export interface NativeFile {
  readonly bytes: Uint8Array;
  readonly recordCount: number;
  readonly metrics: DataFileMetrics;
}

/** How a leaf's physical values are laid out, by Parquet physical type. */
type Physical = (typeof PT)[keyof typeof PT];

interface LeafType {
  readonly physical: Physical;
  readonly converted?: number;
  readonly logical?: TStruct;
}

const struct = (...fields: TField[]): TStruct => ({ kind: 'struct', fields });
const empty = (id: number): TField => ({ id, type: TType.STRUCT, value: struct() });
const i32 = (id: number, value: number): TField => ({ id, type: TType.I32, value });
const i64 = (id: number, value: number): TField => ({ id, type: TType.I64, value: BigInt(value) });
const bin = (id: number, value: Uint8Array): TField => ({ id, type: TType.BINARY, value });
const str = (id: number, value: string): TField => bin(id, utf8.encode(value));
const bool = (id: number, value: boolean): TField => ({ id, type: TType.TRUE, value });
const sub = (id: number, value: TStruct): TField => ({ id, type: TType.STRUCT, value });
const list = (id: number, elemType: number, items: TValue[]): TField => ({
  id,
  type: TType.LIST,
  value: { kind: 'list', wireType: TType.LIST, elemType, items },
});

/** LogicalType TIMESTAMP / TIME (`kind` 8 / 7) with its UTC flag and unit (2 MICROS, 3 NANOS). */
const temporal = (kind: number, utc: boolean, unit: number): TStruct =>
  struct(sub(kind, struct(bool(1, utc), sub(2, struct(empty(unit))))));

/** The Parquet type of an Iceberg primitive (as parquet-rs writes it, footer patched), or undefined. */
function leafType(t: PrimitiveType): LeafType | undefined {
  switch (t.kind) {
    case 'boolean':
      return { physical: PT.BOOLEAN };
    case 'int':
      return { physical: PT.INT32 };
    case 'long':
      return { physical: PT.INT64 };
    case 'float':
      return { physical: PT.FLOAT };
    case 'double':
      return { physical: PT.DOUBLE };
    case 'date':
      return { physical: PT.INT32, converted: CT_DATE, logical: struct(empty(6)) };
    case 'time':
      return { physical: PT.INT64, logical: temporal(7, false, 2) };
    case 'timestamp':
      return { physical: PT.INT64, logical: temporal(8, false, 2) };
    case 'timestamptz':
      return { physical: PT.INT64, converted: CT_TIMESTAMP_MICROS, logical: temporal(8, true, 2) };
    case 'timestamp_ns':
      return { physical: PT.INT64, logical: temporal(8, false, 3) };
    case 'timestamptz_ns':
      return { physical: PT.INT64, logical: temporal(8, true, 3) };
    case 'string':
      return { physical: PT.BYTE_ARRAY, converted: CT_UTF8, logical: struct(empty(1)) };
    default:
      return undefined;
  }
}

/**
 * True when `writeNative` can write the batch: every leaf of a type it writes, held in values of
 * a kind it reads (or absent: all null), and a compressor for the codec.
 */
export function canWriteNative(plan: WritePlan, batch: ColumnarBatch, codec: CodecId): boolean {
  if (compressorFor(codec) === undefined || batch.rowCount === 0) return false;
  const ok = (node: PlanNode): boolean => {
    if (node.kind === 'struct') return node.children.every(ok);
    if (node.kind !== 'leaf' || leafType(node.type) === undefined) return false;
    const kind = batch.leaves.get(node.id)?.values.kind;
    return kind === undefined || (kind !== 'any' && (kind !== 'utf8' || node.type.kind === 'string'));
  };
  return plan.columns.every(ok);
}

/**
 * Writes the batch as one Parquet file (row groups of at most `rowGroupRows` rows). The caller
 * checked `canWriteNative`.
 *
 * @throws FloeError `DataInvalid` as `writeColumnarDataFile` does (a null in a required column, an
 *   array of the wrong kind or too short, an id the schema does not have).
 */
export function writeNative(
  schema: Schema,
  plan: WritePlan,
  batch: ColumnarBatch,
  s: NativeWriteSettings,
): NativeFile {
  checkIds(schema, plan, batch);
  const n = batch.rowCount;
  checkLeaves(plan.columns, batch, n);
  const out: Uint8Array[] = [MAGIC];
  let offset = MAGIC.length;
  const stats = plan.leaves.map((l) => newLeafStats(l.id, l.type, l.path, !l.inCollection));
  const byteStats = new Map<number, { min: Uint8Array; max: Uint8Array }>();
  const columnSizes = new Map<number, bigint>();
  const rowGroups: TStruct[] = [];
  const splitOffsets: bigint[] = [];
  for (let from = 0; from < n; from += s.rowGroupRows) {
    const to = Math.min(n, from + s.rowGroupRows);
    const rgStart = offset;
    const chunks: TStruct[] = [];
    let uncompressed = 0;
    const leaves: { node: LeafNode; defs: Uint8Array | undefined; maxDef: number }[] = [];
    collectLeaves(plan.columns, batch, from, to, undefined, 0, leaves);
    for (const { node, defs, maxDef } of leaves) {
      const chunk = writeChunk(node, batch.leaves.get(node.id), from, to, defs, maxDef, s.codec, offset);
      for (const part of chunk.parts) out.push(part);
      offset += chunk.compressedSize;
      uncompressed += chunk.uncompressedSize;
      columnSizes.set(node.id, (columnSizes.get(node.id) ?? 0n) + BigInt(chunk.compressedSize));
      mergeLeafStats([stats[node.leafIndex]!], [chunk.stats]);
      if (chunk.byteBounds) mergeByteBounds(byteStats, node.id, chunk.byteBounds);
      chunks.push(chunk.meta);
    }
    splitOffsets.push(BigInt(rgStart));
    rowGroups.push(
      struct(
        list(1, TType.STRUCT, chunks),
        i64(2, uncompressed),
        i64(3, to - from),
        i64(5, rgStart),
        i64(6, offset - rgStart),
        { id: 7, type: TType.I16, value: rowGroups.length },
      ),
    );
  }
  const footer = encodeStruct(
    struct(
      i32(1, 1),
      list(2, TType.STRUCT, schemaElements(plan)),
      i64(3, n),
      list(4, TType.STRUCT, rowGroups),
      list(5, TType.STRUCT, [struct(str(1, 'iceberg.schema'), str(2, icebergSchemaJson(schema)))]),
      // parquet-mr's VersionParser reads `<app> version <v>`; unparsed, it ignores string statistics.
      str(6, 'floe version 0.1.0'),
    ),
  );
  const tail = new Uint8Array(footer.length + 8);
  tail.set(footer);
  new DataView(tail.buffer).setUint32(footer.length, footer.length, true);
  tail.set(MAGIC, footer.length + 4);
  out.push(tail);
  const bytes = concat(out, offset + tail.length);
  return {
    bytes,
    recordCount: n,
    metrics: finishMetrics(stats, { columnSizes, splitOffsets, byteStats }, s.metricsTruncateLength),
  };
}

function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// ---- schema ----

function schemaElements(plan: WritePlan): TStruct[] {
  const out: TStruct[] = [struct(str(4, 'table'), i32(5, plan.columns.length))];
  const visit = (node: PlanNode): void => {
    const rep = i32(3, node.required ? REQUIRED : OPTIONAL);
    if (node.kind === 'struct') {
      out.push(struct(rep, str(4, node.name), i32(5, node.children.length), i32(9, node.id)));
      node.children.forEach(visit);
      return;
    }
    const leaf = node as LeafNode;
    const t = leafType(leaf.type)!;
    const fields: TField[] = [i32(1, t.physical), rep, str(4, leaf.name), i32(9, leaf.id)];
    if (t.converted !== undefined) fields.push(i32(6, t.converted));
    if (t.logical !== undefined) fields.push(sub(10, t.logical));
    out.push(struct(...fields));
  };
  plan.columns.forEach(visit);
  return out;
}

// ---- checks and definition levels ----

function checkLeaves(nodes: readonly PlanNode[], batch: ColumnarBatch, n: number): void {
  for (const node of nodes) {
    if (node.kind === 'struct') {
      const own = batch.structValid?.get(node.id);
      if (own !== undefined) checkArray(node, own, Uint8Array, 'structValid', n);
      checkLeaves(node.children, batch, n);
      continue;
    }
    const values = batch.leaves.get((node as LeafNode).id);
    if (values !== undefined) checkLeafValues(node as LeafNode, values, n);
  }
}

function requiredNull(node: PlanNode, i: number): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `required column '${node.path}' is null at index ${i}`, {
    context: { column: node.path, index: i },
  });
}

/**
 * The definition levels of `node`'s rows `from..to` given its parent's (undefined: every row at
 * `parentMax`) and its own validity bytes; undefined when every row is at the node's maximum.
 */
function levelsOf(
  node: PlanNode,
  own: Uint8Array | undefined,
  from: number,
  to: number,
  parent: Uint8Array | undefined,
  parentMax: number,
): { defs: Uint8Array | undefined; max: number } {
  const max = parentMax + (node.required ? 0 : 1);
  if (own === undefined) {
    if (parent === undefined || node.required) return { defs: parent, max };
    const defs = new Uint8Array(to - from);
    for (let i = 0; i < defs.length; i++) defs[i] = parent[i] === parentMax ? max : parent[i]!;
    return { defs, max };
  }
  let defs: Uint8Array | undefined;
  for (let i = 0; i < to - from; i++) {
    const p = parent === undefined ? parentMax : parent[i]!;
    if (p < parentMax) continue;
    if (own[from + i] !== 0) continue;
    if (node.required) throw requiredNull(node, from + i);
    if (defs === undefined) {
      defs = new Uint8Array(to - from);
      for (let k = 0; k < defs.length; k++) {
        const pk = parent === undefined ? parentMax : parent[k]!;
        defs[k] = pk < parentMax ? pk : max;
      }
    }
    defs[i] = parentMax;
  }
  if (defs === undefined && parent !== undefined)
    return levelsOf(node, undefined, from, to, parent, parentMax);
  return { defs, max };
}

function collectLeaves(
  nodes: readonly PlanNode[],
  batch: ColumnarBatch,
  from: number,
  to: number,
  parent: Uint8Array | undefined,
  parentMax: number,
  out: { node: LeafNode; defs: Uint8Array | undefined; maxDef: number }[],
): void {
  for (const node of nodes) {
    if (node.kind === 'struct') {
      const { defs, max } = levelsOf(node, batch.structValid?.get(node.id), from, to, parent, parentMax);
      collectLeaves((node as StructNode).children, batch, from, to, defs, max, out);
      continue;
    }
    const leaf = node as LeafNode;
    const values = batch.leaves.get(leaf.id);
    // An absent leaf is null in every row.
    const own =
      values === undefined
        ? new Uint8Array(to)
        : values.values.kind === 'utf8'
          ? stringValidity(leaf, values.values.values, values.valid, to)
          : values.valid;
    const { defs, max } = levelsOf(leaf, own, from, to, parent, parentMax);
    out.push({ node: leaf, defs, maxDef: max });
  }
}

/** A `utf8` leaf's validity: a row is null by its validity byte, or by a null / undefined value. */
function stringValidity(
  leaf: LeafNode,
  values: readonly (string | undefined)[],
  valid: Uint8Array | undefined,
  n: number,
): Uint8Array | undefined {
  let own: Uint8Array | undefined;
  for (let i = 0; i < n; i++) {
    if (valid !== undefined && valid[i] === 0) continue;
    const v = values[i];
    if (typeof v === 'string') continue;
    if (v != null) throw badValue(leaf, v, i, 'expected a string');
    own ??= valid === undefined ? new Uint8Array(n).fill(1) : Uint8Array.from(valid.subarray(0, n));
    own[i] = 0;
  }
  return own ?? valid;
}

// ---- column chunks ----

interface Chunk {
  readonly parts: Uint8Array[];
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly meta: TStruct;
  readonly stats: LeafStats;
  readonly byteBounds: { min: Uint8Array; max: Uint8Array } | undefined;
}

/** A chunk's non-null values, dense, in one of the physical layouts. */
type Dense =
  | { readonly kind: 'words'; readonly words: Int32Array; readonly per: 1 | 2; readonly count: number }
  | { readonly kind: 'bool'; readonly values: Uint8Array; readonly count: number }
  | {
      readonly kind: 'bytes';
      readonly data: Uint8Array;
      readonly offsets: Int32Array;
      readonly count: number;
    };

function writeChunk(
  node: LeafNode,
  leaf: ColumnarLeaf | undefined,
  from: number,
  to: number,
  defs: Uint8Array | undefined,
  maxDef: number,
  codec: CodecId,
  offset: number,
): Chunk {
  const compress = compressorFor(codec)!;
  const rows = to - from;
  const t = leafType(node.type)!;
  const dense = denseValues(leaf, from, to, defs, maxDef, t.physical);
  const st = newLeafStats(node.id, node.type, node.path, true);
  st.valueCount = rows;
  st.nullCount = rows - dense.count;
  const dict =
    dense.kind === 'words'
      ? numberDictionary(dense.words, dense.count, dense.per)
      : dense.kind === 'bytes'
        ? bytesDictionary(dense.data, dense.offsets, dense.count)
        : undefined;
  // A string column's bounds are among its dictionary's entries.
  const bounds = boundsOf(dense, node.type, st, dense.kind === 'bytes' ? dict?.firsts : undefined);
  const parts: Uint8Array[] = [];
  let compressed = 0;
  let uncompressed = 0;
  const sink = SINK;
  /** One page: its header (type, sizes, `pageHeader`) and its compressed payload. */
  const emit = (type: number, pageHeader: TField, payload: Uint8Array): void => {
    const body = compress(payload);
    const h = encodeStruct(struct(i32(1, type), i32(2, payload.length), i32(3, body.length), pageHeader));
    parts.push(h, body === payload ? payload.slice() : body);
    compressed += h.length + body.length;
    uncompressed += h.length + payload.length;
  };
  let dictionaryOffset: number | undefined;
  if (dict !== undefined) {
    dictionaryOffset = offset;
    sink.pos = 0;
    plainDictionary(dense, dict, sink);
    emit(PAGE_DICTIONARY, sub(7, struct(i32(1, dict.size), i32(2, ENC_PLAIN_DICTIONARY))), sink.view());
  }
  const dataOffset = offset + compressed;
  const levelWidth = bitWidth(maxDef);
  const indexWidth = dict === undefined ? 0 : bitWidth(dict.size - 1);
  let value = 0; // index of the first value of the page in `dense`
  for (let r = 0; r < rows; ) {
    const end = pageEnd(dense, dict, defs, maxDef, r, rows, value);
    let count = 0;
    if (defs === undefined) count = end - r;
    else for (let i = r; i < end; i++) if (defs[i] === maxDef) count++;
    sink.pos = 0;
    if (maxDef > 0) {
      if (defs === undefined) encodeConstantLevels(maxDef, end - r, levelWidth, sink);
      else encodeLevels(defs.subarray(r, end), end - r, levelWidth, sink);
    }
    if (dict !== undefined) {
      sink.byte(indexWidth);
      encodeHybrid(dict.indices.subarray(value, value + count), count, indexWidth, sink);
    } else plainValues(dense, value, value + count, sink);
    const encoding = dict === undefined ? ENC_PLAIN : ENC_PLAIN_DICTIONARY;
    emit(
      PAGE_DATA,
      sub(5, struct(i32(1, end - r), i32(2, encoding), i32(3, ENC_RLE), i32(4, ENC_RLE))),
      sink.view(),
    );
    value += count;
    r = end;
  }
  const metaFields: TField[] = [
    i32(1, t.physical),
    list(2, TType.I32, dict === undefined ? [ENC_PLAIN, ENC_RLE] : [ENC_PLAIN_DICTIONARY, ENC_RLE]),
    list(3, TType.BINARY, pathOf(node)),
    i32(4, codec),
    i64(5, rows),
    i64(6, uncompressed),
    i64(7, compressed),
    i64(9, dataOffset),
  ];
  if (dictionaryOffset !== undefined) metaFields.push(i64(11, dictionaryOffset));
  const statFields: TField[] = [i64(3, rows - dense.count)];
  if (bounds !== undefined) statFields.push(bin(5, bounds.max), bin(6, bounds.min));
  metaFields.push(sub(12, struct(...statFields)));
  return {
    parts,
    compressedSize: compressed,
    uncompressedSize: uncompressed,
    meta: struct(i64(2, dictionaryOffset ?? dataOffset), sub(3, struct(...metaFields))),
    stats: st,
    byteBounds: dense.kind === 'bytes' ? bounds : undefined,
  };
}

function pathOf(node: LeafNode): Uint8Array[] {
  return node.path.split('.').map((p) => utf8.encode(p));
}

/** The end of the data page that starts at row `r` (its values from `value` in `dense`). */
function pageEnd(
  dense: Dense,
  dict: Dictionary | undefined,
  defs: Uint8Array | undefined,
  maxDef: number,
  r: number,
  rows: number,
  value: number,
): number {
  if (dense.kind !== 'bytes' || dict !== undefined) return Math.min(rows, r + PAGE_ROWS);
  // Strings written PLAIN: about PAGE_BYTES of them.
  const offsets = dense.offsets;
  let end = r;
  let v = value;
  const limit = Math.min(rows, r + PAGE_ROWS);
  while (end < limit) {
    if (defs === undefined || defs[end] === maxDef) {
      if (v > value && offsets[v + 1]! - offsets[value]! + 4 * (v - value) > PAGE_BYTES) break;
      v++;
    }
    end++;
  }
  return Math.max(end, r + 1);
}

function denseValues(
  leaf: ColumnarLeaf | undefined,
  from: number,
  to: number,
  defs: Uint8Array | undefined,
  maxDef: number,
  physical: Physical,
): Dense {
  const rows = to - from;
  const keep = (i: number): boolean => defs === undefined || defs[i] === maxDef;
  let count = 0;
  if (defs === undefined) count = rows;
  else for (let i = 0; i < rows; i++) if (defs[i] === maxDef) count++;
  const cv = leaf?.values;
  if (cv === undefined || count === 0) {
    if (physical === PT.BOOLEAN) return { kind: 'bool', values: new Uint8Array(0), count: 0 };
    if (physical === PT.BYTE_ARRAY)
      return { kind: 'bytes', data: new Uint8Array(0), offsets: new Int32Array(1), count: 0 };
    const per = physical === PT.INT64 || physical === PT.DOUBLE ? 2 : 1;
    return { kind: 'words', words: new Int32Array(0), per, count: 0 };
  }
  switch (cv.kind) {
    case 'int64':
    case 'float64':
    case 'int32':
    case 'float32': {
      const per = cv.kind === 'int64' || cv.kind === 'float64' ? 2 : 1;
      const all = new Int32Array(cv.values.buffer, cv.values.byteOffset + from * 4 * per, rows * per);
      if (count === rows) return { kind: 'words', words: all, per, count };
      const words = new Int32Array(count * per);
      let k = 0;
      for (let i = 0; i < rows; i++) {
        if (!keep(i)) continue;
        words[k++] = all[i * per]!;
        if (per === 2) words[k++] = all[i * 2 + 1]!;
      }
      return { kind: 'words', words, per, count };
    }
    case 'bool': {
      const values = new Uint8Array(count);
      let k = 0;
      for (let i = 0; i < rows; i++) if (keep(i)) values[k++] = cv.values[from + i] !== 0 ? 1 : 0;
      return { kind: 'bool', values, count };
    }
    case 'utf8-bytes': {
      const src = cv.offsets;
      const base = src[from]!;
      if (count === rows) {
        const offsets = new Int32Array(rows + 1);
        for (let i = 0; i <= rows; i++) offsets[i] = src[from + i]! - base;
        return { kind: 'bytes', data: cv.data.subarray(base, src[to]!), offsets, count };
      }
      const offsets = new Int32Array(count + 1);
      let size = 0;
      for (let i = 0; i < rows; i++) if (keep(i)) size += src[from + i + 1]! - src[from + i]!;
      const data = new Uint8Array(size);
      let k = 0;
      let at = 0;
      for (let i = 0; i < rows; i++) {
        if (!keep(i)) continue;
        const a = src[from + i]!;
        const b = src[from + i + 1]!;
        data.set(cv.data.subarray(a, b), at);
        at += b - a;
        offsets[++k] = at;
      }
      return { kind: 'bytes', data, offsets, count };
    }
    case 'utf8': {
      // Every row kept holds a string (`stringValidity` made the others null or refused them).
      const strings: string[] = [];
      for (let i = 0; i < rows; i++) if (keep(i)) strings.push(cv.values[from + i] as string);
      const data = utf8.encode(strings.join(''));
      const offsets = new Int32Array(count + 1);
      let at = 0;
      for (let k = 0; k < count; k++) {
        at += Buffer.byteLength(strings[k]!, 'utf8');
        offsets[k + 1] = at;
      }
      return { kind: 'bytes', data, offsets, count };
    }
    default:
      throw new Error(`native Parquet writer: values of kind ${cv.kind}`);
  }
}

/**
 * The chunk's Iceberg bounds into `st` (and NaNs), and its Parquet statistics' min / max as PLAIN
 * bytes (undefined when it has no non-null, non-NaN value).
 */
function boundsOf(
  dense: Dense,
  type: PrimitiveType,
  st: LeafStats,
  candidates?: Int32Array,
): { min: Uint8Array; max: Uint8Array } | undefined {
  const n = dense.count;
  if (n === 0) return undefined;
  switch (dense.kind) {
    case 'bool': {
      let sawTrue = false;
      let sawFalse = false;
      for (let i = 0; i < n; i++) {
        if (dense.values[i] !== 0) sawTrue = true;
        else sawFalse = true;
      }
      st.min = !sawFalse;
      st.max = sawTrue;
      return { min: Uint8Array.of(sawFalse ? 0 : 1), max: Uint8Array.of(sawTrue ? 1 : 0) };
    }
    case 'bytes': {
      const { data, offsets } = dense;
      const m = candidates === undefined ? n : candidates.length;
      let lo = candidates === undefined ? 0 : candidates[0]!;
      let hi = lo;
      for (let k = 1; k < m; k++) {
        const i = candidates === undefined ? k : candidates[k]!;
        if (compareAt(data, offsets, i, lo) < 0) lo = i;
        else if (compareAt(data, offsets, i, hi) > 0) hi = i;
      }
      return {
        min: data.slice(offsets[lo]!, offsets[lo + 1]!),
        max: data.slice(offsets[hi]!, offsets[hi + 1]!),
      };
    }
    case 'words': {
      const w = dense.words;
      const bytes = (f: (d: DataView) => void): Uint8Array => {
        const b = new Uint8Array(dense.per * 4);
        f(new DataView(b.buffer));
        return b;
      };
      if (type.kind === 'double' || type.kind === 'float') {
        const b =
          dense.per === 2
            ? floatBounds64(new Float64Array(w.buffer, w.byteOffset, n), n, undefined)
            : floatBounds32(new Float32Array(w.buffer, w.byteOffset, n), n, undefined);
        st.nanCount = b.nans;
        if (!b.seen) return undefined;
        st.min = b.min;
        st.max = b.max;
        // Parquet: a zero min is written -0.0 and a zero max +0.0 (either may be in the chunk).
        const min = b.min === 0 ? -0 : b.min;
        const max = b.max === 0 ? 0 : b.max;
        const put = (v: number) =>
          bytes((d) => (dense.per === 2 ? d.setFloat64(0, v, true) : d.setFloat32(0, v, true)));
        return { min: put(min), max: put(max) };
      }
      if (dense.per === 2) {
        const b = int64Bounds(new BigInt64Array(w.buffer, w.byteOffset, n), n, undefined)!;
        st.min = b.min;
        st.max = b.max;
        return {
          min: bytes((d) => d.setBigInt64(0, b.min, true)),
          max: bytes((d) => d.setBigInt64(0, b.max, true)),
        };
      }
      const b = int32Bounds(w, n, undefined)!;
      st.min = b.min;
      st.max = b.max;
      return {
        min: bytes((d) => d.setInt32(0, b.min, true)),
        max: bytes((d) => d.setInt32(0, b.max, true)),
      };
    }
  }
}

function compareAt(data: Uint8Array, offsets: Int32Array, a: number, b: number): number {
  const af = offsets[a]!;
  const al = offsets[a + 1]! - af;
  const bf = offsets[b]!;
  const bl = offsets[b + 1]! - bf;
  const m = Math.min(al, bl);
  for (let k = 0; k < m; k++) {
    const d = data[af + k]! - data[bf + k]!;
    if (d !== 0) return d;
  }
  return al - bl;
}

function mergeByteBounds(
  into: Map<number, { min: Uint8Array; max: Uint8Array }>,
  id: number,
  b: { min: Uint8Array; max: Uint8Array },
): void {
  const cur = into.get(id);
  if (cur === undefined) {
    into.set(id, { ...b });
    return;
  }
  if (compareBytes(b.min, cur.min) < 0) cur.min = b.min;
  if (compareBytes(b.max, cur.max) > 0) cur.max = b.max;
}

/** The dictionary page's values: each entry PLAIN. */
function plainDictionary(dense: Dense, dict: Dictionary, sink: ByteSink): void {
  if (dense.kind === 'words') {
    const per = dense.per;
    sink.ensure(dict.size * per * 4);
    const w = dense.words;
    for (let e = 0; e < dict.size; e++) {
      const f = dict.firsts[e]!;
      sink.int32(w[f * per]!);
      if (per === 2) sink.int32(w[f * 2 + 1]!);
    }
    return;
  }
  if (dense.kind === 'bytes') {
    for (let e = 0; e < dict.size; e++) {
      const f = dict.firsts[e]!;
      const a = dense.offsets[f]!;
      const b = dense.offsets[f + 1]!;
      sink.int32(b - a);
      sink.bytes(dense.data.subarray(a, b));
    }
  }
}

/** Values `from..to` of `dense`, PLAIN. */
function plainValues(dense: Dense, from: number, to: number, sink: ByteSink): void {
  switch (dense.kind) {
    case 'words': {
      const per = dense.per;
      const w = dense.words;
      sink.bytes(new Uint8Array(w.buffer, w.byteOffset + from * per * 4, (to - from) * per * 4));
      return;
    }
    case 'bool': {
      const count = to - from;
      sink.ensure((count + 7) >> 3);
      const buf = sink.buf;
      const at = sink.pos;
      buf.fill(0, at, at + ((count + 7) >> 3));
      for (let i = 0; i < count; i++) if (dense.values[from + i] !== 0) buf[at + (i >> 3)]! |= 1 << (i & 7);
      sink.pos = at + ((count + 7) >> 3);
      return;
    }
    case 'bytes': {
      const o = dense.offsets;
      sink.ensure(o[to]! - o[from]! + 4 * (to - from));
      for (let i = from; i < to; i++) {
        const a = o[i]!;
        const b = o[i + 1]!;
        sink.int32(b - a);
        sink.bytes(dense.data.subarray(a, b));
      }
      return;
    }
  }
}
