/**
 * Staging every table of the batch, a few at a time: per table its files, then its dead letters,
 * then its ledger entry, appended last at the tail of its (table, shard) chain. A table whose
 * staging fails (storage, ledger) does not fail the others.
 */
import { tableId } from '../../config.ts';
import { forEachBounded } from '../../engine/bounded.ts';
import type { ColumnarTableBatch } from '../../engine/columnar-batch.ts';
import { ErrorKind, isFloeError } from '../../errors.ts';
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

/** Stages the tables in name order, at most `deps.concurrency` (default `INGEST_CONCURRENCY`) at once. */
export async function stageTables(
  deps: IngestDeps,
  routed: Routed,
  tails: ReadonlyMap<string, string>,
): Promise<StagedTables> {
  const out: StagedTables = { tables: [], failures: [], deadCounts: {} };
  const tables = [...routed.work.values()].sort((a, b) => (a.table < b.table ? -1 : 1));
  await forEachBounded(tables, deps.concurrency ?? INGEST_CONCURRENCY, (w) =>
    ingestTable(deps, routed, tails, w, out),
  );
  return out;
}

/** One table: its files and dead letters, then its ledger entry; on failure, its staged files go. */
async function ingestTable(
  deps: IngestDeps,
  routed: Routed,
  tails: ReadonlyMap<string, string>,
  w: TableWork,
  out: StagedTables,
): Promise<void> {
  const { batch } = routed;
  const columnar = routed.fast?.tables.get(w.table);
  const span = spanOf(batch.records, w, columnar);
  if (span.count === 0) return;
  const staged: string[] = [];
  let entryTried = false;
  try {
    const table = await stageTable({ deps, batch, work: w, staged }, columnar);
    await putDeadLetters(deps.deadLetters, table.rejected);
    countDeadLetters(out.deadCounts, table.rejected);
    if (table.files.length > 0) {
      entryTried = true;
      await appendEntry(deps, routed, w.table, span, table, tails.get(w.table) ?? null);
    }
    out.tables.push(tableIngest(w.table, span.count, table));
  } catch (error) {
    // Once the entry was sent, only a conflict proves it was not written: otherwise it may name
    // these files, so they stay (the retry skips the records if the entry exists).
    if (!entryTried || isFloeError(error, ErrorKind.CommitConflict)) {
      await deleteQuietly(deps.store, staged);
    }
    deps.tables.invalidate(tableId(deps.config, w.table));
    out.failures.push({ table: w.table, firstSequence: batch.records[span.first]!.sequenceNumber, error });
  }
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

/** Appends the table's entry at the tail of its (table, shard) chain, after its files are stored. */
async function appendEntry(
  deps: IngestDeps,
  routed: Routed,
  table: string,
  span: Span,
  staged: StagedTable,
  previousLastSequence: string | null,
): Promise<void> {
  const { records, shardId } = routed.batch;
  await deps.ledger.appendEntry({
    table,
    shardId,
    firstSequence: records[span.first]!.sequenceNumber,
    lastSequence: records[span.last]!.sequenceNumber,
    previousLastSequence,
    files: staged.files,
    records: staged.rows + staged.pending,
    oldestArrivalMs: Math.max(0, Math.floor(span.oldestArrival)),
    createdAtMs: deps.clock.nowMs(),
    status: 'staged',
  });
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
