/**
 * A routed JSON record read as a change of its table, when that is an upsert table: by the
 * configured spec, or for a DynamoDB change record by the key its data declares
 * (config.ts `changeTableSpec`). The column types a change's own schema declares (Debezium with
 * schemas) are noted for the table. One step of the streaming ingest and of `floe load` alike.
 */
import { changeTableSpec, declareTableTypes, type FloeConfig, upsertFor } from '../config.ts';
import { type Change, readChange } from '../records/change-event.ts';
import { dynamoDbKeyNames } from '../records/dynamodb-change.ts';
import type { JsonObject } from '../records/json-line.ts';

/** The change `record` makes to `table`; undefined when the table is no upsert table. */
export function changeOfRouted(
  config: FloeConfig,
  table: string,
  record: JsonObject,
  /** Routed as a DynamoDB change record (the router's `dynamodb` rule). */
  dynamodb: boolean,
): Change | undefined {
  const upsert = dynamodb
    ? changeTableSpec(config, table, dynamoDbKeyNames(record))
    : upsertFor(config, table);
  if (!upsert) return undefined;
  const change = readChange(upsert, record, table);
  if (change.ok && change.types) declareTableTypes(config, table, change.types);
  return change;
}
