/**
 * Avro binary primitives needed by the object-container framing (Avro spec: "Binary Encoding").
 * Longs are zig-zag varints; all counts and sizes are handled as bigint so nothing rounds.
 */
import { ErrorKind, FloeError } from '../errors.ts';

const MASK64 = (1n << 64n) - 1n;

/** Appends Avro-encoded primitives to a growable list of chunks. */
export class ByteSink {
  private readonly chunks: Uint8Array[] = [];
  private total = 0;

  bytes(b: Uint8Array): this {
    this.chunks.push(b);
    this.total += b.length;
    return this;
  }

  /** Zig-zag varint long (Avro `long` and `int`). */
  long(n: bigint | number): this {
    let z = BigInt(n);
    z = ((z << 1n) ^ (z >> 63n)) & MASK64;
    const out: number[] = [];
    while (z > 0x7fn) {
      out.push(Number(z & 0x7fn) | 0x80);
      z >>= 7n;
    }
    out.push(Number(z));
    return this.bytes(Uint8Array.from(out));
  }

  /** Length-prefixed bytes (Avro `bytes`). */
  lengthPrefixed(b: Uint8Array): this {
    return this.long(b.length).bytes(b);
  }

  /** Length-prefixed UTF-8 (Avro `string`). */
  string(s: string): this {
    return this.lengthPrefixed(new TextEncoder().encode(s));
  }

  concat(): Uint8Array {
    const out = new Uint8Array(this.total);
    let off = 0;
    for (const c of this.chunks) {
      out.set(c, off);
      off += c.length;
    }
    return out;
  }
}

/** Reads Avro-encoded primitives from a byte array, failing with DataInvalid on truncation. */
export class ByteSource {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  take(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.buf.length) {
      throw new FloeError(ErrorKind.DataInvalid, `avro: truncated input (need ${n} bytes at ${this.pos})`);
    }
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  long(): bigint {
    let z = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.take(1)[0]!;
      z |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) break;
      shift += 7n;
      if (shift > 63n) throw new FloeError(ErrorKind.DataInvalid, 'avro: varint longer than 10 bytes');
    }
    return (z >> 1n) ^ -(z & 1n);
  }

  /** A long that must fit a JS array index / length. */
  count(): number {
    const n = this.long();
    if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new FloeError(ErrorKind.DataInvalid, `avro: count out of range: ${n}`);
    }
    return Number(n);
  }

  lengthPrefixed(): Uint8Array {
    return this.take(this.count());
  }

  string(): string {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(this.lengthPrefixed());
    } catch (e) {
      if (e instanceof FloeError) throw e;
      throw new FloeError(ErrorKind.DataInvalid, 'avro: string is not valid UTF-8', { cause: e });
    }
  }
}
