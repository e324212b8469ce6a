/**
 * The ingest app (DESIGN §1, §4): one Kinesis batch of one shard → data files and pending
 * fragments per target table, dead letters, and one ledger entry per table, written last.
 *
 * Exactly once (invariant 1): before staging, the ingest reads where each table's ledger chain on
 * this shard ends (`shardTails`) and skips every record of that table at or below it: with
 * ParallelizationFactor 1 a shard's batches are delivered in order, so such a record was handled
 * by an earlier (possibly failed, retried or bisected) delivery whose entry is in the ledger. A
 * table's entry is appended at its chain's tail only after its files are stored; files of a
 * table whose entry was never written are orphans that no commit references.
 *
 * A table whose staging fails (storage, ledger) does not fail the others: the batch reports the
 * lowest sequence number of the failed tables' records as its batch item failure, Lambda retries
 * from there, and the tables that succeeded skip what they already staged.
 *
 * Producers' framings are undone first (`ingest/deframe-batch.ts`): a KPL aggregate, a compressed
 * payload or a CloudWatch Logs batch yields several records, each at its own position `seq.sub`,
 * and exactly once holds at that position (a batch item failure still names the Kinesis record).
 *
 * The steps live in `ingest/`: `route-records.ts` (decode, guards, route, rules → `routed.ts`),
 * `tails.ts` (skip what is staged), `letters.ts` (dead letters), `stage-tables.ts` (per table:
 * files, dead letters, then the entry; failures isolated), `stage-table.ts` with `stage-json.ts`
 * and `stage-avro.ts` (one table's files).
 */
import { compareSequence, kinesisSequenceOf } from '../ports/ledger.ts';
import type { KinesisBatch } from '../records/kinesis-event.ts';
import { deferBatch, defersAt } from './ingest/defer-batch.ts';
import { type DeframedBatch, deframeBatch } from './ingest/deframe-batch.ts';
import type { IngestDeps } from './ingest/deps.ts';
import { addCounts, putDeadLetters } from './ingest/letters.ts';
import type { IngestResult } from './ingest/result.ts';
import { routeRecords } from './ingest/route-records.ts';
import type { Routed } from './ingest/routed.ts';
import { type StagedTables, stageTables } from './ingest/stage-tables.ts';
import { readTails, skipStaged } from './ingest/tails.ts';

export type { Router } from '../routing/index.ts';
export { type IngestDeps, loadDeps, registryOf } from './ingest/deps.ts';
export type { IngestFailure, IngestResult, TableIngest } from './ingest/result.ts';
export { routeReason } from './ingest/route-records.ts';

export interface IngestOptions {
  /**
   * Route the batch here whatever the configuration says (the committer routing deferred batches:
   * app/route-deferred.ts). Default: defer it when `ingest/defer-batch.ts` says so.
   */
  readonly routeHere?: boolean;
}

export async function ingestBatch(
  deps: IngestDeps,
  batch: KinesisBatch,
  opts: IngestOptions = {},
): Promise<IngestResult> {
  const tailsRead = readTails(deps, batch.shardId); // read while the records are routed (needed only after)
  const mayDefer = opts.routeHere !== true;
  // Every batch deferred: nothing to route here.
  if (mayDefer && deps.config.source.deferAboveTables === 0) return deferBatch(deps, batch, await tailsRead);
  const framed = deframeBatch(deps, batch);
  const routed = await routeRecords(deps, framed.batch);
  const tails = await tailsRead;
  if (mayDefer && defersAt(deps, routed.work.size, tails)) return deferBatch(deps, batch, tails);
  const skipped = await skipStaged(routed, tails);
  // Dead letters first (deterministic keys: a retry overwrites), so they exist before any entry.
  await putDeadLetters(deps.deadLetters, [...framed.dead, ...routed.dead]);
  const staged = await stageTables(deps, routed, tails);
  return ingestResult(batch, framed, routed, skipped, staged);
}

function ingestResult(
  batch: KinesisBatch,
  framed: DeframedBatch,
  routed: Routed,
  skipped: number,
  staged: StagedTables,
): IngestResult {
  // The registry's failure (it stopped routing) first, then the tables' in the order they failed.
  const failures = [...routed.failures, ...staged.failures];
  const failedSequence = failures
    .map((f) => f.firstSequence)
    .reduce<string | undefined>((a, b) => (a === undefined || compareSequence(b, a) < 0 ? b : a), undefined);
  const oldest = batch.records.reduce((m, r) => Math.min(m, r.arrivalMs), Number.POSITIVE_INFINITY);
  return {
    shardId: batch.shardId,
    records: batch.records.length,
    skipped,
    deadLetters: addCounts(addCounts({ ...framed.deadCounts }, routed.deadCounts), staged.deadCounts),
    tables: staged.tables.sort((a, b) => (a.table < b.table ? -1 : 1)),
    failures,
    // The Kinesis record of the lowest failed position: all Lambda can retry from.
    ...(failedSequence === undefined ? {} : { failedSequence: kinesisSequenceOf(failedSequence) }),
    ...(Number.isFinite(oldest) ? { oldestArrivalMs: oldest } : {}),
    ...(routed.noRowChanges.count > 0 ? { noRowChanges: routed.noRowChanges.count } : {}),
    ...(framed.batch === batch && framed.dead.length === 0 ? {} : { framing: framingOf(framed) }),
  };
}

function framingOf(framed: DeframedBatch): NonNullable<IngestResult['framing']> {
  return { ...framed.counts, records: framed.batch.records.length };
}
