/**
 * Deferred routing (issue 18, the ingest at width): batches the ingest stages as they arrived, one
 * object and one ledger entry each, routed by the committer before it commits
 * (app/ingest/defer-batch.ts, app/route-deferred.ts). The real ingest and committer on dynalite and
 * a local warehouse, under random ingest and committer faults (errors and crashes before and after
 * every port call, catalog conflicts, leases running out mid-commit, two committers at once),
 * deliveries retried, bisected and replayed as Lambda's event source mapping does.
 *
 * `aboveTables: 2` defers the batches whose records reach all three tables and routes the others
 * in the ingest (every other stretch of events is grouped by table, so both kinds come), and
 * switching between them is exercised; `true` defers every batch. Afterwards every table holds exactly the events sent (read
 * by the independent reader), nothing is staged, each table's watermark stands at the end of its
 * chain, every deferred batch is routed and its object deleted, and the validator passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommitter } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { DEFERRED_CHAIN, isDeferralChain, ROUTED_CHAIN } from '../../lambdas/src/engine/deferred-batch.ts';
import { readWatermark } from '../../lambdas/src/engine/watermark.ts';
import { appendEntries, type Ledger } from '../../lambdas/src/ports/ledger.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { generate, idsByTable, type Json, NOW_MS, tableOf, tempDir } from '../helpers/e2e.ts';
import {
  armCommitRaces,
  armRandom,
  BATCHED_INGEST_POINTS,
  COMMITTER_POINTS,
  deliver,
  deliverInterleaved,
  type Harness,
  harness,
  LEASE_MS,
  type Point,
  type Shard,
} from '../helpers/fault-harness.ts';
import { Faults, ManualClock, Rng } from '../helpers/faults.ts';
import { eventIdsAt } from '../helpers/iceberg-rows.ts';
import { batchOf, records } from '../helpers/pipeline.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

let dynamo: LocalDynamo;
const dirs: (() => void)[] = [];
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  for (const d of dirs) d();
});

const NS = 'default';
const ROUTING_POINTS: readonly Point[] = [
  ['ledger', 'shardTails', ['before'], 0.02],
  ['ledger', 'appendEntries', ['before', 'after'], 0.1],
  ['store', 'get', ['before'], 0.02],
];
const SHARDS = ['shardId-000000000000', 'shardId-000000000001'];

/** Event ids per table, read by the independent reader from each table's current snapshot. */
const committed = (h: Harness) => eventIdsAt(h.p.wh, NS);

async function soak(seed: number, deferRouting: true | { aboveTables: number }): Promise<void> {
  const t = tempDir('floe-deferred-');
  dirs.push(t.cleanup);
  const clock = new ManualClock(NOW_MS);
  const h = await harness(dynamo, t.dir, seed, clock, { source: { deferRouting } });
  const rng = new Rng(seed * 7919);
  // Every other stretch of 40 events grouped by table, so deliveries of one or two tables (routed
  // in the ingest when mixed) alternate with deliveries of all three (deferred).
  const gens = SHARDS.map((_, i) => {
    const g = generate(160, 'v1', seed * 10 + i);
    const order = g.events.map((_, j) => j);
    for (let from = 40; from < order.length; from += 80) {
      const stretch = order.slice(from, from + 40);
      stretch.sort((a, b) => (tableOf(g.events[a]!) < tableOf(g.events[b]!) ? -1 : 1) || a - b);
      order.splice(from, stretch.length, ...stretch);
    }
    return { lines: order.map((j) => g.lines[j]!), events: order.map((j) => g.events[j]!) };
  });
  // Then, on the first shard, a last stretch of one table's events, delivered (under faults) once
  // the backlog is routed: when mixed, routed in the ingest for sure, after deferred batches.
  const last = generate(60, 'v1', seed * 10 + 9);
  const lastClicks = last.lines.filter((_, j) => tableOf(last.events[j]!) === 'click_events').slice(0, 12);
  gens[0]!.lines.push(...lastClicks);
  gens[0]!.events.push(...lastClicks.map((l) => JSON.parse(l) as Json));
  const shards: Shard[] = SHARDS.map((id, i) => ({
    id,
    recs: records(gens[i]!.lines, i * 100_000),
    events: gens[i]!.events,
  }));
  const held = lastClicks.length;
  const interleaved = shards.map((sh, i) =>
    i === 0 ? { ...sh, recs: sh.recs.slice(0, -held), events: sh.events.slice(0, -held) } : sh,
  );
  const ingestPlans = new Map(shards.map((sh, i) => [sh.id, new Faults(seed * 10 + i)]));
  const committerPlans = [new Faults(seed + 2), new Faults(seed + 3)];
  for (const f of ingestPlans.values()) armRandom(f, BATCHED_INGEST_POINTS);
  for (const f of committerPlans) {
    // The committer's points, and those routing adds: the tails read, the tables' entries and the
    // routed position appended (crashes before and after each).
    armRandom(f, [...COMMITTER_POINTS, ...ROUTING_POINTS]);
    armCommitRaces(f, clock);
  }
  // How the batches went: deferred, or routed in the ingest (both must happen when mixed).
  let deferredBatches = 0;
  let tableEntriesFromIngest = 0;
  const made = h.ingest.bind(h);
  h.ingest = (over, plan) => {
    const deps = made(over, plan);
    const inner = deps.ledger;
    const ledger: Ledger = Object.create(inner);
    ledger.appendEntries = async (entries) => {
      tableEntriesFromIngest += entries.filter((e) => !isDeferralChain(e.table)).length;
      return appendEntries(inner, entries);
    };
    return { ...deps, ledger };
  };
  await deliverInterleaved(h, interleaved, rng, ingestPlans, committerPlans, async (plan, i) => {
    // Committer runs come a schedule tick apart: the leases of crashed runs run out in time, and a
    // shard's deferred backlog gets routed (then its narrow batches go to their tables directly).
    if (i === 0) clock.advance(LEASE_MS / 2);
    const run = await runCommitter(h.committer(`c-${i}`, plan));
    for (const r of run.routed ?? []) if (r.status === 'routed') deferredBatches += r.batches;
  });
  // The held stretch, after a committer run that routes the backlog (leases of crashes run out).
  clock.advance(10 * LEASE_MS);
  const routing = await runCommitter(h.p.committerDeps({ owner: 'tick', leaseMs: LEASE_MS }));
  for (const r of routing.routed ?? []) if (r.status === 'routed') deferredBatches += r.batches;
  const first = shards[0]!;
  await deliver(h, first, first.recs.length - held, first.recs.length, {
    plan: ingestPlans.get(first.id)!,
    bisect: () => rng.chance(0.5),
  });
  const fired = [...ingestPlans.values(), ...committerPlans].reduce((n, f) => n + f.log.length, 0);
  expect(fired).toBeGreaterThan(5);
  // Routing's own appends faulted (the committer appends only when it routes): counted over the
  // soaks, since how many a soak makes depends on how its committers interleave.
  routingFaults += committerPlans.reduce((n, f) => n + f.firedAt('ledger.appendEntries'), 0);

  // Settle: leases of crashed committers run out; clean committer runs until nothing is staged.
  clock.advance(10 * LEASE_MS);
  h.f.clear();
  for (let round = 0; round < 4 && (await h.p.ledger.tablesWithStagedWork()).length > 0; round++) {
    const run = await runCommitter(h.p.committerDeps({ owner: 'final', leaseMs: LEASE_MS }));
    expect(run.tables.filter((x) => x.status === 'failed' || x.status === 'locked')).toEqual([]);
    expect((run.routed ?? []).filter((x) => x.status === 'failed' || x.status === 'locked')).toEqual([]);
    for (const r of run.routed ?? []) if (r.status === 'routed') deferredBatches += r.batches;
  }
  expect(await h.p.ledger.tablesWithStagedWork()).toEqual([]);
  expect(deferredBatches).toBeGreaterThan(0);
  if (deferRouting === true) expect(tableEntriesFromIngest).toBe(0);
  else expect(tableEntriesFromIngest).toBeGreaterThan(0);

  const want = idsByTable(shards.flatMap((s) => s.events));
  expect(await committed(h)).toEqual(want);
  for (const shard of SHARDS) {
    const tails = await h.p.ledger.shardTails(shard);
    // Every deferred batch routed, up to the chain's end.
    expect(tails.get(ROUTED_CHAIN)).toBe(tails.get(DEFERRED_CHAIN));
    for (const name of want.keys()) {
      const m = (await h.p.wh.catalog.loadTable({ namespace: NS, name })).metadata;
      const wm = await readWatermark(h.p.wh.store, m);
      expect(wm.get(shard), `${name} ${shard}`).toBe(tails.get(name));
    }
  }
  await expectWarehouseValid(h.p.wh);
}

let routingFaults = 0;

describe('deferred routing: exactly once under faults, batches deferred or routed in the ingest', () => {
  for (const seed of [6101, 6102]) {
    it(`seed ${seed}, every batch deferred`, async () => {
      await soak(seed, true);
    });
  }
  for (const seed of [6103, 6104]) {
    it(`seed ${seed}, batches over two tables deferred`, async () => {
      await soak(seed, { aboveTables: 2 });
    });
  }
  it("the soaks faulted routing's own ledger appends, before and after they applied", () => {
    expect(routingFaults).toBeGreaterThan(0);
  });
});

describe('a deferred batch', () => {
  it('costs the ingest one object and one ledger entry, however many tables; the committer routes it', async () => {
    const t = tempDir('floe-deferred-one-');
    dirs.push(t.cleanup);
    const h = await harness(dynamo, t.dir, 1, undefined, { source: { deferRouting: { aboveTables: 2 } } });
    const g = generate(60, 'v1', 77);
    const recs = records(g.lines, 0);
    const puts: string[] = [];
    const store = h.p.wh.store;
    const counted = Object.create(store) as typeof store;
    counted.put = async (uri: string, bytes: Uint8Array) => {
      puts.push(uri);
      return store.put(uri, bytes);
    };
    const r = await ingestBatch(h.p.ingestDeps({ store: counted }), batchOf(SHARDS[0]!, recs));
    expect(r.failures).toEqual([]);
    expect(r.deferred).toBe(60);
    expect(r.tables).toEqual([]);
    expect(puts).toHaveLength(1);
    expect(puts[0]).toMatch(/\/deferred\/shardId-000000000000\/\d+-\d+\.fldb$/);
    expect(await h.p.ledger.tablesWithStagedWork()).toEqual([DEFERRED_CHAIN]);
    // A retry of the same batch adds nothing.
    const again = await ingestBatch(h.p.ingestDeps(), batchOf(SHARDS[0]!, recs));
    expect(again.skipped).toBe(60);
    const run = await runCommitter(h.p.committerDeps());
    expect(run.routed?.map((x) => [x.status, x.batches, x.records])).toEqual([['routed', 1, 60]]);
    expect(run.tables.map((x) => x.status)).toEqual(['committed', 'committed', 'committed']);
    expect(await committed(h)).toEqual(idsByTable(g.events));
    expect(await store.exists(puts[0]!)).toBe(false);
    // A narrow batch after it is routed in the ingest again, its entries after the routed ones.
    const narrow = g.lines.filter((_, i) => tableOf(g.events[i]!) === 'click_events').slice(0, 5);
    const more = records(narrow, 1000);
    const r2 = await ingestBatch(h.p.ingestDeps(), batchOf(SHARDS[0]!, more));
    expect(r2.deferred).toBeUndefined();
    expect(r2.tables.map((x) => x.table)).toEqual(['click_events']);
    await runCommitter(h.p.committerDeps());
    const all = idsByTable([...g.events, ...narrow.map((l) => JSON.parse(l) as Json)]);
    expect(await committed(h)).toEqual(all);
  });

  it("routing's failure is its own: the run still commits the tables staged in the ingest", async () => {
    const t = tempDir('floe-deferred-fail-');
    dirs.push(t.cleanup);
    const h = await harness(dynamo, t.dir, 2, undefined, { source: { deferRouting: { aboveTables: 2 } } });
    const g = generate(60, 'v1', 78);
    const wide = await ingestBatch(h.p.ingestDeps(), batchOf(SHARDS[0]!, records(g.lines, 0)));
    expect(wide.deferred).toBe(60);
    const clicks = g.lines.filter((_, i) => tableOf(g.events[i]!) === 'click_events').slice(0, 4);
    const narrow = await ingestBatch(h.p.ingestDeps(), batchOf(SHARDS[1]!, records(clicks, 100_000)));
    expect(narrow.tables.map((x) => x.table)).toEqual(['click_events']);
    const inner = h.p.ledger;
    const ledger: Ledger = Object.create(inner);
    ledger.shardsWithStagedWork = async (table) => {
      if (table === DEFERRED_CHAIN) throw new Error('injected: the staged-work index is unreachable');
      return inner.shardsWithStagedWork(table);
    };
    const run = await runCommitter(h.p.committerDeps({ ledger }));
    expect(run.routed?.map((r) => [r.status, String(r.error)])).toEqual([
      ['failed', 'Error: injected: the staged-work index is unreachable'],
    ]);
    expect(run.tables.map((x) => [x.table, x.status])).toEqual([['click_events', 'committed']]);
    // The next run routes the deferred batch.
    await runCommitter(h.p.committerDeps());
    const clickIds = clicks.map((l) => JSON.parse(l) as Json);
    expect(await committed(h)).toEqual(idsByTable([...g.events, ...clickIds]));
  });
});
