/**
 * Murmur3 x86 32-bit hash with seed 0 (spec §"Bucket Transform Details"; Guava
 * `Hashing.murmur3_32_fixed()`), the hash behind the `bucket[N]` transform.
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function mixK1(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

function mixH1(h: number, k: number): number {
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** Final avalanche (`fmix32`). */
function fmix(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** Murmur3_x86_32 of `bytes` with seed 0, as a signed 32-bit integer (like Java's `int`). */
export function murmur3Hash32(bytes: Uint8Array, seed = 0): number {
  let h = seed | 0;
  const n = bytes.length;
  const blocks = n & ~3;
  for (let i = 0; i < blocks; i += 4) {
    // Little-endian 4-byte blocks.
    const k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    h = mixH1(h, mixK1(k));
  }
  const tail = n & 3;
  if (tail > 0) {
    // Remaining 1–3 bytes, little-endian.
    let k = 0;
    for (let j = tail - 1; j >= 0; j--) k = (k << 8) | bytes[blocks + j]!;
    h ^= mixK1(k);
  }
  return fmix(h, n);
}

/** Hash of a 64-bit value as 8 little-endian bytes (Java `BucketUtil.hash(long)`; ints are widened). */
export function murmur3HashLong(value: bigint): number {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, BigInt.asIntN(64, value), true);
  return murmur3Hash32(b);
}
