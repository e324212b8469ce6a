/**
 * Work per record must be linear in its size (issue 10). One record through `floe load`
 * (parse, route, infer, convert, Parquet, commit on the local disk), timed in this process after
 * a warm-up, median of several runs, sizes interleaved so noise spreads evenly:
 *
 * - one record with 1k, 2k, 4k, 8k and 16k top-level keys, with the column guard raised so it
 *   lands: each doubling may cost at most 2.2× (target);
 * - the records a producer should never send, under the default guards: 20,000 keys,
 *   5,000-deep objects and arrays, a 5 MB string, a 100,000-element array — each must land or
 *   be dead-lettered in well under a second (target < 1 s).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FileCatalog } from '../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../lambdas/src/adapters/local/local-object-store.ts';
import { fixedClock, seededIds } from '../lambdas/src/adapters/local/system-clock.ts';
import { loadSources } from '../lambdas/src/app/load.ts';
import { type FloeConfig, parseConfig } from '../lambdas/src/config.ts';
import { envInt, median, type SummaryRow } from './common.ts';

const KEYS = [1000, 2000, 4000, 8000, 16000];
const execFileP = promisify(execFile);

function wideRecord(n: number): string {
  const parts = ['"event_type":"wide"'];
  for (let i = 0; i < n; i++) parts.push(`"k${i}":${i % 3 === 0 ? `"v${i}"` : i % 3 === 1 ? i : i + 0.5}`);
  return `{${parts.join(',')}}`;
}

const SHAPES: Record<string, () => string> = {
  '20,000 keys': () => wideRecord(20_000),
  '5,000-deep objects': () => `{"event_type":"wide","a":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`,
  '5,000-deep arrays': () => `{"event_type":"wide","a":${'['.repeat(5000)}1${']'.repeat(5000)}}`,
  '5 MB string': () => `{"event_type":"wide","s":"${'x'.repeat(5_000_000)}"}`,
  '100,000-element array': () =>
    `{"event_type":"wide","xs":[${Array.from({ length: 100_000 }, (_, i) => i).join(',')}]}`,
};

/** One record loaded into a fresh warehouse; returns ms and what became of it. */
async function loadOne(
  work: string,
  line: string,
  config: FloeConfig,
): Promise<{ ms: number; outcome: string }> {
  const dir = mkdtempSync(join(work, 'wide-'));
  try {
    const store = new LocalObjectStore();
    const catalog = new FileCatalog(store, fileUri(dir));
    const dead: string[] = [];
    const t0 = performance.now();
    const report = await loadSources(
      {
        catalog,
        store,
        clock: fixedClock(Date.UTC(2026, 10, 29)),
        ids: seededIds(1),
        config,
        onDeadLetter: (d) => {
          dead.push(d.reason);
        },
        sleep: async () => undefined,
      },
      [{ name: 'wide.ndjson', lines: [line] }],
    );
    const ms = performance.now() - t0;
    if (report.failures.length > 0)
      throw new Error(`wide bench: table failed: ${String(report.failures[0]!.error)}`);
    return { ms, outcome: report.rows === 1 ? 'lands' : `dead letter (${dead.join(', ')})` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchWide(work: string): Promise<SummaryRow[]> {
  const runs = envInt('BENCH_WIDE_RUNS', 7);
  const defaults = parseConfig({});
  console.log(`\n## One wide record (a fresh process per size: ${runs} runs after a warm-up, median)\n`);
  const rows: SummaryRow[] = [];
  let prev: number | undefined;
  for (const n of KEYS) {
    // Its own process, so a size pays for its own heap growth and garbage, not its neighbours'.
    const t = await childMedian(n, runs);
    const ratio = prev === undefined ? undefined : t / prev;
    console.log(
      `  ${String(n).padStart(6)} keys: ${t.toFixed(0)} ms${ratio ? ` (${ratio.toFixed(2)}× the half)` : ''}`,
    );
    rows.push({
      measure: `one record, ${n / 1000}k keys (lands; guard raised)`,
      value: `${t.toFixed(0)} ms${ratio === undefined ? '' : `, ${ratio.toFixed(2)}×`}`,
      target: ratio === undefined ? '' : '≤ 2.2× per doubling',
      ...(ratio === undefined ? {} : { pass: ratio <= 2.2 }),
    });
    prev = t;
  }
  console.log('\n## Records past the default guards\n');
  for (const [name, make] of Object.entries(SHAPES)) {
    const line = make();
    await loadOne(work, line, defaults);
    const ms: number[] = [];
    let outcome = '';
    for (let r = 0; r < runs; r++) {
      const o = await loadOne(work, line, defaults);
      ms.push(o.ms);
      outcome = o.outcome;
    }
    const t = median(ms);
    console.log(`  ${name}: ${outcome} in ${t.toFixed(0)} ms`);
    rows.push({
      measure: `${name} (default guards)`,
      value: `${outcome}, ${t.toFixed(0)} ms`,
      target: '< 1 s',
      pass: t < 1000,
    });
  }
  return rows;
}

/** Median ms of `runs` loads of an `n`-key record that lands, in a child process. */
async function childMedian(n: number, runs: number): Promise<number> {
  const { stdout } = await execFileP(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), 'child', String(n), String(runs)],
    { maxBuffer: 1 << 20 },
  );
  const ms = Number(/median (\d+(?:\.\d+)?)/.exec(stdout)?.[1]);
  if (!Number.isFinite(ms)) throw new Error(`wide bench child: no result in ${stdout}`);
  return ms;
}

if (process.argv[2] === 'child') {
  const n = Number(process.argv[3]);
  const runs = Number(process.argv[4]);
  const work = mkdtempSync(join(tmpdir(), 'floe-wide-'));
  try {
    const raised = parseConfig({ guards: { maxColumnsPerTable: 100_000 } });
    const line = wideRecord(n);
    for (let w = 0; w < 2; w++) await loadOne(work, line, raised); // JIT, wasm, caches
    const ms: number[] = [];
    for (let r = 0; r < runs; r++) {
      const o = await loadOne(work, line, raised);
      if (o.outcome !== 'lands') throw new Error(`${n} keys: ${o.outcome}`);
      ms.push(o.ms);
    }
    console.log(`median ${median(ms)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
