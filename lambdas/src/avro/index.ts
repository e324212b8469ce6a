/** Avro object container files and bigint-safe datum encoding (Avro 1.11 spec). */
export { type AvroWriteCodec, compressBlock, decompressBlock } from './codecs.ts';
export {
  AVRO_MAGIC,
  DEFAULT_BLOCK_SIZE,
  type DecodeAvroContainerOptions,
  type DecodedAvroContainer,
  decodeAvroContainer,
  type EncodeAvroContainerOptions,
  encodeAvroContainer,
  SYNC_SIZE,
} from './container.ts';
export { type AvroDatumType, avroDatumType } from './datum.ts';
