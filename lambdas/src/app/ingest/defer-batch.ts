/**
 * Deferring a batch: instead of a file and a ledger entry per table, the batch's records as they
 * arrived go to one object and one entry of the shard's `floe~batch` chain, and the committer
 * routes them before it commits (app/route-deferred.ts, engine/deferred-batch.ts).
 *
 * When: the configuration says so (`source.deferRouting`: every batch, or one whose records go to
 * more tables than a bound), or the shard still has deferred batches the committer has not routed
 * (their records come first in every table's chain, so the batches after them wait their turn).
 *
 * Exactly once: records at or below the `floe~batch` chain's tail are already deferred (a retried,
 * bisected or overlapping delivery) and skipped. The object's name is its shard and range, so a
 * retry of the same range writes the same bytes to the same name and nothing is deleted on failure
 * (an object no entry names is an orphan the staging lifecycle removes).
 */
import { DEFERRED_CHAIN, encodeDeferredBatch, ROUTED_CHAIN } from '../../engine/deferred-batch.ts';
import { appendEntries, compareSequence, type LedgerEntry } from '../../ports/ledger.ts';
import type { KinesisBatch, KinesisBatchRecord } from '../../records/kinesis-event.ts';
import type { IngestDeps } from './deps.ts';
import type { IngestResult } from './result.ts';

/** Whether the shard has deferred batches the committer has not routed yet. */
export function hasBacklog(tails: ReadonlyMap<string, string>): boolean {
  const deferred = tails.get(DEFERRED_CHAIN);
  if (deferred === undefined) return false;
  const routed = tails.get(ROUTED_CHAIN);
  return routed === undefined || compareSequence(deferred, routed) > 0;
}

/** Whether a batch whose records go to `tables` tables is deferred (see the module doc). */
export function defersAt(deps: IngestDeps, tables: number, tails: ReadonlyMap<string, string>): boolean {
  return hasBacklog(tails) || tables > deps.config.source.deferAboveTables;
}

/** Stages `batch` as one deferred batch (its records above the chain's tail). */
export async function deferBatch(
  deps: IngestDeps,
  batch: KinesisBatch,
  tails: ReadonlyMap<string, string>,
): Promise<IngestResult> {
  const tail = tails.get(DEFERRED_CHAIN) ?? null;
  const fresh = batch.records.filter((r) => tail === null || compareSequence(r.sequenceNumber, tail) > 0);
  const oldest = oldestOf(batch.records);
  const base: IngestResult = {
    shardId: batch.shardId,
    records: batch.records.length,
    skipped: batch.records.length - fresh.length,
    deadLetters: {},
    tables: [],
    failures: [],
    ...(Number.isFinite(oldest) ? { oldestArrivalMs: oldest } : {}),
    deferred: fresh.length,
  };
  if (fresh.length === 0) return base;
  const first = fresh[0]!.sequenceNumber;
  const last = fresh[fresh.length - 1]!.sequenceNumber;
  try {
    const bytes = encodeDeferredBatch(fresh);
    const uri = `${deps.stagingUri}/deferred/${batch.shardId}/${first}-${last}.fldb`;
    await deps.store.put(uri, bytes);
    const entry: LedgerEntry = {
      table: DEFERRED_CHAIN,
      shardId: batch.shardId,
      firstSequence: first,
      lastSequence: last,
      previousLastSequence: tail,
      files: [{ uri, kind: 'pending', records: fresh.length, bytes: bytes.length }],
      records: fresh.length,
      // The entry's own records only, so a retry of the same range gives the same content.
      oldestArrivalMs: Math.max(0, Math.floor(oldestOf(fresh))),
      createdAtMs: deps.clock.nowMs(),
      status: 'staged',
    };
    const [result] = await appendEntries(deps.ledger, [entry]);
    if (result && !result.ok) throw result.error;
    return base;
  } catch (error) {
    // Nothing of the batch is known to be deferred: Lambda retries it from its first fresh record.
    return {
      ...base,
      failures: [{ table: DEFERRED_CHAIN, firstSequence: first, error }],
      failedSequence: first,
    };
  }
}

function oldestOf(records: readonly KinesisBatchRecord[]): number {
  return records.reduce((m, r) => Math.min(m, r.arrivalMs), Number.POSITIVE_INFINITY);
}
