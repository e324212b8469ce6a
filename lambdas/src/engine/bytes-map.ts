/**
 * A hash map keyed by byte strings, looked up without allocating: the key is given as a range of
 * a buffer (`buf[start..end)`), hashed (FNV-1a) and compared in place. The fast path uses it to
 * map routing values, as the record's bytes hold them, to their route: sanitising a table name
 * runs once per distinct value, and a record costs one hash of a few bytes.
 */
export class BytesMap<V> {
  private hashes: Int32Array;
  private keys: (Uint8Array | undefined)[];
  private values: (V | undefined)[];
  private mask: number;
  private count = 0;

  constructor(capacity = 64) {
    let n = 16;
    while (n < capacity * 2) n *= 2;
    this.hashes = new Int32Array(n);
    this.keys = new Array(n);
    this.values = new Array(n);
    this.mask = n - 1;
  }

  get size(): number {
    return this.count;
  }

  /** The value stored for the bytes `buf[start..end)`, or undefined. */
  get(buf: Uint8Array, start: number, end: number): V | undefined {
    const h = hashBytes(buf, start, end);
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const k = this.keys[i];
      if (k === undefined) return undefined;
      if (this.hashes[i] === h && sameBytes(k, buf, start, end)) return this.values[i];
    }
  }

  /** Stores `value` for a copy of `buf[start..end)` (replacing what was stored for them). */
  set(buf: Uint8Array, start: number, end: number, value: V): void {
    if ((this.count + 1) * 2 > this.keys.length) this.grow();
    const h = hashBytes(buf, start, end);
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const k = this.keys[i];
      if (k === undefined) {
        this.keys[i] = buf.slice(start, end);
        this.hashes[i] = h;
        this.values[i] = value;
        this.count++;
        return;
      }
      if (this.hashes[i] === h && sameBytes(k, buf, start, end)) {
        this.values[i] = value;
        return;
      }
    }
  }

  /** Every stored value. */
  *entries(): IterableIterator<[Uint8Array, V]> {
    for (let i = 0; i < this.keys.length; i++) {
      const k = this.keys[i];
      if (k !== undefined) yield [k, this.values[i]!];
    }
  }

  private grow(): void {
    const keys = this.keys;
    const values = this.values;
    const n = keys.length * 2;
    this.hashes = new Int32Array(n);
    this.keys = new Array(n);
    this.values = new Array(n);
    this.mask = n - 1;
    this.count = 0;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k !== undefined) this.set(k, 0, k.length, values[i]!);
    }
  }
}

/** FNV-1a over `buf[start..end)`, as a 32-bit integer. */
export function hashBytes(buf: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    h ^= buf[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

function sameBytes(k: Uint8Array, buf: Uint8Array, start: number, end: number): boolean {
  const n = end - start;
  if (k.length !== n) return false;
  for (let i = 0; i < n; i++) if (k[i] !== buf[start + i]) return false;
  return true;
}
