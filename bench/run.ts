/**
 * `npm run bench`: every benchmark in one process, one at a time, then a table of results against
 * the targets. See bench/README.md.
 *
 *   load       `floe load` of 200,000 events vs DuckDB (issue 2)           bench/load.ts
 *   ingest     ingest handler on a 10,000-record Kinesis batch vs DuckDB,  bench/streaming.ts
 *              its peak memory in a child process (issue 3)
 *   committer  100 tables × 10 staged files; 1,000-snapshot table vs      bench/streaming.ts
 *              fresh tables (issue 3)
 *   startup    `floe --help` and `floe tables` vs `node -e 0`, as child      bench/startup.ts
 *              processes
 *   wide       one record of 1k…16k keys (linear per doubling), and the    bench/wide.ts
 *              records past the default guards (< 1 s each) (issue 10)
 *   maintenance  "a month in minutes": 2,000 one-minute commits with and    bench/maintenance.ts
 *              without hourly maintenance (commit time, metadata.json size, query before / after
 *              compaction, compaction memory) (issue 12); ~4 min, so not in the default set
 *   upsert     200,000 change records in 20 loads into a plain and an      bench/upsert.ts
 *              upsert table (records/s, files, query before / after compaction) (issue 13)
 *   width      `floe load` vs DuckDB process to process: one table, the     bench/width.ts
 *              mixed sample, ~230 tables (one per origin), growth 1 M → 3 M records; wall time and
 *              peak RSS of each process (issue 18); ~2 min at its 3 M-record default
 *   ingest-width  the ingest handler on one 5,000-record batch over    bench/ingest-width.ts
 *              200 tables vs 3 (uniform, Zipf, first sight, empty table cache, whole handler); the
 *              committer after 5 such batches in a child process (time, memory per table)
 *              (issue 18); ~70–80 s, so not in the default set
 *
 *   commit-scale  one schedule tick commits 100 / 1,000 / 10,000 tables with  bench/commit-scale.ts
 *              staged work, fanned out, with AWS-like latencies behind the ports (issue 19);
 *              several minutes of setup at 10,000, so not in the default set
 *   freshness  put → visible in a snapshot on the local stack, p50 / p99 /    bench/freshness.ts
 *              max, for a 5 s commit interval and the default minute (issue 19); ~5 min, not in
 *              the default set
 *
 * BENCH_ONLY=load|ingest|committer|startup|wide|maintenance|upsert|width|ingest-width|commit-scale|
 * freshness (comma-separated; default all but maintenance, ingest-width, commit-scale and
 * freshness; `all` for every one). Sizes: see bench/README.md.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCommitScale } from './commit-scale.ts';
import { printSummary, type SummaryRow, writeProfileWindows } from './common.ts';
import { benchFraming } from './framing.ts';
import { benchFreshness } from './freshness.ts';
import { benchIngestWidth } from './ingest-width.ts';
import { benchLoad } from './load.ts';
import { benchMaintenance } from './maintenance.ts';
import { benchStartup } from './startup.ts';
import { benchCommitHistory, benchCommitTables, benchIngest } from './streaming.ts';
import { benchUpsert } from './upsert.ts';
import { benchWide } from './wide.ts';
import { benchWidth } from './width.ts';
import { startDynalite } from './wiring.ts';

const ALL = [
  'load',
  'ingest',
  'committer',
  'startup',
  'wide',
  'maintenance',
  'upsert',
  'width',
  'ingest-width',
  'commit-scale',
  'freshness',
  'framing',
] as const;
/**
 * `npm run bench` without BENCH_ONLY: the month of maintenance takes ~4 min on its own, the ingest
 * at width ~70–80 s (over the 60 s a default member may take).
 */
const DEFAULT = ALL.filter(
  (b) => b !== 'maintenance' && b !== 'ingest-width' && b !== 'commit-scale' && b !== 'freshness',
);
const chosen =
  process.env.BENCH_ONLY === 'all' ? ALL.join(',') : (process.env.BENCH_ONLY ?? DEFAULT.join(','));
const only = chosen
  .split(',')
  .map((s) => s.trim())
  .filter((s) => s !== '');
for (const o of only) {
  if (!(ALL as readonly string[]).includes(o))
    throw new Error(`BENCH_ONLY: unknown benchmark '${o}' (${ALL.join(', ')})`);
}

async function main() {
  const started = performance.now();
  const work = await fs.mkdtemp(join(tmpdir(), 'floe-bench-'));
  const rows: SummaryRow[] = [];
  try {
    if (only.includes('load')) rows.push(...(await benchLoad(work)));
    if (
      only.includes('ingest') ||
      only.includes('committer') ||
      only.includes('ingest-width') ||
      only.includes('commit-scale') ||
      only.includes('framing')
    ) {
      const dynamo = await startDynalite();
      try {
        if (only.includes('ingest')) rows.push(...(await benchIngest(dynamo, work)));
        if (only.includes('committer')) {
          rows.push(...(await benchCommitTables(dynamo, work)));
          rows.push(...(await benchCommitHistory(dynamo, work)));
        }
        if (only.includes('ingest-width')) rows.push(...(await benchIngestWidth(dynamo, work)));
        if (only.includes('commit-scale')) rows.push(...(await benchCommitScale(dynamo, work)));
        if (only.includes('framing')) rows.push(...(await benchFraming(dynamo, work)));
      } finally {
        await dynamo.close();
      }
    }
    if (only.includes('startup')) rows.push(...(await benchStartup(work)));
    if (only.includes('wide')) rows.push(...(await benchWide(work)));
    if (only.includes('maintenance')) rows.push(...(await benchMaintenance(work)));
    if (only.includes('upsert')) rows.push(...(await benchUpsert(work)));
    if (only.includes('width')) rows.push(...(await benchWidth(work)));
    if (only.includes('freshness')) rows.push(...(await benchFreshness(work)));
  } finally {
    if (process.env.BENCH_KEEP === '1') console.log(`\nkept ${work}`);
    else await fs.rm(work, { recursive: true, force: true });
  }
  console.log(`\n## Results (${node()}, ${((performance.now() - started) / 1000).toFixed(0)} s in all)\n`);
  printSummary(rows);
  await writeProfileWindows();
}

function node(): string {
  return `Node ${process.versions.node}`;
}

await main();
