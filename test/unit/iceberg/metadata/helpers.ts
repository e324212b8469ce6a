/** Shared builders for metadata tests: a small event table and snapshots with injected ids/times. */
import { newTableMetadata } from '../../../../lambdas/src/iceberg/metadata/index.ts';
import type { Schema } from '../../../../lambdas/src/iceberg/schema.ts';
import type { Snapshot } from '../../../../lambdas/src/iceberg/snapshot.ts';
import type { TableMetadata } from '../../../../lambdas/src/iceberg/table-metadata.ts';
import { field, list, struct, T } from '../../../../lambdas/src/iceberg/types.ts';

export const T0 = 1_735_689_600_000;
export const UUID = '6d3c8a4e-2f1b-4c8e-9a7d-5b0e1f2a3c4d';
export const LOCATION = 's3://bucket/warehouse/db/order_events';

/** Ids deliberately unlike the fresh ones so re-mapping is observable. */
export const EVENT_SCHEMA: Schema = {
  schemaId: 7,
  identifierFieldIds: [50],
  fields: [
    field(50, 'event_id', T.string, true),
    field(51, 'ts', T.timestamptz, true),
    field(52, 'customer', struct([field(60, 'id', T.long, true), field(61, 'country', T.string)])),
    field(53, 'items', list(70, struct([field(71, 'sku', T.string), field(72, 'qty', T.int)]))),
  ],
};

export function newEventTable(
  formatVersion: 2 | 3 = 2,
  extra: Partial<Parameters<typeof newTableMetadata>[0]> = {},
): TableMetadata {
  return newTableMetadata({
    location: LOCATION,
    schema: EVENT_SCHEMA,
    spec: { 'spec-id': 9, fields: [{ name: 'ts_day', transform: 'day', 'source-id': 51, 'field-id': 5000 }] },
    formatVersion,
    tableUuid: UUID,
    nowMs: T0,
    ...extra,
  });
}

export function snapshot(
  id: bigint,
  seq: bigint,
  tsMs: number,
  parent?: bigint,
  extra: Partial<Snapshot> = {},
): Snapshot {
  return {
    'snapshot-id': id,
    ...(parent !== undefined ? { 'parent-snapshot-id': parent } : {}),
    'sequence-number': seq,
    'timestamp-ms': BigInt(tsMs),
    'manifest-list': `${LOCATION}/metadata/snap-${id}-1-00000000-0000-0000-0000-000000000000.avro`,
    summary: { operation: 'append' },
    'schema-id': 0,
    ...extra,
  };
}
