/**
 * EventBridge events as a rule delivers them to a target
 * (https://docs.aws.amazon.com/eventbridge/latest/ref/overiew-event-structure.html):
 * `{version, id, detail-type, source, account, time, region, resources, detail}`. The record
 * becomes `detail`'s fields with the envelope's fields beside them under their own names (so
 * `"tableField": "detail-type"` or `"template": "events_{source}"` routes by them; `detail-type`
 * lands as the column `detail_type`). A field of `detail` named like an envelope field is kept as
 * `detail_<name>`.
 */
import { formatJsonRecord, type JsonObject, type JsonValue, parseJsonRecord } from '../json-line.ts';

export const ENVELOPE_FIELDS = [
  'version',
  'id',
  'detail-type',
  'source',
  'account',
  'time',
  'region',
  'resources',
] as const;

/** A cheap look at a record's text: could it be an EventBridge event (then `unwrapEvent` decides)? */
export function looksLikeEvent(bytes: Uint8Array): boolean {
  if (bytes[0] !== 0x7b && bytes[0] !== 0x20 && bytes[0] !== 0x0a) return false; // `{`, or whitespace
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 512));
  return head.includes('"detail-type"') && head.includes('"source"');
}

/**
 * The row of an EventBridge event, as JSON text; undefined when the text is not one (a record
 * that merely has some of these fields stays as it is).
 */
export function unwrapEvent(text: string, maxDepth: number): string | undefined {
  let doc: JsonValue;
  try {
    doc = parseJsonRecord(text, { maxDepth, exactFractions: true });
  } catch {
    return undefined; // not JSON: the record path dead-letters it with the parser's reason
  }
  if (!isObject(doc)) return undefined;
  const detail = doc.detail;
  if (
    !isObject(detail) ||
    typeof doc['detail-type'] !== 'string' ||
    typeof doc.source !== 'string' ||
    typeof doc.id !== 'string' ||
    typeof doc.time !== 'string' ||
    (doc.resources !== undefined && !Array.isArray(doc.resources))
  ) {
    return undefined;
  }
  const row: JsonObject = {};
  for (const k of ENVELOPE_FIELDS) if (doc[k] !== undefined) row[k] = doc[k]!;
  for (const k of Object.keys(detail)) {
    const name = (ENVELOPE_FIELDS as readonly string[]).includes(k) ? `detail_${k}` : k;
    row[name] = detail[k]!;
  }
  return formatJsonRecord(row);
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}
