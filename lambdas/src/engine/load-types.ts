/** Types of the batch load (`floe load`): inputs, dependencies, progress and results. */

import type { LoadHistory } from '../app/load-history.ts';
import type { FloeConfig } from '../config.ts';
import type { ChangeVersions } from '../ports/change-versions.ts';
import type { ChangeOp } from '../records/change-event.ts';
import type { JsonValue } from '../records/json-line.ts';
import type { CommitDeps } from './append.ts';
import type { DeadLetter } from './dead-letters.ts';
import type { UpsertCounts } from './generic-stage.ts';
import type { ParquetEncoder } from './row-files.ts';

export interface LoadSource {
  /** Shown in progress output and dead letters (a file path). */
  readonly name: string;
  /** Lines one by one, or in batches (cheaper: one await per batch instead of per line). */
  readonly lines?: Iterable<string> | AsyncIterable<string | readonly string[]>;
  /**
   * Or UTF-8 bytes in chunks that each end at a line boundary (the cheapest: clean records are
   * scanned straight from the bytes, and only lines that need the generic path are decoded).
   */
  readonly chunks?: AsyncIterable<Uint8Array>;
  /**
   * The source's bytes `[start, end)` read again (a file), so the load keeps no copy of any
   * record: a dead letter or the generic path reads its text back when it needs it. Without it
   * (every source must have one) the load keeps a copy of each record's bytes until it is written.
   */
  readonly readRange?: (start: number, end: number) => Promise<Uint8Array>;
  /**
   * The file the source is, when it is one: with `chunks` and `readRange`, a large load scans it
   * on worker threads, which read its records back from this path themselves.
   */
  readonly path?: string;
  /** Its size in bytes (decides whether worker threads are worth starting). */
  readonly size?: number;
}

export type LoadProgress =
  | { readonly kind: 'read'; readonly source: string; readonly lines: number }
  | { readonly kind: 'table-start'; readonly table: string; readonly records: number }
  | { readonly kind: 'table-done'; readonly table: string; readonly result: TableLoadResult }
  | { readonly kind: 'table-failed'; readonly table: string; readonly error: unknown };

export interface LoadDeps extends CommitDeps {
  readonly config: FloeConfig;
  readonly onProgress?: (p: LoadProgress) => void;
  /** Called for every rejected line, in input order within each table. */
  readonly onDeadLetter: (d: DeadLetter) => void | Promise<void>;
  /** Extra snapshot summary keys (e.g. `floe.load-id`). */
  readonly summary?: Readonly<Record<string, string>>;
  /**
   * Asked before each table is staged: which sources it already holds (their records are left
   * out for that table) and what to add to its summary (see load-history.ts).
   */
  readonly history?: LoadHistory;
  /** Rows per Parquet file within one partition (default 1,000,000). */
  readonly maxRowsPerFile?: number;
  /**
   * Bytes of unwritten records the load may hold (the fast path's columns, the generic path's
   * parsed records) before it writes its largest tables as parts (default in load-run.ts).
   */
  readonly memoryBudgetBytes?: number;
  /** Unwritten bytes of one table past which it is written as a part (default in load-run.ts). */
  readonly partBytes?: number;
  /**
   * Threads that scan and encode (default: the machine's cores; 1: this thread only). Used for
   * file sources of at least `workerMinBytes` together (default in load-run.ts).
   */
  readonly threads?: number;
  readonly workerMinBytes?: number;
  /**
   * Scan clean records straight into columns (default true). Off: every record takes the generic
   * path. Both give the same tables; the switch exists for tests and as a safety valve.
   */
  readonly fastPath?: boolean;
  /** The Parquet encoders (tests decorate them to inject failures; default the real ones). */
  readonly encoder?: ParquetEncoder;
  /**
   * Where versioned changes (DynamoDB change records) keep each key's newest version (default:
   * files beside the table, engine/key-versions.ts).
   */
  readonly changeVersions?: ChangeVersions;
}

export interface TableLoadResult {
  readonly table: string;
  readonly created: boolean;
  readonly rows: number;
  readonly files: number;
  readonly bytes: number;
  readonly deadLetters: number;
  readonly schemaChanges: readonly string[];
  readonly specChanged: boolean;
  readonly snapshotId?: bigint;
  readonly attempts: number;
  /** Which ingest path staged the table: columnar (fast) or record by record (generic). */
  readonly path: 'columnar' | 'generic';
  /**
   * Records the fast path took for the table that were then parsed and written through the
   * generic path (a part it could not write as columns: a type conflict, a list; `floe load`).
   */
  readonly reparsed?: number;
  /** Upsert tables: keys whose last change upserted a row / deleted it. */
  readonly upserts?: UpsertCounts;
}

export interface TableFailure {
  readonly table: string;
  /** Records routed to the table that were not committed. */
  readonly records: number;
  readonly error: unknown;
}

export interface LoadReport {
  readonly lines: number;
  readonly rows: number;
  /**
   * Records parsed as objects (the generic path) rather than scanned as bytes: lines the scanner
   * could not take (nested lists, envelopes, invalid JSON) and records read again for a part the
   * columnar writer could not write (`TableLoadResult.reparsed`).
   */
  readonly genericRecords: number;
  /** Changes that change no rows (Debezium truncates and tombstones): counted, not dead letters. */
  readonly noRowChanges?: number;
  readonly deadLetters: Readonly<Record<string, number>>;
  readonly tables: readonly TableLoadResult[];
  /** Tables whose commit failed; empty when everything landed. */
  readonly failures: readonly TableFailure[];
}

export interface PendingRecord {
  /** Position in the whole input, for keeping dead letters in input order. */
  readonly seq: number;
  readonly source: string;
  readonly line: number;
  readonly raw: string;
  readonly value: Record<string, JsonValue>;
  /** Upsert tables: what the record does to its key's row (absent: an append). */
  readonly op?: ChangeOp;
  /** Versioned changes (DynamoDB): the change's version; the newest of a key wins. */
  readonly version?: bigint;
}
