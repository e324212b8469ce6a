/** What routing a batch gives the steps after it: each table's work, and what cannot land. */

import type { FastPath } from '../../engine/fast-path.ts';
import type { PendingRecord } from '../../engine/load-types.ts';
import type { DeadLetterRecord } from '../../ports/dead-letters.ts';
import type { ChangeOp } from '../../records/change-event.ts';
import type { DecodedAvro } from '../../records/decode.ts';
import type { JsonObject } from '../../records/json-line.ts';
import type { KinesisBatch } from '../../records/kinesis-event.ts';
import type { IngestFailure } from './result.ts';

export interface AvroItem {
  readonly index: number;
  readonly decoded: DecodedAvro;
}

/** One table's records in this batch (the fast path keeps the records it took in its own columns). */
export interface TableWork {
  readonly table: string;
  json: PendingRecord[];
  avro: AvroItem[];
  /** JSON records that field lists changed: index → the record to write. */
  readonly transformed: Map<number, string>;
  /** Upsert tables: index → what the record does to its key's row. */
  readonly ops: Map<number, ChangeOp>;
  /** Versioned changes (DynamoDB): index → the change's version; the newest of a key wins. */
  readonly versions: Map<number, bigint>;
  /** The table's field lists (when the config has rules): a fast-path record read back as JSON gets them. */
  readonly reshape?: (value: JsonObject) => JsonObject;
}

/** The batch routed: each table's work, the fast path's columns, and what cannot land. */
export interface Routed {
  readonly batch: KinesisBatch;
  /** Per table, every table the fast path took records for included. */
  readonly work: Map<string, TableWork>;
  /** The JSON fast path, if it ran: its `tables` hold the columns it scanned per table. */
  readonly fast: FastPath | undefined;
  readonly dead: DeadLetterRecord[];
  /** `dead` by reason. */
  readonly deadCounts: Record<string, number>;
  /** Changes that change no rows (Debezium truncates and tombstones): counted, never dead letters. */
  readonly noRowChanges: { count: number };
  /** The schema registry was unreachable: routing stopped at that record (see `route-records.ts`). */
  readonly failures: IngestFailure[];
}
