/**
 * A commit as data (Iceberg REST spec `TableUpdate` / `TableRequirement`, facts doc §8.5): a list
 * of requirements checked against the base metadata, then a list of updates folded over it by
 * `applyUpdates`. Discriminators and keys are the REST names so the same values can be sent to a
 * REST catalog unchanged (longs as bigint).
 */
import type { PartitionSpec } from '../partition-spec.ts';
import type { Schema } from '../schema.ts';
import type { Snapshot } from '../snapshot.ts';
import type { SortOrder } from '../sort-order.ts';
import type { FormatVersion } from '../table-metadata.ts';

/** `-1` in `set-current-schema` / `set-default-spec` / `set-default-sort-order`: the one added last in this commit. */
export const LAST_ADDED = -1;

export type TableUpdate =
  | { readonly action: 'assign-uuid'; readonly uuid: string }
  | { readonly action: 'upgrade-format-version'; readonly 'format-version': FormatVersion }
  /** The schema's id is a hint: an identical existing schema is reused, else max id + 1. */
  | { readonly action: 'add-schema'; readonly schema: Schema; readonly 'last-column-id'?: number }
  | { readonly action: 'set-current-schema'; readonly 'schema-id': number }
  | { readonly action: 'add-spec'; readonly spec: PartitionSpec }
  | { readonly action: 'set-default-spec'; readonly 'spec-id': number }
  | { readonly action: 'add-sort-order'; readonly 'sort-order': SortOrder }
  | { readonly action: 'set-default-sort-order'; readonly 'sort-order-id': number }
  | { readonly action: 'add-snapshot'; readonly snapshot: Snapshot }
  | {
      readonly action: 'set-snapshot-ref';
      readonly 'ref-name': string;
      readonly type: 'branch' | 'tag';
      readonly 'snapshot-id': bigint;
      readonly 'min-snapshots-to-keep'?: number;
      readonly 'max-snapshot-age-ms'?: bigint;
      readonly 'max-ref-age-ms'?: bigint;
    }
  | { readonly action: 'remove-snapshots'; readonly 'snapshot-ids': readonly bigint[] }
  | { readonly action: 'remove-snapshot-ref'; readonly 'ref-name': string }
  | { readonly action: 'set-location'; readonly location: string }
  | { readonly action: 'set-properties'; readonly updates: Readonly<Record<string, string>> }
  | { readonly action: 'remove-properties'; readonly removals: readonly string[] };

export type TableUpdateAction = TableUpdate['action'];

export type TableRequirement =
  /** The table must not exist yet. */
  | { readonly type: 'assert-create' }
  | { readonly type: 'assert-table-uuid'; readonly uuid: string }
  /** `snapshot-id: null` asserts that the ref does not exist. */
  | { readonly type: 'assert-ref-snapshot-id'; readonly ref: string; readonly 'snapshot-id': bigint | null }
  | { readonly type: 'assert-last-assigned-field-id'; readonly 'last-assigned-field-id': number }
  | { readonly type: 'assert-current-schema-id'; readonly 'current-schema-id': number }
  | { readonly type: 'assert-last-assigned-partition-id'; readonly 'last-assigned-partition-id': number }
  | { readonly type: 'assert-default-spec-id'; readonly 'default-spec-id': number }
  | { readonly type: 'assert-default-sort-order-id'; readonly 'default-sort-order-id': number };

export type TableRequirementType = TableRequirement['type'];
