/**
 * Child process of bench/ingest-width.ts: one committer run (`runCommitter`, default concurrency)
 * in a fresh Node process, so its peak RSS means something. Wired like a newly started committer
 * Lambda: the ledger is the parent's dynalite over HTTP (the emulator's memory stays there), the
 * warehouse is the parent's local-disk one (file catalog), every table has staged entries.
 *
 * Env: BENCH_CHILD_ENDPOINT, BENCH_CHILD_LEDGER, BENCH_CHILD_DIR (warehouse), BENCH_CHILD_TABLES
 * (tables expected to commit), BENCH_CHILD_ENTRIES (entries expected per table). Prints one JSON
 * line (CommitChildReport). With BENCH_PROFILE_WINDOWS the run is one `width-commit` window. Run
 * with --expose-gc, it also reports the heap left after a full GC (what the run retained).
 */
import { runCommitter } from '../lambdas/src/app/committer.ts';
import { profiled, writeProfileWindows } from './common.ts';
import {
  type CommitChildReport,
  CountingStore,
  DynamoStats,
  totalRequests,
  WIDTH_CONFIG,
} from './ingest-width.ts';
import { dynamoClient, pipeline } from './wiring.ts';

const MiB = 1048576;

async function main(): Promise<void> {
  const env = (k: string) => {
    const v = process.env[k];
    if (!v) throw new Error(`${k} is not set`);
    return v;
  };
  const client = dynamoClient(env('BENCH_CHILD_ENDPOINT'));
  const stats = new DynamoStats();
  stats.attach(client);
  const store = new CountingStore();
  const p = pipeline(client, env('BENCH_CHILD_DIR'), env('BENCH_CHILD_LEDGER'), {
    seed: 4343,
    config: WIDTH_CONFIG,
    store,
  });
  const tables = Number(env('BENCH_CHILD_TABLES'));
  const entries = Number(env('BENCH_CHILD_ENTRIES'));

  (globalThis as { gc?: () => void }).gc?.();
  const baseline = process.memoryUsage().rss;
  const baselineHeap = process.memoryUsage().heapUsed;
  let rss = baseline;
  let heap = 0;
  let external = 0;
  const sample = () => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
    external = Math.max(external, m.external + m.arrayBuffers);
  };
  // Every 20 ms: process.memoryUsage() is not free (at 5 ms it took ~2 % of the run's CPU).
  const timer = setInterval(sample, 20);
  const t0 = performance.now();
  const run = await profiled('width-commit', () => runCommitter(p.committerDeps()));
  const seconds = (performance.now() - t0) / 1000;
  sample();
  clearInterval(timer);
  // What the run left behind (caches …) as opposed to its garbage: heap after a full GC.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const retained = process.memoryUsage().heapUsed;
  client.destroy();

  const bad = run.tables.filter((t) => t.status !== 'committed' || t.entries !== entries);
  if (bad.length > 0 || run.tables.length !== tables) {
    const b = bad[0];
    throw new Error(
      `committed ${run.tables.length} tables (expected ${tables} × ${entries} entries)` +
        (b ? `; ${b.table}: ${b.status}, ${b.entries} entries ${String(b.error ?? '')}` : ''),
    );
  }
  const byCommand = Object.fromEntries([...stats.byCommand].map(([k, c]) => [k, c.n]));
  const report: CommitChildReport = {
    baselineRssMiB: Math.round(baseline / MiB),
    // maxRSS is in kilobytes on Linux and macOS.
    maxRssMiB: Math.round((process.resourceUsage().maxRSS * 1024) / MiB),
    sampledRssMiB: Math.round(rss / MiB),
    peakHeapUsedMiB: Math.round(heap / MiB),
    peakExternalMiB: Math.round(external / MiB),
    baselineHeapMiB: Math.round(baselineHeap / MiB),
    retainedHeapMiB: gc ? Math.round(retained / MiB) : Number.NaN,
    seconds,
    tables: run.tables.length,
    entries: run.tables.reduce((n, t) => n + t.entries, 0),
    dataFiles: run.tables.reduce((n, t) => n + t.dataFiles, 0),
    requests: totalRequests(stats.byCommand),
    byCommand,
    puts: store.counts.puts,
    putBytes: store.counts.putBytes,
    gets: store.counts.gets,
  };
  await writeProfileWindows();
  console.log(JSON.stringify(report));
}

await main();
