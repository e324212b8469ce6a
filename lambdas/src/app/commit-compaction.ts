/**
 * Compaction scheduled by file count (issue 19): a table committed every few seconds gains a data
 * file per ingest batch, far more than an hourly maintenance sweep keeps up with. After a commit
 * the committer knows the table's totals (its snapshot summary); when the table holds at least
 * `atFiles` data files averaging under half the target file size, it asks for the table's
 * maintenance at once (the same compaction the sweep runs: app/maintain), instead of waiting for
 * the sweep. A table asked for within `cooldownMs` is not asked for again by this committer, and
 * the maintenance run itself skips a table visited that recently, so a table whose files cannot be
 * merged (one small file in each of many partitions) costs one visit per cooldown, not one per pass.
 *
 * Pure: time is passed in.
 */
import type { TableCommitResult } from './committer.ts';

export interface CompactionTrigger {
  /** Data files at which a table is due (default 500). */
  readonly atFiles?: number;
  /** The target data file size; files averaging under half of it count as small. */
  readonly targetFileSizeBytes: number;
  /** Between two requests for one table (default 10 minutes). */
  readonly cooldownMs?: number;
}

export const DEFAULT_COMPACT_AT_FILES = 500;
export const DEFAULT_COMPACT_COOLDOWN_MS = 600_000;

/** True when a committed table holds many files, small on average. */
export function compactionDue(r: TableCommitResult, t: CompactionTrigger): boolean {
  if (r.status !== 'committed' || r.totalDataFiles === undefined || r.totalFilesBytes === undefined)
    return false;
  if (r.totalDataFiles < (t.atFiles ?? DEFAULT_COMPACT_AT_FILES)) return false;
  return r.totalFilesBytes / r.totalDataFiles < t.targetFileSizeBytes / 2;
}

/** Which tables to ask maintenance for, remembering when each was asked for last. */
export class CompactionRequests {
  private readonly asked = new Map<string, number>();

  constructor(private readonly trigger: CompactionTrigger) {}

  /** The tables of `results` due and not asked for within the cooldown; marks them asked at `nowMs`. */
  due(results: readonly TableCommitResult[], nowMs: number): string[] {
    const cooldown = this.trigger.cooldownMs ?? DEFAULT_COMPACT_COOLDOWN_MS;
    const out: string[] = [];
    for (const r of results) {
      if (!compactionDue(r, this.trigger)) continue;
      const at = this.asked.get(r.table);
      if (at !== undefined && nowMs - at < cooldown) continue;
      this.asked.set(r.table, nowMs);
      out.push(r.table);
    }
    // Forget tables asked for long ago, so a long-lived container's map stays small.
    if (this.asked.size > 10_000) {
      for (const [t, at] of this.asked) if (nowMs - at >= cooldown) this.asked.delete(t);
    }
    return out.sort();
  }
}
