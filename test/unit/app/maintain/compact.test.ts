import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededIds } from '../../../../lambdas/src/adapters/local/system-clock.ts';
import { compact } from '../../../../lambdas/src/app/maintain/compact.ts';
import { thresholdsFor } from '../../../../lambdas/src/app/maintain/options.ts';
import type { Warehouse } from '../../../../lambdas/src/cli/warehouse.ts';
import { DataFileContent } from '../../../../lambdas/src/iceberg/manifest/types.ts';
import { planScan } from '../../../../lambdas/src/iceberg/scan.ts';
import { currentSchema, currentSnapshot } from '../../../../lambdas/src/iceberg/table-metadata.ts';
import type { Catalog } from '../../../../lambdas/src/ports/catalog.ts';
import { currentSnapshotOf, type Duck, liveFiles, openDuck, sqlString } from '../../../helpers/e2e.ts';
import { queryWarehouseTable, rowMultiset } from '../../../helpers/warehouse-copy.ts';
import { commitDeletes } from './deletes.ts';
import { CLICKS, idsInTable, type SmallLoads, smallLoads } from './small-loads.ts';

const STEPS = { compact: true, rewriteManifests: false, expire: false, orphans: false };

/** Every row of the table (deletes applied), through `floe query`'s engine. */
async function tableRows(t: SmallLoads): Promise<string[]> {
  const r = await queryWarehouseTable(t.wh as unknown as Warehouse, CLICKS, 'SELECT * FROM t');
  return rowMultiset(r.rows, r.columns);
}

async function dataFileCount(t: SmallLoads): Promise<{ data: number; deletes: number }> {
  const table = await t.wh.catalog.loadTable(CLICKS);
  const files = await liveFiles(t.wh.store, currentSnapshotOf(table.metadata)!);
  return {
    data: files.filter((f) => f.file.content === DataFileContent.DATA).length,
    deletes: files.filter((f) => f.file.content !== DataFileContent.DATA).length,
  };
}

/** A catalog whose next commit first lets `before` run (another writer committing in between). */
function racing(inner: Catalog, before: () => Promise<unknown>): Catalog & { raced: () => boolean } {
  let done = false;
  const c = Object.create(inner) as Catalog & { raced: () => boolean };
  c.commitTable = async (b, m) => {
    if (!done) {
      done = true;
      await before();
    }
    return inner.commitTable(b, m);
  };
  c.raced = () => done;
  return c;
}

describe('compact', () => {
  let duck: Duck;
  beforeAll(async () => {
    duck = await openDuck();
  });
  afterAll(() => duck.close());

  it('rewrites each partition’s small files into one, rows and values identical, metrics true to the data', async () => {
    const t = await smallLoads(12, 10);
    try {
      const rowsBefore = await tableRows(t);
      expect(await dataFileCount(t)).toEqual({ data: 24, deletes: 0 });
      const base = await t.wh.catalog.loadTable(CLICKS);
      const start = currentSnapshot(base.metadata)!;
      const r = await compact(
        t.deps(),
        base,
        thresholdsFor(base.metadata, { steps: STEPS }),
        t.deps().liveRows,
      );
      expect(r).toMatchObject({ filesRewritten: 24, filesWritten: 2, rowsBefore: 120n, rowsAfter: 120n });
      expect(await tableRows(t)).toEqual(rowsBefore);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
      const after = await t.wh.catalog.loadTable(CLICKS);
      const snap = currentSnapshot(after.metadata)!;
      expect(snap.summary).toMatchObject({
        operation: 'replace',
        'added-data-files': '2',
        'deleted-data-files': '24',
        'total-records': '120',
        'total-data-files': '2',
      });
      const files = await liveFiles(t.wh.store, snap);
      expect(files).toHaveLength(2);
      const schema = currentSchema(after.metadata);
      for (const f of files) {
        // Spec (Java use-starting-sequence-number): the rewrite's files carry the starting snapshot's sequence number.
        expect(f.entry.sequence_number ?? f.manifest.sequence_number).toBe(start['sequence-number']);
        // Metrics are those of the file's data, as an independent reader sees it.
        const path = sqlString(fileURLToPath(f.file.file_path));
        const idField = schema.fields.find((x) => x.name === 'id')!;
        const [stats] = await duck.rows(
          `SELECT count(*) AS n, min(f) AS lo, max(f) AS hi FROM read_parquet(${path}, schema=map{${idField.id}: {name: 'f', type: 'BIGINT', default_value: NULL}})`,
        );
        expect(BigInt(stats!.n as bigint)).toBe(f.file.record_count);
        expect(f.file.value_counts?.get(idField.id)).toBe(f.file.record_count);
        const lo = new DataView(f.file.lower_bounds!.get(idField.id)!.buffer).getBigInt64(0, true);
        const hi = new DataView(f.file.upper_bounds!.get(idField.id)!.buffer).getBigInt64(0, true);
        expect([lo, hi]).toEqual([BigInt(stats!.lo as bigint), BigInt(stats!.hi as bigint)]);
        // Every column carries its field id.
        const ids = await duck.rows(
          `SELECT field_id FROM parquet_schema(${path}) WHERE num_children IS NULL OR num_children = 0`,
        );
        expect(ids.every((x) => x.field_id !== null)).toBe(true);
      }
    } finally {
      t.cleanup();
    }
  });

  it('applies position and equality deletes while rewriting, and drops the delete files it made dangle', async () => {
    const t = await smallLoads(6, 10);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const first = (await planScan(base.metadata, (u) => t.wh.store.get(u))).tasks[0]!;
      await commitDeletes(t.deps(), CLICKS, {
        kind: 'position',
        filePath: first.file.file_path,
        positions: [0n, 2n],
      });
      await commitDeletes(t.deps(), CLICKS, { kind: 'equality', ids: [4n, 7n, 33n, 60n] });
      const expected = await tableRows(t);
      expect(expected).toHaveLength(60 - 2 - 4);
      expect((await dataFileCount(t)).deletes).toBeGreaterThan(1);
      const now = await t.wh.catalog.loadTable(CLICKS);
      await compact(t.deps(), now, thresholdsFor(now.metadata, { steps: STEPS }), t.deps().liveRows);
      expect(await dataFileCount(t)).toEqual({ data: 2, deletes: 0 });
      expect(await tableRows(t)).toEqual(expected);
      // With no delete file left, the raw files hold exactly the live rows.
      expect(await idsInTable(duck, t.wh)).toHaveLength(54);
    } finally {
      t.cleanup();
    }
  });

  it('an equality delete committed while compacting still applies to the rewritten rows', async () => {
    const t = await smallLoads(6, 10);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const catalog = racing(t.wh.catalog, () =>
        commitDeletes({ ...t.deps(), ids: seededIds(5) }, CLICKS, { kind: 'equality', ids: [2n, 3n] }),
      );
      const r = await compact(
        t.deps({ catalog }),
        base,
        thresholdsFor(base.metadata, { steps: STEPS }),
        t.deps().liveRows,
      );
      expect(catalog.raced()).toBe(true);
      expect(r.filesWritten).toBe(2);
      const rows = await queryWarehouseTable(
        t.wh as unknown as Warehouse,
        CLICKS,
        'SELECT id FROM t ORDER BY id',
      );
      expect(rows.rows.map((x) => BigInt(x.id as bigint))).toEqual(t.ids.filter((i) => i !== 2n && i !== 3n));
      // The delete is newer than the rewritten files: by the spec's rule it applies to them.
      expect((await dataFileCount(t)).deletes).toBe(2);
    } finally {
      t.cleanup();
    }
  });

  it('gives up (and cleans up) when a position delete arrives for an input', async () => {
    const t = await smallLoads(4, 10);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const target = (await planScan(base.metadata, (u) => t.wh.store.get(u))).tasks[0]!.file.file_path;
      const catalog = racing(t.wh.catalog, () =>
        commitDeletes(t.deps(), CLICKS, { kind: 'position', filePath: target, positions: [1n] }),
      );
      const r = await compact(
        t.deps({ catalog }),
        base,
        thresholdsFor(base.metadata, { steps: STEPS }),
        t.deps().liveRows,
      );
      expect(r.skipped).toMatch(/position delete file .* arrived for .* while compacting/);
      expect(await dataFileCount(t)).toEqual({ data: 8, deletes: 1 });
      expect(
        await queryWarehouseTable(t.wh as unknown as Warehouse, CLICKS, 'SELECT count(*) AS n FROM t'),
      ).toMatchObject({
        rows: [{ n: 39n }],
      });
    } finally {
      t.cleanup();
    }
  });

  it('streams a group into files of about the target size, rolling to a new one when it is reached', async () => {
    const t = await smallLoads(12, 10);
    try {
      const rowsBefore = await tableRows(t);
      const base = await t.wh.catalog.loadTable(CLICKS);
      const th = thresholdsFor(base.metadata, { steps: STEPS });
      const plan = await planScan(base.metadata, (u) => t.wh.store.get(u));
      const sizes = plan.tasks.map((x) => Number(x.file.file_size_in_bytes));
      const avg = sizes.reduce((a, b) => a + b, 0) / sizes.length;
      // Each partition's 12 files: a new output once ~3.5 files' worth of input went in.
      const r = await compact(
        t.deps(),
        base,
        { ...th, targetFileSizeBytes: Math.round(avg * 3.5) },
        t.deps().liveRows,
      );
      expect(r.filesRewritten).toBe(24);
      expect(r.filesWritten).toBeGreaterThanOrEqual(6);
      expect(r.filesWritten).toBeLessThanOrEqual(8);
      expect(r.rowsAfter).toBe(120n);
      expect(await tableRows(t)).toEqual(rowsBefore);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
    } finally {
      t.cleanup();
    }
  });

  it('packs no input file above maxInputFileBytes with others (its rows are decoded at once)', async () => {
    const t = await smallLoads(4, 10);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const th = thresholdsFor(base.metadata, { steps: STEPS, maxInputFileBytes: 1 });
      expect(th.maxInputFileBytes).toBe(1);
      const r = await compact(t.deps(), base, th, t.deps().liveRows);
      expect(r.filesRewritten).toBe(0);
      expect(await dataFileCount(t)).toEqual({ data: 8, deletes: 0 });
    } finally {
      t.cleanup();
    }
  });

  it('keeps an append that lands while compacting', async () => {
    const t = await smallLoads(5, 10);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const catalog = racing(t.wh.catalog, () => t.more(7, 0));
      const r = await compact(
        t.deps({ catalog }),
        base,
        thresholdsFor(base.metadata, { steps: STEPS }),
        t.deps().liveRows,
      );
      expect(catalog.raced()).toBe(true);
      expect(r.filesRewritten).toBe(10);
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
      expect(t.ids).toHaveLength(57);
      expect((await dataFileCount(t)).data).toBe(4); // 2 compacted + the late append's 2
    } finally {
      t.cleanup();
    }
  });

  it('with a deadline, starts no group after it and commits the ones done (at least one)', async () => {
    const t = await smallLoads(4, 10);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const read = t.deps().liveRows;
      // Reading a file takes an hour of the test's clock: the deadline passes during the first group.
      const slow: typeof read = async (meta, task) => {
        t.clock.advance(3_600_000);
        return read(meta, task);
      };
      const th = thresholdsFor(base.metadata, { steps: STEPS });
      const r = await compact(t.deps(), base, th, slow, { workUntilMs: t.clock.nowMs() + 1 });
      expect(r).toMatchObject({ filesRewritten: 4, filesWritten: 1 });
      expect(r.notes).toEqual(['time is up: 1 of 2 groups left for the next run']);
      expect(await dataFileCount(t)).toEqual({ data: 5, deletes: 0 });
      expect(await idsInTable(duck, t.wh)).toEqual(t.ids);
      // The next run does the rest.
      const next = await t.wh.catalog.loadTable(CLICKS);
      await compact(t.deps(), next, th, read);
      expect(await dataFileCount(t)).toEqual({ data: 2, deletes: 0 });
    } finally {
      t.cleanup();
    }
  });

  it('leaves a group as it is when its rows cannot be written, and says why', async () => {
    const t = await smallLoads(3, 10);
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      const encoder = {
        rows: () => {
          throw new Error('disk on fire');
        },
        columns: () => {
          throw new Error('disk on fire');
        },
      };
      const r = await compact(
        t.deps({ encoder }),
        base,
        thresholdsFor(base.metadata, { steps: STEPS }),
        t.deps().liveRows,
      );
      expect(r.skipped).toBe('no file could be rewritten');
      expect(r.notes?.[0]).toMatch(/could not be written/);
      expect(await dataFileCount(t)).toEqual({ data: 6, deletes: 0 });
      expect((await t.wh.catalog.loadTable(CLICKS)).metadataLocation).toBe(base.metadataLocation);
    } finally {
      t.cleanup();
    }
  });
});
