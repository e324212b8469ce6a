/**
 * The Kinesis partition key of one NDJSON line for `floe send`: the value of a chosen top-level
 * field when the line is a JSON object that has a usable one, else a hash of the line's bytes, so
 * equal lines always land on the same shard (no randomness, no clock).
 */
import { createHash } from 'node:crypto';
import { JsonNumberText, type JsonValue, parseJsonRecord } from './json-line.ts';

/** Kinesis: partition keys are 1 to 256 Unicode characters. */
export const MAX_PARTITION_KEY_LENGTH = 256;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The first 32 hex digits (128 bits) of the SHA-256 of the bytes. */
export function hashPartitionKey(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 32);
}

/**
 * Whether Kinesis accepts `key`. Length is counted in UTF-16 code units: never more than the
 * characters, and what kinesalite (and the service's Java validation) measure, so a key that
 * passes here is never rejected. A lone surrogate is not Unicode text at all.
 */
export function isUsablePartitionKey(key: string): boolean {
  return key.length >= 1 && key.length <= MAX_PARTITION_KEY_LENGTH && !LONE_SURROGATE.test(key);
}

/** A top-level field's value as key text: strings as they are, numbers and booleans as JSON text. */
function keyText(v: JsonValue | undefined): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return JSON.stringify(v);
  if (v instanceof JsonNumberText) return v.text;
  return undefined;
}

/** The value of `field` usable as a partition key, or undefined (not UTF-8, not JSON, not an object …). */
export function fieldPartitionKey(line: Uint8Array, field: string): string | undefined {
  let value: JsonValue;
  try {
    value = parseJsonRecord(utf8.decode(line), { exactFractions: true });
  } catch {
    return undefined; // Not UTF-8 or not JSON: the line is still sent, keyed by its hash.
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof JsonNumberText)
    return undefined;
  const key = Object.hasOwn(value, field) ? keyText(value[field]) : undefined;
  return key !== undefined && isUsablePartitionKey(key) ? key : undefined;
}

/** The line's partition key: `field`'s value when given and usable, else the line's hash. */
export function partitionKeyOf(line: Uint8Array, field?: string): string {
  return (field === undefined ? undefined : fieldPartitionKey(line, field)) ?? hashPartitionKey(line);
}
