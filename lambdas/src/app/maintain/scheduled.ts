/**
 * Scheduled maintenance of the tables of every namespace the configuration reaches (the
 * maintenance Lambda), in one of two modes:
 *
 * - `floe`: Floe maintains each table itself (`maintainTable`: compaction, manifest rewrite,
 *   snapshot expiry, orphan cleanup) under the table's commit lease — the committer's own lock
 *   name (`lockName` of the table's routing key: `commit/<namespace>.<name>`), so the two never
 *   commit to a table at once; a table whose lease is held is skipped this run. The lease is
 *   renewed on a heartbeat and before every commit (`LeaseKeeper`), and the files of ledger entries
 *   above the table's watermark are protected from orphan cleanup (under every ledger key the
 *   ingest may have used for the table: namespaces.ts `ledgerKeys`).
 * - `metrics`: the catalog service maintains the tables (Glue optimizers, S3 Tables); each table's
 *   managed maintenance is made to match Floe's settings (`ensure`) and its condition measured.
 *   Nothing is committed, so no lease is taken.
 *
 * The namespaces: the stack's (`config.namespace`), plus `opts.namespaces` — names, and prefixes
 * matched against the catalog's namespaces (namespaces.ts). Tables are visited least recently
 * visited first across all of them (ports/maintenance-log.ts, one log per namespace; one order for
 * the run, so no namespace waits for another) and none is started after `startDeadlineMs`: the
 * tables a run did not reach (`deferred`) come first in the next run. Every visited table's
 * condition (files, sizes, snapshots, small files) is reported for metrics. Tables are reported
 * by routing key, as the committer reports them: `name` in the stack's namespace,
 * `namespace.name` in another.
 */
import { branchFor, type FloeConfig, tableId } from '../../config.ts';
import type { CommitDeps } from '../../engine/append.ts';
import type { ParquetEncoder } from '../../engine/row-files.ts';
import { planScan } from '../../iceberg/scan.ts';
import { asSeenFromBranch } from '../../iceberg/table-metadata.ts';
import type { LoadedTable, TableIdentifier } from '../../ports/catalog.ts';
import type { Ledger } from '../../ports/ledger.ts';
import { acquireLease, type Lease, type Lock } from '../../ports/lock.ts';
import { type MaintenanceLog, visitingOrder } from '../../ports/maintenance-log.ts';
import type { ManagedMaintenance, ManagedOutcome } from '../../ports/managed-maintenance.ts';
import type { ObjectStore } from '../../ports/object-store.ts';
import { lockName } from '../committer.ts';
import { planBins } from './compact.ts';
import { type TableHealth, tableHealth } from './health.ts';
import { maintainTable, type TableMaintenanceReport } from './index.ts';
import { fencedCatalog, LeaseKeeper } from './lease-keeper.ts';
import { liveRowsReader } from './live-rows.ts';
import { ledgerKeys, type NamespaceSet, namespacesToVisit, routingKeyOf } from './namespaces.ts';
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
  /**
   * Namespaces visited besides the stack's (`config.namespace`, always visited): names, and
   * prefixes matched against the catalog's namespaces. Default: the stack's only.
   */
  readonly namespaces?: NamespaceSet;
  /**
   * Only these tables (routing keys, as `tableId` reads them): a visit the committer asked for
   * because a table's files piled up (commit-compaction.ts). Default: every table reached.
   */
  readonly onlyTables?: readonly string[];
  /** Skips a table visited less than this long ago (a requested visit repeated meanwhile). */
  readonly skipVisitedWithinMs?: number;
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
  /** The routing key: `name` in the stack's namespace, `namespace.name` in another. */
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
  /** Not started: the time ran out (routing keys). */
  readonly deferred: readonly string[];
}

export async function runScheduledMaintenance(
  deps: ScheduledDeps,
  opts: ScheduledOptions,
): Promise<ScheduledRun> {
  const own = deps.config.namespace;
  // Every table of every namespace, keyed by routing key, with its last visit.
  const ids = new Map<string, TableIdentifier>();
  const visits = new Map<string, number>();
  if (opts.onlyTables !== undefined) {
    // The tables asked for, by routing key; each namespace's visit log read once.
    const byNamespace = new Map<string, Map<string, number>>();
    for (const key of new Set(opts.onlyTables)) {
      const id = tableId(deps.config, key);
      if (!byNamespace.has(id.namespace)) byNamespace.set(id.namespace, await deps.log.visits(id.namespace));
      ids.set(key, id);
      const at = byNamespace.get(id.namespace)!.get(id.name);
      if (at !== undefined) visits.set(key, at);
    }
  } else {
    for (const namespace of await namespacesToVisit(deps.catalog, own, opts.namespaces)) {
      const names = await deps.catalog.listTables(namespace);
      if (names.length === 0) continue;
      const visited = await deps.log.visits(namespace);
      for (const name of names) {
        const id = { namespace, name };
        const key = routingKeyOf(own, id);
        ids.set(key, id);
        const at = visited.get(name);
        if (at !== undefined) visits.set(key, at);
      }
    }
  }
  const recent = opts.skipVisitedWithinMs;
  const now = deps.clock.nowMs();
  const order = visitingOrder([...ids.keys()], visits).filter(
    (key) => recent === undefined || now - (visits.get(key) ?? -Infinity) >= recent,
  );
  const tables: ScheduledTableResult[] = [];
  const deferred: string[] = [];
  for (const key of order) {
    if (opts.startDeadlineMs !== undefined && deps.clock.nowMs() >= opts.startDeadlineMs) {
      deferred.push(key);
      continue;
    }
    const id = ids.get(key)!;
    const r =
      opts.mode === 'floe' ? await maintainOne(deps, opts, id, key) : await checkOne(deps, opts, id, key);
    tables.push(r);
    opts.onTable?.(r);
  }
  return { tables, deferred };
}

/** When a table's visit started, and its result with the time it took. */
function timedResult(clock: ScheduledDeps['clock'], table: string) {
  const started = clock.nowMs();
  const done = (r: Omit<ScheduledTableResult, 'table' | 'durationMs'>): ScheduledTableResult => ({
    table,
    ...r,
    durationMs: clock.nowMs() - started,
  });
  return { started, done };
}

async function maintainOne(
  deps: ScheduledDeps,
  opts: ScheduledOptions,
  id: TableIdentifier,
  key: string,
): Promise<ScheduledTableResult> {
  const { started, done } = timedResult(deps.clock, key);
  // The committer's lock name for the table (`commit/<namespace>.<name>`).
  const lock = lockName(deps.config, key);
  let lease: Lease | undefined;
  try {
    lease = await acquireLease(deps.lock, lock, deps.owner, deps.leaseMs);
  } catch (error) {
    // This table's failure, not the run's: the next tables are still visited.
    return done({ status: 'failed', error });
  }
  if (!lease) return done({ status: 'locked' });
  const keeper = new LeaseKeeper(deps.lock, lease, deps.heartbeatMs);
  try {
    await deps.log.recordVisit(id.namespace, id.name, started);
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
          const files = new Set<string>();
          for (const ledgerKey of ledgerKeys(deps.config.namespace, id))
            for (const f of await stagedFiles(
              deps.ledger,
              deps.store,
              ledgerKey,
              initial.metadata,
              branchFor(deps.config, id.name),
            ))
              files.add(f);
          return files;
        },
      },
      id,
      {
        ...opts.maintenance,
        ...(opts.workUntilMs === undefined ? {} : { workUntilMs: opts.workUntilMs }),
        branchOf: (t) => branchFor(deps.config, t.name),
      },
    );
    const condition = await tableCondition(deps.store, await workingTable(deps, id), opts.maintenance);
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
  key: string,
): Promise<ScheduledTableResult> {
  const { started, done } = timedResult(deps.clock, key);
  try {
    await deps.log.recordVisit(id.namespace, id.name, started);
    let managed: ManagedOutcome | undefined;
    let error: unknown;
    try {
      managed = await opts.managed?.ensure(id);
    } catch (e) {
      error = e;
    }
    const condition = await tableCondition(deps.store, await workingTable(deps, id), opts.maintenance);
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

/** The table as its writers see it: the head of the branch the configuration sends it to. */
async function workingTable(deps: ScheduledDeps, id: TableIdentifier): Promise<LoadedTable> {
  const t = await deps.catalog.loadTable(id);
  return { ...t, metadata: asSeenFromBranch(t.metadata, branchFor(deps.config, id.name)) };
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
