/**
 * PER_TABLE_METRICS (handlers/table-metrics.ts): parsing, and which per-table records and totals
 * each setting publishes.
 */
import { describe, expect, it } from 'vitest';
import { ErrorKind } from '../../../lambdas/src/errors.ts';
import {
  formatPerTableMetrics,
  OTHER_TABLES,
  parsePerTableMetrics,
  perTableMetricsFromEnv,
  type TableMetricEntry,
  type TableMetricSpec,
  tableMetricGroups,
} from '../../../lambdas/src/handlers/table-metrics.ts';

const SPECS: TableMetricSpec[] = [
  ['Rows', 'Count', 'sum'],
  ['Latency', 'Milliseconds', 'max'],
  ['AverageBytes', 'Bytes', 'min'],
];
const entries: TableMetricEntry[] = [
  { table: 'a', volume: 10, values: { Rows: 10, Latency: 5, AverageBytes: 100 } },
  { table: 'b', volume: 30, values: { Rows: 30, Latency: 2, AverageBytes: 50 } },
  { table: 'c', volume: 20, values: { Rows: 20, Latency: 9 } },
];

describe('PER_TABLE_METRICS', () => {
  it('parses on, off and top:N; anything else is refused', () => {
    expect(parsePerTableMetrics('on')).toEqual({ mode: 'on' });
    expect(parsePerTableMetrics(' off ')).toEqual({ mode: 'off' });
    expect(parsePerTableMetrics('top:25')).toEqual({ mode: 'top', n: 25 });
    for (const bad of ['top:0', 'top:1001', 'top', 'top:x', 'ON', 'all', ''])
      expect(parsePerTableMetrics(bad), bad).toBeUndefined();
    expect(formatPerTableMetrics({ mode: 'top', n: 7 })).toBe('top:7');
    expect(perTableMetricsFromEnv({})).toEqual({ mode: 'on' });
    expect(perTableMetricsFromEnv({ PER_TABLE_METRICS: 'top:3' })).toEqual({ mode: 'top', n: 3 });
    expect(() => perTableMetricsFromEnv({ PER_TABLE_METRICS: 'some' })).toThrow(
      expect.objectContaining({
        kind: ErrorKind.ConfigInvalid,
        message: expect.stringContaining('PER_TABLE_METRICS'),
      }),
    );
  });

  it('totals combine each metric its own way, whatever the setting', () => {
    for (const mode of [{ mode: 'on' }, { mode: 'off' }, { mode: 'top', n: 1 }] as const) {
      expect(tableMetricGroups(mode, SPECS, entries).totals).toEqual([
        ['Rows', 'Count', 60],
        ['Latency', 'Milliseconds', 9],
        ['AverageBytes', 'Bytes', 50],
      ]);
    }
    // A metric no table had is left out of the totals.
    expect(tableMetricGroups({ mode: 'on' }, SPECS, []).totals).toEqual([]);
  });

  it('off: nothing per table; on: every table', () => {
    expect(tableMetricGroups({ mode: 'off' }, SPECS, entries).perTable).toEqual([]);
    const on = tableMetricGroups({ mode: 'on' }, SPECS, entries).perTable;
    expect(on.map((g) => g.dimensions?.table)).toEqual(['a', 'b', 'c']);
    expect(on[2]!.metrics).toEqual([
      ['Rows', 'Count', 20],
      ['Latency', 'Milliseconds', 9],
    ]);
  });

  it('top:N: the N largest by volume, then (other) combining the rest; no (other) when all fit', () => {
    const top = tableMetricGroups({ mode: 'top', n: 1 }, SPECS, entries).perTable;
    expect(top.map((g) => g.dimensions?.table)).toEqual(['b', OTHER_TABLES]);
    expect(top[1]!.metrics).toEqual([
      ['Rows', 'Count', 30],
      ['Latency', 'Milliseconds', 9],
      ['AverageBytes', 'Bytes', 100],
    ]);
    expect(
      tableMetricGroups({ mode: 'top', n: 3 }, SPECS, entries).perTable.map((g) => g.dimensions?.table),
    ).toEqual(['a', 'b', 'c']);
  });

  it('a table seen in several passes is one table: its values combined, ranked by its whole volume', () => {
    const passes: TableMetricEntry[] = [
      ...entries,
      { table: 'a', volume: 25, values: { Rows: 25, Latency: 7, AverageBytes: 80 } },
    ];
    const on = tableMetricGroups({ mode: 'on' }, SPECS, passes);
    expect(on.perTable.map((g) => g.dimensions?.table)).toEqual(['a', 'b', 'c']);
    expect(on.perTable[0]!.metrics).toEqual([
      ['Rows', 'Count', 35],
      ['Latency', 'Milliseconds', 7],
      ['AverageBytes', 'Bytes', 80],
    ]);
    // a (35 rows over two passes) now outranks b (30).
    const top = tableMetricGroups({ mode: 'top', n: 1 }, SPECS, passes);
    expect(top.perTable.map((g) => g.dimensions?.table)).toEqual(['a', OTHER_TABLES]);
    expect(top.totals).toEqual([
      ['Rows', 'Count', 85],
      ['Latency', 'Milliseconds', 9],
      ['AverageBytes', 'Bytes', 50],
    ]);
  });
});
