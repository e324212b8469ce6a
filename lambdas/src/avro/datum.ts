/**
 * Avro datum encoding through avsc, with every Avro `long` read and written as a JS bigint
 * (snapshot ids and sequence numbers exceed 2^53, so `number` would silently round).
 */
import avsc from 'avsc';
import { ErrorKind, FloeError } from '../errors.ts';

const MIN_LONG = -(1n << 63n);
const MAX_LONG = (1n << 63n) - 1n;

/** avsc long type whose values are bigint (avsc hands us the 8-byte little-endian two's complement). */
const BigIntLong = avsc.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(0),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (x: unknown) => BigInt(x as string | number | bigint),
  toJSON: (n: bigint) =>
    n >= -BigInt(Number.MAX_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : String(n),
  isValid: (n: unknown) => typeof n === 'bigint' && n >= MIN_LONG && n <= MAX_LONG,
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

function longHook(schema: unknown): avsc.Type | undefined {
  const isLong =
    schema === 'long' ||
    (typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'long');
  return isLong ? BigIntLong : undefined;
}

/** The avsc pieces Floe uses; kept narrow so the rest of the code does not depend on avsc types. */
export interface AvroDatumType {
  encode(value: unknown): Uint8Array;
  /** Decodes one datum starting at `offset`; returns the value and the offset after it. */
  decode(buf: Uint8Array, offset: number): { value: unknown; offset: number };
}

/**
 * Compiles an Avro schema (JSON object form) into an encoder/decoder. Unions of `null` and one
 * type are unwrapped (value or null); logical types are ignored, so decimals/uuids stay bytes.
 */
export function avroDatumType(schemaJson: unknown): AvroDatumType {
  // Compiling a schema costs ~1 ms (avsc generates code); a load writes a manifest of the same
  // schema for every table of a spec's shape, so compiled types are kept by their schema's text.
  const key = JSON.stringify(schemaJson);
  const cached = compiled.get(key);
  if (cached) return cached;
  const made = compile(schemaJson);
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, made);
  return made;
}

const MAX_COMPILED = 256;
const compiled = new Map<string, AvroDatumType>();

function compile(schemaJson: unknown): AvroDatumType {
  let type: avsc.Type;
  try {
    type = avsc.Type.forSchema(schemaJson as avsc.Schema, { typeHook: longHook, wrapUnions: 'auto' });
  } catch (e) {
    throw new FloeError(ErrorKind.DataInvalid, `avro: invalid schema: ${(e as Error).message}`, { cause: e });
  }
  return {
    encode(value) {
      try {
        const buf = type.toBuffer(value);
        return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
      } catch (e) {
        throw new FloeError(ErrorKind.DataInvalid, `avro: cannot encode datum: ${(e as Error).message}`, {
          cause: e,
        });
      }
    },
    decode(buf, offset) {
      const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
      let res: { value: unknown; offset: number };
      try {
        res = type.decode(b, offset);
      } catch (e) {
        throw new FloeError(ErrorKind.DataInvalid, `avro: corrupt datum: ${(e as Error).message}`, {
          cause: e,
        });
      }
      if (res.offset < 0) throw new FloeError(ErrorKind.DataInvalid, 'avro: truncated datum');
      return { value: res.value, offset: res.offset };
    },
  };
}
