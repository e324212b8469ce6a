/**
 * Partition specs (spec: "Partitioning"). Field ids start at 1000 and are unique across specs.
 * Kept in the spec's JSON shape; transforms are parsed by `transform.ts`.
 */
export interface PartitionField {
  readonly 'source-id': number;
  readonly 'field-id': number;
  readonly name: string;
  /** `identity`, `bucket[16]`, `truncate[4]`, `year`, `month`, `day`, `hour`, `void`. */
  readonly transform: string;
}

export interface PartitionSpec {
  readonly 'spec-id': number;
  readonly fields: readonly PartitionField[];
}

/** Partition field ids start here (Java's `PARTITION_DATA_ID_START`). */
export const PARTITION_DATA_ID_START = 1000;
/** `last-partition-id` of a table that never had a partition field. */
export const UNPARTITIONED_LAST_ASSIGNED_ID = 999;

export const UNPARTITIONED_SPEC: PartitionSpec = Object.freeze({ 'spec-id': 0, fields: Object.freeze([]) });

export function isUnpartitioned(spec: PartitionSpec): boolean {
  return spec.fields.every((f) => f.transform === 'void');
}
