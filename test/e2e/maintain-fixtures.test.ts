/**
 * `floe maintain` on tables other engines wrote (Spark, Java, PyIceberg, Athena, DuckDB's test
 * tables: the checked-in fixtures), each copied into a scratch folder and named by path as a user
 * would: every step at its most aggressive. The rows a reader sees (deletes applied) are the same
 * before and after, every file the table names exists, the format version is kept, steps Floe
 * cannot do on a table are skipped with a reason, and only files no metadata reaches are deleted.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { planScan } from '../../lambdas/src/iceberg/scan.ts';
import { FIXTURES_ROOT, fixtureTableNames } from '../helpers/fixtures.ts';
import { expectValidTable, localTableIo } from '../helpers/iceberg-validator.ts';
import { BIN, runNode } from '../helpers/run-node.ts';
import { copyTableInto, queryWarehouseTable, rowMultiset } from '../helpers/warehouse-copy.ts';

const scratch: string[] = [];
afterAll(async () => {
  for (const d of scratch) await fs.rm(d, { recursive: true, force: true });
});

/** Defects the writers left in files that survive maintenance (see the fixture READMEs). */
const KNOWN_DEFECTS: Record<string, string[]> = {
  'duckdb-partition-evolution': ['file.size_mismatch'],
  'duckdb-v1-pyiceberg-merch': ['entry.deleted_snapshot_id'],
};

/** What each fixture's report must say (steps Floe skips on it, and why; or what it did). */
const SKIPS: Record<string, RegExp | undefined> = {
  'duckdb-v1-legacy-manifests-field': /compaction\s+skipped: the current snapshot lists its manifests inline/,
  // Format v3 (upgraded from v1, no row ids assigned yet): compacted, its rows get ids.
  'duckdb-v1-pyiceberg-merch': /compaction\s+2 files → 1 \(4 rows/,
};

describe.each(fixtureTableNames())('floe maintain %s (a copy)', (fixture) => {
  it('keeps every row a reader sees, names only files that exist, and deletes only unreached ones', async () => {
    const dir = await fs.mkdtemp(join(tmpdir(), 'floe-maintain-fixture-'));
    scratch.push(dir);
    const id = { namespace: 'fx', name: fixture.replaceAll('-', '_') };
    const tableDir = await copyTableInto(join(FIXTURES_ROOT, fixture), dir, id);
    const wh = openWarehouse(dir);
    const before = await queryWarehouseTable(wh, id, 'SELECT * FROM t');
    const formatVersion = (await wh.catalog.loadTable(id)).metadata['format-version'];

    const run = await runNode(
      [
        BIN,
        'maintain',
        tableDir,
        '--retain-last',
        '1',
        '--expire-older-than',
        '0s',
        '--orphans-older-than',
        '0s',
      ],
      { FLOE_WAREHOUSE: undefined },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`fx.${id.name}`);
    if (SKIPS[fixture]) expect(run.stdout).toMatch(SKIPS[fixture]!);
    // The fixture's README is a file in the folder no metadata names (with 0s, an orphan).
    expect(run.stdout).toMatch(/orphans\s+deleted [1-9]\d* of \d+ files/);
    await expect(fs.access(join(tableDir, 'README.md'))).rejects.toThrow();

    const fresh = openWarehouse(dir);
    const after = await queryWarehouseTable(fresh, id, 'SELECT * FROM t');
    expect(after.columns).toEqual(before.columns);
    expect(rowMultiset(after.rows, after.columns)).toEqual(rowMultiset(before.rows, before.columns));
    const table = await fresh.catalog.loadTable(id);
    // Spec rules, checked by code that shares nothing with Floe's; the fixtures' own known defects
    // (their READMEs) are in files maintenance does not rewrite.
    await expectValidTable({
      metadataJson: await fresh.store.get(table.metadataLocation),
      metadataLocation: table.metadataLocation,
      ...localTableIo((u) => fresh.store.pathOf(u)),
      snapshots: 'all',
      knownDefects: KNOWN_DEFECTS[fixture] ?? [],
    });
    expect(table.metadata['format-version']).toBe(formatVersion);
    expect(table.metadata.snapshots.length).toBeLessThanOrEqual(1);
    const plan = await planScan(table.metadata, (u) => fresh.store.get(u));
    for (const t of plan.tasks) {
      expect(await fresh.store.exists(t.file.file_path), t.file.file_path).toBe(true);
      for (const d of t.deletes)
        expect(await fresh.store.exists(d.file.file_path), d.file.file_path).toBe(true);
    }
  });
});
