/**
 * The Lambda Kinesis event (what the Kinesis event source mapping invokes the ingest handler with)
 * and the partial-batch response (DESIGN §4: ParallelizationFactor 1, ReportBatchItemFailures,
 * BisectBatchOnFunctionError).
 *
 * Pure: types, a validating parser, the inverse builder (used by the local poller and tests) and
 * the `batchItemFailures` response helper. Sequence numbers are decimal strings far beyond 2^53;
 * they stay strings and are compared as BigInt (`compareSequence`), never as JS numbers.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { compareSequence, kinesisSequenceOf } from '../ports/ledger.ts';

/** One element of `event.Records`, exactly as Lambda sends it. */
export interface KinesisEventRecord {
  readonly kinesis: {
    readonly kinesisSchemaVersion: string;
    readonly partitionKey: string;
    readonly sequenceNumber: string;
    /** Base64 of the record payload. */
    readonly data: string;
    /** Epoch seconds with fractional milliseconds, e.g. `1545084650.987`. */
    readonly approximateArrivalTimestamp: number;
  };
  readonly eventSource: 'aws:kinesis';
  readonly eventVersion: string;
  /** `<shardId>:<sequenceNumber>`, e.g. `shardId-000000000000:4959…`. */
  readonly eventID: string;
  readonly eventName: 'aws:kinesis:record';
  readonly invokeIdentityArn: string;
  readonly awsRegion: string;
  /** The stream ARN. */
  readonly eventSourceARN: string;
}

export interface KinesisEvent {
  readonly Records: readonly KinesisEventRecord[];
}

/** A record of a parsed batch: payload decoded, arrival time in epoch milliseconds. */
export interface KinesisBatchRecord {
  readonly sequenceNumber: string;
  readonly partitionKey: string;
  readonly arrivalMs: number;
  readonly data: Uint8Array;
}

/** A parsed batch: one shard of one stream, records in strictly increasing sequence order. */
export interface KinesisBatch {
  readonly shardId: string;
  readonly streamArn: string;
  readonly records: KinesisBatchRecord[];
}

/** The ReportBatchItemFailures response. */
export interface KinesisBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

const DECIMAL = /^\d+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DEFAULT_INVOKE_IDENTITY_ARN = 'arn:aws:iam::000000000000:role/floe-local-ingest';

function invalid(message: string, context: Record<string, unknown> = {}): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `Kinesis event: ${message}`, { context });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function requireString(obj: Record<string, unknown>, key: string, where: string): string {
  const v = obj[key];
  if (typeof v !== 'string') throw invalid(`${where}.${key} must be a string`, { field: `${where}.${key}` });
  return v;
}

/**
 * Validates a Lambda Kinesis event and decodes its records. Throws FloeError DataInvalid for a
 * malformed envelope: not an object, no/empty `Records`, a record that is not from Kinesis, a
 * non-decimal sequence number, bad base64, an `eventID` that does not match the sequence number,
 * records of more than one shard or stream (Lambda's ESM never mixes shards in a batch), or
 * records out of sequence order.
 */
export function parseKinesisEvent(event: unknown): KinesisBatch {
  if (!isObject(event)) throw invalid('event is not an object');
  const raw = event.Records;
  if (!Array.isArray(raw)) throw invalid('event.Records is not an array');
  if (raw.length === 0) throw invalid('event.Records is empty');

  let shardId: string | undefined;
  let streamArn: string | undefined;
  const records: KinesisBatchRecord[] = [];
  const sizes: number[] = [];
  let total = 0;
  for (let i = 0; i < raw.length; i++) {
    const where = `Records[${i}]`;
    const r: unknown = raw[i];
    if (!isObject(r)) throw invalid(`${where} is not an object`, { index: i });
    if (r.eventSource !== 'aws:kinesis') {
      throw invalid(`${where}.eventSource is ${JSON.stringify(r.eventSource)}, expected "aws:kinesis"`, {
        index: i,
      });
    }
    const k = r.kinesis;
    if (!isObject(k)) throw invalid(`${where}.kinesis is not an object`, { index: i });
    const sequenceNumber = requireString(k, 'sequenceNumber', `${where}.kinesis`);
    if (!DECIMAL.test(sequenceNumber)) {
      throw invalid(`${where}.kinesis.sequenceNumber is not a decimal`, { index: i, sequenceNumber });
    }
    const partitionKey = requireString(k, 'partitionKey', `${where}.kinesis`);
    const data = requireString(k, 'data', `${where}.kinesis`);
    const size = base64Size(data);
    if (size < 0) throw invalid(`${where}.kinesis.data is not base64`, { index: i, sequenceNumber });
    const ts = k.approximateArrivalTimestamp;
    if (typeof ts !== 'number' || !Number.isFinite(ts) || ts < 0) {
      throw invalid(`${where}.kinesis.approximateArrivalTimestamp is not epoch seconds`, { index: i });
    }
    const eventId = requireString(r, 'eventID', where);
    const colon = eventId.length - sequenceNumber.length - 1;
    if (colon <= 0 || eventId.charCodeAt(colon) !== 58 || !eventId.endsWith(sequenceNumber)) {
      throw invalid(`${where}.eventID ${JSON.stringify(eventId)} is not "<shardId>:${sequenceNumber}"`, {
        index: i,
      });
    }
    const arn = requireString(r, 'eventSourceARN', where);
    // No substring per record: the shard id is cut once, then compared in place.
    const sameShard = shardId !== undefined && colon === shardId.length && eventId.startsWith(shardId);
    if (shardId === undefined) {
      shardId = eventId.slice(0, colon);
      streamArn = arn;
    } else if (!sameShard || arn !== streamArn) {
      const recordShard = eventId.slice(0, colon);
      throw invalid(`${where} is from ${arn} ${recordShard}, the batch is from ${streamArn} ${shardId}`, {
        index: i,
      });
    }
    const prev = records[records.length - 1];
    if (prev !== undefined && compareDecimal(prev.sequenceNumber, sequenceNumber) >= 0) {
      throw invalid(`${where} sequence ${sequenceNumber} does not follow ${prev.sequenceNumber}`, {
        index: i,
      });
    }
    records.push({ sequenceNumber, partitionKey, arrivalMs: Math.round(ts * 1000), data: EMPTY });
    sizes.push(size);
    total += size;
  }
  // Every payload decoded into one buffer (one allocation per batch, not per record).
  const all = Buffer.allocUnsafe(total);
  let offset = 0;
  for (let i = 0; i < records.length; i++) {
    const size = sizes[i]!;
    const data = (raw[i] as { kinesis: { data: string } }).kinesis.data;
    // Node's decoder skips characters outside the alphabet: a short write means bad base64.
    if (size > 0 && all.write(data, offset, size, 'base64') !== size) {
      throw invalid(`Records[${i}].kinesis.data is not base64`, {
        index: i,
        sequenceNumber: records[i]!.sequenceNumber,
      });
    }
    if (size > 0 && (data.includes('-') || data.includes('_')) && !BASE64.test(data)) {
      throw invalid(`Records[${i}].kinesis.data is not base64`, {
        index: i,
        sequenceNumber: records[i]!.sequenceNumber,
      });
    }
    (records[i] as { data: Uint8Array }).data = new Uint8Array(all.buffer, all.byteOffset + offset, size);
    offset += size;
  }
  return { shardId: shardId as string, streamArn: streamArn as string, records };
}

const EMPTY = new Uint8Array(0);

/** The decoded size of padded base64 text, or -1 when its length cannot be base64. */
function base64Size(data: string): number {
  const n = data.length;
  if (n % 4 !== 0) return -1;
  if (n === 0) return 0;
  const pad = data.charCodeAt(n - 1) === 61 ? (data.charCodeAt(n - 2) === 61 ? 2 : 1) : 0;
  return (n / 4) * 3 - pad;
}

/** compareSequence for canonical decimals (no leading zeros): by length, then text; else BigInt. */
function compareDecimal(a: string, b: string): number {
  if ((a.length > 1 && a.charCodeAt(0) === 48) || (b.length > 1 && b.charCodeAt(0) === 48)) {
    return compareSequence(a, b);
  }
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The ReportBatchItemFailures response for the given failed sequence numbers (any order; empty:
 * full success). Reports only the lowest one.
 *
 * Why the lowest alone is enough: Lambda checkpoints the shard just before the LOWEST reported
 * sequence number and re-delivers that record and everything after it, whether or not the later
 * records were reported, succeeded, or failed. Higher identifiers therefore change nothing
 * (with BisectBatchOnFunctionError the batch is split at the returned sequence number, again
 * the lowest). Reporting one identifier also keeps the response small, and the handler's writes
 * must be idempotent anyway, because the successful records after it are replayed.
 */
export function batchItemFailures(failedSequenceNumbers: readonly string[]): KinesisBatchResponse {
  let lowest: string | undefined;
  for (const s of failedSequenceNumbers) {
    // compareSequence validates (DataInvalid for a non-decimal): an empty or bogus identifier
    // would make Lambda fail the whole batch, so never emit one.
    if (lowest === undefined) compareSequence(s, s);
    if (lowest === undefined || compareSequence(s, lowest) < 0) lowest = s;
  }
  // A sub-record position (`seq.sub`: one record of a KPL aggregate …) names its Kinesis record,
  // the only thing Lambda can retry from; the ledger skips the sub-records already staged.
  return {
    batchItemFailures: lowest === undefined ? [] : [{ itemIdentifier: kinesisSequenceOf(lowest) }],
  };
}

/**
 * The inverse of `parseKinesisEvent`: a genuine Lambda Kinesis event for records of one shard
 * (the local poller builds its invocations with it; tests use it for fixtures).
 */
export function buildKinesisEvent(
  shardId: string,
  streamArn: string,
  region: string,
  records: readonly KinesisBatchRecord[],
  invokeIdentityArn: string = DEFAULT_INVOKE_IDENTITY_ARN,
): KinesisEvent {
  return {
    Records: records.map(
      (r): KinesisEventRecord => ({
        kinesis: {
          kinesisSchemaVersion: '1.0',
          partitionKey: r.partitionKey,
          sequenceNumber: r.sequenceNumber,
          data: Buffer.from(r.data.buffer, r.data.byteOffset, r.data.byteLength).toString('base64'),
          approximateArrivalTimestamp: r.arrivalMs / 1000,
        },
        eventSource: 'aws:kinesis',
        eventVersion: '1.0',
        eventID: `${shardId}:${r.sequenceNumber}`,
        eventName: 'aws:kinesis:record',
        invokeIdentityArn,
        awsRegion: region,
        eventSourceARN: streamArn,
      }),
    ),
  };
}
