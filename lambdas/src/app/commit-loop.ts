/**
 * Commits that stay fresh (issue 19): an invocation may commit its slices (commit-slices.ts) again
 * and again, every `intervalMs`, until a deadline, so a table is committed within about an interval
 * of its data being staged even though a schedule fires at most once a minute.
 *
 * `runCommitLoop` is one invocation's work: passes of `runCommitter` over its slices, the next pass
 * starting `intervalMs` after the previous one started (at once when a pass took longer), no pass
 * starting that would end past `untilMs`. With `untilMs` at or before the start it is exactly one
 * pass.
 *
 * Pure: time and waiting come from the injected clock and `sleep`.
 */
import { type CommitterDeps, type CommitterRun, type RunOptions, runCommitter } from './committer.ts';

export interface CommitLoopOptions extends Omit<RunOptions, 'tablesWithStagedWork'> {
  /** The tables with staged work for the first pass, when the caller has just listed them. */
  readonly firstTables?: readonly string[];
  /** Time from one pass's start to the next's (0 or absent: one pass). */
  readonly intervalMs?: number;
  /** Epoch ms (deps.clock): no pass starts that would end after it; one pass at least. */
  readonly untilMs?: number;
  /** Waits `ms` (injected: the core has no timers of its own). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Stops the loop before its next pass (e.g. the process is stopping). */
  readonly stopped?: () => boolean;
  /** After each pass (awaited before the next starts). */
  readonly onPass?: (run: CommitterRun, pass: number) => void | Promise<void>;
  /** Keep every pass's run in the result (default true; a loop without an end passes false). */
  readonly keepRuns?: boolean;
}

export interface CommitLoopResult {
  readonly passes: number;
  readonly runs: readonly CommitterRun[];
}

/** Passes of `runCommitter` over `slices` until `untilMs` (see the module comment). */
export async function runCommitLoop(
  deps: CommitterDeps,
  opts: CommitLoopOptions = {},
): Promise<CommitLoopResult> {
  const interval = Math.max(0, opts.intervalMs ?? 0);
  const runs: CommitterRun[] = [];
  let passes = 0;
  for (;;) {
    const started = deps.clock.nowMs();
    const run = await runCommitter(deps, {
      ...(opts.concurrency === undefined ? {} : { concurrency: opts.concurrency }),
      ...(opts.onTable === undefined ? {} : { onTable: opts.onTable }),
      ...(opts.slices === undefined ? {} : { slices: opts.slices }),
      ...(opts.startDeadlineMs === undefined ? {} : { startDeadlineMs: opts.startDeadlineMs }),
      ...(passes === 0 && opts.firstTables !== undefined ? { tablesWithStagedWork: opts.firstTables } : {}),
    });
    passes++;
    if (opts.keepRuns !== false) runs.push(run);
    await opts.onPass?.(run, passes);
    if (interval === 0 || opts.untilMs === undefined || opts.stopped?.()) break;
    const next = Math.max(started + interval, deps.clock.nowMs());
    // A pass takes about as long as the last one did; none may start that would end past `untilMs`
    // (the next invocation takes over then) or past the invocation's own start deadline.
    const took = deps.clock.nowMs() - started;
    if (next + took > opts.untilMs) break;
    if (opts.startDeadlineMs !== undefined && next >= opts.startDeadlineMs) break;
    const wait = next - deps.clock.nowMs();
    if (wait > 0) {
      if (opts.sleep === undefined) break;
      await opts.sleep(wait);
    }
    if (opts.stopped?.()) break;
  }
  return { passes, runs };
}
