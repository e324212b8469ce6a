/**
 * AWS Glue Schema Registry (GSR) record framing (facts §12.1, serde library
 * `awslabs/aws-glue-schema-registry`):
 *
 * | offset | size | content                                                             |
 * |--------|------|---------------------------------------------------------------------|
 * | 0      | 1    | header version byte, always 3                                       |
 * | 1      | 1    | compression: 0 = none, 5 = zlib (RFC 1950, `java.util.zip.Deflater`) |
 * | 2      | 16   | schema version id, the UUID's canonical (big-endian) byte order      |
 * | 18     | rest | payload: one Avro binary datum (or JSON / protobuf) of that version  |
 *
 * Pure apart from `node:zlib`. Bad frames throw `FloeError(DataInvalid)` whose message says exactly
 * what is wrong and whose `context.reason` is a stable {@link GsrFrameError} code to branch on.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { ErrorKind, FloeError } from '../errors.ts';

/** The header version byte every GSR-framed record starts with. */
export const GSR_HEADER_VERSION = 3;
/** Compression byte: payload as is. */
export const GSR_COMPRESSION_NONE = 0;
/** Compression byte: payload zlib-compressed (RFC 1950 stream, not raw deflate). */
export const GSR_COMPRESSION_ZLIB = 5;
/** Header length: version byte, compression byte, 16-byte schema version id. */
export const GSR_HEADER_LENGTH = 18;
/**
 * Default cap on an inflated payload. Kinesis records are at most 10 MiB; a zlib "bomb" in one
 * record must not exhaust a Lambda's memory.
 */
export const DEFAULT_MAX_INFLATED_BYTES = 64 * 1024 * 1024;

export type GsrCompression = 'none' | 'zlib';

/** Why bytes are not a usable GSR frame (`context.reason` of the thrown error). */
export type GsrFrameError = 'not-gsr-framed' | 'truncated-header' | 'unknown-compression' | 'zlib-corrupt';

export interface GsrFrame {
  /** The schema version id as a canonical lower-case UUID (`8-4-4-4-12`). */
  readonly schemaVersionId: string;
  readonly compression: GsrCompression;
  /** The payload, inflated when it was compressed (otherwise a view into the input, not a copy). */
  readonly payload: Uint8Array;
}

export interface ParseGsrOptions {
  /** Largest inflated payload accepted (default {@link DEFAULT_MAX_INFLATED_BYTES}). */
  readonly maxInflatedBytes?: number;
}

function frameError(reason: GsrFrameError, message: string, cause?: unknown): FloeError {
  return new FloeError(ErrorKind.DataInvalid, message, {
    context: { reason },
    ...(cause === undefined ? {} : { cause }),
  });
}

function hex2(b: number): string {
  return b.toString(16).padStart(2, '0');
}

/**
 * Quick test for the GSR header: version byte 3, a known compression byte and a complete
 * 18-byte header. Does not inflate or look at the payload. (The serde library itself only looks
 * at the first byte; JSON text never starts with byte 3, so both agree on real streams.)
 */
export function isGsrFramed(bytes: Uint8Array): boolean {
  return (
    bytes.length >= GSR_HEADER_LENGTH &&
    bytes[0] === GSR_HEADER_VERSION &&
    (bytes[1] === GSR_COMPRESSION_NONE || bytes[1] === GSR_COMPRESSION_ZLIB)
  );
}

/**
 * Splits a GSR-framed record into its schema version id and (inflated) payload. Throws
 * `FloeError(DataInvalid)`: `not GSR-framed: first byte 0x7b`, `truncated header: …`,
 * `unknown compression byte 7`, `zlib payload corrupt: …`.
 */
export function parseGsrFrame(bytes: Uint8Array, options: ParseGsrOptions = {}): GsrFrame {
  if (bytes.length === 0) throw frameError('not-gsr-framed', 'not GSR-framed: empty record');
  const first = bytes[0]!;
  if (first !== GSR_HEADER_VERSION) {
    throw frameError('not-gsr-framed', `not GSR-framed: first byte 0x${hex2(first)}`);
  }
  if (bytes.length < GSR_HEADER_LENGTH) {
    throw frameError(
      'truncated-header',
      `truncated header: ${bytes.length} bytes, a GSR header needs ${GSR_HEADER_LENGTH}`,
    );
  }
  const c = bytes[1]!;
  if (c !== GSR_COMPRESSION_NONE && c !== GSR_COMPRESSION_ZLIB) {
    throw frameError('unknown-compression', `unknown compression byte ${c}`);
  }
  const schemaVersionId = uuidFromBytes(bytes.subarray(2, GSR_HEADER_LENGTH));
  const body = bytes.subarray(GSR_HEADER_LENGTH);
  if (c === GSR_COMPRESSION_NONE) return { schemaVersionId, compression: 'none', payload: body };
  const max = options.maxInflatedBytes ?? DEFAULT_MAX_INFLATED_BYTES;
  let inflated: Buffer;
  try {
    inflated = inflateSync(body, { maxOutputLength: max });
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const why = code === 'ERR_BUFFER_TOO_LARGE' ? `inflates to more than ${max} bytes` : (e as Error).message;
    throw frameError('zlib-corrupt', `zlib payload corrupt: ${why}`, e);
  }
  return {
    schemaVersionId,
    compression: 'zlib',
    payload: new Uint8Array(inflated.buffer, inflated.byteOffset, inflated.length),
  };
}

/**
 * Frames a payload the way the GSR serializer does (for tests, the local registry and
 * `floe generate`). zlib uses the default level, as `java.util.zip.Deflater` does.
 */
export function encodeGsrFrame(
  schemaVersionId: string,
  payload: Uint8Array,
  compression: GsrCompression = 'none',
): Uint8Array {
  const id = uuidToBytes(schemaVersionId);
  const body = compression === 'zlib' ? deflateSync(payload) : payload;
  const out = new Uint8Array(GSR_HEADER_LENGTH + body.length);
  out[0] = GSR_HEADER_VERSION;
  out[1] = compression === 'zlib' ? GSR_COMPRESSION_ZLIB : GSR_COMPRESSION_NONE;
  out.set(id, 2);
  out.set(body, GSR_HEADER_LENGTH);
  return out;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a canonical `8-4-4-4-12` hex UUID (either case). */
export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/** 16 bytes (big-endian, canonical order) → lower-case `8-4-4-4-12` text. */
export function uuidFromBytes(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
    s += hex2(b[i]!);
  }
  return s;
}

/** Canonical UUID text → its 16 bytes; throws `FloeError(DataInvalid)` for anything else. */
export function uuidToBytes(id: string): Uint8Array {
  if (!isUuid(id)) {
    throw new FloeError(ErrorKind.DataInvalid, `schema version id must be a canonical UUID, got '${id}'`);
  }
  const h = id.replace(/-/g, '');
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = Number.parseInt(h.slice(i * 2, i * 2 + 2), 16);
  return out;
}
