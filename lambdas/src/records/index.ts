/** Record decoding. */
export {
  JsonNumberText,
  type JsonObject,
  type JsonValue,
  type NdjsonLine,
  type ParseOptions,
  parseJsonRecord,
  splitLines,
} from './json-line.ts';
