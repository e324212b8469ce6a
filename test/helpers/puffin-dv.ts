/**
 * Deletion vectors (Iceberg v3), decoded from the spec text alone (independent of lambdas/src):
 * format/puffin-spec.md "`deletion-vector-v1` blob type" and the Roaring format it names
 * (RoaringFormatSpec "General layout" and "Extension for 64-bit implementations").
 *
 * Blob: length (4 bytes big-endian, = magic + vector), magic D1 D3 39 64, the vector, CRC-32 of
 * magic + vector (4 bytes big-endian). Vector: bitmap count (8 bytes LE), then per 32-bit key
 * (ascending, 4 bytes LE) a 32-bit Roaring bitmap of the low 32 bits of the positions.
 */
import { crc32 } from 'node:zlib';

const DV_MAGIC = [0xd1, 0xd3, 0x39, 0x64];
const SERIAL_COOKIE_NO_RUNCONTAINER = 12346;
const SERIAL_COOKIE = 12347;
const NO_OFFSET_THRESHOLD = 4;

/** The deleted positions of a `deletion-vector-v1` blob (the blob's bytes only), ascending. */
export function decodeDeletionVector(blob: Uint8Array): bigint[] {
  const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  if (blob.length < 12) throw new Error(`deletion vector of ${blob.length} bytes is too short`);
  const length = dv.getUint32(0, false);
  if (length + 8 !== blob.length)
    throw new Error(`deletion vector length field ${length} does not fit a ${blob.length}-byte blob`);
  for (let i = 0; i < 4; i++)
    if (blob[4 + i] !== DV_MAGIC[i]) throw new Error('deletion vector magic is not D1 D3 39 64');
  const body = blob.subarray(4, 4 + length);
  const crc = dv.getUint32(4 + length, false);
  if (crc32(body) !== crc) throw new Error('deletion vector CRC-32 does not match');
  return decodePortable64(blob.subarray(8, 4 + length));
}

/** Roaring "portable" 64-bit serialization: bucket count, then (32-bit key, 32-bit bitmap) pairs. */
export function decodePortable64(bytes: Uint8Array): bigint[] {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const buckets = dv.getBigUint64(0, true);
  let pos = 8;
  const out: bigint[] = [];
  let lastKey = -1;
  for (let b = 0n; b < buckets; b++) {
    const key = dv.getUint32(pos, true);
    // Positions are positive longs: "the most significant bit must be 0".
    if (key <= lastKey || key > 0x7fffffff) throw new Error(`bad or unordered bitmap key ${key}`);
    lastKey = key;
    const { values, end } = decodeRoaring32(bytes, pos + 4);
    for (const v of values) out.push((BigInt(key) << 32n) | BigInt(v));
    pos = end;
  }
  if (pos !== bytes.length) throw new Error(`${bytes.length - pos} bytes after the last bitmap`);
  return out;
}

/** A standard 32-bit Roaring bitmap at `start`: its values (ascending) and where it ends. */
function decodeRoaring32(bytes: Uint8Array, start: number): { values: number[]; end: number } {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = start;
  const cookie = dv.getUint32(pos, true);
  pos += 4;
  let size: number;
  let runFlags: Uint8Array | undefined;
  if ((cookie & 0xffff) === SERIAL_COOKIE) {
    size = (cookie >>> 16) + 1;
    runFlags = bytes.subarray(pos, pos + Math.ceil(size / 8));
    pos += runFlags.length;
  } else if (cookie === SERIAL_COOKIE_NO_RUNCONTAINER) {
    size = dv.getUint32(pos, true);
    pos += 4;
  } else throw new Error(`not a Roaring bitmap (cookie ${cookie})`);
  const keys: number[] = [];
  const cards: number[] = [];
  for (let i = 0; i < size; i++) {
    keys.push(dv.getUint16(pos, true));
    cards.push(dv.getUint16(pos + 2, true) + 1);
    pos += 4;
  }
  // Offset header: always without run containers, with them only from NO_OFFSET_THRESHOLD containers.
  if (!runFlags || size >= NO_OFFSET_THRESHOLD) pos += 4 * size;
  const values: number[] = [];
  for (let i = 0; i < size; i++) {
    const high = (keys[i] ?? 0) * 0x10000;
    const card = cards[i] ?? 0;
    const isRun = runFlags !== undefined && ((runFlags[i >> 3] ?? 0) >> (i & 7)) & 1;
    if (isRun) {
      const runs = dv.getUint16(pos, true);
      pos += 2;
      for (let r = 0; r < runs; r++) {
        const first = dv.getUint16(pos, true);
        const lengthMinusOne = dv.getUint16(pos + 2, true);
        pos += 4;
        for (let v = first; v <= first + lengthMinusOne; v++) values.push(high + v);
      }
    } else if (card <= 4096) {
      for (let j = 0; j < card; j++) values.push(high + dv.getUint16(pos + 2 * j, true));
      pos += 2 * card;
    } else {
      // Bitset: 1024 little-endian 64-bit words; value j is bit j%64 of word j/64.
      for (let w = 0; w < 1024; w++) {
        const word = dv.getBigUint64(pos + 8 * w, true);
        if (word === 0n) continue;
        for (let bit = 0; bit < 64; bit++) if ((word >> BigInt(bit)) & 1n) values.push(high + w * 64 + bit);
      }
      pos += 8192;
    }
  }
  return { values, end: pos };
}

// ---------------------------------------------------------------------------------------------
// Writing (for tests): run containers on request, else array or bitset containers by cardinality
// (as the reader tells them apart), so every decoder path can be exercised.

/** A `deletion-vector-v1` blob holding `positions`. */
export function encodeDeletionVector(
  positions: readonly bigint[],
  opts: { runs?: boolean } = {},
): Uint8Array {
  const byKey = new Map<number, number[]>();
  for (const p of [...new Set(positions)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const key = Number(p >> 32n);
    const low = Number(p & 0xffffffffn);
    const list = byKey.get(key) ?? [];
    list.push(low);
    byKey.set(key, list);
  }
  const parts: Uint8Array[] = [];
  const count = new DataView(new ArrayBuffer(8));
  count.setBigUint64(0, BigInt(byKey.size), true);
  parts.push(new Uint8Array(count.buffer));
  for (const [key, lows] of [...byKey].sort((a, b) => a[0] - b[0])) {
    const k = new DataView(new ArrayBuffer(4));
    k.setUint32(0, key, true);
    parts.push(new Uint8Array(k.buffer), encodeRoaring32(lows, opts.runs === true));
  }
  const vector = concat(parts);
  const body = concat([new Uint8Array(DV_MAGIC), vector]);
  const out = new Uint8Array(body.length + 8);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, body.length, false);
  out.set(body, 4);
  dv.setUint32(4 + body.length, crc32(body), false);
  return out;
}

function encodeRoaring32(sorted: readonly number[], useRuns: boolean): Uint8Array {
  const containers = new Map<number, number[]>();
  for (const v of sorted) {
    const list = containers.get(v >>> 16) ?? [];
    list.push(v & 0xffff);
    containers.set(v >>> 16, list);
  }
  const size = containers.size;
  const w = new Writer();
  if (useRuns) {
    w.u32(SERIAL_COOKIE | ((size - 1) << 16));
    const flags = new Uint8Array(Math.ceil(size / 8)).fill(0xff);
    w.bytes(flags);
  } else {
    w.u32(SERIAL_COOKIE_NO_RUNCONTAINER);
    w.u32(size);
  }
  const bodies: Uint8Array[] = [];
  for (const [key, lows] of containers) {
    w.u16(key);
    w.u16(lows.length - 1);
    const c = new Writer();
    if (useRuns) {
      const runs: [number, number][] = [];
      for (const v of lows) {
        const last = runs.at(-1);
        if (last && last[0] + last[1] + 1 === v) last[1]++;
        else runs.push([v, 0]);
      }
      c.u16(runs.length);
      for (const [first, lengthMinusOne] of runs) {
        c.u16(first);
        c.u16(lengthMinusOne);
      }
    } else if (lows.length <= 4096) {
      for (const v of lows) c.u16(v);
    } else {
      const words = new BigUint64Array(1024);
      for (const v of lows) words[v >> 6] = (words[v >> 6] ?? 0n) | (1n << BigInt(v & 63));
      const dv = new DataView(new ArrayBuffer(8192));
      words.forEach((word, i) => {
        dv.setBigUint64(i * 8, word, true);
      });
      c.bytes(new Uint8Array(dv.buffer));
    }
    bodies.push(c.done());
  }
  let offset = w.length + (!useRuns || size >= NO_OFFSET_THRESHOLD ? 4 * size : 0);
  if (!useRuns || size >= NO_OFFSET_THRESHOLD) {
    for (const b of bodies) {
      w.u32(offset);
      offset += b.length;
    }
  }
  for (const b of bodies) w.bytes(b);
  return w.done();
}

class Writer {
  private readonly parts: Uint8Array[] = [];
  length = 0;
  u16(v: number): void {
    const b = new Uint8Array(2);
    new DataView(b.buffer).setUint16(0, v, true);
    this.bytes(b);
  }
  u32(v: number): void {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, v >>> 0, true);
    this.bytes(b);
  }
  bytes(b: Uint8Array): void {
    this.parts.push(b);
    this.length += b.length;
  }
  done(): Uint8Array {
    return concat(this.parts);
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const PUFFIN_MAGIC = [0x50, 0x46, 0x41, 0x31];

/**
 * A Puffin file of deletion vectors (puffin-spec "File structure", "Footer structure"): magic, the
 * blobs, then magic, the uncompressed JSON footer, its length (4 bytes LE), flags 0 and magic.
 * Returns the bytes and each blob's offset / length (the manifest's content_offset / size).
 */
export function puffinOf(
  vectors: readonly {
    readonly referencedDataFile: string;
    readonly positions: readonly bigint[];
    readonly runs?: boolean;
  }[],
): { bytes: Uint8Array; blobs: { offset: number; length: number }[] } {
  const parts: Uint8Array[] = [new Uint8Array(PUFFIN_MAGIC)];
  let at = 4;
  const blobs: { offset: number; length: number }[] = [];
  const meta: unknown[] = [];
  for (const v of vectors) {
    const blob = encodeDeletionVector(v.positions, { runs: v.runs === true });
    blobs.push({ offset: at, length: blob.length });
    meta.push({
      type: 'deletion-vector-v1',
      fields: [2147483545], // _pos, as Java writes
      'snapshot-id': -1,
      'sequence-number': -1,
      offset: at,
      length: blob.length,
      properties: {
        'referenced-data-file': v.referencedDataFile,
        cardinality: String(new Set(v.positions).size),
      },
    });
    parts.push(blob);
    at += blob.length;
  }
  const payload = new TextEncoder().encode(
    JSON.stringify({ blobs: meta, properties: { 'created-by': 'floe tests' } }),
  );
  const tail = new Uint8Array(8);
  new DataView(tail.buffer).setInt32(0, payload.length, true);
  parts.push(new Uint8Array(PUFFIN_MAGIC), payload, tail, new Uint8Array(PUFFIN_MAGIC));
  return { bytes: concat(parts), blobs };
}
