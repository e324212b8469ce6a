/**
 * The few protobuf wire-format pieces the KPL aggregate needs (https://protobuf.dev/programming-guides/encoding/):
 * varints, length-delimited fields, and skipping fields a reader does not know. Strict: a
 * truncated varint or field, a group (wire types 3, 4) or an unknown wire type is an error.
 */

export class ProtobufError extends Error {}

/** A cursor over a protobuf message's bytes. */
export class ProtoReader {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.length,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  /** A varint of at most 64 bits, as a number (exact up to 2^53; callers bound what they accept). */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new ProtobufError('truncated varint');
      const b = this.bytes[this.pos++]!;
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    throw new ProtobufError('varint longer than 10 bytes');
  }

  /** A field's tag: its number and wire type. */
  tag(): { field: number; wire: number } {
    const t = this.varint();
    const field = Math.floor(t / 8);
    if (field === 0) throw new ProtobufError('field number 0');
    return { field, wire: t % 8 };
  }

  /** The bytes of a length-delimited field (a view, not a copy). */
  lengthDelimited(): Uint8Array {
    const n = this.varint();
    if (n > this.end - this.pos) throw new ProtobufError('length-delimited field runs past the end');
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** Skips a field of an unknown number. */
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 2) this.lengthDelimited();
    else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      if (n > this.end - this.pos) throw new ProtobufError('fixed-width field runs past the end');
      this.pos += n;
    } else throw new ProtobufError(`wire type ${wire} is not supported`);
  }
}

/** Appends protobuf fields to a growing buffer. */
export class ProtoWriter {
  private chunks: Uint8Array[] = [];
  private scratch: number[] = [];
  length = 0;

  varint(v: number): this {
    if (!Number.isSafeInteger(v) || v < 0) throw new ProtobufError(`varint ${v} out of range`);
    const out = this.scratch;
    out.length = 0;
    let n = v;
    while (n >= 128) {
      out.push((n % 128) | 0x80);
      n = Math.floor(n / 128);
    }
    out.push(n);
    return this.raw(Uint8Array.from(out));
  }

  tag(field: number, wire: number): this {
    return this.varint(field * 8 + wire);
  }

  bytesField(field: number, data: Uint8Array): this {
    return this.tag(field, 2).varint(data.length).raw(data);
  }

  varintField(field: number, v: number): this {
    return this.tag(field, 0).varint(v);
  }

  raw(data: Uint8Array): this {
    this.chunks.push(data);
    this.length += data.length;
    return this;
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}
