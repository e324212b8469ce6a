/**
 * Deframing: what producers really put in a Kinesis record, turned into the records Floe routes.
 *
 * Layers, outermost first, each recognised by its bytes or shape:
 * 1. a KPL aggregate (`kpl.ts`): its user records;
 * 2. a gzip or zstd payload (`compression.ts`): decompressed, bounded;
 * 3. a CloudWatch Logs subscription batch (`cloudwatch-logs.ts`): its log events; else, for a
 *    decompressed payload, its non-blank lines (NDJSON);
 * 4. an EventBridge event (`eventbridge.ts`): its detail with the envelope's fields.
 *
 * Positions: the records one Kinesis record yields are numbered in order, and the k-th has the
 * position `subPosition(seq, k)` (`seq`, `seq.1`, `seq.2` …; ports/ledger.ts), so exactly once holds
 * per record: a retried or bisected batch that re-delivers a half-staged aggregate skips exactly
 * the records already staged. A record that needs no deframing keeps its position and its bytes
 * (the common case costs a look at its first bytes).
 *
 * What cannot be deframed is one dead letter holding the bytes as they came: a corrupt aggregate
 * (the whole Kinesis record, none of its user records land), a corrupt or too large compressed
 * payload, an invalid CloudWatch Logs batch. `CONTROL_MESSAGE` batches yield nothing and are
 * counted. Pure: no I/O.
 */
import type { FloeConfig } from '../../config.ts';
import { DeadLetterReason } from '../../engine/dead-letters.ts';
import { subPosition } from '../../ports/ledger.ts';
import type { KinesisBatchRecord } from '../kinesis-event.ts';
import { looksLikeLogBatch, readLogBatch } from './cloudwatch-logs.ts';
import {
  type Compression,
  compressionOf,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  decompress,
} from './compression.ts';
import { looksLikeEvent, unwrapEvent } from './eventbridge.ts';
import { deaggregate, isAggregate } from './kpl.ts';

/** The framings a stream may carry (`source.framings` in the config). */
/** `dynamodb` is not a layer here: a DynamoDB change record is routed and read by its shape (records/dynamodb-change.ts). */
export const FRAMINGS = ['kpl', 'gzip', 'zstd', 'cloudwatch-logs', 'eventbridge', 'dynamodb'] as const;
export type Framing = (typeof FRAMINGS)[number];

export interface DeframeOptions {
  /** Which framings to undo (all by default: each is recognised by its bytes or shape). */
  readonly framings?: ReadonlySet<Framing>;
  /** Bound on one payload's decompressed bytes. */
  readonly maxDecompressedBytes?: number;
  /** Nesting limit when parsing envelopes and structured log messages. */
  readonly maxDepth?: number;
}

/** The options a config gives: its `source` section, and its nesting limit for the envelopes. */
export function deframeOptionsOf(config: Pick<FloeConfig, 'source' | 'limits'>): DeframeOptions {
  return {
    framings: config.source.framings,
    maxDecompressedBytes: config.source.maxDecompressedBytes,
    maxDepth: config.limits.maxNestingDepth,
  };
}

/** Why a record could not be deframed (dead-letter reasons). */
export const DeframeReason = {
  CorruptAggregate: DeadLetterReason.CorruptAggregate,
  CorruptCompression: DeadLetterReason.CorruptCompression,
  DecompressedTooLarge: DeadLetterReason.DecompressedTooLarge,
  InvalidLogBatch: DeadLetterReason.InvalidLogBatch,
} as const;
export type DeframeReason = (typeof DeframeReason)[keyof typeof DeframeReason];

/** A record that could not be deframed: the bytes as they came, at their position. */
export interface DeframeRejection {
  readonly record: KinesisBatchRecord;
  readonly reason: DeframeReason;
  readonly detail: string;
}

export interface DeframeCounts {
  /** KPL aggregates undone, and the user records they held. */
  aggregates: number;
  aggregatedRecords: number;
  /** Payloads decompressed (gzip or zstd). */
  decompressed: number;
  /** CloudWatch Logs batches: with data, and control messages skipped. */
  logBatches: number;
  controlMessages: number;
  /** EventBridge events unwrapped. */
  events: number;
}

export interface Deframed {
  /** The records to route, in position order (the input array itself when nothing was framed). */
  readonly records: KinesisBatchRecord[];
  readonly rejected: DeframeRejection[];
  readonly counts: DeframeCounts;
}

const ALL: ReadonlySet<Framing> = new Set(FRAMINGS);
const utf8 = new TextDecoder('utf-8');
const encoder = new TextEncoder();

export function emptyCounts(): DeframeCounts {
  return {
    aggregates: 0,
    aggregatedRecords: 0,
    decompressed: 0,
    logBatches: 0,
    controlMessages: 0,
    events: 0,
  };
}

/** Deframes a shard's records (in sequence order) into the records to route (in position order). */
export function deframe(records: KinesisBatchRecord[], opts: DeframeOptions = {}): Deframed {
  const framings = opts.framings ?? ALL;
  const counts = emptyCounts();
  const rejected: DeframeRejection[] = [];
  if (framings.size === 0) return { records, rejected, counts };
  const rejections = new Map<KinesisBatchRecord, Omit<DeframeRejection, 'record'>>();
  const ctx: Context = {
    framings,
    maxBytes: opts.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES,
    maxDepth: opts.maxDepth ?? 64,
    counts,
    rejections,
  };
  let out: KinesisBatchRecord[] | undefined;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    if (!mayBeFramed(r.data, framings)) {
      out?.push(r);
      continue;
    }
    const parts = deframeOne(ctx, r);
    if (parts.length === 1 && parts[0] === r) {
      out?.push(r);
      continue;
    }
    out ??= records.slice(0, i);
    // Every part has a position, a rejected one too (its dead letter's key), so positions do not
    // depend on what was rejected.
    for (let k = 0; k < parts.length; k++) {
      const p = parts[k]!;
      const placed = { ...p, sequenceNumber: subPosition(r.sequenceNumber, k) };
      const why = rejections.get(p);
      if (why === undefined) out.push(placed);
      else rejected.push({ record: placed, ...why });
    }
  }
  return { records: out ?? records, rejected, counts };
}

interface Context {
  readonly framings: ReadonlySet<Framing>;
  readonly maxBytes: number;
  readonly maxDepth: number;
  readonly counts: DeframeCounts;
  /** Parts that could not be deframed, and why (placed, with their position, by `deframe`). */
  readonly rejections: Map<KinesisBatchRecord, Omit<DeframeRejection, 'record'>>;
}

/** First-byte test: only a record that starts like a framing is looked at further. */
function mayBeFramed(data: Uint8Array, framings: ReadonlySet<Framing>): boolean {
  const b = data[0];
  if (b === 0xf3) return framings.has('kpl');
  if (b === 0x1f || b === 0x28) return framings.has('gzip') || framings.has('zstd');
  if (b !== 0x7b) return false;
  return (
    (framings.has('eventbridge') && looksLikeEvent(data)) ||
    (framings.has('cloudwatch-logs') && looksLikeLogBatch(data))
  );
}

/**
 * The parts one Kinesis record yields, in order: `[r]` itself when it is not framed, `[]` for a
 * control message; a part that cannot be deframed is marked in `ctx.rejections`.
 */
function deframeOne(ctx: Context, r: KinesisBatchRecord): KinesisBatchRecord[] {
  if (isAggregate(r.data) && ctx.framings.has('kpl')) {
    const agg = deaggregate(r.data);
    if (!agg.ok) return reject(ctx, r, DeframeReason.CorruptAggregate, agg.detail);
    ctx.counts.aggregates++;
    ctx.counts.aggregatedRecords += agg.records.length;
    const out: KinesisBatchRecord[] = [];
    for (const u of agg.records) {
      const user: KinesisBatchRecord = { ...r, partitionKey: u.partitionKey, data: u.data };
      // A user record is itself deframed (a compressed or EventBridge payload inside an aggregate).
      for (const p of mayBeFramed(u.data, ctx.framings) ? payload(ctx, user) : [user]) out.push(p);
    }
    return out;
  }
  return payload(ctx, r);
}

/** Layers 2–4 of one payload (a Kinesis record, or a user record of an aggregate). */
function payload(ctx: Context, r: KinesisBatchRecord): KinesisBatchRecord[] {
  const kind = compressionOf(r.data);
  if (kind !== undefined && ctx.framings.has(kind)) return decompressed(ctx, r, kind);
  if (ctx.framings.has('cloudwatch-logs') && looksLikeLogBatch(r.data)) {
    // A batch as text (a file of them replayed with `floe send`, or `floe load`).
    return logBatch(ctx, r, utf8.decode(r.data)) ?? [r];
  }
  if (ctx.framings.has('eventbridge') && looksLikeEvent(r.data)) {
    const row = unwrapEvent(utf8.decode(r.data), ctx.maxDepth);
    if (row !== undefined) {
      ctx.counts.events++;
      return [{ ...r, data: encoder.encode(row) }];
    }
  }
  return [r];
}

function decompressed(ctx: Context, r: KinesisBatchRecord, kind: Compression): KinesisBatchRecord[] {
  const d = decompress(kind, r.data, ctx.maxBytes);
  if (!d.ok) {
    const reason = d.tooLarge ? DeframeReason.DecompressedTooLarge : DeframeReason.CorruptCompression;
    return reject(ctx, r, reason, d.detail);
  }
  ctx.counts.decompressed++;
  if (ctx.framings.has('cloudwatch-logs') && looksLikeLogBatch(d.bytes)) {
    const events = logBatch(ctx, r, utf8.decode(d.bytes));
    if (events !== undefined) return events;
  }
  return lines(ctx, r, d.bytes);
}

/** A CloudWatch Logs batch's records; undefined when the text does not look like one. */
function logBatch(ctx: Context, r: KinesisBatchRecord, text: string): KinesisBatchRecord[] | undefined {
  const batch = readLogBatch(text, ctx.maxDepth);
  if (batch.kind === 'none') return undefined;
  if (batch.kind === 'invalid') return reject(ctx, r, DeframeReason.InvalidLogBatch, batch.detail);
  if (batch.kind === 'control') {
    ctx.counts.controlMessages++;
    return [];
  }
  ctx.counts.logBatches++;
  return batch.events.map((e) => ({ ...r, data: encoder.encode(e.json) }));
}

/** A decompressed payload's non-blank lines, each a record (one line: the payload itself). */
function lines(ctx: Context, r: KinesisBatchRecord, bytes: Uint8Array): KinesisBatchRecord[] {
  const out: KinesisBatchRecord[] = [];
  let start = 0;
  while (start <= bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    let stop = end;
    if (stop > start && bytes[stop - 1] === 0x0d) stop--;
    if (!isBlank(bytes, start, stop)) {
      const line = { ...r, data: bytes.subarray(start, stop) };
      for (const p of ctx.framings.has('eventbridge') && looksLikeEvent(line.data)
        ? payload(ctx, line)
        : [line])
        out.push(p);
    }
    start = end + 1;
  }
  // An all-blank payload is still a record (the record path dead-letters it): nothing vanishes.
  return out.length > 0 ? out : [{ ...r, data: bytes }];
}

function isBlank(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = bytes[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

function reject(
  ctx: Context,
  r: KinesisBatchRecord,
  reason: DeframeReason,
  detail: string,
): KinesisBatchRecord[] {
  const part = { ...r };
  ctx.rejections.set(part, { reason, detail });
  return [part];
}
