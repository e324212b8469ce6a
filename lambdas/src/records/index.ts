/** Record decoding. */

export {
  type DecodeContext,
  type DecodedAvro,
  type DecodedJson,
  type DecodedRecord,
  type DecodeFailure,
  DecodeFailureReason,
  decodeJsonRecord,
  decodeRecord,
  type RecordFormat,
} from './decode.ts';
export { encodeGsrFrame, type GsrFrame, isGsrFramed, parseGsrFrame } from './gsr.ts';
export {
  JsonNumberText,
  type JsonObject,
  type JsonValue,
  type NdjsonLine,
  type ParseOptions,
  parseJsonRecord,
  splitLines,
} from './json-line.ts';
export {
  batchItemFailures,
  buildKinesisEvent,
  type KinesisBatch,
  type KinesisBatchRecord,
  type KinesisEvent,
  parseKinesisEvent,
} from './kinesis-event.ts';
export { type Shape, ShapeScanner, SlotKind } from './shape-scanner.ts';
