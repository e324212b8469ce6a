/**
 * The `partition` column of `$files` and `$partitions`, as Trino builds it: one struct with a field
 * per partition field of every spec the table ever had (by partition field id), so files written
 * under an older spec show NULL in the fields their spec lacks.
 */

import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { indexById } from '../iceberg/schema.ts';
import { currentSchema, type TableMetadata } from '../iceberg/table-metadata.ts';
import { parseTransform, type Transform, transformResultType } from '../iceberg/transform.ts';
import { type IcebergType, isPrimitive, type PrimitiveType } from '../iceberg/types.ts';
import { duckdbType } from './sql.ts';
import { NULL, type SqlColumn, sqlStruct, sqlValue, structType } from './sql-literals.ts';

export interface PartitionColumn {
  readonly fieldId: number;
  /** The partition field's name, made unique across specs. */
  readonly name: string;
  readonly transform: Transform;
  readonly resultType: PrimitiveType;
}

/** Type of field id `id` (nested too) in the current schema, else in the newest schema holding it. */
export function fieldTypeById(m: TableMetadata, id: number): IcebergType | undefined {
  const current = currentSchema(m);
  const others = m.schemas.filter((s) => s !== current).sort((a, b) => b.schemaId - a.schemaId);
  for (const s of [current, ...others]) {
    const f = indexById(s).get(id);
    if (f) return f.field.type;
  }
  return undefined;
}

/** Result type of a partition field; undefined when its source column is unknown or not primitive. */
export function partitionFieldType(
  m: TableMetadata,
  field: PartitionSpec['fields'][number],
): PrimitiveType | undefined {
  const source = fieldTypeById(m, field['source-id']);
  if (!source || !isPrimitive(source)) return undefined;
  return transformResultType(parseTransform(field.transform), source);
}

/** Every non-void partition field of every spec, oldest spec first, each field id once. */
export function partitionColumns(m: TableMetadata): PartitionColumn[] {
  const out: PartitionColumn[] = [];
  const names = new Set<string>();
  const specs = [...m['partition-specs']].sort((a, b) => a['spec-id'] - b['spec-id']);
  for (const spec of specs) {
    for (const f of spec.fields) {
      const transform = parseTransform(f.transform);
      if (transform.kind === 'void' || out.some((c) => c.fieldId === f['field-id'])) continue;
      const resultType = partitionFieldType(m, f);
      if (!resultType) continue;
      const name = names.has(f.name) ? `${f.name}_${f['field-id']}` : f.name;
      names.add(name);
      out.push({ fieldId: f['field-id'], name, transform, resultType });
    }
  }
  return out;
}

/** `STRUCT(...)` of the partition column; undefined for a table never partitioned (no column). */
export function partitionStructType(columns: readonly PartitionColumn[]): string | undefined {
  if (columns.length === 0) return undefined;
  const fields: SqlColumn[] = columns.map((c) => ({ name: c.name, type: duckdbType(c.resultType) }));
  return structType(fields);
}

/** A file's partition tuple (in `spec` field order) as a literal of the partition struct. */
export function partitionLiteral(
  columns: readonly PartitionColumn[],
  spec: PartitionSpec | undefined,
  values: readonly unknown[],
): string {
  if (columns.length === 0) return NULL;
  return sqlStruct(
    columns.map((c) => {
      const i = spec?.fields.findIndex((f) => f['field-id'] === c.fieldId) ?? -1;
      return [c.name, i < 0 ? NULL : sqlValue(c.resultType, values[i])];
    }),
  );
}
