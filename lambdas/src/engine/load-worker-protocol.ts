/**
 * The messages between a load and its worker threads (engine/load-workers.ts, the main side;
 * engine/load-worker.ts, a worker). Plain data only (structured clone): a chunk's bytes and an
 * encoded file's bytes are transferred, not copied.
 */
import type { FloeConfig } from '../config.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import type { Schema } from '../iceberg/schema.ts';
import type { PrimitiveType } from '../iceberg/types.ts';
import type { BatchData, BatchSummary, Provenance } from './columnar-batch.ts';
import type { EncodedFile, EncodeOptions } from './columnar-part.ts';
import type { DeadLetter } from './dead-letters.ts';

export interface WorkerInit {
  readonly config: FloeConfig;
  /** Source names (file paths: a worker reads records' bytes back from them). */
  readonly sources: readonly string[];
}

/** Lines of one source, starting at a line boundary. */
export interface ChunkJob {
  readonly id: number;
  readonly source: number;
  /** Offset of the chunk's first byte in its source. */
  readonly offset: number;
  /** Line number (1-based) of its first line in the source, and `seq` of that line in the load. */
  readonly firstLine: number;
  readonly firstSeq: number;
  readonly bytes: Uint8Array;
  /** Tables (`namespace.name`) that hold this source already, or every table (load history). */
  readonly holders?: { readonly all: boolean; readonly tables: readonly string[] };
}

/** A line the worker's fast path did not take: the load's generic path decides it. */
export interface GenericLine {
  readonly seq: number;
  readonly line: number;
  readonly raw: string;
}

export interface ChunkDone {
  readonly id: number;
  /** The chunk's buffer, handed back to be filled again (no new buffer per chunk). */
  readonly buffer: ArrayBuffer;
  /** Records of the chunk the fast path refused (or that are no UTF-8), in input order. */
  readonly dead: DeadLetter[];
  readonly generic: GenericLine[];
  /** Bytes and rows the worker holds per table after the chunk (tables it holds any of). */
  readonly held: readonly { readonly table: string; readonly bytes: number; readonly rows: number }[];
  /** Tables that took records of the chunk's source for the first time. */
  readonly fed: readonly string[];
  /** Tables that hold the source already and were met with a record of it (the first time). */
  readonly skipped: readonly string[];
}

export type ToWorker =
  | { readonly type: 'init'; readonly init: WorkerInit }
  | { readonly type: 'chunk'; readonly job: ChunkJob }
  | { readonly type: 'detach'; readonly req: number; readonly table: string; readonly part: number }
  | { readonly type: 'summary'; readonly req: number; readonly part: number; readonly detect: boolean }
  | {
      readonly type: 'needs';
      readonly req: number;
      readonly part: number;
      readonly columns: readonly [string, PrimitiveType][];
    }
  | {
      readonly type: 'encode';
      readonly req: number;
      readonly part: number;
      readonly schema: Schema;
      readonly spec: PartitionSpec;
      readonly options: EncodeOptions;
    }
  | { readonly type: 'read-back'; readonly req: number; readonly part: number }
  | { readonly type: 'export'; readonly req: number; readonly table: string }
  | { readonly type: 'import'; readonly req: number; readonly table: string; readonly data: BatchData }
  | { readonly type: 'release'; readonly part: number };

export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'chunk-done'; readonly done: ChunkDone }
  | { readonly type: 'detached'; readonly req: number; readonly rows: number }
  | { readonly type: 'summary'; readonly req: number; readonly summary: BatchSummary }
  | { readonly type: 'needs'; readonly req: number; readonly needs: readonly [string, PrimitiveType][] }
  | { readonly type: 'encoded'; readonly req: number; readonly files: EncodedFile[] | undefined }
  | { readonly type: 'read-back'; readonly req: number; readonly records: Provenance[] }
  | { readonly type: 'exported'; readonly req: number; readonly data: BatchData | undefined }
  | { readonly type: 'imported'; readonly req: number }
  | { readonly type: 'failed'; readonly req?: number; readonly message: string; readonly stack?: string };
