import type { DeframeCounts } from '../../records/framing/deframe.ts';

/** What one ingest of a batch reports: per table, per failure, and for the whole batch. */

export interface TableIngest {
  readonly table: string;
  /** Records routed to the table in this batch (skipped ones excluded). */
  readonly records: number;
  /** Rows written to data files of the table's current schema. */
  readonly rows: number;
  /** Records kept in pending fragments for the committer (the table must be created or evolved). */
  readonly pending: number;
  readonly dataFiles: number;
  readonly bytes: number;
  readonly deadLetters: number;
  readonly path: 'columnar' | 'generic' | 'avro' | 'pending' | 'none';
  /** Values converted under the `coerce` type-conflict policy (`column: from→to ×n; …`). */
  readonly coerced?: string;
}

export interface IngestFailure {
  readonly table: string;
  readonly firstSequence: string;
  readonly error: unknown;
}

export interface IngestResult {
  readonly shardId: string;
  readonly records: number;
  /** Records already staged by an earlier delivery. */
  readonly skipped: number;
  readonly deadLetters: Readonly<Record<string, number>>;
  readonly tables: readonly TableIngest[];
  readonly failures: readonly IngestFailure[];
  /**
   * Report this as the batch item failure, if any: the Kinesis sequence number of the lowest
   * position not staged (a sub-record's Kinesis record: Lambda re-delivers all of it).
   */
  readonly failedSequence?: string;
  readonly oldestArrivalMs?: number;
  /** Changes that change no rows (Debezium truncates and tombstones): counted, never dead letters. */
  readonly noRowChanges?: number;
  /**
   * Records deferred (ingest/defer-batch.ts): staged as they arrived for the committer to route;
   * absent when the batch was routed here.
   */
  readonly deferred?: number;
  /** Present when producers' framings were undone: what was found, and how many records they gave. */
  readonly framing?: DeframeCounts & { readonly records: number };
}
