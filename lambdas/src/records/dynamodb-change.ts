/**
 * DynamoDB change records as Kinesis Data Streams for DynamoDB writes them (the DynamoDB developer
 * guide, "Using Kinesis Data Streams to capture changes to DynamoDB"):
 *
 * ```json
 * {"awsRegion":"us-east-1","eventID":"…","eventName":"MODIFY","userIdentity":null,
 *  "recordFormat":"application/json","tableName":"Music",
 *  "dynamodb":{"ApproximateCreationDateTime":1697558547918123,
 *              "ApproximateCreationDateTimePrecision":"MICROSECOND",
 *              "Keys":{"Artist":{"S":"No One You Know"}},
 *              "NewImage":{…},"OldImage":{…},"SizeBytes":123},
 *  "eventSource":"aws:dynamodb"}
 * ```
 *
 * Each source table is an upsert table keyed by the names in `Keys` (change-event.ts, envelope
 * `dynamodb`): `INSERT` and `MODIFY` upsert `NewImage`, `REMOVE` deletes `Keys`. The change's
 * version is `ApproximateCreationDateTime` in microseconds (a millisecond value, by its precision
 * field or by its size, is scaled), so the newest change of a key wins whatever order the stream
 * delivers them in (engine/upsert-write.ts, ports/change-versions.ts).
 *
 * Attribute values are unmarshalled exactly: `N` is a decimal string, an integer stays an exact
 * integer (never a double on the way), a fraction keeps its text (`JsonNumberText`); `S`, `BOOL`,
 * `NULL`, `M`, `L`, and the sets `SS`/`NS`/`BS` as lists; `B`/`BS` stay base64 text, as the stream
 * writes them. Pure: no I/O.
 */

import { columnNameOf, isLegalColumnName } from '../schema/column-name.ts';
import type { JsonObject, JsonValue } from './json-line.ts';
import { describeJson, isJsonObject, JsonNumberText } from './json-line.ts';

/** The `eventSource` of a DynamoDB change record. */
export const DYNAMODB_EVENT_SOURCE = 'aws:dynamodb';
/** The source table's name ('' when it names none), when `record` is a DynamoDB change record; undefined otherwise. */
export function dynamoDbTableOf(record: object): string | undefined {
  const r = record as Record<string, unknown>;
  if (r.eventSource !== DYNAMODB_EVENT_SOURCE) return undefined;
  const d = r.dynamodb;
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return undefined;
  if (typeof r.tableName === 'string' && r.tableName !== '') return r.tableName;
  // DynamoDB Streams records (e.g. re-published from a Lambda trigger) name it in their ARN.
  const arn = r.eventSourceARN;
  const m = typeof arn === 'string' ? /:table\/([^/]+)/.exec(arn) : null;
  // A change record that names no table is still one: '' (the router refuses it, naming why).
  return m?.[1] ?? '';
}

/** The columns of a DynamoDB change record's `Keys` (none when it has no `Keys` object). */
export function dynamoDbKeyNames(record: JsonObject): string[] {
  const d = record.dynamodb;
  const keys = isJsonObject(d) ? d.Keys : undefined;
  return isJsonObject(keys) ? Object.keys(keys).map(columnOf) : [];
}

export type DynamoDbChange =
  | {
      readonly ok: true;
      readonly op: 'upsert' | 'delete';
      /** The item (`NewImage`) or, for a delete, its key (`Keys`), unmarshalled. */
      readonly row: JsonObject;
      /** The key's columns (attribute names as column names), in the order `Keys` lists them. */
      readonly key: readonly string[];
      /** `ApproximateCreationDateTime` in microseconds since the epoch. */
      readonly version: bigint;
    }
  | {
      readonly ok: false;
      readonly reason: 'missing-key' | 'bad-operation' | 'invalid-value';
      readonly detail: string;
    };

/** Reads a DynamoDB change record (see the module doc); a refusal names the table and the field. */
export function readDynamoDbChange(record: JsonObject, table: string): DynamoDbChange {
  const d = record.dynamodb as JsonObject;
  const refuse = (
    reason: 'missing-key' | 'bad-operation' | 'invalid-value',
    why: string,
  ): DynamoDbChange => ({
    ok: false,
    reason,
    detail: `table '${table}': DynamoDB change ${why}`,
  });
  const name = record.eventName;
  const op = name === 'INSERT' || name === 'MODIFY' ? 'upsert' : name === 'REMOVE' ? 'delete' : undefined;
  if (op === undefined)
    return refuse('bad-operation', `eventName is ${describeJson(name)}; expected INSERT, MODIFY or REMOVE`);
  const keys = d.Keys;
  if (!isJsonObject(keys) || Object.keys(keys).length === 0)
    return refuse(
      'missing-key',
      `dynamodb.Keys is ${describeJson(keys)}; expected the item's key attributes`,
    );
  const version = versionOf(d);
  if (typeof version === 'string') return refuse('bad-operation', version);
  let row: JsonObject;
  try {
    const image = op === 'upsert' ? d.NewImage : keys;
    if (!isJsonObject(image))
      return refuse(
        'missing-key',
        `${String(name)} has no dynamodb.NewImage (${describeJson(image)}); the stream must carry new images (StreamViewType NEW_IMAGE or NEW_AND_OLD_IMAGES)`,
      );
    row = unmarshalItem(image);
    // The key's values come from Keys: an image always holds them, and they must agree.
    for (const [k, v] of Object.entries(unmarshalItem(keys))) row[k] = v;
  } catch (e) {
    if (e instanceof AttributeValueError) return refuse('invalid-value', `attribute ${e.path}: ${e.message}`);
    throw e;
  }
  return { ok: true, op, row: topLevelColumns(row), key: Object.keys(keys).map(columnOf), version };
}

/** The column an attribute name becomes (schema/column-name.ts: `Artist` → `artist`). */
function columnOf(name: string): string {
  return columnNameOf(name) ?? name;
}

/**
 * The item with its attributes named as their columns, so that the key's names (column names,
 * as every key is) find their values. Two attributes that map to one column, or a name that maps
 * to none, stay as they are: the conversion refuses the record, naming them.
 */
function topLevelColumns(row: JsonObject): JsonObject {
  const names = Object.keys(row);
  if (names.every(isLegalColumnName)) return row;
  const taken = new Set(names);
  const out: JsonObject = {};
  for (const name of names) {
    const col = columnNameOf(name);
    const keep = col === undefined || col === name || taken.has(col);
    if (!keep) taken.add(col);
    out[keep ? name : col] = row[name]!;
  }
  return out;
}

/**
 * `ApproximateCreationDateTime` in microseconds, or why it cannot be read. Kinesis Data Streams
 * for DynamoDB writes milliseconds or microseconds (its precision field says which), DynamoDB
 * Streams seconds; without a precision the size tells (epoch seconds reach 10^11, and epoch
 * milliseconds 10^14, only in the year 5138).
 */
function versionOf(d: JsonObject): bigint | string {
  const v = d.ApproximateCreationDateTime;
  const n =
    typeof v === 'bigint'
      ? Number(v)
      : typeof v === 'number'
        ? v
        : v instanceof JsonNumberText
          ? v.value
          : NaN;
  if (!Number.isFinite(n) || n < 0)
    return `dynamodb.ApproximateCreationDateTime is ${describeJson(v)}; expected the change's time (epoch microseconds, milliseconds or seconds)`;
  const precision = d.ApproximateCreationDateTimePrecision;
  const scale =
    precision === 'MICROSECOND'
      ? 1
      : precision === 'MILLISECOND'
        ? 1e3
        : n >= 1e14
          ? 1
          : n >= 1e11
            ? 1e3
            : 1e6;
  if (typeof v === 'bigint') return v * BigInt(scale);
  return BigInt(Math.round(n * scale));
}

/** An attribute value the unmarshaller cannot read, with where it is. */
export class AttributeValueError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** A DynamoDB item (attribute name → attribute value) as a JSON object. */
export function unmarshalItem(item: JsonObject, path = ''): JsonObject {
  const out: JsonObject = {};
  for (const [name, av] of Object.entries(item)) {
    out[name] = unmarshal(av, path === '' ? name : `${path}.${name}`);
  }
  return out;
}

/** One attribute value (`{"N": "1"}`, `{"M": {…}}`, …) as a JSON value, exactly. */
export function unmarshal(av: JsonValue, path: string): JsonValue {
  if (!isJsonObject(av)) throw new AttributeValueError(path, `${describeJson(av)} is not an attribute value`);
  const tags = Object.keys(av);
  if (tags.length !== 1)
    throw new AttributeValueError(
      path,
      `an attribute value has exactly one type tag, not ${describeJson(av)}`,
    );
  const tag = tags[0]!;
  const v = av[tag]!;
  switch (tag) {
    case 'S':
    case 'B':
      return text(v, path, tag);
    case 'N':
      return numberOf(text(v, path, tag), path);
    case 'BOOL':
      if (typeof v !== 'boolean') throw new AttributeValueError(path, `BOOL holds ${describeJson(v)}`);
      return v;
    case 'NULL':
      return null;
    case 'M':
      if (!isJsonObject(v)) throw new AttributeValueError(path, `M holds ${describeJson(v)}`);
      return unmarshalItem(v, path);
    case 'L':
      if (!Array.isArray(v)) throw new AttributeValueError(path, `L holds ${describeJson(v)}`);
      return v.map((x, i) => unmarshal(x, `${path}[${i}]`));
    case 'SS':
    case 'BS':
    case 'NS': {
      if (!Array.isArray(v)) throw new AttributeValueError(path, `${tag} holds ${describeJson(v)}`);
      const items = v.map((x) => text(x, path, tag));
      return tag === 'NS' ? items.map((x) => numberOf(x, path)) : items;
    }
    default:
      throw new AttributeValueError(path, `unknown type tag '${tag}'`);
  }
}

function text(v: JsonValue, path: string, tag: string): string {
  if (typeof v !== 'string') throw new AttributeValueError(path, `${tag} holds ${describeJson(v)}, not text`);
  return v;
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A DynamoDB number (up to 38 digits) exactly: an integer as bigint, else its text kept. */
function numberOf(s: string, path: string): JsonValue {
  const t = s.trim();
  if (INTEGER.test(t)) return BigInt(t);
  if (!DECIMAL.test(t)) throw new AttributeValueError(path, `N holds '${s}', not a number`);
  return new JsonNumberText(t, Number(t));
}
