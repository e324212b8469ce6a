/**
 * Ingest at width (issue 18): the ingest handler (`parseKinesisEvent` + `ingestBatch`, as
 * bench/streaming.ts times it) on ONE Kinesis batch of flights records spread over many tables,
 * next to the same size batch over a few tables, same run, alternating, medians. Target: the
 * 200-table batch costs at most 2 × the 3-table batch. Then the committer after such batches, in a
 * fresh child process (bench/ingest-width-commit.ts), for wall time and peak memory per table.
 *
 * Variants (each timed batch is fresh: new records, new sequence numbers, built before timing):
 *
 *   wide          200 tables, origins uniform over the 200 busiest airport codes (~25 records each)
 *   zipf          the same 200 tables, origins Zipf-skewed (bench/flights.ts default s = 0.96)
 *   narrow        3 tables, origins uniform over 3 codes
 *   first-wide    the `wide` batch into an empty warehouse and ledger (every table pending)
 *   first-narrow  the `narrow` batch likewise
 *   cold-wide     `wide`, but with an empty table cache (a new Lambda, or the 30 s refresh)
 *   cold-narrow   `narrow` likewise
 *   handler-wide  `wide` through the real Lambda handler (makeIngestHandler: + the structured
 *                 log line and the EMF metrics, per-table on), stdout captured and counted
 *   handler-narrow `narrow` likewise
 *
 * Steady variants use a table cache that does not expire during the runs (the refresh is what
 * `cold-*` measures). Everything is counted per batch: DynamoDB requests by command (with request
 * and response bytes and the round trip), ledger calls by method, object-store puts and bytes by
 * kind (a counting LocalObjectStore), data files, pending fragments, table cache loads.
 *
 * Knobs (env): BENCH_IW_RECORDS (5000), BENCH_IW_TABLES (200, ≤ 230), BENCH_IW_NARROW (3),
 * BENCH_IW_RUNS (7), BENCH_IW_WARMUP (3), BENCH_IW_VARIANTS (comma list, default all),
 * BENCH_IW_CONCURRENCY (the ingest's tables at once; default the app's 4), BENCH_IW_COMMIT=0 (skip
 * the committer), BENCH_IW_COMMIT_BATCHES (5 staged batches per table before the commit),
 * BENCH_IW_COMMIT_PROF=<dir> (the committer children run with --cpu-prof into <dir>; their memory
 * is then not meaningful), BENCH_IW_DDB_MS / BENCH_IW_STORE_MS (simulated round trip added to every
 * DynamoDB request / object-store put and get, parent and children; default 0), BENCH_SEED (7). See bench/README.md, "Ingest at width (issue 18)".
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LocalObjectStore } from '../lambdas/src/adapters/local/local-object-store.ts';
import { systemClock } from '../lambdas/src/adapters/local/system-clock.ts';
import { runCommitter, type TableCommitResult } from '../lambdas/src/app/committer.ts';
import { type IngestDeps, type IngestResult, ingestBatch } from '../lambdas/src/app/ingest.ts';
import { DEFAULT_DEFER_ABOVE_TABLES } from '../lambdas/src/config.ts';
import { TableCache } from '../lambdas/src/engine/table-cache.ts';
import { type IngestHandler, makeIngestHandler } from '../lambdas/src/handlers/ingest.ts';
import { buildKinesisEvent, parseKinesisEvent } from '../lambdas/src/records/kinesis-event.ts';
import { envInt, fmtInt, median, profiled, quantile, type SummaryRow } from './common.ts';
import { FLIGHT_AIRPORT_COUNT, flightLines } from './flights.ts';
import {
  type BenchPipeline,
  createLedger,
  type Dynamo,
  kinesisRecords,
  pipeline,
  SHARD,
  STREAM_ARN,
} from './wiring.ts';

/**
 * `BENCH_IW_DEFER=0`: every batch routed in the ingest (`source.deferRouting: false`, the protocol
 * before deferral); default: the app's default, which defers a batch over 32 tables to the
 * committer (app/ingest/defer-batch.ts).
 */
export const DEFER = process.env.BENCH_IW_DEFER !== '0';
export const WIDTH_CONFIG = {
  routing: { template: 'flights_{origin}' },
  partitioning: { candidates: [] },
  ...(DEFER ? {} : { source: { deferRouting: false } }),
};
/** Whether a batch over `tables` tables is deferred under WIDTH_CONFIG (the app's default bound). */
const defers = (tables: number) => DEFER && tables > DEFAULT_DEFER_ABOVE_TABLES;

const SEED = envInt('BENCH_SEED', 7);
const RECORDS = envInt('BENCH_IW_RECORDS', 5_000);
const WIDE = envInt('BENCH_IW_TABLES', 200);
const NARROW = envInt('BENCH_IW_NARROW', 3);
const RUNS = envInt('BENCH_IW_RUNS', 7);
const WARMUP = envInt('BENCH_IW_WARMUP', 3);
const COMMIT_BATCHES = envInt('BENCH_IW_COMMIT_BATCHES', 5);
const CONCURRENCY = process.env.BENCH_IW_CONCURRENCY ? envInt('BENCH_IW_CONCURRENCY', 4) : undefined;
const COMMIT = process.env.BENCH_IW_COMMIT !== '0';
const COMMIT_PROF = process.env.BENCH_IW_COMMIT_PROF;
const optionalMs = (name: string) => (process.env[name] ? envInt(name, 1) : 0);
/** Simulated round trips (AWS-like waits; 0: none): per DynamoDB request, per object-store put / get. */
const DDB_MS = optionalMs('BENCH_IW_DDB_MS');
const STORE_MS = optionalMs('BENCH_IW_STORE_MS');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const VARIANTS = [
  'wide',
  'zipf',
  'narrow',
  'first-wide',
  'first-narrow',
  'cold-wide',
  'cold-narrow',
  'handler-wide',
  'handler-narrow',
] as const;
type Variant = (typeof VARIANTS)[number];
type Shape = 'wide' | 'zipf' | 'narrow';

function chosenVariants(): Variant[] {
  const v = process.env.BENCH_IW_VARIANTS;
  if (!v) return [...VARIANTS];
  const out = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const o of out)
    if (!(VARIANTS as readonly string[]).includes(o))
      throw new Error(`BENCH_IW_VARIANTS: unknown variant '${o}' (${VARIANTS.join(', ')})`);
  return out as Variant[];
}

const shapeOf = (v: Variant): Shape => (v === 'zipf' ? 'zipf' : v.endsWith('narrow') ? 'narrow' : 'wide');

// ---------------------------------------------------------------------------------------------
// Counting decorators

export type StoreKind = 'data' | 'pending' | 'deferred' | 'metadata' | 'dead-letter' | 'other';

export function storeKind(uri: string): StoreKind {
  if (uri.endsWith('.parquet')) return 'data';
  if (uri.endsWith('.fldb')) return 'deferred';
  if (uri.includes('/pending/')) return 'pending';
  if (uri.includes('/_dead_letters')) return 'dead-letter';
  if (uri.includes('/metadata/') || uri.endsWith('.avro') || uri.endsWith('.json')) return 'metadata';
  return 'other';
}

export interface StoreCounts {
  puts: number;
  putBytes: number;
  gets: number;
  getBytes: number;
  byKind: Record<string, { puts: number; bytes: number }>;
}

const noCounts = (): StoreCounts => ({ puts: 0, putBytes: 0, gets: 0, getBytes: 0, byKind: {} });

/** The local object store, counting what goes in and out (puts as S3 PUTs, gets as S3 GETs). */
export class CountingStore extends LocalObjectStore {
  counts: StoreCounts = noCounts();

  reset(): StoreCounts {
    const c = this.counts;
    this.counts = noCounts();
    return c;
  }

  private noteput(uri: string, bytes: Uint8Array | string): void {
    const n = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
    this.counts.puts++;
    this.counts.putBytes += n;
    const k = storeKind(uri);
    const by = this.counts.byKind[k] ?? { puts: 0, bytes: 0 };
    this.counts.byKind[k] = by;
    by.puts++;
    by.bytes += n;
  }

  override async put(uri: string, bytes: Uint8Array | string): Promise<void> {
    this.noteput(uri, bytes);
    if (STORE_MS > 0) await sleep(STORE_MS);
    return super.put(uri, bytes);
  }

  override async putIfAbsent(uri: string, bytes: Uint8Array | string): Promise<boolean> {
    this.noteput(uri, bytes);
    if (STORE_MS > 0) await sleep(STORE_MS);
    return super.putIfAbsent(uri, bytes);
  }

  override async get(uri: string): Promise<Uint8Array> {
    if (STORE_MS > 0) await sleep(STORE_MS);
    const b = await super.get(uri);
    this.counts.gets++;
    this.counts.getBytes += b.length;
    return b;
  }
}

export interface CommandStats {
  n: number;
  /** Summed time from the SDK call to its result (concurrent calls add up). */
  ms: number;
  /** Summed HTTP round trip (signed request out → response in; dynalite's time included). */
  httpMs: number;
  reqBytes: number;
  resBytes: number;
}

/** DynamoDB requests by command, from two middlewares on a client. */
export class DynamoStats {
  byCommand = new Map<string, CommandStats>();

  reset(): Map<string, CommandStats> {
    const m = this.byCommand;
    this.byCommand = new Map();
    return m;
  }

  private of(name: string): CommandStats {
    let c = this.byCommand.get(name);
    if (!c) {
      c = { n: 0, ms: 0, httpMs: 0, reqBytes: 0, resBytes: 0 };
      this.byCommand.set(name, c);
    }
    return c;
  }

  /** Adds the middlewares to `client`; returns a function that removes them. */
  attach(client: DynamoDBClient): () => void {
    const a = 'benchWidthCommandStats';
    const b = 'benchWidthHttpStats';
    const nameOf = (ctx: { commandName?: string }) => (ctx.commandName ?? '?').replace(/Command$/, '');
    client.middlewareStack.add(
      (next, ctx) => async (args) => {
        const c = this.of(nameOf(ctx as { commandName?: string }));
        c.n++;
        const t0 = performance.now();
        try {
          if (DDB_MS > 0) await sleep(DDB_MS);
          return await next(args);
        } finally {
          c.ms += performance.now() - t0;
        }
      },
      { step: 'initialize', name: a },
    );
    client.middlewareStack.add(
      (next, ctx) => async (args) => {
        const c = this.of(nameOf(ctx as { commandName?: string }));
        c.reqBytes += bodyBytes((args.request as { body?: unknown }).body);
        const t0 = performance.now();
        try {
          const out = await next(args);
          const len = (out.response as { headers?: Record<string, string> }).headers?.['content-length'];
          if (len !== undefined) c.resBytes += Number(len);
          return out;
        } finally {
          c.httpMs += performance.now() - t0;
        }
      },
      { step: 'deserialize', name: b },
    );
    return () => {
      client.middlewareStack.remove(a);
      client.middlewareStack.remove(b);
    };
  }
}

/** A request body's size: a string, or the SDK's byte adapters (Uint8Array-like). */
function bodyBytes(body: unknown): number {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body && typeof body === 'object') {
    const b = body as { byteLength?: unknown; length?: unknown };
    if (typeof b.byteLength === 'number') return b.byteLength;
    if (typeof b.length === 'number') return b.length;
  }
  return 0;
}

export const totalRequests = (m: ReadonlyMap<string, CommandStats>) =>
  [...m.values()].reduce((n, c) => n + c.n, 0);

/** Counts the calls of every method of `target` by name. */
function countCalls<T extends object>(target: T, counts: Map<string, number>): T {
  return new Proxy(target, {
    get: (t, key) => {
      const v = Reflect.get(t, key, t);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        counts.set(String(key), (counts.get(String(key)) ?? 0) + 1);
        // Ledger entries: one per `appendEntry`, or as many as a batched `appendEntries` carries.
        if (key === 'appendEntries' && Array.isArray(args[0]))
          counts.set('entries', (counts.get('entries') ?? 0) + args[0].length);
        return (v as (...a: unknown[]) => unknown).apply(t, args);
      };
    },
  });
}

/** Runs `fn` with process.stdout swallowed and counted (Powertools' Logger and Metrics write there). */
async function capturingStdout<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; bytes: number; writes: number }> {
  const out = process.stdout;
  const original = out.write;
  let bytes = 0;
  let writes = 0;
  out.write = ((chunk: string | Uint8Array) => {
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    writes++;
    return true;
  }) as typeof out.write;
  try {
    return { value: await fn(), bytes, writes };
  } finally {
    out.write = original;
  }
}

// ---------------------------------------------------------------------------------------------
// Batches

/** The flights lines of one batch: `wide` / `narrow` uniform over their codes, `zipf` skewed. */
function batchLines(shape: Shape, seed: number): string[] {
  const opts =
    shape === 'zipf' ? { airports: WIDE } : { airports: shape === 'wide' ? WIDE : NARROW, zipfS: 0 };
  return [...flightLines({ records: RECORDS, seed, ...opts })];
}

/** `"origin":"XXX"` sits at a fixed offset (bench/flights.ts). */
const originOf = (line: string) => line.slice(39, 42);
const distinctOrigins = (lines: readonly string[]) => new Set(lines.map(originOf)).size;

/** Sequence numbers are global and increasing: every batch is new to every ledger chain. */
let nextSeq = 0;
function eventText(lines: readonly string[]): string {
  const text = JSON.stringify(
    buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', kinesisRecords(lines, nextSeq)),
  );
  nextSeq += lines.length;
  return text;
}

interface Batch {
  readonly text: string;
  readonly tables: number;
}

function makeBatch(shape: Shape, seed: number): Batch {
  const lines = batchLines(shape, seed);
  return { text: eventText(lines), tables: distinctOrigins(lines) };
}

// ---------------------------------------------------------------------------------------------
// A warehouse with its counters

interface Sink {
  readonly p: BenchPipeline;
  readonly store: CountingStore;
  readonly ledgerCalls: Map<string, number>;
}

let dirCounter = 0;
async function newSink(dynamo: Dynamo, work: string, name: string, seed: number): Promise<Sink> {
  const dir = join(work, `width-${name}-${++dirCounter}`);
  await fs.mkdir(dir, { recursive: true });
  const store = new CountingStore();
  const p = pipeline(dynamo.client, dir, await createLedger(dynamo.client), {
    config: WIDTH_CONFIG,
    seed,
    store,
  });
  return { p, store, ledgerCalls: new Map() };
}

function depsOf(s: Sink, tables: TableCache): IngestDeps {
  const d = s.p.ingestDeps(tables);
  return {
    ...d,
    ledger: countCalls(d.ledger, s.ledgerCalls),
    ...(CONCURRENCY === undefined ? {} : { concurrency: CONCURRENCY }),
  };
}

/** A table cache that does not refresh during the bench (the steady state of a warm Lambda). */
const steadyCache = (s: Sink) => new TableCache(s.p.catalog, systemClock, { refreshMs: 3_600_000 });

// ---------------------------------------------------------------------------------------------
// One timed invocation

interface Sample {
  readonly variant: Variant;
  /** The Lambda runtime's JSON.parse of the event text (not part of the handler). */
  readonly jsonMs: number;
  /** parseKinesisEvent (NaN for handler-*). */
  readonly decodeMs: number;
  /** ingestBatch (NaN for handler-*). */
  readonly ingestMs: number;
  /** What the target is about: parseKinesisEvent + ingestBatch (handler-*: the whole handler). */
  readonly handlerMs: number;
  /** Wall time with at least one ledger call in flight. */
  readonly ledgerMs: number;
  readonly dynamo: Map<string, CommandStats>;
  readonly store: StoreCounts;
  readonly ledgerCalls: Map<string, number>;
  readonly tables: number;
  readonly dataFiles: number;
  readonly pendingFiles: number;
  readonly cacheLoads: number;
  readonly stdoutBytes: number;
  readonly stdoutWrites: number;
}

/** Profile windows only for the timed runs (not the setup and warm-up batches). */
let timing = false;
const windowed = <T>(name: string, fn: () => Promise<T>): Promise<T> =>
  timing ? profiled(`width-${name}`, fn) : fn();

async function timedIngest(
  variant: Variant,
  s: Sink,
  tables: TableCache,
  batch: Batch,
  dstats: DynamoStats,
  handler?: IngestHandler,
): Promise<Sample> {
  const path = variant.startsWith('first') ? 'pending' : 'columnar';
  s.store.reset();
  s.ledgerCalls.clear();
  dstats.reset();
  s.p.dynamoTime.reset();
  const loads0 = tables.loads;
  const t0 = performance.now();
  const event: unknown = JSON.parse(batch.text);
  const t1 = performance.now();
  let t2 = Number.NaN;
  let result: IngestResult | undefined;
  let stdout = { bytes: 0, writes: 0 };
  if (handler) {
    const h = await windowed(variant, () => capturingStdout(() => handler(event)));
    if (h.value.batchItemFailures.length > 0) throw new Error(`${variant}: batch item failures`);
    stdout = h;
  } else {
    result = await windowed(variant, async () => {
      const b = parseKinesisEvent(event);
      t2 = performance.now();
      return ingestBatch(depsOf(s, tables), b);
    });
  }
  const t3 = performance.now();
  const store = s.store.reset();
  if (result) expectIngest(result, path, variant, batch.tables);
  const dataFiles = result
    ? result.tables.reduce((n, t) => n + t.dataFiles, 0)
    : (store.byKind.data?.puts ?? 0);
  const expectedFiles = defers(batch.tables) ? 0 : batch.tables;
  if (!result && dataFiles !== expectedFiles)
    throw new Error(
      `${variant}: ${dataFiles} data files, expected ${expectedFiles} (${batch.tables} tables)`,
    );
  return {
    variant,
    jsonMs: t1 - t0,
    decodeMs: t2 - t1,
    ingestMs: t3 - t2,
    handlerMs: t3 - t1,
    ledgerMs: s.p.dynamoTime.wallMs,
    dynamo: dstats.reset(),
    store,
    ledgerCalls: new Map(s.ledgerCalls),
    tables: result ? result.tables.length : batch.tables,
    dataFiles,
    pendingFiles: store.byKind.pending?.puts ?? 0,
    cacheLoads: tables.loads - loads0,
    stdoutBytes: stdout.bytes,
    stdoutWrites: stdout.writes,
  };
}

function expectIngest(r: IngestResult, path: 'columnar' | 'pending', what: string, tables: number): void {
  const failed = r.failures.map((f) => `${f.table}: ${String(f.error)}`);
  if (failed.length > 0) throw new Error(`${what}: ingest failures: ${failed.join('; ')}`);
  if (defers(tables)) {
    // Deferred: one object and one ledger entry, the committer routes it.
    if (r.deferred !== RECORDS || r.tables.length > 0)
      throw new Error(
        `${what}: expected ${RECORDS} records deferred, got ${r.deferred} and ${r.tables.length} tables`,
      );
    return;
  }
  if (r.deferred !== undefined) throw new Error(`${what}: ${r.deferred} records deferred, expected none`);
  const wrong = r.tables.filter((t) => t.path !== path).map((t) => `${t.table}=${t.path}`);
  if (wrong.length > 0)
    throw new Error(`${what}: expected every table on the ${path} path, got ${wrong.slice(0, 5).join(', ')}`);
  const n = r.tables.reduce((a, t) => a + t.rows + t.pending, 0);
  if (n !== RECORDS) throw new Error(`${what}: staged ${n} records, expected ${RECORDS}`);
  if (r.tables.length !== tables) throw new Error(`${what}: ${r.tables.length} tables, expected ${tables}`);
}

function expectCommitted(rs: readonly TableCommitResult[], tables: number, what: string): void {
  const bad = rs.filter((r) => r.status !== 'committed');
  if (bad.length > 0 || rs.length !== tables) {
    throw new Error(
      `${what}: ${rs.length} tables (expected ${tables}), not committed: ${bad
        .slice(0, 5)
        .map((b) => `${b.table}=${b.status} ${String(b.error ?? '')}`)
        .join('; ')}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// The committer in a child process

export interface CommitChildReport {
  readonly baselineRssMiB: number;
  readonly maxRssMiB: number;
  readonly sampledRssMiB: number;
  readonly peakHeapUsedMiB: number;
  readonly peakExternalMiB: number;
  /** Heap used before the run and after it plus a full GC (NaN without --expose-gc). */
  readonly baselineHeapMiB: number;
  readonly retainedHeapMiB: number;
  readonly seconds: number;
  readonly tables: number;
  readonly entries: number;
  readonly dataFiles: number;
  readonly requests: number;
  readonly byCommand: Record<string, number>;
  readonly puts: number;
  readonly putBytes: number;
  readonly gets: number;
}

async function childCommit(
  dynamo: Dynamo,
  s: Sink,
  tables: number,
  label: string,
): Promise<CommitChildReport> {
  const script = fileURLToPath(new URL('./ingest-width-commit.ts', import.meta.url));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BENCH_CHILD_ENDPOINT: dynamo.endpoint,
    BENCH_CHILD_LEDGER: s.p.ledgerTable,
    BENCH_CHILD_DIR: s.p.dir,
    BENCH_CHILD_TABLES: String(tables),
    // Deferred batches are routed together: one entry per table for all of them.
    BENCH_CHILD_ENTRIES: String(defers(tables) ? 1 : COMMIT_BATCHES),
  };
  delete env.BENCH_PROFILE_WINDOWS;
  const args = ['--expose-gc', '--import', 'tsx'];
  if (COMMIT_PROF) {
    await fs.mkdir(COMMIT_PROF, { recursive: true });
    args.push('--cpu-prof', `--cpu-prof-dir=${COMMIT_PROF}`, `--cpu-prof-name=commit-${label}.cpuprofile`);
    env.BENCH_PROFILE_WINDOWS = join(COMMIT_PROF, `commit-${label}.windows.json`);
  }
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [...args, script], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(buf) : reject(new Error(`commit child exited ${code}`)),
    );
  });
  return JSON.parse(out.trim().split('\n').pop()!) as CommitChildReport;
}

// ---------------------------------------------------------------------------------------------
// Reporting

const KiB = (b: number) => `${(b / 1024).toFixed(b < 10240 ? 1 : 0)} KiB`;
const msf = (x: number) => (Number.isNaN(x) ? '–' : `${x.toFixed(x < 10 ? 1 : 0)} ms`);

function medianOf(samples: readonly Sample[], f: (s: Sample) => number): number {
  return median(samples.map(f));
}

function commandLine(samples: readonly Sample[]): string {
  const names = [...new Set(samples.flatMap((s) => [...s.dynamo.keys()]))].sort();
  return names
    .map((name) => {
      const st = (f: (c: CommandStats) => number) => medianOf(samples, (s) => f(s.dynamo.get(name) ?? zero));
      const n = st((c) => c.n);
      const per = (f: (c: CommandStats) => number) =>
        medianOf(samples, (s) => {
          const c = s.dynamo.get(name);
          return c && c.n > 0 ? f(c) / c.n : 0;
        });
      return (
        `${name} ${fmtInt(n)} (${per((c) => c.ms).toFixed(1)} ms each, http ${per((c) => c.httpMs).toFixed(1)} ms; ` +
        `req ${KiB(per((c) => c.reqBytes))}, resp ${KiB(per((c) => c.resBytes))} each)`
      );
    })
    .join('; ');
}
const zero: CommandStats = { n: 0, ms: 0, httpMs: 0, reqBytes: 0, resBytes: 0 };

function storeLine(samples: readonly Sample[]): string {
  const kinds = [...new Set(samples.flatMap((s) => Object.keys(s.store.byKind)))].sort();
  const parts = kinds.map((k) => {
    const puts = medianOf(samples, (s) => s.store.byKind[k]?.puts ?? 0);
    const bytes = medianOf(samples, (s) => s.store.byKind[k]?.bytes ?? 0);
    return `${k} ${fmtInt(puts)} (${KiB(bytes)})`;
  });
  const gets = medianOf(samples, (s) => s.store.gets);
  return `${parts.join(', ')}${gets > 0 ? `; gets ${fmtInt(gets)} (${KiB(medianOf(samples, (s) => s.store.getBytes))})` : ''}`;
}

interface VariantStats {
  readonly med: number;
  readonly p90: number;
  readonly requests: number;
  readonly puts: number;
  readonly putBytes: number;
  readonly dataFiles: number;
  readonly entries: number;
  readonly stdoutBytes: number;
}

function statsOf(samples: readonly Sample[]): VariantStats {
  return {
    med: medianOf(samples, (s) => s.handlerMs),
    p90: quantile(
      samples.map((s) => s.handlerMs),
      0.9,
    ),
    requests: medianOf(samples, (s) => totalRequests(s.dynamo)),
    puts: medianOf(samples, (s) => s.store.puts),
    putBytes: medianOf(samples, (s) => s.store.putBytes),
    dataFiles: medianOf(samples, (s) => s.dataFiles),
    entries: medianOf(
      samples,
      (s) => (s.ledgerCalls.get('appendEntry') ?? 0) + (s.ledgerCalls.get('entries') ?? 0),
    ),
    stdoutBytes: medianOf(samples, (s) => s.stdoutBytes),
  };
}

function printVariant(v: Variant, samples: readonly Sample[]): void {
  const st = statsOf(samples);
  const tables = medianOf(samples, (s) => s.tables);
  const calls = [...new Set(samples.flatMap((s) => [...s.ledgerCalls.keys()]))]
    .filter((k) => k !== 'entries')
    .sort()
    .map((k) => `${k} ${fmtInt(medianOf(samples, (s) => s.ledgerCalls.get(k) ?? 0))}`)
    .join(', ');
  console.log(
    `${v.padEnd(14)} ${fmtInt(tables).padStart(3)} tables: handler ${msf(st.med)} (p90 ${msf(st.p90)}; ` +
      `parseKinesisEvent ${msf(medianOf(samples, (s) => s.decodeMs))}, ingestBatch ${msf(medianOf(samples, (s) => s.ingestMs))}, ` +
      `ledger in flight ${msf(medianOf(samples, (s) => s.ledgerMs))}; runtime JSON.parse ${msf(medianOf(samples, (s) => s.jsonMs))})`,
  );
  console.log(
    `${''.padEnd(14)}  per batch: ${fmtInt(st.requests)} DynamoDB requests, ${fmtInt(st.puts)} puts (${KiB(st.putBytes)}), ` +
      `${fmtInt(st.dataFiles)} data files, ${fmtInt(medianOf(samples, (s) => s.pendingFiles))} pending fragments, ` +
      `${fmtInt(st.entries)} ledger entries, ${fmtInt(medianOf(samples, (s) => s.cacheLoads))} table loads` +
      (st.stdoutBytes > 0
        ? `, stdout ${KiB(st.stdoutBytes)} in ${fmtInt(medianOf(samples, (s) => s.stdoutWrites))} writes`
        : ''),
  );
  console.log(`${''.padEnd(14)}  DynamoDB: ${commandLine(samples)}`);
  console.log(`${''.padEnd(14)}  ledger calls: ${calls}; object store: ${storeLine(samples)}`);
}

// ---------------------------------------------------------------------------------------------
// The benchmark

export async function benchIngestWidth(dynamo: Dynamo, work: string): Promise<SummaryRow[]> {
  if (WIDE > FLIGHT_AIRPORT_COUNT) throw new Error(`BENCH_IW_TABLES must be ≤ ${FLIGHT_AIRPORT_COUNT}`);
  const variants = chosenVariants();
  console.log(
    `\n## Ingest at width: one ${fmtInt(RECORDS)}-record Kinesis batch over ${WIDE} vs ${NARROW} tables ` +
      `(flights, unpartitioned), ${RUNS} alternating runs of ${variants.join(', ')}` +
      (CONCURRENCY === undefined ? '' : `; ingest concurrency ${CONCURRENCY}`) +
      (DDB_MS + STORE_MS > 0
        ? `; simulated waits: ${DDB_MS} ms per DynamoDB request, ${STORE_MS} ms per put/get`
        : ''),
  );
  const dstats = new DynamoStats();
  const detach = dstats.attach(dynamo.client);
  try {
    return await run(dynamo, work, variants, dstats);
  } finally {
    detach();
  }
}

async function run(
  dynamo: Dynamo,
  work: string,
  variants: Variant[],
  dstats: DynamoStats,
): Promise<SummaryRow[]> {
  const t0 = performance.now();
  let seed = SEED * 1000;
  // The two warehouses the steady variants run on: `wide` + `zipf` share the 200 tables.
  const wide = await newSink(dynamo, work, 'wide', 11);
  const narrow = await newSink(dynamo, work, 'narrow', 12);
  const setup = async (s: Sink, shape: Shape, count: number) => {
    const c0 = performance.now();
    const first = makeBatch(shape, ++seed);
    if (first.tables !== count)
      throw new Error(`first ${shape} batch has ${first.tables} tables, expected ${count}`);
    await timedIngest(
      `first-${shape === 'narrow' ? 'narrow' : 'wide'}`,
      s,
      s.p.newTableCache(),
      first,
      dstats,
    );
    expectCommitted((await runCommitter(s.p.committerDeps())).tables, count, `create ${shape}`);
    const created = performance.now() - c0;
    // Staged batches for the committer measurement (and the JIT's warm-up).
    const tables = steadyCache(s);
    for (let b = 0; b < COMMIT_BATCHES; b++)
      await timedIngest(shape, s, tables, makeBatch(shape, ++seed), dstats);
    return { tables, created };
  };
  const w = await setup(wide, 'wide', WIDE);
  const n = await setup(narrow, 'narrow', NARROW);
  console.log(
    `setup: created ${WIDE} tables in ${(w.created / 1000).toFixed(1)} s and ${NARROW} in ${(n.created / 1000).toFixed(1)} s ` +
      `(first batch + committer), then staged ${COMMIT_BATCHES} batches on each`,
  );

  // The committer, in a fresh process each, on what the staged batches left.
  let commitWide: CommitChildReport | undefined;
  let commitNarrow: CommitChildReport | undefined;
  if (COMMIT) {
    commitNarrow = await childCommit(dynamo, narrow, NARROW, 'narrow');
    commitWide = await childCommit(dynamo, wide, WIDE, 'wide');
    for (const [name, c] of [
      [`${NARROW} tables`, commitNarrow],
      [`${WIDE} tables`, commitWide],
    ] as const) {
      console.log(
        `committer (child process), ${name} after ${COMMIT_BATCHES} batches: ${c.seconds.toFixed(2)} s, ` +
          `${fmtInt(c.dataFiles)} data files; max RSS ${c.maxRssMiB} MiB (before the run ${c.baselineRssMiB} MiB), ` +
          `peak heap ${c.peakHeapUsedMiB} MiB (${c.baselineHeapMiB} before, ${c.retainedHeapMiB} after the run and a full GC), ` +
          `peak external ${c.peakExternalMiB} MiB; ${fmtInt(c.requests)} DynamoDB requests ` +
          `(${Object.entries(c.byCommand)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}), ${fmtInt(c.puts)} puts (${KiB(c.putBytes)}), ${fmtInt(c.gets)} gets`,
      );
    }
  }

  // Warm-up of every steady shape (the committer has moved the tables on: the cache is stale, as
  // a warm Lambda's is while the committer runs).
  for (let k = 0; k < WARMUP; k++) {
    await timedIngest('wide', wide, w.tables, makeBatch('wide', ++seed), dstats);
    await timedIngest('zipf', wide, w.tables, makeBatch('zipf', ++seed), dstats);
    await timedIngest('narrow', narrow, n.tables, makeBatch('narrow', ++seed), dstats);
  }
  const handlers = {
    wide: makeIngestHandler(() => ({
      ingestDeps: () => depsOf(wide, w.tables),
      committerDeps: () => wide.p.committerDeps(),
    })),
    narrow: makeIngestHandler(() => ({
      ingestDeps: () => depsOf(narrow, n.tables),
      committerDeps: () => narrow.p.committerDeps(),
    })),
  };
  // One untimed handler call each (Powertools' first-call work).
  if (variants.includes('handler-wide'))
    await capturingStdout(() => handlers.wide(JSON.parse(makeBatch('wide', ++seed).text)));
  if (variants.includes('handler-narrow'))
    await capturingStdout(() => handlers.narrow(JSON.parse(makeBatch('narrow', ++seed).text)));

  // Plan: the variants rotate from run to run; batches are built in execution order (sequence
  // numbers increase along each chain) before any timing. first-* reuse their run's steady batch
  // when there is one (a new ledger: any sequence numbers are new to it).
  const plan: { run: number; variant: Variant; batch: Batch }[] = [];
  for (let r = 0; r < RUNS; r++) {
    const order = variants.map((_, i) => variants[(i + r) % variants.length]!);
    const own = new Map<Shape, Batch>();
    for (const v of order) {
      const shape = shapeOf(v);
      const reuse = v.startsWith('first') ? own.get(shape) : undefined;
      const batch = reuse ?? makeBatch(shape, ++seed);
      if (v === 'wide' || v === 'narrow') own.set(shape, batch);
      plan.push({ run: r + 1, variant: v, batch });
    }
  }
  const eventBytes = { wide: 0, narrow: 0 };
  for (const x of plan) eventBytes[shapeOf(x.variant) === 'narrow' ? 'narrow' : 'wide'] = x.batch.text.length;
  console.log(
    `event JSON: ${(eventBytes.wide / 1048576).toFixed(2)} MiB (wide), ${(eventBytes.narrow / 1048576).toFixed(2)} MiB (narrow); ` +
      `setup and warm-up ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  const samples = new Map<Variant, Sample[]>(variants.map((v) => [v, []]));
  timing = true;
  let lastRun = 0;
  let line: string[] = [];
  const flush = () => {
    if (line.length > 0) console.log(`run ${lastRun}: ${line.join(', ')}`);
    line = [];
  };
  for (const { run, variant, batch } of plan) {
    if (run !== lastRun) {
      flush();
      lastRun = run;
    }
    let s: Sample;
    switch (variant) {
      case 'wide':
      case 'zipf':
        s = await timedIngest(variant, wide, w.tables, batch, dstats);
        break;
      case 'narrow':
        s = await timedIngest(variant, narrow, n.tables, batch, dstats);
        break;
      case 'cold-wide':
        s = await timedIngest(variant, wide, wide.p.newTableCache(), batch, dstats);
        break;
      case 'cold-narrow':
        s = await timedIngest(variant, narrow, narrow.p.newTableCache(), batch, dstats);
        break;
      case 'handler-wide':
        s = await timedIngest(variant, wide, w.tables, batch, dstats, handlers.wide);
        break;
      case 'handler-narrow':
        s = await timedIngest(variant, narrow, n.tables, batch, dstats, handlers.narrow);
        break;
      case 'first-wide':
      case 'first-narrow': {
        const q = await newSink(dynamo, work, variant, 1000 + run);
        s = await timedIngest(variant, q, q.p.newTableCache(), batch, dstats);
        await fs.rm(q.p.dir, { recursive: true, force: true });
        break;
      }
    }
    samples.get(variant)!.push(s);
    line.push(`${variant} ${msf(s.handlerMs)}`);
  }
  flush();
  timing = false;

  console.log(`\nmedians per variant (per batch: medians of the counts):`);
  for (const v of variants) printVariant(v, samples.get(v)!);
  console.log(`bench time ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return summary(samples, commitWide, commitNarrow);
}

function summary(
  samples: ReadonlyMap<Variant, Sample[]>,
  commitWide: CommitChildReport | undefined,
  commitNarrow: CommitChildReport | undefined,
): SummaryRow[] {
  const rows: SummaryRow[] = [];
  const st = (v: Variant) => {
    const s = samples.get(v);
    return s && s.length > 0 ? statsOf(s) : undefined;
  };
  const time = (x: VariantStats) => `${msf(x.med)} (p90 ${msf(x.p90)})`;
  const counts = (x: VariantStats) =>
    `${fmtInt(x.requests)} DynamoDB req, ${fmtInt(x.puts)} puts (${KiB(x.putBytes)}), ${fmtInt(x.dataFiles)} data files, ${fmtInt(x.entries)} entries`;
  const pair = (wideV: Variant, narrowV: Variant, label: string, target: boolean) => {
    const a = st(wideV);
    const b = st(narrowV);
    if (a) rows.push({ measure: `${label}, ${WIDE} tables`, value: time(a), target: '' });
    if (a) rows.push({ measure: '  per batch', value: counts(a), target: '' });
    if (b) rows.push({ measure: `${label}, ${NARROW} tables`, value: time(b), target: '' });
    if (b) rows.push({ measure: '  per batch', value: counts(b), target: '' });
    if (a && b) {
      const ratio = a.med / b.med;
      rows.push(
        target
          ? {
              measure: `${label}: ${WIDE} / ${NARROW} tables`,
              value: ratio.toFixed(2),
              target: '≤ 2.0',
              pass: ratio <= 2,
            }
          : { measure: `${label}: ${WIDE} / ${NARROW} tables`, value: ratio.toFixed(2), target: '(info)' },
      );
    }
  };
  const recs = fmtInt(RECORDS);
  pair('wide', 'narrow', `ingest handler, ${recs} records, tables exist`, true);
  const z = st('zipf');
  const nn = st('narrow');
  if (z) {
    rows.push({ measure: `  same, ${WIDE} tables Zipf-skewed`, value: time(z), target: '' });
    rows.push({ measure: '  per batch', value: counts(z), target: '' });
    if (nn)
      rows.push({
        measure: `  Zipf ${WIDE} / ${NARROW} tables`,
        value: (z.med / nn.med).toFixed(2),
        target: '(info)',
      });
  }
  pair('first-wide', 'first-narrow', 'first sight (pending fragments)', false);
  pair('cold-wide', 'cold-narrow', 'empty table cache (new Lambda / refresh)', false);
  pair('handler-wide', 'handler-narrow', 'whole Lambda handler (+ log line, EMF)', false);
  const hw = st('handler-wide');
  const hn = st('handler-narrow');
  if (hw && hn)
    rows.push({
      measure: '  stdout per invocation (log + EMF)',
      value: `${KiB(hw.stdoutBytes)} (${WIDE} tables), ${KiB(hn.stdoutBytes)} (${NARROW})`,
      target: '',
    });
  if (commitWide && commitNarrow) {
    const c = (x: CommitChildReport, t: number) =>
      `${x.seconds.toFixed(2)} s (${((1000 * x.seconds) / t).toFixed(0)} ms/table), max RSS ${x.maxRssMiB} MiB, peak heap ${x.peakHeapUsedMiB} MiB`;
    rows.push({
      measure: `committer (child), ${WIDE} tables after ${COMMIT_BATCHES} batches (deferred ones routed first)`,
      value: c(commitWide, WIDE),
      target: '',
    });
    rows.push({
      measure: `committer (child), ${NARROW} tables after ${COMMIT_BATCHES} batches`,
      value: c(commitNarrow, NARROW),
      target: '',
    });
    const d = WIDE - NARROW;
    const rss = ((commitWide.maxRssMiB - commitNarrow.maxRssMiB) * 1024) / d;
    const heap = ((commitWide.peakHeapUsedMiB - commitNarrow.peakHeapUsedMiB) * 1024) / d;
    const kept =
      ((commitWide.retainedHeapMiB -
        commitWide.baselineHeapMiB -
        (commitNarrow.retainedHeapMiB - commitNarrow.baselineHeapMiB)) *
        1024) /
      d;
    rows.push({
      measure: 'committer memory per table (peak RSS Δ / Δ tables)',
      value: `${rss.toFixed(0)} KiB (peak heap Δ: ${heap.toFixed(0)} KiB; retained after GC Δ: ${kept.toFixed(0)} KiB)`,
      target: '(info)',
    });
  }
  return rows;
}
