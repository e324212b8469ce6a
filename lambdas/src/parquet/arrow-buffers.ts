/**
 * Reading values straight from Arrow Data buffers (validity bitmaps, offsets, typed arrays).
 * `Vector.get()` is not used: it returns timestamps and dates as JS numbers of milliseconds and
 * decimals as word arrays, which loses precision or needs a second conversion.
 *
 * Buffer conventions follow Arrow JS: for a sliced `Data`, fixed-width value buffers and offset
 * buffers are already sliced (index `i` is slot `i`), while validity and boolean bitmaps are not
 * (slot `i` is bit `offset + i`).
 */
import type * as arrow from 'apache-arrow';
import type { IcebergValue } from '../iceberg/values.ts';

/** The value at slot `i` of one Arrow array (after binding to its buffers). */
export type Getter = (i: number) => IcebergValue;

/** The validity bitmap of `data`, or null when every slot is valid. */
export function validityBits(data: arrow.Data): Uint8Array | null {
  const bits = data.nullBitmap as Uint8Array | undefined;
  return data.nullCount > 0 && bits !== undefined && bits.length > 0 ? bits : null;
}

/** Wraps `get` so null slots of `data` read as null. */
export function withNulls(data: arrow.Data, get: Getter): Getter {
  const bits = validityBits(data);
  if (bits === null) return get;
  const off = data.offset;
  return (i) => {
    const p = off + i;
    return ((bits[p >> 3]! >> (p & 7)) & 1) === 0 ? null : get(i);
  };
}

/** Bit `offset + i` of an Arrow boolean buffer. */
export function boolGetter(data: arrow.Data): Getter {
  const bits = data.values as Uint8Array;
  const off = data.offset;
  return (i) => {
    const p = off + i;
    return ((bits[p >> 3]! >> (p & 7)) & 1) === 1;
  };
}

/** Offsets of a variable-width array as numbers (64-bit offsets of the Large types too). */
export function offsetAt(offsets: Int32Array | BigInt64Array): (i: number) => number {
  if (offsets instanceof Int32Array) return (i) => offsets[i]!;
  return (i) => Number(offsets[i]!);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Strings of a Utf8/Binary array. When the array's bytes are all ASCII they are decoded once and
 * each value is a slice of that string (much cheaper than one decoder call per value).
 */
export function stringGetter(data: arrow.Data): Getter {
  const bytes = data.values as Uint8Array;
  const at = offsetAt(data.valueOffsets as Int32Array | BigInt64Array);
  const start = data.length === 0 ? 0 : at(0);
  const end = data.length === 0 ? 0 : at(data.length);
  if (isAscii(bytes, start, end)) {
    const all = utf8.decode(bytes.subarray(start, end));
    return (i) => all.slice(at(i) - start, at(i + 1) - start);
  }
  return (i) => utf8.decode(bytes.subarray(at(i), at(i + 1)));
}

function isAscii(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i]! > 0x7f) return false;
  return true;
}

/** Copies of the values of a Binary array (copies, so rows do not pin the whole decoded file). */
export function bytesGetter(data: arrow.Data): Getter {
  const bytes = data.values as Uint8Array;
  const at = offsetAt(data.valueOffsets as Int32Array | BigInt64Array);
  return (i) => bytes.slice(at(i), at(i + 1));
}

/** Copies of the values of a FixedSizeBinary array of `width` bytes. */
export function fixedGetter(data: arrow.Data, width: number): Getter {
  const bytes = data.values as Uint8Array;
  return (i) => bytes.slice(i * width, (i + 1) * width);
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Canonical lower-case UUID strings of a FixedSizeBinary(16) array (big-endian bytes). */
export function uuidGetter(data: arrow.Data): Getter {
  const b = data.values as Uint8Array;
  return (i) => {
    const o = i * 16;
    let s = '';
    for (let k = 0; k < 16; k++) {
      if (k === 4 || k === 6 || k === 8 || k === 10) s += '-';
      s += HEX[b[o + k]!];
    }
    return s;
  };
}

/**
 * Unscaled decimal values as bigints from an Arrow Decimal array: little-endian two's-complement
 * integers of `bitWidth` bits, held by Arrow JS as 32-bit words. Never goes through a Number.
 */
export function decimalGetter(data: arrow.Data, bitWidth: number, precision: number): Getter {
  const words = data.values as Uint32Array;
  const aligned = words.byteOffset % 8 === 0 ? words : words.slice();
  if (bitWidth === 32) {
    const ints = new Int32Array(aligned.buffer, aligned.byteOffset, aligned.length);
    return (i) => BigInt(ints[i]!);
  }
  const signed = new BigInt64Array(aligned.buffer, aligned.byteOffset, aligned.length >> 1);
  const stride = bitWidth / 64;
  // Up to 18 digits the value fits in the lowest 64-bit word (the rest is sign extension).
  if (precision <= 18) return (i) => signed[i * stride]!;
  const unsigned = new BigUint64Array(aligned.buffer, aligned.byteOffset, aligned.length >> 1);
  return (i) => {
    const base = i * stride;
    let v = signed[base + stride - 1]!;
    for (let w = stride - 2; w >= 0; w--) v = (v << 64n) | unsigned[base + w]!;
    return v;
  };
}
