/**
 * Change events of upsert tables (config `upsert`): what a record does to the row its key names.
 *
 * - Plain records: every record is an upsert, unless `operationField` names a field whose value
 *   (case-insensitive) is `c`, `r`, `u`, `insert`, `update`, `upsert` (insert or replace) or `d`,
 *   `delete` (delete by key).
 * - `envelope: 'debezium'`: `{before, after, op, ts_ms, source}` (optionally wrapped as Kafka
 *   Connect's `{schema, payload}`): the row is `after`, or `before` for `op: 'd'`.
 * - `envelope: 'dynamodb'`: a Kinesis Data Streams for DynamoDB change record
 *   (dynamodb-change.ts), versioned by its change time: the newest change of a key wins.
 *
 * A delete's row is its key alone: the rest of a before-image shapes nothing in the table.
 */

import { ConnectValueError, type DeclaredTypes, imageSchema, typedImage } from './connect-schema.ts';
import { readDynamoDbChange } from './dynamodb-change.ts';
import type { JsonObject, JsonValue } from './json-line.ts';
import { describeJson, isJsonObject, JsonNumberText } from './json-line.ts';

export interface UpsertSpec {
  /** Top-level fields or dotted paths (`customer.id`) that together identify a row. */
  readonly key: readonly string[];
  /** The field that carries the operation; absent: every record is an upsert. */
  readonly operationField?: string;
  readonly envelope?: 'debezium' | 'dynamodb';
}

export type ChangeOp = 'upsert' | 'delete';

export type Change =
  | {
      readonly ok: true;
      readonly op: ChangeOp;
      readonly row: JsonObject;
      /** Versioned changes (DynamoDB): the change's time in µs; the newest of a key wins. */
      readonly version?: bigint;
      /** Column types the change's own schema declares (Debezium with schemas: connect-schema.ts). */
      readonly types?: DeclaredTypes;
    }
  | {
      readonly ok: false;
      /**
       * `no-row`: a change that changes no rows (a Debezium truncate or tombstone): counted,
       * never a dead letter.
       */
      readonly reason: 'missing-key' | 'bad-operation' | 'invalid-value' | 'no-row';
      readonly detail: string;
    };

const UPSERT_OPS: ReadonlySet<string> = new Set(['c', 'r', 'u', 'insert', 'update', 'upsert']);
const DELETE_OPS: ReadonlySet<string> = new Set(['d', 'delete']);

/** What `record` (as routed to `table`) does; a refusal names the table, the field and the value. */
export function readChange(spec: UpsertSpec, record: JsonObject, table: string): Change {
  if (spec.envelope === 'dynamodb') return dynamoDbEvent(spec, record, table);
  const event = spec.envelope === 'debezium' ? debeziumEvent(record, table) : plainEvent(spec, record, table);
  if (!event.ok) return event;
  const key = keyOf(spec, event.row, table);
  if (key !== undefined) return key;
  const row = event.op === 'delete' ? keyProjection(spec, event.row) : event.row;
  return event.types ? { ok: true, op: event.op, row, types: event.types } : { ok: true, op: event.op, row };
}

function plainEvent(spec: UpsertSpec, record: JsonObject, table: string): Change {
  const field = spec.operationField;
  if (field === undefined) return { ok: true, op: 'upsert', row: record };
  const op = operationOf(Object.hasOwn(record, field) ? record[field] : undefined);
  if (op === undefined) {
    return {
      ok: false,
      reason: 'bad-operation',
      detail: `table '${table}': operation field '${field}' is ${shown(record, field)}; expected one of c, r, u, insert, update, upsert (insert or replace), d, delete`,
    };
  }
  return { ok: true, op, row: record };
}

function debeziumEvent(record: JsonObject, table: string): Change {
  if (isTombstone(record))
    return {
      ok: false,
      reason: 'no-row',
      detail: `table '${table}': a Debezium tombstone (no payload) changes no rows`,
    };
  const payload = record.payload;
  const wrapped = Object.hasOwn(record, 'schema') && isJsonObject(payload);
  const env = wrapped ? payload : record;
  const op = Object.hasOwn(env, 'op') ? env.op : undefined;
  const kind = typeof op === 'string' ? op.toLowerCase() : undefined;
  const image = (name: 'before' | 'after', what: ChangeOp): Change => {
    const row = Object.hasOwn(env, name) ? env[name] : undefined;
    const schema = wrapped && isJsonObject(row) ? imageSchema(record.schema, name) : undefined;
    if (schema && isJsonObject(row)) {
      try {
        const typed = typedImage(schema, row);
        return {
          ok: true,
          op: what,
          row: typed.row,
          types: { hints: typed.hints, required: typed.required },
        };
      } catch (e) {
        if (!(e instanceof ConnectValueError)) throw e;
        return {
          ok: false,
          reason: 'invalid-value',
          detail: `table '${table}': Debezium field '${name}.${e.path}': ${e.message}`,
        };
      }
    }
    if (isJsonObject(row)) return { ok: true, op: what, row };
    return {
      ok: false,
      reason: 'missing-key',
      detail: `table '${table}': Debezium op '${String(op)}' has no '${name}' image (${describeJson(row)}), so no key${name === 'before' ? ' (a delete needs REPLICA IDENTITY with the key)' : ''}`,
    };
  };
  if (kind === 'c' || kind === 'r' || kind === 'u') return image('after', 'upsert');
  if (kind === 'd') return image('before', 'delete');
  if (kind === 't')
    return { ok: false, reason: 'no-row', detail: `table '${table}': a Debezium truncate changes no rows` };
  return {
    ok: false,
    reason: 'bad-operation',
    detail: `table '${table}': Debezium op is ${describeJson(op)}; expected c, r, u, d or t (message events carry no row)`,
  };
}

const TOMBSTONE_MAX_BYTES = 128;
const PAYLOAD_KEY = Buffer.from('"payload"');

/**
 * {@link isTombstone} of a record's bytes `[start, end)`. Cheap for every other record: only a
 * short one that starts with `null`'s `n`, or an object naming `payload`, is parsed.
 */
export function isTombstoneBytes(data: Uint8Array, start = 0, end = data.length): boolean {
  if (end - start > TOMBSTONE_MAX_BYTES) return false;
  let i = start;
  while (i < end && (data[i] === 0x20 || data[i] === 0x09 || data[i] === 0x0a || data[i] === 0x0d)) i++;
  const bytes = Buffer.from(data.buffer, data.byteOffset + start, end - start);
  if (data[i] !== 0x6e /* n */ && (data[i] !== 0x7b /* { */ || bytes.indexOf(PAYLOAD_KEY) < 0)) return false;
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString('utf8'));
  } catch {
    return false;
  }
  return isTombstone(v as JsonValue);
}

/**
 * A Debezium tombstone (what follows a delete for Kafka's log compaction): a null value, or with
 * schemas `{"schema": null, "payload": null}`. It changes no rows.
 */
export function isTombstone(record: JsonValue): boolean {
  if (record === null) return true;
  if (!isJsonObject(record)) return false;
  const keys = Object.keys(record);
  return (
    keys.length > 0 &&
    keys.every((k) => k === 'schema' || k === 'payload') &&
    Object.hasOwn(record, 'payload') &&
    record.payload === null &&
    (record.schema ?? null) === null
  );
}

function dynamoDbEvent(spec: UpsertSpec, record: JsonObject, table: string): Change {
  const c = readDynamoDbChange(record, table);
  if (!c.ok) return c;
  if (c.key.length !== spec.key.length || c.key.some((k) => !spec.key.includes(k))) {
    return {
      ok: false,
      reason: 'missing-key',
      detail: `table '${table}': DynamoDB change keyed by [${c.key.join(', ')}], but the table is keyed by [${spec.key.join(', ')}]`,
    };
  }
  const key = keyOf(spec, c.row, table);
  if (key !== undefined) return key;
  return { ok: true, op: c.op, row: c.row, version: c.version };
}

function operationOf(v: JsonValue | undefined): ChangeOp | undefined {
  if (typeof v !== 'string') return undefined;
  const op = v.toLowerCase();
  if (UPSERT_OPS.has(op)) return 'upsert';
  if (DELETE_OPS.has(op)) return 'delete';
  return undefined;
}

/** A refusal when a key part is missing, null, or not a single value; undefined when the key is whole. */
function keyOf(spec: UpsertSpec, row: JsonObject, table: string): Change | undefined {
  for (const path of spec.key) {
    const v = valueAt(row, path);
    let why: string | undefined;
    if (v === undefined) why = 'is missing';
    else if (v === null) why = 'is null';
    else if (typeof v === 'object' && !(v instanceof JsonNumberText))
      why = `holds ${Array.isArray(v) ? 'a list' : 'an object'}, not a single value`;
    else if (typeof v === 'number' || v instanceof JsonNumberText)
      why = `is ${typeof v === 'number' ? v : v.text}: a fractional number cannot be a key (Iceberg forbids float and double identifier and equality columns)`;
    if (why !== undefined)
      return { ok: false, reason: 'missing-key', detail: `table '${table}': key field '${path}' ${why}` };
  }
  return undefined;
}

/** The key fields of `row` alone, nested as in the row. */
function keyProjection(spec: UpsertSpec, row: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const path of spec.key) {
    const parts = path.split('.');
    let src: JsonObject = row;
    let dst: JsonObject = out;
    for (let i = 0; i < parts.length - 1; i++) {
      const p = parts[i]!;
      src = src[p] as JsonObject;
      if (!Object.hasOwn(dst, p)) dst[p] = {};
      dst = dst[p] as JsonObject;
    }
    const last = parts[parts.length - 1]!;
    dst[last] = src[last]!;
  }
  return out;
}

/** The value at a dotted path of own keys; undefined when a step is missing or not an object. */
export function valueAt(row: JsonObject, path: string): JsonValue | undefined {
  let v: JsonValue | undefined = row;
  for (const p of path.split('.')) {
    if (!isJsonObject(v) || !Object.hasOwn(v, p)) return undefined;
    v = v[p];
  }
  return v;
}

function shown(record: JsonObject, field: string): string {
  return Object.hasOwn(record, field) ? describeJson(record[field]) : 'missing';
}
