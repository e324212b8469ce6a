/**
 * Manifest model (spec: "Manifests", "Manifest Lists"), with the spec's snake_case field names.
 * Longs are bigints; metric maps are keyed by field id.
 */
export const ManifestEntryStatus = { EXISTING: 0, ADDED: 1, DELETED: 2 } as const;
export type ManifestEntryStatus = (typeof ManifestEntryStatus)[keyof typeof ManifestEntryStatus];

export const DataFileContent = { DATA: 0, POSITION_DELETES: 1, EQUALITY_DELETES: 2 } as const;
export type DataFileContent = (typeof DataFileContent)[keyof typeof DataFileContent];

export const ManifestContent = { DATA: 0, DELETES: 1 } as const;
export type ManifestContent = (typeof ManifestContent)[keyof typeof ManifestContent];

export interface DataFile {
  readonly content: DataFileContent;
  readonly file_path: string;
  /** `PARQUET`, `AVRO`, `ORC`, `PUFFIN` (Java writes upper case; compare case-insensitively). */
  readonly file_format: string;
  /** Partition values in spec field order, in the internal value representation of the result type. */
  readonly partition: readonly unknown[];
  readonly record_count: bigint;
  readonly file_size_in_bytes: bigint;
  readonly column_sizes?: ReadonlyMap<number, bigint>;
  readonly value_counts?: ReadonlyMap<number, bigint>;
  readonly null_value_counts?: ReadonlyMap<number, bigint>;
  readonly nan_value_counts?: ReadonlyMap<number, bigint>;
  readonly lower_bounds?: ReadonlyMap<number, Uint8Array>;
  readonly upper_bounds?: ReadonlyMap<number, Uint8Array>;
  readonly key_metadata?: Uint8Array;
  readonly split_offsets?: readonly bigint[];
  readonly equality_ids?: readonly number[];
  readonly sort_order_id?: number;
  readonly first_row_id?: bigint;
  readonly referenced_data_file?: string;
  readonly content_offset?: bigint;
  readonly content_size_in_bytes?: bigint;
}

export interface ManifestEntry {
  readonly status: ManifestEntryStatus;
  /** Null for ADDED entries ⇒ inherited from the manifest's `added_snapshot_id`. */
  readonly snapshot_id?: bigint;
  readonly sequence_number?: bigint;
  readonly file_sequence_number?: bigint;
  readonly data_file: DataFile;
}

export interface FieldSummary {
  readonly contains_null: boolean;
  readonly contains_nan?: boolean;
  readonly lower_bound?: Uint8Array;
  readonly upper_bound?: Uint8Array;
}

export interface ManifestFile {
  readonly manifest_path: string;
  readonly manifest_length: bigint;
  readonly partition_spec_id: number;
  readonly content: ManifestContent;
  readonly sequence_number: bigint;
  readonly min_sequence_number: bigint;
  readonly added_snapshot_id: bigint;
  readonly added_files_count: number;
  readonly existing_files_count: number;
  readonly deleted_files_count: number;
  readonly added_rows_count: bigint;
  readonly existing_rows_count: bigint;
  readonly deleted_rows_count: bigint;
  readonly partitions?: readonly FieldSummary[];
  readonly key_metadata?: Uint8Array;
  readonly first_row_id?: bigint;
}
