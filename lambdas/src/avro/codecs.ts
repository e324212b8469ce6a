/**
 * Block codecs of Avro object container files (Avro spec: "Required Codecs", "Optional Codecs").
 * `deflate` is RFC 1951 raw deflate (no zlib header), which is what Java's Avro writes.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { ErrorKind, FloeError } from '../errors.ts';
import { crc32, snappyDecompress } from './snappy.ts';

/** Codecs Floe can write. */
export type AvroWriteCodec = 'null' | 'deflate';

export function compressBlock(codec: AvroWriteCodec, data: Uint8Array): Uint8Array {
  switch (codec) {
    case 'null':
      return data;
    case 'deflate':
      return new Uint8Array(deflateRawSync(data));
    default:
      throw new FloeError(ErrorKind.FeatureUnsupported, `avro: cannot write codec '${String(codec)}'`);
  }
}

/** Decompresses one block; `null`, `deflate` and `snappy` are supported (zstandard needs Node ≥ 22). */
export function decompressBlock(codec: string, data: Uint8Array): Uint8Array {
  switch (codec) {
    case 'null':
      return data;
    case 'deflate':
      try {
        return new Uint8Array(inflateRawSync(data));
      } catch (e) {
        throw new FloeError(ErrorKind.DataInvalid, 'avro: corrupt deflate block', { cause: e });
      }
    case 'snappy': {
      if (data.length < 4) throw new FloeError(ErrorKind.DataInvalid, 'avro: snappy block without CRC');
      const out = snappyDecompress(data.subarray(0, data.length - 4));
      const view = new DataView(data.buffer, data.byteOffset + data.length - 4, 4);
      if (view.getUint32(0, false) !== crc32(out)) {
        throw new FloeError(ErrorKind.DataInvalid, 'avro: snappy block CRC mismatch');
      }
      return out;
    }
    default:
      throw new FloeError(ErrorKind.FeatureUnsupported, `avro: unsupported codec '${codec}'`);
  }
}
