/**
 * What `floe maintain` does to a table and with which thresholds. Each threshold comes from the
 * option if given, else from the table property Java's actions read, else Java's default — so a
 * table tuned for Spark is maintained the same way by Floe.
 */
import type { DataFile } from '../../iceberg/manifest/types.ts';
import type { TableMetadata } from '../../iceberg/table-metadata.ts';
import type { TableIdentifier } from '../../ports/catalog.ts';

export interface MaintenanceSteps {
  readonly compact: boolean;
  readonly rewriteManifests: boolean;
  readonly expire: boolean;
  readonly orphans: boolean;
}

export const ALL_STEPS: MaintenanceSteps = {
  compact: true,
  rewriteManifests: true,
  expire: true,
  orphans: true,
};

export interface MaintenanceOptions {
  readonly steps: MaintenanceSteps;
  /** Keep at least this many of the newest snapshots of the main branch. */
  readonly retainLast?: number;
  /** Expire snapshots older than this (ms); newer ones are always kept. */
  readonly expireOlderThanMs?: number;
  /** Delete orphan files older than this (ms) only: a younger one may belong to a commit in flight. */
  readonly orphansOlderThanMs?: number;
  /** Compaction's target file size (bytes). */
  readonly targetFileSizeBytes?: number;
  /** Plan and report, change nothing. */
  readonly dryRun?: boolean;
  /**
   * Most input bytes one compaction output is made from. Compaction streams a bin (one input
   * file's rows at a time into the output's row groups), so a bin costs little memory beyond its
   * output file's bytes; a Lambda still sets it from its memory size.
   */
  readonly maxBinBytes?: number;
  /**
   * Largest input file compaction packs together with others. An input file's rows are decoded at
   * once (many times its Parquet size), so this bounds the memory of reading one: a larger file is
   * rewritten alone, and only when it has deletes to apply (as before). A Lambda sets it from its
   * memory size.
   */
  readonly maxInputFileBytes?: number;
  /**
   * No compaction group is started after this instant (epoch ms on the deps' clock); the groups
   * rewritten by then are committed and the rest wait for the next run. At least one group is
   * always done, so every run makes progress. For callers with a deadline (a Lambda).
   */
  readonly workUntilMs?: number;
  /**
   * Compaction also rewrites every live data file stored under an earlier spelling of its name
   * (`ObjectStore.storedAsDecoded`), one by one if need be, so readers that take locations
   * literally find them.
   */
  readonly rewriteLocations?: boolean;
  /**
   * The branch a table's writers commit to (config `branches`, write-audit-publish): compaction
   * and the manifest rewrite work on its head, so main can still fast-forward to it. Main when
   * absent, or when the table has no such branch yet.
   */
  readonly branchOf?: (table: TableIdentifier) => string;
}

/** The thresholds in force for one table. */
export interface Thresholds {
  readonly retainLast: number;
  readonly expireOlderThanMs: number;
  readonly orphansOlderThanMs: number;
  readonly targetFileSizeBytes: number;
  /** Files below this size are compacted (Java's default: 75 % of the target). */
  readonly smallFileBytes: number;
  /** Data manifests below this size are merged by the manifest rewrite. */
  readonly manifestTargetBytes: number;
  /** Input bytes per compaction output: the target, capped by the memory budget. */
  readonly binBytes: number;
  /** Input files above this size are not packed with others (memory: one file's rows at a time). */
  readonly maxInputFileBytes: number;
  /** Data files compaction rewrites whatever their size (see `rewriteLocations`). */
  readonly rewrite?: (file: DataFile) => boolean;
}

const DAY_MS = 86_400_000;
/** Java `TableProperties` defaults. */
const JAVA_MAX_SNAPSHOT_AGE_MS = 5 * DAY_MS;
const JAVA_MIN_SNAPSHOTS_TO_KEEP = 1;
const JAVA_TARGET_FILE_SIZE = 512 * 1024 * 1024;
const JAVA_MANIFEST_TARGET = 8 * 1024 * 1024;
/** Java `DeleteOrphanFiles`' default: files younger than 3 days are never deleted. */
const ORPHAN_AGE_MS = 3 * DAY_MS;
/**
 * Input per output file when nothing says otherwise: Floe's default target file size, so bins
 * reach the target. Compaction streams (bench/compact-memory.ts: a 127 MiB bin of 1 MiB files peaks
 * at ~0.7 GiB RSS, ~5.7 MiB per input MiB in all, the output file's bytes included).
 */
export const DEFAULT_MAX_BIN_BYTES = 128 * 1024 * 1024;
/**
 * Largest input file packed with others when nothing says otherwise. One file's rows are decoded
 * at once: ~40–54 × its Parquet size in RSS (the measurement before compaction streamed, of
 * whole bins), so a 16 MiB file needs ~0.9 GiB.
 */
export const DEFAULT_MAX_INPUT_FILE_BYTES = 16 * 1024 * 1024;

export function thresholdsFor(meta: TableMetadata, opts: MaintenanceOptions): Thresholds {
  const p = meta.properties;
  const target =
    opts.targetFileSizeBytes ?? positive(p['write.target-file-size-bytes']) ?? JAVA_TARGET_FILE_SIZE;
  return {
    retainLast:
      opts.retainLast ?? positive(p['history.expire.min-snapshots-to-keep']) ?? JAVA_MIN_SNAPSHOTS_TO_KEEP,
    expireOlderThanMs:
      opts.expireOlderThanMs ?? positive(p['history.expire.max-snapshot-age-ms']) ?? JAVA_MAX_SNAPSHOT_AGE_MS,
    orphansOlderThanMs: opts.orphansOlderThanMs ?? ORPHAN_AGE_MS,
    targetFileSizeBytes: target,
    smallFileBytes: Math.floor(target * 0.75),
    manifestTargetBytes: positive(p['commit.manifest.target-size-bytes']) ?? JAVA_MANIFEST_TARGET,
    binBytes: Math.min(target, opts.maxBinBytes ?? DEFAULT_MAX_BIN_BYTES),
    maxInputFileBytes: opts.maxInputFileBytes ?? DEFAULT_MAX_INPUT_FILE_BYTES,
  };
}

function positive(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
