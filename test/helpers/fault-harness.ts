/**
 * Fault-injection harness for the streaming pipeline (shared by the exactly-once suites): the real
 * ingest and committer apps on dynalite and a local-disk warehouse, their ports decorated to fail
 * at chosen points (faults.ts), and a model of Lambda's event source mapping that redelivers,
 * bisects and resumes batches as AWS does.
 */
import { expect } from 'vitest';
import type { CommitterDeps } from '../../lambdas/src/app/committer.ts';
import { type IngestDeps, type IngestResult, ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import type { Clock } from '../../lambdas/src/ports/clock.ts';
import { compareSequence } from '../../lambdas/src/ports/ledger.ts';
import type { KinesisBatchRecord } from '../../lambdas/src/records/kinesis-event.ts';
import type { LocalDynamo } from './dynalite.ts';
import type { Json } from './e2e.ts';
import { type FaultRule, Faults, type ManualClock, type Port, type Rng } from './faults.ts';
import { batchOf, type Pipeline, startPipeline } from './pipeline.ts';

export const LEASE_MS = 60_000;

/** One shard's records in stream order, with the events they carry (same index). */
export interface Shard {
  readonly id: string;
  readonly recs: KinesisBatchRecord[];
  readonly events: Json[];
}

export function indexOf(s: Shard, sequence: string): number {
  const i = s.recs.findIndex((r) => compareSequence(r.sequenceNumber, sequence) === 0);
  if (i < 0) throw new Error(`sequence ${sequence} is not in ${s.id}`);
  return i;
}

// ---------------------------------------------------------------------------------------------
// Harness: the pipeline with fault-injecting ports

export interface Harness {
  readonly p: Pipeline;
  /** The ingest's fault plan (and the committers' unless given their own). */
  readonly f: Faults;
  ingest(over?: Partial<IngestDeps>, plan?: Faults): IngestDeps;
  committer(owner?: string, plan?: Faults, over?: Partial<CommitterDeps>): CommitterDeps;
}

export async function harness(
  dynamo: LocalDynamo,
  dir: string,
  seed: number,
  clock?: Clock,
  config?: unknown,
): Promise<Harness> {
  const p = await startPipeline(dynamo, dir, {
    seed,
    ...(clock ? { clock } : {}),
    ...(config === undefined ? {} : { config }),
  });
  const f = new Faults(seed);
  return {
    p,
    f,
    ingest: (over = {}, plan = f) =>
      p.ingestDeps({
        ledger: plan.ledger(p.ledger),
        store: plan.store(p.wh.store),
        catalog: plan.catalog(p.wh.catalog),
        ...over,
      }),
    committer: (owner = 'committer-a', plan = f, over = {}) =>
      p.committerDeps({
        ledger: plan.ledger(p.ledger),
        store: plan.store(p.wh.store),
        catalog: plan.catalog(p.wh.catalog),
        lock: plan.lock(p.lock),
        owner,
        leaseMs: LEASE_MS,
        ...over,
      }),
  };
}

/**
 * One Lambda invocation on records [lo, hi): the result, or undefined when the invocation failed
 * (threw, or its process crashed: then the next invocation is a fresh process).
 */
export async function invoke(
  h: Harness,
  s: Shard,
  lo: number,
  hi: number,
  over: Partial<IngestDeps> = {},
  plan: Faults = h.f,
): Promise<IngestResult | undefined> {
  let r: IngestResult | undefined;
  try {
    r = await ingestBatch(h.ingest(over, plan), batchOf(s.id, s.recs.slice(lo, hi)));
  } catch {
    r = undefined;
  }
  if (plan.crashed) {
    plan.revive();
    return undefined;
  }
  return r;
}

/**
 * Lambda's event source mapping for one shard (ParallelizationFactor 1, ReportBatchItemFailures):
 * delivers records [lo, hi) until all are processed. A failed invocation is retried whole, or as two
 * halves when `bisect` says so (BisectBatchOnFunctionError); a reported `failedSequence` resumes from
 * that record. After `maxInvocations / 2` attempts the plan's faults are paused so delivery ends.
 */
export async function deliver(
  h: Harness,
  s: Shard,
  lo: number,
  hi: number,
  opts: { bisect?: () => boolean; maxInvocations?: number; plan?: Faults } = {},
): Promise<IngestResult[]> {
  const plan = opts.plan ?? h.f;
  const max = opts.maxInvocations ?? 40;
  const results: IngestResult[] = [];
  let invocations = 0;
  const run = async (from: number, to: number): Promise<void> => {
    while (from < to) {
      invocations++;
      if (invocations > max) throw new Error(`delivery of ${s.id} [${from}, ${to}) did not converge`);
      if (invocations === Math.floor(max / 2)) plan.disable();
      const r = await invoke(h, s, from, to, {}, plan);
      if (r === undefined) {
        if (opts.bisect?.() && to - from > 1) {
          const mid = from + Math.floor((to - from) / 2);
          await run(from, mid);
          await run(mid, to);
          return;
        }
        continue;
      }
      results.push(r);
      if (r.failedSequence === undefined) return;
      const at = indexOf(s, r.failedSequence);
      expect(at).toBeGreaterThanOrEqual(from);
      expect(at).toBeLessThan(to);
      from = at;
    }
  };
  try {
    await run(lo, hi);
  } finally {
    plan.enable();
  }
  return results;
}

/**
 * A schedule of deliveries and committer runs, as the streaming soak tests drive them: each round
 * some shards get their next 5–25 records (sometimes after an earlier, overlapping range again, a
 * replay of updates and deletes), each delivery retried or bisected after failures, while one or
 * two committers run beside them; until every shard is delivered.
 */
export async function deliverInterleaved(
  h: Harness,
  shards: readonly Shard[],
  rng: Rng,
  ingestPlans: ReadonlyMap<string, Faults>,
  committerPlans: readonly Faults[],
  runCommitters: (plan: Faults, i: number) => Promise<unknown>,
): Promise<void> {
  const next = new Map(shards.map((sh) => [sh.id, 0]));
  const step = async (sh: Shard) => {
    const plan = ingestPlans.get(sh.id)!;
    const lo = next.get(sh.id)!;
    const hi = Math.min(sh.recs.length, lo + rng.int(5, 25));
    if (lo > 0 && rng.chance(0.2)) {
      await deliver(h, sh, rng.int(Math.max(0, lo - 20), lo - 1), rng.int(lo, hi), {
        plan,
        bisect: () => rng.chance(0.5),
      });
    }
    await deliver(h, sh, lo, hi, { plan, bisect: () => rng.chance(0.5) });
    next.set(sh.id, hi);
  };
  const committers = async (n: number) => {
    const plans = committerPlans.slice(0, n);
    await Promise.all(plans.map((plan, i) => runCommitters(plan, i).catch(() => undefined)));
    for (const plan of plans) plan.revive();
  };
  for (;;) {
    const open = shards.filter((sh) => next.get(sh.id)! < sh.recs.length);
    if (open.length === 0) break;
    const tasks = open.filter(() => rng.chance(0.6)).map(step);
    if (tasks.length === 0 || rng.chance(0.5)) tasks.push(committers(rng.chance(0.5) ? 2 : 1));
    await Promise.all(tasks);
  }
}

export type Point = readonly [Port, string, readonly ('before' | 'after')[], number];

/** The ingest's fault points: [port, method, timings, probability per call and timing]. */
export const INGEST_POINTS: readonly Point[] = [
  ['ledger', 'shardTails', ['before'], 0.02],
  ['ledger', 'appendEntry', ['before', 'after'], 0.04],
  ['store', 'put', ['before', 'after'], 0.01],
];

/** The ingest's fault points when a batch's entries are appended in one call (`appendEntries`). */
export const BATCHED_INGEST_POINTS: readonly Point[] = INGEST_POINTS.map((p) =>
  p[1] === 'appendEntry' ? (['ledger', 'appendEntries', p[2], p[3] * 2] as Point) : p,
);

/** The committer's fault points (the catalog swap weighs most). */
export const COMMITTER_POINTS: readonly Point[] = [
  ['ledger', 'tablesWithStagedWork', ['before'], 0.02],
  ['ledger', 'shardsWithStagedWork', ['before'], 0.01],
  ['ledger', 'entriesAfter', ['before'], 0.01],
  ['ledger', 'markCommitted', ['before', 'after'], 0.04],
  ['store', 'put', ['before', 'after'], 0.01],
  ['store', 'get', ['before'], 0.01],
  ['catalog', 'tableExists', ['before'], 0.01],
  ['catalog', 'loadTable', ['before'], 0.01],
  ['catalog', 'createTable', ['before', 'after'], 0.1],
  ['catalog', 'commitTable', ['before', 'after'], 0.06],
  ['lock', 'acquire', ['before', 'after'], 0.01],
  ['lock', 'renew', ['before'], 0.02],
  ['lock', 'release', ['before'], 0.03],
];

/** Random faults at `points` (each an error or a crash, half and half), per call. */
export function armRandom(f: Faults, points: readonly Point[]): void {
  for (const [port, method, timings, p] of points) {
    for (const timing of timings) {
      for (const kind of ['error', 'crash'] as const) {
        f.add({ port, method, timing, kind, chance: p / 2, times: Number.POSITIVE_INFINITY } as FaultRule);
      }
    }
  }
}

/** Catalog conflicts, and leases that run out in the middle of a commit. */
export function armCommitRaces(f: Faults, clock: ManualClock): void {
  f.add({
    port: 'catalog',
    method: 'commitTable',
    chance: 0.08,
    times: Number.POSITIVE_INFINITY,
    error: () => new FloeError(ErrorKind.CommitConflict, 'injected conflict', { retryable: true }),
  });
  f.add({
    port: 'catalog',
    method: 'commitTable',
    kind: 'hook',
    chance: 0.05,
    times: Number.POSITIVE_INFINITY,
    action: () => clock.advance(LEASE_MS + 1),
  });
}
