/**
 * The committer's fan-out and seconds-fresh passes (issue 19), through the committer handler on
 * real local parts (the DynamoDB ledger and lock on dynalite, a local-disk warehouse). The fan-out
 * port is an in-process "Lambda": `dispatch` starts the same handler with the slice event and does
 * not wait for it, as an asynchronous invocation. Faults: a dispatch whose invocation started but
 * whose answer is lost, a dispatch refused outright, a slice delivered twice. Every table must hold
 * exactly the rows sent.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { sliceOfTable } from '../../lambdas/src/app/commit-slices.ts';
import { runCommitter } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import {
  type CommitterSummary,
  makeCommitterHandler,
  passWindow,
  runLeaseMs,
} from '../../lambdas/src/handlers/committer.ts';
import { withRunLease } from '../../lambdas/src/handlers/run-lease.ts';
import type {
  CommitScheduleSettings,
  HandlerRuntime,
  LambdaContext,
} from '../../lambdas/src/handlers/runtime.ts';
import type { CommitFanout, SliceTask } from '../../lambdas/src/ports/commit-fanout.ts';
import type { Lease, Lock } from '../../lambdas/src/ports/lock.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { tempDir } from '../helpers/e2e.ts';
import { batchOf, committedIds, type Pipeline, records, startPipeline } from '../helpers/pipeline.ts';

const SCHEDULED = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };

let dynamo: LocalDynamo;
const cleanups: (() => void)[] = [];
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  for (const c of cleanups) c();
});
beforeEach(() => {
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
  return () => vi.unstubAllEnvs();
});

function dir(): string {
  const t = tempDir('floe-fanout-');
  cleanups.push(t.cleanup);
  return t.dir;
}

const quiet = () => ({
  logger: new Logger({ serviceName: 'floe-test', logLevel: 'SILENT' }),
  metrics: new Metrics({ namespace: 'Floe', serviceName: 'floe-test' }),
});

function context(requestId: string, remainingMs = 300_000): LambdaContext {
  return {
    awsRequestId: requestId,
    functionName: 'floe-committer',
    getRemainingTimeInMillis: () => remainingMs,
  };
}

/** `n` events over `tables` tables (`t<k>_events`), ids unique; returns the lines and expected ids. */
function events(tables: number, n: number, seed: number, prefix = 'e') {
  const lines: string[] = [];
  const expected = new Map<string, string[]>();
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const k = x % tables;
    const id = `${prefix}${i}`;
    lines.push(JSON.stringify({ event_type: `t${k}`, event_id: id, n: i }));
    const t = `t${k}_events`;
    expected.set(t, [...(expected.get(t) ?? []), id]);
  }
  for (const v of expected.values()) v.sort();
  return { lines, expected };
}

function merge(a: Map<string, string[]>, b: Map<string, string[]>): Map<string, string[]> {
  const out = new Map(a);
  for (const [t, ids] of b) out.set(t, [...(out.get(t) ?? []), ...ids].sort());
  return out;
}

async function ingest(p: Pipeline, lines: readonly string[], shard: string, start = 0): Promise<void> {
  const r = await ingestBatch(p.ingestDeps(), batchOf(shard, records(lines, start)));
  expect(r.failures).toEqual([]);
}

interface Lambda {
  readonly runtime: HandlerRuntime;
  readonly invoke: (event: unknown, id: string) => Promise<CommitterSummary>;
  /** Every slice invocation started, and its outcome. */
  readonly started: { task: SliceTask; result: Promise<CommitterSummary> }[];
}

/**
 * A committer "function": the handler, and a fan-out that invokes it asynchronously. `onDispatch`
 * decides per slice: `run` (accepted), `lost` (started, answer lost: throws), `refused` (throws,
 * nothing started), `twice` (started twice, a duplicate delivery).
 */
function lambda(
  p: Pipeline,
  schedule: CommitScheduleSettings,
  onDispatch: (task: SliceTask) => 'run' | 'lost' | 'refused' | 'twice' = () => 'run',
): Lambda {
  const started: Lambda['started'] = [];
  let n = 0;
  const fanout: CommitFanout = {
    dispatch: async (task) => {
      const what = onDispatch(task);
      const start = () => {
        const result = invoke({ floeCommitSlice: task }, `slice-${task.index}-${++n}`);
        started.push({ task, result });
      };
      if (what === 'refused') throw new Error('injected: invoke refused');
      start();
      if (what === 'twice') start();
      if (what === 'lost') throw new Error('injected: answer lost after the invocation was accepted');
    },
  };
  const runtime: HandlerRuntime = {
    ingestDeps: () => p.ingestDeps(),
    committerDeps: (owner) => p.committerDeps({ owner }),
    commitConcurrency: 3,
    commitSchedule: schedule,
    fanout,
  };
  const handler = makeCommitterHandler(() => runtime, quiet());
  const invoke = (event: unknown, id: string) => handler(event, context(id));
  return { runtime, invoke, started };
}

describe('committer fan-out', () => {
  it('slices the tables by backlog; each slice commits exactly its tables, once', async () => {
    const p = await startPipeline(dynamo, dir());
    const { lines, expected } = events(23, 400, 5);
    await ingest(p, lines.slice(0, 200), 'shardId-000000000000');
    await ingest(p, lines.slice(200), 'shardId-000000000001', 200);
    const fn = lambda(p, { tablesPerSlice: 6, maxSlices: 3 });
    const coordinator = await fn.invoke(SCHEDULED, 'tick-1');
    const slices = await Promise.all(fn.started.map((s) => s.result));

    expect(coordinator).toMatchObject({ slices: 3, dispatched: 2, passes: 1, failed: [] });
    expect(fn.started.map((s) => [s.task.index, s.task.count])).toEqual([
      [1, 3],
      [2, 3],
    ]);
    // Each invocation committed the tables of its slice and only those.
    const bySlice = [coordinator, ...slices];
    for (const [i, s] of bySlice.entries()) {
      expect(s.committed.length).toBeGreaterThan(0);
      for (const t of s.committed) expect(sliceOfTable(t, 3)).toBe(i);
    }
    expect(bySlice.flatMap((s) => s.committed).sort()).toEqual([...expected.keys()].sort());
    expect(await committedIds(p)).toEqual(expected);
  });

  it('a backlog under one slice is committed by the scheduled run alone (no dispatch)', async () => {
    const p = await startPipeline(dynamo, dir());
    const { lines, expected } = events(5, 120, 9);
    await ingest(p, lines, 'shardId-000000000000');
    const fn = lambda(p, { tablesPerSlice: 10, maxSlices: 8 });
    const s = await fn.invoke(SCHEDULED, 'tick-1');
    expect(fn.started).toEqual([]);
    expect(s).toMatchObject({ slices: 1, dispatched: 0, passes: 1 });
    expect([...s.committed].sort()).toEqual([...expected.keys()].sort());
    expect(await committedIds(p)).toEqual(expected);
  });

  it('lost answers, refused dispatches and duplicate deliveries: every row exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 6, max: 20 }),
        fc.integer({ min: 2, max: 5 }),
        fc.array(fc.constantFrom('run', 'lost', 'refused', 'twice'), { minLength: 4, maxLength: 4 }),
        fc.nat(1000),
        async (tables, maxSlices, fates, seed) => {
          const p = await startPipeline(dynamo, dir());
          const { lines, expected } = events(tables, 150, seed + 1);
          await ingest(p, lines, 'shardId-000000000000');
          const fn = lambda(p, { tablesPerSlice: 2, maxSlices }, (t) => fates[(t.index - 1) % fates.length]!);
          const coordinator = await fn.invoke(SCHEDULED, 'tick-1');
          const slices = await Promise.all(fn.started.map((s) => s.result));
          const failedDispatch = [...Array(coordinator.slices).keys()]
            .slice(1)
            .filter(
              (i) => fates[(i - 1) % fates.length] !== 'run' && fates[(i - 1) % fates.length] !== 'twice',
            );
          expect(coordinator.dispatched).toBe(coordinator.slices - 1 - failedDispatch.length);
          // A duplicate delivery finds the slice's lease held (or the work done): never a second write.
          for (const s of slices) expect(s.failed).toEqual([]);
          expect(coordinator.failed).toEqual([]);
          // A slice whose dispatch failed is the scheduled run's own: nothing waits for the next tick.
          const committed = new Set([coordinator, ...slices].flatMap((s) => s.committed));
          expect([...committed].sort()).toEqual([...expected.keys()].sort());
          expect(await committedIds(p)).toEqual(expected);
          // The next tick finds nothing left.
          const next = lambda(p, { tablesPerSlice: 2, maxSlices });
          const again = await next.invoke(SCHEDULED, 'tick-2');
          await Promise.all(next.started.map((s) => s.result));
          expect(again.committed).toEqual([]);
        },
      ),
      { numRuns: 6 },
    );
  });
});

describe('seconds-fresh passes', () => {
  it('a run commits again what is staged during its window, and ends before the next tick', async () => {
    const p = await startPipeline(dynamo, dir());
    const first = events(4, 60, 3, 'a');
    const second = events(4, 60, 4, 'b');
    await ingest(p, first.lines, 'shardId-000000000000');
    const fn = lambda(p, { scheduleMs: 6_000, intervalMs: 300, maxSlices: 1 });
    const t0 = Date.now();
    const run = fn.invoke(SCHEDULED, 'tick-1');
    // Once the first pass has committed the first batch, stage a second one.
    for (let i = 0; i < 200; i++) {
      const now = await committedIds(p);
      if ([...first.expected].every(([t, ids]) => now.get(t)?.length === ids.length)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await ingest(p, second.lines, 'shardId-000000000000', 1000);
    // The next tick, a period after the first: the first run has ended (2 s before it is due).
    const tick2 = new Promise((r) => setTimeout(r, Math.max(0, t0 + 6_000 - Date.now()))).then(() =>
      fn.invoke(SCHEDULED, 'tick-2'),
    );
    const s = await run;
    expect(s.passes).toBeGreaterThanOrEqual(2);
    expect(s.rows).toBe(120);
    expect(await committedIds(p)).toEqual(merge(first.expected, second.expected));
    const s2 = await tick2;
    expect(s2.skipped).toBeUndefined();
    expect(s2.committed).toEqual([]);
  }, 60_000);
});

describe('run lease', () => {
  it('a run that finds the lease held asks again for up to its wait, then runs or gives up', async () => {
    const p = await startPipeline(dynamo, dir());
    const held = await p.lock.acquire('run/committer', 'previous-run', 60_000);
    expect(held).toBeDefined();
    const wait = (waitMs: number) => ({
      waitMs,
      pollMs: 50,
      nowMs: () => Date.now(),
      sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
    });
    // Gives up while the other run keeps it.
    const gaveUp = await withRunLease(p.lock, 'committer', 'next-run', 10_000, async () => 'ran', wait(200));
    expect(gaveUp).toEqual({ ran: false });
    // Runs once the other releases it within the wait.
    setTimeout(() => void p.lock.release(held!), 300);
    const ran = await withRunLease(p.lock, 'committer', 'next-run', 10_000, async () => 'ran', wait(5_000));
    expect(ran).toEqual({ ran: true, value: 'ran' });
  });
});

describe('run lease of a seconds-fresh run', () => {
  it('a run that dies holding it does not keep the next tick out', async () => {
    const p = await startPipeline(dynamo, dir());
    const { lines, expected } = events(3, 30, 2);
    await ingest(p, lines, 'shardId-000000000000');
    const schedule = { scheduleMs: 4_000, intervalMs: 1_000, maxSlices: 1 };
    // A previous run took the lease as a seconds-fresh run does, then died.
    const t0 = Date.now();
    const { untilMs, intervalMs } = passWindow(schedule, t0);
    const held = await p.lock.acquire(
      'run/committer',
      'dead-run',
      runLeaseMs(300_000, untilMs - t0, intervalMs)!,
    );
    expect(held).toBeDefined();
    expect(held!.expiresAtMs).toBeLessThan(t0 + schedule.scheduleMs + schedule.intervalMs);
    // The next tick, a period later: it waits up to an interval for the lease, then runs.
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + schedule.scheduleMs - Date.now())));
    const fn = lambda(p, schedule);
    const s = await fn.invoke(SCHEDULED, 'tick-2');
    expect(s.skipped).toBeUndefined();
    expect([...s.committed].sort()).toEqual([...expected.keys()].sort());
    expect(await committedIds(p)).toEqual(expected);
    // One pass only: the interval is the loop's, not a single run's lease.
    expect(runLeaseMs(300_000, 0, 0)).toBe(300_000);
    expect(runLeaseMs(undefined, 58_000, 5_000)).toBe(63_000);
  }, 30_000);
});

/** The real lock, with the answer of the first `lose` acquires of names starting `prefix` lost after they were applied. */
function losingLock(inner: Lock, prefix: string, lose: number): Lock & { lost: number } {
  const l = {
    lost: 0,
    acquire: async (name: string, owner: string, ms: number) => {
      const lease = await inner.acquire(name, owner, ms);
      if (name.startsWith(prefix) && l.lost < lose) {
        l.lost++;
        throw new Error('socket hang up (injected: applied, answer lost)');
      }
      return lease;
    },
    renew: (lease: Lease, ms?: number) => inner.renew(lease, ms),
    release: (lease: Lease) => inner.release(lease),
    releaseOwner: (name: string, owner: string) => inner.releaseOwner!(name, owner),
  };
  return l;
}

describe('a lease acquire applied with its answer lost', () => {
  it('run lease: asked again as the same owner, the run goes on; lost every time, it is given up', async () => {
    const p = await startPipeline(dynamo, dir());
    const once = losingLock(p.lock, 'run/', 1);
    expect(await withRunLease(once, 'committer', 'run-1', 60_000, async () => 'ran')).toEqual({
      ran: true,
      value: 'ran',
    });
    expect(once.lost).toBe(1);
    // Released at the end: the next run is in at once.
    const next = await p.lock.acquire('run/committer', 'run-2', 60_000);
    expect(next).toBeDefined();
    await p.lock.release(next!);
    // Every attempt's answer lost: the run fails, and what it may hold is given up.
    const always = losingLock(p.lock, 'run/', 99);
    await expect(withRunLease(always, 'committer', 'run-3', 60_000, async () => 'ran')).rejects.toThrow(
      /socket hang up/,
    );
    expect(always.lost).toBe(3);
    expect(await p.lock.acquire('run/committer', 'run-4', 60_000)).toBeDefined();
  });

  it('table lease: that table fails this run, and the next run commits it at once (no wait for expiry)', async () => {
    const p = await startPipeline(dynamo, dir());
    const { lines, expected } = events(4, 80, 8);
    await ingest(p, lines, 'shardId-000000000000');
    const lossy = losingLock(p.lock, 'commit/default.t0_events', 1);
    const first = await runCommitter(p.committerDeps({ owner: 'run-1', lock: lossy }));
    expect(first.tables.find((t) => t.table === 't0_events')?.status).toBe('failed');
    expect(first.tables.filter((t) => t.status === 'committed')).toHaveLength(expected.size - 1);
    // The next run, another owner, right away: the lease the lost acquire took was given up.
    const second = await runCommitter(p.committerDeps({ owner: 'run-2' }));
    expect(second.tables.map((t) => [t.table, t.status])).toEqual([['t0_events', 'committed']]);
    expect(await committedIds(p)).toEqual(expected);
  });
});
