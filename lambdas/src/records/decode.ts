/**
 * One Kinesis record's bytes → a JSON object or an Avro row, or a dead-letter reason. The single
 * entry point ingest calls per record, for both stream formats (`json`, `avro-gsr`). Pure apart
 * from the injected schema lookup.
 *
 * Bad input never throws: it comes back as `{ kind: 'dead-letter', reason, detail }`. What does
 * throw is an infrastructure failure of `lookupSchema` (anything but `FloeError(NotFound)`: the
 * registry is throttled or unreachable), because dead-lettering good records during an outage
 * would lose them; the caller retries the batch.
 *
 * `avro-gsr` streams: the GSR header names the writer schema version; the registry gives its
 * definition; `AVRO` payloads are one Avro binary datum of it, `JSON` payloads UTF-8 JSON.
 * Compiled decoders are cached per returned version object (a `WeakMap`), so pass a lookup that
 * returns the same object for the same id, e.g. `CachedSchemaRegistry.getSchemaVersion`.
 */
import { type AvroDatumType, avroDatumType } from '../avro/datum.ts';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import type { StructType } from '../iceberg/types.ts';
import type { Row } from '../iceberg/values.ts';
import type { SchemaVersion } from '../ports/schema-registry.ts';
import { type CompiledAvroSchema, compileAvroSchema } from '../schema/avro-to-iceberg.ts';
import { type GsrFrame, type GsrFrameError, isGsrFramed, parseGsrFrame } from './gsr.ts';
import {
  isTooDeep,
  JsonNumberText,
  type JsonObject,
  type JsonValue,
  type ParseOptions,
  parseJsonRecord,
} from './json-line.ts';

/** Stream record formats (configuration `format`). */
export type RecordFormat = 'json' | 'avro-gsr';

/** Why a record cannot be decoded; these become dead-letter reasons. */
export const DecodeFailureReason = {
  /** Not valid UTF-8 JSON. */
  MalformedJson: 'malformed-json',
  /** Valid JSON, but not an object. */
  NotAnObject: 'not-an-object',
  /** `avro-gsr` stream: the record does not start with the GSR header byte 3. */
  NotGsrFramed: 'not-gsr-framed',
  /** GSR header present but unusable: truncated, unknown compression byte, corrupt zlib. */
  BadGsrFrame: 'bad-gsr-frame',
  /** The registry does not know the schema version id in the header. */
  UnknownSchemaVersion: 'unknown-schema-version',
  /** The writer schema cannot be used: not parseable, PROTOBUF, or no Iceberg mapping (e.g. a union). */
  UnsupportedSchema: 'unsupported-schema',
  /** The payload is not a datum of the writer schema (truncated, trailing bytes, bad values). */
  AvroDecodeFailed: 'avro-decode-failed',
  /** Valid JSON that nests deeper than `guards.maxNestingDepth` (the parser's `maxDepth`). */
  GuardMaxDepth: 'guard-max-depth',
} as const;
export type DecodeFailureReason = (typeof DecodeFailureReason)[keyof typeof DecodeFailureReason];

export interface DecodeContext {
  readonly format: RecordFormat;
  /**
   * The schema version for a GSR schema version id (required for `avro-gsr`). Reject with
   * `FloeError(NotFound)` for unknown ids; other rejections propagate (see module doc).
   */
  readonly lookupSchema?: (id: string) => Promise<SchemaVersion>;
  /**
   * `avro-gsr` only: records without the GSR header are parsed as JSON instead of dead-lettered
   * (the serde library's "secondary deserializer"). Default false.
   */
  readonly jsonFallback?: boolean;
  /** Options for JSON parsing. */
  readonly json?: ParseOptions;
  /** Largest inflated zlib payload (see `parseGsrFrame`). */
  readonly maxInflatedBytes?: number;
}

export interface DecodedJson {
  readonly kind: 'json';
  readonly value: JsonObject;
  /** Set when the JSON came GSR-framed (a registry schema of data format JSON). */
  readonly schemaName?: string;
  readonly schemaVersionId?: string;
}

export interface DecodedAvro {
  readonly kind: 'avro';
  /** The registry's schema name (e.g. `OrderEvent`). */
  readonly schemaName: string;
  readonly schemaVersionId: string;
  readonly versionNumber: number;
  /** Full name of the writer schema's record (e.g. `com.example.OrderEvent`). */
  readonly recordName: string;
  /** The writer schema (parsed definition); shared by every record of the version. */
  readonly writerSchema: object;
  /** The writer schema as an Iceberg struct (placeholder ids); shared by every record of the version. */
  readonly struct: StructType;
  /** The datum in `iceberg/values.ts` form, keyed by column name. */
  readonly row: Row;
}

export interface DecodeFailure {
  readonly kind: 'dead-letter';
  readonly reason: DecodeFailureReason;
  /** Human-readable: what is wrong, naming the schema version / field where known. */
  readonly detail: string;
  readonly schemaVersionId?: string;
}

export type DecodedRecord = DecodedJson | DecodedAvro | DecodeFailure;

function failure(reason: DecodeFailureReason, detail: string, schemaVersionId?: string): DecodeFailure {
  return schemaVersionId === undefined
    ? { kind: 'dead-letter', reason, detail }
    : { kind: 'dead-letter', reason, detail, schemaVersionId };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses bytes as one JSON object record. `hintGsr` adds a hint when the bytes look GSR-framed
 * (a `json` stream receiving Avro).
 */
export function decodeJsonRecord(
  data: Uint8Array,
  options?: ParseOptions,
  hintGsr = true,
): DecodedJson | DecodeFailure {
  const hint = () =>
    hintGsr && isGsrFramed(data) ? ' (the record is GSR-framed: is the stream format avro-gsr?)' : '';
  let text: string;
  try {
    text = utf8.decode(data);
  } catch {
    return failure(DecodeFailureReason.MalformedJson, `invalid UTF-8 in the record${hint()}`);
  }
  let value: JsonValue;
  try {
    value = parseJsonRecord(text, options);
  } catch (e) {
    if (isTooDeep(e))
      return failure(
        DecodeFailureReason.GuardMaxDepth,
        `guard maxNestingDepth: record ${(e as Error).message}`,
      );
    return failure(DecodeFailureReason.MalformedJson, `${(e as Error).message}${hint()}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !isPlainRecord(value)) {
    const kind =
      value === null
        ? 'null'
        : Array.isArray(value)
          ? 'array'
          : typeof value === 'bigint' || value instanceof JsonNumberText
            ? 'number'
            : typeof value;
    return failure(DecodeFailureReason.NotAnObject, `expected a JSON object, got ${kind}`);
  }
  return { kind: 'json', value: value as JsonObject };
}

function isPlainRecord(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Decodes one stream record (see the module doc). */
export async function decodeRecord(data: Uint8Array, ctx: DecodeContext): Promise<DecodedRecord> {
  if (ctx.format === 'json') return decodeJsonRecord(data, ctx.json);
  const lookup = ctx.lookupSchema;
  if (lookup === undefined) {
    throw new FloeError(ErrorKind.ConfigInvalid, "stream format 'avro-gsr' needs a schema registry lookup");
  }
  let frame: GsrFrame;
  try {
    frame = parseGsrFrame(
      data,
      ctx.maxInflatedBytes === undefined ? {} : { maxInflatedBytes: ctx.maxInflatedBytes },
    );
  } catch (e) {
    if (!isFloeError(e, ErrorKind.DataInvalid)) throw e;
    const why = e.context.reason as GsrFrameError | undefined;
    if (why === 'not-gsr-framed') {
      if (ctx.jsonFallback === true) return decodeJsonRecord(data, ctx.json, false);
      return failure(DecodeFailureReason.NotGsrFramed, e.message);
    }
    return failure(DecodeFailureReason.BadGsrFrame, e.message);
  }
  const id = frame.schemaVersionId;
  let version: SchemaVersion;
  try {
    version = await lookup(id);
  } catch (e) {
    if (isFloeError(e, ErrorKind.NotFound)) {
      return failure(
        DecodeFailureReason.UnknownSchemaVersion,
        `schema version ${id} is not in the registry`,
        id,
      );
    }
    throw e;
  }
  const compiled = compiledFor(version);
  if ('error' in compiled) return failure(DecodeFailureReason.UnsupportedSchema, compiled.error, id);
  if (compiled.format === 'json') {
    const r = decodeJsonRecord(frame.payload, ctx.json, false);
    if (r.kind === 'dead-letter') return { ...r, schemaVersionId: id };
    return { ...r, schemaName: version.schemaName, schemaVersionId: id };
  }
  const { datumType, schema, writerSchema } = compiled;
  const where = `schema '${version.schemaName}' version ${version.versionNumber} (${id})`;
  let datum: unknown;
  try {
    const res = datumType.decode(frame.payload, 0);
    if (res.offset !== frame.payload.length) {
      return failure(
        DecodeFailureReason.AvroDecodeFailed,
        `${frame.payload.length - res.offset} bytes left after the Avro datum of ${where} (payload written with another schema?)`,
        id,
      );
    }
    datum = res.value;
  } catch (e) {
    if (!isFloeError(e, ErrorKind.DataInvalid)) throw e;
    return failure(DecodeFailureReason.AvroDecodeFailed, `${e.message} (${where})`, id);
  }
  let row: Row;
  try {
    row = schema.toRow(datum);
  } catch (e) {
    if (!isFloeError(e, ErrorKind.DataInvalid)) throw e;
    return failure(DecodeFailureReason.AvroDecodeFailed, `${e.message} (${where})`, id);
  }
  return {
    kind: 'avro',
    schemaName: version.schemaName,
    schemaVersionId: id,
    versionNumber: version.versionNumber,
    recordName: schema.fullName,
    writerSchema,
    struct: schema.struct,
    row,
  };
}

type Compiled =
  | {
      readonly format: 'avro';
      readonly writerSchema: object;
      readonly schema: CompiledAvroSchema;
      readonly datumType: AvroDatumType;
    }
  | { readonly format: 'json' }
  | { readonly error: string };

const compiledVersions = new WeakMap<SchemaVersion, Compiled>();

/** The decoder for a schema version, compiled once per version object (failures cached too). */
function compiledFor(version: SchemaVersion): Compiled {
  let c = compiledVersions.get(version);
  if (c === undefined) {
    c = compile(version);
    compiledVersions.set(version, c);
  }
  return c;
}

function compile(version: SchemaVersion): Compiled {
  const what = `schema '${version.schemaName}' version ${version.versionNumber} (${version.id})`;
  if (version.dataFormat === 'JSON') return { format: 'json' };
  if (version.dataFormat !== 'AVRO') {
    return { error: `${what} has data format ${version.dataFormat}; Floe decodes AVRO and JSON` };
  }
  let writerSchema: unknown;
  try {
    writerSchema = JSON.parse(version.definition);
  } catch (e) {
    return { error: `${what}: definition is not JSON: ${(e as Error).message}` };
  }
  if (writerSchema === null || typeof writerSchema !== 'object') {
    return { error: `${what}: the top level must be an Avro record` };
  }
  try {
    const schema = compileAvroSchema(writerSchema);
    const datumType = avroDatumType(writerSchema);
    return { format: 'avro', writerSchema, schema, datumType };
  } catch (e) {
    if (!(e instanceof FloeError)) throw e;
    return { error: `${what}: ${e.message}` };
  }
}
