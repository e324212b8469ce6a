/**
 * Row values → Arrow column data, one pass per column, straight into typed arrays (no per-value
 * objects, no `vectorFromArray`), collecting the leaf metrics on the way.
 *
 * A column's values are first pulled out of their parent objects into reusable arrays by a
 * generated extractor (`extract.ts`); builders then loop over those arrays. Each column gets its
 * own, non-overlapping buffers from the allocator.
 */
import * as arrow from 'apache-arrow';
import { ErrorKind, FloeError } from '../errors.ts';
import type { IcebergValue } from '../iceberg/values.ts';
import { badValue, describe, type Obj, type Val, Validity, type Vals } from './build-common.ts';
import type { ListNode, MapNode, PlanNode, StructNode, WritePlan } from './column-plan.ts';
import { extractor, PARENT_NULL } from './extract.ts';
import { buildLeaf } from './leaf-builders.ts';
import { type Allocator, freshAllocator } from './memory.ts';
import { type LeafStats, newLeafStats } from './metrics.ts';

interface BuildContext {
  readonly stats: LeafStats[];
  readonly alloc: Allocator;
  /** A reusable values array for child `index` at nesting depth `depth` (cleared after the build). */
  scratch(depth: number, index: number, n: number): Val[];
}

// ---------------------------------------------------------------------------------------------
// nested

function isPlainObject(v: unknown): v is Obj {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof Map) &&
    !(v instanceof Uint8Array)
  );
}

function buildStruct(node: StructNode, vals: Vals, n: number, ctx: BuildContext, depth: number): arrow.Data {
  const val = new Validity(n);
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (v == null || v === PARENT_NULL) val.onNull(node, v === PARENT_NULL, i);
    else if (!isPlainObject(v)) throw badValue(node, v, i, 'expected an object keyed by field name');
  }
  // `vals` doubles as the parents array: a null or PARENT_NULL slot makes every child PARENT_NULL.
  const outs = node.children.map((_, j) => ctx.scratch(depth + 1, j, n));
  extractor(node.childNames)(vals, n, outs);
  const children = node.children.map((c, j) => buildNode(c, outs[j]!, n, ctx, depth + 1));
  return arrow.makeData({
    type: node.arrowType as arrow.Struct,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    children,
  });
}

/** A null or empty list/map still puts one null entry into every leaf column below it. */
function addEmptyEntries(leafIndexes: readonly number[], count: number, ctx: BuildContext): void {
  if (count === 0) return;
  for (const li of leafIndexes) {
    const st = ctx.stats[li]!;
    st.valueCount += count;
    st.nullCount += count;
  }
}

function buildList(node: ListNode, vals: Vals, n: number, ctx: BuildContext, depth: number): arrow.Data {
  const offsets = ctx.alloc.int32(n + 1);
  const val = new Validity(n);
  const elements: IcebergValue[] = [];
  let empty = 0;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (Array.isArray(v)) {
      const len = v.length;
      if (len === 0) empty++;
      for (let j = 0; j < len; j++) elements.push(v[j]);
    } else if (v == null || v === PARENT_NULL) {
      val.onNull(node, v === PARENT_NULL, i);
      empty++;
    } else throw badValue(node, v, i, 'expected an array');
    offsets[i + 1] = elements.length;
  }
  const child = buildNode(node.element, elements, elements.length, ctx, depth + 1);
  addEmptyEntries(node.leafIndexes, empty, ctx);
  const type = node.arrowType as arrow.List;
  return arrow.makeData({
    type,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    valueOffsets: offsets,
    child,
  });
}

function buildMap(node: MapNode, vals: Vals, n: number, ctx: BuildContext, depth: number): arrow.Data {
  const offsets = ctx.alloc.int32(n + 1);
  const val = new Validity(n);
  const keys: IcebergValue[] = [];
  const values: IcebergValue[] = [];
  const stringKeys = node.key.kind === 'leaf' && node.key.type.kind === 'string';
  let empty = 0;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (v instanceof Map) {
      if (v.size === 0) empty++;
      for (const [k, x] of v) {
        keys.push(k);
        values.push(x);
      }
    } else if (v == null || v === PARENT_NULL) {
      val.onNull(node, v === PARENT_NULL, i);
      empty++;
    } else if (stringKeys && isPlainObject(v)) {
      // Convenience for JSON-shaped input: a plain object is a map with string keys.
      const names = Object.keys(v);
      if (names.length === 0) empty++;
      for (const k of names) {
        keys.push(k);
        values.push(v[k]);
      }
    } else throw badValue(node, v, i, 'expected a Map');
    offsets[i + 1] = keys.length;
  }
  const total = keys.length;
  const entriesType = (node.arrowType as arrow.Map_).children[0]!.type as arrow.Struct;
  const entries = arrow.makeData({
    type: entriesType,
    length: total,
    nullCount: 0,
    children: [
      buildNode(node.key, keys, total, ctx, depth + 1),
      buildNode(node.value, values, total, ctx, depth + 1),
    ],
  });
  addEmptyEntries(node.leafIndexes, empty, ctx);
  const type = node.arrowType as arrow.Map_;
  return arrow.makeData({
    type,
    length: n,
    nullCount: val.nulls,
    nullBitmap: val.bits,
    valueOffsets: offsets,
    child: entries,
  });
}

function buildNode(node: PlanNode, vals: Vals, n: number, ctx: BuildContext, depth: number): arrow.Data {
  switch (node.kind) {
    case 'leaf':
      return buildLeaf(node, vals, n, ctx.stats[node.leafIndex]!, ctx.alloc);
    case 'struct':
      return buildStruct(node, vals, n, ctx, depth);
    case 'list':
      return buildList(node, vals, n, ctx, depth);
    case 'map':
      return buildMap(node, vals, n, ctx, depth);
  }
}

/** Arrow data for every top-level column of `rows`, plus the collected leaf stats. */
export interface BuiltColumns {
  readonly columns: arrow.Data[];
  readonly stats: LeafStats[];
  readonly length: number;
}

// Values arrays reused across columns and calls, per nesting depth and child position; cleared
// after each build so they never keep rows alive.
const scratchPool: Val[][][] = [];

function scratch(depth: number, index: number, n: number): Val[] {
  let level = scratchPool[depth];
  if (level === undefined) {
    level = [];
    scratchPool[depth] = level;
  }
  let a = level[index];
  if (a === undefined || a.length < n) {
    a = new Array<Val>(n);
    level[index] = a;
  }
  return a;
}

function clearScratch(): void {
  // Both levels are sparse (a list element at depth 2 with nothing scratched at depth 1, a
  // struct's third child used before its first), so holes are skipped.
  for (const level of scratchPool) {
    if (level === undefined) continue;
    for (let j = 0; j < level.length; j++) {
      const a = level[j];
      if (a === undefined) continue;
      // Drop very large arrays instead of keeping them for the next file.
      if (a.length > 1 << 20) level[j] = [];
      else a.fill(undefined);
    }
  }
}

/**
 * Converts rows (objects keyed by top-level column name; a missing key is null) into Arrow column
 * data following `plan`. Throws `DataInvalid` naming the column for a value of the wrong type or
 * a null in a required column.
 *
 * @param alloc where column buffers come from; the default allocates fresh memory, so the result
 *   stays valid for as long as the caller keeps it.
 */
export function buildColumns(
  plan: WritePlan,
  rows: readonly object[],
  alloc: Allocator = freshAllocator,
): BuiltColumns {
  const n = rows.length;
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    if (typeof r !== 'object' || r === null) {
      throw new FloeError(ErrorKind.DataInvalid, `row ${i} is not an object: ${describe(r)}`);
    }
  }
  const stats = plan.leaves.map((l) => newLeafStats(l.id, l.type, l.path, !l.inCollection));
  const ctx: BuildContext = { stats, alloc, scratch };
  try {
    const outs = plan.columns.map((_, j) => scratch(0, j, n));
    extractor(plan.columnNames)(rows, n, outs);
    const columns = plan.columns.map((c, j) => buildNode(c, outs[j]!, n, ctx, 0));
    return { columns, stats, length: n };
  } finally {
    clearScratch();
  }
}
