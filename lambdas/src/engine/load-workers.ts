/**
 * A load's worker threads, seen from the load (engine/load-run.ts): each worker scans the chunks
 * of input it is given into its own tables' columns (engine/load-worker.ts). The load decides every
 * table in one place — its schema, spec, parts and commit — and asks the workers that hold its
 * records for their parts (`RemotePart`): summaries to infer from, promotions to measure, Parquet
 * files encoded for the chosen schema (the encoding, most of a load's work, runs on every core),
 * or the records' text for the generic path.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import type { Schema } from '../iceberg/schema.ts';
import type { PrimitiveType } from '../iceberg/types.ts';
import type { ColumnNeeds } from '../schema/fit.ts';
import { type BatchData, type BatchSummary, batchBuffers, type Provenance } from './columnar-batch.ts';
import type { ColumnarPart, EncodedFile, EncodeOptions } from './columnar-part.ts';
import type { ChunkDone, ChunkJob, FromWorker, ToWorker, WorkerInit } from './load-worker-protocol.ts';

type Pending = { resolve: (m: FromWorker) => void; reject: (e: Error) => void };
/** A request that has an answer, without its `req` (filled in by `ask`). */
type Ask = ToWorker extends infer M ? (M extends { req: number } ? Omit<M, 'req'> : never) : never;

/** One worker thread and its requests in flight. */
class WorkerHandle {
  private nextReq = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly chunks: Pending[] = [];
  private dead: Error | undefined;

  constructor(private readonly worker: Worker) {
    worker.on('message', (m: FromWorker) => this.receive(m));
    worker.on('error', (e) => this.fail(e instanceof Error ? e : new Error(String(e))));
    worker.on('exit', (code) => {
      if (code !== 0) this.fail(new Error(`load worker exited with code ${code}`));
    });
  }

  /** A request with an answer (`req` filled in). */
  ask<T extends FromWorker>(m: Ask, transfer: ArrayBuffer[] = []): Promise<T> {
    const req = this.nextReq++;
    return new Promise<T>((resolve, reject) => {
      if (this.dead) return reject(this.dead);
      this.pending.set(req, { resolve: resolve as (m: FromWorker) => void, reject });
      this.worker.postMessage({ ...m, req } as ToWorker, transfer);
    });
  }

  tell(m: ToWorker, transfer: ArrayBuffer[] = []): void {
    if (!this.dead) this.worker.postMessage(m, transfer);
  }

  scan(job: ChunkJob): Promise<ChunkDone> {
    return new Promise<ChunkDone>((resolve, reject) => {
      if (this.dead) return reject(this.dead);
      this.chunks.push({
        resolve: (m) => resolve((m as Extract<FromWorker, { type: 'chunk-done' }>).done),
        reject,
      });
      this.worker.postMessage({ type: 'chunk', job } satisfies ToWorker, [job.bytes.buffer as ArrayBuffer]);
    });
  }

  ready(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.dead) return reject(this.dead);
      this.chunks.push({ resolve: () => resolve(), reject });
    });
  }

  async close(): Promise<void> {
    this.dead ??= new Error('load workers closed');
    await this.worker.terminate();
  }

  private receive(m: FromWorker): void {
    if (m.type === 'chunk-done' || m.type === 'ready') {
      this.chunks.shift()?.resolve(m);
      return;
    }
    if (m.type === 'failed' && m.req === undefined) {
      this.fail(Object.assign(new Error(`load worker: ${m.message}`), { stack: m.stack }));
      return;
    }
    const p = this.pending.get((m as { req: number }).req);
    if (!p) return;
    this.pending.delete((m as { req: number }).req);
    if (m.type === 'failed')
      p.reject(Object.assign(new Error(`load worker: ${m.message}`), { stack: m.stack }));
    else p.resolve(m);
  }

  private fail(e: Error): void {
    if (this.dead) return;
    this.dead = e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    for (const p of this.chunks.splice(0)) p.reject(e);
  }
}

/** One worker's part of a table's records (see engine/columnar-part.ts). */
class RemotePart implements ColumnarPart {
  constructor(
    private readonly worker: WorkerHandle,
    private readonly id: number,
    readonly rowCount: number,
  ) {}

  async summary(detectTimestamps: boolean): Promise<BatchSummary> {
    const m = await this.worker.ask<Extract<FromWorker, { type: 'summary' }>>({
      type: 'summary',
      part: this.id,
      detect: detectTimestamps,
    });
    return m.summary;
  }

  async measureNeeds(columns: ReadonlyMap<string, PrimitiveType>): Promise<ColumnNeeds> {
    const m = await this.worker.ask<Extract<FromWorker, { type: 'needs' }>>({
      type: 'needs',
      part: this.id,
      columns: [...columns],
    });
    return new Map(m.needs);
  }

  async encode(
    schema: Schema,
    spec: PartitionSpec,
    options: EncodeOptions,
  ): Promise<EncodedFile[] | undefined> {
    const m = await this.worker.ask<Extract<FromWorker, { type: 'encoded' }>>({
      type: 'encode',
      part: this.id,
      schema,
      spec,
      options,
    });
    return m.files;
  }

  async readBack(): Promise<Provenance[]> {
    const m = await this.worker.ask<Extract<FromWorker, { type: 'read-back' }>>({
      type: 'read-back',
      part: this.id,
    });
    return m.records;
  }

  release(): void {
    this.worker.tell({ type: 'release', part: this.id });
  }
}

export class LoadWorkers {
  private nextPart = 1;

  private constructor(private readonly workers: WorkerHandle[]) {}

  /** Starts `count` workers for a load of `init.sources` with `init.config`. */
  static async start(count: number, init: WorkerInit): Promise<LoadWorkers> {
    const { url, workerData } = workerScript();
    const handles = Array.from(
      { length: count },
      () =>
        new WorkerHandle(new Worker(url, { workerData, resourceLimits: { maxYoungGenerationSizeMb: 16 } })),
    );
    const pool = new LoadWorkers(handles);
    try {
      await Promise.all(
        handles.map((h) => {
          const ready = h.ready();
          h.tell({ type: 'init', init });
          return ready;
        }),
      );
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  get size(): number {
    return this.workers.length;
  }

  /** Scans one chunk per worker (`jobs[i]` on worker i). */
  scan(jobs: readonly ChunkJob[]): Promise<ChunkDone[]> {
    return Promise.all(jobs.map((job, i) => this.workers[i]!.scan(job)));
  }

  /** The table's records held by `holders` (worker indexes), moved into parts to be written. */
  async detach(table: string, holders: readonly number[]): Promise<ColumnarPart[]> {
    const parts = await Promise.all(
      holders.map(async (w) => {
        const id = this.nextPart++;
        const handle = this.workers[w]!;
        const m = await handle.ask<Extract<FromWorker, { type: 'detached' }>>({
          type: 'detach',
          table,
          part: id,
        });
        return m.rows > 0 ? new RemotePart(handle, id, m.rows) : undefined;
      }),
    );
    return parts.filter((p): p is RemotePart => p !== undefined);
  }

  /**
   * The table's records held by `holders` (worker indexes) gathered on worker `into` (a table
   * small enough to be written as one file, by one worker), then moved into one part there.
   */
  async gather(table: string, holders: readonly number[], into: number): Promise<ColumnarPart[]> {
    const target = this.workers[into]!;
    for (const w of holders) {
      if (w === into) continue;
      const m = await this.workers[w]!.ask<Extract<FromWorker, { type: 'exported' }>>({
        type: 'export',
        table,
      });
      if (m.data) await target.ask({ type: 'import', table, data: m.data }, batchBuffers(m.data));
    }
    return this.detach(table, [into]);
  }

  /** The table's records held by each of `holders`, moved out to this thread as plain data. */
  async exportAll(table: string, holders: readonly number[]): Promise<BatchData[]> {
    const out: BatchData[] = [];
    for (const w of holders) {
      const m = await this.workers[w]!.ask<Extract<FromWorker, { type: 'exported' }>>({
        type: 'export',
        table,
      });
      if (m.data) out.push(m.data);
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }
}

/** Frees what a part holds where it is held (a worker's part; nothing for a local one). */
export function releasePart(part: ColumnarPart): void {
  if (part instanceof RemotePart) part.release();
}

/**
 * The worker's script: the bundle's (dist/cli/load-worker.js, next to this chunk or its parent)
 * or, running from the TypeScript sources (tests, tsx), engine/load-worker.ts started through
 * engine/ts-worker.mjs (which registers tsx in the worker first).
 */
function workerScript(): { url: URL; workerData?: { script: string } } {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    return {
      url: new URL('./ts-worker.mjs', here),
      workerData: { script: new URL('./load-worker.ts', here).href },
    };
  }
  for (const rel of ['./load-worker.js', '../load-worker.js']) {
    const url = new URL(rel, here);
    if (existsSync(fileURLToPath(url))) return { url };
  }
  throw new Error(`the load worker script was not found next to ${fileURLToPath(here)}`);
}
