/**
 * Snapshots, refs and logs (spec: "Snapshots", "Snapshot References").
 * Every Iceberg `long` is a bigint: snapshot ids exceed 2^53.
 */
export type SnapshotOperation = 'append' | 'replace' | 'overwrite' | 'delete';

export interface Snapshot {
  readonly 'snapshot-id': bigint;
  readonly 'parent-snapshot-id'?: bigint;
  /** Absent (0) for v1 snapshots. */
  readonly 'sequence-number'?: bigint;
  readonly 'timestamp-ms': bigint;
  readonly 'manifest-list'?: string;
  /** v1 only: manifests listed inline instead of a manifest list. */
  readonly manifests?: readonly string[];
  /** String→string; `operation` is required. */
  readonly summary: Readonly<Record<string, string>> & { readonly operation: SnapshotOperation };
  readonly 'schema-id'?: number;
  /** v3 row lineage. */
  readonly 'first-row-id'?: bigint;
  readonly 'added-rows'?: bigint;
}

export interface SnapshotRef {
  readonly 'snapshot-id': bigint;
  readonly type: 'branch' | 'tag';
  readonly 'min-snapshots-to-keep'?: number;
  readonly 'max-snapshot-age-ms'?: bigint;
  readonly 'max-ref-age-ms'?: bigint;
}

export interface SnapshotLogEntry {
  readonly 'timestamp-ms': bigint;
  readonly 'snapshot-id': bigint;
}

export interface MetadataLogEntry {
  readonly 'timestamp-ms': bigint;
  readonly 'metadata-file': string;
}

export const MAIN_BRANCH = 'main';
