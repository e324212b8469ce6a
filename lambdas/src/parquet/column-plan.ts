/**
 * A write plan for an Iceberg schema: the tree of columns to build, each with its Arrow field,
 * plus the list of primitive leaves (Parquet columns) that metrics are kept for.
 * Plans are pure functions of the schema and are cached per schema object.
 */
import * as arrow from 'apache-arrow';
import type { Schema } from '../iceberg/schema.ts';
import type { IcebergType, NestedField, PrimitiveType, StructType } from '../iceberg/types.ts';
import { arrowField, hasColumns } from './arrow-schema.ts';

interface NodeBase {
  /** Key of the value in its parent object (struct field name); unused for list/map children. */
  readonly name: string;
  /** Dotted path from the root, for error messages. */
  readonly path: string;
  readonly required: boolean;
  readonly arrowType: arrow.DataType;
}
export interface LeafNode extends NodeBase {
  readonly kind: 'leaf';
  readonly id: number;
  readonly type: PrimitiveType;
  /** Index into the plan's `leaves` (and the per-build stats array). */
  readonly leafIndex: number;
}
export interface StructNode extends NodeBase {
  readonly kind: 'struct';
  /** Iceberg field id of the struct field (the schema root is never a node). */
  readonly id: number;
  readonly children: readonly PlanNode[];
  readonly childNames: readonly string[];
}
export interface ListNode extends NodeBase {
  readonly kind: 'list';
  readonly element: PlanNode;
  /** Leaves below this list, which get a null entry for every null or empty list. */
  readonly leafIndexes: readonly number[];
}
export interface MapNode extends NodeBase {
  readonly kind: 'map';
  readonly key: PlanNode;
  readonly value: PlanNode;
  readonly leafIndexes: readonly number[];
}
export type PlanNode = LeafNode | StructNode | ListNode | MapNode;

export interface PlanLeaf {
  readonly id: number;
  readonly type: PrimitiveType;
  readonly path: string;
  /** Inside a list or map (no bounds are kept). */
  readonly inCollection: boolean;
}

export interface WritePlan {
  readonly arrowSchema: arrow.Schema;
  readonly columns: readonly PlanNode[];
  readonly columnNames: readonly string[];
  readonly leaves: readonly PlanLeaf[];
}

const cache = new WeakMap<object, WritePlan>();

/** The (cached) write plan for a schema. */
export function planFor(schema: Schema | StructType): WritePlan {
  const hit = cache.get(schema);
  if (hit) return hit;
  const leaves: PlanLeaf[] = [];

  const node = (
    name: string,
    path: string,
    required: boolean,
    type: IcebergType,
    id: number,
    field: arrow.Field,
    inCollection: boolean,
  ): PlanNode => {
    const base = { name, path, required, arrowType: field.type };
    switch (type.kind) {
      case 'struct': {
        const kept = type.fields.filter((f) => hasColumns(f.type));
        const children = kept.map((f, i) =>
          node(f.name, `${path}.${f.name}`, f.required, f.type, f.id, field.type.children[i], inCollection),
        );
        return { ...base, kind: 'struct', id, children, childNames: kept.map((f) => f.name) };
      }
      case 'list': {
        const first = leaves.length;
        const element = node(
          'element',
          `${path}.element`,
          type.elementRequired,
          type.element,
          type.elementId,
          field.type.children[0],
          true,
        );
        return { ...base, kind: 'list', element, leafIndexes: range(first, leaves.length) };
      }
      case 'map': {
        const first = leaves.length;
        const entries: arrow.Field = field.type.children[0];
        const key = node('key', `${path}.key`, true, type.key, type.keyId, entries.type.children[0], true);
        const value = node(
          'value',
          `${path}.value`,
          type.valueRequired,
          type.value,
          type.valueId,
          entries.type.children[1],
          true,
        );
        return { ...base, kind: 'map', key, value, leafIndexes: range(first, leaves.length) };
      }
      default: {
        const leafIndex = leaves.length;
        leaves.push({ id, type, path, inCollection });
        return { ...base, kind: 'leaf', id, type, leafIndex };
      }
    }
  };

  const kept: NestedField[] = schema.fields.filter((f) => hasColumns(f.type));
  const fields = kept.map(arrowField);
  const columns = kept.map((f, i) => node(f.name, f.name, f.required, f.type, f.id, fields[i]!, false));
  const plan: WritePlan = {
    arrowSchema: new arrow.Schema(fields),
    columns,
    columnNames: kept.map((f) => f.name),
    leaves,
  };
  cache.set(schema, plan);
  return plan;
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < to; i++) out.push(i);
  return out;
}
