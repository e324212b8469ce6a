/**
 * Child process of `npm run bench`: one ingest handler invocation in a fresh Node process, so its
 * peak memory is not polluted by the rest of the bench. Wired like a newly started Lambda: the
 * ledger is the parent's dynalite (over HTTP: the emulator's memory stays in the parent), the
 * table cache is empty, the event arrives as JSON text (read from a file before measuring).
 *
 * Env: BENCH_CHILD_ENDPOINT, BENCH_CHILD_LEDGER, BENCH_CHILD_DIR (warehouse), BENCH_CHILD_EVENT
 * (event JSON file), BENCH_CHILD_EXPECT (columnar | pending). Prints one JSON line (MemoryReport).
 */
import { readFileSync } from 'node:fs';
import { ingestBatch } from '../lambdas/src/app/ingest.ts';
import { parseKinesisEvent } from '../lambdas/src/records/kinesis-event.ts';
import { dynamoClient, INGEST_CONFIG, pipeline } from './wiring.ts';

export interface MemoryReport {
  /** RSS just before the invocation (modules loaded, event text in memory). */
  readonly baselineRssMiB: number;
  /** Peak RSS of the whole process (`process.resourceUsage().maxRSS`): what Lambda's memory limit sees. */
  readonly maxRssMiB: number;
  /** Highest RSS sampled every 5 ms during the invocation. */
  readonly sampledRssMiB: number;
  readonly peakHeapUsedMiB: number;
  readonly peakExternalMiB: number;
  readonly seconds: number;
}

const MiB = 1048576;

async function main(): Promise<void> {
  const env = (k: string) => {
    const v = process.env[k];
    if (!v) throw new Error(`${k} is not set`);
    return v;
  };
  const client = dynamoClient(env('BENCH_CHILD_ENDPOINT'));
  const p = pipeline(client, env('BENCH_CHILD_DIR'), env('BENCH_CHILD_LEDGER'), {
    seed: 4242,
    config: INGEST_CONFIG,
  });
  const text = readFileSync(env('BENCH_CHILD_EVENT'), 'utf8');
  const expect = env('BENCH_CHILD_EXPECT');

  const baseline = process.memoryUsage().rss;
  let rss = baseline;
  let heap = 0;
  let external = 0;
  const sample = () => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
    external = Math.max(external, m.external + m.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  const t0 = performance.now();
  // The handler's work: the runtime's JSON.parse of the event, base64 decode, the ingest.
  const result = await ingestBatch(p.ingestDeps(p.newTableCache()), parseKinesisEvent(JSON.parse(text)));
  const seconds = (performance.now() - t0) / 1000;
  sample();
  clearInterval(timer);
  client.destroy();
  if (result.failures.length > 0) throw new Error(`ingest failed: ${String(result.failures[0]!.error)}`);
  const paths = result.tables.map((t) => t.path);
  if (paths.some((x) => x !== expect))
    throw new Error(`expected every table ${expect}, got ${paths.join(',')}`);
  const report: MemoryReport = {
    baselineRssMiB: Math.round(baseline / MiB),
    // maxRSS is in kilobytes on Linux and macOS.
    maxRssMiB: Math.round((process.resourceUsage().maxRSS * 1024) / MiB),
    sampledRssMiB: Math.round(rss / MiB),
    peakHeapUsedMiB: Math.round(heap / MiB),
    peakExternalMiB: Math.round(external / MiB),
    seconds,
  };
  console.log(JSON.stringify(report));
}

await main();
