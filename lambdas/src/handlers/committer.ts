/**
 * The committer Lambda (DESIGN §1, §4, §5): invoked on a schedule, it commits every table with
 * staged work (each under its lease, owned by the invocation's request id) and starts no table
 * once the time left falls below a reserve, so a commit in progress has time to finish; the
 * tables it did not start are left for the next run (`deferred`).
 *
 * A table that fails is logged at error level and counted, never thrown: its staged work stays in
 * the ledger and the next scheduled run retries it. An error of the whole run (the ledger
 * unreachable) is thrown.
 *
 * Metrics (namespace `Floe`): per table (dimension `table`, as `PER_TABLE_METRICS` allows:
 * table-metrics.ts) `CommitLatency` (ms), `RowsCommitted`, `Freshness` (ms: commit time − arrival
 * of the oldest committed record), for upsert tables `RowsUpserted` and `RowsDeleted` (keys whose
 * last change upserted / deleted a row); per reason (dimension `reason`) `DeadLetters` found while
 * rewriting pending records; per run `TablesCommitted`, `CommitFailures`, `TablesLocked`,
 * `DeferredTables` and the totals of the per-table metrics (`RunsSkipped` for a run that found
 * another one running: run-lease.ts).
 */
import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { type CommitterRun, runCommitter, type TableCommitResult } from '../app/committer.ts';
import { readSettings } from './env.ts';
import { type HandlerOptions, metricsNamespace } from './ingest.ts';
import { withRunLease } from './run-lease.ts';
import {
  awsRuntime,
  errorMessage,
  errorSummary,
  type GetRuntime,
  type LambdaContext,
  lazyRuntime,
  type MetricGroup,
  publishGroups,
  runReserve,
} from './runtime.ts';
import {
  perTableMetricsFromEnv,
  type TableMetricEntry,
  type TableMetricSpec,
  tableMetricGroups,
} from './table-metrics.ts';

export interface CommitterHandlerOptions extends HandlerOptions {
  /** Share of the remaining time kept in reserve (default 0.3). */
  readonly reserveFraction?: number;
  /** The reserve is at least this long (default 10 s). */
  readonly minReserveMs?: number;
}

export interface CommitterSummary {
  readonly owner: string;
  readonly committed: readonly string[];
  readonly nothingToCommit: number;
  readonly locked: readonly string[];
  readonly failed: readonly string[];
  readonly deferred: readonly string[];
  readonly rows: number;
  readonly durationMs: number;
  /** Set when another run held the committer's run lease: this one did nothing. */
  readonly skipped?: 'another run in progress';
}

export type CommitterHandler = (event?: unknown, context?: LambdaContext) => Promise<CommitterSummary>;

export function makeCommitterHandler(
  getRuntime: GetRuntime,
  opts: CommitterHandlerOptions = {},
): CommitterHandler {
  const logger = opts.logger ?? new Logger({ serviceName: 'floe-committer' });
  const metrics =
    opts.metrics ?? new Metrics({ namespace: metricsNamespace(), serviceName: 'floe-committer' });
  const reserveFraction = opts.reserveFraction ?? 0.3;
  const minReserveMs = opts.minReserveMs ?? 10_000;
  const perTable = opts.perTableMetrics ?? { mode: 'on' };
  return async (_event, context) => {
    const started = Date.now();
    const owner = context?.awsRequestId ?? `committer-${randomUUID()}`;
    logger.resetKeys();
    logger.appendKeys({ owner });
    // Per-table values, published when the run ends as PER_TABLE_METRICS allows.
    const tables: TableMetricEntry[] = [];
    try {
      let run: CommitterRun;
      let deadlineMs: number | undefined;
      try {
        const runtime = await getRuntime();
        const deps = runtime.committerDeps(owner);
        const remaining = context?.getRemainingTimeInMillis?.();
        if (remaining !== undefined)
          deadlineMs = runReserve(
            deps.clock.nowMs(),
            remaining,
            reserveFraction,
            minReserveMs,
          ).startDeadlineMs;
        const outcome = await withRunLease(deps.lock, 'committer', owner, remaining, () =>
          runCommitter(deps, {
            ...(runtime.commitConcurrency === undefined ? {} : { concurrency: runtime.commitConcurrency }),
            ...(deadlineMs === undefined ? {} : { startDeadlineMs: deadlineMs }),
            onTable: (r) => {
              logTable(logger, r);
              publishGroups(metrics, deadLetterMetrics(r));
              const entry = tableEntry(r, deps.clock.nowMs());
              if (entry !== undefined) tables.push(entry);
            },
          }),
        );
        if (!outcome.ran) {
          logger.info('another committer run holds the run lease: nothing to do');
          publishGroups(metrics, [{ metrics: [['RunsSkipped', 'Count', 1]] }]);
          return {
            ...summaryOf(owner, { tables: [], deferred: [] }, started),
            skipped: 'another run in progress',
          };
        }
        run = outcome.value;
      } catch (e) {
        logger.error('committer run failed', { error: errorSummary(e) });
        const t = tableMetricGroups(perTable, COMMIT_TABLE_METRICS, tables);
        publishGroups(metrics, [...t.perTable, { metrics: [['RunErrors', 'Count', 1], ...t.totals] }]);
        throw e;
      }
      const summary = summaryOf(owner, run, started);
      const level = summary.failed.length > 0 ? 'warn' : 'info';
      logger[level]('committer run', { ...summary, ...(deadlineMs === undefined ? {} : { deadlineMs }) });
      const t = tableMetricGroups(perTable, COMMIT_TABLE_METRICS, tables);
      publishGroups(metrics, [
        ...t.perTable,
        {
          metrics: [
            ['TablesCommitted', 'Count', summary.committed.length],
            ['CommitFailures', 'Count', summary.failed.length],
            ['TablesLocked', 'Count', summary.locked.length],
            ['DeferredTables', 'Count', summary.deferred.length],
            ...t.totals,
          ],
        },
      ]);
      return summary;
    } finally {
      logger.resetKeys();
    }
  };
}

function summaryOf(
  owner: string,
  run: Pick<CommitterRun, 'tables' | 'deferred'>,
  started: number,
): CommitterSummary {
  const of = (s: TableCommitResult['status']) => run.tables.filter((t) => t.status === s);
  return {
    owner,
    committed: of('committed').map((t) => t.table),
    nothingToCommit: of('nothing-to-commit').length,
    locked: of('locked').map((t) => t.table),
    failed: of('failed').map((t) => t.table),
    deferred: run.deferred,
    rows: run.tables.reduce((n, t) => n + t.rows, 0),
    durationMs: Date.now() - started,
  };
}

function logTable(logger: Logger, r: TableCommitResult): void {
  const attrs = {
    table: r.table,
    status: r.status,
    created: r.created,
    entries: r.entries,
    rows: r.rows,
    dataFiles: r.dataFiles,
    rewritten: r.rewritten,
    ...(r.upserts ? { upserted: r.upserts.upserted, deleted: r.upserts.deleted } : {}),
    deadLetters: r.deadLetters,
    schemaChanges: r.schemaChanges,
    ...(r.snapshotId === undefined ? {} : { snapshotId: r.snapshotId.toString() }),
    attempts: r.attempts,
    durationMs: r.durationMs,
    ...(r.oldestArrivalMs === undefined ? {} : { oldestArrivalMs: r.oldestArrivalMs }),
    ...(r.error === undefined ? {} : { error: errorSummary(r.error), errorMessage: errorMessage(r.error) }),
  };
  if (r.status === 'failed') logger.error(`commit of ${r.table} failed, the next run retries`, attrs);
  else logger.info(`table ${r.table}: ${r.status}`, attrs);
}

/** The per-table metrics of a committed table, and how they combine across tables. */
const COMMIT_TABLE_METRICS: readonly TableMetricSpec[] = [
  ['CommitLatency', 'Milliseconds', 'max'],
  ['RowsCommitted', 'Count', 'sum'],
  ['RowsUpserted', 'Count', 'sum'],
  ['RowsDeleted', 'Count', 'sum'],
  ['Freshness', 'Milliseconds', 'max'],
];

function tableEntry(r: TableCommitResult, nowMs: number): TableMetricEntry | undefined {
  if (r.status !== 'committed') return undefined;
  return {
    table: r.table,
    volume: r.rows,
    values: {
      CommitLatency: r.durationMs,
      RowsCommitted: r.rows,
      ...(r.upserts ? { RowsUpserted: r.upserts.upserted, RowsDeleted: r.upserts.deleted } : {}),
      ...(r.oldestArrivalMs === undefined ? {} : { Freshness: Math.max(0, nowMs - r.oldestArrivalMs) }),
    },
  };
}

function deadLetterMetrics(r: TableCommitResult): MetricGroup[] {
  return Object.entries(r.deadLetters).map(([reason, n]) => ({
    dimensions: { reason },
    metrics: [['DeadLetters', 'Count', n]],
  }));
}

let lazy: CommitterHandler | undefined;

/** The Lambda entry point: the environment is read and the AWS clients built on the first invocation. */
export const handler: CommitterHandler = (event, context) => {
  lazy ??= makeCommitterHandler(
    lazyRuntime(() => awsRuntime(readSettings())),
    {
      perTableMetrics: perTableMetricsFromEnv(),
    },
  );
  return lazy(event, context);
};
