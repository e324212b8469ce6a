/**
 * Identity partition values as column constants (spec §Column Projection: a field missing from a
 * data file reads as the file's identity partition value). Some writers (DuckDB with
 * `write.data.partition-columns=false`, Hive imports) leave identity partition columns out of the
 * data files; readers take the values from the manifest instead.
 */
import type { PartitionSpec } from './partition-spec.ts';
import { indexById, type Schema } from './schema.ts';
import type { IcebergValue } from './values.ts';

/**
 * Source field id → partition value for the identity fields of `spec`, given a data file's
 * `partition` tuple (in spec field order), in the representation of the source's type in `schema`:
 * a value written while the column was an int reads as a bigint once it is a long.
 */
export function identityPartitionConstants(
  schema: Schema,
  spec: PartitionSpec,
  partition: readonly unknown[],
): Map<number, IcebergValue> {
  const fields = indexById(schema);
  const out = new Map<number, IcebergValue>();
  spec.fields.forEach((p, i) => {
    if (p.transform !== 'identity') return;
    const value = (partition[i] ?? null) as IcebergValue;
    const source = fields.get(p['source-id'])?.field.type;
    out.set(p['source-id'], source?.kind === 'long' && typeof value === 'number' ? BigInt(value) : value);
  });
  return out;
}
