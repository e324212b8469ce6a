/**
 * Dictionary encoding (parquet-format Encodings.md, "Dictionary Encoding"): a column chunk's
 * distinct values, in order of first appearance, and each value's index into them. The chunk is
 * then a dictionary page (the distinct values, PLAIN) and data pages of indices (RLE / bit-packing
 * hybrid). Built with open-addressing hash tables over the values' bytes (32-bit words for
 * numbers: the bit pattern, so -0.0, 0.0 and each NaN are values of their own, as in parquet-mr).
 *
 * A chunk whose values are mostly distinct gains nothing from a dictionary: building one is given
 * up once `MAX_ENTRIES` values are distinct, their bytes pass `MAX_DICTIONARY_BYTES` (parquet-mr's
 * default dictionary page size), or the first `PROBE` values (or all of them) are more than half
 * distinct.
 */

/** At most this many entries (indices stay within 16 bits). */
export const MAX_ENTRIES = 1 << 16;
/** At most this many bytes of PLAIN-encoded dictionary (parquet-mr's 1 MiB default). */
export const MAX_DICTIONARY_BYTES = 1024 * 1024;
/** After this many values, a chunk with more than half of them distinct is written PLAIN. */
const PROBE = 4096;

export interface Dictionary {
  /** Entries. */
  readonly size: number;
  /** Each value's entry. */
  readonly indices: Int32Array;
  /** For each entry, the index of the value that first had it. */
  readonly firsts: Int32Array;
}

function mix(a: number, b: number): number {
  let h = Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca77);
  h ^= h >>> 15;
  h = Math.imul(h, 0xc2b2ae3d);
  return h ^ (h >>> 13);
}

/**
 * The entries found so far: for each, the index of the value that first had it, and an
 * open-addressing table of entry + 1 per slot (0 = free), kept at most half full.
 */
class Entries {
  firsts: Int32Array = new Int32Array(64);
  slots: Int32Array = new Int32Array(256);
  mask = 255;
  size = 0;

  constructor(private readonly hashOf: (value: number) => number) {}

  /** Value `i` as a new entry, in the free slot `slot`; its entry. */
  add(i: number, slot: number): number {
    const e = this.size++;
    if (e === this.firsts.length) {
      const grown = new Int32Array(this.firsts.length * 2);
      grown.set(this.firsts);
      this.firsts = grown;
    }
    this.firsts[e] = i;
    this.slots[slot] = e + 1;
    if (this.size * 2 > this.slots.length) this.grow();
    return e;
  }

  /** The dictionary, or undefined when more than half of the values are distinct (PLAIN is smaller). */
  dictionary(indices: Int32Array): Dictionary | undefined {
    if (this.size * 2 > indices.length) return undefined;
    return { size: this.size, indices, firsts: this.firsts.subarray(0, this.size) };
  }

  private grow(): void {
    const old = this.slots;
    const next = new Int32Array(old.length * 2);
    const mask = next.length - 1;
    for (let s = 0; s < old.length; s++) {
      const e = old[s]!;
      if (e === 0) continue;
      let slot = this.hashOf(this.firsts[e - 1]!) & mask;
      while (next[slot] !== 0) slot = (slot + 1) & mask;
      next[slot] = e;
    }
    this.slots = next;
    this.mask = mask;
  }
}

function gaveUp(distinct: number, seen: number, bytes: number): boolean {
  return distinct > MAX_ENTRIES || bytes > MAX_DICTIONARY_BYTES || (seen === PROBE && distinct * 2 > PROBE);
}

/**
 * The dictionary of `n` values of `wordsPerValue` 32-bit words each (1: int32 / float, 2: int64 /
 * double, little-endian words of `words`), or undefined when it is given up.
 */
export function numberDictionary(words: Int32Array, n: number, wordsPerValue: 1 | 2): Dictionary | undefined {
  const indices = new Int32Array(n);
  const hashOf =
    wordsPerValue === 1
      ? (i: number) => mix(words[i]!, 0x1b873593)
      : (i: number) => mix(words[2 * i]!, words[2 * i + 1]!);
  const entries = new Entries(hashOf);
  for (let i = 0; i < n; i++) {
    const h = hashOf(i);
    const slots = entries.slots;
    const mask = entries.mask;
    let slot = h & mask;
    let found = -1;
    for (;;) {
      const e = slots[slot]!;
      if (e === 0) break;
      const f = entries.firsts[e - 1]!;
      if (
        wordsPerValue === 1
          ? words[f] === words[i]
          : words[2 * f] === words[2 * i] && words[2 * f + 1] === words[2 * i + 1]
      ) {
        found = e - 1;
        break;
      }
      slot = (slot + 1) & mask;
    }
    if (found < 0) {
      if (gaveUp(entries.size + 1, i + 1, (entries.size + 1) * 4 * wordsPerValue)) return undefined;
      found = entries.add(i, slot);
    } else if (i + 1 === PROBE && gaveUp(entries.size, PROBE, 0)) return undefined;
    indices[i] = found;
  }
  return entries.dictionary(indices);
}

/**
 * The dictionary of `n` byte strings, value i being `data[offsets[i]..offsets[i+1])`, or
 * undefined when it is given up.
 */
export function bytesDictionary(data: Uint8Array, offsets: Int32Array, n: number): Dictionary | undefined {
  const indices = new Int32Array(n);
  const hashOf = (i: number): number => {
    let h = 0x811c9dc5;
    const end = offsets[i + 1]!;
    for (let p = offsets[i]!; p < end; p++) h = Math.imul(h ^ data[p]!, 0x01000193);
    return mix(h, end - offsets[i]!);
  };
  const entries = new Entries(hashOf);
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const slots = entries.slots;
    const mask = entries.mask;
    let slot = hashOf(i) & mask;
    let found = -1;
    const from = offsets[i]!;
    const len = offsets[i + 1]! - from;
    for (;;) {
      const e = slots[slot]!;
      if (e === 0) break;
      const f = entries.firsts[e - 1]!;
      const ff = offsets[f]!;
      if (offsets[f + 1]! - ff === len) {
        let k = 0;
        while (k < len && data[ff + k] === data[from + k]) k++;
        if (k === len) {
          found = e - 1;
          break;
        }
      }
      slot = (slot + 1) & mask;
    }
    if (found < 0) {
      bytes += 4 + len;
      if (gaveUp(entries.size + 1, i + 1, bytes)) return undefined;
      found = entries.add(i, slot);
    } else if (i + 1 === PROBE && gaveUp(entries.size, PROBE, 0)) return undefined;
    indices[i] = found;
  }
  return entries.dictionary(indices);
}
