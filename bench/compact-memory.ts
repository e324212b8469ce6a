/**
 * Child process of the maintenance benchmark (bench/maintenance.ts): one compaction of one table
 * in a fresh Node process, so its peak memory is its own. The parent built the table (small
 * unpartitioned files that fit one bin of `DEFAULT_MAX_BIN_BYTES`); this process opens the
 * warehouse, samples memory every 5 ms and runs `maintainTable` with only the compaction step,
 * default options (as `floe maintain --compact` does).
 *
 * Env: BENCH_CHILD_DIR (warehouse), BENCH_CHILD_TABLE, BENCH_CHILD_MAX_BIN_BYTES (optional: the
 * bin cap, so a bin above the default is still one bin). Prints one JSON line (CompactMemoryReport).
 */
import { FileCatalog } from '../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../lambdas/src/adapters/local/local-object-store.ts';
import { randomIds, systemClock } from '../lambdas/src/adapters/local/system-clock.ts';
import { maintainTable } from '../lambdas/src/app/maintain/index.ts';
import { liveRowsReader } from '../lambdas/src/app/maintain/live-rows.ts';
import { parseConfig } from '../lambdas/src/config.ts';

export interface CompactMemoryReport {
  /** RSS just before the compaction (modules loaded, warehouse opened). */
  readonly baselineRssMiB: number;
  /** Peak RSS of the whole process (`process.resourceUsage().maxRSS`). */
  readonly maxRssMiB: number;
  /** Highest RSS sampled every 5 ms during the compaction. */
  readonly sampledRssMiB: number;
  readonly peakHeapUsedMiB: number;
  /** Peak `external` (memory outside the JS heap: ArrayBuffers, wasm memory, native). */
  readonly peakExternalMiB: number;
  /** Peak `arrayBuffers` (already part of `external`). */
  readonly peakArrayBuffersMiB: number;
  readonly seconds: number;
  readonly filesRewritten: number;
  readonly filesWritten: number;
  readonly inputBytes: number;
  readonly outputBytes: number;
  readonly rows: number;
}

const MiB = 1048576;

async function main(): Promise<void> {
  const env = (k: string) => {
    const v = process.env[k];
    if (!v) throw new Error(`${k} is not set`);
    return v;
  };
  const store = new LocalObjectStore();
  const catalog = new FileCatalog(store, fileUri(env('BENCH_CHILD_DIR')));
  const id = { namespace: parseConfig({}).namespace, name: env('BENCH_CHILD_TABLE') };
  await catalog.loadTable(id);

  const baseline = process.memoryUsage().rss;
  let rss = baseline;
  let heap = 0;
  let external = 0;
  let arrayBuffers = 0;
  const sample = () => {
    const m = process.memoryUsage();
    rss = Math.max(rss, m.rss);
    heap = Math.max(heap, m.heapUsed);
    external = Math.max(external, m.external);
    arrayBuffers = Math.max(arrayBuffers, m.arrayBuffers);
  };
  const timer = setInterval(sample, 5);
  const t0 = performance.now();
  const report = await maintainTable(
    { catalog, store, clock: systemClock, ids: randomIds, liveRows: liveRowsReader(store) },
    id,
    {
      steps: { compact: true, rewriteManifests: false, expire: false, orphans: false },
      ...(process.env.BENCH_CHILD_MAX_BIN_BYTES
        ? { maxBinBytes: Number(process.env.BENCH_CHILD_MAX_BIN_BYTES) }
        : {}),
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  sample();
  clearInterval(timer);
  const c = report.compaction;
  if (report.failed.length > 0 || !c) throw new Error(`compaction failed: ${report.failed[0]?.error}`);
  const out: CompactMemoryReport = {
    baselineRssMiB: Math.round(baseline / MiB),
    // maxRSS is in kilobytes on Linux and macOS.
    maxRssMiB: Math.round((process.resourceUsage().maxRSS * 1024) / MiB),
    sampledRssMiB: Math.round(rss / MiB),
    peakHeapUsedMiB: Math.round(heap / MiB),
    peakExternalMiB: Math.round(external / MiB),
    peakArrayBuffersMiB: Math.round(arrayBuffers / MiB),
    seconds,
    filesRewritten: c.filesRewritten,
    filesWritten: c.filesWritten,
    inputBytes: Number(c.bytesBefore),
    outputBytes: Number(c.bytesAfter),
    rows: Number(c.rowsAfter),
  };
  console.log(JSON.stringify(out));
}

await main();
