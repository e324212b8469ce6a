/**
 * Parquet encodings the writer of columnar batches uses (parquet-format Encodings.md): the
 * RLE / bit-packing hybrid (definition levels and dictionary indices) and the little-endian bytes
 * PLAIN is made of, written into a growable byte buffer.
 */

/** A growable byte buffer. */
export class ByteSink {
  buf: Uint8Array;
  pos = 0;

  constructor(capacity = 1024) {
    this.buf = new Uint8Array(Math.max(16, capacity));
  }

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  byte(b: number): void {
    if (this.pos === this.buf.length) this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** ULEB128 of a non-negative integer below 2^32. */
  varint(n: number): void {
    this.ensure(5);
    let v = n >>> 0;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  int32(v: number): void {
    this.ensure(4);
    const b = this.buf;
    const p = this.pos;
    b[p] = v;
    b[p + 1] = v >>> 8;
    b[p + 2] = v >>> 16;
    b[p + 3] = v >>> 24;
    this.pos = p + 4;
  }

  bytes(src: Uint8Array): void {
    this.ensure(src.length);
    this.buf.set(src, this.pos);
    this.pos += src.length;
  }

  /** What was written (a view; valid until the next write). */
  view(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

/** Bits needed for values up to `max` (0 for 0). */
export function bitWidth(max: number): number {
  return max <= 0 ? 0 : 32 - Math.clz32(max);
}

/** The widest values the hybrid encoder takes (dictionary indices and levels stay far below). */
export const MAX_HYBRID_WIDTH = 24;

/** Bit-packed runs of at most this many groups of 8 (one header byte, as parquet-mr writes). */
const MAX_GROUPS = 63;

/** Length of the run of values equal to `values[i]` from `i`, counting at most `cap`. */
function runAt(values: ArrayLike<number>, i: number, n: number, cap: number): number {
  const v = values[i];
  let j = i + 1;
  const end = Math.min(n, i + cap);
  while (j < end && values[j] === v) j++;
  return j - i;
}

/**
 * Appends the RLE / bit-packing hybrid encoding of `values[0..n)` (each below 2^`width`) to `out`,
 * without the 4-byte length prefix: runs of 8 or more equal values (and the tail) as RLE runs,
 * everything else bit-packed in groups of 8 (the last group padded with zeros, which readers
 * ignore: they read as many values as the page says).
 */
export function encodeHybrid(values: ArrayLike<number>, n: number, width: number, out: ByteSink): void {
  if (width > MAX_HYBRID_WIDTH) throw new Error(`hybrid encoding: bit width ${width} is too wide`);
  const valueBytes = (width + 7) >> 3;
  let i = 0;
  while (i < n) {
    const run = runAt(values, i, n, 0x7fffffff);
    if (run >= 8 || i + run === n) {
      rleRun(values[i]!, run, valueBytes, out);
      i += run;
      continue;
    }
    // Bit-packed groups until a run of 8 starts at a group's boundary (or the values end).
    const start = i;
    let groups = 0;
    do {
      i += 8;
      groups++;
    } while (i < n && groups < MAX_GROUPS && runAt(values, i, n, 8) < 8);
    out.varint(groups * 2 + 1);
    packGroups(values, start, Math.min(i, n), groups, width, out);
    i = Math.min(i, n);
  }
}

/** One RLE run: `count` times `value`, the value in `valueBytes` little-endian bytes. */
function rleRun(value: number, count: number, valueBytes: number, out: ByteSink): void {
  out.varint(count * 2);
  out.ensure(valueBytes);
  let v = value;
  for (let b = 0; b < valueBytes; b++) {
    out.buf[out.pos++] = v & 0xff;
    v >>>= 8;
  }
}

/** `groups` × 8 values from `from` (those at `to` and after are 0), `width` bits each, LSB first. */
function packGroups(
  values: ArrayLike<number>,
  from: number,
  to: number,
  groups: number,
  width: number,
  out: ByteSink,
): void {
  out.ensure(groups * width);
  const buf = out.buf;
  let p = out.pos;
  let acc = 0;
  let bits = 0;
  const count = groups * 8;
  for (let k = 0; k < count; k++) {
    const at = from + k;
    const v = at < to ? values[at]! : 0;
    acc |= v << bits;
    bits += width;
    while (bits >= 8) {
      buf[p++] = acc & 0xff;
      acc >>>= 8;
      bits -= 8;
    }
  }
  out.pos = p;
}

/**
 * Definition levels as a v1 data page holds them: the hybrid encoding of `levels[0..n)` behind
 * its byte length (4 bytes, little-endian).
 */
export function encodeLevels(levels: ArrayLike<number>, n: number, width: number, out: ByteSink): void {
  lengthPrefixed(out, () => encodeHybrid(levels, n, width, out));
}

/** One definition level repeated `n` times (a column without nulls), behind its byte length. */
export function encodeConstantLevels(level: number, n: number, width: number, out: ByteSink): void {
  lengthPrefixed(out, () => rleRun(level, n, (width + 7) >> 3, out));
}

/** What `write` appends to `out`, behind its byte length (4 bytes, little-endian). */
function lengthPrefixed(out: ByteSink, write: () => void): void {
  const at = out.pos;
  out.int32(0);
  write();
  const len = out.pos - at - 4;
  const end = out.pos;
  out.pos = at;
  out.int32(len);
  out.pos = end;
}
