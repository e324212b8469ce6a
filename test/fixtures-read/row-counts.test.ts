/**
 * Every fixture table at every metadata version, planned and queried through IcebergQueryEngine.
 * Expected counts come from each fixture's README (written from the writers' own results), or,
 * for versions the README does not list, from facts of the metadata itself: no current snapshot ⇒
 * 0 rows; a snapshot with no delete files ⇒ its summary's `total-records`.
 */
import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../lambdas/src/errors.ts';
import { currentSnapshot } from '../../lambdas/src/iceberg/table-metadata.ts';
import { fixtureTableNames, loadFixtureTable, metadataFiles, queryFixture } from '../helpers/fixtures.ts';

/** README "Expected rows" per table, keyed by metadata version (vN / 0000N-). */
const README_ROWS: Record<string, Record<number, number>> = {
  'duckdb-equality-deletes-partitioned': { 2: 4, 3: 3, 4: 2, 5: 4, 6: 3 },
  // "4 live equality-delete files at v7, 2 rows left of 6"
  'duckdb-equality-deletes': { 7: 2 },
  'duckdb-lineitem-iceberg': { 1: 60175, 2: 51793 },
  'duckdb-partition-evolution': { 4: 6 },
  // "3 rows in 2 files"
  'duckdb-v1-legacy-manifests-field': { 2: 3 },
  // 00003 overwrite (4 rows); 00004 upgrades the same snapshot to v3.
  'duckdb-v1-pyiceberg-merch': { 3: 4, 4: 4 },
  'icebird-athena-example': { 1: 2 },
  'icebird-java-bunnies': { 2: 21, 3: 21, 4: 15, 5: 15 },
  'icebird-spark-bunnies': { 1: 21, 2: 21, 3: 20, 4: 20, 5: 20 },
  'icebird-spark-rename-column': { 2: 4, 3: 4 },
};

/** Current snapshots whose manifest list is not checked in (README "Known defect"). */
const MISSING_MANIFEST_LIST: Record<string, number[]> = { 'duckdb-equality-deletes': [3] };

function versionNumber(file: string): number {
  return Number((/^v(\d+)\./.exec(file) ?? /^(\d+)-/.exec(file))?.[1]);
}

const countSql = 'SELECT count(*) AS n FROM t';

describe.each(fixtureTableNames())('%s', (name) => {
  it('has a README expectation', () => {
    expect(README_ROWS[name]).toBeDefined();
  });

  for (const file of metadataFiles(name)) {
    const version = versionNumber(file);
    const expected = README_ROWS[name]?.[version];
    const table = loadFixtureTable(name, file);
    const snapshot = currentSnapshot(table.metadata);
    const summary = snapshot?.summary;
    const noDeletes =
      summary !== undefined &&
      summary['total-delete-files'] === '0' &&
      summary['total-position-deletes'] === '0' &&
      summary['total-equality-deletes'] === '0';

    if (MISSING_MANIFEST_LIST[name]?.includes(version)) {
      it(`${file}: fails with NotFound naming the missing manifest list`, async () => {
        const err = await queryFixture(name, file, countSql).catch((e: unknown) => e);
        expect(isFloeError(err, ErrorKind.NotFound)).toBe(true);
        expect((err as Error).message).toContain(String(snapshot?.['manifest-list']));
      });
      continue;
    }
    if (expected !== undefined) {
      it(`${file}: ${expected} rows (README)`, async () => {
        const { rows } = await queryFixture(name, file, countSql);
        expect(rows[0]?.n).toBe(BigInt(expected));
      });
    }
    if (snapshot === undefined) {
      it(`${file}: no current snapshot ⇒ 0 rows with the schema's columns`, async () => {
        const { columns, rows } = await queryFixture(name, file, 'SELECT * FROM t');
        expect(rows).toEqual([]);
        const schema = table.metadata.schemas.find((s) => s.schemaId === table.metadata['current-schema-id']);
        expect(columns).toEqual(schema?.fields.map((f) => f.name));
      });
    } else if (noDeletes && summary?.['total-records'] !== undefined) {
      it(`${file}: no delete files ⇒ summary total-records (${summary['total-records']})`, async () => {
        const { rows } = await queryFixture(name, file, countSql);
        expect(rows[0]?.n).toBe(BigInt(summary['total-records'] as string));
      });
    } else if (expected === undefined) {
      it(`${file}: reads (no stated row count)`, async () => {
        const { rows } = await queryFixture(name, file, countSql);
        expect(typeof rows[0]?.n).toBe('bigint');
      });
    }
  }
});
