/**
 * `floe load` (issue 2): Floe's batch ingest (parse → route → infer → convert → Parquet → commit)
 * of 200,000 mixed sample events, next to DuckDB converting the same NDJSON to Parquet on one
 * thread, in the same run. Target: Floe ≥ 0.5 × DuckDB rows/s.
 *
 * Options (env): BENCH_EVENTS (default 200000), BENCH_SEED (default 7), BENCH_RUNS (default 5),
 * BENCH_UNPARTITIONED=1 (no partition candidates).
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { FileCatalog } from '../lambdas/src/adapters/local/file-catalog.ts';
import { readByteChunks } from '../lambdas/src/adapters/local/line-reader.ts';
import { fileUri, LocalObjectStore } from '../lambdas/src/adapters/local/local-object-store.ts';
import { randomIds, systemClock } from '../lambdas/src/adapters/local/system-clock.ts';
import { loadSources } from '../lambdas/src/app/load.ts';
import { parseConfig } from '../lambdas/src/config.ts';
import { sampleEvents, toNdjsonLine } from '../lambdas/src/sample/sample-events.ts';
import { fmtInt, median, profiled, type SummaryRow } from './common.ts';
import { duckdbNdjsonToParquet } from './duckdb-baseline.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const SEED = Number(process.env.BENCH_SEED ?? 7);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const UNPARTITIONED = process.env.BENCH_UNPARTITIONED === '1';

async function writeInput(path: string): Promise<number> {
  const it = sampleEvents({ seed: SEED, nowMs: Date.UTC(2026, 10, 29, 12), version: 'v2' });
  const lines: string[] = [];
  for (let i = 0; i < EVENTS; i++) lines.push(toNdjsonLine(it.next().value as Record<string, unknown>));
  const text = `${lines.join('\n')}\n`;
  await fs.writeFile(path, text);
  return Buffer.byteLength(text);
}

async function floeLoad(
  input: string,
  dir: string,
): Promise<{ seconds: number; rows: number; peakRssMb: number }> {
  const store = new LocalObjectStore();
  const catalog = new FileCatalog(store, fileUri(dir));
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const t0 = performance.now();
  const report = await loadSources(
    {
      catalog,
      store,
      clock: systemClock,
      ids: randomIds,
      config: parseConfig(UNPARTITIONED ? { partitioning: { candidates: [] } } : {}),
      onDeadLetter: (d) => {
        throw new Error(`unexpected dead letter: ${d.detail}`);
      },
    },
    [
      {
        name: input,
        chunks: readByteChunks(input),
      },
    ],
  );
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  return {
    seconds,
    rows: report.rows,
    peakRssMb: Math.round(Math.max(peak, process.memoryUsage().rss) / 1048576),
  };
}

export async function benchLoad(work: string): Promise<SummaryRow[]> {
  console.log(`\n## floe load: ${fmtInt(EVENTS)} events, ${RUNS} alternating runs`);
  const input = join(work, 'events.ndjson');
  const bytes = await writeInput(input);
  const mb = bytes / 1048576;
  console.log(
    `input: ${EVENTS.toLocaleString('en-US')} mixed events (ORDER/USER/CLICK, 10–15 fields), ${mb.toFixed(1)} MiB NDJSON`,
  );
  const floe: number[] = [];
  const duck: number[] = [];
  let rss = 0;
  for (let run = 1; run <= RUNS; run++) {
    const d = await duckdbNdjsonToParquet(input, join(work, `duck-${run}.parquet`));
    if (d.rows !== EVENTS) throw new Error(`DuckDB wrote ${d.rows} rows, expected ${EVENTS}`);
    duck.push(d.seconds);
    const f = await profiled('load', () => floeLoad(input, join(work, `wh-${run}`)));
    if (f.rows !== EVENTS) throw new Error(`Floe committed ${f.rows} rows, expected ${EVENTS}`);
    floe.push(f.seconds);
    rss = Math.max(rss, f.peakRssMb);
    console.log(`run ${run}: duckdb ${d.seconds.toFixed(2)} s, floe ${f.seconds.toFixed(2)} s`);
  }
  const fs_ = median(floe);
  const ds = median(duck);
  const row = (name: string, s: number) =>
    `| ${name.padEnd(44)} | ${s.toFixed(2).padStart(6)} | ${Math.round(EVENTS / s)
      .toLocaleString('en-US')
      .padStart(9)} | ${(mb / s).toFixed(1).padStart(6)} |`;
  console.log('');
  console.log(
    `| ${'median of runs'.padEnd(44)} | ${'s'.padStart(6)} | ${'rows/s'.padStart(9)} | ${'MiB/s'.padStart(6)} |`,
  );
  console.log(`|${'-'.repeat(46)}|${'-'.repeat(8)}|${'-'.repeat(11)}|${'-'.repeat(8)}|`);
  console.log(row('DuckDB NDJSON → Parquet (1 thread, zstd)', ds));
  console.log(row('Floe load (parse, route, infer, Parquet, commit)', fs_));
  const ratio = ds / fs_;
  console.log('');
  console.log(
    `Floe / DuckDB rows/s: ${ratio.toFixed(2)} (target ≥ 0.50) ${ratio >= 0.5 ? 'PASS' : 'BELOW TARGET'}`,
  );
  console.log(`Floe peak RSS during load: ${rss} MiB`);
  await fs.rm(input, { force: true });
  return [
    {
      measure: `floe load ${fmtInt(EVENTS)} events / DuckDB rows/s`,
      value: `${ratio.toFixed(2)} (${fs_.toFixed(2)} s vs ${ds.toFixed(2)} s)`,
      target: '≥ 0.50',
      pass: ratio >= 0.5,
    },
  ];
}
