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
 * Metrics (namespace `Floe`): per table (dimension `table`) `CommitLatency` (ms), `RowsCommitted`,
 * `Freshness` (ms: commit time − arrival of the oldest committed record); per reason (dimension
 * `reason`) `DeadLetters` found while rewriting pending records; per run `TablesCommitted`,
 * `CommitFailures`, `TablesLocked`, `DeferredTables`.
 */
import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { type CommitterRun, runCommitter, type TableCommitResult } from '../app/committer.ts';
import { readSettings } from './env.ts';
import { type HandlerOptions, metricsNamespace } from './ingest.ts';
import {
  awsRuntime,
  errorMessage,
  errorSummary,
  type GetRuntime,
  type LambdaContext,
  lazyRuntime,
  type MetricGroup,
  publishGroups,
} from './runtime.ts';

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
  return async (_event, context) => {
    const started = Date.now();
    const owner = context?.awsRequestId ?? `committer-${randomUUID()}`;
    logger.resetKeys();
    logger.appendKeys({ owner });
    try {
      let run: CommitterRun;
      let deadlineMs: number | undefined;
      try {
        const runtime = await getRuntime();
        const deps = runtime.committerDeps(owner);
        const remaining = context?.getRemainingTimeInMillis?.();
        if (remaining !== undefined) {
          const reserve = Math.max(minReserveMs, remaining * reserveFraction);
          deadlineMs = deps.clock.nowMs() + Math.max(0, remaining - reserve);
        }
        run = await runCommitter(deps, {
          ...(runtime.commitConcurrency === undefined ? {} : { concurrency: runtime.commitConcurrency }),
          ...(deadlineMs === undefined ? {} : { startDeadlineMs: deadlineMs }),
          onTable: (r) => {
            logTable(logger, r);
            publishGroups(metrics, tableMetrics(r, deps.clock.nowMs()));
          },
        });
      } catch (e) {
        logger.error('committer run failed', { error: errorSummary(e) });
        publishGroups(metrics, [{ metrics: [['RunErrors', 'Count', 1]] }]);
        throw e;
      }
      const of = (s: TableCommitResult['status']) => run.tables.filter((t) => t.status === s);
      const summary: CommitterSummary = {
        owner,
        committed: of('committed').map((t) => t.table),
        nothingToCommit: of('nothing-to-commit').length,
        locked: of('locked').map((t) => t.table),
        failed: of('failed').map((t) => t.table),
        deferred: run.deferred,
        rows: run.tables.reduce((n, t) => n + t.rows, 0),
        durationMs: Date.now() - started,
      };
      const level = summary.failed.length > 0 ? 'warn' : 'info';
      logger[level]('committer run', { ...summary, ...(deadlineMs === undefined ? {} : { deadlineMs }) });
      publishGroups(metrics, [
        {
          metrics: [
            ['TablesCommitted', 'Count', summary.committed.length],
            ['CommitFailures', 'Count', summary.failed.length],
            ['TablesLocked', 'Count', summary.locked.length],
            ['DeferredTables', 'Count', summary.deferred.length],
          ],
        },
      ]);
      return summary;
    } finally {
      logger.resetKeys();
    }
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

function tableMetrics(r: TableCommitResult, nowMs: number): MetricGroup[] {
  const groups: MetricGroup[] = Object.entries(r.deadLetters).map(([reason, n]) => ({
    dimensions: { reason },
    metrics: [['DeadLetters', 'Count', n]],
  }));
  if (r.status === 'committed') {
    groups.unshift({
      dimensions: { table: r.table },
      metrics: [
        ['CommitLatency', 'Milliseconds', r.durationMs],
        ['RowsCommitted', 'Count', r.rows],
        ...(r.oldestArrivalMs === undefined
          ? []
          : [['Freshness', 'Milliseconds', Math.max(0, nowMs - r.oldestArrivalMs)] as const]),
      ],
    });
  }
  return groups;
}

let lazy: CommitterHandler | undefined;

/** The Lambda entry point: the environment is read and the AWS clients built on the first invocation. */
export const handler: CommitterHandler = (event, context) => {
  lazy ??= makeCommitterHandler(lazyRuntime(() => awsRuntime(readSettings())));
  return lazy(event, context);
};
