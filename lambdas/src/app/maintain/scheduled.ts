/**
 * Scheduled maintenance of a namespace's tables (the maintenance Lambda), in one of two modes:
 *
 * - `floe`: Floe maintains each table itself (`maintainTable`: compaction, manifest rewrite,
 *   snapshot expiry, orphan cleanup) under the table's commit lease — the committer's own lock
 *   name, so the two never commit to a table at once; a table whose lease is held is skipped this
 *   run. The lease is renewed on a heartbeat and before every commit (`LeaseKeeper`), and the files
 *   of ledger entries above the table's watermark are protected from orphan cleanup.
 * - `metrics`: the catalog service maintains the tables (Glue optimizers, S3 Tables); each table's
 *   managed maintenance is made to match Floe's settings (`ensure`) and its condition measured.
 *   Nothing is committed, so no lease is taken.
 *
 * Tables are visited least recently visited first (ports/maintenance-log.ts) and none is started
 * after `startDeadlineMs`: the tables a run did not reach (`deferred`) come first in the next run.
 * Every visited table's condition (files, sizes, snapshots, small files) is reported for metrics.
 */
import type { FloeConfig } from '../../config.ts';
import { planScan } from '../../iceberg/scan.ts';
import type { LoadedTable, TableIdentifier } from '../../ports/catalog.ts';
import type { Ledger } from '../../ports/ledger.ts';
import type { Lock } from '../../ports/lock.ts';
import { type MaintenanceLog, visitingOrder } from '../../ports/maintenance-log.ts';
import type { ManagedMaintenance, ManagedOutcome } from '../../ports/managed-maintenance.ts';
import type { ObjectStore } from '../../ports/object-store.ts';
import type { CommitDeps } from '../append.ts';
import { lockName } from '../committer.ts';
import type { ParquetEncoder } from '../row-files.ts';
import { planBins } from './compact.ts';
import { type TableHealth, tableHealth } from './health.ts';
import { maintainTable, type TableMaintenanceReport } from './index.ts';
import { fencedCatalog, LeaseKeeper } from './lease-keeper.ts';
import { liveRowsReader } from './live-rows.ts';
import { type MaintenanceOptions, thresholdsFor } from './options.ts';
import { stagedFiles } from './staged-files.ts';

export interface ScheduledDeps extends CommitDeps {
  readonly config: FloeConfig;
  readonly ledger: Pick<Ledger, 'shardsWithStagedWork' | 'entriesAfter'>;
  readonly lock: Lock;
  readonly log: MaintenanceLog;
  /** Who holds the leases (the invocation's request id). */
  readonly owner: string;
  readonly leaseMs: number;
  /** Lease renewal interval (default a third of the lease; 0: only before commits). */
  readonly heartbeatMs?: number;
  readonly encoder?: ParquetEncoder;
}

export interface ScheduledOptions {
  readonly mode: 'floe' | 'metrics';
  /** Steps and thresholds (`floe`); the thresholds also decide which files count as small. */
  readonly maintenance: MaintenanceOptions;
  /** `metrics`: the service's maintenance, made to match on every visit. */
  readonly managed?: ManagedMaintenance;
  /** S3 Tables: expiry never deletes files, orphan cleanup does not run. */
  readonly managedStorage?: boolean;
  /** Epoch ms on `deps.clock` after which no table is started. */
  readonly startDeadlineMs?: number;
  /** Epoch ms after which a table's compaction starts no new group (it commits what it did). */
  readonly workUntilMs?: number;
  readonly onTable?: (r: ScheduledTableResult) => void;
}

/** A table's health plus the data files compaction would rewrite (small, sharing a partition). */
export interface TableCondition extends TableHealth {
  readonly smallFiles: number;
}

export interface ScheduledTableResult {
  readonly table: string;
  /** `maintained` (floe, some steps may have failed: see `report.failed`), `checked` (metrics). */
  readonly status: 'maintained' | 'checked' | 'locked' | 'failed';
  /** After maintenance. */
  readonly condition?: TableCondition;
  readonly report?: TableMaintenanceReport;
  readonly managed?: ManagedOutcome;
  readonly error?: unknown;
  readonly durationMs: number;
}

export interface ScheduledRun {
  readonly tables: readonly ScheduledTableResult[];
  /** Not started: the time ran out. */
  readonly deferred: readonly string[];
}

export async function runScheduledMaintenance(
  deps: ScheduledDeps,
  opts: ScheduledOptions,
): Promise<ScheduledRun> {
  const namespace = deps.config.namespace;
  const names = await deps.catalog.listTables(namespace);
  const order = visitingOrder(names, await deps.log.visits(namespace));
  const tables: ScheduledTableResult[] = [];
  const deferred: string[] = [];
  for (const name of order) {
    if (opts.startDeadlineMs !== undefined && deps.clock.nowMs() >= opts.startDeadlineMs) {
      deferred.push(name);
      continue;
    }
    const id = { namespace, name };
    const r = opts.mode === 'floe' ? await maintainOne(deps, opts, id) : await checkOne(deps, opts, id);
    tables.push(r);
    opts.onTable?.(r);
  }
  return { tables, deferred };
}

async function maintainOne(
  deps: ScheduledDeps,
  opts: ScheduledOptions,
  id: TableIdentifier,
): Promise<ScheduledTableResult> {
  const started = deps.clock.nowMs();
  const table = id.name;
  const done = (r: Omit<ScheduledTableResult, 'table' | 'durationMs'>): ScheduledTableResult => ({
    table,
    ...r,
    durationMs: deps.clock.nowMs() - started,
  });
  const lease = await deps.lock.acquire(lockName(deps.config, table), deps.owner, deps.leaseMs);
  if (!lease) return done({ status: 'locked' });
  const keeper = new LeaseKeeper(deps.lock, lease, deps.heartbeatMs);
  try {
    await deps.log.recordVisit(id.namespace, table, started);
    // Watermarks only move forward: entries above this one include every entry a later
    // metadata file may not name yet.
    const initial = await deps.catalog.loadTable(id);
    const report = await maintainTable(
      {
        catalog: fencedCatalog(deps.catalog, keeper),
        store: deps.store,
        clock: deps.clock,
        ids: deps.ids,
        ...(deps.sleep ? { sleep: deps.sleep } : {}),
        ...(deps.encoder ? { encoder: deps.encoder } : {}),
        liveRows: liveRowsReader(deps.store),
        ...(opts.managedStorage ? { managedStorage: true } : {}),
        staged: async () => {
          // Orphans are decided right after this: only while the lease is still ours.
          await keeper.renew();
          return stagedFiles(deps.ledger, deps.store, table, initial.metadata);
        },
      },
      id,
      opts.workUntilMs === undefined
        ? opts.maintenance
        : { ...opts.maintenance, workUntilMs: opts.workUntilMs },
    );
    const condition = await tableCondition(deps.store, await deps.catalog.loadTable(id), opts.maintenance);
    return done({ status: 'maintained', report, condition });
  } catch (error) {
    return done({ status: 'failed', error });
  } finally {
    await keeper.release();
  }
}

async function checkOne(
  deps: ScheduledDeps,
  opts: ScheduledOptions,
  id: TableIdentifier,
): Promise<ScheduledTableResult> {
  const started = deps.clock.nowMs();
  const done = (r: Omit<ScheduledTableResult, 'table' | 'durationMs'>): ScheduledTableResult => ({
    table: id.name,
    ...r,
    durationMs: deps.clock.nowMs() - started,
  });
  try {
    await deps.log.recordVisit(id.namespace, id.name, started);
    let managed: ManagedOutcome | undefined;
    let error: unknown;
    try {
      managed = await opts.managed?.ensure(id);
    } catch (e) {
      error = e;
    }
    const condition = await tableCondition(deps.store, await deps.catalog.loadTable(id), opts.maintenance);
    return done({
      status: error === undefined ? 'checked' : 'failed',
      condition,
      ...(managed ? { managed } : {}),
      ...(error === undefined ? {} : { error }),
    });
  } catch (error) {
    return done({ status: 'failed', error });
  }
}

/** `tableHealth` and the small-file count from one scan plan. */
export async function tableCondition(
  store: ObjectStore,
  table: LoadedTable,
  opts: MaintenanceOptions,
): Promise<TableCondition> {
  const plan = await planScan(table.metadata, (u) => store.get(u));
  const bins = planBins(plan, thresholdsFor(table.metadata, opts));
  return {
    ...(await tableHealth(store, table, plan)),
    smallFiles: bins.reduce((n, b) => n + b.tasks.length, 0),
  };
}
