/**
 * Commits at scale with AWS-like latencies (issue 19): the committer handler commits every table
 * with staged work once, for 100, 1,000 and 10,000 tables, fanned out over slices as a deployed
 * committer does (lambdas/src/handlers/committer.ts), with every DynamoDB request, object-store
 * read and write and catalog call held for an in-region round trip.
 *
 * Latency is injected behind the ports: a DynamoDB client middleware (per request), an object
 * store that waits before each call, and a catalog decorator that waits for each load, commit
 * and create. The figures (bench/README.md, "Commits at scale", with sources):
 *
 *   BENCH_CS_DDB_MS (5)            DynamoDB request ("single-digit millisecond")
 *   BENCH_CS_S3_GET_MS (20)        S3 GET of a small object (median "tens of milliseconds")
 *   BENCH_CS_S3_PUT_MS (30)        S3 PUT, LIST, HEAD, DELETE likewise
 *   BENCH_CS_CATALOG_LOAD_MS (50)  Glue GetTable / S3 Tables GetTableMetadataLocation
 *   BENCH_CS_CATALOG_COMMIT_MS (100)  Glue UpdateTable / S3 Tables UpdateTableMetadataLocation
 *
 * The file catalog also writes its pointer file through the store, so a commit waits for one
 * PUT more than on Glue: pessimistic by ~30 ms per commit.
 *
 * Slices are separate Lambda invocations on separate machines. This machine has 2 cores, so the
 * slices are not run side by side here (they would share 2 cores the way 10 Lambdas do not):
 * the scheduled run is timed with its own slice, then every slice it dispatched is timed alone,
 * one after another, each with the commit concurrency a deployed slice has. The fan-out's wall time
 * is the scheduled run's listing and dispatch plus the slowest slice (all start together), and is
 * reported beside the measured sum. Setup (creating the tables, staging one data file per table)
 * runs without latency and is not timed.
 *
 * Knobs (default: what a deployed committer has): BENCH_CS_TABLES (100,1000,10000),
 * BENCH_CS_PER_SLICE (250), BENCH_CS_MAX_SLICES (20), BENCH_CS_CONCURRENCY (8), BENCH_CS_INVOKE_MS
 * (20), BENCH_CS_SINGLE (1: also one invocation without fan-out, for tables ≤ 1,000),
 * BENCH_CS_DISPATCH=fail (every dispatch refused: the scheduled run commits every slice, with the
 * commits at once the slices would have had).
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LocalObjectStore } from '../lambdas/src/adapters/local/local-object-store.ts';
import { DEFAULT_MAX_SLICES, DEFAULT_TABLES_PER_SLICE } from '../lambdas/src/app/commit-slices.ts';
import { runCommitter } from '../lambdas/src/app/committer.ts';
import { ingestBatch } from '../lambdas/src/app/ingest.ts';
import { type CommitterSummary, makeCommitterHandler } from '../lambdas/src/handlers/committer.ts';
import { DEFAULT_COMMIT_CONCURRENCY } from '../lambdas/src/handlers/env.ts';
import type { HandlerRuntime, MetricsSink } from '../lambdas/src/handlers/runtime.ts';
import type { Catalog } from '../lambdas/src/ports/catalog.ts';
import type { CommitFanout, SliceTask } from '../lambdas/src/ports/commit-fanout.ts';
import { envInt, fmtInt, type SummaryRow } from './common.ts';
import { type BenchPipeline, createLedger, type Dynamo, kinesisRecords, pipeline } from './wiring.ts';

const envMs = (name: string, dflt: number) => {
  const v = process.env[name];
  return v === undefined || v === '' ? dflt : Math.max(0, Number(v));
};
export const LATENCY = {
  ddbMs: envMs('BENCH_CS_DDB_MS', 5),
  s3GetMs: envMs('BENCH_CS_S3_GET_MS', 20),
  s3PutMs: envMs('BENCH_CS_S3_PUT_MS', 30),
  catalogLoadMs: envMs('BENCH_CS_CATALOG_LOAD_MS', 50),
  catalogCommitMs: envMs('BENCH_CS_CATALOG_COMMIT_MS', 100),
};
const SIZES = (process.env.BENCH_CS_TABLES ?? '100,1000,10000')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n) && n > 0);
// The deployed defaults unless told otherwise.
const PER_SLICE = envInt('BENCH_CS_PER_SLICE', DEFAULT_TABLES_PER_SLICE);
const CONCURRENCY = envInt('BENCH_CS_CONCURRENCY', DEFAULT_COMMIT_CONCURRENCY);
const SINGLE = process.env.BENCH_CS_SINGLE === '1';
const MAX_SLICES = envInt('BENCH_CS_MAX_SLICES', DEFAULT_MAX_SLICES);
/** `fail`: every dispatch is refused, so the scheduled run commits every slice itself. */
const DISPATCH_FAILS = process.env.BENCH_CS_DISPATCH === 'fail';
const TARGET_S = 60;
/** An asynchronous Invoke's round trip (the request is queued, not run, before it answers). */
const INVOKE_MS = envMs('BENCH_CS_INVOKE_MS', 20);

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());

/** Latency on or off (setup runs without it), and what was sent while it was on. */
const wire = { on: false, ddb: 0, gets: 0, puts: 0, loads: 0, commits: 0 };
const resetCounts = () => Object.assign(wire, { ddb: 0, gets: 0, puts: 0, loads: 0, commits: 0 });

/** The local store, waiting an S3 round trip before every call while latency is on. */
class LatencyStore extends LocalObjectStore {
  private async wait(kind: 'get' | 'put'): Promise<void> {
    if (!wire.on) return;
    if (kind === 'get') wire.gets++;
    else wire.puts++;
    await sleep(kind === 'get' ? LATENCY.s3GetMs : LATENCY.s3PutMs);
  }
  override async get(uri: string) {
    await this.wait('get');
    return super.get(uri);
  }
  override async put(uri: string, bytes: Uint8Array | string) {
    await this.wait('put');
    return super.put(uri, bytes);
  }
  override async putIfAbsent(uri: string, bytes: Uint8Array | string) {
    await this.wait('put');
    return super.putIfAbsent(uri, bytes);
  }
  override async exists(uri: string) {
    await this.wait('get');
    return super.exists(uri);
  }
  override async delete(uri: string) {
    await this.wait('put');
    return super.delete(uri);
  }
  override async list(prefix: string) {
    await this.wait('get');
    return super.list(prefix);
  }
}

/** The catalog, waiting a Glue / S3 Tables round trip per load, commit and create. */
function latencyCatalog(inner: Catalog): Catalog {
  const load = new Set(['loadTable', 'tableExists', 'listTables', 'listNamespaces']);
  const commit = new Set(['commitTable', 'createTable', 'createNamespace']);
  return new Proxy(inner, {
    get: (t, key) => {
      const v = Reflect.get(t, key, t);
      if (typeof v !== 'function') return v;
      const name = String(key);
      if (!load.has(name) && !commit.has(name)) return v.bind(t);
      return async (...args: unknown[]) => {
        if (wire.on) {
          if (load.has(name)) wire.loads++;
          else wire.commits++;
          await sleep(load.has(name) ? LATENCY.catalogLoadMs : LATENCY.catalogCommitMs);
        }
        return v.apply(t, args);
      };
    },
  });
}

function attachDynamoLatency(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      if (wire.on) {
        wire.ddb++;
        await sleep(LATENCY.ddbMs);
      }
      return next(args);
    },
    { step: 'initialize', name: 'benchCommitScaleLatency' },
  );
}

const silentMetrics: MetricsSink = {
  addDimension: () => undefined,
  addMetric: () => undefined,
  publishStoredMetrics: () => undefined,
};

// ---------------------------------------------------------------------------------------------

interface Staged {
  readonly p: BenchPipeline;
  readonly catalog: Catalog;
  readonly tables: number;
}

/** `tables` tables created, each with one staged data file (`rows` rows), latency off. */
async function stage(dynamo: Dynamo, work: string, tables: number, rows: number): Promise<Staged> {
  const dir = join(work, `scale-${tables}`);
  await fs.mkdir(dir, { recursive: true });
  const p = pipeline(dynamo.client, dir, await createLedger(dynamo.client), {
    config: { routing: { template: 'scale_{tenant}' }, partitioning: { candidates: [] } },
    store: new LatencyStore(),
  });
  const catalog = latencyCatalog(p.catalog);
  let seq = 0;
  const batch = async (label: string) => {
    const cache = p.newTableCache();
    // Kinesis batches hold at most 10,000 records; one shard, consecutive sequence numbers.
    const per = 10_000;
    for (let from = 0; from < tables * rows; from += per) {
      const lines: string[] = [];
      for (let i = from; i < Math.min(tables * rows, from + per); i++) {
        const t = i % tables;
        lines.push(
          `{"tenant":"t${String(t).padStart(5, '0')}","id":${i},"amount":${(i * 7) % 1000},"at":"2026-12-02T10:00:00Z"}`,
        );
      }
      const r = await ingestBatch(p.ingestDeps(cache), {
        shardId: 'shardId-000000000000',
        streamArn: 'arn:aws:kinesis:us-east-1:000000000000:stream/floe-bench',
        records: kinesisRecords(lines, seq),
      });
      seq += lines.length;
      if (r.failures.length > 0) throw new Error(`${label}: ${r.failures.length} tables failed to stage`);
    }
  };
  await batch('first sight');
  // Create every table (one commit each), without latency, many at once.
  const created = await runCommitter(p.committerDeps(), { concurrency: 32 });
  const notCommitted = created.tables.filter((t) => t.status !== 'committed');
  if (created.tables.length !== tables || notCommitted.length > 0)
    throw new Error(
      `create: ${created.tables.length} of ${tables} tables, ${notCommitted.length} not committed`,
    );
  await batch('stage');
  return { p, catalog, tables };
}

interface Measured {
  readonly wallS: number;
  readonly coordinatorS: number;
  readonly slowestSliceS: number;
  readonly sumS: number;
  readonly slices: number;
  readonly committed: number;
  readonly cpuMsPerTable: number;
  readonly perTable: { ddb: number; gets: number; puts: number; loads: number; commits: number };
}

/** One schedule tick of the committer handler with fan-out; the slices timed one by one. */
async function tick(s: Staged, maxSlices: number): Promise<Measured> {
  const tasks: SliceTask[] = [];
  let t0 = 0;
  let dispatchedS = 0;
  const fanout: CommitFanout = {
    dispatch: async (task) => {
      if (wire.on) await sleep(INVOKE_MS);
      // An account or emulator where the invocation is refused: the scheduled run takes the slice.
      if (DISPATCH_FAILS) throw new Error('bench: Invoke refused (BENCH_CS_DISPATCH=fail)');
      tasks.push(task);
      dispatchedS = (performance.now() - t0) / 1000;
    },
  };
  const runtime: HandlerRuntime = {
    ingestDeps: () => s.p.ingestDeps(s.p.newTableCache()),
    committerDeps: (owner) => ({ ...s.p.committerDeps(), catalog: s.catalog, owner }),
    commitConcurrency: CONCURRENCY,
    commitSchedule: { tablesPerSlice: PER_SLICE, maxSlices },
    fanout,
  };
  const handler = makeCommitterHandler(() => runtime, {
    logger: new Logger({ serviceName: 'bench', logLevel: 'SILENT' }),
    metrics: silentMetrics,
  });
  const context = (id: string) => ({ awsRequestId: id, getRemainingTimeInMillis: () => 900_000 });
  resetCounts();
  const cpu0 = process.cpuUsage();
  wire.on = true;
  const summaries: CommitterSummary[] = [];
  let coordinatorS = 0;
  let slowest = 0;
  let sum = 0;
  try {
    t0 = performance.now();
    summaries.push(await handler({ 'detail-type': 'Scheduled Event' }, context('tick')));
    coordinatorS = (performance.now() - t0) / 1000;
    sum += coordinatorS;
    for (const task of tasks) {
      const t1 = performance.now();
      summaries.push(
        await handler({ floeCommitSlice: { ...task, untilMs: Date.now() } }, context(`slice-${task.index}`)),
      );
      const took = (performance.now() - t1) / 1000;
      slowest = Math.max(slowest, took);
      sum += took;
    }
  } finally {
    wire.on = false;
  }
  const cpu = process.cpuUsage(cpu0);
  const committed = summaries.reduce((n, x) => n + x.committed.length, 0);
  const failed = summaries.flatMap((x) => x.failed);
  if (committed !== s.tables || failed.length > 0)
    throw new Error(`tick: ${committed} of ${s.tables} tables committed, ${failed.length} failed`);
  const per = (n: number) => n / committed;
  // The slices start once dispatched (all within the first moments of the tick): the tick lasts
  // until the scheduled run's own slice or the slowest other slice ends.
  return {
    wallS: Math.max(coordinatorS, dispatchedS + slowest),
    coordinatorS,
    slowestSliceS: slowest,
    sumS: sum,
    slices: summaries[0]!.slices,
    committed,
    cpuMsPerTable: (cpu.user + cpu.system) / 1000 / committed,
    perTable: {
      ddb: per(wire.ddb),
      gets: per(wire.gets),
      puts: per(wire.puts),
      loads: per(wire.loads),
      commits: per(wire.commits),
    },
  };
}

export async function benchCommitScale(dynamo: Dynamo, work: string): Promise<SummaryRow[]> {
  console.log(
    `\n## Commits at scale: every table committed once by one schedule tick, AWS-like latencies ` +
      `(DynamoDB ${LATENCY.ddbMs} ms, S3 GET ${LATENCY.s3GetMs} ms / PUT ${LATENCY.s3PutMs} ms, catalog load ${LATENCY.catalogLoadMs} ms / commit ${LATENCY.catalogCommitMs} ms), ` +
      `${PER_SLICE} tables a slice, ${CONCURRENCY} commits at once per invocation`,
  );
  attachDynamoLatency(dynamo.client);
  const rows: SummaryRow[] = [];
  for (const tables of SIZES) {
    const t0 = performance.now();
    const s = await stage(dynamo, work, tables, 2);
    console.log(
      `setup: ${fmtInt(tables)} tables created and staged in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
    const m = await tick(s, MAX_SLICES);
    const r = m.perTable;
    console.log(
      `${fmtInt(tables)} tables: ${m.slices} slice(s); tick ${m.wallS.toFixed(1)} s (scheduled run ${m.coordinatorS.toFixed(1)} s, slowest slice ${m.slowestSliceS.toFixed(1)} s, all slices one after another ${m.sumS.toFixed(1)} s); ` +
        `per table-commit ${r.ddb.toFixed(1)} DynamoDB requests, ${r.gets.toFixed(1)} S3 reads, ${r.puts.toFixed(1)} S3 writes, ${r.loads.toFixed(1)} catalog loads, ${r.commits.toFixed(1)} catalog commits; ${m.cpuMsPerTable.toFixed(1)} ms CPU`,
    );
    rows.push({
      measure: `commit scale: ${fmtInt(tables)} tables, one tick (${m.slices} slices)`,
      value: `${m.wallS.toFixed(1)} s; ${(r.ddb + r.gets + r.puts + r.loads + r.commits).toFixed(0)} requests/table`,
      target: `≤ ${TARGET_S} s`,
      pass: m.wallS <= TARGET_S,
    });
    if (SINGLE && tables <= 1_000) {
      const again = await stageAgain(s, tables);
      const one = await tick(again, 1);
      console.log(`${fmtInt(tables)} tables without fan-out: ${one.wallS.toFixed(1)} s`);
      rows.push({
        measure: `commit scale: ${fmtInt(tables)} tables, one invocation (no fan-out)`,
        value: `${one.wallS.toFixed(1)} s`,
        target: '(comparison)',
      });
    }
    await fs.rm(s.p.dir, { recursive: true, force: true });
  }
  return rows;
}

/** One more staged data file per table of `s`. */
async function stageAgain(s: Staged, tables: number): Promise<Staged> {
  const lines: string[] = [];
  for (let t = 0; t < tables; t++)
    lines.push(
      `{"tenant":"t${String(t).padStart(5, '0')}","id":${1e9 + t},"amount":1,"at":"2026-12-02T11:00:00Z"}`,
    );
  const r = await ingestBatch(s.p.ingestDeps(s.p.newTableCache()), {
    shardId: 'shardId-000000000000',
    streamArn: 'arn:aws:kinesis:us-east-1:000000000000:stream/floe-bench',
    records: kinesisRecords(lines, 10_000_000),
  });
  if (r.failures.length > 0) throw new Error(`stage again: ${r.failures.length} tables failed`);
  return s;
}
