/**
 * Version-keyed field tables of the manifest-list and manifest structs (spec: "Manifest Lists",
 * "Manifests"; facts §2.3–2.7). The Avro schemas are generated from these tables, so the field
 * order of each table is the order Java writes (`V1Metadata`, `V2Metadata`, `V3Metadata`).
 */
import { type IcebergType, list, map, type NestedField, type StructType, T } from '../types.ts';

export type FormatVersion = 1 | 2 | 3;

export interface ManifestFieldDef {
  readonly id: number;
  readonly name: string;
  /** `partition` / `data_file` are placeholders filled in per partition spec. */
  readonly type: IcebergType | 'partition' | 'data_file';
  /** `true`/`false`, or the first format version from which the field is required. */
  readonly required: boolean | FormatVersion;
  readonly doc?: string;
  readonly minVersion: FormatVersion;
  readonly maxVersion?: FormatVersion;
  /** Names other writers used for the same id (read side; files are matched by id first). */
  readonly aliases?: readonly string[];
}

function def(
  id: number,
  name: string,
  type: ManifestFieldDef['type'],
  required: ManifestFieldDef['required'],
  doc?: string,
  minVersion: FormatVersion = 1,
  maxVersion?: FormatVersion,
  aliases?: readonly string[],
): ManifestFieldDef {
  return {
    id,
    name,
    type,
    required,
    minVersion,
    ...(doc === undefined ? {} : { doc }),
    ...(maxVersion === undefined ? {} : { maxVersion }),
    ...(aliases === undefined ? {} : { aliases }),
  };
}

/** `field_summary` (element 508 of `partitions`, Avro record `r508`). */
export const FIELD_SUMMARY_FIELDS: readonly ManifestFieldDef[] = [
  def(509, 'contains_null', T.boolean, true, 'True if any file has a null partition value'),
  def(518, 'contains_nan', T.boolean, false, 'True if any file has a nan partition value'),
  def(510, 'lower_bound', T.binary, false, 'Partition lower bound for all files'),
  def(511, 'upper_bound', T.binary, false, 'Partition upper bound for all files'),
];

const PARTITIONS_ELEMENT_ID = 508;
const PARTITIONS_TYPE = list(
  PARTITIONS_ELEMENT_ID,
  { kind: 'struct', fields: FIELD_SUMMARY_FIELDS.map((f) => toField(f, 1)) },
  true,
);
const PARTITIONS_DOC = 'Summary for each partition';

/** `manifest_file`: one record per manifest in a manifest list. */
export const MANIFEST_FILE_FIELDS: readonly ManifestFieldDef[] = [
  def(500, 'manifest_path', T.string, true, 'Location URI with FS scheme'),
  def(501, 'manifest_length', T.long, true, 'Total file size in bytes'),
  def(502, 'partition_spec_id', T.int, true, 'Spec ID used to write'),
  def(517, 'content', T.int, true, 'Contents of the manifest: 0=data, 1=deletes', 2),
  def(515, 'sequence_number', T.long, true, 'Sequence number when the manifest was added', 2),
  def(516, 'min_sequence_number', T.long, true, 'Lowest sequence number in the manifest', 2),
  def(503, 'added_snapshot_id', T.long, true, 'Snapshot ID that added the manifest'),
  def(504, 'added_files_count', T.int, 2, 'Added entry count', 1, undefined, ['added_data_files_count']),
  def(505, 'existing_files_count', T.int, 2, 'Existing entry count', 1, undefined, [
    'existing_data_files_count',
  ]),
  def(506, 'deleted_files_count', T.int, 2, 'Deleted entry count', 1, undefined, [
    'deleted_data_files_count',
  ]),
  // v1 writes the summaries before the row counts; v2+ after them.
  def(507, 'partitions', PARTITIONS_TYPE, false, PARTITIONS_DOC, 1, 1),
  def(512, 'added_rows_count', T.long, 2, 'Added rows count'),
  def(513, 'existing_rows_count', T.long, 2, 'Existing rows count'),
  def(514, 'deleted_rows_count', T.long, 2, 'Deleted rows count'),
  def(507, 'partitions', PARTITIONS_TYPE, false, PARTITIONS_DOC, 2),
  def(519, 'key_metadata', T.binary, false, 'Encryption key metadata blob'),
  def(520, 'first_row_id', T.long, false, 'Starting row ID to assign to new rows in ADDED data files', 3),
];

/** `manifest_entry`: one record per file in a manifest. */
export const MANIFEST_ENTRY_FIELDS: readonly ManifestFieldDef[] = [
  def(0, 'status', T.int, true),
  def(1, 'snapshot_id', T.long, false),
  def(3, 'sequence_number', T.long, false, undefined, 2),
  def(4, 'file_sequence_number', T.long, false, undefined, 2),
  def(2, 'data_file', 'data_file', true),
];

const intLong = (k: number, v: number) => map(k, T.int, v, T.long, true);
const intBinary = (k: number, v: number) => map(k, T.int, v, T.binary, true);

/** `data_file` (field 2, Avro record `r2`). */
export const DATA_FILE_FIELDS: readonly ManifestFieldDef[] = [
  def(134, 'content', T.int, true, 'Contents of the file: 0=data, 1=position deletes, 2=equality deletes', 2),
  def(100, 'file_path', T.string, true, 'Location URI with FS scheme'),
  def(101, 'file_format', T.string, true, 'File format name: avro, orc, or parquet'),
  // Java's v1 partition field has no doc.
  def(102, 'partition', 'partition', true, undefined, 1, 1),
  def(102, 'partition', 'partition', true, 'Partition data tuple, schema based on the partition spec', 2),
  def(103, 'record_count', T.long, true, 'Number of records in the file'),
  def(104, 'file_size_in_bytes', T.long, true, 'Total file size in bytes'),
  def(105, 'block_size_in_bytes', T.long, true, undefined, 1, 1),
  def(108, 'column_sizes', intLong(117, 118), false, 'Map of column id to total size on disk'),
  def(
    109,
    'value_counts',
    intLong(119, 120),
    false,
    'Map of column id to total count, including null and NaN',
  ),
  def(110, 'null_value_counts', intLong(121, 122), false, 'Map of column id to null value count'),
  def(
    137,
    'nan_value_counts',
    intLong(138, 139),
    false,
    'Map of column id to number of NaN values in the column',
  ),
  def(125, 'lower_bounds', intBinary(126, 127), false, 'Map of column id to lower bound'),
  def(128, 'upper_bounds', intBinary(129, 130), false, 'Map of column id to upper bound'),
  def(131, 'key_metadata', T.binary, false, 'Encryption key metadata blob'),
  def(132, 'split_offsets', list(133, T.long, true), false, 'Splittable offsets'),
  def(135, 'equality_ids', list(136, T.int, true), false, 'Equality comparison field IDs', 2),
  def(140, 'sort_order_id', T.int, false, 'Sort order ID'),
  def(142, 'first_row_id', T.long, false, 'The first row ID assigned to the first row in the data file', 3),
  def(
    143,
    'referenced_data_file',
    T.string,
    false,
    'Fully qualified location (URI with FS scheme) of a data file that all deletes reference',
    2,
  ),
  def(144, 'content_offset', T.long, false, 'The offset in the file where the content starts', 3),
  def(145, 'content_size_in_bytes', T.long, false, 'The length of referenced content stored in the file', 3),
];

/** Java's v1 default for the v1-only `block_size_in_bytes` (64 MiB). */
export const V1_DEFAULT_BLOCK_SIZE = 64n * 1024n * 1024n;

export function inVersion(f: ManifestFieldDef, v: FormatVersion): boolean {
  return f.minVersion <= v && (f.maxVersion === undefined || v <= f.maxVersion);
}

export function isRequiredIn(f: ManifestFieldDef, v: FormatVersion): boolean {
  return typeof f.required === 'boolean' ? f.required : v >= f.required;
}

function toField(
  f: ManifestFieldDef,
  v: FormatVersion,
  resolve?: (p: 'partition' | 'data_file') => IcebergType,
) {
  const type = typeof f.type === 'string' ? resolve!(f.type) : f.type;
  const out: NestedField = { id: f.id, name: f.name, required: isRequiredIn(f, v), type };
  return f.doc === undefined ? out : { ...out, doc: f.doc };
}

function structFor(
  fields: readonly ManifestFieldDef[],
  v: FormatVersion,
  resolve?: (p: 'partition' | 'data_file') => IcebergType,
): StructType {
  return { kind: 'struct', fields: fields.filter((f) => inVersion(f, v)).map((f) => toField(f, v, resolve)) };
}

/** Partition tuple type as written in manifests: every partition field is optional (Java `partitionType`). */
export function manifestPartitionType(partitionType: StructType): StructType {
  return { kind: 'struct', fields: partitionType.fields.map((f) => ({ ...f, required: false })) };
}

/** The `manifest_file` struct of a manifest list in format version `v`. */
export function manifestFileType(v: FormatVersion): StructType {
  return structFor(MANIFEST_FILE_FIELDS, v);
}

/** The `data_file` struct for format version `v` and a partition type. */
export function dataFileType(v: FormatVersion, partitionType: StructType): StructType {
  return structFor(DATA_FILE_FIELDS, v, () => manifestPartitionType(partitionType));
}

/** The `manifest_entry` struct for format version `v` and a partition type. */
export function manifestEntryType(v: FormatVersion, partitionType: StructType): StructType {
  return structFor(MANIFEST_ENTRY_FIELDS, v, () => dataFileType(v, partitionType));
}

/**
 * Reads the fields of a decoded struct by field id (falling back to the table's names and aliases
 * for writers that omitted `field-id`). Absent and null both read as null.
 */
export function fieldAccessor(
  struct: StructType,
  value: unknown,
  defs: readonly ManifestFieldDef[],
): { get(id: number): unknown; type(id: number): IcebergType | undefined } {
  const byId = new Map<number, NestedField>();
  for (const f of struct.fields) if (f.id >= 0 && !byId.has(f.id)) byId.set(f.id, f);
  for (const f of struct.fields) {
    if (f.id >= 0) continue;
    const d = defs.find((x) => x.name === f.name || x.aliases?.includes(f.name));
    if (d && !byId.has(d.id)) byId.set(d.id, f);
  }
  const obj = (value ?? {}) as Record<string, unknown>;
  return {
    get(id) {
      const f = byId.get(id);
      const v = f === undefined ? undefined : obj[f.name];
      return v === undefined ? null : v;
    },
    type(id) {
      return byId.get(id)?.type;
    },
  };
}
