/**
 * A `floe load` worker thread (started by engine/load-workers.ts): it scans the chunks of input
 * it is given with the fast path into its own tables' columns, and, when the load decides a
 * table, summarizes, measures and encodes its part of that table's records for the schema the
 * load chose — or reads them back as text for the generic path. What it cannot take (a line the
 * scanner gives up on) goes back to the load as text, as do the dead letters it finds; it never
 * decides a table and never stores anything.
 */
import { promises as fs } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { hasDebeziumTables, hasRecordRules, routerFor, tableId } from '../config.ts';
import { invalidUtf8Offset } from '../records/shape-scanner.ts';
import { type BatchData, batchBuffers, ColumnarTableBatch } from './columnar-batch.ts';
import { encodeBatch } from './columnar-part.ts';
import { type DeadLetter, DeadLetterReason } from './dead-letters.ts';
import { FastPath } from './fast-path.ts';
import type {
  ChunkDone,
  ChunkJob,
  FromWorker,
  GenericLine,
  ToWorker,
  WorkerInit,
} from './load-worker-protocol.ts';
import { RecordRules } from './record-rules.ts';

const utf8 = new TextDecoder('utf-8');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

class Worker {
  private readonly fast: FastPath;
  private readonly batches = new Map<string, ColumnarTableBatch>();
  private readonly parts = new Map<number, ColumnarTableBatch>();
  private readonly files = new Map<number, Promise<fs.FileHandle>>();
  private readonly fedPairs = new Set<string>();
  private readonly skippedPairs = new Set<string>();
  /** The job being scanned (for `takes`). */
  private job: ChunkJob | undefined;
  private holders: { all: boolean; tables: ReadonlySet<string> } | undefined;
  private fed: string[] = [];
  private skipped: string[] = [];

  constructor(
    private readonly init: WorkerInit,
    rules: RecordRules | undefined,
  ) {
    const cfg = init.config;
    this.fast = new FastPath({
      config: cfg,
      router: routerFor(cfg),
      ...(rules ? { rules } : {}),
      batchFor: (table) => {
        let b = this.batches.get(table);
        if (!b) {
          b = this.newBatch();
          this.batches.set(table, b);
        }
        return b;
      },
      takes: (table, source) => this.takes(table, source),
      // Upsert tables' plain records too: the load brings them to one place to decide the last
      // change of each key (engine/load-run.ts, `partsOf`).
      upserts: true,
      tombstones: hasDebeziumTables(cfg),
    });
  }

  chunk(job: ChunkJob): ChunkDone {
    this.job = job;
    this.holders = job.holders ? { all: job.holders.all, tables: new Set(job.holders.tables) } : undefined;
    this.fed = [];
    this.skipped = [];
    const dead: DeadLetter[] = [];
    const generic: GenericLine[] = [];
    const name = this.init.sources[job.source]!;
    const maxBytes = this.init.config.limits.maxRecordBytes;
    // A Buffer view (no copy): its indexOf is a native memchr, 2–3 × a Uint8Array's.
    const chunk = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.length);
    const len = chunk.length;
    let pos = 0;
    let k = 0;
    while (pos < len) {
      let nl = chunk.indexOf(10, pos);
      if (nl < 0) nl = len;
      const end = nl > pos && chunk[nl - 1] === 13 ? nl - 1 : nl;
      const line = job.firstLine + k;
      const seq = job.firstSeq + k;
      k++;
      if (end - pos > maxBytes) {
        dead.push({
          source: name,
          line,
          reason: DeadLetterReason.GuardMaxRecordBytes,
          detail: `guard maxRecordBytes: record is ${end - pos} bytes, limit ${maxBytes}`,
          raw: utf8.decode(chunk.subarray(pos, end)),
        });
      } else if (!isBlank(chunk, pos, end)) {
        const outcome = this.fast.takeBytes(chunk, pos, end, {
          seq,
          source: job.source,
          line,
          position: job.offset + pos,
        });
        if (outcome !== true) {
          const bytes = chunk.subarray(pos, end);
          const raw = decodeLine(bytes);
          if (raw === undefined) {
            dead.push({
              source: name,
              line,
              reason: DeadLetterReason.MalformedJson,
              detail: `invalid UTF-8 at byte ${invalidUtf8Offset(bytes, 0, bytes.length)}: the line is not UTF-8 text`,
              raw: utf8.decode(bytes),
            });
          } else if (outcome === undefined) generic.push({ seq, line, raw });
          else {
            dead.push({
              source: name,
              line,
              reason: outcome.reason,
              detail: outcome.detail,
              raw,
              ...(outcome.table === undefined ? {} : { table: outcome.table }),
            });
          }
        }
      }
      pos = nl + 1;
    }
    const held: { table: string; bytes: number; rows: number }[] = [];
    for (const [table, b] of this.batches)
      if (b.rowCount > 0) held.push({ table, bytes: b.bytes, rows: b.rowCount });
    this.job = undefined;
    return {
      id: job.id,
      buffer: job.bytes.buffer as ArrayBuffer,
      dead,
      generic,
      held,
      fed: this.fed,
      skipped: this.skipped,
    };
  }

  /** Moves the table's records into part `part` (rows moved; 0: it holds none). */
  detach(table: string, part: number): number {
    const b = this.batches.get(table);
    if (!b || b.rowCount === 0) return 0;
    this.parts.set(part, b.detach());
    return this.parts.get(part)!.rowCount;
  }

  /** The table's records moved out as plain data (undefined: it holds none). */
  exportTable(table: string): BatchData | undefined {
    const b = this.batches.get(table);
    if (!b || b.rowCount === 0) return undefined;
    return b.exportData();
  }

  /** Takes another worker's records of the table (to write the table in one file). */
  importTable(table: string, data: BatchData): void {
    let b = this.batches.get(table);
    if (!b) {
      b = this.newBatch();
      this.batches.set(table, b);
    }
    b.absorb(ColumnarTableBatch.fromData(data, this.init.sources, this.resolve));
  }

  part(id: number): ColumnarTableBatch {
    const p = this.parts.get(id);
    if (!p) throw new Error(`load worker: no part ${id}`);
    return p;
  }

  release(id: number): void {
    this.parts.delete(id);
  }

  private readonly resolve = (source: number, position: number, length: number) =>
    this.read(source, position, length);

  private newBatch(): ColumnarTableBatch {
    return new ColumnarTableBatch(this.init.sources, this.resolve);
  }

  private takes(table: string, source: number): boolean {
    const key = `${table}\u0000${source}`;
    const h = this.holders;
    if (h && this.job?.source === source) {
      const id = tableId(this.init.config, table);
      if (h.all || h.tables.has(`${id.namespace}.${id.name}`)) {
        if (!this.skippedPairs.has(key)) {
          this.skippedPairs.add(key);
          this.skipped.push(table);
        }
        return false;
      }
    }
    if (!this.fedPairs.has(key)) {
      this.fedPairs.add(key);
      this.fed.push(table);
    }
    return true;
  }

  private async read(source: number, position: number, length: number): Promise<Uint8Array> {
    let h = this.files.get(source);
    if (!h) {
      h = fs.open(this.init.sources[source]!, 'r');
      this.files.set(source, h);
    }
    const fh = await h;
    const out = Buffer.alloc(length);
    let at = 0;
    while (at < length) {
      const { bytesRead } = await fh.read(out, at, length - at, position + at);
      if (bytesRead === 0) throw new Error(`${this.init.sources[source]} changed while it was loaded`);
      at += bytesRead;
    }
    return out;
  }
}

/** `bytes` in an ArrayBuffer of its own, so it can be transferred without taking anything else along. */
function ownBuffer(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes;
  return bytes.slice();
}

function isBlank(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

function decodeLine(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** No catalog in a worker: maxTables (the one rule that needs one) keeps a load in one thread. */
const noCatalog = new Proxy(
  {},
  {
    get() {
      throw new Error('load worker: no catalog here');
    },
  },
) as never;

function post(m: FromWorker, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(m, transfer);
}

let worker: Worker | undefined;

parentPort?.on('message', async (m: ToWorker) => {
  const req = 'req' in m ? m.req : undefined;
  try {
    switch (m.type) {
      case 'init': {
        const rules = hasRecordRules(m.init.config)
          ? await RecordRules.create(m.init.config, noCatalog)
          : undefined;
        worker = new Worker(m.init, rules);
        post({ type: 'ready' });
        return;
      }
      case 'chunk': {
        const done = worker!.chunk(m.job);
        post({ type: 'chunk-done', done }, [done.buffer]);
        return;
      }
      case 'detach':
        post({ type: 'detached', req: m.req, rows: worker!.detach(m.table, m.part) });
        return;
      case 'summary':
        post({ type: 'summary', req: m.req, summary: worker!.part(m.part).summary(m.detect) });
        return;
      case 'needs':
        post({
          type: 'needs',
          req: m.req,
          needs: [...worker!.part(m.part).measureNeeds(new Map(m.columns))],
        });
        return;
      case 'encode': {
        const files = (await encodeBatch(worker!.part(m.part), m.schema, m.spec, m.options))?.map((f) => ({
          ...f,
          file: { ...f.file, bytes: ownBuffer(f.file.bytes) },
        }));
        post(
          { type: 'encoded', req: m.req, files },
          (files ?? []).map((f) => f.file.bytes.buffer as ArrayBuffer),
        );
        return;
      }
      case 'read-back':
        post({ type: 'read-back', req: m.req, records: await worker!.part(m.part).provenance() });
        return;
      case 'export': {
        const data = worker!.exportTable(m.table);
        post({ type: 'exported', req: m.req, data }, data ? batchBuffers(data) : []);
        return;
      }
      case 'import':
        worker!.importTable(m.table, m.data);
        post({ type: 'imported', req: m.req });
        return;
      case 'release':
        worker?.release(m.part);
        return;
    }
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    post({
      type: 'failed',
      ...(req === undefined ? {} : { req }),
      message: err.message,
      ...(err.stack ? { stack: err.stack } : {}),
    });
  }
});
