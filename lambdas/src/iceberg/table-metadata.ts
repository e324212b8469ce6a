/**
 * Table metadata (spec: "Table Metadata"), in the spec's kebab-case shape with parsed schemas.
 * Format versions 1, 2 and 3 are read; 2 and 3 are written.
 */
import type { PartitionSpec } from './partition-spec.ts';
import type { Schema } from './schema.ts';
import type { MetadataLogEntry, Snapshot, SnapshotLogEntry, SnapshotRef } from './snapshot.ts';
import type { SortOrder } from './sort-order.ts';

export type FormatVersion = 1 | 2 | 3;

export interface TableMetadata {
  readonly 'format-version': FormatVersion;
  readonly 'table-uuid': string;
  readonly location: string;
  readonly 'last-sequence-number': bigint;
  readonly 'last-updated-ms': bigint;
  readonly 'last-column-id': number;
  readonly schemas: readonly Schema[];
  readonly 'current-schema-id': number;
  readonly 'partition-specs': readonly PartitionSpec[];
  readonly 'default-spec-id': number;
  readonly 'last-partition-id': number;
  readonly properties: Readonly<Record<string, string>>;
  /** Undefined when the table has no current snapshot (JSON -1 / null / absent). */
  readonly 'current-snapshot-id'?: bigint;
  readonly snapshots: readonly Snapshot[];
  readonly 'snapshot-log': readonly SnapshotLogEntry[];
  readonly 'metadata-log': readonly MetadataLogEntry[];
  readonly 'sort-orders': readonly SortOrder[];
  readonly 'default-sort-order-id': number;
  readonly refs: Readonly<Record<string, SnapshotRef>>;
  /** Kept verbatim (informational Puffin statistics). */
  readonly statistics: readonly unknown[];
  readonly 'partition-statistics': readonly unknown[];
  /** v3 row lineage. */
  readonly 'next-row-id'?: bigint;
  /** v3, kept verbatim. */
  readonly 'encryption-keys'?: readonly unknown[];
}
