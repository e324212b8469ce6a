/**
 * One Parquet data file written from rows that arrive in batches, so a large file never needs all
 * its rows (or all their Arrow columns) in memory at once: each `add` builds the Arrow columns of
 * its rows (the same builders as `writeDataFile`), copies them into wasm memory and hands the
 * record batch to parquet-rs' streaming writer (parquet-wasm's `transformParquetStream`), which
 * encodes and flushes a row group whenever `rowGroupRows` rows have gathered. The written bytes
 * are collected; `finish` patches the footer once and merges the batches' metrics.
 *
 * The result is the file `writeDataFile` would write for all the rows together: same schema, field
 * ids, footer patches and metrics (counts add up, bounds are the min / max over the batches, string
 * bounds from the footer's statistics over all row groups).
 *
 * Memory: the Row objects of one `add` (the caller's), the Arrow columns of one slice of them, the
 * row group being encoded (in wasm memory) and the file's bytes written so far.
 */
import * as pw from 'parquet-wasm';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import type { Schema } from '../iceberg/schema.ts';
import type { Row } from '../iceberg/values.ts';
import { type BuiltColumns, buildColumns } from './column-builder.ts';
import type { WritePlan } from './column-plan.ts';
import { buildColumnarColumns, type ColumnarBatch, sliceColumnar } from './columnar.ts';
import { readFooter } from './footer.ts';
import type { Allocator } from './memory.ts';
import { type LeafStats, mergeLeafStats } from './metrics.ts';
import { asBigInt, getField } from './thrift-compact.ts';
import {
  type DataFileResult,
  finishFile,
  settings,
  toWasmTable,
  type WriteOptions,
  type WriterSettings,
  writablePlan,
  writeDataFile,
  writerProperties,
} from './writer.ts';

/** Rows converted to Arrow at a time (bounds the Arrow memory of one large `add`). */
const SLICE_ROWS = 64 * 1024;

/** `FileMetaData.num_rows` (parquet.thrift). */
const FMD_NUM_ROWS = 3;

type State = 'idle' | 'open' | 'finished' | 'failed';

/**
 * Writes one data file for `schema` from batches of rows: `await add(rows)` any number of times,
 * then `await finish()`. Not reentrant: await each call before the next. After a failed `add` the
 * writer is unusable (`abort` releases it).
 */
export class StreamingDataFileWriter {
  private readonly plan: WritePlan;
  private readonly config: WriterSettings;
  private state: State = 'idle';
  private rows = 0;
  private stats: LeafStats[] | undefined;
  private input: ReadableStreamDefaultController<pw.RecordBatch> | undefined;
  /** True while the Rust side waits for a batch (its read is pending). */
  private wanted = false;
  private onDemand: (() => void) | undefined;
  /** Settles when the output stream has ended (or failed). */
  private drained: Promise<void> | undefined;
  private chunks: Uint8Array[] = [];
  private written = 0;

  constructor(
    private readonly schema: Schema,
    private readonly opts: WriteOptions = {},
  ) {
    this.plan = writablePlan(schema);
    this.config = settings(opts);
  }

  /** Rows added so far. */
  get recordCount(): number {
    return this.rows;
  }

  /**
   * Bytes of the file the writer has flushed so far (complete row groups; the row group being
   * encoded is not counted).
   */
  get bytesWritten(): number {
    return this.written;
  }

  /**
   * Converts and writes `rows`. Returns once the last of them has been taken by the Parquet writer.
   * @throws FloeError `DataInvalid` naming the column for a value of the wrong type or a null in a
   *   required column (as `writeDataFile`); the writer is then failed.
   */
  async add(rows: readonly Row[]): Promise<void> {
    const slices: ((plan: WritePlan, alloc: Allocator) => BuiltColumns)[] = [];
    for (let at = 0; at < rows.length; at += SLICE_ROWS) {
      const slice = at === 0 && rows.length <= SLICE_ROWS ? rows : rows.slice(at, at + SLICE_ROWS);
      slices.push((plan, alloc) => buildColumns(plan, slice, alloc));
    }
    return this.addBuilt(slices);
  }

  /**
   * Converts and writes a columnar batch (see `writeColumnarDataFile`), a slice of rows at a time
   * (views of its arrays: nothing is copied but each slice's Arrow columns).
   */
  async addColumns(batch: ColumnarBatch): Promise<void> {
    const slices: ((plan: WritePlan, alloc: Allocator) => BuiltColumns)[] = [];
    for (let at = 0; at < batch.rowCount; at += SLICE_ROWS) {
      const part =
        at === 0 && batch.rowCount <= SLICE_ROWS
          ? batch
          : sliceColumnar(batch, at, Math.min(batch.rowCount, at + SLICE_ROWS));
      slices.push((plan, alloc) => buildColumnarColumns(this.schema, plan, part, alloc));
    }
    return this.addBuilt(slices);
  }

  private async addBuilt(
    slices: readonly ((plan: WritePlan, alloc: Allocator) => BuiltColumns)[],
  ): Promise<void> {
    if (this.state === 'finished' || this.state === 'failed')
      throw new FloeError(ErrorKind.Unexpected, `StreamingDataFileWriter.add after it ${this.state}`);
    try {
      for (const build of slices) {
        const { built, table } = toWasmTable(this.plan, build);
        let batches: pw.RecordBatch[];
        try {
          batches = table.recordBatches();
        } finally {
          table.free();
        }
        if (this.stats) mergeLeafStats(this.stats, built.stats);
        else this.stats = built.stats;
        this.rows += built.length;
        for (let k = 0; k < batches.length; k++) {
          try {
            await this.push(batches[k]!);
          } catch (e) {
            for (const b of batches.slice(k)) b.free();
            throw e;
          }
        }
      }
    } catch (cause) {
      await this.abort();
      if (isFloeError(cause)) throw cause;
      throw new FloeError(ErrorKind.Unexpected, `Parquet writer failed: ${String(cause)}`, { cause });
    }
  }

  /**
   * Ends the file: the complete Parquet bytes (footer patched) and the metrics over every row
   * added. A writer that got no rows writes an empty file, as `writeDataFile` would.
   */
  async finish(): Promise<DataFileResult> {
    if (this.state === 'finished' || this.state === 'failed')
      throw new FloeError(ErrorKind.Unexpected, `StreamingDataFileWriter.finish after it ${this.state}`);
    if (this.state === 'idle') {
      this.state = 'finished';
      return writeDataFile(this.schema, [], this.opts);
    }
    let raw: Uint8Array;
    try {
      this.input!.close();
      await this.drained;
      raw = concat(this.chunks, this.written);
      this.chunks = [];
      const fileRows = asBigInt(getField(readFooter(raw), FMD_NUM_ROWS));
      // parquet-wasm's stream writer drops a batch it cannot write without a word: count them.
      if (fileRows !== BigInt(this.rows))
        throw new Error(`the file holds ${fileRows} rows, ${this.rows} were added`);
    } catch (cause) {
      this.state = 'failed';
      this.chunks = [];
      if (isFloeError(cause)) throw cause;
      throw new FloeError(ErrorKind.Unexpected, `Parquet writer failed: ${String(cause)}`, { cause });
    }
    this.state = 'finished';
    return finishFile(this.plan, raw, this.rows, this.stats!, this.opts);
  }

  /** Gives up on the file (after a failure, or when the caller no longer wants it). */
  async abort(): Promise<void> {
    const open = this.state === 'open';
    this.state = 'failed';
    this.stats = undefined;
    if (open) {
      // The Rust side skips an errored stream's rest and closes its writer: let it finish.
      this.input!.error(new Error('aborted'));
      await this.drained?.catch(() => undefined);
    }
    this.chunks = [];
  }

  /** Starts the Rust writer on the first batch (it reads the schema from it). */
  private start(): void {
    this.state = 'open';
    const input = new ReadableStream<pw.RecordBatch>(
      {
        start: (c) => {
          this.input = c;
        },
        pull: () => {
          this.wanted = true;
          const wake = this.onDemand;
          this.onDemand = undefined;
          wake?.();
        },
      },
      { highWaterMark: 0 },
    );
    const props = writerProperties(this.schema, this.config, this.plan.leaves.length, this.plan);
    const output: Promise<ReadableStream<Uint8Array>> = pw.transformParquetStream(input, props);
    this.drained = output.then(async (out) => {
      const reader = out.getReader();
      for (;;) {
        const r = await reader.read();
        if (r.done) return;
        this.chunks.push(r.value);
        this.written += r.value.length;
      }
    });
    // Observed in finish / abort / push; never an unhandled rejection meanwhile.
    this.drained.catch(() => undefined);
  }

  /** Hands one batch to the Rust writer once it asks for one (so at most one waits in between). */
  private async push(batch: pw.RecordBatch): Promise<void> {
    if (this.state === 'idle') this.start();
    if (!this.wanted) {
      const demand = new Promise<void>((resolve) => {
        this.onDemand = resolve;
      });
      // The output ending before the input is a writer failure, not a reason to wait forever.
      const ended = this.drained!.then(() => {
        throw new Error('the Parquet stream writer stopped early');
      });
      ended.catch(() => undefined);
      await Promise.race([demand, ended]);
    }
    this.wanted = false;
    this.input!.enqueue(batch);
  }
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]!.length === length) return chunks[0]!;
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
