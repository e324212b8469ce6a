/**
 * Dead-letter store: every record Floe cannot land is kept with its reason (DESIGN §4). Dead letters
 * are written with deterministic keys before the ledger entry, so a retried, bisected or replayed
 * batch overwrites its earlier dead letters rather than duplicating them.
 */
import type { DeadLetter } from '../engine/dead-letters.ts';

export interface DeadLetterRecord extends DeadLetter {
  /**
   * Deterministic, storage-safe identity: `<source>-<hash>/<position>` (see `deadLetterKey`). Only
   * `[A-Za-z0-9._-]` and one `/`; never `.` or `..` as a segment.
   */
  readonly key: string;
  /** Kinesis shard id (the `source` of a streamed record). */
  readonly shardId?: string;
  /** Kinesis sequence number as a decimal string (exact: sequence numbers exceed 2^53). */
  readonly sequenceNumber?: string;
  readonly partitionKey?: string;
  /** Approximate arrival time of the record in the stream (epoch milliseconds). */
  readonly arrivalTimeMs?: number;
  /** The original bytes, base64, for records that are not text (e.g. GSR-framed Avro). */
  readonly rawBase64?: string;
}

export interface DeadLetterListOptions {
  /**
   * Only keys starting with this text, e.g. `deadLetterSourcePrefix('shardId-000000000001')` for
   * one shard's dead letters.
   */
  readonly prefix?: string;
  /** At most this many records (the first ones in key order). */
  readonly limit?: number;
}

/** A stored dead letter as the store's listing sees it, without reading it. */
export interface DeadLetterEntry {
  readonly key: string;
  readonly reason: string;
  /** Size of the stored object. */
  readonly bytes: number;
  /**
   * When it was last stored (epoch milliseconds): the time of the load or ingest run that
   * rejected it (a re-run overwrites it). Streamed records also carry `arrivalTimeMs`.
   */
  readonly storedAtMs: number;
}

export interface DeadLetterStore {
  /** Writes (or overwrites) the dead letter stored under `d.key`. */
  put(d: DeadLetterRecord): Promise<void>;
  /** Dead letters in key order (ties broken by reason). */
  list(opts?: DeadLetterListOptions): Promise<DeadLetterRecord[]>;
  /** What `list` would read, from one listing: key, reason, size and stored time, in key order. */
  entries(): Promise<DeadLetterEntry[]>;
  get(key: string): Promise<DeadLetterRecord | undefined>;
  /**
   * Removes the dead letter; a missing key is not an error. With `reason`, only the copy stored
   * under it (one request instead of one per reason: for purges, which know it from the listing).
   */
  delete(key: string, reason?: string): Promise<void>;
}

/** What identifies a rejected record: its source and its position in it. */
export interface DeadLetterIdentity {
  /** File path or shard id. */
  readonly source: string;
  /** 1-based line number within a file (ignored when `sequenceNumber` is set). */
  readonly line: number;
  /** Shard id; takes precedence over `source` for streamed records. */
  readonly shardId?: string;
  /** Kinesis sequence number (decimal string): the record's position within its shard. */
  readonly sequenceNumber?: string;
}

/** Sequence numbers are zero-padded to this many digits so keys sort in sequence order. */
const SEQUENCE_DIGITS = 64;
/** Line numbers are zero-padded to this many digits so keys sort in line order. */
const LINE_DIGITS = 10;
/** Longest readable part of a source kept in a key (its end: the file name matters most). */
const SOURCE_CHARS = 64;

/**
 * The deterministic key of a dead letter: `<readable source>-<16 hex hash of the source>/<position>`.
 *
 * - Position: the sequence number (when given) zero-padded to 64 digits, else the line number
 *   padded to 10, so keys list in stream / file order. For a streamed record the batch ordinal is
 *   deliberately not part of the key: a bisected or replayed batch numbers records differently.
 * - Source: the shard id (when given) or `source`, with every character outside `[A-Za-z0-9._-]`
 *   replaced by `_`, leading dots removed and cut to its last 64 characters; the hash of the full
 *   original source keeps distinct sources distinct (`a/b` and `a_b`), and makes the segment never
 *   `.` or `..` (`../x` → `_x-<hash>`).
 *
 * Pure: the same identity always gives the same key.
 */
export function deadLetterKey(d: DeadLetterIdentity): string {
  return `${deadLetterSourcePrefix(d.shardId ?? d.source)}${position(d)}`;
}

/** The key prefix (`<readable>-<hash>/`) of every dead letter from one source or shard. */
export function deadLetterSourcePrefix(source: string): string {
  const readable =
    source
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^[._]+/, '')
      .slice(-SOURCE_CHARS)
      .replace(/^[._-]+/, '') || 'source';
  return `${readable}-${fnv1a64(source)}/`;
}

/** Makes a `DeadLetterRecord` (key included) from a `DeadLetter` and the stream's fields. */
export function deadLetterRecord(
  d: DeadLetter,
  extra: Omit<Partial<DeadLetterRecord>, keyof DeadLetter | 'key'> = {},
): DeadLetterRecord {
  const record = { ...d, ...extra };
  return { ...record, key: deadLetterKey(record) };
}

/** A stream record as a dead letter needs it: its position and its original bytes. */
export interface StreamRecordRef {
  readonly shardId: string;
  readonly sequenceNumber: string;
  readonly partitionKey: string;
  readonly arrivalMs: number;
  readonly data: Uint8Array;
}

/**
 * The dead letter of a stream record: keyed by shard and sequence number, with its partition key
 * and arrival time; `text` (JSON records, or a reshaped record's JSON) is kept as `raw`, anything
 * else (GSR-framed Avro) as `rawBase64` of the original bytes.
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A stream record's bytes as text for its dead letter, when they are text: valid UTF-8 and not
 * GSR-framed Avro (header byte 3). Otherwise undefined, and the dead letter keeps them as base64,
 * so a replay puts back exactly the bytes that were sent.
 */
export function recordText(data: Uint8Array): string | undefined {
  if (data[0] === 3) return undefined;
  try {
    return strictUtf8.decode(data);
  } catch {
    return undefined;
  }
}

export function streamDeadLetter(
  r: StreamRecordRef,
  d: Pick<DeadLetter, 'reason' | 'detail' | 'table'> & { readonly line: number; readonly text?: string },
): DeadLetterRecord {
  return deadLetterRecord(
    {
      source: r.shardId,
      line: d.line,
      reason: d.reason,
      detail: d.detail,
      ...(d.table === undefined ? {} : { table: d.table }),
      raw: d.text ?? '',
    },
    {
      shardId: r.shardId,
      sequenceNumber: r.sequenceNumber,
      partitionKey: r.partitionKey,
      arrivalTimeMs: r.arrivalMs,
      ...(d.text === undefined ? { rawBase64: Buffer.from(r.data).toString('base64') } : {}),
    },
  );
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** True for a key `deadLetterKey` can produce (safe as an object name on every store). */
export function isDeadLetterKey(key: string): boolean {
  return key.length <= 256 && KEY.test(key);
}

function position(d: DeadLetterIdentity): string {
  if (d.sequenceNumber !== undefined) {
    const m = /^(\d+)(?:\.(\d{1,10}))?$/.exec(d.sequenceNumber);
    if (m === null) return `x${fnv1a64(d.sequenceNumber)}`.padStart(SEQUENCE_DIGITS, '0'); // not a position: still deterministic and safe
    const digits = m[1]!.replace(/^0+(?=\d)/, '').padStart(SEQUENCE_DIGITS, '0');
    // A sub-record of a Kinesis record (KPL aggregate, lines, log events): `seq.sub`, sorting after `seq`.
    const sub = m[2] === undefined ? 0 : Number(m[2]);
    return sub === 0 ? digits : `${digits}.${String(sub).padStart(10, '0')}`;
  }
  const line = Number.isSafeInteger(d.line) && d.line >= 0 ? d.line : 0;
  return String(line).padStart(LINE_DIGITS, '0');
}

/** FNV-1a 64-bit of the UTF-8 bytes, as 16 hex digits. */
function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(text)) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}
