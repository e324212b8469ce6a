/**
 * Routing deferred batches (ingest/defer-batch.ts, engine/deferred-batch.ts): the committer's
 * first step on each run. Per shard with deferred work, under the shard's routing lease:
 *
 * 1. read where the shard's `floe~routed` chain ends, and the unbroken run of `floe~batch` entries
 *    after it (up to a bound of records);
 * 2. read their records back, as Kinesis delivered them;
 * 3. ingest them as one batch, routed here (`ingestBatch` with `routeHere`): per table its files
 *    and its entry at the tail of its own chain, dead letters, records already staged skipped;
 * 4. when every table staged, append the position routed to the `floe~routed` chain, mark both
 *    chains' entries committed and delete the deferred objects.
 *
 * Exactly once: step 3 is the ingest's own, so a retry after any failure or crash (of step 3 or
 * 4) skips per table what is already in its chain; the routed position moves only once all of the
 * records up to it are staged. Two routers of one shard at once (a lease lost) append through the
 * same chain protocol: one entry wins each chain, the other's files are deleted, the routed entry
 * is the same for both. A table that fails (storage, ledger, registry) leaves the run unrouted and
 * the next committer run routes it again; the ingest defers the shard's batches meanwhile, so each
 * table's chain stays in stream order.
 *
 * Routing many batches at once is what makes deferring pay: one file and one ledger entry per
 * table for all of them, instead of one per table per batch.
 */
import { forEachBounded, settleAll } from '../engine/bounded.ts';
import { DEFERRED_CHAIN, decodeDeferredBatch, ROUTED_CHAIN } from '../engine/deferred-batch.ts';
import { appendEntries, type LedgerEntry, unbrokenRun } from '../ports/ledger.ts';
import { acquireLease, type Lease, type Lock, releaseLease } from '../ports/lock.ts';
import { deleteQuietly } from '../ports/object-store.ts';
import type { KinesisBatchRecord } from '../records/kinesis-event.ts';
import { type IngestDeps, ingestBatch } from './ingest.ts';

export interface RouteDeps {
  /** The ingest the deferred records go through (the committer's view of the stack). */
  readonly route: IngestDeps;
  readonly lock: Lock;
  readonly owner: string;
  /** Lease per shard (default 120 s). */
  readonly leaseMs?: number;
}

export interface ShardRouting {
  readonly shardId: string;
  readonly status: 'routed' | 'nothing-to-route' | 'locked' | 'failed';
  /** Deferred batches routed (their ledger entries). */
  readonly batches: number;
  readonly records: number;
  /** The tables that got entries. */
  readonly tables: readonly string[];
  readonly error?: unknown;
}

/** Deferred batches read per shard per run (the ledger's read bound). */
const MAX_BATCHES = 200;
/** Records routed per shard per run: bounds the committer's memory (more wait for the next run). */
export const MAX_ROUTED_RECORDS = 50_000;
/** Shards routed at once. */
const SHARD_CONCURRENCY = 4;

/**
 * Routes every shard's deferred batches (see the module doc); one result per shard with work.
 * Never throws: a failure is that shard's (or, when the shards cannot be listed, the one result
 * with an empty shard id), and the committer goes on to commit the tables.
 */
export async function routeDeferred(deps: RouteDeps): Promise<ShardRouting[]> {
  // Shards with routed entries still staged too: the sparse index may not have shown an entry
  // appended moments ago to the run that marked the others (ports/ledger.ts `markCommitted`).
  const { ledger } = deps.route;
  let lists: string[][];
  try {
    lists = await settleAll([
      ledger.shardsWithStagedWork(DEFERRED_CHAIN),
      ledger.shardsWithStagedWork(ROUTED_CHAIN),
    ]);
  } catch (error) {
    return [{ shardId: '', status: 'failed', batches: 0, records: 0, tables: [], error }];
  }
  const shards = [...new Set(lists.flat())].sort();
  const out: ShardRouting[] = [];
  await forEachBounded(shards, SHARD_CONCURRENCY, async (shardId) => {
    out.push(await routeShard(deps, shardId));
  });
  return out.sort((a, b) => (a.shardId < b.shardId ? -1 : 1));
}

async function routeShard(deps: RouteDeps, shardId: string): Promise<ShardRouting> {
  const none = { shardId, batches: 0, records: 0, tables: [] };
  const { ledger, store } = deps.route;
  const name = `route/${shardId}`;
  let lease: Lease | undefined;
  try {
    lease = await acquireLease(deps.lock, name, deps.owner, deps.leaseMs ?? 120_000);
  } catch (error) {
    return { ...none, status: 'failed', error };
  }
  if (!lease) return { ...none, status: 'locked' };
  try {
    // 1. The run after the routed position.
    const tails = await ledger.shardTails(shardId);
    const routedTo = tails.get(ROUTED_CHAIN) ?? null;
    const after = await ledger.entriesAfter(DEFERRED_CHAIN, shardId, routedTo, MAX_BATCHES);
    const run = withinBound(unbrokenRun(after, routedTo));
    if (run.length === 0) {
      await settleRouted(deps.route, shardId, routedTo);
      return { ...none, status: 'nothing-to-route' };
    }
    // 2. Their records, in stream order.
    const records: KinesisBatchRecord[] = [];
    for (const e of run)
      for (const f of e.files) records.push(...decodeDeferredBatch(await store.get(f.uri), f.uri));
    lease = await deps.lock.renew(lease);
    // 3. Routed and staged as the ingest stages a batch.
    const ingest = await ingestBatch(deps.route, { shardId, streamArn: '', records }, { routeHere: true });
    const base = {
      shardId,
      batches: run.length,
      records: records.length,
      tables: ingest.tables.map((t) => t.table),
    };
    if (ingest.failures.length > 0) return { ...base, status: 'failed', error: ingest.failures[0]!.error };
    // 4. The position routed to, then the bookkeeping.
    const last = run[run.length - 1]!.lastSequence;
    const routed: LedgerEntry = {
      table: ROUTED_CHAIN,
      shardId,
      firstSequence: last,
      lastSequence: last,
      previousLastSequence: routedTo,
      files: [],
      records: records.length,
      createdAtMs: deps.route.clock.nowMs(),
      status: 'staged',
    };
    const [appended] = await appendEntries(ledger, [routed]);
    if (appended && !appended.ok) throw appended.error;
    await settleRouted(deps.route, shardId, last, run);
    return { ...base, status: 'routed' };
  } catch (error) {
    return { ...none, status: 'failed', error };
  } finally {
    await releaseLease(deps.lock, lease);
  }
}

/** The longest prefix of `run` within `MAX_ROUTED_RECORDS` (at least one entry). */
function withinBound(run: LedgerEntry[]): LedgerEntry[] {
  let records = 0;
  for (let i = 0; i < run.length; i++) {
    records += run[i]!.records;
    if (records > MAX_ROUTED_RECORDS && i > 0) return run.slice(0, i);
  }
  return run;
}

/**
 * Everything up to `routedTo` is routed: the deferred objects of the run are deleted and both
 * chains' entries marked committed (they then expire). After a crash between the routed entry and
 * this, a later run finds nothing to route and only marks: the objects are left to the staging
 * lifecycle.
 */
async function settleRouted(
  deps: IngestDeps,
  shardId: string,
  routedTo: string | null,
  run: readonly LedgerEntry[] = [],
): Promise<void> {
  if (routedTo === null) return;
  await deleteQuietly(
    deps.store,
    run.flatMap((e) => e.files.map((f) => f.uri)),
  );
  // A shard is visited while either chain has staged entries: a crash or a lagging index here
  // leaves it visited again, and marked then.
  await deps.ledger.markCommitted(ROUTED_CHAIN, shardId, routedTo);
  await deps.ledger.markCommitted(DEFERRED_CHAIN, shardId, routedTo);
}
