/**
 * CloudWatch Logs subscription-filter batches
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/SubscriptionFilters.html): gzip JSON
 * `{messageType, owner, logGroup, logStream, subscriptionFilters, logEvents: [{id, timestamp, message}]}`.
 * `CONTROL_MESSAGE` batches (CloudWatch checking that the destination is reachable) carry no
 * data. Each log event becomes one record: a `message` that is a JSON object (structured logs, e.g.
 * the Powertools logger's) gives the record's fields; any other message is kept as the text of a
 * `message` field. Every record also carries `log_group`, `log_stream`, `log_event_id` and the
 * event time `log_time` (an ISO instant, so it lands as `timestamptz`); they replace a field of
 * the same name in the message.
 */
import { formatJsonRecord, type JsonObject, type JsonValue, parseJsonRecord } from '../json-line.ts';

export const LOG_FIELDS = ['log_group', 'log_stream', 'log_event_id', 'log_time'] as const;

export type LogBatch =
  | { readonly kind: 'control' }
  | {
      readonly kind: 'data';
      readonly logGroup: string;
      readonly logStream: string;
      readonly events: LogEvent[];
    }
  | { readonly kind: 'invalid'; readonly detail: string }
  /** Not a subscription batch at all (an ordinary record that merely has a `messageType`). */
  | { readonly kind: 'none' };

export interface LogEvent {
  /** The record's JSON text. */
  readonly json: string;
}

/**
 * A cheap look at a payload's first 256 bytes, without decoding them: could it be a subscription
 * batch (then `readLogBatch` decides)? AWS writes `messageType` as the batch's first key.
 */
export function looksLikeLogBatch(bytes: Uint8Array): boolean {
  if (bytes[0] !== 0x7b) return false;
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 256)).includes('"messageType"');
}

/**
 * The batch's records, a control message, why it is not a valid batch, or `none` when the text is
 * not a subscription batch at all (no `logEvents` list, or another `messageType`).
 */
export function readLogBatch(text: string, maxDepth: number): LogBatch {
  let doc: JsonValue;
  try {
    // JSON.parse is exact here: the envelope holds strings and millisecond times (below 2^53);
    // the messages, which may hold any number, are strings to it.
    doc = JSON.parse(text) as JsonValue;
  } catch {
    return { kind: 'none' }; // not JSON (or deep): the record path reads it as any other record
  }
  if (!isObject(doc) || !Array.isArray(doc.logEvents)) return { kind: 'none' };
  if (doc.messageType === 'CONTROL_MESSAGE') return { kind: 'control' };
  if (doc.messageType !== 'DATA_MESSAGE') return { kind: 'none' };
  const { logGroup, logStream, logEvents } = doc;
  if (typeof logGroup !== 'string' || typeof logStream !== 'string' || !Array.isArray(logEvents)) {
    return { kind: 'invalid', detail: 'CloudWatch Logs batch lacks logGroup or logStream' };
  }
  const events: LogEvent[] = [];
  const where = `"log_group":${JSON.stringify(logGroup)},"log_stream":${JSON.stringify(logStream)}`;
  for (let i = 0; i < logEvents.length; i++) {
    const e = logEvents[i];
    const ts = isObject(e) ? toMillis(e.timestamp) : undefined;
    if (!isObject(e) || typeof e.message !== 'string' || ts === undefined) {
      return {
        kind: 'invalid',
        detail: `CloudWatch Logs batch: logEvents[${i}] lacks a message or timestamp`,
      };
    }
    events.push({ json: eventRecord(where, e, ts, maxDepth) });
  }
  return { kind: 'data', logGroup, logStream, events };
}

/**
 * The record of one log event. A JSON-object message gets the log fields spliced in before its
 * closing brace (its own text kept, numbers exact); one that names a log field itself is parsed
 * and written again without it; any other message is kept as text.
 */
function eventRecord(where: string, e: JsonObject, ms: number, maxDepth: number): string {
  const message = e.message as string;
  const id = typeof e.id === 'string' ? e.id : e.id === undefined || e.id === null ? null : String(e.id);
  const fields = `${where},"log_event_id":${JSON.stringify(id)},"log_time":"${new Date(ms).toISOString()}"`;
  const t = message.trim();
  if (t.startsWith('{') && t.endsWith('}') && !t.includes('"log_') && isJsonObjectText(t)) {
    const inner = t.slice(1, -1).trim();
    return inner === '' ? `{${fields}}` : `{${inner},${fields}}`;
  }
  const row: JsonObject = {};
  const structured = t.startsWith('{') ? parseObject(message, maxDepth) : undefined;
  if (structured) {
    for (const k of Object.keys(structured)) {
      if (!(LOG_FIELDS as readonly string[]).includes(k)) row[k] = structured[k]!;
    }
  } else {
    row.message = message;
  }
  return `${formatJsonRecord(row).slice(0, -1)}${Object.keys(row).length > 0 ? ',' : ''}${fields}}`;
}

/** Valid JSON whose value is an object (JSON.parse: native, and only a yes or no is needed). */
function isJsonObjectText(t: string): boolean {
  try {
    const v: unknown = JSON.parse(t);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

function parseObject(message: string, maxDepth: number): JsonObject | undefined {
  const t = message.trimStart();
  if (!t.startsWith('{')) return undefined;
  try {
    const v = parseJsonRecord(message, { maxDepth, exactFractions: true });
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function toMillis(v: JsonValue | undefined): number | undefined {
  const n = typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : undefined;
  if (n === undefined || !Number.isFinite(n) || n < 0 || n > 8.64e15) return undefined;
  return n;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}
