/** Shared inputs for the manifest tests: a schema, a spec with several result types, and entries. */
import type {
  DataFile,
  ManifestEntry,
  ManifestFile,
} from '../../../../lambdas/src/iceberg/manifest/index.ts';
import type { PartitionSpec } from '../../../../lambdas/src/iceberg/partition-spec.ts';
import type { Schema } from '../../../../lambdas/src/iceberg/schema.ts';
import { decimal, field, struct, T } from '../../../../lambdas/src/iceberg/types.ts';

export const SYNC = Uint8Array.from({ length: 16 }, (_, i) => (0xa5 ^ (i * 29)) & 0xff);
/** Above 2^53, so a `number` anywhere on the path would round it. */
export const BIG_SNAPSHOT = 9_158_179_788_527_662_767n;
export const BIG_SNAPSHOT_2 = 2n ** 53n + 1n;

export const SCHEMA: Schema = {
  schemaId: 3,
  identifierFieldIds: [1],
  fields: [
    field(1, 'id', T.long, true),
    field(2, 'event time', T.timestamptz),
    field(3, 'name', T.string),
    field(4, 'price', decimal(10, 2)),
    field(5, 'u', T.uuid),
    field(6, 'flag', T.boolean),
  ],
};

export const SPEC: PartitionSpec = {
  'spec-id': 2,
  fields: [
    { 'source-id': 1, 'field-id': 1000, name: 'id_bucket', transform: 'bucket[16]' },
    { 'source-id': 2, 'field-id': 1001, name: 'event time_day', transform: 'day' },
    { 'source-id': 3, 'field-id': 1002, name: 'name', transform: 'identity' },
    { 'source-id': 4, 'field-id': 1003, name: 'price', transform: 'identity' },
    { 'source-id': 5, 'field-id': 1004, name: 'u', transform: 'identity' },
    { 'source-id': 2, 'field-id': 1005, name: 'event time', transform: 'identity' },
    { 'source-id': 1, 'field-id': 1006, name: 'id', transform: 'identity' },
    { 'source-id': 6, 'field-id': 1007, name: 'flag', transform: 'identity' },
  ],
};

export const PARTITION_TYPE = struct([
  field(1000, 'id_bucket', T.int),
  field(1001, 'event time_day', T.date),
  field(1002, 'name', T.string),
  field(1003, 'price', decimal(10, 2)),
  field(1004, 'u', T.uuid),
  field(1005, 'event time', T.timestamptz),
  field(1006, 'id', T.long),
  field(1007, 'flag', T.boolean),
]);

export const UUID = 'f79c3e09-677c-4bbd-a479-3f349cb785e7';

const fullMetrics = {
  column_sizes: new Map([
    [1, 120n],
    [3, 2n ** 40n],
  ]),
  value_counts: new Map([
    [1, 10n],
    [3, 10n],
  ]),
  null_value_counts: new Map([
    [1, 0n],
    [3, 2n],
  ]),
  nan_value_counts: new Map([[6, 0n]]),
  lower_bounds: new Map([[1, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)]]),
  upper_bounds: new Map([[1, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)]]),
  key_metadata: Uint8Array.of(9, 8, 7),
  split_offsets: [4n, 2n ** 33n],
  sort_order_id: 0,
};

export function dataFile(path: string, partition: unknown[], extra: Partial<DataFile> = {}): DataFile {
  return {
    content: 0,
    file_path: path,
    file_format: 'PARQUET',
    partition,
    record_count: 10n,
    file_size_in_bytes: 4321n,
    ...fullMetrics,
    ...extra,
  };
}

export const PARTITION_A = [3, 19723, 'a b/c', -12345n, UUID, 1_700_000_000_123_456n, 2n ** 60n, true];
export const PARTITION_NULLS = [0, null, null, null, null, null, null, null];

/** ADDED (inheriting), EXISTING (explicit), DELETED (explicit): one of each status. */
export function dataEntries(): ManifestEntry[] {
  return [
    { status: 1, data_file: dataFile('s3://b/t/data/a.parquet', PARTITION_A) },
    {
      status: 0,
      snapshot_id: BIG_SNAPSHOT_2,
      sequence_number: 7n,
      file_sequence_number: 8n,
      data_file: dataFile('s3://b/t/data/b.parquet', PARTITION_NULLS, { record_count: 2n ** 55n + 3n }),
    },
    {
      status: 2,
      snapshot_id: BIG_SNAPSHOT,
      sequence_number: 2n,
      file_sequence_number: 2n,
      data_file: { ...dataFile('s3://b/t/data/c.parquet', PARTITION_A), file_format: 'AVRO' },
    },
  ];
}

/** Position-delete and equality-delete entries valid in v2. */
export function deleteEntriesV2(): ManifestEntry[] {
  return [
    {
      status: 1,
      snapshot_id: BIG_SNAPSHOT,
      data_file: dataFile('s3://b/t/data/pos.parquet', PARTITION_A, {
        content: 1,
        referenced_data_file: 's3://b/t/data/a.parquet',
        sort_order_id: undefined,
      }),
    },
    {
      status: 1,
      data_file: dataFile('s3://b/t/data/eq.parquet', PARTITION_NULLS, { content: 2, equality_ids: [1, 3] }),
    },
  ];
}

export function manifestFile(path: string, extra: Partial<ManifestFile> = {}): ManifestFile {
  return {
    manifest_path: path,
    manifest_length: 6789n,
    partition_spec_id: 2,
    content: 0,
    sequence_number: 12n,
    min_sequence_number: 3n,
    added_snapshot_id: BIG_SNAPSHOT,
    added_files_count: 1,
    existing_files_count: 2,
    deleted_files_count: 3,
    added_rows_count: 2n ** 54n,
    existing_rows_count: 5n,
    deleted_rows_count: 6n,
    partitions: [
      {
        contains_null: false,
        contains_nan: false,
        lower_bound: Uint8Array.of(0, 0, 0, 0),
        upper_bound: Uint8Array.of(3, 0, 0, 0),
      },
      { contains_null: true },
    ],
    key_metadata: Uint8Array.of(1, 2),
    ...extra,
  };
}
