/**
 * Write-audit-publish for the stream (issue 21): config `branches` sends every table to branch
 * `audit`. The real ingest and committer on dynalite and a local warehouse, under random ingest and
 * committer faults (crashes and errors before and after every port call, catalog conflicts, leases
 * running out mid-commit, two committers at once), deliveries retried and bisected as Lambda's
 * event source mapping does; between runs, `floe branch publish` moves main to the branch and
 * maintenance compacts the branch.
 *
 * Afterwards, read by the independent reader (the snapshot each ref names, its manifests walked, its
 * Parquet files decoded by our test reader): the branch holds exactly the events sent; main only
 * ever stood where a publish put it; the branch's watermark stands at the end of every shard's
 * ledger chain and a publish gives main the same; after the last publish main holds exactly the
 * events too; and with the branch configured away, the committer goes on committing to main from
 * where the branch left off. The independent validator passes for every snapshot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommitter } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { maintainTable } from '../../lambdas/src/app/maintain/index.ts';
import { liveRowsReader } from '../../lambdas/src/app/maintain/live-rows.ts';
import { publishBranch } from '../../lambdas/src/app/publish-branch.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import {
  decodeWatermark,
  positionsOf,
  readWatermark,
  watermarkKey,
} from '../../lambdas/src/engine/watermark.ts';
import { snapshotAncestors, type TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { generate, idsByTable, NOW_MS, tempDir } from '../helpers/e2e.ts';
import {
  armCommitRaces,
  armRandom,
  COMMITTER_POINTS,
  deliverInterleaved,
  type Harness,
  harness,
  INGEST_POINTS,
  LEASE_MS,
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
const BRANCH = 'audit';
const SHARDS = ['shardId-000000000000', 'shardId-000000000001'];

async function metadataOf(h: Harness, name: string): Promise<TableMetadata> {
  return (await h.p.wh.catalog.loadTable({ namespace: NS, name })).metadata;
}

/** Event ids per table in the snapshot `ref` names (absent: the table's refs lack it). */
const idsAt = (h: Harness, ref: string) => eventIdsAt(h.p.wh, NS, ref);

async function soak(seed: number): Promise<void> {
  const t = tempDir('floe-branch-committer-');
  dirs.push(t.cleanup);
  const clock = new ManualClock(NOW_MS);
  const h = await harness(dynamo, t.dir, seed, clock, { branches: { '*': BRANCH } });
  const rng = new Rng(seed * 7919);
  const gens = SHARDS.map((_, i) => generate(160, 'v1', seed * 10 + i));
  const shards: Shard[] = SHARDS.map((id, i) => ({
    id,
    recs: records(gens[i]!.lines, i * 100_000),
    events: gens[i]!.events,
  }));
  const ingestPlans = new Map(shards.map((sh, i) => [sh.id, new Faults(seed * 10 + i)]));
  const committerPlans = [new Faults(seed + 2), new Faults(seed + 3)];
  for (const f of ingestPlans.values()) armRandom(f, INGEST_POINTS);
  for (const f of committerPlans) {
    armRandom(f, COMMITTER_POINTS);
    armCommitRaces(f, clock);
  }

  // Where each publish put main, per table: main must never stand anywhere else.
  const publishedTo = new Map<string, Set<bigint>>();
  const publishAll = async () => {
    for (const name of await h.p.wh.catalog.listTables(NS)) {
      const m = await metadataOf(h, name);
      if (m.refs[BRANCH] === undefined) continue;
      const r = await publishBranch(h.p.committerDeps(), { namespace: NS, name }, BRANCH);
      publishedTo.set(name, (publishedTo.get(name) ?? new Set()).add(r.to));
      const after = await metadataOf(h, name);
      // A publish gives main the branch's watermark (what main now holds), in main's own property:
      // main committed before the branch began, so its property would otherwise stay behind.
      const branchWm = await readWatermark(h.p.wh.store, after, BRANCH);
      expect(await readWatermark(h.p.wh.store, after)).toEqual(branchWm);
      const own = after.properties[watermarkKey()];
      expect(own).toBeDefined();
      expect(positionsOf(decodeWatermark(own!, 'main'))).toEqual(branchWm);
    }
  };
  let compactions = 0;
  const compactBranch = async () => {
    for (const name of await h.p.wh.catalog.listTables(NS)) {
      const before = await metadataOf(h, name);
      const report = await maintainTable(
        { ...h.p.committerDeps(), liveRows: liveRowsReader(h.p.wh.store) },
        { namespace: NS, name },
        {
          steps: { compact: true, rewriteManifests: false, expire: false, orphans: false },
          targetFileSizeBytes: 64 * 1024 * 1024,
          branchOf: () => BRANCH,
        },
      );
      expect(report.failed).toEqual([]);
      const after = await metadataOf(h, name);
      // Compaction works on the branch: main stays where it was.
      expect(after['current-snapshot-id']).toBe(before['current-snapshot-id']);
      if ((report.compaction?.filesRewritten ?? 0) > 0) compactions++;
    }
  };

  // Before the branch: the first records of each shard committed to main, as a table that streamed
  // to main before write-audit-publish was configured (delivered again below, as a replay).
  const toMain = parseConfig({});
  const early = 20;
  for (const sh of shards) {
    const r = await ingestBatch(h.p.ingestDeps({ config: toMain }), batchOf(sh.id, sh.recs.slice(0, early)));
    expect(r.failures).toEqual([]);
  }
  await runCommitter(h.p.committerDeps({ config: toMain, owner: 'before', leaseMs: LEASE_MS }));
  expect(await idsAt(h, 'main')).toEqual(idsByTable(shards.flatMap((sh) => sh.events.slice(0, early))));
  for (const name of await h.p.wh.catalog.listTables(NS)) {
    const log = (await metadataOf(h, name))['snapshot-log'] ?? [];
    publishedTo.set(name, new Set(log.map((e) => e['snapshot-id'])));
  }

  await deliverInterleaved(h, shards, rng, ingestPlans, committerPlans, async (plan, i) => {
    await runCommitter(h.committer(`c-${i}`, plan));
    if (i === 0 && rng.chance(0.3)) await publishAll();
    if (i === 0 && rng.chance(0.2)) await compactBranch();
  });
  const fired = [...ingestPlans.values(), ...committerPlans].reduce((n, f) => n + f.log.length, 0);
  expect(fired).toBeGreaterThan(5);

  // Settle: leases of crashed committers run out; clean committer runs until nothing is staged.
  clock.advance(10 * LEASE_MS);
  h.f.clear();
  for (let round = 0; round < 3 && (await h.p.ledger.tablesWithStagedWork()).length > 0; round++) {
    const run = await runCommitter(h.p.committerDeps({ owner: 'final', leaseMs: LEASE_MS }));
    expect(run.tables.filter((x) => x.status === 'failed' || x.status === 'locked')).toEqual([]);
  }
  expect(await h.p.ledger.tablesWithStagedWork()).toEqual([]);
  await compactBranch();
  expect(compactions).toBeGreaterThan(0);

  const want = idsByTable(shards.flatMap((s) => s.events));
  expect(await idsAt(h, BRANCH)).toEqual(want);
  for (const name of want.keys()) {
    const m = await metadataOf(h, name);
    // The branch's own watermark stands at the end of every shard's ledger chain.
    expect(Object.keys(m.properties)).toContain(watermarkKey(BRANCH));
    const wm = await readWatermark(h.p.wh.store, m, BRANCH);
    for (const shard of SHARDS)
      expect(wm.get(shard), `${name} ${shard}`).toBe((await h.p.ledger.shardTails(shard)).get(name));
    // Main moved only at publishes, each to the branch's head then: never a commit of its own.
    const published = publishedTo.get(name) ?? new Set<bigint>();
    for (const entry of m['snapshot-log'] ?? []) expect(published.has(entry['snapshot-id'])).toBe(true);
    const mainHead = m['current-snapshot-id'];
    if (mainHead !== undefined) {
      const branchLine = snapshotAncestors(m, m.refs[BRANCH]!['snapshot-id']).map((s) => s['snapshot-id']);
      expect(branchLine).toContain(mainHead);
    }
  }

  await publishAll();
  expect(await idsAt(h, 'main')).toEqual(want);
  await expectWarehouseValid(h.p.wh);

  // The branch configured away: the same tables commit to main again, from where the branch left.
  const more = generate(60, 'v1', seed * 10 + 7);
  const moreRecs = records(more.lines, 500_000);
  const ingested = await ingestBatch(h.p.ingestDeps({ config: toMain }), batchOf(SHARDS[0]!, moreRecs));
  expect(ingested.failures).toEqual([]);
  const run = await runCommitter(h.p.committerDeps({ config: toMain, owner: 'after', leaseMs: LEASE_MS }));
  expect(run.tables.filter((x) => x.status === 'failed')).toEqual([]);
  const all = idsByTable([...shards.flatMap((s) => s.events), ...more.events]);
  expect(await idsAt(h, 'main')).toEqual(all);
  expect(await idsAt(h, BRANCH)).toEqual(new Map([...want].filter(([name]) => all.has(name))));
  await expectWarehouseValid(h.p.wh);
}

describe('streaming committer on a branch: exactly once per branch, main moves only at publish', () => {
  for (const seed of [5101, 5102, 5103]) {
    it(`seed ${seed}`, async () => {
      await soak(seed);
    });
  }
});
