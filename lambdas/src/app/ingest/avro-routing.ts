/** An Avro record at routing: the view of it the field router sees, and the column and depth guards. */
import type { FloeConfig } from '../../config.ts';
import { type DeadLetter, DeadLetterReason } from '../../engine/dead-letters.ts';
import { schemaColumnPaths } from '../../engine/record-rules.ts';
import type { IcebergType, StructType } from '../../iceberg/types.ts';
import type { Row } from '../../iceberg/values.ts';
import type { DecodedAvro } from '../../records/decode.ts';

/** The routing field of an Avro row as the router sees JSON (a top-level or dotted path). */
export function routingView(row: Row, field: string): Record<string, unknown> {
  const path = field.split('.');
  let v: unknown = row;
  for (const p of path)
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  if (typeof v === 'bigint') v = v.toString();
  const out: Record<string, unknown> = {};
  let at = out;
  for (let i = 0; i < path.length - 1; i++) {
    const next: Record<string, unknown> = {};
    at[path[i]!] = next;
    at = next;
  }
  if (v !== undefined) at[path[path.length - 1]!] = v;
  return out;
}

/** Why an Avro record's (reshaped) writer schema is beyond the column or depth limit, if it is. */
export function beyondLimits(
  d: DecodedAvro,
  limits: FloeConfig['limits'],
): { reason: DeadLetter['reason']; detail: string } | undefined {
  const shape = typeShape(d.struct);
  const schema = `schema '${d.schemaName}' version ${d.versionNumber}`;
  if (shape.columns > limits.maxColumnsPerTable) {
    return {
      reason: DeadLetterReason.GuardMaxColumns,
      detail: `guard maxColumnsPerTable: ${schema} has ${shape.columns} columns, limit ${limits.maxColumnsPerTable}`,
    };
  }
  if (shape.depth > limits.maxNestingDepth) {
    return {
      reason: DeadLetterReason.GuardMaxDepth,
      detail: `guard maxNestingDepth: ${schema} nests ${shape.depth} levels, limit ${limits.maxNestingDepth}`,
    };
  }
  return undefined;
}

/**
 * A writer schema's size for the limits: its columns (nested fields count) and its levels of
 * structs and lists, as JSON nesting counts them. Cached per schema (a few per stream).
 */
function typeShape(t: StructType): { columns: number; depth: number } {
  let shape = typeShapes.get(t);
  if (shape === undefined) {
    shape = { columns: schemaColumnPaths({ schemaId: 0, fields: t.fields }).size, depth: nestingOfType(t) };
    typeShapes.set(t, shape);
  }
  return shape;
}
const typeShapes = new WeakMap<StructType, { columns: number; depth: number }>();

function nestingOfType(t: IcebergType): number {
  if (t.kind === 'struct') return 1 + t.fields.reduce((m, f) => Math.max(m, nestingOfType(f.type)), 0);
  if (t.kind === 'list') return 1 + nestingOfType(t.element);
  if (t.kind === 'map') return 1 + Math.max(nestingOfType(t.key), nestingOfType(t.value));
  return 0;
}
