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
 * of the oldest committed record), for upsert tables `RowsUpserted`, `RowsDeleted` and `ChangesSuperseded` (versioned changes older than their key's newest committed one), `RowsUpserted`/`RowsDeleted` counting keys whose
 * last change upserted / deleted a row); per reason (dimension `reason`) `DeadLetters` found while
 * rewriting pending records; per run `TablesCommitted`, `CommitFailures`, `TablesLocked`,
 * `DeferredTables` and the totals of the per-table metrics (`RunsSkipped` for a run that found
 * another one running: run-lease.ts).
 */
import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { CompactionRequests } from '../app/commit-compaction.ts';
import { type CommitLoopOptions, runCommitLoop } from '../app/commit-loop.ts';
import { fanOut, planSliceCount, type SliceSet } from '../app/commit-slices.ts';
import {
  type CommitterDeps,
  type CommitterRun,
  DEFAULT_MAX_PENDING_RECORDS,
  DEFAULT_RUN_CONCURRENCY,
  type TableCommitResult,
} from '../app/committer.ts';
import type { ShardRouting } from '../app/route-deferred.ts';
import { forEachBounded } from '../engine/bounded.ts';
import { type CommitFanout, type SliceTask, sliceTaskOf } from '../ports/commit-fanout.ts';
import { DEFAULT_SCHEDULE_MS, readSettings } from './env.ts';
import { type HandlerOptions, metricsNamespace } from './ingest.ts';
import { type RunLeaseOutcome, type RunLeaseWait, withRunLease } from './run-lease.ts';
import {
  awsRuntime,
  type CommitScheduleSettings,
  errorMessage,
  errorSummary,
  type GetRuntime,
  type LambdaContext,
  lazyRuntime,
  type MetricGroup,
  type MetricsSink,
  pendingPerCommit,
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
  /** Commit passes this invocation made (more than one with a sub-minute commit interval). */
  readonly passes: number;
  /** Slices the tables were split into (1: no fan-out). */
  readonly slices: number;
  /** Slices this (scheduled) run handed to other invocations. */
  readonly dispatched: number;
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
  // Tables asked for maintenance, remembered across the invocations of a warm container.
  let compactions: CompactionRequests | undefined;
  return async (event, context) => {
    const started = Date.now();
    const owner = context?.awsRequestId ?? `committer-${randomUUID()}`;
    const task = sliceTaskOf(event);
    logger.resetKeys();
    logger.appendKeys({ owner, ...(task ? { slice: task.index + 1, slices: task.count } : {}) });
    // Per-table values, published when the run ends as PER_TABLE_METRICS allows.
    const tables: TableMetricEntry[] = [];
    let compactionsAsked = 0;
    let compactionFailures = 0;
    try {
      let run: SlicedRun;
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
        const requests = runtime.maintenanceRequests;
        if (requests !== undefined && runtime.compaction !== undefined)
          compactions ??= new CompactionRequests(runtime.compaction);
        const loop: Omit<CommitLoopOptions, 'slices' | 'intervalMs' | 'untilMs'> = {
          ...(runtime.commitConcurrency === undefined ? {} : { concurrency: runtime.commitConcurrency }),
          ...(deadlineMs === undefined ? {} : { startDeadlineMs: deadlineMs }),
          sleep,
          onTable: (r) => {
            logTable(logger, r);
            publishGroups(metrics, deadLetterMetrics(r));
            const entry = tableEntry(r, deps.clock.nowMs());
            if (entry !== undefined) tables.push(entry);
          },
          // After each pass: what it routed, then the tables whose files piled up go to the
          // maintenance function.
          onPass: async (pass) => {
            logRouting(logger, metrics, pass.routed);
            if (requests === undefined || compactions === undefined) return;
            const due = compactions.due(pass.tables, deps.clock.nowMs());
            for (let i = 0; i < due.length; i += REQUEST_TABLES) {
              const chunk = due.slice(i, i + REQUEST_TABLES);
              try {
                await requests.request(chunk);
                compactionsAsked += chunk.length;
                logger.info('asked for the maintenance of tables with many small files', { tables: chunk });
              } catch (e) {
                compactionFailures += chunk.length;
                logger.warn('asking for maintenance failed: the scheduled sweep takes these tables', {
                  tables: chunk,
                  error: errorSummary(e),
                });
              }
            }
          },
        };
        const schedule = runtime.commitSchedule ?? {};
        const outcome =
          task === undefined
            ? await scheduledRun(deps, schedule, runtime.fanout, owner, remaining, loop, logger)
            : await sliceRun(deps, task, owner, remaining, loop);
        if (!outcome.ran) {
          logger.info(
            task === undefined
              ? 'another committer run holds the run lease: nothing to do'
              : `another invocation commits slice ${task.index + 1} of ${task.count}: nothing to do`,
          );
          publishGroups(metrics, [{ metrics: [['RunsSkipped', 'Count', 1]] }]);
          return {
            ...summaryOf(
              owner,
              { runs: [], slices: task?.count ?? 1, dispatched: 0, dispatchFailed: 0 },
              started,
            ),
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
      const level = summary.failed.length > 0 || run.dispatchFailed > 0 ? 'warn' : 'info';
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
            ['CommitPasses', 'Count', summary.passes],
            ...(compactionsAsked + compactionFailures > 0
              ? ([
                  ['CompactionsRequested', 'Count', compactionsAsked],
                  ['CompactionRequestFailures', 'Count', compactionFailures],
                ] as const)
              : []),
            ...(task === undefined
              ? ([
                  ['CommitSlices', 'Count', run.slices],
                  ['SliceDispatchFailures', 'Count', run.dispatchFailed],
                ] as const)
              : []),
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

/** The passes of one invocation, and (for a scheduled run) how it fanned out. */
interface SlicedRun {
  readonly runs: readonly CommitterRun[];
  /** Slices the tables were split into (1: no fan-out). */
  readonly slices: number;
  /** Slices handed to other invocations. */
  readonly dispatched: number;
  /** Slices whose dispatch failed: this invocation committed them itself. */
  readonly dispatchFailed: number;
}

type LoopBase = Omit<CommitLoopOptions, 'slices' | 'intervalMs' | 'untilMs'>;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A schedule tick: under the run lease, size the fan-out from the backlog, hand every slice but
 * the first to its own invocation, and commit the first (and any whose dispatch failed) here, in
 * passes until just before the next tick when the commit interval is shorter than the schedule's.
 */
async function scheduledRun(
  deps: CommitterDeps,
  schedule: CommitScheduleSettings,
  fanout: CommitFanout | undefined,
  owner: string,
  remaining: number | undefined,
  loop: LoopBase,
  logger: Logger,
): Promise<RunLeaseOutcome<SlicedRun>> {
  const now = deps.clock.nowMs();
  const { intervalMs, untilMs, waitMs } = passWindow(schedule, now);
  return withRunLease(
    deps.lock,
    'committer',
    owner,
    runLeaseMs(remaining, untilMs - now, intervalMs),
    async () => {
      const backlog = await deps.ledger.tablesWithStagedWork();
      const count = fanout === undefined ? 1 : planSliceCount(backlog.length, schedule);
      const { own, others } = fanOut(count);
      const failed: number[] = [];
      if (fanout !== undefined && others.length > 0) {
        await forEachBounded(others, DISPATCH_CONCURRENCY, async (s) => {
          const index = s.indexes[0]!;
          try {
            await fanout.dispatch({ index, count, untilMs, intervalMs, dispatchedBy: owner });
          } catch (e) {
            failed.push(index);
            logger.warn(`dispatching commit slice ${index + 1} of ${count} failed: this run commits it`, {
              error: errorSummary(e),
            });
          }
        });
      }
      const mine: SliceSet = { count, indexes: [...own.indexes, ...failed.sort((a, b) => a - b)] };
      // The slices whose dispatch failed are this run's too: it commits them with as many commits
      // at once as the slices would have had (commits wait on round trips, not CPU), each with a
      // share of the pending-record budget.
      const widened = Math.min(
        MAX_CONCURRENCY,
        (loop.concurrency ?? DEFAULT_RUN_CONCURRENCY) * mine.indexes.length,
      );
      const result = await runCommitLoop(
        failed.length === 0
          ? deps
          : {
              ...deps,
              maxPendingRecordsPerCommit: Math.min(
                deps.maxPendingRecordsPerCommit ?? DEFAULT_MAX_PENDING_RECORDS,
                pendingPerCommit(widened),
              ),
            },
        {
          ...loop,
          ...(failed.length === 0 ? {} : { concurrency: widened }),
          slices: mine,
          intervalMs,
          untilMs,
          firstTables: backlog,
        },
      );
      return {
        runs: result.runs,
        slices: count,
        dispatched: others.length - failed.length,
        dispatchFailed: failed.length,
      };
    },
    leaseWait(deps, waitMs),
  );
}

/** Asking again for a run lease for up to `waitMs` (none for 0), on the deps' clock. */
function leaseWait(deps: CommitterDeps, waitMs: number): RunLeaseWait | undefined {
  return waitMs > 0 ? { waitMs, nowMs: () => deps.clock.nowMs(), sleep } : undefined;
}

/** A slice handed over by a scheduled run: its tables, in passes until the task's `untilMs`. */
async function sliceRun(
  deps: CommitterDeps,
  task: SliceTask,
  owner: string,
  remaining: number | undefined,
  loop: LoopBase,
): Promise<RunLeaseOutcome<SlicedRun>> {
  // A duplicate delivery of the same slice finds the slice's lease held and returns.
  return withRunLease(
    deps.lock,
    `committer-slice-${task.index + 1}-of-${task.count}`,
    owner,
    runLeaseMs(remaining, task.untilMs - deps.clock.nowMs(), task.intervalMs),
    async () => {
      const result = await runCommitLoop(deps, {
        ...loop,
        slices: { count: task.count, indexes: [task.index] },
        intervalMs: task.intervalMs,
        untilMs: task.untilMs,
      });
      return { runs: result.runs, slices: task.count, dispatched: 0, dispatchFailed: 0 };
    },
    leaseWait(deps, task.intervalMs),
  );
}

/** A pass's routing of deferred batches (app/route-deferred.ts): one log line and its counts. */
function logRouting(logger: Logger, metrics: MetricsSink, routed: readonly ShardRouting[] | undefined): void {
  if (routed === undefined || routed.length === 0) return;
  const failed = routed.filter((r) => r.status === 'failed');
  const shards = routed.map((r) => ({
    shardId: r.shardId,
    status: r.status,
    batches: r.batches,
    records: r.records,
    tables: r.tables.length,
    ...(r.error === undefined ? {} : { error: errorSummary(r.error) }),
  }));
  if (failed.length > 0)
    logger.warn('routing deferred batches failed on some shards: the next run retries', { shards });
  else logger.info('routed deferred batches', { shards });
  publishGroups(metrics, [
    {
      metrics: [
        [
          'DeferredBatchesRouted',
          'Count',
          routed.reduce((n, r) => n + (r.status === 'routed' ? r.batches : 0), 0),
        ],
        [
          'DeferredRecordsRouted',
          'Count',
          routed.reduce((n, r) => n + (r.status === 'routed' ? r.records : 0), 0),
        ],
        ['RoutingFailures', 'Count', failed.length],
      ],
    },
  ]);
}

/** Tables per maintenance request (an asynchronous invocation's payload stays far below 256 KB). */
const REQUEST_TABLES = 200;

/** Commits at once in one invocation, however many slices it takes over. */
const MAX_CONCURRENCY = 64;

/** Slices dispatched at once. */
const DISPATCH_CONCURRENCY = 16;

/**
 * When a scheduled run's passes end: with a commit interval shorter than the schedule's period,
 * just before the next tick (which then waits up to one interval for this run's lease); otherwise
 * one pass.
 */
export function passWindow(
  schedule: CommitScheduleSettings,
  nowMs: number,
): { readonly intervalMs: number; readonly untilMs: number; readonly waitMs: number } {
  const period = schedule.scheduleMs ?? DEFAULT_SCHEDULE_MS;
  const interval = schedule.intervalMs ?? period;
  if (interval >= period) return { intervalMs: 0, untilMs: nowMs, waitMs: 0 };
  return { intervalMs: interval, untilMs: nowMs + period - TICK_SLACK_MS, waitMs: interval };
}

/**
 * How long a run's lease lasts: the invocation's remaining time for one pass; for passes until the
 * next tick, that window plus one interval, so a run that dies holding it keeps the next tick out
 * for no longer than that tick waits for it (one interval), not for the whole timeout. A
 * run still in its last pass when the lease ends meets the next one only on table leases.
 */
export function runLeaseMs(
  remainingMs: number | undefined,
  windowMs: number,
  intervalMs: number,
): number | undefined {
  if (intervalMs <= 0) return remainingMs;
  // Ends before the next tick stops waiting for it (tick + interval), after a run that ends on time.
  const loop = Math.max(0, windowMs) + intervalMs;
  return remainingMs === undefined ? loop : Math.min(remainingMs, loop);
}

/** A seconds-fresh run ends this long before the next tick is due. */
const TICK_SLACK_MS = 2_000;

function summaryOf(owner: string, run: SlicedRun, started: number): CommitterSummary {
  const all = run.runs.flatMap((r) => r.tables);
  const of = (st: TableCommitResult['status']) => all.filter((t) => t.status === st);
  const last = run.runs[run.runs.length - 1];
  return {
    owner,
    committed: of('committed').map((t) => t.table),
    nothingToCommit: of('nothing-to-commit').length,
    locked: of('locked').map((t) => t.table),
    failed: of('failed').map((t) => t.table),
    deferred: last?.deferred ?? [],
    rows: all.reduce((n, t) => n + t.rows, 0),
    passes: run.runs.length,
    slices: run.slices,
    dispatched: run.dispatched,
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
    ...(r.upserts
      ? { upserted: r.upserts.upserted, deleted: r.upserts.deleted, superseded: r.upserts.superseded ?? 0 }
      : {}),
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
  ['ChangesSuperseded', 'Count', 'sum'],
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
      ...(r.upserts
        ? {
            RowsUpserted: r.upserts.upserted,
            RowsDeleted: r.upserts.deleted,
            ...(r.upserts.superseded ? { ChangesSuperseded: r.upserts.superseded } : {}),
          }
        : {}),
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
