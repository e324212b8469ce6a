/**
 * `maintainTable`: keeps one table healthy in the order Java's maintenance guide gives — compact
 * small files, merge small manifests, expire old snapshots, then delete orphans — each step an
 * optimistic commit of its own, so a writer appending meanwhile loses nothing and a step that
 * fails (reported with its error) does not stop the ones after it.
 */

import { committingTo } from '../../engine/append.ts';
import { MAIN_BRANCH } from '../../iceberg/snapshot.ts';
import { asSeenFromBranch, currentSnapshot, type TableMetadata } from '../../iceberg/table-metadata.ts';
import { type LoadedTable, type TableIdentifier, tableIdToString } from '../../ports/catalog.ts';
import {
  type CompactionDeps,
  type CompactionReport,
  cannotCompact,
  compact,
  type LiveRows,
  planCompaction,
} from './compact.ts';
import { type ExpiryReport, expireSnapshots } from './expire.ts';
import { type TableHealth, tableHealth } from './health.ts';
import { needsLiteralName, respellLocation } from './literal-locations.ts';
import { type MaintenanceOptions, type Thresholds, thresholdsFor } from './options.ts';
import { deleteOrphanFiles, type OrphanReport } from './orphans.ts';
import { type ManifestRewriteReport, rewriteManifests } from './rewrite-manifests.ts';

export interface MaintenanceDeps extends CompactionDeps {
  /** Reads a data file's live rows for compaction. */
  readonly liveRows: LiveRows;
  /**
   * The storage belongs to a service that cleans it itself and refuses deletes (S3 Tables): expiry
   * only drops snapshots from the metadata and orphan cleanup does not run.
   */
  readonly managedStorage?: boolean;
  /** Files staged for a table but not committed yet (streaming ingest): never orphans. */
  readonly staged?: (table: TableIdentifier) => Promise<Iterable<string>>;
  readonly progress?: (message: string) => void;
}

export type StepName = 'compact' | 'rewriteManifests' | 'expire' | 'orphans';

export interface StepSkipped {
  readonly step: StepName;
  readonly reason: string;
}

export interface StepFailed {
  readonly step: StepName;
  readonly error: string;
}

export interface TableMaintenanceReport {
  readonly table: string;
  readonly dryRun: boolean;
  readonly before: TableHealth;
  readonly after: TableHealth;
  readonly compaction?: CompactionReport & { readonly planned: number };
  readonly manifests?: ManifestRewriteReport;
  readonly expiry?: ExpiryReport;
  readonly orphans?: OrphanReport;
  readonly skipped: readonly StepSkipped[];
  readonly failed: readonly StepFailed[];
}

export async function maintainTable(
  deps: MaintenanceDeps,
  id: TableIdentifier,
  opts: MaintenanceOptions,
): Promise<TableMaintenanceReport> {
  const name = tableIdToString(id);
  const say = (m: string) => deps.progress?.(`${name}: ${m}`);
  const dryRun = opts.dryRun === true;
  let table = await deps.catalog.loadTable(id);
  // Rewrites work on the branch the table's writers commit to (main unless configured); health
  // is the health of that branch's head.
  const working = opts.branchOf?.(id) ?? MAIN_BRANCH;
  const onBranch = (t: LoadedTable) => ({ ...t, metadata: asSeenFromBranch(t.metadata, working) });
  const before = await tableHealth(deps.store, onBranch(table));
  const limits = thresholdsFor(table.metadata, opts);
  // --rewrite-locations: compaction also rewrites the files readers that take names literally miss.
  const th: Thresholds = opts.rewriteLocations
    ? { ...limits, rewrite: needsLiteralName(deps.store, () => table.metadata.location) }
    : limits;
  const skipped: StepSkipped[] = [];
  const failed: StepFailed[] = [];
  const out: {
    compaction?: CompactionReport & { planned: number };
    manifests?: ManifestRewriteReport;
    expiry?: ExpiryReport;
    orphans?: OrphanReport;
  } = {};
  const step = async (s: StepName, run: () => Promise<void>) => {
    const why = cannotRun(s, table.metadata, deps);
    if (why) {
      skipped.push({ step: s, reason: why });
      return;
    }
    try {
      await run();
    } catch (e) {
      failed.push({ step: s, error: errorMessage(e) });
      say(`${s} failed: ${errorMessage(e)}`);
    }
    table = await deps.catalog.loadTable(id);
  };

  if (opts.steps.compact && opts.rewriteLocations) {
    await step('compact', async () => {
      const moved = await respellLocation(deps, table, dryRun);
      if (moved) say(`location ${table.metadata.location} → ${moved}${dryRun ? ' (dry run)' : ''}`);
    });
  }
  const rewriting = committingTo(deps, working);
  if (opts.steps.compact) {
    await step('compact', async () => {
      const bins = await planCompaction(deps, onBranch(table), th);
      const files = bins.reduce((n, b) => n + b.tasks.length, 0);
      say(`compaction: ${files} small files in ${bins.length} groups`);
      if (dryRun || bins.length === 0) {
        out.compaction = { ...plannedOnly(bins), planned: files };
        return;
      }
      const until = opts.workUntilMs === undefined ? {} : { workUntilMs: opts.workUntilMs };
      out.compaction = {
        ...(await compact(rewriting, onBranch(table), th, deps.liveRows, until)),
        planned: files,
      };
    });
  }
  if (opts.steps.rewriteManifests) {
    await step('rewriteManifests', async () => {
      out.manifests = await rewriteManifests(rewriting, onBranch(table), { dryRun });
    });
  }
  if (opts.steps.expire) {
    await step('expire', async () => {
      out.expiry = await expireSnapshots(deps, table, th, { dryRun, deleteFiles: !deps.managedStorage });
      say(`expiry: ${out.expiry.snapshotsExpired} snapshots`);
    });
  }
  if (opts.steps.orphans) {
    await step('orphans', async () => {
      out.orphans = await deleteOrphanFiles(deps.store, table, {
        olderThanMs: th.orphansOlderThanMs,
        nowMs: deps.clock.nowMs(),
        dryRun,
        ...(deps.staged ? { protect: () => deps.staged!(id) } : {}),
      });
      say(`orphans: ${out.orphans.orphans} of ${out.orphans.listed} files`);
    });
  }
  const after = dryRun ? before : await tableHealth(deps.store, onBranch(table));
  return { table: name, dryRun, before, after, ...out, skipped, failed };
}

/** Why `step` cannot run on this table, if it cannot. */
function cannotRun(step: StepName, meta: TableMetadata, deps: MaintenanceDeps): string | undefined {
  const rewrites = step === 'compact' || step === 'rewriteManifests';
  const current = currentSnapshot(meta);
  if (rewrites && current && current['manifest-list'] === undefined) {
    return 'the current snapshot lists its manifests inline (format v1 without a manifest list)';
  }
  if (step === 'compact') {
    const why = cannotCompact(meta);
    if (why) return why;
  }
  if (step === 'orphans' && deps.managedStorage) {
    return 'table storage is managed by the service (S3 Tables removes unreferenced files itself)';
  }
  return undefined;
}

function plannedOnly(
  bins: readonly { tasks: readonly { file: { record_count: bigint; file_size_in_bytes: bigint } }[] }[],
): CompactionReport {
  let rows = 0n;
  let bytes = 0n;
  let files = 0;
  for (const b of bins)
    for (const t of b.tasks) {
      rows += t.file.record_count;
      bytes += t.file.file_size_in_bytes;
      files++;
    }
  return {
    filesRewritten: files,
    filesWritten: 0,
    deleteFilesRemoved: 0,
    rowsBefore: rows,
    rowsAfter: rows,
    bytesBefore: bytes,
    bytesAfter: 0n,
  };
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
