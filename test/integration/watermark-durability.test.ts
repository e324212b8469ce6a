/**
 * The commit watermark survives what happens to tables that live for months (README "Design
 * notes": the watermark lives inline in the table property): snapshot expiry, S3 Tables'
 * unreferenced-file removal and orphan cleanup, snapshots of other engines that do not copy Floe's
 * summary keys, idle shards leaving the watermark, and tables an older Floe version wrote with a
 * side file. The real ingest and committer run on dynalite and a local warehouse; each scenario
 * crashes a committer right after its catalog swap (before the ledger is marked), so the next run
 * has only the watermark to tell it those entries are in the table, and ends with the
 * exactly-once checks: event ids per table equal what was sent, no data file twice, every
 * referenced file present, every ledger entry committed, the watermark at each chain's end, and
 * every table valid by the independent Iceberg validator (every snapshot walked).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitTable, runCommitter, type TableCommitResult } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { type MaintenanceDeps, maintainTable } from '../../lambdas/src/app/maintain/index.ts';
import { liveRowsReader } from '../../lambdas/src/app/maintain/live-rows.ts';
import { ALL_STEPS } from '../../lambdas/src/app/maintain/options.ts';
import {
  decodeWatermark,
  encodeWatermark,
  isInlineWatermark,
  positionsOf,
  readWatermark,
  type ShardMark,
  WATERMARK_KEY,
} from '../../lambdas/src/engine/watermark.ts';
import { ErrorKind, isFloeError } from '../../lambdas/src/errors.ts';
import { applyUpdates, type TableUpdate } from '../../lambdas/src/iceberg/metadata/index.ts';
import type { Snapshot } from '../../lambdas/src/iceberg/snapshot.ts';
import type { TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import type { Catalog, LoadedTable } from '../../lambdas/src/ports/catalog.ts';
import type { Clock } from '../../lambdas/src/ports/clock.ts';
import type { KinesisBatchRecord } from '../../lambdas/src/records/kinesis-event.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import {
  currentSnapshotOf,
  type Generated,
  generate,
  type Json,
  liveFiles,
  load,
  NOW_MS,
  sorted,
  tableOf,
  tempDir,
} from '../helpers/e2e.ts';
import { Faults, ManualClock } from '../helpers/faults.ts';
import { batchOf, committedIds, type Pipeline, records, startPipeline } from '../helpers/pipeline.ts';
import { deleteUnreferenced, reachableFiles } from '../helpers/unreferenced-files.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

let dynamo: LocalDynamo;
const cleanups: (() => void)[] = [];
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  for (const c of cleanups) c();
});

const NS = 'default';
const S0 = 'shardId-000000000000';
const S1 = 'shardId-000000000001';
const TABLES = ['click_events', 'order_events', 'user_events'];
const DAY = 24 * 3600 * 1000;
/** The side files of older Floe versions. */
const SIDE_FILE = /\/metadata\/floe-watermark-[^/]+\.json$/;

async function pipeline(seed: number, clock?: Clock): Promise<Pipeline> {
  const t = tempDir('floe-wm-durability-');
  cleanups.push(t.cleanup);
  return startPipeline(dynamo, t.dir, { seed, ...(clock ? { clock } : {}) });
}

// ---------------------------------------------------------------------------------------------
// Streams and what was sent

interface Shard {
  readonly id: string;
  readonly recs: KinesisBatchRecord[];
  readonly events: Json[];
}

function shard(id: string, parts: readonly Generated[]): Shard {
  return { id, recs: records(parts.flatMap((g) => g.lines)), events: parts.flatMap((g) => g.events) };
}

function expectedIds(events: readonly Json[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const ev of events) out.set(tableOf(ev), [...(out.get(tableOf(ev)) ?? []), String(ev.event_id)]);
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)).map(([t, ids]) => [t, sorted(ids)]));
}

/** One clean Lambda invocation on records [lo, hi) of `s`: everything new is staged. */
async function deliver(p: Pipeline, s: Shard, lo: number, hi: number) {
  const r = await ingestBatch(p.ingestDeps(), batchOf(s.id, s.recs.slice(lo, hi)));
  expect(r.failures).toEqual([]);
  return r;
}

function statuses(run: { tables: readonly TableCommitResult[] }): string[][] {
  return run.tables.map((t) => [t.table, t.status]);
}

/** A clean committer run that must commit every table with staged work. */
async function commitAll(p: Pipeline): Promise<void> {
  const run = await runCommitter(p.committerDeps());
  expect(run.tables.filter((t) => t.status !== 'committed').map((t) => [t.table, t.status, t.error])).toEqual(
    [],
  );
}

const commitOf = (table: string) => (args: readonly unknown[]) => (args[0] as LoadedTable).id.name === table;

/**
 * A committer run that dies right after `table`'s catalog swap (before the ledger is marked), then
 * a fresh run: it must find that table's entries under the watermark and commit nothing twice.
 */
async function crashAfterSwapThenRerun(p: Pipeline, table: string, between?: () => Promise<void>) {
  const f = new Faults(1);
  f.add({ port: 'catalog', method: 'commitTable', timing: 'after', kind: 'crash', when: commitOf(table) });
  await runCommitter(
    p.committerDeps({
      catalog: f.catalog(p.wh.catalog),
      ledger: f.ledger(p.ledger),
      store: f.store(p.wh.store),
    }),
  ).catch(() => undefined);
  expect(f.log).toEqual(['catalog.commitTable after crash']);
  expect((await p.ledger.tablesWithStagedWork()).includes(table)).toBe(true);
  await between?.();
  const rerun = await runCommitter(p.committerDeps());
  expect(rerun.tables.find((t) => t.table === table)?.status).toBe('nothing-to-commit');
  expect(rerun.tables.filter((t) => t.status === 'failed').map((t) => t.error)).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// Things that happen to tables

function loadTable(p: Pipeline, name: string): Promise<LoadedTable> {
  return p.wh.catalog.loadTable({ namespace: NS, name });
}

async function commitUpdates(p: Pipeline, name: string, updates: (m: TableMetadata) => TableUpdate[]) {
  const base = await loadTable(p, name);
  const next = applyUpdates(base.metadata, updates(base.metadata), {
    nowMs: p.clock.nowMs(),
    metadataLocation: base.metadataLocation,
  });
  return p.wh.catalog.commitTable(base, next);
}

/** Snapshot expiry as Spark's `expire_snapshots` leaves a table: only the current snapshot. */
async function expireAllButCurrent(p: Pipeline, name: string): Promise<void> {
  await commitUpdates(p, name, (m) => {
    const current = currentSnapshotOf(m)!['snapshot-id'];
    const ids = m.snapshots.map((s) => s['snapshot-id']).filter((id) => id !== current);
    return [{ action: 'remove-snapshots', 'snapshot-ids': ids }];
  });
  expect((await loadTable(p, name)).metadata.snapshots).toHaveLength(1);
}

/**
 * A snapshot another engine commits (a compaction that rewrote nothing, say): the same manifest
 * list, a summary with its own keys and the totals, none of Floe's.
 */
async function otherEngineSnapshot(p: Pipeline, name: string): Promise<void> {
  await commitUpdates(p, name, (m) => {
    const parent = currentSnapshotOf(m)!;
    const totals = Object.entries(parent.summary).filter(([k]) => k.startsWith('total-'));
    const id = p.ids.snapshotId();
    const snapshot: Snapshot = {
      'snapshot-id': id,
      'parent-snapshot-id': parent['snapshot-id'],
      'sequence-number': m['last-sequence-number'] + 1n,
      'timestamp-ms': BigInt(p.clock.nowMs()),
      'manifest-list': parent['manifest-list']!,
      summary: {
        operation: 'replace',
        'engine-name': 'other-engine',
        ...Object.fromEntries(totals),
      } as Snapshot['summary'],
      'schema-id': m['current-schema-id'],
    };
    return [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
    ];
  });
}

/** Files named by staged ledger entries: cleaners must spare them (README "Known limits"). */
async function stagedFiles(p: Pipeline, shards: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const table of TABLES)
    for (const s of shards)
      for (const e of await p.ledger.entriesAfter(table, s, null, 100_000))
        if (e.status === 'staged') for (const f of e.files) out.add(f.uri);
  return out;
}

/** S3 Tables' unreferenced-file removal / orphan cleanup on every table; the deleted URIs. */
async function removeUnreferenced(p: Pipeline, shards: readonly string[]): Promise<string[]> {
  const spare = await stagedFiles(p, shards);
  const deleted: string[] = [];
  for (const name of TABLES)
    deleted.push(...(await deleteUnreferenced(p.wh.store, await loadTable(p, name), spare)));
  return deleted;
}

function summaryCopies(m: TableMetadata): string[] {
  return m.snapshots.flatMap((s) =>
    s.summary[WATERMARK_KEY] === undefined ? [] : [s.summary[WATERMARK_KEY]],
  );
}

async function tails(p: Pipeline, table: string, shards: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const s of shards) {
    const tail = (await p.ledger.shardTails(s)).get(table);
    if (tail !== undefined) out.set(s, tail);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The end state

/**
 * Commits what is left, then: each table holds exactly `expected` (event ids read back by DuckDB),
 * no data file twice, every referenced file present, every ledger entry committed, and the
 * watermark, inline in the property, at the end of each chain.
 */
async function expectExactlyOnce(p: Pipeline, expected: Map<string, string[]>, shards: readonly string[]) {
  for (let round = 0; round < 3 && (await p.ledger.tablesWithStagedWork()).length > 0; round++) {
    const run = await runCommitter(p.committerDeps());
    expect(run.tables.filter((t) => t.status === 'failed').map((t) => t.error)).toEqual([]);
  }
  expect(await p.ledger.tablesWithStagedWork()).toEqual([]);
  const seen = new Set<string>();
  for (const name of TABLES) {
    const t = await loadTable(p, name);
    expect(isInlineWatermark(t.metadata.properties[WATERMARK_KEY]!), name).toBe(true);
    expect(await readWatermark(p.wh.store, t.metadata), name).toEqual(await tails(p, name, shards));
    for (const s of shards) {
      const chain = await p.ledger.entriesAfter(name, s, null, 100_000);
      expect(
        chain.filter((e) => e.status !== 'committed'),
        `${name} ${s}`,
      ).toEqual([]);
    }
    for (const live of await liveFiles(p.wh.store, currentSnapshotOf(t.metadata)!)) {
      const path = live.file.file_path;
      expect(seen.has(path), `${path} twice`).toBe(false);
      seen.add(path);
      expect(await p.wh.store.exists(path), `${path} missing`).toBe(true);
    }
  }
  expect(await committedIds(p)).toEqual(expected);
  // And every table passes the independent Iceberg validator, every snapshot walked.
  await expectWarehouseValid(p.wh);
}

// ---------------------------------------------------------------------------------------------

describe('the commit watermark survives', () => {
  it('snapshot expiry that removes every snapshot but the current one, the one carrying a copy or not', async () => {
    const p = await pipeline(41);
    const s0 = shard(S0, [generate(300, 'v1', 4101)]);
    const s1 = shard(S1, [generate(300, 'v1', 4102)]);
    for (const [lo, hi] of [
      [0, 100],
      [100, 200],
    ] as const) {
      await deliver(p, s0, lo, hi);
      await deliver(p, s1, lo, hi);
      await commitAll(p);
    }
    // A batch load makes order_events' newest snapshot, which carries no watermark.
    const batch = generate(60, 'v1', 4103);
    const orders = batch.lines.filter((_, i) => tableOf(batch.events[i]!) === 'order_events');
    expect(
      (await load(p.wh, [{ name: 'batch', lines: orders }], { clock: p.clock })).report.failures,
    ).toEqual([]);
    for (const name of TABLES) await expireAllButCurrent(p, name);

    const orderMeta = (await loadTable(p, 'order_events')).metadata;
    expect(summaryCopies(orderMeta)).toEqual([]);
    for (const name of TABLES) {
      const t = await loadTable(p, name);
      expect(await readWatermark(p.wh.store, t.metadata), name).toEqual(await tails(p, name, [S0, S1]));
    }

    await deliver(p, s0, 200, 300);
    await deliver(p, s1, 200, 300);
    await crashAfterSwapThenRerun(p, 'order_events');
    await expectExactlyOnce(
      p,
      expectedIds([...s0.events, ...s1.events, ...orders.map((l) => JSON.parse(l) as Json)]),
      [S0, S1],
    );
  });

  it("S3 Tables' unreferenced-file removal and orphan cleanup, also between a crashed swap and the next run", async () => {
    const p = await pipeline(42);
    const s0 = shard(S0, [generate(300, 'v1', 4201), generate(150, 'v2', 4202)]);
    const s1 = shard(S1, [generate(300, 'v1', 4203)]);
    await deliver(p, s0, 0, 150);
    await deliver(p, s1, 0, 150);
    await commitAll(p);
    // A swap that failed with an unknown outcome left files no metadata reaches (they are kept,
    // as the swap might have happened).
    const f = new Faults(2);
    f.add({ port: 'catalog', method: 'commitTable', when: commitOf('click_events') });
    await deliver(p, s0, 150, 300);
    await runCommitter(p.committerDeps({ catalog: f.catalog(p.wh.catalog) }));
    expect(f.log).toEqual(['catalog.commitTable before error']);
    expect(await p.ledger.tablesWithStagedWork()).toEqual(['click_events']);
    await commitAll(p);

    const deleted = await removeUnreferenced(p, [S0, S1]);
    expect(deleted.length).toBeGreaterThan(0);
    for (const name of TABLES) {
      const t = await loadTable(p, name);
      expect(await readWatermark(p.wh.store, t.metadata), name).toEqual(await tails(p, name, [S0, S1]));
      // Nothing the watermark needs is a file of its own.
      const files = await p.wh.store.list(t.metadata.location);
      expect(
        files.filter((u) => SIDE_FILE.test(u)),
        name,
      ).toEqual([]);
      expect(new Set(files)).toEqual(await reachableFiles(p.wh.store, t));
    }
    expect(deleted.filter((u) => SIDE_FILE.test(u))).toEqual([]);

    // More records (v2: the committer evolves the tables); the run dies right after user_events'
    // swap, and the cleaners pass before the next run.
    await deliver(p, s0, 300, 450);
    await deliver(p, s1, 150, 300);
    await crashAfterSwapThenRerun(p, 'user_events', async () => {
      await removeUnreferenced(p, [S0, S1]);
    });
    await removeUnreferenced(p, [S0, S1]);
    await expectExactlyOnce(p, expectedIds([...s0.events, ...s1.events]), [S0, S1]);
  });

  it("snapshots of other engines that do not copy Floe's summary keys, several in a row, then expiry", async () => {
    const p = await pipeline(43);
    const s0 = shard(S0, [generate(300, 'v1', 4301)]);
    const s1 = shard(S1, [generate(300, 'v1', 4302)]);
    await deliver(p, s0, 0, 100);
    await deliver(p, s1, 0, 100);
    await commitAll(p);
    const side = generate(90, 'v1', 4303);
    for (const name of TABLES) {
      await otherEngineSnapshot(p, name);
      await otherEngineSnapshot(p, name);
    }
    expect(
      (await load(p.wh, [{ name: 'side', lines: side.lines }], { clock: p.clock })).report.failures,
    ).toEqual([]);
    for (const name of TABLES) {
      await otherEngineSnapshot(p, name);
      await expireAllButCurrent(p, name);
      const t = await loadTable(p, name);
      expect(currentSnapshotOf(t.metadata)!.summary['engine-name'], name).toBe('other-engine');
      expect(summaryCopies(t.metadata), name).toEqual([]);
      expect(await readWatermark(p.wh.store, t.metadata), name).toEqual(await tails(p, name, [S0, S1]));
    }

    // The committer dies right after click_events' swap; before the next run another engine
    // compacts twice and the snapshots are expired, so no snapshot carries Floe's copy.
    await deliver(p, s0, 100, 200);
    await deliver(p, s1, 100, 200);
    await crashAfterSwapThenRerun(p, 'click_events', async () => {
      await otherEngineSnapshot(p, 'click_events');
      await otherEngineSnapshot(p, 'click_events');
      await expireAllButCurrent(p, 'click_events');
      expect(summaryCopies((await loadTable(p, 'click_events')).metadata)).toEqual([]);
    });
    for (const name of TABLES) await otherEngineSnapshot(p, name);
    await deliver(p, s0, 200, 300);
    await deliver(p, s1, 200, 300);
    await commitAll(p);
    // Floe's own commits carry the copy again, identical to the property.
    for (const name of TABLES) {
      const m = (await loadTable(p, name)).metadata;
      expect(currentSnapshotOf(m)!.summary[WATERMARK_KEY], name).toBe(m.properties[WATERMARK_KEY]);
    }
    await expectExactlyOnce(p, expectedIds([...s0.events, ...s1.events, ...side.events]), [S0, S1]);
  });

  it("Floe's own maintenance (compaction, manifest rewrite, expiry, orphan cleanup) between commits, over staged work and between a crashed swap and the next run", async () => {
    const p = await pipeline(45);
    const s0 = shard(S0, [generate(400, 'v1', 4501), generate(100, 'v2', 4503)]);
    const s1 = shard(S1, [generate(400, 'v1', 4502)]);
    let compacted = 0;
    let orphansDeleted = 0;
    const maintain = async () => {
      const deps: MaintenanceDeps = {
        catalog: p.wh.catalog,
        store: p.wh.store,
        clock: p.clock,
        ids: p.ids,
        sleep: async () => undefined,
        liveRows: liveRowsReader(p.wh.store),
        staged: async () => stagedFiles(p, [S0, S1]),
      };
      for (const name of TABLES) {
        // Every threshold at its most aggressive: one snapshot kept, every unreached file deleted.
        const r = await maintainTable(
          deps,
          { namespace: NS, name },
          {
            steps: ALL_STEPS,
            retainLast: 1,
            expireOlderThanMs: 0,
            orphansOlderThanMs: 0,
          },
        );
        expect(r.failed, name).toEqual([]);
        compacted += r.compaction?.filesRewritten ?? 0;
        orphansDeleted += r.orphans?.orphans ?? 0;
      }
    };
    for (const [lo, hi] of [
      [0, 100],
      [100, 200],
      [200, 300],
    ] as const) {
      await deliver(p, s0, lo, hi);
      await deliver(p, s1, lo, hi);
      await commitAll(p);
    }
    await maintain();
    expect(compacted).toBeGreaterThan(0);
    // Staged, not committed yet: maintenance must leave these files alone. A commit attempt with
    // an unknown outcome leaves its manifests behind: orphans.
    await deliver(p, s0, 300, 400);
    await deliver(p, s1, 300, 400);
    const f = new Faults(3);
    f.add({ port: 'catalog', method: 'commitTable', when: commitOf('click_events') });
    await runCommitter(p.committerDeps({ catalog: f.catalog(p.wh.catalog) }));
    expect(f.log).toEqual(['catalog.commitTable before error']);
    await maintain();
    expect(orphansDeleted).toBeGreaterThan(0);
    await commitAll(p);
    // The committer dies right after order_events' swap; maintenance runs before the next run.
    await deliver(p, s0, 400, 500);
    await deliver(p, s1, 300, 400);
    await crashAfterSwapThenRerun(p, 'order_events', maintain);
    await maintain();
    for (const name of TABLES) {
      const t = await loadTable(p, name);
      expect(t.metadata.snapshots, name).toHaveLength(1);
      expect(await readWatermark(p.wh.store, t.metadata), name).toEqual(await tails(p, name, [S0, S1]));
      expect(new Set(await p.wh.store.list(t.metadata.location)), name).toEqual(
        await reachableFiles(p.wh.store, t),
      );
    }
    await expectExactlyOnce(p, expectedIds([...s0.events, ...s1.events]), [S0, S1]);
  });

  it('a shard idle past the horizon leaves the watermark once settled; when it resumes, nothing lands twice', async () => {
    const clock = new ManualClock(NOW_MS);
    const p = await pipeline(44, clock);
    const s0 = shard(S0, [generate(300, 'v1', 4401)]);
    const s1 = shard(S1, [generate(300, 'v1', 4402)]);
    await deliver(p, s0, 0, 100);
    await deliver(p, s1, 0, 100);
    await commitAll(p);
    for (const name of TABLES)
      expect([...(await readWatermark(p.wh.store, (await loadTable(p, name)).metadata)).keys()]).toEqual([
        S0,
        S1,
      ]);

    // Nine days on (the default horizon is eight), only shard 0 brings records.
    clock.advance(9 * DAY);
    await deliver(p, s0, 100, 200);
    await commitAll(p);
    for (const name of TABLES) {
      const m = (await loadTable(p, name)).metadata;
      expect([...(await readWatermark(p.wh.store, m)).keys()], name).toEqual([S0]);
      expect(currentSnapshotOf(m)!.summary[WATERMARK_KEY], name).toBe(m.properties[WATERMARK_KEY]);
    }

    // A late duplicate delivery of shard 1's first batch is skipped by the ingest; its new records
    // land once, across a crash after the swap.
    expect((await deliver(p, s1, 0, 100)).skipped).toBe(100);
    await deliver(p, s1, 100, 200);
    await deliver(p, s0, 200, 300);
    await crashAfterSwapThenRerun(p, 'order_events');
    await deliver(p, s1, 200, 300);
    await expectExactlyOnce(p, expectedIds([...s0.events, ...s1.events]), [S0, S1]);
  });
});

// ---------------------------------------------------------------------------------------------
// Tables an older Floe version wrote

/**
 * The catalog as the previous Floe version used it: each commit's watermark went to an immutable
 * side file `metadata/floe-watermark-<uuid>.json` (version 1: shard → sequence), which the table
 * property and the new snapshot's summary named.
 */
function legacyCatalog(p: Pipeline): Catalog {
  const catalog = p.wh.catalog;
  return new Proxy(catalog, {
    get(target, prop) {
      if (prop === 'commitTable')
        return async (base: LoadedTable, m: TableMetadata) => target.commitTable(base, await asLegacy(p, m));
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

async function asLegacy(p: Pipeline, m: TableMetadata): Promise<TableMetadata> {
  const inline = m.properties[WATERMARK_KEY];
  if (inline === undefined || !isInlineWatermark(inline)) return m;
  const shards = Object.fromEntries(positionsOf(decodeWatermark(inline, 'legacy emulation')));
  const uri = `${m.location}/metadata/floe-watermark-${randomUUID()}.json`;
  await p.wh.store.put(uri, JSON.stringify({ format: 'floe-commit-watermark', version: 1, shards }));
  const snapshots = m.snapshots.map((s) =>
    s.summary[WATERMARK_KEY] === inline ? { ...s, summary: { ...s.summary, [WATERMARK_KEY]: uri } } : s,
  );
  return { ...m, properties: { ...m.properties, [WATERMARK_KEY]: uri }, snapshots };
}

/**
 * Two rounds of legacy commits; in the second, the committer of order_events dies right after its
 * swap, so its entries are in the table but still staged in the ledger.
 */
async function legacyTables(p: Pipeline, s0: Shard, s1: Shard): Promise<void> {
  const legacy = legacyCatalog(p);
  await deliver(p, s0, 0, 100);
  await deliver(p, s1, 0, 100);
  expect(statuses(await runCommitter(p.committerDeps({ catalog: legacy })))).toEqual(
    TABLES.map((t) => [t, 'committed']),
  );
  await deliver(p, s0, 100, 200);
  await deliver(p, s1, 100, 200);
  const f = new Faults(3);
  f.add({ port: 'catalog', method: 'commitTable', timing: 'after', kind: 'crash' });
  await commitTable(
    p.committerDeps({ catalog: f.catalog(legacy), ledger: f.ledger(p.ledger) }),
    'order_events',
  );
  expect(f.log).toEqual(['catalog.commitTable after crash']);
  for (const name of ['click_events', 'user_events'])
    expect((await commitTable(p.committerDeps({ catalog: legacy }), name)).status).toBe('committed');
  for (const name of TABLES) {
    const m = (await loadTable(p, name)).metadata;
    const uri = m.properties[WATERMARK_KEY]!;
    expect(uri, name).toMatch(SIDE_FILE);
    expect(
      summaryCopies(m).every((c) => !isInlineWatermark(c)),
      name,
    ).toBe(true);
  }
  expect(await p.ledger.tablesWithStagedWork()).toEqual(['order_events']);
}

describe('tables an older Floe version wrote (the property names a side file)', () => {
  it('reads the side file while it exists, and writes the inline form from then on', async () => {
    const p = await pipeline(45);
    const s0 = shard(S0, [generate(300, 'v1', 4501)]);
    const s1 = shard(S1, [generate(300, 'v1', 4502)]);
    await legacyTables(p, s0, s1);
    const legacyUri = (await loadTable(p, 'order_events')).metadata.properties[WATERMARK_KEY]!;

    // Only the side file knows that order_events' staged entries are in the table.
    const first = await runCommitter(p.committerDeps());
    expect(first.tables.find((t) => t.table === 'order_events')?.status).toBe('nothing-to-commit');
    expect(first.tables.filter((t) => t.status === 'failed').map((t) => t.error)).toEqual([]);

    await deliver(p, s0, 200, 300);
    await deliver(p, s1, 200, 300);
    await crashAfterSwapThenRerun(p, 'user_events');
    const orders = (await loadTable(p, 'order_events')).metadata;
    expect(isInlineWatermark(orders.properties[WATERMARK_KEY]!)).toBe(true);
    // The side file is left for the cleaners: no snapshot or property names it any more.
    expect(await p.wh.store.exists(legacyUri)).toBe(true);
    await removeUnreferenced(p, [S0, S1]);
    expect(await p.wh.store.exists(legacyUri)).toBe(false);
    await expectExactlyOnce(p, expectedIds([...s0.events, ...s1.events]), [S0, S1]);
  });

  it('fails the table loudly when the side file is gone, until an operator sets the watermark', async () => {
    const p = await pipeline(46);
    const s0 = shard(S0, [generate(300, 'v1', 4601)]);
    const s1 = shard(S1, [generate(300, 'v1', 4602)]);
    await legacyTables(p, s0, s1);
    const before = await loadTable(p, 'order_events');
    const lostUri = before.metadata.properties[WATERMARK_KEY]!;
    // What the side files said (the operator finds it in the ledger, or a restored copy).
    const lost = new Map<string, Map<string, ShardMark>>();
    for (const name of TABLES) {
      const uri = (await loadTable(p, name)).metadata.properties[WATERMARK_KEY]!;
      lost.set(
        name,
        decodeWatermark(new TextDecoder().decode(await p.wh.store.get(uri)), uri, p.clock.nowMs()),
      );
    }
    const staged = await p.ledger.entriesAfter('order_events', S0, null, 1000);
    expect(staged.some((e) => e.status === 'staged')).toBe(true);

    const deleted = await removeUnreferenced(p, [S0, S1]);
    expect(deleted).toContain(lostUri);
    const run = await runCommitter(p.committerDeps());
    const orders = run.tables.find((t) => t.table === 'order_events')!;
    expect(orders.status).toBe('failed');
    expect(isFloeError(orders.error, ErrorKind.DataInvalid)).toBe(true);
    expect((orders.error as Error).message).toContain(lostUri);
    expect((orders.error as Error).message).toContain('no longer exists');
    // Nothing was committed and nothing was marked.
    expect((await loadTable(p, 'order_events')).metadataLocation).toBe(before.metadataLocation);
    expect(await p.ledger.entriesAfter('order_events', S0, null, 1000)).toEqual(staged);
    // The next run fails the same way: the table never commits without a trustworthy watermark.
    const again = await runCommitter(p.committerDeps());
    expect(again.tables.find((t) => t.table === 'order_events')?.status).toBe('failed');

    // The operator sets the positions each table holds (here: what its lost file said), inline.
    for (const [name, marks] of lost)
      await commitUpdates(p, name, () => [
        { action: 'set-properties', updates: { [WATERMARK_KEY]: encodeWatermark(marks) } },
      ]);
    const resumed = await runCommitter(p.committerDeps());
    expect(resumed.tables.find((t) => t.table === 'order_events')?.status).toBe('nothing-to-commit');

    await deliver(p, s0, 200, 300);
    await deliver(p, s1, 200, 300);
    await commitAll(p);
    await expectExactlyOnce(p, expectedIds([...s0.events, ...s1.events]), [S0, S1]);
  });
});
