/**
 * The maintenance Lambda, invoked on a schedule (`-c maintenanceSchedule`, default hourly). What
 * it does depends on the catalog and `MAINTENANCE` (runtime.ts `scheduledOptions`):
 *
 * Every table of every namespace the configuration reaches is visited: the config's namespace and
 * those of `MAINTENANCE_NAMESPACES` (names, and `prefix*` patterns matched against the catalog's
 * namespaces; the CDK app sets exactly what IAM grants). Tables are named by routing key (`name`,
 * or `namespace.name` outside the config's namespace) in the summary, the logs and the metrics.
 *
 * - Glue + `floe`: Floe maintains every table itself (compaction, manifest
 *   rewrite, snapshot expiry, orphan cleanup sparing staged files) under the committer's per-table
 *   lease; a table whose lease is held is skipped this run (`locked`).
 * - Glue + `glue`, S3 Tables + `floe`: the service maintains the tables; each run makes every
 *   table's service-side maintenance match the settings (a table the committer could not set up
 *   is caught here) and publishes the tables' metrics. Nothing is committed or deleted.
 *
 * The committer may also invoke it for named tables whose small files piled up
 * (`{ floeMaintainTables: { tables } }`, app/commit-compaction.ts): such a run maintains only those
 * tables, skips any visited within the cooldown (10 minutes), and takes no run lease, so it never
 * waits for the sweep (each table is maintained under its commit lease either way).
 *
 * It works through the tables least recently visited first and starts none once the time left
 * falls below a reserve (`deferred`, taken first by the next run). A table that fails is logged
 * at error level and counted, never thrown; a failure of the whole run (the catalog or ledger
 * unreachable) is thrown.
 *
 * Metrics (namespace `Floe`), per table (dimension `table`, as `PER_TABLE_METRICS` allows:
 * table-metrics.ts): `DataFiles`, `DeleteFiles`, `Snapshots`, `AverageFileBytes`, `SmallFiles`
 * (data files compaction would rewrite), and with Floe's own maintenance `FilesCompacted`,
 * `SnapshotsExpired`, `OrphansDeleted`; `MaintenanceFailures` (failed steps, or 1 for a table that
 * failed as a whole); per run `TablesMaintained`, `MaintenanceLocked`, `MaintenanceDeferred`,
 * `MaintenanceFailedTables` and the totals of the per-table metrics (`SmallFiles` the largest of
 * any table, `AverageFileBytes` the smallest); `RunsSkipped` for a run that found another one
 * running (run-lease.ts).
 */
import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DEFAULT_COMPACT_COOLDOWN_MS } from '../app/commit-compaction.ts';
import {
  runScheduledMaintenance,
  type ScheduledRun,
  type ScheduledTableResult,
} from '../app/maintain/scheduled.ts';
import { requestedTablesOf } from '../ports/maintenance-requests.ts';
import { readSettings } from './env.ts';
import { type HandlerOptions, metricsNamespace } from './ingest.ts';
import { withRunLease } from './run-lease.ts';
import {
  awsRuntime,
  errorMessage,
  errorSummary,
  type LambdaContext,
  lazyRuntime,
  type MaintenanceRuntime,
  publishGroups,
  runReserve,
} from './runtime.ts';
import {
  perTableMetricsFromEnv,
  type TableMetricEntry,
  type TableMetricSpec,
  tableMetricGroups,
} from './table-metrics.ts';

export interface MaintenanceHandlerOptions extends HandlerOptions {
  /** Share of the remaining time kept in reserve (default 0.3). */
  readonly reserveFraction?: number;
  /** The reserve is at least this long (default 60 s: one table's maintenance takes a while). */
  readonly minReserveMs?: number;
  /** A requested table visited less than this long ago is skipped (default 10 minutes). */
  readonly requestCooldownMs?: number;
}

export interface MaintenanceSummary {
  readonly owner: string;
  /** `floe`: Floe maintained the tables; `metrics`: the service does; `off`: nothing configured. */
  readonly mode: 'floe' | 'metrics' | 'off';
  readonly maintained: readonly string[];
  readonly checked: readonly string[];
  readonly locked: readonly string[];
  /** Tables that failed as a whole or in a step. */
  readonly failed: readonly string[];
  readonly deferred: readonly string[];
  /** Tables whose service-side maintenance was created or changed by this run. */
  readonly configured: readonly string[];
  readonly durationMs: number;
  /** Set when another run held the maintenance run lease: this one did nothing. */
  readonly skipped?: 'another run in progress';
}

export type MaintenanceHandler = (event?: unknown, context?: LambdaContext) => Promise<MaintenanceSummary>;
export type GetMaintenanceRuntime = () => MaintenanceRuntime | Promise<MaintenanceRuntime>;

export function makeMaintenanceHandler(
  getRuntime: GetMaintenanceRuntime,
  opts: MaintenanceHandlerOptions = {},
): MaintenanceHandler {
  const logger = opts.logger ?? new Logger({ serviceName: 'floe-maintenance' });
  const metrics =
    opts.metrics ?? new Metrics({ namespace: metricsNamespace(), serviceName: 'floe-maintenance' });
  const reserveFraction = opts.reserveFraction ?? 0.3;
  const minReserveMs = opts.minReserveMs ?? 60_000;
  const perTable = opts.perTableMetrics ?? { mode: 'on' };
  const cooldownMs = opts.requestCooldownMs ?? DEFAULT_COMPACT_COOLDOWN_MS;
  return async (event, context) => {
    const started = Date.now();
    const owner = context?.awsRequestId ?? `maintenance-${randomUUID()}`;
    // The committer asking for tables whose files piled up (commit-compaction.ts), or the sweep.
    const requested = requestedTablesOf(event);
    logger.resetKeys();
    logger.appendKeys({ owner, ...(requested ? { requested: requested.length } : {}) });
    // Per-table values, published when the run ends as PER_TABLE_METRICS allows.
    const tables: TableMetricEntry[] = [];
    try {
      let run: ScheduledRun;
      let mode: MaintenanceSummary['mode'] = 'off';
      let deadlineMs: number | undefined;
      let workUntilMs: number | undefined;
      try {
        const setup = (await getRuntime()).maintenance(owner);
        if (setup === undefined) {
          logger.warn('maintenance is off for this catalog: nothing to do');
          return summaryOf(owner, 'off', { tables: [], deferred: [] }, started);
        }
        mode = setup.options.mode;
        const remaining = context?.getRemainingTimeInMillis?.();
        if (remaining !== undefined) {
          const now = setup.deps.clock.nowMs();
          const { reserveMs: reserve, startDeadlineMs } = runReserve(
            now,
            remaining,
            reserveFraction,
            minReserveMs,
          );
          deadlineMs = startDeadlineMs;
          // A table's compaction starts no new group once only two thirds of the reserve are
          // left: time for its commit and the steps after it.
          workUntilMs = setup.deps.clock.nowMs() + Math.max(0, remaining - (2 * reserve) / 3);
        }
        const maintain = () =>
          runScheduledMaintenance(setup.deps, {
            ...setup.options,
            ...(requested === undefined ? {} : { onlyTables: requested, skipVisitedWithinMs: cooldownMs }),
            ...(deadlineMs === undefined ? {} : { startDeadlineMs: deadlineMs }),
            ...(workUntilMs === undefined ? {} : { workUntilMs }),
            onTable: (r) => {
              logTable(logger, r);
              const entry = tableEntry(r);
              if (entry !== undefined) tables.push(entry);
            },
          });
        // A requested run takes no run lease: it must not wait for the sweep, and each table is
        // maintained under its commit lease either way.
        const outcome =
          requested === undefined
            ? await withRunLease(setup.deps.lock, 'maintenance', owner, remaining, maintain)
            : { ran: true as const, value: await maintain() };
        if (!outcome.ran) {
          logger.info('another maintenance run holds the run lease: nothing to do');
          publishGroups(metrics, [{ metrics: [['RunsSkipped', 'Count', 1]] }]);
          return {
            ...summaryOf(owner, mode, { tables: [], deferred: [] }, started),
            skipped: 'another run in progress',
          };
        }
        run = outcome.value;
      } catch (e) {
        logger.error('maintenance run failed', { error: errorSummary(e) });
        const t = tableMetricGroups(perTable, MAINTENANCE_TABLE_METRICS, tables);
        publishGroups(metrics, [...t.perTable, { metrics: [['RunErrors', 'Count', 1], ...t.totals] }]);
        throw e;
      }
      const summary = summaryOf(owner, mode, run, started);
      const level = summary.failed.length > 0 ? 'warn' : 'info';
      logger[level]('maintenance run', { ...summary, ...(deadlineMs === undefined ? {} : { deadlineMs }) });
      const t = tableMetricGroups(perTable, MAINTENANCE_TABLE_METRICS, tables);
      publishGroups(metrics, [
        ...t.perTable,
        {
          metrics: [
            ['TablesMaintained', 'Count', summary.maintained.length + summary.checked.length],
            ['MaintenanceLocked', 'Count', summary.locked.length],
            ['MaintenanceDeferred', 'Count', summary.deferred.length],
            ['MaintenanceFailedTables', 'Count', summary.failed.length],
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
  mode: MaintenanceSummary['mode'],
  run: ScheduledRun,
  started: number,
): MaintenanceSummary {
  const of = (s: ScheduledTableResult['status']) =>
    run.tables.filter((t) => t.status === s).map((t) => t.table);
  return {
    owner,
    mode,
    maintained: of('maintained'),
    checked: of('checked'),
    locked: of('locked'),
    failed: run.tables.filter((t) => failuresOf(t) > 0).map((t) => t.table),
    deferred: [...run.deferred],
    configured: run.tables
      .filter((t) => (t.managed?.created.length ?? 0) + (t.managed?.updated.length ?? 0) > 0)
      .map((t) => t.table),
    durationMs: Date.now() - started,
  };
}

function failuresOf(r: ScheduledTableResult): number {
  if (r.status === 'failed') return Math.max(1, r.report?.failed.length ?? 0);
  return r.report?.failed.length ?? 0;
}

function logTable(logger: Logger, r: ScheduledTableResult): void {
  const c = r.condition;
  const rep = r.report;
  const attrs = {
    table: r.table,
    status: r.status,
    durationMs: r.durationMs,
    ...(c === undefined
      ? {}
      : {
          dataFiles: c.dataFiles,
          deleteFiles: c.deleteFiles,
          snapshots: c.snapshots,
          averageFileBytes: c.averageFileBytes,
          smallFiles: c.smallFiles,
          records: c.records.toString(),
        }),
    ...(rep === undefined
      ? {}
      : {
          before: { dataFiles: rep.before.dataFiles, snapshots: rep.before.snapshots },
          filesCompacted: rep.compaction?.filesRewritten ?? 0,
          filesWritten: rep.compaction?.filesWritten ?? 0,
          snapshotsExpired: rep.expiry?.snapshotsExpired ?? 0,
          orphansDeleted: rep.orphans?.orphans ?? 0,
          skipped: rep.skipped,
          failedSteps: rep.failed,
        }),
    ...(r.managed === undefined ? {} : { managed: r.managed }),
    ...(r.error === undefined ? {} : { error: errorSummary(r.error), errorMessage: errorMessage(r.error) }),
  };
  if (failuresOf(r) > 0) logger.error(`maintenance of ${r.table} failed, the next run retries`, attrs);
  else logger.info(`table ${r.table}: ${r.status}`, attrs);
}

/** The per-table maintenance metrics, and how they combine across tables. */
const MAINTENANCE_TABLE_METRICS: readonly TableMetricSpec[] = [
  ['DataFiles', 'Count', 'sum'],
  ['DeleteFiles', 'Count', 'sum'],
  ['Snapshots', 'Count', 'sum'],
  ['AverageFileBytes', 'Bytes', 'min'],
  ['SmallFiles', 'Count', 'max'],
  ['FilesCompacted', 'Count', 'sum'],
  ['SnapshotsExpired', 'Count', 'sum'],
  ['OrphansDeleted', 'Count', 'sum'],
  ['MaintenanceFailures', 'Count', 'sum'],
];

function tableEntry(r: ScheduledTableResult): TableMetricEntry | undefined {
  if (r.status === 'locked') return undefined;
  const c = r.condition;
  const rep = r.report;
  const failures = failuresOf(r);
  return {
    table: r.table,
    // top:N keeps the tables whose maintenance failed, then the largest.
    volume: failures > 0 ? Number.MAX_SAFE_INTEGER : (c?.dataFiles ?? 0),
    values: {
      ...(c === undefined
        ? {}
        : {
            DataFiles: c.dataFiles,
            DeleteFiles: c.deleteFiles,
            Snapshots: c.snapshots,
            AverageFileBytes: c.averageFileBytes,
            SmallFiles: c.smallFiles,
          }),
      ...(rep === undefined
        ? {}
        : {
            FilesCompacted: rep.compaction?.snapshotId === undefined ? 0 : rep.compaction.filesRewritten,
            SnapshotsExpired: rep.expiry?.snapshotsExpired ?? 0,
            OrphansDeleted: rep.orphans?.orphans ?? 0,
          }),
      MaintenanceFailures: failures,
    },
  };
}

let lazy: MaintenanceHandler | undefined;

/** The Lambda entry point: the environment is read and the AWS clients built on the first invocation. */
export const handler: MaintenanceHandler = (event, context) => {
  lazy ??= makeMaintenanceHandler(
    lazyRuntime(() => awsRuntime(readSettings())),
    {
      perTableMetrics: perTableMetricsFromEnv(),
    },
  );
  return lazy(event, context);
};
