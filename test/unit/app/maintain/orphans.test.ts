import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteOrphanFiles, pathKey } from '../../../../lambdas/src/app/maintain/orphans.ts';
import { type Duck, openDuck } from '../../../helpers/e2e.ts';
import { CLICKS, filesUnder, idsInTable, smallLoads } from './small-loads.ts';

const HOUR = 3_600_000;

/** Writes a file under the table folder with the given modification time. */
async function plant(dir: string, rel: string, mtimeMs: number): Promise<void> {
  const p = join(dir, 'default', 'click_events', rel);
  await fs.mkdir(join(p, '..'), { recursive: true });
  await fs.writeFile(p, 'orphan');
  await fs.utimes(p, mtimeMs / 1000, mtimeMs / 1000);
}

describe('deleteOrphanFiles', () => {
  let duck: Duck;
  beforeAll(async () => {
    duck = await openDuck();
  });
  afterAll(() => duck.close());

  it('deletes unreached files older than the threshold, keeps young ones and everything reached', async () => {
    const t = await smallLoads(4, 5);
    try {
      const nowMs = Date.now();
      const reached = await filesUnder(t.wh);
      await plant(t.wh.dir, 'data/region=eu/00000-old.parquet', nowMs - 5 * HOUR);
      await plant(t.wh.dir, 'metadata/old-m0.avro', nowMs - 5 * HOUR);
      await plant(t.wh.dir, 'metadata/v999-old.metadata.json.tmp2', nowMs - 5 * HOUR);
      await plant(t.wh.dir, 'data/region=us/00000-young.parquet', nowMs - HOUR / 2);
      // Floe's own state beside the data (change versions) is never an orphan, however old.
      await plant(t.wh.dir, 'floe/change-versions/b-07.json', nowMs - 50 * HOUR);
      // Reached files are old too: age alone must never condemn them.
      for (const f of reached) {
        const p = join(t.wh.dir, 'default', 'click_events', f);
        await fs.utimes(p, (nowMs - 10 * HOUR) / 1000, (nowMs - 10 * HOUR) / 1000);
      }
      const table = await t.wh.catalog.loadTable(CLICKS);
      const r = await deleteOrphanFiles(t.wh.store, table, { olderThanMs: 2 * HOUR, nowMs });
      expect(r.orphans).toBe(3);
      expect(r.young).toBe(1);
      expect(await filesUnder(t.wh)).toEqual(
        [...reached, 'data/region=us/00000-young.parquet', 'floe/change-versions/b-07.json'].sort(),
      );
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
      expect(reached).toContain('metadata/version-hint.text');
    } finally {
      t.cleanup();
    }
  });

  it('a dry run deletes nothing; protected (staged) files are never orphans', async () => {
    const t = await smallLoads(2, 3);
    try {
      const nowMs = Date.now();
      await plant(t.wh.dir, 'data/region=eu/staged.parquet', nowMs - 5 * HOUR);
      await plant(t.wh.dir, 'data/region=eu/lost.parquet', nowMs - 5 * HOUR);
      const table = await t.wh.catalog.loadTable(CLICKS);
      const staged = `${table.metadata.location}/data/region=eu/staged.parquet`;
      const before = await filesUnder(t.wh);
      const dry = await deleteOrphanFiles(t.wh.store, table, {
        olderThanMs: HOUR,
        nowMs,
        dryRun: true,
        protect: async () => [staged],
      });
      expect(dry.orphans).toBe(1);
      expect(dry.sample[0]).toMatch(/lost\.parquet$/);
      expect(await filesUnder(t.wh)).toEqual(before);
      await deleteOrphanFiles(t.wh.store, table, { olderThanMs: HOUR, nowMs, protect: async () => [staged] });
      expect(await filesUnder(t.wh)).toEqual(before.filter((f) => !f.endsWith('lost.parquet')));
    } finally {
      t.cleanup();
    }
  });

  it('refuses to delete anything when the listing shows none of the table’s data files', async () => {
    const t = await smallLoads(2, 3);
    try {
      const table = await t.wh.catalog.loadTable(CLICKS);
      // A store that lists the folder under another spelling than the metadata uses.
      const store = Object.create(t.wh.store) as typeof t.wh.store;
      store.listEntries = async (prefix) =>
        (await t.wh.store.listEntries(prefix)).map((e) => ({
          ...e,
          uri: e.uri.replace('click_events', 'CLICK'),
        }));
      await expect(
        deleteOrphanFiles(store, table, { olderThanMs: 0, nowMs: Date.now() + HOUR }),
      ).rejects.toThrow(/refusing to delete orphan files of default\.click_events/);
      expect((await filesUnder(t.wh)).length).toBeGreaterThan(0);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
    } finally {
      t.cleanup();
    }
  });
  it('refuses when one listed file is a reached file spelled another way', async () => {
    const t = await smallLoads(2, 3);
    try {
      const table = await t.wh.catalog.loadTable(CLICKS);
      const store = Object.create(t.wh.store) as typeof t.wh.store;
      let changed = false;
      store.listEntries = async (prefix) =>
        (await t.wh.store.listEntries(prefix)).map((e) => {
          if (changed || !e.uri.includes('/data/region=eu/')) return e;
          changed = true;
          return { ...e, uri: e.uri.replace('/data/region=eu/', '/data/REGION=eu/') };
        });
      await expect(
        deleteOrphanFiles(store, table, { olderThanMs: 0, nowMs: Date.now() + HOUR }),
      ).rejects.toThrow(/the listing shows .*REGION=eu.*, which the metadata names as .*region=eu/);
      expect(changed).toBe(true);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
    } finally {
      t.cleanup();
    }
  });
});

describe('pathKey', () => {
  it('folds spellings of one object together and keeps different objects apart', () => {
    expect(pathKey('s3a://b/t/data/x.parquet')).toBe(pathKey('s3://b/t/data/x.parquet'));
    expect(pathKey('s3n://b/t/x')).toBe(pathKey('s3://b/t/x'));
    expect(pathKey('file:/wh/t/x')).toBe(pathKey('file:///wh/t/x'));
    expect(pathKey('file:///wh/my%20dir/x')).toBe(pathKey('file:///wh/my dir/x'));
    expect(pathKey('s3://b/t/x')).not.toBe(pathKey('s3://c/t/x'));
    expect(pathKey('s3://b/t/x')).not.toBe(pathKey('gs://b/t/x'));
    expect(pathKey('file:///wh/t/a')).not.toBe(pathKey('file:///wh/t/b'));
    // Relative tables (Spark/DuckDB test suites): `./t/x`, `t/x` and `t/./x` are one file.
    expect(pathKey('./lineitem/data/x.parquet')).toBe(pathKey('lineitem/data/x.parquet'));
    expect(pathKey('lineitem/./data/x.parquet')).toBe(pathKey('lineitem/data/x.parquet'));
  });
});
