/**
 * A generic Thrift Compact Protocol codec, just enough to read and rewrite a Parquet footer
 * (`FileMetaData`) without a schema: every field keeps its wire type, so unknown fields survive
 * a decode → edit → encode round trip unchanged.
 */
import { ErrorKind, FloeError } from '../errors.ts';

/** Compact-protocol wire types (booleans in struct fields use TRUE/FALSE as the type). */
export const TType = {
  STOP: 0,
  TRUE: 1,
  FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;

/** A decoded value; i64 is a bigint, i8/i16/i32 are numbers, binary/string are raw bytes. */
export type TValue = boolean | number | bigint | Uint8Array | TList | TMap | TStruct;
export interface TList {
  readonly kind: 'list';
  /** LIST or SET. */
  wireType: number;
  elemType: number;
  items: TValue[];
}
export interface TMap {
  readonly kind: 'map';
  keyType: number;
  valueType: number;
  entries: [TValue, TValue][];
}
export interface TField {
  id: number;
  /** Wire type; booleans are stored as TRUE and the value decides TRUE/FALSE on encode. */
  type: number;
  value: TValue;
}
export interface TStruct {
  readonly kind: 'struct';
  fields: TField[];
}

function corrupt(msg: string): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `corrupt Thrift compact data: ${msg}`);
}

class Reader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  byte(): number {
    if (this.pos >= this.buf.length) throw corrupt('unexpected end of input');
    return this.buf[this.pos++]!;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw corrupt('varint too long');
    }
  }
  varint32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result >>> 0;
      shift += 7;
      if (shift > 35) throw corrupt('varint32 too long');
    }
  }
  zigzag32(): number {
    const n = this.varint32();
    return (n >>> 1) ^ -(n & 1);
  }
  zigzag64(): bigint {
    const n = this.varint();
    return (n >> 1n) ^ -(n & 1n);
  }
  bytes(len: number): Uint8Array {
    if (this.pos + len > this.buf.length) throw corrupt('binary runs past end of input');
    const out = this.buf.slice(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  value(type: number): TValue {
    switch (type) {
      case TType.TRUE:
        return true;
      case TType.FALSE:
        return false;
      case TType.BYTE: {
        const b = this.byte();
        return b > 127 ? b - 256 : b;
      }
      case TType.I16:
      case TType.I32:
        return this.zigzag32();
      case TType.I64:
        return this.zigzag64();
      case TType.DOUBLE: {
        const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
        this.pos += 8;
        return v;
      }
      case TType.BINARY:
        return this.bytes(this.varint32());
      case TType.LIST:
      case TType.SET: {
        const header = this.byte();
        let size = header >> 4;
        const elemType = header & 0x0f;
        if (size === 15) size = this.varint32();
        const items: TValue[] = [];
        for (let i = 0; i < size; i++) items.push(this.listElement(elemType));
        return { kind: 'list', wireType: type, elemType, items };
      }
      case TType.MAP: {
        const size = this.varint32();
        const kv = size > 0 ? this.byte() : 0;
        const keyType = kv >> 4;
        const valueType = kv & 0x0f;
        const entries: [TValue, TValue][] = [];
        for (let i = 0; i < size; i++) entries.push([this.listElement(keyType), this.listElement(valueType)]);
        return { kind: 'map', keyType, valueType, entries };
      }
      case TType.STRUCT:
        return this.struct();
      default:
        throw corrupt(`unknown wire type ${type}`);
    }
  }

  /** Booleans inside containers are one byte (1 = true), not encoded in a field header. */
  listElement(type: number): TValue {
    if (type === TType.TRUE || type === TType.FALSE) return this.byte() === TType.TRUE;
    return this.value(type);
  }

  struct(): TStruct {
    const fields: TField[] = [];
    let lastId = 0;
    for (;;) {
      const header = this.byte();
      const type = header & 0x0f;
      if (type === TType.STOP) return { kind: 'struct', fields };
      const delta = header >> 4;
      const id = delta === 0 ? this.zigzag32() : lastId + delta;
      lastId = id;
      const value = this.value(type);
      fields.push({ id, type: type === TType.FALSE ? TType.TRUE : type, value });
    }
  }
}

class Writer {
  private buf = new Uint8Array(1024);
  pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b & 0xff;
  }
  varint(n: bigint): void {
    while (n >= 0x80n) {
      this.byte(Number(n & 0x7fn) | 0x80);
      n >>= 7n;
    }
    this.byte(Number(n));
  }
  varint32(n: number): void {
    n >>>= 0;
    while (n >= 0x80) {
      this.byte((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    this.byte(n);
  }
  zigzag32(n: number): void {
    this.varint32((n << 1) ^ (n >> 31));
  }
  zigzag64(n: bigint): void {
    this.varint(BigInt.asUintN(64, (n << 1n) ^ (n >> 63n)));
  }
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  value(type: number, v: TValue): void {
    switch (type) {
      case TType.BYTE:
        this.byte(v as number);
        return;
      case TType.I16:
      case TType.I32:
        this.zigzag32(v as number);
        return;
      case TType.I64:
        this.zigzag64(typeof v === 'bigint' ? v : BigInt(v as number));
        return;
      case TType.DOUBLE: {
        const b = new Uint8Array(8);
        new DataView(b.buffer).setFloat64(0, v as number, true);
        this.raw(b);
        return;
      }
      case TType.BINARY: {
        const bytes = v as Uint8Array;
        this.varint32(bytes.length);
        this.raw(bytes);
        return;
      }
      case TType.LIST:
      case TType.SET: {
        const l = v as TList;
        if (l.items.length < 15) this.byte((l.items.length << 4) | l.elemType);
        else {
          this.byte(0xf0 | l.elemType);
          this.varint32(l.items.length);
        }
        for (const item of l.items) this.listElement(l.elemType, item);
        return;
      }
      case TType.MAP: {
        const m = v as TMap;
        this.varint32(m.entries.length);
        if (m.entries.length === 0) return;
        this.byte((m.keyType << 4) | m.valueType);
        for (const [k, val] of m.entries) {
          this.listElement(m.keyType, k);
          this.listElement(m.valueType, val);
        }
        return;
      }
      case TType.STRUCT:
        this.struct(v as TStruct);
        return;
      default:
        throw corrupt(`cannot encode wire type ${type}`);
    }
  }

  listElement(type: number, v: TValue): void {
    if (type === TType.TRUE || type === TType.FALSE) this.byte(v ? TType.TRUE : TType.FALSE);
    else this.value(type, v);
  }

  struct(s: TStruct): void {
    let lastId = 0;
    // The compact protocol needs ascending ids for delta headers; sort a copy to be safe.
    const fields = [...s.fields].sort((a, b) => a.id - b.id);
    for (const f of fields) {
      const isBool = f.type === TType.TRUE || f.type === TType.FALSE;
      const wire = isBool ? (f.value ? TType.TRUE : TType.FALSE) : f.type;
      const delta = f.id - lastId;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | wire);
      else {
        this.byte(wire);
        this.zigzag32(f.id);
      }
      lastId = f.id;
      if (!isBool) this.value(f.type, f.value);
    }
    this.byte(TType.STOP);
  }

  result(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

/** Decodes one struct from `bytes` (which must contain exactly that struct). */
export function decodeStruct(bytes: Uint8Array): TStruct {
  const r = new Reader(bytes);
  const s = r.struct();
  if (r.pos !== bytes.length) throw corrupt(`${bytes.length - r.pos} trailing bytes after struct`);
  return s;
}

/** Encodes a struct back to compact-protocol bytes. */
export function encodeStruct(s: TStruct): Uint8Array {
  const w = new Writer();
  w.struct(s);
  return w.result();
}

// ---- small helpers for working with decoded structs ----

export function getField(s: TStruct, id: number): TValue | undefined {
  for (const f of s.fields) if (f.id === id) return f.value;
  return undefined;
}

export function setField(s: TStruct, id: number, type: number, value: TValue): void {
  const existing = s.fields.find((f) => f.id === id);
  if (existing) {
    existing.type = type;
    existing.value = value;
  } else s.fields.push({ id, type, value });
}

export function removeField(s: TStruct, id: number): void {
  s.fields = s.fields.filter((f) => f.id !== id);
}

export function structList(v: TValue | undefined): TStruct[] {
  if (v === undefined) return [];
  if (typeof v !== 'object' || !('kind' in v) || v.kind !== 'list') throw corrupt('expected a list');
  return v.items as TStruct[];
}

export function asBigInt(v: TValue | undefined): bigint | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  throw corrupt('expected an integer');
}

export function asString(v: TValue | undefined): string | undefined {
  return v instanceof Uint8Array ? new TextDecoder().decode(v) : undefined;
}
