/**
 * Min / max (and NaN) scans over the non-null entries of typed columns (`valid` undefined = all
 * valid), for the manifest metrics and the Parquet statistics of the writers.
 */

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function int64Bounds(
  a: BigInt64Array,
  n: number,
  valid: Uint8Array | undefined,
): { min: bigint; max: bigint } | undefined {
  if (!LITTLE_ENDIAN) {
    let seen = false;
    let min = 0n;
    let max = 0n;
    for (let i = 0; i < n; i++) {
      if (valid !== undefined && valid[i] === 0) continue;
      const v = a[i]!;
      if (!seen) {
        min = max = v;
        seen = true;
      } else if (v < min) min = v;
      else if (v > max) max = v;
    }
    return seen ? { min, max } : undefined;
  }
  // Compare (signed high word, unsigned low word) pairs: no BigInt per value.
  const w = new Int32Array(a.buffer, a.byteOffset, n * 2);
  let seen = false;
  let minHi = 0;
  let minLo = 0;
  let maxHi = 0;
  let maxLo = 0;
  for (let i = 0; i < n; i++) {
    if (valid !== undefined && valid[i] === 0) continue;
    const hi = w[2 * i + 1]!;
    const lo = w[2 * i]! >>> 0;
    if (!seen) {
      minHi = maxHi = hi;
      minLo = maxLo = lo;
      seen = true;
    } else if (hi < minHi || (hi === minHi && lo < minLo)) {
      minHi = hi;
      minLo = lo;
    } else if (hi > maxHi || (hi === maxHi && lo > maxLo)) {
      maxHi = hi;
      maxLo = lo;
    }
  }
  if (!seen) return undefined;
  return {
    min: BigInt(minHi) * 4294967296n + BigInt(minLo),
    max: BigInt(maxHi) * 4294967296n + BigInt(maxLo),
  };
}

export function int32Bounds(
  a: Int32Array,
  n: number,
  valid: Uint8Array | undefined,
): { min: number; max: number } | undefined {
  let seen = false;
  let min = 0;
  let max = 0;
  for (let i = 0; i < n; i++) {
    if (valid !== undefined && valid[i] === 0) continue;
    const v = a[i]!;
    if (!seen) {
      min = max = v;
      seen = true;
    } else if (v < min) min = v;
    else if (v > max) max = v;
  }
  return seen ? { min, max } : undefined;
}

export interface FloatBounds {
  seen: boolean;
  min: number;
  max: number;
  nans: number;
}

// Two copies of one loop so each stays monomorphic in its array type.

/** As `buildFloat`: NaN is counted and never a bound; -0.0 sorts before +0.0. */
export function floatBounds64(a: Float64Array, n: number, valid: Uint8Array | undefined): FloatBounds {
  let seen = false;
  let min = 0;
  let max = 0;
  let nans = 0;
  for (let i = 0; i < n; i++) {
    if (valid !== undefined && valid[i] === 0) continue;
    const f = a[i]!;
    if (Number.isNaN(f)) nans++;
    else if (!seen) {
      min = max = f;
      seen = true;
    } else if (f < min || (f === 0 && min === 0 && Object.is(f, -0))) min = f;
    else if (f > max || (f === 0 && max === 0 && Object.is(max, -0))) max = f;
  }
  return { seen, min, max, nans };
}

export function floatBounds32(a: Float32Array, n: number, valid: Uint8Array | undefined): FloatBounds {
  let seen = false;
  let min = 0;
  let max = 0;
  let nans = 0;
  for (let i = 0; i < n; i++) {
    if (valid !== undefined && valid[i] === 0) continue;
    const f = a[i]!;
    if (Number.isNaN(f)) nans++;
    else if (!seen) {
      min = max = f;
      seen = true;
    } else if (f < min || (f === 0 && min === 0 && Object.is(f, -0))) min = f;
    else if (f > max || (f === 0 && max === 0 && Object.is(max, -0))) max = f;
  }
  return { seen, min, max, nans };
}
