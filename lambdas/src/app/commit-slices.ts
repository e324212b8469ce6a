/**
 * The slices of a committer fan-out (issue 19): the tables with staged work are split into slices,
 * each committed by its own invocation (commit-loop.ts).
 *
 * A table belongs to slice `murmur3(name) mod count`: stable, so a table stays in its slice from
 * one pass to the next and two slices never hold the same table. The per-table commit lease stays
 * the one guard against two writers (a table the slice count moved between two ticks may meet a
 * committer of the old slice: it finds the lease held and leaves the table to it).
 * `planSliceCount` sizes the fan-out from the backlog: one slice per `tablesPerSlice` tables with
 * staged work, at most `maxSlices`. One slice is the committer as it always was.
 */
import { murmur3Hash32 } from '../iceberg/murmur3.ts';

/** Which slices of how many an invocation commits (`indexes` within 0 … count − 1). */
export interface SliceSet {
  readonly count: number;
  readonly indexes: readonly number[];
}

/** The whole table set as one slice (the committer without fan-out). */
export const ALL_TABLES: SliceSet = { count: 1, indexes: [0] };

const utf8 = new TextEncoder();

/** The slice (of `count`) that `table` belongs to. */
export function sliceOfTable(table: string, count: number): number {
  if (count <= 1) return 0;
  return (murmur3Hash32(utf8.encode(table)) >>> 0) % count;
}

/** The tables of `tables` that belong to `slices`, in their order. */
export function tablesInSlices(tables: readonly string[], slices: SliceSet): string[] {
  if (slices.count <= 1) return [...tables];
  const wanted = new Set(slices.indexes);
  return tables.filter((t) => wanted.has(sliceOfTable(t, slices.count)));
}

export interface SlicePlanOptions {
  /** Tables with staged work one slice takes before another is added (default 250). */
  readonly tablesPerSlice?: number;
  /** The fan-out's ceiling (default 20); 1 turns fan-out off. */
  readonly maxSlices?: number;
}

export const DEFAULT_TABLES_PER_SLICE = 250;
export const DEFAULT_MAX_SLICES = 20;

/** How many slices a backlog of `tablesWithWork` tables is split into (at least 1). */
export function planSliceCount(tablesWithWork: number, opts: SlicePlanOptions = {}): number {
  const per = Math.max(1, Math.floor(opts.tablesPerSlice ?? DEFAULT_TABLES_PER_SLICE));
  const max = Math.max(1, Math.floor(opts.maxSlices ?? DEFAULT_MAX_SLICES));
  return Math.min(max, Math.max(1, Math.ceil(tablesWithWork / per)));
}

/** The slice sets of a fan-out of `count`: the caller's (slice 0) and one per further slice. */
export function fanOut(count: number): { readonly own: SliceSet; readonly others: SliceSet[] } {
  const others: SliceSet[] = [];
  for (let i = 1; i < count; i++) others.push({ count, indexes: [i] });
  return { own: { count, indexes: [0] }, others };
}
