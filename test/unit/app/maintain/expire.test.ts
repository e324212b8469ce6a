import { promises as fs } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireSnapshots, planExpiry } from '../../../../lambdas/src/app/maintain/expire.ts';
import { thresholdsFor } from '../../../../lambdas/src/app/maintain/options.ts';
import { applyUpdates } from '../../../../lambdas/src/iceberg/metadata/index.ts';
import type { Snapshot, SnapshotRef } from '../../../../lambdas/src/iceberg/snapshot.ts';
import type { TableMetadata } from '../../../../lambdas/src/iceberg/table-metadata.ts';
import { type Duck, openDuck } from '../../../helpers/e2e.ts';
import { CLICKS, idsInTable, smallLoads } from './small-loads.ts';

const ALL = { compact: false, rewriteManifests: false, expire: true, orphans: false };

async function exists(uri: string): Promise<boolean> {
  return fs.access(fileURLToPath(uri)).then(
    () => true,
    () => false,
  );
}

describe('expireSnapshots', () => {
  let duck: Duck;
  beforeAll(async () => {
    duck = await openDuck();
  });
  afterAll(() => duck.close());

  it('keeps the newest N, deletes only what expired snapshots alone reached, and every row stays', async () => {
    const t = await smallLoads(8, 5);
    try {
      const before = await t.wh.catalog.loadTable(CLICKS);
      const lists = before.metadata.snapshots.map((s) => s['manifest-list']!);
      const th = thresholdsFor(before.metadata, { steps: ALL, retainLast: 3, expireOlderThanMs: 0 });
      const r = await expireSnapshots(t.deps(), before, th, { deleteFiles: true });
      const after = await t.wh.catalog.loadTable(CLICKS);
      expect(r.snapshotsExpired).toBe(5);
      expect(after.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual(
        before.metadata.snapshots.slice(-3).map((s) => s['snapshot-id']),
      );
      // Appends carry every data file forward: nothing but the expired manifest lists is unreached.
      expect(r.freed).toMatchObject({ manifestLists: 5, dataFiles: 0 });
      for (const l of lists.slice(0, 5)) expect(await exists(l)).toBe(false);
      for (const l of lists.slice(-3)) expect(await exists(l)).toBe(true);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
      // The snapshot log no longer names an expired snapshot.
      const kept = new Set(after.metadata.snapshots.map((s) => s['snapshot-id']));
      for (const e of after.metadata['snapshot-log']) expect(kept.has(e['snapshot-id'])).toBe(true);
    } finally {
      t.cleanup();
    }
  });

  it('keeps snapshots younger than the cutoff whatever retainLast says', async () => {
    const t = await smallLoads(6, 2); // one load per minute
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      // Cutoff 150 s back: the last two or three loads are younger.
      const th = thresholdsFor(base.metadata, { steps: ALL, retainLast: 1, expireOlderThanMs: 150_000 });
      const nowMs = t.clock.nowMs();
      const young = base.metadata.snapshots.filter((s) => s['timestamp-ms'] >= BigInt(nowMs - 150_000));
      expect(young.length).toBeGreaterThan(1);
      await expireSnapshots(t.deps(), base, th, { deleteFiles: true });
      const after = await t.wh.catalog.loadTable(CLICKS);
      const kept = new Set(after.metadata.snapshots.map((s) => s['snapshot-id']));
      for (const s of young) expect(kept.has(s['snapshot-id'])).toBe(true);
      expect(after.metadata.snapshots.length).toBeLessThan(base.metadata.snapshots.length);
    } finally {
      t.cleanup();
    }
  });

  it('never expires a tag or branch head, nor the files it needs', async () => {
    const t = await smallLoads(5, 3);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const tagged = base.metadata.snapshots[1]!;
      const tagMeta = applyUpdates(
        base.metadata,
        [
          {
            action: 'set-snapshot-ref',
            'ref-name': 'audit',
            type: 'tag',
            'snapshot-id': tagged['snapshot-id'],
          },
        ],
        { nowMs: t.clock.nowMs(), metadataLocation: base.metadataLocation },
      );
      await t.wh.catalog.commitTable(base, tagMeta);
      const now = await t.wh.catalog.loadTable(CLICKS);
      const th = thresholdsFor(now.metadata, { steps: ALL, retainLast: 1, expireOlderThanMs: 0 });
      await expireSnapshots(t.deps(), now, th, { deleteFiles: true });
      const after = await t.wh.catalog.loadTable(CLICKS);
      expect(after.metadata.snapshots.map((s) => s['snapshot-id']).sort()).toEqual(
        [tagged['snapshot-id'], now.metadata['current-snapshot-id']!].sort(),
      );
      expect(await exists(tagged['manifest-list']!)).toBe(true);
      expect(after.metadata.refs.audit?.['snapshot-id']).toBe(tagged['snapshot-id']);
    } finally {
      t.cleanup();
    }
  });

  it('a dry run reports and changes nothing', async () => {
    const t = await smallLoads(4, 2);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const th = thresholdsFor(base.metadata, { steps: ALL, retainLast: 1, expireOlderThanMs: 0 });
      const r = await expireSnapshots(t.deps(), base, th, { deleteFiles: true, dryRun: true });
      expect(r.snapshotsExpired).toBe(3);
      expect(r.freed.manifestLists).toBe(3);
      const after = await t.wh.catalog.loadTable(CLICKS);
      expect(after.metadataLocation).toBe(base.metadataLocation);
      for (const s of base.metadata.snapshots) expect(await exists(s['manifest-list']!)).toBe(true);
    } finally {
      t.cleanup();
    }
  });

  it('with deleteFiles off (S3 Tables) drops snapshots from the metadata only', async () => {
    const t = await smallLoads(4, 2);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const th = thresholdsFor(base.metadata, { steps: ALL, retainLast: 1, expireOlderThanMs: 0 });
      const r = await expireSnapshots(t.deps(), base, th, { deleteFiles: false });
      expect(r.snapshotsExpired).toBe(3);
      expect(r.freed.manifestLists).toBe(0);
      for (const s of base.metadata.snapshots) expect(await exists(s['manifest-list']!)).toBe(true);
    } finally {
      t.cleanup();
    }
  });

  it('an append that lands while expiry commits is kept (the commit is rebuilt on the new base)', async () => {
    const t = await smallLoads(4, 2);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const th = thresholdsFor(base.metadata, { steps: ALL, retainLast: 1, expireOlderThanMs: 0 });
      let raced = false;
      const catalog = Object.create(t.wh.catalog) as typeof t.wh.catalog;
      catalog.commitTable = async (b, m) => {
        if (!raced) {
          raced = true;
          await t.more(3, 0); // another writer commits first: this attempt must conflict
        }
        return t.wh.catalog.commitTable(b, m);
      };
      await expireSnapshots(t.deps({ catalog }), base, th, { deleteFiles: true });
      expect(raced).toBe(true);
      const after = await t.wh.catalog.loadTable(CLICKS);
      expect(after.metadata.snapshots).toHaveLength(1);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
      expect(t.ids).toHaveLength(11);
    } finally {
      t.cleanup();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// planExpiry over generated histories

interface History {
  readonly meta: TableMetadata;
  readonly nowMs: number;
}

/** A table metadata with a generated snapshot tree (parents always older) and refs on it. */
const histories = fc
  .record({
    parents: fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
    gaps: fc.array(fc.integer({ min: 0, max: 10_000 }), { minLength: 30, maxLength: 30 }),
    refs: fc.array(
      fc.record({
        at: fc.nat(),
        type: fc.constantFrom('branch' as const, 'tag' as const),
        minKeep: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
        maxAge: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined }),
      }),
      { maxLength: 3 },
    ),
    mainAt: fc.nat(),
  })
  .map(({ parents, gaps, refs, mainAt }): History => {
    const snapshots: Snapshot[] = [];
    let ts = 1_000_000;
    parents.forEach((p, i) => {
      ts += gaps[i]!;
      snapshots.push({
        'snapshot-id': BigInt(i + 1),
        ...(i > 0 ? { 'parent-snapshot-id': BigInt((p % i) + 1) } : {}),
        'sequence-number': BigInt(i + 1),
        'timestamp-ms': BigInt(ts),
        'manifest-list': `file:///t/snap-${i + 1}.avro`,
        summary: { operation: 'append' },
      });
    });
    const at = (n: number) => BigInt((n % snapshots.length) + 1);
    const refMap: Record<string, SnapshotRef> = { main: { 'snapshot-id': at(mainAt), type: 'branch' } };
    refs.forEach((r, i) => {
      refMap[`r${i}`] = {
        'snapshot-id': at(r.at),
        type: r.type,
        ...(r.minKeep !== undefined && r.type === 'branch' ? { 'min-snapshots-to-keep': r.minKeep } : {}),
        ...(r.maxAge !== undefined && r.type === 'branch' ? { 'max-snapshot-age-ms': BigInt(r.maxAge) } : {}),
      };
    });
    const meta = {
      'format-version': 2,
      location: 'file:///t',
      properties: {},
      snapshots,
      refs: refMap,
      'current-snapshot-id': refMap.main!['snapshot-id'],
      statistics: [],
      'partition-statistics': [],
    } as unknown as TableMetadata;
    return { meta, nowMs: ts + 1 };
  });

describe('planExpiry (property)', () => {
  it('never expires a ref head, keeps each branch’s newest N, and everything younger than the cutoff', () => {
    fc.assert(
      fc.property(
        histories,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 200_000 }),
        (h, keep, age) => {
          const th = thresholdsFor(h.meta, { steps: ALL, retainLast: keep, expireOlderThanMs: age });
          const plan = planExpiry(h.meta, th, h.nowMs);
          const gone = new Set(plan.expire.map((s) => s['snapshot-id']));
          const byId = new Map(h.meta.snapshots.map((s) => [s['snapshot-id'], s]));
          for (const ref of Object.values(h.meta.refs)) {
            expect(gone.has(ref['snapshot-id'])).toBe(false);
            if (ref.type !== 'branch') continue;
            // The branch's newest min(N, ancestry) ancestors stay.
            const n = ref['min-snapshots-to-keep'] ?? keep;
            let s = byId.get(ref['snapshot-id']);
            for (let i = 0; i < n && s; i++) {
              expect(gone.has(s['snapshot-id'])).toBe(false);
              s = s['parent-snapshot-id'] === undefined ? undefined : byId.get(s['parent-snapshot-id']);
            }
          }
          const cutoff = BigInt(h.nowMs - age);
          const perRefAge = Object.values(h.meta.refs).some((r) => r['max-snapshot-age-ms'] !== undefined);
          if (!perRefAge)
            for (const s of h.meta.snapshots)
              if (s['timestamp-ms'] >= cutoff) expect(gone.has(s['snapshot-id'])).toBe(false);
          // An expired snapshot is older than the default cutoff or than its branch's own.
          for (const s of plan.expire) expect(s['timestamp-ms'] < cutoff || perRefAge).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
