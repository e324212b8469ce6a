/**
 * The Kinesis partition key of one NDJSON line for `floe send`: the value of a chosen field when
 * the line is a JSON object that has a usable one, else a hash of the line's bytes, so equal lines
 * always land on the same shard (no randomness, no clock).
 *
 * The field is a top-level name or a dotted path (`after.id`, `payload.after.id`); several
 * comma-separated candidates are tried in order (`after.id,before.id`: a Debezium delete has its
 * key only in `before`). An upsert table needs every change of a key on one shard, in order.
 */
import { createHash } from 'node:crypto';
import { JsonNumberText, type JsonObject, type JsonValue, parseJsonRecord } from './json-line.ts';

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

/** A field's value as key text: strings as they are, numbers and booleans as JSON text (integers in decimal). */
function keyText(v: JsonValue | undefined): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return JSON.stringify(v);
  if (v instanceof JsonNumberText) return v.text;
  return undefined;
}

/**
 * The candidates of a `--partition-key-field` value: comma-separated, each a field name or a
 * dotted path. Undefined when one is empty (`a,,b`, `a,`).
 */
export function keyFieldCandidates(spec: string): readonly string[] | undefined {
  const candidates = spec.split(',');
  return candidates.every((c) => c !== '') ? candidates : undefined;
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumberText);
}

/**
 * The value `candidate` names in `record`: the own field of exactly that name (dots included, as
 * before paths existed), else the dotted path through own fields of nested objects.
 */
function fieldValue(record: JsonObject, candidate: string): JsonValue | undefined {
  if (Object.hasOwn(record, candidate)) return record[candidate];
  if (!candidate.includes('.')) return undefined;
  let v: JsonValue | undefined = record;
  for (const step of candidate.split('.')) {
    if (!isObject(v) || !Object.hasOwn(v, step)) return undefined;
    v = v[step];
  }
  return v;
}

/**
 * The first usable value among `fields` (a `--partition-key-field` value, or its candidates), or
 * undefined (not UTF-8, not JSON, not an object, no candidate with a usable value).
 */
export function fieldPartitionKey(line: Uint8Array, fields: string | readonly string[]): string | undefined {
  const candidates = typeof fields === 'string' ? (keyFieldCandidates(fields) ?? []) : fields;
  let value: JsonValue;
  try {
    value = parseJsonRecord(utf8.decode(line), { exactFractions: true });
  } catch {
    return undefined; // Not UTF-8 or not JSON: the line is still sent, keyed by its hash.
  }
  if (!isObject(value)) return undefined;
  for (const candidate of candidates) {
    const key = keyText(fieldValue(value, candidate));
    if (key !== undefined && isUsablePartitionKey(key)) return key;
  }
  return undefined;
}

/** The line's partition key: the first usable value `fields` names, else the line's hash. */
export function partitionKeyOf(line: Uint8Array, fields?: string | readonly string[]): string {
  return (fields === undefined ? undefined : fieldPartitionKey(line, fields)) ?? hashPartitionKey(line);
}
