/**
 * `$files` and `$manifests` of one snapshot (the current one unless time travel
 * picks another), with Trino's columns. Bounds are shown human-readable as Java's `toHumanString`
 * writes them (`readable_metrics` holds them as JSON single values).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { fromBinary, toJsonSingleValue } from '../iceberg/conversions.ts';
import { stringifyJson } from '../iceberg/json.ts';
import type { DataFile, ManifestFile } from '../iceberg/manifest/types.ts';
import { DataFileContent } from '../iceberg/manifest/types.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { snapshotManifests } from '../iceberg/scan.ts';
import { leafFields } from '../iceberg/schema.ts';
import type { Snapshot } from '../iceberg/snapshot.ts';
import { currentSchema, snapshotById, type TableMetadata } from '../iceberg/table-metadata.ts';
import { parseTransform, partitionValueToPath, type Transform } from '../iceberg/transform.ts';
import { isPrimitive, type PrimitiveType } from '../iceberg/types.ts';
import { liveEntries } from './manifest-walk.ts';
import type { MetadataTableSource } from './metadata-tables.ts';
import {
  fieldTypeById,
  partitionColumns,
  partitionFieldType,
  partitionLiteral,
  partitionStructType,
} from './partition-columns.ts';
import {
  NULL,
  type RowSet,
  type SqlColumn,
  sqlBigint,
  sqlBlob,
  sqlBool,
  sqlList,
  sqlMap,
  sqlStruct,
  sqlText,
  structType,
} from './sql-literals.ts';

const IDENTITY: Transform = { kind: 'identity' };

export function snapshotOf(src: MetadataTableSource): Snapshot | undefined {
  const id = src.snapshotId ?? src.metadata['current-snapshot-id'];
  if (id === undefined) return undefined;
  const s = snapshotById(src.metadata, id);
  if (!s) throw new FloeError(ErrorKind.NotFound, `table ${src.table} has no snapshot ${id}`);
  return s;
}

export function specOf(m: TableMetadata, id: number): PartitionSpec | undefined {
  return m['partition-specs'].find((s) => s['spec-id'] === id);
}

/** A decoded bound, or undefined when the type is unknown or the bytes do not decode. */
export function decode(type: PrimitiveType | undefined, bytes: Uint8Array | undefined): unknown {
  if (!type || bytes === undefined) return undefined;
  try {
    return fromBinary(type, bytes);
  } catch {
    return undefined;
  }
}

/** Reserved ids of position delete files' columns (spec "Reserved Field IDs"): their bounds show too. */
const RESERVED_TYPES: ReadonlyMap<number, PrimitiveType> = new Map([
  [2147483546, { kind: 'string' }],
  [2147483545, { kind: 'long' }],
]);

function primitiveTypeOf(m: TableMetadata, id: number): PrimitiveType | undefined {
  const reserved = RESERVED_TYPES.get(id);
  if (reserved) return reserved;
  const t = fieldTypeById(m, id);
  return t && isPrimitive(t) ? t : undefined;
}

// ---- $manifests ----

const SUMMARY_TYPE = structType([
  { name: 'contains_null', type: 'BOOLEAN' },
  { name: 'contains_nan', type: 'BOOLEAN' },
  { name: 'lower_bound', type: 'VARCHAR' },
  { name: 'upper_bound', type: 'VARCHAR' },
]);

export async function manifestsRows(src: MetadataTableSource): Promise<RowSet> {
  const columns: SqlColumn[] = [
    { name: 'content', type: 'INTEGER' },
    { name: 'path', type: 'VARCHAR' },
    { name: 'length', type: 'BIGINT' },
    { name: 'partition_spec_id', type: 'INTEGER' },
    { name: 'added_snapshot_id', type: 'BIGINT' },
    { name: 'added_data_files_count', type: 'INTEGER' },
    { name: 'added_rows_count', type: 'BIGINT' },
    { name: 'existing_data_files_count', type: 'INTEGER' },
    { name: 'existing_rows_count', type: 'BIGINT' },
    { name: 'deleted_data_files_count', type: 'INTEGER' },
    { name: 'deleted_rows_count', type: 'BIGINT' },
    { name: 'partition_summaries', type: `${SUMMARY_TYPE}[]` },
  ];
  const snapshot = snapshotOf(src);
  if (!snapshot) return { columns, rows: [] };
  const manifests = await snapshotManifests(snapshot, src.read, src.table);
  return {
    columns,
    rows: manifests.map((mf) => [
      sqlBigint(mf.content),
      sqlText(mf.manifest_path),
      sqlBigint(mf.manifest_length),
      sqlBigint(mf.partition_spec_id),
      sqlBigint(mf.added_snapshot_id),
      sqlBigint(mf.added_files_count),
      sqlBigint(mf.added_rows_count),
      sqlBigint(mf.existing_files_count),
      sqlBigint(mf.existing_rows_count),
      sqlBigint(mf.deleted_files_count),
      sqlBigint(mf.deleted_rows_count),
      partitionSummaries(src.metadata, mf),
    ]),
  };
}

function partitionSummaries(m: TableMetadata, mf: ManifestFile): string {
  const spec = specOf(m, mf.partition_spec_id);
  return sqlList(
    (mf.partitions ?? []).map((s, i) => {
      const field = spec?.fields[i];
      const type = field ? partitionFieldType(m, field) : undefined;
      const transform = field ? parseTransform(field.transform) : IDENTITY;
      const human = (b: Uint8Array | undefined) => {
        const v = decode(type, b);
        return v === undefined || !type ? NULL : sqlText(partitionValueToPath(transform, type, v as never));
      };
      return sqlStruct([
        ['contains_null', sqlBool(s.contains_null)],
        ['contains_nan', sqlBool(s.contains_nan)],
        ['lower_bound', human(s.lower_bound)],
        ['upper_bound', human(s.upper_bound)],
      ]);
    }),
  );
}

// ---- $files ----

export async function filesRows(src: MetadataTableSource): Promise<RowSet> {
  const m = src.metadata;
  const partitions = partitionColumns(m);
  const partitionType = partitionStructType(partitions);
  const columns: SqlColumn[] = [
    { name: 'content', type: 'INTEGER' },
    { name: 'file_path', type: 'VARCHAR' },
    { name: 'file_format', type: 'VARCHAR' },
    { name: 'spec_id', type: 'INTEGER' },
    ...(partitionType ? [{ name: 'partition', type: partitionType }] : []),
    { name: 'record_count', type: 'BIGINT' },
    { name: 'file_size_in_bytes', type: 'BIGINT' },
    { name: 'column_sizes', type: 'MAP(INTEGER, BIGINT)' },
    { name: 'value_counts', type: 'MAP(INTEGER, BIGINT)' },
    { name: 'null_value_counts', type: 'MAP(INTEGER, BIGINT)' },
    { name: 'nan_value_counts', type: 'MAP(INTEGER, BIGINT)' },
    { name: 'lower_bounds', type: 'MAP(INTEGER, VARCHAR)' },
    { name: 'upper_bounds', type: 'MAP(INTEGER, VARCHAR)' },
    { name: 'key_metadata', type: 'BLOB' },
    { name: 'split_offsets', type: 'BIGINT[]' },
    { name: 'equality_ids', type: 'INTEGER[]' },
    { name: 'sort_order_id', type: 'INTEGER' },
    { name: 'readable_metrics', type: 'JSON' },
  ];
  const snapshot = snapshotOf(src);
  if (!snapshot) return { columns, rows: [] };
  const entries = await liveEntries(
    await snapshotManifests(snapshot, src.read, src.table),
    src.read,
    src.table,
  );
  const counts = (c: ReadonlyMap<number, bigint> | undefined) =>
    c === undefined ? NULL : sqlMap([...c].map(([k, v]) => [String(k), sqlBigint(v)] as const));
  const bounds = (b: ReadonlyMap<number, Uint8Array> | undefined) =>
    b === undefined ? NULL : sqlMap(humanBounds(m, b).map(([k, v]) => [String(k), sqlText(v)] as const));
  return {
    columns,
    rows: entries.map(({ manifest, entry }) => {
      const f = entry.data_file;
      return [
        sqlBigint(f.content),
        sqlText(f.file_path),
        sqlText(f.file_format.toUpperCase()),
        sqlBigint(manifest.partition_spec_id),
        ...(partitionType
          ? [partitionLiteral(partitions, specOf(m, manifest.partition_spec_id), f.partition)]
          : []),
        sqlBigint(f.record_count),
        sqlBigint(f.file_size_in_bytes),
        counts(f.column_sizes),
        counts(f.value_counts),
        counts(f.null_value_counts),
        counts(f.nan_value_counts),
        bounds(f.lower_bounds),
        bounds(f.upper_bounds),
        sqlBlob(f.key_metadata),
        f.split_offsets === undefined ? NULL : sqlList(f.split_offsets.map((o) => sqlBigint(o))),
        f.equality_ids === undefined ? NULL : sqlList(f.equality_ids.map((id) => sqlBigint(id))),
        sqlBigint(f.sort_order_id),
        f.content === DataFileContent.DATA ? sqlText(readableMetrics(m, f)) : NULL,
      ];
    }),
  };
}

/** Bounds of columns the table's schemas know, as Java's `toHumanString` text. */
function humanBounds(m: TableMetadata, bounds: ReadonlyMap<number, Uint8Array>): [number, string][] {
  const out: [number, string][] = [];
  for (const [id, bytes] of bounds) {
    const type = primitiveTypeOf(m, id);
    const v = decode(type, bytes);
    if (type && v !== undefined) out.push([id, partitionValueToPath(IDENTITY, type, v as never)]);
  }
  return out;
}

/** Iceberg's `readable_metrics`: per column (dotted name) its metrics, bounds as JSON single values. */
function readableMetrics(m: TableMetadata, f: DataFile): string {
  const out: Record<string, unknown> = {};
  for (const leaf of leafFields(currentSchema(m))) {
    const { id, type } = leaf.field;
    if (!isPrimitive(type) || type.kind === 'unknown') continue;
    const bound = (b: ReadonlyMap<number, Uint8Array> | undefined) => {
      const v = decode(type, b?.get(id));
      return v === undefined ? null : toJsonSingleValue(type, v as never);
    };
    out[leaf.path.join('.')] = {
      column_size: f.column_sizes?.get(id) ?? null,
      value_count: f.value_counts?.get(id) ?? null,
      null_value_count: f.null_value_counts?.get(id) ?? null,
      nan_value_count: f.nan_value_counts?.get(id) ?? null,
      lower_bound: bound(f.lower_bounds),
      upper_bound: bound(f.upper_bounds),
    };
  }
  return stringifyJson(out);
}
