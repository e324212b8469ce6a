/**
 * Streaming benchmarks (issue 3): the ingest handler on one Kinesis batch, its peak memory, and
 * the committer against table count and table history. See bench/README.md for method and numbers.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomIds, systemClock } from '../lambdas/src/adapters/local/system-clock.ts';
import { commitTable, runCommitter, type TableCommitResult } from '../lambdas/src/app/committer.ts';
import { type IngestResult, ingestBatch } from '../lambdas/src/app/ingest.ts';
import { loadSources } from '../lambdas/src/app/load.ts';
import { decodeManifestList } from '../lambdas/src/iceberg/manifest/index.ts';
import { currentSnapshot } from '../lambdas/src/iceberg/table-metadata.ts';
import { buildKinesisEvent, parseKinesisEvent } from '../lambdas/src/records/kinesis-event.ts';
import { envInt, fmtInt, median, profiled, type SummaryRow, sampleLines } from './common.ts';
import { duckdbNdjsonToParquet } from './duckdb-baseline.ts';
import type { MemoryReport } from './ingest-memory.ts';
import {
  type BenchPipeline,
  createLedger,
  type Dynamo,
  dynamoRequests,
  INGEST_CONFIG,
  kinesisRecords,
  pipeline,
  SHARD,
  STREAM_ARN,
  UNPARTITIONED,
} from './wiring.ts';

const SEED = envInt('BENCH_SEED', 7);
const BATCH = envInt('BENCH_BATCH', 10_000);
const STREAM_RUNS = envInt('BENCH_STREAM_RUNS', 7);
/** The history comparison is a ratio of two ~20 ms times: more runs steady its median. */
const HISTORY_RUNS = envInt('BENCH_HISTORY_RUNS', 15);
const INGEST_WARMUP = envInt('BENCH_INGEST_WARMUP', 3);
const COMMIT_TABLES = envInt('BENCH_COMMIT_TABLES', 100);
const COMMIT_FILES = envInt('BENCH_COMMIT_FILES', 10);
const COMMIT_RECORDS = envInt('BENCH_COMMIT_RECORDS', 2_000);
const HISTORY = envInt('BENCH_HISTORY', 1_000);
const HISTORY_BATCH = envInt('BENCH_HISTORY_BATCH', 1_000);

/** A Lambda event as the runtime receives it: JSON text (parsing it is part of the invocation). */
function eventText(lines: readonly string[], startIndex: number): string {
  return JSON.stringify(buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', kinesisRecords(lines, startIndex)));
}

interface TimedIngest {
  /** The Lambda runtime's JSON.parse of the event text. */
  readonly jsonS: number;
  /** parseKinesisEvent: validation, base64 decode of every record. */
  readonly decodeS: number;
  /** Everything: JSON.parse + parseKinesisEvent + ingestBatch. */
  readonly totalS: number;
  /** Wall time with at least one ledger call in flight. */
  readonly ledgerS: number;
  /** DynamoDB requests sent. */
  readonly requests: number;
  readonly result: IngestResult;
}

/** What one invocation of the handler costs: parse the event, decode the records, ingest. */
async function timedIngest(
  p: BenchPipeline,
  tables: ReturnType<BenchPipeline['newTableCache']>,
  text: string,
): Promise<TimedIngest> {
  p.dynamoTime.reset();
  const r0 = dynamoRequests.count;
  const t0 = performance.now();
  const event: unknown = JSON.parse(text);
  const t1 = performance.now();
  const batch = parseKinesisEvent(event);
  const t2 = performance.now();
  const result = await ingestBatch(p.ingestDeps(tables), batch);
  const t3 = performance.now();
  return {
    jsonS: (t1 - t0) / 1000,
    decodeS: (t2 - t1) / 1000,
    totalS: (t3 - t0) / 1000,
    ledgerS: p.dynamoTime.wallMs / 1000,
    requests: dynamoRequests.count - r0,
    result,
  };
}

function expectIngest(r: IngestResult, rows: number, path: 'columnar' | 'pending', what: string): void {
  const failed = r.failures.map((f) => `${f.table}: ${String(f.error)}`);
  if (failed.length > 0) throw new Error(`${what}: ingest failures: ${failed.join('; ')}`);
  const wrong = r.tables.filter((t) => t.path !== path).map((t) => `${t.table}=${t.path}`);
  if (wrong.length > 0) throw new Error(`${what}: expected every table on the ${path} path, got ${wrong}`);
  const n = r.tables.reduce((s, t) => s + t.rows + t.pending, 0);
  if (n !== rows) throw new Error(`${what}: staged ${n} records, expected ${rows}`);
}

function expectCommitted(rs: readonly TableCommitResult[], tables: number, what: string): void {
  const bad = rs.filter((r) => r.status !== 'committed');
  if (bad.length > 0 || rs.length !== tables) {
    throw new Error(
      `${what}: ${rs.length} tables, not committed: ${bad.map((b) => `${b.table}=${b.status} ${String(b.error ?? '')}`).join('; ')}`,
    );
  }
}

const ms = (seconds: number) => `${(seconds * 1000).toFixed(0)} ms`;

let dirCounter = 0;
async function newDir(work: string, name: string): Promise<string> {
  const d = join(work, `${name}-${++dirCounter}`);
  await fs.mkdir(d, { recursive: true });
  return d;
}

// ---------------------------------------------------------------------------------------------
// 1 + 2. The ingest handler on one batch, against DuckDB; peak memory in a child process

export async function benchIngest(dynamo: Dynamo, work: string): Promise<SummaryRow[]> {
  console.log(`\n## Ingest handler: ${fmtInt(BATCH)}-record Kinesis batch, ${STREAM_RUNS} alternating runs`);
  const p = pipeline(dynamo.client, await newDir(work, 'ingest'), await createLedger(dynamo.client), {
    config: INGEST_CONFIG,
  });
  let next = 0;
  const fresh = (seed: number) => {
    const lines = sampleLines(BATCH, seed);
    const start = next;
    next += lines.length;
    return { lines, text: eventText(lines, start) };
  };

  // Warm-up: the first batch creates nothing (pending fragments), the committer creates the
  // tables, further batches (untimed) load them into the ingest's table cache and warm the JIT.
  const w1 = fresh(SEED);
  expectIngest((await timedIngest(p, p.newTableCache(), w1.text)).result, BATCH, 'pending', 'warm-up');
  expectCommitted((await runCommitter(p.committerDeps())).tables, 3, 'warm-up commit');
  const tables = p.newTableCache();
  for (let w = 1; w <= INGEST_WARMUP; w++) {
    const r = await timedIngest(p, tables, fresh(SEED + w).text);
    expectIngest(r.result, BATCH, 'columnar', `warm-up ${w}`);
  }

  const duck: number[] = [];
  const steady: TimedIngest[] = [];
  const first: TimedIngest[] = [];
  let files = 0;
  // Every batch built (and its NDJSON written) before timing starts: generating them makes garbage.
  const batches: { text: string; input: string }[] = [];
  for (let run = 1; run <= STREAM_RUNS; run++) {
    const b = fresh(SEED + 100 + run);
    const input = join(work, `batch-${run}.ndjson`);
    await fs.writeFile(input, `${b.lines.join('\n')}\n`);
    batches.push({ text: b.text, input });
  }
  for (let run = 1; run <= STREAM_RUNS; run++) {
    const b = batches[run - 1]!;
    const input = b.input;
    const d = await duckdbNdjsonToParquet(input, join(work, `batch-${run}.parquet`));
    if (d.rows !== BATCH) throw new Error(`DuckDB wrote ${d.rows} rows, expected ${BATCH}`);
    duck.push(d.seconds);

    const s = await profiled('ingest', () => timedIngest(p, tables, b.text));
    expectIngest(s.result, BATCH, 'columnar', `steady run ${run}`);
    files = s.result.tables.reduce((n, t) => n + t.dataFiles, 0);
    steady.push(s);

    // First sight: a new warehouse and ledger, no table yet → pending fragments.
    const q = pipeline(dynamo.client, await newDir(work, 'first'), await createLedger(dynamo.client), {
      seed: 1000 + run,
      config: INGEST_CONFIG,
    });
    const f = await profiled('ingest-first', () => timedIngest(q, q.newTableCache(), b.text));
    expectIngest(f.result, BATCH, 'pending', `first-sight run ${run}`);
    first.push(f);
    console.log(
      `run ${run}: duckdb ${ms(d.seconds)}, handler ${ms(s.totalS)} (JSON.parse ${ms(s.jsonS)}, ` +
        `parseKinesisEvent ${ms(s.decodeS)}, ledger ${ms(s.ledgerS)} for ${s.requests} DynamoDB requests), ` +
        `first sight ${ms(f.totalS)}`,
    );
  }
  const ds = median(duck);
  // The handler is our code: parseKinesisEvent + ingestBatch. The Lambda runtime parses the event
  // JSON before it calls the handler; that time is reported on its own line (and in `invocation`).
  const invocation = median(steady.map((s) => s.totalS));
  const ss = median(steady.map((s) => s.totalS - s.jsonS));
  const core = median(steady.map((s) => s.totalS - s.jsonS - s.decodeS));
  const fs_ = median(first.map((s) => s.totalS));
  const json = median(steady.map((s) => s.jsonS));
  const decode = median(steady.map((s) => s.decodeS));
  const ledger = median(steady.map((s) => s.ledgerS));
  const inputMiB = Buffer.byteLength(`${sampleLines(BATCH, SEED + 101).join('\n')}\n`) / 1048576;
  const eventMiB = Buffer.byteLength(fresh(SEED + 101).text) / 1048576;
  const ratio = ds / ss;
  const partitioned = process.env.BENCH_UNPARTITIONED !== '1';
  console.log(
    `input ${inputMiB.toFixed(1)} MiB NDJSON (Lambda event JSON ${eventMiB.toFixed(1)} MiB); steady state writes ` +
      `${files} data files (3 tables${partitioned ? ' × event_date × region' : ', unpartitioned'})`,
  );
  console.log(
    `median: DuckDB ${ms(ds)} (${fmtInt(BATCH / ds)} rows/s); handler ${ms(ss)} (${fmtInt(BATCH / ss)} rows/s): ` +
      `parseKinesisEvent ${ms(decode)}, ingestBatch ${ms(core)}; runtime JSON.parse of the event ${ms(json)} ` +
      `(ledger in flight ${ms(ledger)}); first sight ${ms(fs_)} (${fmtInt(BATCH / fs_)} rows/s)`,
  );

  // Peak memory: one invocation in a fresh Node process (cold table cache, like a new Lambda).
  const memSteady = await childIngest(dynamo, p, work, fresh(SEED + 200).text, 'steady');
  const q = pipeline(dynamo.client, await newDir(work, 'first-mem'), await createLedger(dynamo.client), {
    config: INGEST_CONFIG,
  });
  const memFirst = await childIngest(dynamo, q, work, fresh(SEED + 200).text, 'first-sight');
  for (const [name, m] of [
    ['steady', memSteady],
    ['first sight', memFirst],
  ] as const) {
    console.log(
      `peak memory (${name}, child process): max RSS ${m.maxRssMiB} MiB (before the invocation ${m.baselineRssMiB} MiB), ` +
        `peak heap used ${m.peakHeapUsedMiB} MiB, peak external+arrayBuffers ${m.peakExternalMiB} MiB, ${(m.seconds * 1000).toFixed(0)} ms`,
    );
  }

  const share = (x: number) => `${ms(x)} (${((100 * x) / ss).toFixed(0)} %)`;
  return [
    {
      measure: `ingest handler, ${fmtInt(BATCH)} records, tables exist`,
      value: `${fmtInt(BATCH / ss)} rows/s (${ms(ss)})`,
      target: '',
    },
    {
      measure: 'DuckDB NDJSON → Parquet, same records',
      value: `${fmtInt(BATCH / ds)} rows/s (${ms(ds)})`,
      target: '',
    },
    {
      measure: 'ingest handler / DuckDB rows/s',
      value: ratio.toFixed(2),
      target: '≥ 0.50',
      pass: ratio >= 0.5,
    },
    { measure: '  of which parseKinesisEvent (base64)', value: share(decode), target: '' },
    { measure: '  of which ingestBatch', value: share(core), target: '' },
    { measure: '    of which ledger calls in flight (dynalite)', value: share(ledger), target: '' },
    { measure: '  ingestBatch alone / DuckDB rows/s', value: (ds / core).toFixed(2), target: '(info)' },
    {
      measure: "whole invocation incl. the runtime's JSON.parse of the event",
      value: `${fmtInt(BATCH / invocation)} rows/s (${ms(invocation)}; JSON.parse ${ms(json)})`,
      target: '',
    },
    { measure: '  invocation / DuckDB rows/s', value: (ds / invocation).toFixed(2), target: '(info)' },
    {
      measure: 'ingest handler, first sight (pending fragments)',
      value: `${fmtInt(BATCH / fs_)} rows/s (${ms(fs_)})`,
      target: '',
    },
    {
      measure: `peak RSS, one ${fmtInt(BATCH)}-record invocation`,
      value: `${memSteady.maxRssMiB} MiB`,
      target: '< 512 MiB',
      pass: memSteady.maxRssMiB < 512,
    },
    {
      measure: '  same, first sight',
      value: `${memFirst.maxRssMiB} MiB`,
      target: '< 512 MiB',
      pass: memFirst.maxRssMiB < 512,
    },
  ];
}

async function childIngest(
  dynamo: Dynamo,
  p: BenchPipeline,
  work: string,
  text: string,
  mode: 'steady' | 'first-sight',
): Promise<MemoryReport> {
  const eventFile = join(work, `event-${mode}.json`);
  await fs.writeFile(eventFile, text);
  const script = fileURLToPath(new URL('./ingest-memory.ts', import.meta.url));
  const env = {
    ...process.env,
    BENCH_CHILD_ENDPOINT: dynamo.endpoint,
    BENCH_CHILD_LEDGER: p.ledgerTable,
    BENCH_CHILD_DIR: p.dir,
    BENCH_CHILD_EVENT: eventFile,
    BENCH_CHILD_EXPECT: mode === 'steady' ? 'columnar' : 'pending',
  };
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(buf) : reject(new Error(`memory child exited ${code}`)),
    );
  });
  await fs.rm(eventFile);
  return JSON.parse(out.trim().split('\n').pop()!) as MemoryReport;
}

// ---------------------------------------------------------------------------------------------
// 3. The committer over many tables

export async function benchCommitTables(dynamo: Dynamo, work: string): Promise<SummaryRow[]> {
  const T = COMMIT_TABLES;
  console.log(
    `\n## Committer: ${T} tables × ${COMMIT_FILES} staged files (${COMMIT_FILES} batches of ${fmtInt(COMMIT_RECORDS)} records, unpartitioned)`,
  );
  const p = pipeline(dynamo.client, await newDir(work, 'tables'), await createLedger(dynamo.client), {
    config: UNPARTITIONED,
  });
  // ORDER, USER and CLICK events spread round-robin over 40 %, 30 %, 30 % of the tables, so
  // each table holds one kind of event.
  const orders = Math.max(1, Math.round(T * 0.4));
  const users = Math.max(1, Math.round(T * 0.3));
  const clicks = Math.max(1, T - orders - users);
  const counters = { ORDER: 0, USER: 0, CLICK: 0 } as Record<string, number>;
  const relabel = (type: string) => {
    const k = counters[type]!++;
    const idx =
      type === 'ORDER' ? k % orders : type === 'USER' ? orders + (k % users) : orders + users + (k % clicks);
    return `T${String(idx).padStart(3, '0')}`;
  };
  const tableCount = orders + users + clicks;
  let next = 0;
  const batch = (seed: number) => {
    const lines = sampleLines(COMMIT_RECORDS, seed, relabel);
    const text = eventText(lines, next);
    next += lines.length;
    return text;
  };
  const t0 = performance.now();
  expectIngest(
    (await timedIngest(p, p.newTableCache(), batch(SEED))).result,
    COMMIT_RECORDS,
    'pending',
    'create',
  );
  const created = await runCommitter(p.committerDeps());
  expectCommitted(created.tables, tableCount, 'create');
  const tables = p.newTableCache();
  for (let b = 1; b <= COMMIT_FILES; b++) {
    const r = await timedIngest(p, tables, batch(SEED + b));
    expectIngest(r.result, COMMIT_RECORDS, 'columnar', `stage ${b}`);
    if (r.result.tables.length !== tableCount)
      throw new Error(`stage ${b} touched ${r.result.tables.length} tables, expected ${tableCount}`);
  }
  console.log(
    `setup (create ${tableCount} tables, stage ${COMMIT_FILES} batches): ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  p.dynamoTime.reset();
  const r0 = dynamoRequests.count;
  const c0 = performance.now();
  const run = await profiled('commit-tables', () => runCommitter(p.committerDeps()));
  const seconds = (performance.now() - c0) / 1000;
  expectCommitted(run.tables, tableCount, 'commit');
  const odd = run.tables.filter((t) => t.entries !== COMMIT_FILES || t.dataFiles !== COMMIT_FILES);
  if (odd.length > 0)
    throw new Error(`commit: ${odd[0]!.table} took ${odd[0]!.entries} entries / ${odd[0]!.dataFiles} files`);
  const perTable = run.tables.map((t) => t.durationMs);
  const dyn = p.dynamoTime.wallMs / 1000;
  console.log(
    `one runCommitter (concurrency 4): ${seconds.toFixed(2)} s for ${tableCount} tables, ${fmtInt(tableCount * COMMIT_FILES)} files; ` +
      `per table median ${median(perTable).toFixed(0)} ms; ${p.dynamoTime.calls} ledger+lock calls (${dynamoRequests.count - r0} DynamoDB requests), in flight ${dyn.toFixed(2)} s of the wall time (${p.dynamoTime.ms.toFixed(0)} ms summed over 4 workers)`,
  );
  return [
    {
      measure: `committer, ${tableCount} tables × ${COMMIT_FILES} staged files`,
      value: `${seconds.toFixed(2)} s (${((1000 * seconds) / tableCount).toFixed(0)} ms/table)`,
      target: '(no target)',
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// 4. The committer on a table with a long history vs a fresh table

export async function benchCommitHistory(dynamo: Dynamo, work: string): Promise<SummaryRow[]> {
  console.log(
    `\n## Committer: table with ${fmtInt(HISTORY)} snapshots vs fresh tables, ${fmtInt(HISTORY_BATCH)}-record batch, ${HISTORY_RUNS} alternating runs`,
  );
  const p = pipeline(dynamo.client, await newDir(work, 'history'), await createLedger(dynamo.client));
  // Order events only; `event_type` names the table: HIST → hist_events, F<k> → f<k>_events.
  const lines = (n: number, seed: number, type: string) =>
    sampleLines(n, seed, () => type).filter((l) => l.includes('"ORDER-'));
  let next = 0;
  const batchFor = (type: string, seed: number, n = HISTORY_BATCH) => {
    const ls = lines(n * 3, seed, type).slice(0, n);
    const text = eventText(ls, next);
    next += ls.length;
    return { text, n: ls.length };
  };
  const freshTypes = Array.from({ length: HISTORY_RUNS }, (_, k) => `F${k}`);
  // Create every table in one committer run (one snapshot each).
  const create = [...freshTypes, 'HIST'].flatMap((t, k) => lines(300, SEED + k, t).slice(0, 50));
  const c = await timedIngest(p, p.newTableCache(), eventText(create, next));
  next += create.length;
  expectIngest(c.result, create.length, 'pending', 'create');
  expectCommitted((await runCommitter(p.committerDeps())).tables, freshTypes.length + 1, 'create');

  // History: small appends through the `floe load` machinery, one snapshot each.
  const h0 = performance.now();
  const small = lines(200, SEED + 500, 'HIST').slice(0, 5);
  for (let i = 1; i < HISTORY; i++) {
    const report = await loadSources(
      {
        catalog: p.catalog,
        store: p.store,
        clock: systemClock,
        ids: randomIds,
        config: p.config,
        onDeadLetter: (d) => {
          throw new Error(`unexpected dead letter: ${d.detail}`);
        },
      },
      [{ name: `history-${i}`, lines: small }],
    );
    if (report.failures.length > 0 || report.tables[0]?.snapshotId === undefined)
      throw new Error(`history load ${i} did not commit`);
  }
  console.log(`built ${fmtInt(HISTORY)} snapshots in ${((performance.now() - h0) / 1000).toFixed(1)} s`);

  const tables = p.newTableCache();
  const hist: number[] = [];
  const fresh: number[] = [];
  const timeCommit = async (type: string, table: string, seed: number, window: string) => {
    const b = batchFor(type, seed);
    expectIngest((await timedIngest(p, tables, b.text)).result, b.n, 'columnar', `stage ${table}`);
    p.dynamoTime.reset();
    const r0 = dynamoRequests.count;
    const t0 = performance.now();
    const r = await profiled(window, () => commitTable(p.committerDeps(), table));
    const ms = performance.now() - t0;
    expectCommitted([r], 1, `commit ${table}`);
    return { ms, dynamoMs: p.dynamoTime.wallMs, requests: dynamoRequests.count - r0 };
  };
  // One untimed commit each way first (JIT warm-up) is what the creation run above already did
  // for the fresh tables' code path; warm the history path likewise.
  await timeCommit('HIST', 'hist_events', SEED + 600, 'warm-up');
  for (let run = 1; run <= HISTORY_RUNS; run++) {
    const f = freshTypes[run - 1]!;
    const fm = await timeCommit(f, `${f.toLowerCase()}_events`, SEED + 700 + run, 'commit-fresh');
    const hm = await timeCommit('HIST', 'hist_events', SEED + 800 + run, 'commit-history');
    fresh.push(fm.ms);
    hist.push(hm.ms);
    console.log(
      `run ${run}: fresh table ${fm.ms.toFixed(0)} ms (ledger+lock ${fm.dynamoMs.toFixed(0)} ms, ${fm.requests} requests), ` +
        `${fmtInt(HISTORY)}-snapshot table ${hm.ms.toFixed(0)} ms (ledger+lock ${hm.dynamoMs.toFixed(0)} ms, ${hm.requests} requests)`,
    );
  }
  const t = await p.catalog.loadTable({ namespace: p.config.namespace, name: 'hist_events' });
  const snap = currentSnapshot(t.metadata)!;
  const manifests = decodeManifestList(await p.store.get(snap['manifest-list']!)).length;
  const metaBytes = (await fs.stat(p.store.pathOf(t.metadataLocation))).size;
  console.log(
    `history table now: ${t.metadata.snapshots.length} snapshots, ${manifests} manifests in the current manifest list, ` +
      `metadata.json ${(metaBytes / 1024).toFixed(0)} KiB`,
  );
  const hm = median(hist);
  const fm = median(fresh);
  const ratio = hm / fm;
  return [
    { measure: 'commit one batch to a fresh table', value: `${fm.toFixed(0)} ms`, target: '' },
    {
      measure: `commit one batch to a ${fmtInt(HISTORY)}-snapshot table`,
      value: `${hm.toFixed(0)} ms`,
      target: '',
    },
    {
      measure: `${fmtInt(HISTORY)}-snapshot / fresh commit time`,
      value: ratio.toFixed(2),
      target: '≤ 1.5',
      pass: ratio <= 1.5,
    },
  ];
}
