import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_SLICES,
  fanOut,
  planSliceCount,
  sliceOfTable,
  tablesInSlices,
} from '../../../lambdas/src/app/commit-slices.ts';

const tableName = fc.stringMatching(/^[a-z][a-z0-9_.]{0,40}$/);

describe('commit slices', () => {
  it('the slices of a fan-out partition the tables: each table in exactly one, order kept', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(tableName, { maxLength: 200 }),
        fc.integer({ min: 1, max: 40 }),
        (tables, count) => {
          const { own, others } = fanOut(count);
          const parts = [own, ...others].map((s) => tablesInSlices(tables, s));
          expect(parts).toHaveLength(count);
          expect(parts.flat().sort()).toEqual([...tables].sort());
          for (const [i, part] of parts.entries()) {
            // Order within a slice is the listing's order.
            expect(part).toEqual(tables.filter((t) => sliceOfTable(t, count) === i));
          }
          // A set of several indexes is the union of its slices.
          const both = tablesInSlices(tables, { count, indexes: [0, count - 1] });
          expect(new Set(both)).toEqual(new Set([...parts[0]!, ...parts[count - 1]!]));
        },
      ),
    );
  });

  it('a table stays in its slice (stable across calls, within range)', () => {
    fc.assert(
      fc.property(tableName, fc.integer({ min: 1, max: 1000 }), (t, count) => {
        const i = sliceOfTable(t, count);
        expect(i).toBeGreaterThanOrEqual(0);
        expect(i).toBeLessThan(count);
        expect(sliceOfTable(t, count)).toBe(i);
      }),
    );
    expect(sliceOfTable('anything', 1)).toBe(0);
  });

  it('spreads real-looking table names about evenly', () => {
    const tables = Array.from({ length: 10_000 }, (_, i) => `tenant_${i}.orders`);
    const counts = new Array(10).fill(0);
    for (const t of tables) counts[sliceOfTable(t, 10)]++;
    for (const n of counts) expect(Math.abs(n - 1000)).toBeLessThan(150);
  });

  it('the slice count grows with the backlog, one slice per tablesPerSlice, up to maxSlices', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 100_000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 100 }),
        (backlog, per, max) => {
          const n = planSliceCount(backlog, { tablesPerSlice: per, maxSlices: max });
          expect(n).toBeGreaterThanOrEqual(1);
          expect(n).toBeLessThanOrEqual(max);
          if (n < max) expect(n * per).toBeGreaterThanOrEqual(backlog);
          if (n > 1) expect((n - 1) * per).toBeLessThan(backlog);
          expect(
            planSliceCount(backlog + per, { tablesPerSlice: per, maxSlices: max }),
          ).toBeGreaterThanOrEqual(n);
        },
      ),
    );
    expect(planSliceCount(0)).toBe(1);
    expect(planSliceCount(250)).toBe(1);
    expect(planSliceCount(251)).toBe(2);
    expect(planSliceCount(1_000_000)).toBe(DEFAULT_MAX_SLICES);
  });
});
