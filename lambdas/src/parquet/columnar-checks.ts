/**
 * Checks a columnar batch against its schema's write plan before any column is built (shared by
 * the Arrow builders of columnar.ts and the native writer of file-writer.ts).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { indexById, type Schema } from '../iceberg/schema.ts';
import { primitiveToString } from '../iceberg/types.ts';
import { hasColumns } from './arrow-schema.ts';
import type { LeafNode, PlanNode, WritePlan } from './column-plan.ts';
import type { ColumnarBatch, ColumnarLeaf, ColumnValues } from './columnar.ts';

export type Ctor = { new (n: number): unknown; readonly name: string };

export function checkArray(node: PlanNode, a: unknown, ctor: Ctor, what: string, n: number): void {
  if (!(a instanceof ctor)) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `column '${node.path}': ${what} must be a ${ctor.name}, got ${describeArray(a)}`,
      { context: { column: node.path } },
    );
  }
  checkLength(node, (a as ArrayLike<unknown>).length, what, n);
}

export function checkLength(node: PlanNode, length: number, what: string, n: number): void {
  if (length < n) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `column '${node.path}': ${what} has ${length} entries for ${n} rows`,
      {
        context: { column: node.path },
      },
    );
  }
}

function describeArray(a: unknown): string {
  if (a === null || a === undefined) return String(a);
  if (typeof a === 'object') return (a as object).constructor?.name ?? 'object';
  return typeof a;
}

/** Which `ColumnValues` kinds carry each primitive type (besides `any`, which carries all). */
export function fits(kind: ColumnValues['kind'], node: LeafNode): boolean {
  switch (kind) {
    case 'any':
      return true;
    case 'int64':
      return (
        node.type.kind === 'long' ||
        node.type.kind === 'time' ||
        node.type.kind === 'timestamp' ||
        node.type.kind === 'timestamptz' ||
        node.type.kind === 'timestamp_ns' ||
        node.type.kind === 'timestamptz_ns'
      );
    case 'int32':
      return node.type.kind === 'int' || node.type.kind === 'date';
    case 'float64':
      return node.type.kind === 'double';
    case 'float32':
      return node.type.kind === 'float';
    case 'bool':
      return node.type.kind === 'boolean';
    case 'utf8':
      return node.type.kind === 'string' || node.type.kind === 'uuid';
    case 'utf8-bytes':
      return node.type.kind === 'string';
  }
}

/**
 * A leaf's values: a kind that carries its type, validity bytes and arrays of the right class and
 * length (`n` rows), string offsets that fit their data.
 */
export function checkLeafValues(node: LeafNode, leaf: ColumnarLeaf, n: number): void {
  const cv = leaf.values;
  if (!fits(cv.kind, node)) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `column '${node.path}' (${primitiveToString(node.type)}) cannot take '${cv.kind}' column values`,
      { context: { column: node.path } },
    );
  }
  if (leaf.valid !== undefined) checkArray(node, leaf.valid, Uint8Array, 'valid', n);
  switch (cv.kind) {
    case 'any':
    case 'utf8':
      if (!Array.isArray(cv.values)) {
        throw new FloeError(ErrorKind.DataInvalid, `column '${node.path}': values must be an array`, {
          context: { column: node.path },
        });
      }
      checkLength(node, cv.values.length, 'values', n);
      return;
    case 'utf8-bytes':
      checkArray(node, cv.offsets, Int32Array, 'offsets', n + 1);
      if (cv.offsets[0] !== 0 || cv.offsets[n]! > cv.data.length) {
        throw new FloeError(
          ErrorKind.DataInvalid,
          `column '${node.path}': string offsets do not fit the data`,
          {
            context: { column: node.path },
          },
        );
      }
      return;
    case 'int64':
      checkArray(node, cv.values, BigInt64Array, 'values', n);
      return;
    case 'int32':
      checkArray(node, cv.values, Int32Array, 'values', n);
      return;
    case 'float64':
      checkArray(node, cv.values, Float64Array, 'values', n);
      return;
    case 'float32':
      checkArray(node, cv.values, Float32Array, 'values', n);
      return;
    case 'bool':
      checkArray(node, cv.values, Uint8Array, 'values', n);
      return;
  }
}

const planIdsCache = new WeakMap<WritePlan, { leaves: Set<number>; structs: Set<number> }>();

function planIds(plan: WritePlan): { leaves: Set<number>; structs: Set<number> } {
  let ids = planIdsCache.get(plan);
  if (ids) return ids;
  ids = { leaves: new Set(plan.leaves.map((l) => l.id)), structs: new Set() };
  const structs = ids.structs;
  const visit = (node: PlanNode): void => {
    if (node.kind !== 'struct') return;
    structs.add(node.id);
    node.children.forEach(visit);
  };
  plan.columns.forEach(visit);
  planIdsCache.set(plan, ids);
  return ids;
}

/**
 * Every id in the batch must be a leaf (or struct) the plan writes; ids of fields without columns
 * (Iceberg `unknown`, structs of only `unknown`) are ignored, since those are always null.
 */
export function checkIds(schema: Schema, plan: WritePlan, batch: ColumnarBatch): void {
  const ids = planIds(plan);
  const check = (id: number, known: Set<number>, what: string): void => {
    if (known.has(id)) return;
    const f = indexById(schema).get(id);
    if (f !== undefined && !hasColumns(f.field.type)) return;
    throw new FloeError(
      ErrorKind.DataInvalid,
      f === undefined
        ? `batch has ${what} for field id ${id}, which is not in the schema`
        : `batch has ${what} for field id ${id} ('${f.path.join('.')}'), which is not a ${what === 'leaf values' ? 'primitive column' : 'struct'}`,
      { context: { fieldId: id } },
    );
  };
  for (const id of batch.leaves.keys()) check(id, ids.leaves, 'leaf values');
  if (batch.structValid) for (const id of batch.structValid.keys()) check(id, ids.structs, 'struct validity');
}
