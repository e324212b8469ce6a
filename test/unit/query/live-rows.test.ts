/**
 * Live rows (after position and equality deletes) against the fixtures' README counts, and the rows
 * written (the summary's total-records) next to them.
 */
import { describe, expect, it } from 'vitest';
import { currentSnapshot } from '../../../lambdas/src/iceberg/table-metadata.ts';
import { countRows } from '../../../lambdas/src/query/live-rows.ts';
import { rowCountsFromSummary } from '../../../lambdas/src/query/summary-rows.ts';
import { loadFixtureTable } from '../../helpers/fixtures.ts';

describe('countRows', () => {
  it.each([
    // README: "v2/v3 21, v4 15, v5 15 (21 + 1 updated - 6 positional - 1 equality)"
    ['icebird-java-bunnies', 2, 21n, 21n],
    ['icebird-java-bunnies', 4, 15n, 21n],
    ['icebird-java-bunnies', 5, 15n, 22n],
    // README: v3 20 (one position delete); v2 of the equality-delete table: 4 rows, no deletes.
    ['icebird-spark-bunnies', 3, 20n, 21n],
    ['duckdb-equality-deletes-partitioned', 6, 3n, 6n],
    ['icebird-athena-example', 0, 0n, 0n],
  ] as const)('%s v%i: %i live of %i written', async (name, version, live, written) => {
    const fx = loadFixtureTable(name, version);
    const counts = await countRows(fx.metadata, fx);
    expect(counts).toEqual({ live, written });
    const summary = currentSnapshot(fx.metadata)?.summary['total-records'];
    if (summary !== undefined) expect(BigInt(summary)).toBe(written);
  });

  it('trusts the summary alone only when it shows no delete file', () => {
    expect(rowCountsFromSummary(loadFixtureTable('icebird-java-bunnies', 2).metadata)).toEqual({
      live: 21n,
      written: 21n,
    });
    expect(rowCountsFromSummary(loadFixtureTable('icebird-java-bunnies', 5).metadata)).toBeUndefined();
  });
});
