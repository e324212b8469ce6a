/**
 * Columnar entry point to the Parquet writer: the caller hands over a batch already split into
 * one typed array per primitive leaf (plus validity bytes), instead of row objects.
 *
 * Typed arrays are wrapped into Arrow data as they are (no per-value conversion); the only
 * per-value work is validity bit-packing, boolean bit-packing and the min/max/NaN scans the
 * manifest metrics need. `utf8` and `any` columns go through the same per-value leaf builders as
 * `writeDataFile` (for strings: the joined-string fast path, bounds from the footer statistics).
 * The output is the file `writeDataFile` writes for the same rows: same Parquet schema, field ids,
 * footer patches and manifest metrics.
 *
 * Ownership: the caller's arrays are only read, never written, and only during the call (the
 * column data is copied into the IPC stream before `writeColumnarDataFile` returns), so they may
 * be reused right afterwards. A typed array may be longer than `rowCount` (only the first
 * `rowCount` entries are used) and may be a view into a larger ArrayBuffer. No two Arrow columns
 * ever share memory: when a typed array's ArrayBuffer is already used by an earlier column of the
 * batch (views of one slab, or the same array passed for two leaves), the later column gets a copy
 * of its `rowCount` values.
 */
import * as arrow from 'apache-arrow';
import { ErrorKind, FloeError } from '../errors.ts';
import type { Schema } from '../iceberg/schema.ts';
import type { IcebergType } from '../iceberg/types.ts';
import type { IcebergValue } from '../iceberg/values.ts';
import { type FloatBounds, floatBounds32, floatBounds64, int32Bounds, int64Bounds } from './bounds.ts';
import { badValue, finishLeaf, setBounds, type Val, Validity } from './build-common.ts';
import type { BuiltColumns } from './column-builder.ts';
import type { LeafNode, PlanNode, StructNode, WritePlan } from './column-plan.ts';
import { checkArray, checkIds, checkLeafValues } from './columnar-checks.ts';
import { Codec, type CodecId } from './compression.ts';
import { PARENT_NULL } from './extract.ts';
import { canWriteNative, type NativeWriteSettings, writeNative } from './file-writer.ts';
import { buildLeaf, utf8Data } from './leaf-builders.ts';
import type { Allocator } from './memory.ts';
import { type LeafStats, newLeafStats } from './metrics.ts';
import {
  type DataFileResult,
  type ParquetCompression,
  settings,
  type WriteOptions,
  writablePlan,
  writeBuiltColumns,
} from './writer.ts';

/** One primitive leaf column of a batch; `valid[i] === 0` means null at row i (undefined = no nulls). */
export type ColumnValues =
  /** long, time, timestamp, timestamptz, timestamp_ns, timestamptz_ns (µs or ns as the type says). */
  | { readonly kind: 'int64'; readonly values: BigInt64Array }
  /** int, date (days since epoch). */
  | { readonly kind: 'int32'; readonly values: Int32Array }
  /** double. */
  | { readonly kind: 'float64'; readonly values: Float64Array }
  /** float. */
  | { readonly kind: 'float32'; readonly values: Float32Array }
  /** boolean: 0 = false, anything else = true. */
  | { readonly kind: 'bool'; readonly values: Uint8Array }
  /** string (also accepted for uuid: canonical strings); `undefined` (or null) is a null. */
  | { readonly kind: 'utf8'; readonly values: readonly (string | undefined)[] }
  /**
   * Strings already UTF-8 encoded: row i is `data[offsets[i]..offsets[i+1])` (offsets has
   * rowCount + 1 entries, non-decreasing; a null row is an empty range). Handed to Arrow as is.
   */
  | { readonly kind: 'utf8-bytes'; readonly data: Uint8Array; readonly offsets: Int32Array }
  /** Any primitive type, values as in `values.ts` (decimal, uuid, binary, fixed, bigint timestamps …). */
  | { readonly kind: 'any'; readonly values: readonly IcebergValue[] };

export interface ColumnarLeaf {
  readonly values: ColumnValues;
  /** One byte per row, 0 = null; undefined = no nulls (beyond null entries of `utf8`/`any` values). */
  readonly valid?: Uint8Array;
}

export interface ColumnarBatch {
  readonly rowCount: number;
  /**
   * By Iceberg field id of each primitive leaf reached through structs only (no lists/maps).
   * A leaf absent from the map is all-null.
   */
  readonly leaves: ReadonlyMap<number, ColumnarLeaf>;
  /** By field id of each struct field: one byte per row, 0 = the struct itself is null. Absent = never null. */
  readonly structValid?: ReadonlyMap<number, Uint8Array>;
  /** String leaves (field ids) to dictionary-encode: few distinct values (`WriteOptions.dictionaryColumns`). */
  readonly dictionary?: ReadonlySet<number>;
}

/** Rows `from..to` of `batch` as a batch of their own: views where the arrays allow, no copies. */
export function sliceColumnar(batch: ColumnarBatch, from: number, to: number): ColumnarBatch {
  const leaves = new Map<number, ColumnarLeaf>();
  for (const [id, leaf] of batch.leaves) {
    const v = leaf.values;
    let values: ColumnValues;
    switch (v.kind) {
      case 'int64':
        values = { kind: 'int64', values: v.values.subarray(from, to) };
        break;
      case 'int32':
        values = { kind: 'int32', values: v.values.subarray(from, to) };
        break;
      case 'float64':
        values = { kind: 'float64', values: v.values.subarray(from, to) };
        break;
      case 'float32':
        values = { kind: 'float32', values: v.values.subarray(from, to) };
        break;
      case 'bool':
        values = { kind: 'bool', values: v.values.subarray(from, to) };
        break;
      case 'utf8':
        values = { kind: 'utf8', values: v.values.slice(from, to) };
        break;
      case 'utf8-bytes': {
        const base = v.offsets[from]!;
        const offsets = new Int32Array(to - from + 1);
        for (let i = 0; i <= to - from; i++) offsets[i] = v.offsets[from + i]! - base;
        values = { kind: 'utf8-bytes', data: v.data.subarray(base, v.offsets[to]!), offsets };
        break;
      }
      default:
        values = { kind: 'any', values: v.values.slice(from, to) };
    }
    leaves.set(id, leaf.valid ? { values, valid: leaf.valid.subarray(from, to) } : { values });
  }
  const structValid = new Map<number, Uint8Array>();
  for (const [id, valid] of batch.structValid ?? []) structValid.set(id, valid.subarray(from, to));
  return {
    rowCount: to - from,
    leaves,
    structValid,
    ...(batch.dictionary ? { dictionary: batch.dictionary } : {}),
  };
}

/** True when the schema has no list or map anywhere, i.e. `writeColumnarDataFile` can write it. */
export function supportsColumnar(schema: Schema): boolean {
  const ok = (t: IcebergType): boolean =>
    t.kind === 'struct' ? t.fields.every((f) => ok(f.type)) : t.kind !== 'list' && t.kind !== 'map';
  return schema.fields.every((f) => ok(f.type));
}

/**
 * Writes one Parquet data file for `schema` from a columnar batch. Equivalent to
 * `writeDataFile(schema, rows, opts)` for the same data: a leaf under a null struct is null (and
 * counted as such), whatever its `valid` byte and value say.
 *
 * @throws FloeError `FeatureUnsupported` when the schema has a list or map (see
 *   `supportsColumnar`) or no columns; `DataInvalid` naming the column for a null in a required
 *   column (incl. a required leaf missing from the batch), a column kind that does not fit the
 *   column's type, an array shorter than `rowCount`, a field id that is not a leaf (or struct) of
 *   the schema, or a wrong-typed value in a `utf8`/`any` column; `ConfigInvalid` for bad options.
 */
export function writeColumnarDataFile(
  schema: Schema,
  batch: ColumnarBatch,
  opts: WriteOptions = {},
): DataFileResult {
  if (!supportsColumnar(schema)) {
    throw new FloeError(
      ErrorKind.FeatureUnsupported,
      'columnar writes support structs and primitives only; this schema has a list or map (use writeDataFile)',
    );
  }
  const n = batch.rowCount;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new FloeError(ErrorKind.DataInvalid, `rowCount must be a non-negative integer, got ${n}`);
  }
  const native = nativeSettings(schema, batch, opts);
  if (native !== undefined) return writeNative(schema, native.plan, batch, native.settings);
  const options =
    batch.dictionary && !opts.dictionaryColumns ? { ...opts, dictionaryColumns: batch.dictionary } : opts;
  return writeBuiltColumns(
    schema,
    (plan, alloc) => buildColumnarColumns(schema, plan, batch, alloc),
    options,
  );
}

/** Parquet's codec ids of the writer's compression names. */
const CODEC_IDS: Record<ParquetCompression, CodecId> = {
  zstd: Codec.ZSTD,
  snappy: Codec.SNAPPY,
  gzip: Codec.GZIP,
  uncompressed: Codec.UNCOMPRESSED,
};

/**
 * The native writer's settings for this batch (file-writer.ts), or undefined when parquet-wasm
 * writes it (a column type or value kind the native writer does not take, a codec it cannot
 * compress, no rows).
 */
function nativeSettings(
  schema: Schema,
  batch: ColumnarBatch,
  opts: WriteOptions,
): { plan: WritePlan; settings: NativeWriteSettings } | undefined {
  const codec = CODEC_IDS[opts.compression ?? 'zstd'];
  if (codec === undefined) return undefined;
  const plan = writablePlan(schema);
  if (!canWriteNative(plan, batch, codec)) return undefined;
  const s = settings(opts);
  return {
    plan,
    settings: {
      codec,
      rowGroupRows: s.rowGroupRows,
      metricsTruncateLength: opts.metricsTruncateLength ?? 16,
    },
  };
}

/** True when `writeColumnarDataFile` writes this batch itself, with no parquet-wasm (and no wasm memory). */
export function writesNatively(schema: Schema, batch: ColumnarBatch, opts: WriteOptions = {}): boolean {
  return supportsColumnar(schema) && nativeSettings(schema, batch, opts) !== undefined;
}

// ---------------------------------------------------------------------------------------------

interface Ctx {
  readonly n: number;
  readonly batch: ColumnarBatch;
  readonly stats: LeafStats[];
  readonly alloc: Allocator;
  /** ArrayBuffers already backing an Arrow column of this batch. */
  readonly claimed: Set<ArrayBufferLike>;
  /** Reusable values array for `utf8`/`any` columns with nulls from validity bytes. */
  scratch: Val[] | undefined;
}

/** Builds the Arrow columns of a columnar batch (for the writers; internal to `parquet/`). */
export function buildColumnarColumns(
  schema: Schema,
  plan: WritePlan,
  batch: ColumnarBatch,
  alloc: Allocator,
): BuiltColumns {
  checkIds(schema, plan, batch);
  const n = batch.rowCount;
  const stats = plan.leaves.map((l) => newLeafStats(l.id, l.type, l.path, !l.inCollection));
  const ctx: Ctx = { n, batch, stats, alloc, claimed: new Set(), scratch: undefined };
  try {
    const columns = plan.columns.map((c) => buildNode(c, undefined, ctx));
    return { columns, stats, length: n };
  } finally {
    ctx.scratch = undefined; // never keep the caller's values alive
  }
}

function buildNode(node: PlanNode, parentValid: Uint8Array | undefined, ctx: Ctx): arrow.Data {
  switch (node.kind) {
    case 'leaf':
      return buildLeafColumn(node, parentValid, ctx);
    case 'struct':
      return buildStructColumn(node, parentValid, ctx);
    default:
      throw new FloeError(ErrorKind.FeatureUnsupported, `column '${node.path}' is a ${node.kind}`);
  }
}

function buildStructColumn(node: StructNode, parentValid: Uint8Array | undefined, ctx: Ctx): arrow.Data {
  const own = ctx.batch.structValid?.get(node.id);
  if (own !== undefined) checkArray(node, own, Uint8Array, 'structValid', ctx.n);
  const { val, valid } = combineValidity(node, ctx.n, parentValid, own);
  const children = node.children.map((c) => buildNode(c, valid, ctx));
  return arrow.makeData({
    type: node.arrowType as arrow.Struct,
    length: ctx.n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    children,
  });
}

/**
 * Nulls of a node from its parent's effective validity and its own validity bytes, with the row
 * path's semantics (`Validity.onNull`: a null under a null parent is fine even when required).
 * Returns the node's effective validity (undefined when nothing is null) for its children/scans.
 */
function combineValidity(
  node: PlanNode,
  n: number,
  parent: Uint8Array | undefined,
  own: Uint8Array | undefined,
): { val: Validity; valid: Uint8Array | undefined } {
  const val = new Validity(n);
  let valid: Uint8Array | undefined;
  if (own === undefined) {
    if (parent !== undefined) for (let i = 0; i < n; i++) if (parent[i] === 0) val.onNull(node, true, i);
    valid = parent;
  } else if (parent === undefined) {
    for (let i = 0; i < n; i++) if (own[i] === 0) val.onNull(node, false, i);
    valid = own;
  } else {
    valid = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      if (parent[i] === 0) val.onNull(node, true, i);
      else if (own[i] === 0) val.onNull(node, false, i);
      else valid[i] = 1;
    }
  }
  return { val, valid: val.nulls + val.hidden === 0 ? undefined : valid };
}

function buildLeafColumn(node: LeafNode, parentValid: Uint8Array | undefined, ctx: Ctx): arrow.Data {
  const { n } = ctx;
  const st = ctx.stats[node.leafIndex]!;
  const leaf = ctx.batch.leaves.get(node.id);
  if (leaf === undefined) return buildGeneric(node, undefined, undefined, parentValid, ctx);
  const cv = leaf.values;
  checkLeafValues(node, leaf, n);
  if (cv.kind === 'any' || cv.kind === 'utf8') {
    if (cv.kind === 'utf8' && node.type.kind === 'string') {
      const built = buildUtf8Column(node, cv.values, leaf.valid, parentValid, ctx);
      if (built !== undefined) return built;
    }
    return buildGeneric(node, cv.values, leaf.valid, parentValid, ctx);
  }
  switch (cv.kind) {
    case 'utf8-bytes': {
      const { val } = combineValidity(node, n, parentValid, leaf.valid);
      const end = cv.offsets[n]!;
      finishLeaf(st, n, val); // bounds come from the footer statistics, as for every string column
      return arrow.makeData({
        type: node.arrowType as arrow.Utf8,
        length: n,
        nullCount: val.nulls,
        nullBitmap: val.bits,
        valueOffsets: claim(ctx, cv.offsets, n + 1),
        data: cv.data.subarray(0, end),
      });
    }
    case 'int64': {
      const { val, valid } = combineValidity(node, n, parentValid, leaf.valid);
      const data = claim(ctx, cv.values, n);
      finishLeaf(st, n, val);
      const b = int64Bounds(data, n, valid);
      setBounds(st, b !== undefined, b?.min, b?.max);
      return arrow.makeData({
        type: node.arrowType as arrow.Int64,
        length: n,
        nullCount: val.nulls,
        nullBitmap: val.bits,
        data,
      });
    }
    case 'int32': {
      const { val, valid } = combineValidity(node, n, parentValid, leaf.valid);
      const data = claim(ctx, cv.values, n);
      finishLeaf(st, n, val);
      const b = int32Bounds(data, n, valid);
      setBounds(st, b !== undefined, b?.min, b?.max);
      return arrow.makeData({
        type: node.arrowType as arrow.Int32,
        length: n,
        nullCount: val.nulls,
        nullBitmap: val.bits,
        data,
      });
    }
    case 'float64': {
      const { val, valid } = combineValidity(node, n, parentValid, leaf.valid);
      const data = claim(ctx, cv.values, n);
      return floatData(node, st, val, data, floatBounds64(data, n, valid));
    }
    case 'float32': {
      const { val, valid } = combineValidity(node, n, parentValid, leaf.valid);
      const data = claim(ctx, cv.values, n);
      return floatData(node, st, val, data, floatBounds32(data, n, valid));
    }
    case 'bool': {
      const { val, valid } = combineValidity(node, n, parentValid, leaf.valid);
      const values = cv.values;
      const bits = ctx.alloc.bytes((n + 7) >> 3);
      let sawTrue = false;
      let sawFalse = false;
      for (let i = 0; i < n; i++) {
        if (values[i] !== 0) {
          bits[i >> 3]! |= 1 << (i & 7);
          if (valid === undefined || valid[i] !== 0) sawTrue = true;
        } else if (valid === undefined || valid[i] !== 0) sawFalse = true;
      }
      finishLeaf(st, n, val);
      setBounds(st, sawFalse || sawTrue, !sawFalse, sawTrue);
      return arrow.makeData({
        type: node.arrowType as arrow.Bool,
        length: n,
        nullCount: val.nulls,
        nullBitmap: val.bits,
        data: bits,
      });
    }
  }
}

function floatData(
  node: LeafNode,
  st: LeafStats,
  val: Validity,
  data: Float64Array | Float32Array,
  b: FloatBounds,
): arrow.Data {
  finishLeaf(st, data.length, val);
  st.nanCount += b.nans;
  setBounds(st, b.seen, b.min, b.max);
  return arrow.makeData({
    type: node.arrowType as arrow.Float,
    length: data.length,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    data,
  });
}

/**
 * A string column: `buildUtf8`'s joined-string path, but joining the caller's array itself (null
 * and undefined entries join as ''), with no parts array. Returns undefined, for the generic
 * path, when a slot that is null by validity bytes holds something other than null/undefined
 * (it would end up in the joined string).
 */
function buildUtf8Column(
  node: LeafNode,
  values: readonly Val[],
  own: Uint8Array | undefined,
  parent: Uint8Array | undefined,
  ctx: Ctx,
): arrow.Data | undefined {
  const { n } = ctx;
  if (own !== undefined || parent !== undefined) {
    for (let i = 0; i < n; i++) {
      if (
        ((parent !== undefined && parent[i] === 0) || (own !== undefined && own[i] === 0)) &&
        values[i] != null
      )
        return undefined;
    }
  }
  const offsets = ctx.alloc.int32(n + 1);
  const val = new Validity(n);
  let units = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (typeof v === 'string') units += v.length;
    else if (parent !== undefined && parent[i] === 0) val.onNull(node, true, i);
    else if (v == null) val.onNull(node, false, i);
    else throw badValue(node, v, i, 'expected a string'); // slots null by validity hold null here
    offsets[i + 1] = units;
  }
  const joined = (values.length === n ? values : values.slice(0, n)).join('');
  const data = utf8Data(node, values, n, offsets, joined, units, ctx.alloc);
  finishLeaf(ctx.stats[node.leafIndex]!, n, val);
  return arrow.makeData({
    type: node.arrowType as arrow.Utf8,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    valueOffsets: offsets,
    data,
  });
}

/**
 * `utf8`/`any` columns (and absent ones: all null): the row path's leaf builder, given a values
 * array in which validity nulls are `null` and nulls under a null struct are `PARENT_NULL`.
 */
function buildGeneric(
  node: LeafNode,
  values: readonly Val[] | undefined,
  own: Uint8Array | undefined,
  parent: Uint8Array | undefined,
  ctx: Ctx,
): arrow.Data {
  const { n } = ctx;
  const st = ctx.stats[node.leafIndex]!;
  if (values !== undefined && own === undefined && parent === undefined) {
    return buildLeaf(node, values, n, st, ctx.alloc);
  }
  let vals = ctx.scratch;
  if (vals === undefined) {
    vals = new Array<Val>(n);
    ctx.scratch = vals;
  }
  for (let i = 0; i < n; i++) {
    vals[i] =
      parent !== undefined && parent[i] === 0
        ? PARENT_NULL
        : values === undefined || (own !== undefined && own[i] === 0)
          ? null
          : values[i];
  }
  try {
    return buildLeaf(node, vals, n, st, ctx.alloc);
  } finally {
    vals.fill(undefined);
  }
}

type Typed = BigInt64Array | Int32Array | Float64Array | Float32Array;

/**
 * The first `n` entries of a caller array for use as an Arrow buffer: a view when its memory is not
 * yet used by another column of the batch, else a copy.
 */
function claim<A extends Typed>(ctx: Ctx, a: A, n: number): A {
  const view = (a.length === n ? a : a.subarray(0, n)) as A;
  if (ctx.claimed.has(a.buffer)) return view.slice() as A;
  ctx.claimed.add(a.buffer);
  return view;
}
