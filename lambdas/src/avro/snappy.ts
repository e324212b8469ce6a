/**
 * Snappy raw-block decompression, enough to read Avro files written with `avro.codec = snappy`
 * (Avro spec: "Object Container Files" / snappy = block + 4-byte big-endian CRC32 of the output).
 * Read-only: Floe writes `null` or `deflate`.
 */
import { ErrorKind, FloeError } from '../errors.ts';

function fail(msg: string): never {
  throw new FloeError(ErrorKind.DataInvalid, `snappy: ${msg}`);
}

/** Decompresses one raw snappy block (no framing format). */
export function snappyDecompress(src: Uint8Array): Uint8Array {
  let pos = 0;
  const byte = (): number => {
    if (pos >= src.length) fail('truncated input');
    return src[pos++]!;
  };
  let len = 0;
  for (let shift = 0; ; shift += 7) {
    if (shift > 28) fail('bad length preamble');
    const b = byte();
    len += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
  }
  const out = new Uint8Array(len);
  let o = 0;
  const leUint = (n: number): number => {
    let v = 0;
    for (let i = 0; i < n; i++) v += byte() * 2 ** (8 * i);
    return v;
  };
  while (pos < src.length) {
    const tag = byte();
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >> 2;
      if (n >= 60) n = leUint(n - 59);
      n += 1;
      if (pos + n > src.length || o + n > len) fail('literal overruns buffer');
      out.set(src.subarray(pos, pos + n), o);
      pos += n;
      o += n;
      continue;
    }
    let n: number;
    let offset: number;
    if (kind === 1) {
      n = 4 + ((tag >> 2) & 7);
      offset = ((tag >> 5) << 8) | byte();
    } else {
      n = (tag >> 2) + 1;
      offset = leUint(kind === 2 ? 2 : 4);
    }
    if (offset === 0 || offset > o || o + n > len) fail('copy out of range');
    // Byte-by-byte because copies may overlap their own output (run-length style).
    for (let i = 0; i < n; i++, o++) out[o] = out[o - offset]!;
  }
  if (o !== len) fail(`expected ${len} bytes, produced ${o}`);
  return out;
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE 802.3, reflected), as Java's `java.util.zip.CRC32`. */
export function crc32(data: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[i] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const b of data) crc = crcTable[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
