/**
 * Staging every table of the batch: per table its files, then its dead letters (a few tables at a
 * time), then the tables' ledger entries, appended last, each at the tail of its (table, shard)
 * chain. A table whose staging fails (storage, ledger) does not fail the others.
 */
import { tableId } from '../../config.ts';
import { forEachBounded } from '../../engine/bounded.ts';
import type { ColumnarTableBatch } from '../../engine/columnar-batch.ts';
import { ErrorKind, isFloeError } from '../../errors.ts';
import { appendEntries, type LedgerEntry } from '../../ports/ledger.ts';
import { deleteQuietly } from '../../ports/object-store.ts';
import type { KinesisBatchRecord } from '../../records/kinesis-event.ts';
import { INGEST_CONCURRENCY, type IngestDeps } from './deps.ts';
import { countDeadLetters, putDeadLetters } from './letters.ts';
import type { IngestFailure, TableIngest } from './result.ts';
import type { Routed, TableWork } from './routed.ts';
import { type StagedTable, stageTable } from './stage-table.ts';

export interface StagedTables {
  /** A result per table that staged, in the order they finished. */
  readonly tables: TableIngest[];
  /** A failure per table that did not. */
  readonly failures: IngestFailure[];
  /** The tables' dead letters by reason (routing's are counted in `Routed`). */
  readonly deadCounts: Record<string, number>;
}

/** Where a table's records in the batch start and end (batch indexes), how many, and the oldest arrival. */
interface Span {
  count: number;
  first: number;
  last: number;
  oldestArrival: number;
}

/**
 * Stages the tables in name order, at most `deps.concurrency` (default `INGEST_CONCURRENCY`) at
 * once: every table's files and dead letters first, then all their ledger entries together (a
 * ledger that can share requests between them does: `Ledger.appendEntries`).
 */
export async function stageTables(
  deps: IngestDeps,
  routed: Routed,
  tails: ReadonlyMap<string, string>,
): Promise<StagedTables> {
  const out: StagedTables = { tables: [], failures: [], deadCounts: {} };
  const tables = [...routed.work.values()].sort((a, b) => (a.table < b.table ? -1 : 1));
  const ready: Ready[] = [];
  await forEachBounded(tables, deps.concurrency ?? INGEST_CONCURRENCY, async (w) => {
    const r = await stageFiles(deps, routed, w, out);
    if (r) ready.push(r);
  });
  await appendTheEntries(deps, routed, tails, ready, out);
  return out;
}

/** A table whose files are stored and whose entry is still to be appended. */
interface Ready {
  readonly work: TableWork;
  readonly span: Span;
  readonly table: StagedTable;
  /** The URIs it stored (deleted again if its entry is proven not written). */
  readonly staged: string[];
}

/** One table's files and dead letters; on failure its staged files go. Undefined: nothing to append. */
async function stageFiles(
  deps: IngestDeps,
  routed: Routed,
  w: TableWork,
  out: StagedTables,
): Promise<Ready | undefined> {
  const { batch } = routed;
  const columnar = routed.fast?.tables.get(w.table);
  const span = spanOf(batch.records, w, columnar);
  if (span.count === 0) return undefined;
  const staged: string[] = [];
  try {
    const table = await stageTable({ deps, batch, work: w, staged }, columnar);
    await putDeadLetters(deps.deadLetters, table.rejected);
    countDeadLetters(out.deadCounts, table.rejected);
    if (table.files.length > 0) return { work: w, span, table, staged };
    out.tables.push(tableIngest(w.table, span.count, table));
  } catch (error) {
    await deleteQuietly(deps.store, staged);
    failed(deps, routed, w, span, error, out);
  }
  return undefined;
}

/** The ready tables' entries, each at the tail of its (table, shard) chain, after their files. */
async function appendTheEntries(
  deps: IngestDeps,
  routed: Routed,
  tails: ReadonlyMap<string, string>,
  ready: readonly Ready[],
  out: StagedTables,
): Promise<void> {
  const { records, shardId } = routed.batch;
  const entries = ready.map(
    (r): LedgerEntry => ({
      table: r.work.table,
      shardId,
      firstSequence: records[r.span.first]!.sequenceNumber,
      lastSequence: records[r.span.last]!.sequenceNumber,
      previousLastSequence: tails.get(r.work.table) ?? null,
      files: r.table.files,
      records: r.table.rows + r.table.pending,
      oldestArrivalMs: Math.max(0, Math.floor(r.span.oldestArrival)),
      createdAtMs: deps.clock.nowMs(),
      status: 'staged',
    }),
  );
  // A call that throws as a whole (a crash, a lost answer) leaves every entry's outcome unknown.
  const results = await appendEntries(deps.ledger, entries).catch((error: unknown) =>
    entries.map(() => ({ ok: false as const, error })),
  );
  for (let i = 0; i < ready.length; i++) {
    const r = ready[i]!;
    const result = results[i]!;
    if (result.ok) {
      out.tables.push(tableIngest(r.work.table, r.span.count, r.table));
      continue;
    }
    // Once the entry was sent, only a conflict proves it was not written: otherwise it may name
    // these files, so they stay (the retry skips the records if the entry exists).
    if (isFloeError(result.error, ErrorKind.CommitConflict)) await deleteQuietly(deps.store, r.staged);
    failed(deps, routed, r.work, r.span, result.error, out);
  }
}

function failed(
  deps: IngestDeps,
  routed: Routed,
  w: TableWork,
  span: Span,
  error: unknown,
  out: StagedTables,
): void {
  deps.tables.invalidate(tableId(deps.config, w.table));
  out.failures.push({
    table: w.table,
    firstSequence: routed.batch.records[span.first]!.sequenceNumber,
    error,
  });
}

/** The table's records in this batch: where its entry starts and ends, and the oldest arrival. */
function spanOf(
  records: readonly KinesisBatchRecord[],
  w: TableWork,
  columnar: ColumnarTableBatch | undefined,
): Span {
  const span: Span = {
    count: 0,
    first: Number.POSITIVE_INFINITY,
    last: -1,
    oldestArrival: Number.POSITIVE_INFINITY,
  };
  for (const p of w.json) see(span, records, p.seq);
  for (const a of w.avro) see(span, records, a.index);
  for (const i of columnar?.seqList ?? []) see(span, records, i);
  return span;
}

function see(span: Span, records: readonly KinesisBatchRecord[], i: number): void {
  span.count++;
  if (i < span.first) span.first = i;
  if (i > span.last) span.last = i;
  if (records[i]!.arrivalMs < span.oldestArrival) span.oldestArrival = records[i]!.arrivalMs;
}

function tableIngest(table: string, records: number, staged: StagedTable): TableIngest {
  return {
    table,
    records,
    rows: staged.rows,
    pending: staged.pending,
    dataFiles: staged.files.filter((f) => f.kind === 'data').length,
    bytes: staged.files.reduce((n, f) => n + f.bytes, 0),
    deadLetters: staged.rejected.length,
    path: staged.path,
    ...(staged.coerced === undefined ? {} : { coerced: staged.coerced }),
  };
}
