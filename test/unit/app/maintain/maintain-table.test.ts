import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, seededIds } from '../../../../lambdas/src/adapters/local/system-clock.ts';
import { maintainTable } from '../../../../lambdas/src/app/maintain/index.ts';
import { liveRowsReader } from '../../../../lambdas/src/app/maintain/live-rows.ts';
import { ALL_STEPS } from '../../../../lambdas/src/app/maintain/options.ts';
import { rewriteManifests } from '../../../../lambdas/src/app/maintain/rewrite-manifests.ts';
import { parseConfig } from '../../../../lambdas/src/config.ts';
import { decodeManifestList } from '../../../../lambdas/src/iceberg/manifest/index.ts';
import { applyUpdates } from '../../../../lambdas/src/iceberg/metadata/index.ts';
import { currentSnapshot } from '../../../../lambdas/src/iceberg/table-metadata.ts';
import { type Duck, fileWarehouse, load, openDuck, tempDir } from '../../../helpers/e2e.ts';
import { CLICKS, filesUnder, idsInTable, START_MS, smallLoads } from './small-loads.ts';

describe('rewriteManifests', () => {
  let duck: Duck;
  beforeAll(async () => {
    duck = await openDuck();
  });
  afterAll(() => duck.close());

  it('merges the small manifests into one per spec in a replace snapshot that changes no data', async () => {
    const t = await smallLoads(9, 4);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const before = currentSnapshot(base.metadata)!;
      expect(decodeManifestList(await t.wh.store.get(before['manifest-list']!))).toHaveLength(9);
      const dry = await rewriteManifests(t.deps(), base, { dryRun: true });
      expect(dry).toEqual({ manifestsBefore: 9, manifestsAfter: 1 });
      expect((await t.wh.catalog.loadTable(CLICKS)).metadataLocation).toBe(base.metadataLocation);
      const r = await rewriteManifests(t.deps(), base);
      expect(r).toMatchObject({ manifestsBefore: 9, manifestsAfter: 1 });
      const after = currentSnapshot((await t.wh.catalog.loadTable(CLICKS)).metadata)!;
      expect(after.summary).toMatchObject({
        operation: 'replace',
        'manifests-created': '1',
        'manifests-replaced': '9',
        'total-records': before.summary['total-records'],
        'total-data-files': before.summary['total-data-files'],
      });
      expect(decodeManifestList(await t.wh.store.get(after['manifest-list']!))).toHaveLength(1);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
      // The table takes appends as before.
      await t.more(3);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
    } finally {
      t.cleanup();
    }
  });
});

describe('maintainTable', () => {
  let duck: Duck;
  beforeAll(async () => {
    duck = await openDuck();
  });
  afterAll(() => duck.close());

  it('all steps: one file per partition, one snapshot, nothing unreached left, every row kept', async () => {
    const t = await smallLoads(20, 5);
    try {
      const r = await maintainTable(t.deps(), CLICKS, {
        steps: ALL_STEPS,
        retainLast: 1,
        expireOlderThanMs: 0,
        orphansOlderThanMs: 0,
      });
      expect(r.failed).toEqual([]);
      expect(r.before).toMatchObject({ dataFiles: 40, snapshots: 20, records: 100n });
      expect(r.after).toMatchObject({ dataFiles: 2, snapshots: 1, records: 100n });
      expect(r.compaction).toMatchObject({ filesRewritten: 40, filesWritten: 2 });
      expect(r.expiry?.snapshotsExpired).toBe(21); // 20 loads + the compaction's (the rewrite merged nothing more)
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
      const files = await filesUnder(t.wh);
      expect(files.filter((f) => f.startsWith('data/'))).toHaveLength(2);
      expect(files.filter((f) => f.endsWith('.avro'))).toHaveLength(2); // one manifest list, one manifest
    } finally {
      t.cleanup();
    }
  });

  it('a dry run reports the plan and changes no file', async () => {
    const t = await smallLoads(6, 3);
    try {
      const before = await filesUnder(t.wh);
      const r = await maintainTable(t.deps(), CLICKS, {
        steps: ALL_STEPS,
        retainLast: 1,
        expireOlderThanMs: 0,
        orphansOlderThanMs: 0,
        dryRun: true,
      });
      expect(r.dryRun).toBe(true);
      expect(r.compaction?.planned).toBe(12);
      expect(r.expiry?.snapshotsExpired).toBe(5);
      expect(await filesUnder(t.wh)).toEqual(before);
    } finally {
      t.cleanup();
    }
  });

  it('runs every step on a table upgraded to v3 (row lineage is kept: compact-v3.test.ts)', async () => {
    const t = await smallLoads(3, 3);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const v3 = applyUpdates(base.metadata, [{ action: 'upgrade-format-version', 'format-version': 3 }], {
        nowMs: t.clock.nowMs(),
        metadataLocation: base.metadataLocation,
      });
      await t.wh.catalog.commitTable(base, v3);
      const r = await maintainTable(t.deps(), CLICKS, {
        steps: ALL_STEPS,
        retainLast: 1,
        expireOlderThanMs: 0,
      });
      expect(r.skipped).toEqual([]);
      expect(r.failed).toEqual([]);
      expect(r.compaction).toMatchObject({ filesRewritten: 6, filesWritten: 2 });
      expect(r.manifests?.snapshotId).toBeDefined();
      // Three loads, the compaction and the manifest rewrite: the last one is kept.
      expect(r.expiry?.snapshotsExpired).toBe(4);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
    } finally {
      t.cleanup();
    }
  });

  it('does not compact a v3 table with a column named like a row lineage column (it says why)', async () => {
    const tmp = tempDir('floe-maintain-');
    try {
      const wh = fileWarehouse(tmp.dir);
      const config = parseConfig({ formatVersion: 3, routing: { defaultTable: 't' } });
      for (let i = 0; i < 3; i++) {
        const lines = [JSON.stringify({ id: i, _row_id: `r${i}` })];
        expect((await load(wh, [{ name: `l${i}.ndjson`, lines }], { config })).dead).toEqual([]);
      }
      const [namespace] = await wh.catalog.listNamespaces();
      const id = { namespace: namespace!, name: 't' };
      const r = await maintainTable(
        {
          catalog: wh.catalog,
          store: wh.store,
          clock: fixedClock(START_MS),
          ids: seededIds(5),
          liveRows: liveRowsReader(wh.store),
        },
        id,
        { steps: { compact: true, rewriteManifests: true, expire: false, orphans: false } },
      );
      expect(r.skipped).toEqual([
        {
          step: 'compact',
          reason:
            'format v3 row lineage cannot be written: the table has a column named _row_id, the name of a row lineage metadata column',
        },
      ]);
      expect(r.manifests).toMatchObject({ manifestsBefore: 3, manifestsAfter: 1 });
      expect(r.after.dataFiles).toBe(3);
    } finally {
      tmp.cleanup();
    }
  });

  it('managed storage (S3 Tables): expiry deletes no file and orphan cleanup does not run', async () => {
    const t = await smallLoads(4, 3);
    try {
      const before = await filesUnder(t.wh);
      const r = await maintainTable(t.deps({ managedStorage: true }), CLICKS, {
        steps: { compact: false, rewriteManifests: false, expire: true, orphans: true },
        retainLast: 1,
        expireOlderThanMs: 0,
        orphansOlderThanMs: 0,
      });
      expect(r.expiry?.snapshotsExpired).toBe(3);
      expect(r.skipped).toEqual([{ step: 'orphans', reason: expect.stringMatching(/S3 Tables/) }]);
      const after = await filesUnder(t.wh);
      for (const f of before) if (!f.endsWith('.metadata.json')) expect(after).toContain(f);
    } finally {
      t.cleanup();
    }
  });

  it('a failing step is reported and the later steps still run', async () => {
    const t = await smallLoads(4, 3);
    try {
      const r = await maintainTable(
        t.deps({
          liveRows: async () => {
            throw new Error('reader exploded');
          },
        }),
        CLICKS,
        { steps: ALL_STEPS, retainLast: 1, expireOlderThanMs: 0 },
      );
      // A file that cannot be read leaves its group as it is (noted), it does not fail the table.
      expect(r.compaction?.notes?.[0]).toMatch(/could not be read \(reader exploded\)/);
      expect(r.failed).toEqual([]);
      expect(r.manifests).toMatchObject({ manifestsBefore: 4, manifestsAfter: 1 });
      expect(r.expiry?.snapshotsExpired).toBe(4); // 4 loads + the manifest rewrite's, 1 kept
      await t.more(2);
      await t.more(2);
      const broken = await maintainTable(
        t.deps({
          catalog: Object.assign(Object.create(t.wh.catalog), {
            commitTable: async () => {
              throw new Error('catalog down');
            },
          }),
        }),
        CLICKS,
        {
          steps: { compact: false, rewriteManifests: true, expire: true, orphans: false },
          expireOlderThanMs: 0,
        },
      );
      expect(broken.failed.map((f) => f.step)).toEqual(['rewriteManifests', 'expire']);
      expect(broken.failed[0]!.error).toMatch(/catalog down/);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
    } finally {
      t.cleanup();
    }
  });
});
