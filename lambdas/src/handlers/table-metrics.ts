/**
 * Per-table EMF metrics, at a cost the stack chooses (`PER_TABLE_METRICS`, CDK context
 * `perTableMetrics`, issue #14). Every metric name × dimension value is a CloudWatch custom metric
 * billed per month (prorated by the hour it receives data), and the number of tables is open-ended,
 * so the handlers publish per-table series as told:
 *
 * | `PER_TABLE_METRICS` | per-table EMF records (dimension `table`) |
 * |---|---|
 * | `on` (unset) | one per table |
 * | `off` | none |
 * | `top:N` | the N tables of largest volume in this invocation (rows staged, rows committed, data files; a table whose maintenance failed first), and one record for the rest, `table` = `(other)`, their values combined |
 *
 * Whatever the setting, every invocation publishes the totals of the same metrics over its tables
 * without the `table` dimension, in its run-level record: sums of counts and bytes, the maximum of
 * latencies, freshness and `SmallFiles` (the alarm asks whether *some* table has too many), the
 * minimum of `AverageFileBytes`; a metric no table had in the invocation is left out. The stack's
 * alarms read only these records.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import type { MetricGroup, MetricUnitName } from './runtime.ts';

export type PerTableMetrics =
  | { readonly mode: 'on' }
  | { readonly mode: 'off' }
  | { readonly mode: 'top'; readonly n: number };

export const PER_TABLE_METRICS_ENV = 'PER_TABLE_METRICS';
/** Largest N of `top:N`. */
export const MAX_TOP_TABLES = 1000;
/** The `table` dimension value of the tables beyond the top N (never a table name: parentheses). */
export const OTHER_TABLES = '(other)';

/** `on`, `off` or `top:N` (1 ≤ N ≤ 1000); undefined for anything else. */
export function parsePerTableMetrics(text: string): PerTableMetrics | undefined {
  const s = text.trim();
  if (s === 'on' || s === 'off') return { mode: s };
  const m = /^top:(\d{1,4})$/.exec(s);
  if (!m) return undefined;
  const n = Number(m[1]);
  return n >= 1 && n <= MAX_TOP_TABLES ? { mode: 'top', n } : undefined;
}

export function formatPerTableMetrics(p: PerTableMetrics): string {
  return p.mode === 'top' ? `top:${p.n}` : p.mode;
}

/** `PER_TABLE_METRICS` (unset or empty: `on`); a bad value is a ConfigInvalid error naming it. */
export function perTableMetricsFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
): PerTableMetrics {
  const v = env[PER_TABLE_METRICS_ENV];
  if (v === undefined || v.trim() === '') return { mode: 'on' };
  const p = parsePerTableMetrics(v);
  if (p === undefined) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `${PER_TABLE_METRICS_ENV}=${JSON.stringify(v)}: expected on, off or top:N (N from 1 to ${MAX_TOP_TABLES})`,
      { context: { variable: PER_TABLE_METRICS_ENV, value: v } },
    );
  }
  return p;
}

/** How a metric combines across tables (into the totals and the `(other)` record). */
export type Combine = 'sum' | 'max' | 'min';

/** One per-table metric: name, unit, how it combines. */
export type TableMetricSpec = readonly [name: string, unit: MetricUnitName, combine: Combine];

/** One table's values in one invocation. */
export interface TableMetricEntry {
  readonly table: string;
  /** What `top:N` ranks by (larger first; ties by table name). */
  readonly volume: number;
  /** Metric name → value; a metric missing here is not published for this table. */
  readonly values: Readonly<Record<string, number>>;
}

/** The per-table records the policy allows, and the totals for the run-level record. */
export function tableMetricGroups(
  policy: PerTableMetrics,
  specs: readonly TableMetricSpec[],
  entries: readonly TableMetricEntry[],
): { readonly perTable: MetricGroup[]; readonly totals: MetricGroup['metrics'] } {
  const totals = combine(specs, entries);
  if (policy.mode === 'off' || entries.length === 0) return { perTable: [], totals };
  // A table committed in several passes of one invocation is one table: its values combined.
  const merged = byTable(specs, entries);
  const group = (table: string, values: Readonly<Record<string, number>>): MetricGroup => ({
    dimensions: { table },
    metrics: specs
      .filter(([name]) => values[name] !== undefined)
      .map(([name, unit]) => [name, unit, values[name]!]),
  });
  if (policy.mode === 'on' || merged.length <= policy.n) {
    return { perTable: merged.map((e) => group(e.table, e.values)), totals };
  }
  const ranked = [...merged].sort((a, b) => b.volume - a.volume || (a.table < b.table ? -1 : 1));
  const top = ranked.slice(0, policy.n);
  const rest = ranked.slice(policy.n);
  const other = Object.fromEntries(combine(specs, rest).map(([name, , value]) => [name, value]));
  return { perTable: [...top.map((e) => group(e.table, e.values)), group(OTHER_TABLES, other)], totals };
}

/** One entry per table: the values of its entries combined as `specs` say, volumes summed. */
function byTable(
  specs: readonly TableMetricSpec[],
  entries: readonly TableMetricEntry[],
): TableMetricEntry[] {
  const groups = new Map<string, TableMetricEntry[]>();
  for (const e of entries) {
    const group = groups.get(e.table);
    if (group === undefined) groups.set(e.table, [e]);
    else group.push(e);
  }
  if (groups.size === entries.length) return [...entries];
  return [...groups].map(([table, es]) =>
    es.length === 1
      ? es[0]!
      : {
          table,
          volume: es.reduce((n, e) => n + e.volume, 0),
          values: Object.fromEntries(combine(specs, es).map(([name, , value]) => [name, value])),
        },
  );
}

function combine(
  specs: readonly TableMetricSpec[],
  entries: readonly TableMetricEntry[],
): MetricGroup['metrics'] {
  const out: (readonly [string, MetricUnitName, number])[] = [];
  for (const [name, unit, how] of specs) {
    const values = entries.map((e) => e.values[name]).filter((v): v is number => v !== undefined);
    // A metric no table had this run (nothing committed, no compaction report) is not published.
    if (values.length === 0) continue;
    const value =
      how === 'sum'
        ? values.reduce((a, b) => a + b, 0)
        : how === 'max'
          ? Math.max(...values)
          : Math.min(...values);
    out.push([name, unit, value]);
  }
  return out;
}
