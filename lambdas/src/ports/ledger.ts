/**
 * The ingest ledger (DESIGN §4 "Exactly once", invariant 1): which records of which shard are
 * staged, in which files. One entry per (table, shard, contiguous run of that table's records).
 *
 * The entries of one (table, shard) form a chain: each entry names where the previous one ended
 * (`previousLastSequence`, `null` for the first entry of the chain). The ledger accepts an entry
 * only at the chain's tail, so a chain never forks and never has holes; the committer then takes
 * only an unbroken run starting at its watermark (`unbrokenRun`), so an entry that is momentarily
 * invisible to a reader can delay a commit but never be skipped by a watermark.
 *
 * Sequence numbers are Kinesis sequence numbers: decimal strings far beyond 2^53. They are
 * compared as BigInt (`compareSequence`) and stored as fixed-width zero-padded strings
 * (`padSequence`) wherever a store must sort them, so lexical order equals numeric order.
 *
 * This module is pure (types and helpers); adapters implement `Ledger`.
 */
import { forEachBounded } from '../engine/bounded.ts';
import { ErrorKind, FloeError } from '../errors.ts';

export interface LedgerFile {
  readonly uri: string;
  /** `data`: fits the table's current schema; `pending`: a fragment in its own schema, rewritten at commit. */
  readonly kind: 'data' | 'pending';
  readonly records: number;
  readonly bytes: number;
  readonly schemaId?: number;
  readonly specId?: number;
  /** kind `data`: the file's Iceberg DataFile descriptor (`dataFileToJson`), so the committer can list it without reading it. */
  readonly dataFile?: string;
}

export type LedgerStatus = 'staged' | 'committed';

export interface LedgerEntry {
  readonly table: string;
  readonly shardId: string;
  /** Decimal sequence number of the run's first record (inclusive). */
  readonly firstSequence: string;
  /** Decimal sequence number of the run's last record (inclusive). */
  readonly lastSequence: string;
  /** Where the previous entry of this shard for this table ended (the chain link); null for the first. */
  readonly previousLastSequence: string | null;
  readonly files: readonly LedgerFile[];
  readonly records: number;
  /** Earliest approximate arrival time (epoch ms) of the run's records in the stream (for freshness). */
  readonly oldestArrivalMs?: number;
  readonly createdAtMs: number;
  readonly status: LedgerStatus;
}

/** What `stagedRanges` reports: a run of one table's records of one shard that is already staged. */
export interface StagedRange {
  readonly table: string;
  readonly shardId: string;
  readonly firstSequence: string;
  readonly lastSequence: string;
  readonly previousLastSequence: string | null;
  readonly status: LedgerStatus;
}

/** `appended`: this call added the entry; `already-present`: an identical entry was there (a retry). */
export type AppendOutcome = 'appended' | 'already-present';

/** One entry's outcome in `appendEntries`: what `appendEntry` would have resolved, or thrown. */
export type AppendResult =
  | { readonly ok: true; readonly outcome: AppendOutcome }
  | { readonly ok: false; readonly error: unknown };

export interface Ledger {
  /**
   * Appends `entry` at the tail of its (table, shard) chain. Idempotent: resolves `already-present`
   * when an identical entry (same content, ignoring `createdAtMs` and `status`) is already in the
   * chain. Throws FloeError CommitConflict (retryable: re-read the ledger, skip what is staged, retry)
   * when an entry with the same (table, shard, firstSequence) but different content exists, or when
   * `entry.previousLastSequence` is not the chain's current tail (a chain break, e.g. a racing
   * appender won). Throws DataInvalid for a malformed entry.
   */
  appendEntry(entry: LedgerEntry): Promise<AppendOutcome>;
  /**
   * Appends entries of different chains (a batch's tables on its shard), each exactly as
   * `appendEntry` would, with one result per entry in order; one entry's failure is its own.
   * Optional: a ledger that can share requests between the entries implements it (use
   * `appendEntries(ledger, entries)`, which falls back to one `appendEntry` each).
   */
  appendEntries?(entries: readonly LedgerEntry[]): Promise<AppendResult[]>;
  /**
   * Entries of (table, shard) whose records lie after `afterSequence` (null: from the chain's start),
   * at most `limit`, in sequence order. Strongly consistent.
   */
  entriesAfter(
    table: string,
    shardId: string,
    afterSequence: string | null,
    limit: number,
  ): Promise<LedgerEntry[]>;
  /** Tables with at least one staged entry, sorted. May lag a few seconds behind writes. */
  tablesWithStagedWork(): Promise<string[]>;
  /** Shards with at least one staged entry for `table`, sorted. May lag like `tablesWithStagedWork`. */
  shardsWithStagedWork(table: string): Promise<string[]>;
  /**
   * Marks the entries of (table, shard) ending at or below `upToSequence` committed (they then expire
   * after the ledger's retention). Idempotent; resolves how many entries this call changed. An entry
   * appended in the last moments may be found only by a later call (the committer calls it on every
   * run, so it catches up).
   */
  markCommitted(table: string, shardId: string, upToSequence: string): Promise<number>;
  /**
   * Runs of any table on `shardId` that overlap [fromSequence, toSequence], sorted by first sequence
   * then table. Strongly consistent: the ingest skips the records these cover.
   */
  stagedRanges(shardId: string, fromSequence: string, toSequence: string): Promise<StagedRange[]>;
  /**
   * Where each table's chain on `shardId` currently ends (table → last sequence). The ingest links
   * its next entry of a table to this (`previousLastSequence`); a table absent here starts a chain
   * with null. Strongly consistent.
   */
  shardTails(shardId: string): Promise<Map<string, string>>;
}

/** Entries of different chains appended at once (each a few round trips). */
export const APPEND_CONCURRENCY = 16;

/**
 * `ledger.appendEntries(entries)`, or one `appendEntry` per entry (`APPEND_CONCURRENCY` at a
 * time) where it has none.
 */
export async function appendEntries(
  ledger: Ledger,
  entries: readonly LedgerEntry[],
): Promise<AppendResult[]> {
  if (ledger.appendEntries) return ledger.appendEntries(entries);
  const results: AppendResult[] = new Array(entries.length);
  await forEachBounded([...entries.keys()], APPEND_CONCURRENCY, async (i) => {
    try {
      results[i] = { ok: true, outcome: await ledger.appendEntry(entries[i]!) };
    } catch (error) {
      results[i] = { ok: false, error };
    }
  });
  return results;
}

// ---------------------------------------------------------------------------------------------
// Sequence numbers and positions

/** Kinesis: `0|([1-9]\d{0,128})`, i.e. at most 129 digits. */
export const SEQUENCE_WIDTH = 129;
/** Digits of a sub-record number in the padded form (a Kinesis record holds far fewer records). */
export const SUB_WIDTH = 10;
const POSITION = /^(\d+)(?:\.(\d+))?$/;

/**
 * A record's position in its shard: the Kinesis sequence number, and for a record that is one of
 * several inside one Kinesis record (a KPL aggregate, the lines of a compressed payload, the events
 * of a CloudWatch Logs batch) its sub-record number. Written `seq` or `seq.sub`; `seq.0` is `seq`
 * (the first sub-record keeps the Kinesis record's own position), so every position a plain stream
 * ever produced keeps its meaning, and positions order as (seq, sub).
 */
interface Position {
  readonly seq: bigint;
  readonly sub: number;
}

function toPosition(sequence: string): Position {
  const m = typeof sequence === 'string' ? POSITION.exec(sequence) : null;
  if (m === null || (m[2] !== undefined && m[2].length > SUB_WIDTH)) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `sequence number ${JSON.stringify(sequence)} is not a decimal (or decimal.sub-record)`,
      { context: { sequence } },
    );
  }
  return { seq: BigInt(m[1]!), sub: m[2] === undefined ? 0 : Number(m[2]) };
}

function positionText(p: Position): string {
  return p.sub === 0 ? p.seq.toString() : `${p.seq}.${p.sub}`;
}

/** -1, 0 or 1 as position `a` is below, equal to or above `b` (sequence numbers as big integers, then sub-records). */
export function compareSequence(a: string, b: string): -1 | 0 | 1 {
  const x = toPosition(a);
  const y = toPosition(b);
  if (x.seq !== y.seq) return x.seq < y.seq ? -1 : 1;
  return x.sub < y.sub ? -1 : x.sub > y.sub ? 1 : 0;
}

/** Equality of optional sequence numbers (null = "before the chain's first entry"). */
export function sameSequence(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  return compareSequence(a, b) === 0;
}

/** The canonical form (no leading zeros; `seq.0` is `seq`). */
export function canonicalSequence(sequence: string): string {
  return positionText(toPosition(sequence));
}

/** The position of sub-record `sub` of the Kinesis record `sequenceNumber` (0: the record itself). */
export function subPosition(sequenceNumber: string, sub: number): string {
  if (!Number.isSafeInteger(sub) || sub < 0 || String(sub).length > SUB_WIDTH) {
    throw new FloeError(ErrorKind.DataInvalid, `sub-record number ${sub} is out of range`, {
      context: { sequence: sequenceNumber, sub },
    });
  }
  const p = toPosition(sequenceNumber);
  if (p.sub !== 0) {
    throw new FloeError(ErrorKind.DataInvalid, `${sequenceNumber} is already a sub-record position`, {
      context: { sequence: sequenceNumber },
    });
  }
  return positionText({ seq: p.seq, sub });
}

/** The Kinesis sequence number of a position (what Lambda can retry from). */
export function kinesisSequenceOf(position: string): string {
  return toPosition(position).seq.toString();
}

/**
 * Fixed-width zero-padded form: lexical order of padded strings equals position order
 * (`pad(seq)` for a record, `pad(seq).pad(sub)` for a sub-record, which sorts after `pad(seq)`
 * and before `pad(seq + 1)`).
 */
export function padSequence(sequence: string | bigint): string {
  const p = typeof sequence === 'bigint' ? { seq: sequence, sub: 0 } : toPosition(sequence);
  const digits = p.seq.toString();
  if (digits.startsWith('-') || digits.length > SEQUENCE_WIDTH) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `sequence number ${digits} does not fit ${SEQUENCE_WIDTH} digits`,
      {
        context: { sequence: digits },
      },
    );
  }
  const padded = digits.padStart(SEQUENCE_WIDTH, '0');
  return p.sub === 0 ? padded : `${padded}.${String(p.sub).padStart(SUB_WIDTH, '0')}`;
}

/** Inverse of `padSequence`. */
export function unpadSequence(padded: string): string {
  return canonicalSequence(padded);
}

/** The largest sub-record number a position can hold (`SUB_WIDTH` digits). */
const MAX_SUB = 10 ** SUB_WIDTH - 1;

/** The smallest position after `sequence` (for exclusive lower bounds in sorted keys). */
export function nextSequence(sequence: string): string {
  const p = toPosition(sequence);
  // Past the last sub-record of a Kinesis record comes the next sequence number itself.
  return positionText(p.sub === MAX_SUB ? { seq: p.seq + 1n, sub: 0 } : { seq: p.seq, sub: p.sub + 1 });
}

// ---------------------------------------------------------------------------------------------
// Entries

const KEY_PART = /^[^#\s][^#]*$/;

/**
 * Checks an entry's shape and returns it in canonical form (sequence numbers without leading
 * zeros). Throws DataInvalid.
 */
export function normalizeEntry(entry: LedgerEntry): LedgerEntry {
  const bad = (why: string): never => {
    throw new FloeError(ErrorKind.DataInvalid, `ledger entry for ${entry.table}/${entry.shardId}: ${why}`, {
      context: { table: entry.table, shardId: entry.shardId, firstSequence: entry.firstSequence },
    });
  };
  if (typeof entry.table !== 'string' || !KEY_PART.test(entry.table))
    bad('table name must be non-empty, no "#"');
  if (typeof entry.shardId !== 'string' || !KEY_PART.test(entry.shardId))
    bad('shard id must be non-empty, no "#"');
  const first = canonicalSequence(entry.firstSequence);
  const last = canonicalSequence(entry.lastSequence);
  const previous = entry.previousLastSequence === null ? null : canonicalSequence(entry.previousLastSequence);
  padSequence(last);
  if (compareSequence(first, last) > 0) bad(`firstSequence ${first} is after lastSequence ${last}`);
  if (previous !== null && compareSequence(previous, first) >= 0) {
    bad(`previousLastSequence ${previous} is not before firstSequence ${first}`);
  }
  const count = (n: unknown, what: string) => {
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
      bad(`${what} must be a non-negative integer`);
  };
  count(entry.records, 'records');
  count(entry.createdAtMs, 'createdAtMs');
  if (entry.oldestArrivalMs !== undefined) count(entry.oldestArrivalMs, 'oldestArrivalMs');
  if (entry.status !== 'staged' && entry.status !== 'committed')
    bad(`unknown status ${String(entry.status)}`);
  if (!Array.isArray(entry.files)) bad('files must be an array');
  const files = entry.files.map((f): LedgerFile => {
    if (typeof f.uri !== 'string' || f.uri === '') bad('file uri must be a non-empty string');
    if (f.kind !== 'data' && f.kind !== 'pending')
      bad(`file kind must be data or pending, got ${String(f.kind)}`);
    count(f.records, 'file records');
    count(f.bytes, 'file bytes');
    if (f.schemaId !== undefined) count(f.schemaId, 'file schemaId');
    if (f.specId !== undefined) count(f.specId, 'file specId');
    if (f.dataFile !== undefined && (typeof f.dataFile !== 'string' || f.dataFile === ''))
      bad('file dataFile must be a non-empty string');
    return {
      uri: f.uri,
      kind: f.kind,
      records: f.records,
      bytes: f.bytes,
      ...(f.schemaId === undefined ? {} : { schemaId: f.schemaId }),
      ...(f.specId === undefined ? {} : { specId: f.specId }),
      ...(f.dataFile === undefined ? {} : { dataFile: f.dataFile }),
    };
  });
  return {
    table: entry.table,
    shardId: entry.shardId,
    firstSequence: first,
    lastSequence: last,
    previousLastSequence: previous,
    files,
    records: entry.records,
    ...(entry.oldestArrivalMs === undefined ? {} : { oldestArrivalMs: entry.oldestArrivalMs }),
    createdAtMs: entry.createdAtMs,
    status: entry.status,
  };
}

/**
 * The content that identifies an entry, as a canonical JSON string: everything but `createdAtMs`
 * and `status` (a retry re-appends the same content at a later time). Input must be normalized.
 */
export function entryContent(entry: LedgerEntry): string {
  return JSON.stringify({
    table: entry.table,
    shardId: entry.shardId,
    firstSequence: entry.firstSequence,
    lastSequence: entry.lastSequence,
    previousLastSequence: entry.previousLastSequence,
    records: entry.records,
    ...(entry.oldestArrivalMs === undefined ? {} : { oldestArrivalMs: entry.oldestArrivalMs }),
    files: entry.files.map((f) => ({
      uri: f.uri,
      kind: f.kind,
      records: f.records,
      bytes: f.bytes,
      schemaId: f.schemaId ?? null,
      specId: f.specId ?? null,
      dataFile: f.dataFile ?? null,
    })),
  });
}

/** True when `a` and `b` describe the same staged run (ignores `createdAtMs` and `status`). */
export function sameEntryContent(a: LedgerEntry, b: LedgerEntry): boolean {
  return entryContent(normalizeEntry(a)) === entryContent(normalizeEntry(b));
}

/** Sorts entries by last sequence (within one chain that is also first-sequence order). */
export function sortEntries<T extends { lastSequence: string; table: string }>(entries: readonly T[]): T[] {
  return [...entries].sort(
    (a, b) => compareSequence(a.lastSequence, b.lastSequence) || cmp(a.table, b.table),
  );
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The prefix of one (table, shard) chain's `entries` that the committer may take: entries at or
 * below the watermark are skipped, then entries are taken while each links to where the previous
 * one ended, starting at `watermark` (null: the chain's start). Stops at the first gap, so an entry
 * that a reader did not see (yet) is never jumped over. `entries` need not be sorted.
 */
export function unbrokenRun<T extends LedgerEntry>(entries: readonly T[], watermark: string | null): T[] {
  const out: T[] = [];
  let expected = watermark;
  for (const e of sortEntries(entries)) {
    if (expected !== null && compareSequence(e.lastSequence, expected) <= 0) continue;
    if (!sameSequence(e.previousLastSequence, expected)) break;
    out.push(e);
    expected = e.lastSequence;
  }
  return out;
}

/** True when one of `ranges` of `table` covers `sequence` (the ingest skips such records). */
export function isStaged(ranges: readonly StagedRange[], table: string, sequence: string): boolean {
  return ranges.some(
    (r) =>
      r.table === table &&
      compareSequence(r.firstSequence, sequence) <= 0 &&
      compareSequence(sequence, r.lastSequence) <= 0,
  );
}
