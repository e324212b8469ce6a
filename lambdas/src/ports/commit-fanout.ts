/**
 * How a committer run hands slices of its tables to other invocations (issue 19, commit-slices.ts):
 * `dispatch` starts one invocation for one slice and returns once the start is accepted, not when
 * the slice is committed. A dispatch that throws may still have started the invocation (an answer
 * lost on the way): the caller then commits the slice itself, and the per-table commit leases keep
 * the two from writing a table twice.
 */

/** One slice's work: commit the tables of slice `index` of `count` until `untilMs`. */
export interface SliceTask {
  readonly index: number;
  readonly count: number;
  /** Epoch ms: no commit pass starts that would end after it (the next schedule tick takes over). */
  readonly untilMs: number;
  /** Time from one pass's start to the next (0: one pass). */
  readonly intervalMs: number;
  /** The dispatching run (its owner id), for the logs. */
  readonly dispatchedBy: string;
}

export interface CommitFanout {
  dispatch(task: SliceTask): Promise<void>;
}

/** The event a slice invocation receives. */
export interface SliceEvent {
  readonly floeCommitSlice: SliceTask;
}

/** The slice task of an invocation's event, or undefined for any other event (a schedule tick). */
export function sliceTaskOf(event: unknown): SliceTask | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const t = (event as Partial<SliceEvent>).floeCommitSlice;
  if (typeof t !== 'object' || t === null) return undefined;
  const int = (v: unknown, min: number): v is number => Number.isSafeInteger(v) && (v as number) >= min;
  if (!int(t.count, 1) || !int(t.index, 0) || t.index >= t.count) return undefined;
  if (!int(t.untilMs, 0) || !int(t.intervalMs, 0)) return undefined;
  return {
    index: t.index,
    count: t.count,
    untilMs: t.untilMs,
    intervalMs: t.intervalMs,
    dispatchedBy: typeof t.dispatchedBy === 'string' ? t.dispatchedBy : '',
  };
}
