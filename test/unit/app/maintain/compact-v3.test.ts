/**
 * Compaction of format v3 tables (row lineage, spec §Row Lineage): every row keeps its `_row_id`
 * and `_last_updated_sequence_number` through the rewrite. Expected values come from an
 * independent reading of the table before compaction (lineage.ts: avsc + hyparquet + the spec's
 * inheritance rules), never from Floe's reader.
 */
import { describe, expect, it } from 'vitest';
import { fixedClock, seededIds } from '../../../../lambdas/src/adapters/local/system-clock.ts';
import { compact } from '../../../../lambdas/src/app/maintain/compact.ts';
import { maintainTable } from '../../../../lambdas/src/app/maintain/index.ts';
import { liveRowsReader } from '../../../../lambdas/src/app/maintain/live-rows.ts';
import { ALL_STEPS, thresholdsFor } from '../../../../lambdas/src/app/maintain/options.ts';
import { rewriteManifests } from '../../../../lambdas/src/app/maintain/rewrite-manifests.ts';
import type { Warehouse } from '../../../../lambdas/src/cli/warehouse.ts';
import { parseConfig } from '../../../../lambdas/src/config.ts';
import { applyUpdates } from '../../../../lambdas/src/iceberg/metadata/index.ts';
import { currentSnapshot, type TableMetadata } from '../../../../lambdas/src/iceberg/table-metadata.ts';
import type { Catalog, TableIdentifier } from '../../../../lambdas/src/ports/catalog.ts';
import { fileWarehouse, liveFiles, load, NOW_MS, type TestWarehouse, tempDir } from '../../../helpers/e2e.ts';
import { readTableRows } from '../../../helpers/iceberg-rows.ts';
import { queryWarehouseTable, rowMultiset } from '../../../helpers/warehouse-copy.ts';
import { expectWarehouseValid } from '../../../helpers/warehouse-validation.ts';
import { commitDeletes } from './deletes.ts';
import {
  LAST_UPDATED_FIELD_ID,
  ROW_ID_FIELD_ID,
  type RowLineage,
  type TableLineage,
  tableLineage,
  topLevelColumns,
} from './lineage.ts';
import { CLICKS, type SmallLoads, smallLoads } from './small-loads.ts';

const COMPACT_ONLY = { compact: true, rewriteManifests: false, expire: false, orphans: false };

async function lineageOf(wh: TestWarehouse, id: TableIdentifier, key: string): Promise<TableLineage> {
  const table = await wh.catalog.loadTable(id);
  return tableLineage(await wh.store.get(table.metadataLocation), (u) => wh.store.get(u), key);
}

/** Live rows (deletes applied) by the independent reader. */
async function liveRows(
  wh: TestWarehouse,
  id: TableIdentifier,
): Promise<{ columns: string[]; rows: string[] }> {
  const table = await wh.catalog.loadTable(id);
  const r = await readTableRows({
    metadataJson: await wh.store.get(table.metadataLocation),
    read: (u) => wh.store.get(u),
  });
  return { columns: r.columns, rows: rowMultiset(r.rows, r.columns) };
}

/** Live rows through `floe query`'s engine (`SELECT *`). */
async function queried(
  wh: TestWarehouse,
  id: TableIdentifier,
): Promise<{ columns: string[]; rows: string[] }> {
  const r = await queryWarehouseTable(wh as unknown as Warehouse, id, 'SELECT * FROM t');
  return { columns: r.columns, rows: rowMultiset(r.rows, r.columns) };
}

/** The lineage of the rows with these keys (keys sorted). */
function lineageFor(l: TableLineage, keys: Iterable<string>): Record<string, RowLineage> {
  const out: Record<string, RowLineage> = {};
  for (const k of [...keys].sort()) {
    const v = l.byKey.get(k);
    out[k] = v ? { rowId: v.rowId, seq: v.seq } : { rowId: null, seq: null };
  }
  return out;
}

/** Keys of the live rows, by the independent reader. */
async function liveKeys(wh: TestWarehouse, id: TableIdentifier, key: string): Promise<string[]> {
  const table = await wh.catalog.loadTable(id);
  const r = await readTableRows({
    metadataJson: await wh.store.get(table.metadataLocation),
    read: (u) => wh.store.get(u),
  });
  return r.rows.map((row) => String(row[key])).sort();
}

/**
 * Spec §Snapshot Row IDs / §First Row ID Assignment / §Table Metadata `next-row-id`: the snapshot
 * starts at the previous `next-row-id`, `added-rows` is what the manifests newly assigned a
 * `first_row_id` cover (their added + existing rows), and the table's `next-row-id` moves past it;
 * every live row id is below it and no two rows share one.
 */
function expectRowIdBookkeeping(meta: TableMetadata, previousNextRowId: bigint, after: TableLineage): bigint {
  const snap = currentSnapshot(meta)!;
  expect(snap['first-row-id']).toBe(previousNextRowId);
  const assigned = after.manifests.filter(
    (m) => m.content === 0 && m.firstRowId !== null && m.firstRowId >= previousNextRowId,
  );
  let next = previousNextRowId;
  for (const m of assigned) {
    expect(m.firstRowId).toBe(next); // consecutive ranges, in manifest-list order
    next += m.addedRows + m.existingRows;
  }
  expect(snap['added-rows']).toBe(next - previousNextRowId);
  expect(meta['next-row-id']).toBe(previousNextRowId + snap['added-rows']!);
  const ids = [...after.byKey.values()].map((l) => l.rowId);
  expect(ids.every((id) => id !== null && id < meta['next-row-id']!)).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  return snap['added-rows']!;
}

/** A catalog whose next commit first lets `before` run (another writer committing in between). */
function racing(inner: Catalog, before: () => Promise<unknown>): Catalog {
  let done = false;
  const c = Object.create(inner) as Catalog;
  c.commitTable = async (b, m) => {
    if (!done) {
      done = true;
      await before();
    }
    return inner.commitTable(b, m);
  };
  return c;
}

async function nextRowIdOf(t: SmallLoads): Promise<bigint> {
  return (await t.wh.catalog.loadTable(CLICKS)).metadata['next-row-id']!;
}

describe('compaction of format v3 tables (row lineage)', () => {
  it('merges small files; every row keeps its _row_id and _last_updated_sequence_number, written in the new files', async () => {
    const t = await smallLoads(6, 5, { formatVersion: 3 });
    try {
      // Equality deletes take rows out of the middle of files: the rows after them keep ids that
      // count them (positions are those of the original file).
      await commitDeletes(t.deps(), CLICKS, { kind: 'equality', ids: [2n, 3n, 13n, 16n] });
      const before = await lineageOf(t.wh, CLICKS, 'id');
      expect(before.files).toHaveLength(12);
      // Each load assigned its 5 ids; nothing is written in the files yet.
      expect([...before.byKey.values()].map((l) => l.rowId).sort((a, b) => Number(a! - b!))).toEqual(
        Array.from({ length: 30 }, (_, i) => BigInt(i)),
      );
      expect(before.files.some((f) => f.materialized.rowId || f.materialized.seq)).toBe(false);
      const keys = await liveKeys(t.wh, CLICKS, 'id');
      expect(keys).toHaveLength(26);
      const want = lineageFor(before, keys);
      // Rows of six commits: six different sequence numbers, none the compaction's.
      expect(new Set(Object.values(want).map((l) => l.seq)).size).toBe(6);
      const rowsBefore = await liveRows(t.wh, CLICKS);
      const queryBefore = await queried(t.wh, CLICKS);
      const nextRowId = await nextRowIdOf(t);
      expect(nextRowId).toBe(30n);

      const base = await t.wh.catalog.loadTable(CLICKS);
      const r = await compact(
        t.deps(),
        base,
        thresholdsFor(base.metadata, { steps: COMPACT_ONLY }),
        t.deps().liveRows,
      );
      expect(r).toMatchObject({
        filesRewritten: 12,
        filesWritten: 2,
        deleteFilesRemoved: 2,
        rowsBefore: 30n,
        rowsAfter: 26n,
      });

      const after = await lineageOf(t.wh, CLICKS, 'id');
      expect(after.files).toHaveLength(2);
      for (const f of after.files) {
        // The values are in the file (no null): its own first_row_id applies to none of its rows.
        expect(f.materialized).toEqual({ rowId: true, seq: true });
        const cols = await topLevelColumns(await t.wh.store.get(f.path));
        expect(cols.filter((c) => c.fieldId !== undefined && c.fieldId > 2147483447)).toEqual([
          { name: '_row_id', fieldId: ROW_ID_FIELD_ID, repetition: 'OPTIONAL', type: 'INT64' },
          {
            name: '_last_updated_sequence_number',
            fieldId: LAST_UPDATED_FIELD_ID,
            repetition: 'OPTIONAL',
            type: 'INT64',
          },
        ]);
      }
      expect(lineageFor(after, after.byKey.keys())).toEqual(want);
      // The columns' metrics are those of their values (an engine may prune on `_row_id`).
      const meta = (await t.wh.catalog.loadTable(CLICKS)).metadata;
      for (const f of await liveFiles(t.wh.store, currentSnapshot(meta)!)) {
        const ids = [...after.files.find((x) => x.path === f.file.file_path)!.rows.values()]
          .map((l) => l.rowId!)
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const le = (b: Uint8Array | undefined) => new DataView(b!.buffer, b!.byteOffset).getBigInt64(0, true);
        expect(f.file.value_counts?.get(ROW_ID_FIELD_ID)).toBe(f.file.record_count);
        expect(f.file.null_value_counts?.get(ROW_ID_FIELD_ID)).toBe(0n);
        expect(le(f.file.lower_bounds?.get(ROW_ID_FIELD_ID))).toBe(ids[0]);
        expect(le(f.file.upper_bounds?.get(ROW_ID_FIELD_ID))).toBe(ids.at(-1));
      }
      // The rewritten manifests hold no live file: the new range is the new files' rows.
      expect(expectRowIdBookkeeping(meta, nextRowId, after)).toBe(26n);
      for (const f of after.files) {
        expect(f.firstRowId! >= nextRowId && f.firstRowId! + f.recordCount <= meta['next-row-id']!).toBe(
          true,
        );
      }

      // Readers see the same rows, and not the metadata columns.
      expect(await liveRows(t.wh, CLICKS)).toEqual(rowsBefore);
      const q = await queried(t.wh, CLICKS);
      expect(q).toEqual(queryBefore);
      expect(q.columns).not.toContain('_row_id');
      expect(q.columns).not.toContain('_last_updated_sequence_number');
      await expectWarehouseValid(t.wh);

      // A row added since (id inherited) and rows compacted before (ids written) both keep theirs
      // through a second compaction, with every other step of `floe maintain`. The new row is in
      // partition `us` only: the `eu` file stays, an EXISTING entry of a rewritten manifest.
      await t.more(1);
      const before2 = await lineageOf(t.wh, CLICKS, 'id');
      const keys2 = await liveKeys(t.wh, CLICKS, 'id');
      expect(keys2).toHaveLength(27);
      const want2 = lineageFor(before2, keys2);
      expect(Object.fromEntries(Object.entries(want2).filter(([k]) => keys.includes(k)))).toEqual(want);
      const rowsBefore2 = await liveRows(t.wh, CLICKS);
      const nextRowId2 = await nextRowIdOf(t);
      const m = await maintainTable(t.deps(), CLICKS, {
        steps: ALL_STEPS,
        retainLast: 1,
        expireOlderThanMs: 0,
        orphansOlderThanMs: 0,
      });
      expect(m.skipped).toEqual([]);
      expect(m.failed).toEqual([]);
      expect(m.compaction).toMatchObject({ filesRewritten: 2, filesWritten: 1, rowsAfter: 14n });
      const after2 = await lineageOf(t.wh, CLICKS, 'id');
      expect(lineageFor(after2, after2.byKey.keys())).toEqual(want2);
      // A file kept keeps its first_row_id, written into its entry (spec §First Row ID Inheritance).
      const kept = after2.files.filter((f) => before2.files.some((b) => b.path === f.path));
      expect(kept).toHaveLength(1);
      expect(kept[0]!.status).toBe(0);
      expect(kept[0]!.firstRowId).toBe(before2.files.find((b) => b.path === kept[0]!.path)!.firstRowId);
      expect(await liveRows(t.wh, CLICKS)).toEqual(rowsBefore2);
      expect((await t.wh.catalog.loadTable(CLICKS)).metadata['next-row-id']! >= nextRowId2).toBe(true);
      await expectWarehouseValid(t.wh);
    } finally {
      t.cleanup();
    }
  });

  it('a manifest rewrite keeps every file’s first_row_id, so no row id changes', async () => {
    const t = await smallLoads(5, 4, { formatVersion: 3 });
    try {
      const before = await lineageOf(t.wh, CLICKS, 'id');
      expect(before.manifests).toHaveLength(5);
      const nextRowId = await nextRowIdOf(t);
      const r = await rewriteManifests(t.deps(), await t.wh.catalog.loadTable(CLICKS));
      expect(r).toMatchObject({ manifestsBefore: 5, manifestsAfter: 1 });
      const after = await lineageOf(t.wh, CLICKS, 'id');
      expect(after.manifests).toHaveLength(1);
      expect(lineageFor(after, after.byKey.keys())).toEqual(lineageFor(before, t.ids.map(String)));
      const meta = (await t.wh.catalog.loadTable(CLICKS)).metadata;
      // The merged manifest is assigned a range (its existing rows), which its files do not use.
      expect(expectRowIdBookkeeping(meta, nextRowId, after)).toBe(20n);
      await expectWarehouseValid(t.wh);
    } finally {
      t.cleanup();
    }
  });

  it('a table upgraded to v3: rows of files from before the upgrade get ids; a position delete still counts', async () => {
    const t = await smallLoads(3, 3);
    try {
      // A v2 position delete (valid in v3 once there), then the upgrade.
      const v2 = await t.wh.catalog.loadTable(CLICKS);
      const first = (await lineageOf(t.wh, CLICKS, 'id')).files.find((f) => f.recordCount === 2n)!;
      await commitDeletes(t.deps(), CLICKS, { kind: 'position', filePath: first.path, positions: [0n] });
      const now = await t.wh.catalog.loadTable(CLICKS);
      await t.wh.catalog.commitTable(
        now,
        applyUpdates(now.metadata, [{ action: 'upgrade-format-version', 'format-version': 3 }], {
          nowMs: t.clock.nowMs(),
          metadataLocation: now.metadataLocation,
        }),
      );
      expect(v2.metadata['format-version']).toBe(2);
      // No snapshot has assigned ids yet: every row id reads null.
      const upgraded = await lineageOf(t.wh, CLICKS, 'id');
      expect([...upgraded.byKey.values()].every((l) => l.rowId === null && l.seq === null)).toBe(true);

      // A v3 append assigns ids to the old files too (spec §Row Lineage for Upgraded Tables).
      await t.more(3);
      const before = await lineageOf(t.wh, CLICKS, 'id');
      expect([...before.byKey.values()].every((l) => l.rowId !== null)).toBe(true);
      const keys = await liveKeys(t.wh, CLICKS, 'id');
      expect(keys).toHaveLength(11);
      const want = lineageFor(before, keys);
      // The rows after the deleted position keep first_row_id + 1, + 2 ... of their old file.
      const old = before.files.find((f) => f.path === first.path)!;
      const survivors = [...old.rows.entries()].filter(([k]) => keys.includes(k));
      expect(survivors.map(([, l]) => l.rowId)).toEqual([old.firstRowId! + 1n]);
      const rowsBefore = await liveRows(t.wh, CLICKS);
      const nextRowId = await nextRowIdOf(t);

      const r = await maintainTable(t.deps(), CLICKS, {
        steps: ALL_STEPS,
        retainLast: 1,
        expireOlderThanMs: 0,
        orphansOlderThanMs: 0,
      });
      expect(r.skipped).toEqual([]);
      expect(r.failed).toEqual([]);
      expect(r.compaction).toMatchObject({ filesRewritten: 8, filesWritten: 2, deleteFilesRemoved: 1 });
      const after = await lineageOf(t.wh, CLICKS, 'id');
      expect(lineageFor(after, after.byKey.keys())).toEqual(want);
      expect(await liveRows(t.wh, CLICKS)).toEqual(rowsBefore);
      expect((await t.wh.catalog.loadTable(CLICKS)).metadata['next-row-id']! > nextRowId).toBe(true);
      await expectWarehouseValid(t.wh);
    } finally {
      t.cleanup();
    }
  });

  it('compacts rows that never had an id (upgraded, no commit since): they take the new files’ ids', async () => {
    const t = await smallLoads(3, 3);
    try {
      const now = await t.wh.catalog.loadTable(CLICKS);
      await t.wh.catalog.commitTable(
        now,
        applyUpdates(now.metadata, [{ action: 'upgrade-format-version', 'format-version': 3 }], {
          nowMs: t.clock.nowMs(),
          metadataLocation: now.metadataLocation,
        }),
      );
      const rowsBefore = await liveRows(t.wh, CLICKS);
      const r = await maintainTable(t.deps(), CLICKS, { steps: { ...COMPACT_ONLY } });
      expect(r.skipped).toEqual([]);
      expect(r.compaction).toMatchObject({ filesRewritten: 6, filesWritten: 2 });
      const after = await lineageOf(t.wh, CLICKS, 'id');
      const meta = (await t.wh.catalog.loadTable(CLICKS)).metadata;
      const snap = currentSnapshot(meta)!;
      // Written as nulls, so inherited: the new file's first_row_id + position, its sequence number.
      for (const f of after.files) {
        expect(f.materialized).toEqual({ rowId: false, seq: false });
        expect(f.dataSequenceNumber).toBe(snap['sequence-number']! - 1n);
        expect([...f.rows.values()].map((l) => l.rowId)).toEqual(
          Array.from({ length: Number(f.recordCount) }, (_, i) => f.firstRowId! + BigInt(i)),
        );
      }
      expectRowIdBookkeeping(meta, 0n, after);
      expect(await liveRows(t.wh, CLICKS)).toEqual(rowsBefore);
      await expectWarehouseValid(t.wh);
    } finally {
      t.cleanup();
    }
  });

  it('an append landing while compacting: the retry takes the new next-row-id, and every row keeps its id', async () => {
    const t = await smallLoads(4, 5, { formatVersion: 3 });
    try {
      const base = await t.wh.catalog.loadTable(CLICKS);
      let raced: TableLineage | undefined;
      const catalog = racing(t.wh.catalog, async () => {
        await t.more(3, 0);
        raced = await lineageOf(t.wh, CLICKS, 'id');
      });
      const r = await compact(
        t.deps({ catalog }),
        base,
        thresholdsFor(base.metadata, { steps: COMPACT_ONLY }),
        t.deps().liveRows,
      );
      expect(r).toMatchObject({ filesRewritten: 8, filesWritten: 2 });
      expect(raced).toBeDefined();
      const want = lineageFor(raced!, t.ids.map(String));
      const nextRowId = 23n; // four loads of 5 rows, then the append's 3
      const after = await lineageOf(t.wh, CLICKS, 'id');
      expect(lineageFor(after, after.byKey.keys())).toEqual(want);
      const meta = (await t.wh.catalog.loadTable(CLICKS)).metadata;
      expect(expectRowIdBookkeeping(meta, nextRowId, after)).toBe(20n);
      await expectWarehouseValid(t.wh);
    } finally {
      t.cleanup();
    }
  });

  it('gives up when a commit meanwhile assigned row ids to an input it read without (upgraded table)', async () => {
    const t = await smallLoads(3, 3);
    try {
      const now = await t.wh.catalog.loadTable(CLICKS);
      await t.wh.catalog.commitTable(
        now,
        applyUpdates(now.metadata, [{ action: 'upgrade-format-version', 'format-version': 3 }], {
          nowMs: t.clock.nowMs(),
          metadataLocation: now.metadataLocation,
        }),
      );
      const base = await t.wh.catalog.loadTable(CLICKS);
      const catalog = racing(t.wh.catalog, () => t.more(1, 0));
      const r = await compact(
        t.deps({ catalog }),
        base,
        thresholdsFor(base.metadata, { steps: COMPACT_ONLY }),
        t.deps().liveRows,
      );
      expect(r.skipped).toMatch(/was assigned row ids while compacting/);
      const after = await lineageOf(t.wh, CLICKS, 'id');
      expect(after.files).toHaveLength(7);
      expect([...after.byKey.values()].every((l) => l.rowId !== null)).toBe(true);
      await expectWarehouseValid(t.wh);
    } finally {
      t.cleanup();
    }
  });

  it('leaves a file with a deletion vector (not read yet) and its vector as they are, compacts the rest', async () => {
    const t = await smallLoads(4, 4, { formatVersion: 3 });
    try {
      const before = await lineageOf(t.wh, CLICKS, 'id');
      const target = before.files[0]!;
      await commitDeletes(t.deps(), CLICKS, { kind: 'dv', filePath: target.path, positions: [1n] });
      const rowsBefore = await liveRows(t.wh, CLICKS);
      expect(rowsBefore.rows).toHaveLength(15);
      const keys = await liveKeys(t.wh, CLICKS, 'id');
      const want = lineageFor(await lineageOf(t.wh, CLICKS, 'id'), keys);

      const base = await t.wh.catalog.loadTable(CLICKS);
      const r = await compact(
        t.deps(),
        base,
        thresholdsFor(base.metadata, { steps: COMPACT_ONLY }),
        t.deps().liveRows,
      );
      // Its partition's three other files make one; the other partition's four another.
      expect(r).toMatchObject({ filesRewritten: 7, filesWritten: 2, deleteFilesRemoved: 0 });
      expect(r.notes).toEqual([
        '1 files with deletion vectors left as they are (Floe does not read them yet)',
      ]);
      const after = await lineageOf(t.wh, CLICKS, 'id');
      expect(after.files.map((f) => f.path)).toContain(target.path);
      expect(lineageFor(after, keys)).toEqual(want);
      const table = await t.wh.catalog.loadTable(CLICKS);
      const rows = await readTableRows({
        metadataJson: await t.wh.store.get(table.metadataLocation),
        read: (u) => t.wh.store.get(u),
      });
      expect(rows.stats).toMatchObject({ deletionVectors: 1, deletedByPosition: 1 });
      expect(await liveRows(t.wh, CLICKS)).toEqual(rowsBefore);
      await expectWarehouseValid(t.wh);
    } finally {
      t.cleanup();
    }
  });

  it('an upsert table: rows identical, equality deletes applied and gone, row lineage kept', async () => {
    const tmp = tempDir('floe-compact-v3-upsert-');
    try {
      const wh = fileWarehouse(tmp.dir);
      const config = parseConfig({
        formatVersion: 3,
        routing: { defaultTable: 't' },
        upsert: { t: { key: ['id'], operationField: 'op' } },
      });
      // `n` numbers every change, so each data row (every version of a key) is told apart.
      let n = 0;
      const change = (id: number, op = 'u') => JSON.stringify({ op, id, n: ++n, name: `v${n}` });
      const batches = [
        [1, 2, 3, 4, 5, 6].map((id) => change(id, 'c')),
        [change(2), change(3, 'd'), change(7, 'c'), change(2)],
        [change(5), change(3, 'c'), change(6, 'd'), change(1)],
        [change(4), change(7, 'd'), change(8, 'c')],
      ];
      for (const [i, lines] of batches.entries()) {
        const run = await load(wh, [{ name: `part-${i}.ndjson`, lines }], { config });
        expect(run.report.failures).toEqual([]);
        expect(run.dead).toEqual([]);
      }
      const [namespace] = await wh.catalog.listNamespaces();
      const [name] = await wh.catalog.listTables(namespace!);
      const id = { namespace: namespace!, name: name! };
      const table = await wh.catalog.loadTable(id);
      expect(table.metadata['format-version']).toBe(3);

      const rowsBefore = await liveRows(wh, id);
      const queryBefore = await queried(wh, id);
      const keys = await liveKeys(wh, id, 'n');
      expect(keys).toHaveLength(6); // keys 1, 2, 3, 4, 5, 8
      const before = await lineageOf(wh, id, 'n');
      const want = lineageFor(before, keys);
      expect(Object.values(want).every((l) => l.rowId !== null)).toBe(true);

      const r = await maintainTable(
        {
          catalog: wh.catalog,
          store: wh.store,
          clock: fixedClock(NOW_MS + 86_400_000),
          ids: seededIds(77),
          liveRows: liveRowsReader(wh.store),
          sleep: async () => undefined,
        },
        id,
        { steps: ALL_STEPS, retainLast: 1, expireOlderThanMs: 0, orphansOlderThanMs: 0 },
      );
      expect(r.skipped).toEqual([]);
      expect(r.failed).toEqual([]);
      expect(r.before.deleteFiles).toBeGreaterThan(0);
      expect(r.after.deleteFiles).toBe(0);
      expect(r.after.dataFiles).toBe(1);

      expect(await liveRows(wh, id)).toEqual(rowsBefore);
      expect(await queried(wh, id)).toEqual(queryBefore);
      const after = await lineageOf(wh, id, 'n');
      expect(lineageFor(after, after.byKey.keys())).toEqual(want);
      await expectWarehouseValid(wh);
    } finally {
      tmp.cleanup();
    }
  });
});
