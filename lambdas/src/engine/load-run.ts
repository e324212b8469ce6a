/**
 * The machinery of one `floe load` run (app/load.ts gives its steps): every line is guarded,
 * taken by the fast path when it can be (engine/fast-path.ts) or parsed, routed and checked by
 * the generic path, and kept with its table; tables are written in parts when the memory budget
 * says so (engine/table-load.ts), and committed once each at the end.
 *
 * **Memory.** What the run holds is its tables' unwritten records: the fast path's columns (their
 * typed arrays' capacities, `ColumnarTableBatch.bytes`) and the generic path's parsed records (an
 * estimate from their text). Past `memoryBudgetBytes` the largest tables are written as parts
 * until the run holds half of it; a table past `partBytes` is written on its own. The input's
 * bytes are never kept: a record's text is read back from its file when a dead letter or the
 * generic path needs it (`LoadSource.readRange`), or copied when the source cannot do that.
 */

import { availableParallelism } from 'node:os';
import { holds, type SourceHolders } from '../app/load-history.ts';
import {
  branchFor,
  hasDebeziumTables,
  hasRecordRules,
  readerDepthLimit,
  routerFor,
  tableId,
  upsertFor,
} from '../config.ts';
import { type ChangeOp, isTombstone, readChange } from '../records/change-event.ts';
import {
  isTooDeep,
  JsonNumberText,
  type JsonObject,
  type JsonValue,
  parseJsonRecord,
} from '../records/json-line.ts';
import { invalidUtf8Offset } from '../records/shape-scanner.ts';
import { compileConsolidation } from '../routing/consolidate.ts';
import type { RouteResult } from '../routing/index.ts';
import { committingTo } from './append.ts';
import { forEachBounded } from './bounded.ts';
import { ColumnarTableBatch, type RawResolver } from './columnar-batch.ts';
import { type ColumnarPart, LocalPart } from './columnar-part.ts';
import { type DeadLetter, DeadLetterReason } from './dead-letters.ts';
import { type FastOutcome, FastPath, routeReason } from './fast-path.ts';
import type { LoadDeps, LoadReport, PendingRecord, TableFailure, TableLoadResult } from './load-types.ts';
import type { ChunkJob } from './load-worker-protocol.ts';
import { LoadWorkers, releasePart } from './load-workers.ts';
import { RecordRules } from './record-rules.ts';
import { changeOfRouted } from './routed-change.ts';
import { TableLoad } from './table-load.ts';

/** Bytes of unwritten records a run holds before it writes the largest tables (default). */
export const DEFAULT_MEMORY_BUDGET_BYTES = 192 * 1024 * 1024;
/**
 * The same with worker threads (all workers together): each worker costs ~50 MiB of its own (an
 * isolate, its code, its buffers), so the budget is smaller to keep the process within 512 MiB
 * with two workers (measured: 30M records into 230 tables, bench/README.md).
 */
export const DEFAULT_WORKERS_MEMORY_BUDGET_BYTES = 128 * 1024 * 1024;
/** Unwritten bytes past which one table is written as a part (default). */
export const DEFAULT_PART_BYTES = 64 * 1024 * 1024;
/** A table holding at most this much when it is finished is written as one file, here. */
const MERGE_BYTES = 16 * 1024 * 1024;
/** Tables finished (last part and commit) at the same time. */
const FINISH_CONCURRENCY = 32;
/** A parsed record's memory, estimated from its text's length. */
const GENERIC_BYTES_PER_CHAR = 12;

const utf8 = new TextDecoder('utf-8');
/** For lines that fail the strict decode: the dead letter keeps a readable copy. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** One table's unwritten records and its writer. */
interface TableWork {
  readonly key: string;
  readonly load: TableLoad;
  readonly batch: ColumnarTableBatch;
  generic: PendingRecord[];
  genericBytes: number;
  /** Sources (indexes) whose records reached the table. */
  readonly fedBy: Set<number>;
  /** While set, the table's dead letters wait here (finishing: released in table order). */
  hold: DeadLetter[] | undefined;
  /** Bytes (and rows) of the table's records held by each worker, by worker index. */
  readonly remote: Map<number, { bytes: number; rows: number }>;
}

export interface RunSource {
  readonly name: string;
  /** The source's bytes `[start, end)`, read again (for dead letters and the generic path). */
  readonly readRange?: (start: number, end: number) => Promise<Uint8Array>;
  /** The file it is (worker threads read records back from it themselves). */
  readonly path?: string;
  /** Its size in bytes, when known. */
  readonly size?: number;
  readonly chunks?: unknown;
}

/**
 * Inputs smaller than this are loaded in one thread: the workers' start, hand-offs and the
 * smaller parts of a shared budget cost more than the second core gives (measured on 2 vCPU, 230
 * tables: 26 MB 2.6 s with two workers vs 2.1 s in one thread; 85 MB 3.35 vs 3.17 s; 255 MB
 * 6.15 vs 6.51 s).
 */
export const WORKER_MIN_INPUT_BYTES = 128 * 1024 * 1024;

export class LoadRun {
  lines = 0;
  readonly dead: Record<string, number> = {};
  private readonly tables = new Map<string, TableWork>();
  private readonly fast: FastPath | undefined;
  private readonly router;
  private readonly consolidator;
  private readonly maxBytes: number;
  private readonly readerDepth: number;
  private readonly budget: number;
  private readonly partBytes: number;
  private readonly names: string[];
  private readonly resolveRaw: RawResolver | undefined;
  /** Per source: tables that must not get its records again (the load history). */
  private readonly skips: (SourceHolders | undefined)[] = [];
  private held = 0;
  private nextChunk = 0;
  /** Lines that took the generic path (parsed as objects). */
  private genericLines = 0;
  /** Whether a Debezium tombstone may arrive (an upsert table reads Debezium envelopes). */
  private readonly tombstones: boolean;
  /** Debezium truncates and tombstones: they change no rows. */
  private noRowChanges = 0;
  /** Bytes of small tables gathered on each worker to be written there (to spread them). */
  private readonly gathered: number[] = [];

  private constructor(
    private readonly deps: LoadDeps,
    sources: readonly RunSource[],
    private readonly rules: RecordRules | undefined,
    private readonly workers: LoadWorkers | undefined,
  ) {
    const cfg = deps.config;
    this.router = routerFor(cfg);
    this.tombstones = hasDebeziumTables(cfg);
    this.consolidator = compileConsolidation(cfg.consolidate ?? []);
    this.maxBytes = cfg.limits.maxRecordBytes;
    this.readerDepth = readerDepthLimit(cfg);
    this.budget =
      deps.memoryBudgetBytes ?? (workers ? DEFAULT_WORKERS_MEMORY_BUDGET_BYTES : DEFAULT_MEMORY_BUDGET_BYTES);
    this.partBytes = Math.min(deps.partBytes ?? DEFAULT_PART_BYTES, this.budget);
    this.names = sources.map((s) => s.name);
    const ranges = sources.map((s) => s.readRange);
    this.resolveRaw = ranges.every((r) => r !== undefined)
      ? (source, position, length) => ranges[source]!(position, position + length)
      : undefined;
    this.fast =
      deps.fastPath === false
        ? undefined
        : new FastPath({
            config: cfg,
            router: this.router,
            ...(rules ? { rules } : {}),
            batchFor: (table) => this.work(table).batch,
            takes: (table, source) => this.takes(table, source),
            upserts: true,
            tombstones: this.tombstones,
          });
  }

  /**
   * What the generic path makes of a record the fast path took, read back as JSON: an upsert
   * table's change row (its key alone for a delete), then the field lists' projection.
   */
  private reshapeFor(table: string): ((value: JsonObject) => JsonObject) | undefined {
    const upsert = upsertFor(this.deps.config, table);
    const rules = this.rules;
    if (!upsert && !rules) return undefined;
    return (value) => {
      let v = value;
      if (upsert) {
        const change = readChange(upsert, v, table);
        if (change.ok) v = change.row;
      }
      return rules ? rules.project(v, table) : v;
    };
  }

  static async start(deps: LoadDeps, sources: readonly RunSource[]): Promise<LoadRun> {
    const rules = hasRecordRules(deps.config)
      ? await RecordRules.create(deps.config, deps.catalog)
      : undefined;
    const threads = workerThreads(deps, sources);
    const workers =
      threads > 1
        ? await LoadWorkers.start(threads, { config: deps.config, sources: sources.map((s) => s.path!) })
        : undefined;
    return new LoadRun(deps, sources, rules, workers);
  }

  /** Worker threads the run scans with (0: it scans in this thread). */
  get threads(): number {
    return this.workers?.size ?? 0;
  }

  /**
   * Every line of a source in chunks, scanned by the worker threads (one chunk each, a round at a
   * time): the workers keep what their fast path takes; the dead letters and the lines they hand
   * back are handled here, in input order, after each round; then memory is relieved.
   */
  async readChunks(
    chunks: AsyncIterable<Uint8Array>,
    source: number,
    onLines: (n: number) => void,
  ): Promise<void> {
    const workers = this.workers!;
    const holders = this.skips[source];
    let round: ChunkJob[] = [];
    let offset = 0;
    let line = 1;
    let read = 0;
    let scanning: Promise<void> = Promise.resolve();
    // A failed round fails the read; until awaited, it must not be an unhandled rejection.
    const watch = (p: Promise<void>) => {
      p.catch(() => undefined);
      return p;
    };
    for await (const chunk of chunks) {
      const lines = countLines(chunk);
      round.push({
        id: this.nextChunk++,
        source,
        offset,
        firstLine: line,
        firstSeq: this.lines + 1,
        // A buffer of its own, transferred to the worker (the reader may still hold its source):
        // one the workers handed back, when it is large enough.
        bytes: this.chunkBuffer(chunk),
        ...(holders ? { holders: { all: holders.all, tables: [...holders.tables] } } : {}),
      });
      offset += chunk.length;
      line += lines;
      this.lines += lines;
      read += lines;
      if (round.length === workers.size) {
        // The next round's chunks are read (and hashed) while the workers scan this one.
        await scanning;
        onLines(read - lines);
        scanning = watch(this.scanRound(round));
        round = [];
      }
    }
    await scanning;
    if (round.length > 0) await this.scanRound(round);
    onLines(read);
  }

  /** Buffers of scanned chunks, handed back by the workers, to copy the next chunks into. */
  private readonly buffers: ArrayBuffer[] = [];

  private chunkBuffer(chunk: Uint8Array): Uint8Array {
    const i = this.buffers.findIndex((b) => b.byteLength >= chunk.length);
    const buf =
      i >= 0
        ? this.buffers.splice(i, 1)[0]!
        : new ArrayBuffer(Math.max(chunk.length, 4 * 1024 * 1024 + 65536));
    const out = new Uint8Array(buf, 0, chunk.length);
    out.set(chunk);
    return out;
  }

  private async scanRound(jobs: readonly ChunkJob[]): Promise<void> {
    const done = await this.workers!.scan(jobs);
    for (let i = 0; i < done.length; i++) {
      const d = done[i]!;
      const job = jobs[i]!;
      if (this.buffers.length < 4) this.buffers.push(d.buffer);
      // Dead letters and the generic path's lines, merged in input order.
      const dead = d.dead;
      let k = 0;
      for (const g of d.generic) {
        while (k < dead.length && dead[k]!.line < g.line) await this.reject(dead[k++]!);
        await this.generic(g.raw, g.seq, job.source, g.line);
      }
      while (k < dead.length) await this.reject(dead[k++]!);
      for (const table of d.fed) this.work(table).fedBy.add(job.source);
      const holders = this.skips[job.source];
      if (holders) for (const table of d.skipped) holders.skipped(tableId(this.deps.config, table));
      const seen = new Set<string>();
      for (const h of d.held) {
        this.work(h.table).remote.set(i, { bytes: h.bytes, rows: h.rows });
        seen.add(h.table);
      }
      for (const w of this.tables.values()) if (!seen.has(w.key)) w.remote.delete(i);
    }
    await this.relieve();
  }

  /** Ends the run's worker threads (after `finish`, or when the run fails). */
  async close(): Promise<void> {
    await this.workers?.close();
  }

  /** Tables that hold source `index` already (load history): its records skip them. */
  skipFor(index: number, holders: SourceHolders): void {
    this.skips[index] = holders;
  }

  /** The tables each source fed (names), for the load history's record. */
  fedBy(table: string): string[] {
    return [...(this.tables.get(table)?.fedBy ?? [])].sort((a, b) => a - b).map((i) => this.names[i]!);
  }

  /**
   * One line given as bytes, `chunk[start..end)` (no line break), line `line` of source `source`
   * at offset `position` of it.
   */
  takeBytes(
    chunk: Uint8Array,
    start: number,
    end: number,
    source: number,
    line: number,
    position: number,
  ): Promise<void> | undefined {
    this.lines++;
    if (end - start > this.maxBytes) {
      return this.reject(this.tooLarge(source, line, end - start, utf8.decode(chunk.subarray(start, end))));
    }
    if (isBlank(chunk, start, end)) return undefined;
    const seq = this.lines;
    const outcome = this.fast?.takeBytes(chunk, start, end, { seq, source, line, position });
    if (outcome === true) return undefined;
    return this.slowBytes(chunk, start, end, source, line, seq, outcome);
  }

  /** A line the fast path did not take: a dead letter, or the generic path. */
  private async slowBytes(
    chunk: Uint8Array,
    start: number,
    end: number,
    source: number,
    line: number,
    seq: number,
    outcome: FastOutcome,
  ): Promise<void> {
    const bytes = chunk.subarray(start, end);
    const raw = decodeLine(bytes);
    if (raw === undefined) {
      return this.reject({
        source: this.names[source]!,
        line,
        reason: DeadLetterReason.MalformedJson,
        detail: `invalid UTF-8 at byte ${invalidUtf8Offset(bytes, 0, bytes.length)}: the line is not UTF-8 text`,
        raw: utf8.decode(bytes),
      });
    }
    if (outcome !== undefined && outcome !== true) {
      return this.reject({
        source: this.names[source]!,
        line,
        reason: outcome.reason,
        detail: outcome.detail,
        raw,
        ...(outcome.table === undefined ? {} : { table: outcome.table }),
      });
    }
    await this.generic(raw, seq, source, line);
  }

  /** One line given as text. */
  async takeText(raw: string, source: number, line: number): Promise<void> {
    this.lines++;
    if (raw.trim() === '') return;
    const bytes = raw.length * 3 > this.maxBytes ? Buffer.byteLength(raw) : 0;
    if (bytes > this.maxBytes) return this.reject(this.tooLarge(source, line, bytes, raw));
    const seq = this.lines;
    const outcome = this.fast?.take(raw, { seq, source, line, position: 0 });
    if (outcome === true) return;
    if (outcome !== undefined) {
      return this.reject({
        source: this.names[source]!,
        line,
        reason: outcome.reason,
        detail: outcome.detail,
        raw,
        ...(outcome.table === undefined ? {} : { table: outcome.table }),
      });
    }
    await this.generic(raw, seq, source, line);
  }

  /** Called between chunks of input: writes tables as parts while the run holds too much. */
  async relieve(): Promise<void> {
    let held = 0;
    const candidates: TableWork[] = [];
    for (const w of this.tables.values()) {
      const b = bytesOf(w);
      held += b;
      if (w.load.flushable && rowsHeld(w) > 0) candidates.push(w);
    }
    this.held = held;
    const big = candidates.filter((w) => bytesOf(w) >= this.partBytes);
    let chosen = big;
    if (held > this.budget) {
      // The largest first, until the run holds half its budget.
      candidates.sort((a, b) => bytesOf(b) - bytesOf(a));
      chosen = [];
      let left = held;
      for (const w of candidates) {
        if (left <= this.budget / 2 && bytesOf(w) < this.partBytes) break;
        chosen.push(w);
        left -= bytesOf(w);
      }
    }
    if (chosen.length === 0) return;
    await forEachBounded(chosen, FINISH_CONCURRENCY, (w) => this.writePart(w));
  }

  /** Bytes of unwritten records the run held at the last `relieve`. */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Writes each table's last part and commits it (several tables at a time). One table's failure
   * (I/O, a conflict budget spent) does not stop the others: its records are reported as not
   * loaded rather than dead-lettered, since they are not bad input.
   */
  async finish(
    plan: (table: string, fedBy: readonly string[]) => Promise<Readonly<Record<string, string>> | undefined>,
  ): Promise<{ tables: TableLoadResult[]; failures: TableFailure[] }> {
    const tables: TableLoadResult[] = [];
    const failures: TableFailure[] = [];
    const names = [...this.tables.keys()].sort();
    // Tables finish several at a time; their dead letters are released in table order, so a
    // run reports them in the same order every time.
    for (const name of names) this.tables.get(name)!.hold = [];
    const done = new Set<string>();
    let next = 0;
    const release = async () => {
      while (next < names.length) {
        const w = this.tables.get(names[next]!)!;
        const held = w.hold ?? [];
        w.hold = undefined;
        for (const d of held) await this.deps.onDeadLetter(d);
        if (!done.has(names[next]!)) break;
        next++;
      }
    };
    await forEachBounded(names, FINISH_CONCURRENCY, async (name) => {
      const w = this.tables.get(name)!;
      const records = w.load.rows + w.load.lostRecords + rowsHeld(w);
      try {
        if (records > 0 || w.load.parts > 0) await this.finishTable(w, records, plan, tables);
      } catch (error) {
        failures.push({ table: name, records, error });
        this.deps.onProgress?.({ kind: 'table-failed', table: name, error });
      } finally {
        done.add(name);
        await release();
      }
    });
    tables.sort((a, b) => (a.table < b.table ? -1 : a.table > b.table ? 1 : 0));
    failures.sort((a, b) => (a.table < b.table ? -1 : a.table > b.table ? 1 : 0));
    return { tables, failures };
  }

  private async finishTable(
    w: TableWork,
    records: number,
    plan: (table: string, fedBy: readonly string[]) => Promise<Readonly<Record<string, string>> | undefined>,
    tables: TableLoadResult[],
  ): Promise<void> {
    const name = w.key;
    this.deps.onProgress?.({ kind: 'table-start', table: name, records });
    const summary = await plan(name, this.fedBy(name));
    const parts = await this.partsOf(w);
    const generic = w.generic;
    w.generic = [];
    w.genericBytes = 0;
    let result: TableLoadResult;
    try {
      result = await w.load.finish(parts, generic, summary);
    } finally {
      for (const p of parts) releasePart(p);
    }
    tables.push(result);
    this.deps.onProgress?.({ kind: 'table-done', table: name, result });
  }

  /** The report's tally. */
  report(done: { tables: TableLoadResult[]; failures: TableFailure[] }): LoadReport {
    const rows = done.tables.reduce((n, t) => n + t.rows, 0);
    const reparsed = done.tables.reduce((n, t) => n + (t.reparsed ?? 0), 0);
    return {
      lines: this.lines,
      rows,
      genericRecords: this.genericLines + reparsed,
      ...(this.noRowChanges > 0 ? { noRowChanges: this.noRowChanges } : {}),
      deadLetters: this.dead,
      ...done,
    };
  }

  private async writePart(w: TableWork): Promise<void> {
    const parts = await this.partsOf(w);
    const generic = w.generic;
    w.generic = [];
    w.genericBytes = 0;
    try {
      await w.load.flushPart(parts, generic);
    } finally {
      for (const p of parts) releasePart(p);
    }
  }

  /**
   * The table's records held so far (here and by the workers), moved out to be written: each
   * worker's part is encoded where it is, except a small table's (`MERGE_BYTES`), whose parts are
   * gathered on one worker and written as one file rather than one per worker (with hundreds of
   * tables most parts are small: 30M records into 230 tables wrote 6,820 files without this).
   */
  private async partsOf(w: TableWork): Promise<ColumnarPart[]> {
    if (this.workers && w.remote.size > 0 && upsertFor(this.deps.config, w.key)) {
      // An upsert table's last change of each key is decided over all its records in input
      // order, in one place: the workers' records are brought here (an upsert table is written
      // once, at the end).
      const holders = [...w.remote.keys()].sort((a, b) => a - b);
      w.remote.clear();
      for (const data of await this.workers.exportAll(w.key, holders))
        w.batch.absorb(ColumnarTableBatch.fromData(data, this.names, this.resolveRaw));
    }
    const local = w.batch.rowCount > 0 ? w.batch.detach() : undefined;
    if (!this.workers || w.remote.size === 0) return local ? [new LocalPart(local, this.deps.encoder)] : [];
    const holders = [...w.remote.keys()].sort((a, b) => a - b);
    const small = bytesOf(w) <= MERGE_BYTES;
    const remote = new Map(w.remote);
    w.remote.clear();
    if (small && holders.length > 1) {
      // The worker given the least to write so far (the tables' parts are about even halves).
      const into = holders.reduce((a, b) => ((this.gathered[b] ?? 0) < (this.gathered[a] ?? 0) ? b : a));
      this.gathered[into] = (this.gathered[into] ?? 0) + bytesOf({ ...w, remote });
      const parts: ColumnarPart[] = local ? [new LocalPart(local, this.deps.encoder)] : [];
      parts.push(...(await this.workers.gather(w.key, holders, into)));
      return parts;
    }
    const parts: ColumnarPart[] = local ? [new LocalPart(local, this.deps.encoder)] : [];
    parts.push(...(await this.workers.detach(w.key, holders)));
    return parts;
  }

  /** Whether `table` takes the records of `source` (not when it holds that file already). */
  private takes(table: string, source: number): boolean {
    const holders = this.skips[source];
    if (holders && holds(holders, tableId(this.deps.config, table))) return false;
    this.work(table).fedBy.add(source);
    return true;
  }

  private work(table: string): TableWork {
    let w = this.tables.get(table);
    if (!w) {
      const id = tableId(this.deps.config, table);
      // The branch this table commits to: `--branch` for every table, else the config's (main).
      const branch = this.deps.branch ?? branchFor(this.deps.config, table);
      const deps = committingTo(this.deps, branch);
      w = {
        key: table,
        load: new TableLoad(deps, id, (d) => this.rejectFor(table, d), this.reshapeFor(table)),
        batch: new ColumnarTableBatch(this.names, this.resolveRaw),
        generic: [],
        genericBytes: 0,
        fedBy: new Set(),
        hold: undefined,
        remote: new Map(),
      };
      this.tables.set(table, w);
    }
    return w;
  }

  /** A table's dead letter: held while its table's are (see `finish`), else passed on. */
  private async rejectFor(table: string, d: DeadLetter): Promise<void> {
    const held = this.tables.get(table)?.hold;
    if (held === undefined) return this.reject(d);
    this.dead[d.reason] = (this.dead[d.reason] ?? 0) + 1;
    held.push(d);
  }

  private async reject(d: DeadLetter): Promise<void> {
    this.dead[d.reason] = (this.dead[d.reason] ?? 0) + 1;
    await this.deps.onDeadLetter(d);
  }

  private tooLarge(source: number, line: number, size: number, raw: string): DeadLetter {
    return {
      source: this.names[source]!,
      line,
      reason: DeadLetterReason.GuardMaxRecordBytes,
      detail: `guard maxRecordBytes: record is ${size} bytes, limit ${this.maxBytes}`,
      raw,
    };
  }

  /**
   * The generic path for one line: parse, check, route, keep the record. An exception nobody
   * foresaw (a bug in parsing, routing or a rule) is isolated to this line: a `write-failed` dead
   * letter, and the load goes on.
   */
  private async generic(raw: string, seq: number, source: number, line: number): Promise<void> {
    this.genericLines++;
    try {
      await this.genericLine(raw, seq, source, line);
    } catch (e) {
      await this.reject({
        source: this.names[source]!,
        line,
        reason: DeadLetterReason.WriteFailed,
        detail: `reading the record: ${errText(e)}`,
        raw,
      });
    }
  }

  private async genericLine(raw: string, seq: number, source: number, line: number): Promise<void> {
    const refuse = (reason: DeadLetter['reason'], detail: string, table?: string) =>
      this.reject({
        source: this.names[source]!,
        line,
        reason,
        detail,
        raw,
        ...(table === undefined ? {} : { table }),
      });
    let value: JsonValue;
    try {
      value = parseJsonRecord(raw, { maxDepth: this.readerDepth });
    } catch (e) {
      const deep = isTooDeep(e);
      return refuse(
        deep ? DeadLetterReason.GuardMaxDepth : DeadLetterReason.MalformedJson,
        deep ? `guard maxNestingDepth: record ${errText(e)}` : errText(e),
      );
    }
    if (this.tombstones && isTombstone(value)) {
      this.noRowChanges++;
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return refuse(DeadLetterReason.NotAnObject, `expected a JSON object, got ${jsonKindOf(value)}`);
    let obj = value as Record<string, JsonValue>;
    const consolidated = this.consolidator?.(obj);
    if (consolidated && !consolidated.ok)
      return refuse(DeadLetterReason.ConsolidationFailed, consolidated.detail, consolidated.table);
    if (consolidated) obj = consolidated.value;
    const route: RouteResult = consolidated
      ? { ok: true, table: consolidated.table, rule: 'consolidated' }
      : this.router(obj);
    if (!route.ok) return refuse(routeReason(route.reason), route.detail);
    // Upsert tables: the record is a change; its row (the key alone for a delete) goes on.
    let op: ChangeOp | undefined;
    let version: bigint | undefined;
    const change = changeOfRouted(this.deps.config, route.table, obj, route.rule === 'dynamodb');
    if (change) {
      if (!change.ok) {
        if (change.reason !== 'no-row') return refuse(change.reason, change.detail, route.table);
        this.noRowChanges++;
        return;
      }
      op = change.op;
      version = change.version;
      obj = change.row;
    }
    if (this.rules) {
      const checked = await this.rules.check(obj, route.table);
      if (!checked.ok) return refuse(checked.reason, checked.detail, route.table);
      obj = checked.value;
    }
    if (!this.takes(route.table, source)) return;
    const w = this.work(route.table);
    w.generic.push({
      seq,
      source: this.names[source]!,
      line,
      raw,
      value: obj,
      ...(op ? { op } : {}),
      ...(version === undefined ? {} : { version }),
    });
    w.genericBytes += raw.length * GENERIC_BYTES_PER_CHAR;
  }
}

function bytesOf(w: TableWork): number {
  let remote = 0;
  for (const r of w.remote.values()) remote += r.bytes;
  return w.batch.bytes + w.genericBytes + remote;
}

function rowsHeld(w: TableWork): number {
  let rows = w.batch.rowCount + w.generic.length;
  for (const r of w.remote.values()) rows += r.rows;
  return rows;
}

/** Lines in a chunk that ends at a line boundary (the last line may lack its newline). */
function countLines(chunk: Uint8Array): number {
  let n = 0;
  let pos = chunk.indexOf(10);
  while (pos >= 0) {
    n++;
    pos = chunk.indexOf(10, pos + 1);
  }
  return chunk.length > 0 && chunk[chunk.length - 1] !== 10 ? n + 1 : n;
}

/**
 * Worker threads for a run: `LoadDeps.threads` (default: the machine's cores), when every source
 * is a file read in chunks, the input is large enough to repay starting them, and no rule needs
 * records decided in input order in one place (`guards.maxTables` counts tables as they come; a
 * test's injected encoder lives in this thread).
 */
function workerThreads(deps: LoadDeps, sources: readonly RunSource[]): number {
  const threads = deps.threads ?? availableParallelism();
  if (threads <= 1 || deps.fastPath === false || deps.encoder !== undefined) return 0;
  if (deps.config.guards?.maxTables !== undefined) return 0;
  if (!sources.every((s) => s.chunks !== undefined && s.path !== undefined && s.readRange !== undefined))
    return 0;
  const size = sources.reduce((n, s) => n + (s.size ?? 0), 0);
  return size >= (deps.workerMinBytes ?? WORKER_MIN_INPUT_BYTES) ? threads : 0;
}

function isBlank(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

/** The line as text, or undefined when it is not valid UTF-8 (never silently U+FFFD). */
function decodeLine(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function jsonKindOf(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'bigint' || typeof v === 'number' || v instanceof JsonNumberText) return 'a number';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return 'a boolean';
  return typeof v;
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
