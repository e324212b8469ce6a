/**
 * `floe maintain [TABLE…]`: compaction, manifest rewrite, snapshot expiry and orphan cleanup on the
 * tables of a local warehouse (every table when none is named) or on table folders given by path.
 * No step flag means every step; `--dry-run` plans and reports without changing anything.
 */

import type { LocalObjectStore } from '../adapters/local/local-object-store.ts';
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import { type MaintenanceDeps, maintainTable, type TableMaintenanceReport } from '../app/maintain/index.ts';
import { liveRowsReader } from '../app/maintain/live-rows.ts';
import { ALL_STEPS, type MaintenanceOptions, type MaintenanceSteps } from '../app/maintain/options.ts';
import { branchFor } from '../config.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import type { Catalog, TableIdentifier } from '../ports/catalog.ts';
import { readConfigFile } from './config-file.ts';
import { formatDuration, parseDuration } from './duration.ts';
import { ExitCode } from './exit-codes.ts';
import { maintenanceJson, maintenanceReport } from './maintain-report.ts';
import { listAllTables, looksLikePath, openTablePath, requireWarehouse, resolveTable } from './warehouse.ts';

export interface MaintainFlags {
  readonly warehouse?: string;
  readonly compact?: boolean;
  readonly expire?: boolean;
  readonly orphans?: boolean;
  readonly rewriteManifests?: boolean;
  readonly dryRun?: boolean;
  readonly retainLast?: string;
  readonly expireOlderThan?: string;
  readonly orphansOlderThan?: string;
  readonly targetFileSize?: string;
  readonly rewriteLocations?: boolean;
  /** floe.config.json: its `branches` name the branch compaction works on, per table. */
  readonly config?: string;
  readonly json?: boolean;
  readonly quiet?: boolean;
}

/** Below this, `--orphans-older-than` may reach the files of a commit in flight: say so. */
const SAFE_ORPHAN_AGE_MS = 3_600_000;

export async function maintainCommand(
  tables: readonly string[],
  flags: MaintainFlags,
  out: (s: string) => void,
  err: (s: string) => void = (s) => process.stderr.write(`${s}\n`),
): Promise<ExitCode> {
  const config = flags.config === undefined ? undefined : await readConfigFile(flags.config);
  const opts: MaintenanceOptions = {
    ...optionsOf(flags),
    ...(config?.branches === undefined ? {} : { branchOf: (t) => branchFor(config, t.name) }),
  };
  if (
    opts.orphansOlderThanMs !== undefined &&
    opts.orphansOlderThanMs < SAFE_ORPHAN_AGE_MS &&
    opts.steps.orphans
  ) {
    err(
      `floe: warning: --orphans-older-than ${formatDuration(opts.orphansOlderThanMs)} may delete the files of a commit in flight; stop writers first`,
    );
  }
  const targets = await targetsOf(tables, flags.warehouse);
  const reports: TableMaintenanceReport[] = [];
  for (const t of targets) {
    const deps: MaintenanceDeps = {
      catalog: t.catalog,
      store: t.store,
      clock: systemClock,
      ids: randomIds,
      liveRows: liveRowsReader(t.store),
      ...(flags.quiet || flags.json ? {} : { progress: (m: string) => err(m) }),
    };
    reports.push(await maintainTable(deps, t.id, opts));
  }
  out(flags.json ? maintenanceJson(reports) : maintenanceReport(reports));
  return reports.some((r) => r.failed.length > 0) ? ExitCode.TableFailed : ExitCode.Ok;
}

export function optionsOf(flags: MaintainFlags): MaintenanceOptions {
  const chosen: MaintenanceSteps = {
    compact: flags.compact === true || flags.rewriteLocations === true,
    rewriteManifests: flags.rewriteManifests === true,
    expire: flags.expire === true,
    orphans: flags.orphans === true,
  };
  const any = Object.values(chosen).some(Boolean);
  return {
    steps: any ? chosen : ALL_STEPS,
    ...(flags.dryRun ? { dryRun: true } : {}),
    ...(flags.rewriteLocations ? { rewriteLocations: true } : {}),
    ...(flags.retainLast !== undefined
      ? { retainLast: wholeNumber(flags.retainLast, '--retain-last', 1) }
      : {}),
    ...(flags.expireOlderThan !== undefined
      ? { expireOlderThanMs: parseDuration(flags.expireOlderThan, '--expire-older-than') }
      : {}),
    ...(flags.orphansOlderThan !== undefined
      ? { orphansOlderThanMs: parseDuration(flags.orphansOlderThan, '--orphans-older-than') }
      : {}),
    ...(flags.targetFileSize !== undefined
      ? { targetFileSizeBytes: wholeNumber(flags.targetFileSize, '--target-file-size', 1) }
      : {}),
  };
}

function wholeNumber(text: string, what: string, min: number): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `${what} must be a whole number of at least ${min}, got '${text}'`,
      {
        context: { [what]: text },
      },
    );
  }
  return n;
}

interface Target {
  readonly id: TableIdentifier;
  readonly catalog: Catalog;
  readonly store: LocalObjectStore;
}

/** Named tables (in the warehouse, or folders by path), else every table of the warehouse. */
async function targetsOf(tables: readonly string[], warehouse: string | undefined): Promise<Target[]> {
  const out: Target[] = [];
  const wh = tables.every(looksLikePath) && tables.length > 0 ? undefined : await requireWarehouse(warehouse);
  if (tables.length === 0) {
    for (const id of await listAllTables(wh!)) out.push({ id, catalog: wh!.catalog, store: wh!.store });
    if (out.length === 0) throw new FloeError(ErrorKind.NotFound, `warehouse ${wh!.dir} holds no tables`);
    return out;
  }
  for (const ref of tables) {
    if (looksLikePath(ref)) {
      const opened = await openTablePath(ref);
      if (!opened.catalog) {
        throw new FloeError(
          ErrorKind.ConfigInvalid,
          `${ref} is a metadata file: name the table folder (the one holding metadata/) to maintain it`,
        );
      }
      out.push({ id: opened.table.id, catalog: opened.catalog, store: opened.store });
    } else out.push({ id: await resolveTable(wh!, ref), catalog: wh!.catalog, store: wh!.store });
  }
  return out;
}
