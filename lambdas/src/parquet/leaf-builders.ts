/**
 * Primitive leaf builders: one pass over a column's values into typed arrays, validating each
 * value and collecting counts and min/max. Each loop checks `v == null` first; `PARENT_NULL` is
 * not a valid value of any type, so it is recognised in the (rare) wrong-type branch and costs
 * nothing on the hot path.
 */
import * as arrow from 'apache-arrow';
import { ErrorKind, FloeError } from '../errors.ts';
import { uuidFromBytes } from '../iceberg/conversions.ts';
import { badValue, finishLeaf, setBounds, type Val, Validity, type Vals } from './build-common.ts';
import type { LeafNode } from './column-plan.ts';
import { PARENT_NULL } from './extract.ts';
import { type Allocator, type ByteBuffer, HAS_UTF8_WRITE } from './memory.ts';
import { type LeafStats, updateByteBounds } from './metrics.ts';

const LONG_MIN = -(1n << 63n);
const LONG_MAX = (1n << 63n) - 1n;

function buildBool(node: LeafNode, vals: Vals, n: number, st: LeafStats, alloc: Allocator): arrow.Data {
  const bits = alloc.bytes((n + 7) >> 3);
  const val = new Validity(n);
  let sawFalse = false;
  let sawTrue = false;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (v === true) {
      bits[i >> 3]! |= 1 << (i & 7);
      sawTrue = true;
    } else if (v === false) sawFalse = true;
    else if (v == null || v === PARENT_NULL) val.onNull(node, v === PARENT_NULL, i);
    else throw badValue(node, v, i, 'expected a boolean');
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

/** int and date: 32-bit integer numbers. */
function buildInt32(node: LeafNode, vals: Vals, n: number, st: LeafStats, alloc: Allocator): arrow.Data {
  const out = alloc.int32(n);
  const val = new Validity(n);
  let min = 0;
  let max = 0;
  let seen = false;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (v == null) {
      val.onNull(node, false, i);
      continue;
    }
    if (typeof v !== 'number' || (v | 0) !== v) {
      if (v === PARENT_NULL) {
        val.onNull(node, true, i);
        continue;
      }
      throw badValue(node, v, i, 'expected a 32-bit integer number');
    }
    out[i] = v;
    if (!seen) {
      min = max = v;
      seen = true;
    } else if (v < min) min = v;
    else if (v > max) max = v;
  }
  finishLeaf(st, n, val);
  setBounds(st, seen, min, max);
  return arrow.makeData({
    type: node.arrowType as arrow.Int32,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    data: out,
  });
}

/** long, time, timestamp(tz)(_ns): 64-bit integers held as bigints (safe-integer numbers accepted). */
function buildInt64(node: LeafNode, vals: Vals, n: number, st: LeafStats, alloc: Allocator): arrow.Data {
  const out = alloc.int64(n);
  const val = new Validity(n);
  let min = 0n;
  let max = 0n;
  let seen = false;
  for (let i = 0; i < n; i++) {
    let v = vals[i];
    if (v == null) {
      val.onNull(node, false, i);
      continue;
    }
    if (typeof v !== 'bigint') {
      if (v === PARENT_NULL) {
        val.onNull(node, true, i);
        continue;
      }
      if (typeof v === 'number' && Number.isSafeInteger(v)) v = BigInt(v);
      else throw badValue(node, v, i, 'expected a bigint');
    }
    out[i] = v;
    if (!seen) {
      min = max = v;
      seen = true;
    } else if (v < min) min = v;
    else if (v > max) max = v;
  }
  // BigInt64Array silently wraps; checking the extremes once replaces two compares per value.
  if (seen && (min < LONG_MIN || max > LONG_MAX)) {
    const bad = min < LONG_MIN ? min : max;
    throw badValue(node, bad, indexOf(vals, n, bad), 'out of 64-bit range');
  }
  finishLeaf(st, n, val);
  setBounds(st, seen, min, max);
  return arrow.makeData({
    type: node.arrowType as arrow.Int64,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    data: out,
  });
}

function indexOf(vals: Vals, n: number, v: Val): number {
  for (let i = 0; i < n; i++) if (vals[i] === v) return i;
  return -1;
}

/** float and double; NaN is counted and never becomes a bound; -0.0 sorts before +0.0. */
function buildFloat(
  node: LeafNode,
  vals: Vals,
  n: number,
  st: LeafStats,
  alloc: Allocator,
  single: boolean,
): arrow.Data {
  const out = single ? alloc.float32(n) : alloc.float64(n);
  const val = new Validity(n);
  let min = 0;
  let max = 0;
  let seen = false;
  let nans = 0;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (v == null) {
      val.onNull(node, false, i);
      continue;
    }
    if (typeof v !== 'number') {
      if (v === PARENT_NULL) {
        val.onNull(node, true, i);
        continue;
      }
      throw badValue(node, v, i, 'expected a number');
    }
    out[i] = v;
    // Bounds describe the stored value, so float32 is read back after rounding.
    const f = single ? out[i]! : v;
    if (Number.isNaN(f)) nans++;
    else if (!seen) {
      min = max = f;
      seen = true;
    } else if (f < min || (f === 0 && min === 0 && Object.is(f, -0))) min = f;
    else if (f > max || (f === 0 && max === 0 && Object.is(max, -0))) max = f;
  }
  finishLeaf(st, n, val);
  st.nanCount += nans;
  setBounds(st, seen, min, max);
  return arrow.makeData({
    type: node.arrowType as arrow.Float,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    data: out,
  });
}

/** decimal(P,S): the unscaled bigint as a 128-bit little-endian two's-complement value. */
function buildDecimal(node: LeafNode, vals: Vals, n: number, st: LeafStats, alloc: Allocator): arrow.Data {
  if (node.type.kind !== 'decimal')
    throw new FloeError(ErrorKind.Unexpected, 'decimal builder on non-decimal');
  const words = alloc.uint64(n * 2);
  const val = new Validity(n);
  const limit = 10n ** BigInt(node.type.precision);
  let min = 0n;
  let max = 0n;
  let seen = false;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (v == null) {
      val.onNull(node, false, i);
      continue;
    }
    if (typeof v !== 'bigint') {
      if (v === PARENT_NULL) {
        val.onNull(node, true, i);
        continue;
      }
      throw badValue(node, v, i, 'expected the unscaled value as a bigint');
    }
    if (v >= limit || v <= -limit) throw badValue(node, v, i, `exceeds precision ${node.type.precision}`);
    words[2 * i] = BigInt.asUintN(64, v);
    words[2 * i + 1] = BigInt.asUintN(64, v >> 64n);
    if (!seen) {
      min = max = v;
      seen = true;
    } else if (v < min) min = v;
    else if (v > max) max = v;
  }
  finishLeaf(st, n, val);
  setBounds(st, seen, min, max);
  const data = new Uint32Array(words.buffer, words.byteOffset, n * 4);
  return arrow.makeData({
    type: node.arrowType as arrow.Decimal,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    data,
  });
}

const encoder = new TextEncoder();

/**
 * A bigger byte buffer holding the first `used` bytes of `buf`. Sized from the average so far
 * (`done` of `n` values written) so a column grows about once instead of doubling repeatedly.
 */
function growBytes(
  alloc: Allocator,
  buf: ByteBuffer,
  used: number,
  need: number,
  done: number,
  n: number,
): ByteBuffer {
  const projected = Math.ceil((used / Math.max(done, 1)) * n * 1.15);
  const next = alloc.bytes(Math.max(used + need, projected, Math.ceil(buf.length * 1.5), 64));
  next.set(buf.subarray(0, used));
  return next;
}

function buildUtf8(node: LeafNode, vals: Vals, n: number, st: LeafStats, alloc: Allocator): arrow.Data {
  const offsets = alloc.int32(n + 1);
  const val = new Validity(n);
  // Fast path: join the column's strings natively and encode once. When the UTF-8 byte length
  // equals the UTF-16 length everything is ASCII and the offsets are the running string lengths.
  // String bounds come from the Parquet footer statistics (see finishMetrics), as Java's do.
  const parts: string[] = [];
  let units = 0;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (typeof v !== 'string') {
      if (v == null || v === PARENT_NULL) {
        val.onNull(node, v === PARENT_NULL, i);
        offsets[i + 1] = units;
        continue;
      }
      throw badValue(node, v, i, 'expected a string');
    }
    parts.push(v);
    units += v.length;
    offsets[i + 1] = units;
  }
  const data = utf8Data(node, vals, n, offsets, parts.join(''), units, alloc);
  finishLeaf(st, n, val);
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
 * The UTF-8 data of a string column: `joined` is the concatenation of the strings of `vals`
 * (anything else in `vals` is a null), `units` its length, and `offsets` the running UTF-16
 * lengths, which are rewritten to byte offsets unless the column is all ASCII.
 */
export function utf8Data(
  node: LeafNode,
  vals: Vals,
  n: number,
  offsets: Int32Array,
  joined: string,
  units: number,
  alloc: Allocator,
): Uint8Array {
  let data: Uint8Array;
  if (HAS_UTF8_WRITE && Buffer.byteLength(joined, 'utf8') === units) {
    const buf = alloc.bytes(Math.max(64, units));
    buf.utf8Write(joined, 0);
    data = buf.subarray(0, units);
  } else {
    data = encodeEach(node, vals, n, offsets, alloc);
  }
  if (data.length > 0x7fffffff) throw badValue(node, '…', n - 1, 'column exceeds 2 GiB of string data');
  return data;
}

/** Non-ASCII column: encode value by value and rewrite the offsets in bytes. */
function encodeEach(
  node: LeafNode,
  vals: Vals,
  n: number,
  offsets: Int32Array,
  alloc: Allocator,
): Uint8Array {
  let buf = alloc.bytes(64);
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (typeof v === 'string') {
      const need = v.length * 3; // worst case UTF-8 bytes per UTF-16 unit
      if (pos + need > buf.length) buf = growBytes(alloc, buf, pos, need, i, n);
      pos += HAS_UTF8_WRITE ? buf.utf8Write(v, pos) : encoder.encodeInto(v, buf.subarray(pos)).written;
    }
    offsets[i + 1] = pos;
  }
  void node;
  return buf.subarray(0, pos);
}

function buildBinary(node: LeafNode, vals: Vals, n: number, st: LeafStats, alloc: Allocator): arrow.Data {
  const offsets = alloc.int32(n + 1);
  const val = new Validity(n);
  let buf = alloc.bytes(Math.max(64, n * 8));
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (!(v instanceof Uint8Array)) {
      if (v == null || v === PARENT_NULL) {
        val.onNull(node, v === PARENT_NULL, i);
        offsets[i + 1] = pos;
        continue;
      }
      throw badValue(node, v, i, 'expected a Uint8Array');
    }
    if (pos + v.length > buf.length) buf = growBytes(alloc, buf, pos, v.length, i, n);
    buf.set(v, pos);
    pos += v.length;
    offsets[i + 1] = pos;
    if (st.trackBounds) updateByteBounds(st, v);
  }
  if (pos > 0x7fffffff) throw badValue(node, '…', n - 1, 'column exceeds 2 GiB of binary data');
  finishLeaf(st, n, val);
  const data = buf.subarray(0, pos);
  return arrow.makeData({
    type: node.arrowType as arrow.Binary,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    valueOffsets: offsets,
    data,
  });
}

function buildFixed(node: LeafNode, vals: Vals, n: number, st: LeafStats, alloc: Allocator): arrow.Data {
  if (node.type.kind !== 'fixed') throw new FloeError(ErrorKind.Unexpected, 'fixed builder on non-fixed');
  const len = node.type.length;
  const out = alloc.bytes(n * len);
  const val = new Validity(n);
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (!(v instanceof Uint8Array) || v.length !== len) {
      if (v == null || v === PARENT_NULL) {
        val.onNull(node, v === PARENT_NULL, i);
        continue;
      }
      throw badValue(node, v, i, `expected a Uint8Array of ${len} bytes`);
    }
    out.set(v, i * len);
    if (st.trackBounds) updateByteBounds(st, v);
  }
  finishLeaf(st, n, val);
  return arrow.makeData({
    type: node.arrowType as arrow.FixedSizeBinary,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    data: out,
  });
}

const HEX = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let c = 0; c < 10; c++) t[48 + c] = c;
  for (let c = 0; c < 6; c++) {
    t[65 + c] = 10 + c;
    t[97 + c] = 10 + c;
  }
  return t;
})();

/** Writes the 16 big-endian bytes of an `8-4-4-4-12` hex UUID string at `at`; false if malformed. */
function parseUuidInto(s: string, out: Uint8Array, at: number): boolean {
  if (s.length !== 36) return false;
  let b = at;
  for (let i = 0; i < 36; ) {
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (s.charCodeAt(i) !== 45) return false;
      i++;
      continue;
    }
    const hi = HEX[s.charCodeAt(i)] ?? -1;
    const lo = HEX[s.charCodeAt(i + 1)] ?? -1;
    if (hi < 0 || lo < 0) return false;
    out[b++] = (hi << 4) | lo;
    i += 2;
  }
  return true;
}

/** uuid: canonical strings (or 16 raw bytes) to FIXED_LEN_BYTE_ARRAY(16), big-endian. */
function buildUuid(node: LeafNode, vals: Vals, n: number, st: LeafStats, alloc: Allocator): arrow.Data {
  const out = alloc.bytes(n * 16);
  const val = new Validity(n);
  const track = st.trackBounds;
  let min: string | undefined;
  let max: string | undefined;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    let u: string;
    if (typeof v === 'string') {
      if (!parseUuidInto(v, out, i * 16)) throw badValue(node, v, i, 'expected a canonical UUID string');
      u = v;
    } else if (v instanceof Uint8Array && v.length === 16) {
      out.set(v, i * 16);
      u = uuidFromBytes(v);
    } else if (v == null || v === PARENT_NULL) {
      val.onNull(node, v === PARENT_NULL, i);
      continue;
    } else throw badValue(node, v, i, 'expected a UUID string');
    if (track) {
      // Lower-case canonical strings order exactly like the big-endian bytes.
      u = u.toLowerCase();
      if (min === undefined || u < min) min = u;
      if (max === undefined || u > max) max = u;
    }
  }
  finishLeaf(st, n, val);
  if (min !== undefined) {
    st.min = min;
    st.max = max;
  }
  return arrow.makeData({
    type: node.arrowType as arrow.FixedSizeBinary,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    data: out,
  });
}

/** Arrow data for one primitive leaf column; updates `st`. */
export function buildLeaf(node: LeafNode, vals: Vals, n: number, st: LeafStats, a: Allocator): arrow.Data {
  switch (node.type.kind) {
    case 'boolean':
      return buildBool(node, vals, n, st, a);
    case 'int':
    case 'date':
      return buildInt32(node, vals, n, st, a);
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return buildInt64(node, vals, n, st, a);
    case 'float':
      return buildFloat(node, vals, n, st, a, true);
    case 'double':
      return buildFloat(node, vals, n, st, a, false);
    case 'decimal':
      return buildDecimal(node, vals, n, st, a);
    case 'string':
      return buildUtf8(node, vals, n, st, a);
    case 'binary':
      return buildBinary(node, vals, n, st, a);
    case 'fixed':
      return buildFixed(node, vals, n, st, a);
    case 'uuid':
      return buildUuid(node, vals, n, st, a);
    case 'unknown':
      throw new FloeError(ErrorKind.Unexpected, `unknown column '${node.path}' should have been omitted`);
  }
}
