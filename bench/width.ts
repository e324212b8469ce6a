/**
 * Width (issue 18): `floe load` against DuckDB, **process to process**, side by side in the same
 * run, alternating, medians of wall time and peak RSS (`process.resourceUsage().maxRSS`, written
 * by bench/child.mjs as each process exits):
 *
 *   a  uniform, one table   the flights file, no routing rule, `partitioning.candidates: []`
 *                           (everything lands in `unknown_events`); DuckDB: COPY … TO one file
 *   b  mixed corpus         the sample events (ORDER/USER/CLICK v2, as bench/load.ts), the default
 *                           config (3 tables by event_type × event_date × region); DuckDB: one
 *                           sparse file
 *   c  ~230 tables          the flights file, `routing.template: flights_{origin}`; DuckDB:
 *                           COPY … TO dir (PARTITION_BY origin)
 *   d  growth               c at records / 3 and records (and × 10 with BENCH_WIDTH_BIG=1)
 *
 * Each side is its own process: `node bench/child.mjs bin/floe.mjs load FILE -w DIR [-c CONFIG]
 * --quiet [BENCH_FLOE_ARGS]` into a fresh warehouse (its report's "N rows committed to T
 * table(s)" must match the input), and `node bench/child.mjs bench/duckdb-child.mjs` on one thread
 * and at DuckDB's default threads (it counts its output's rows). The order of the three rotates
 * from run to run. Ratio = DuckDB s / Floe s (> 1: Floe faster).
 *
 * Knobs (env): BENCH_WIDTH_RUNS (3), BENCH_WIDTH_RECORDS (3,000,000 flights), BENCH_WIDTH_MIXED
 * (sample events of b; default records / 4: about the same bytes), BENCH_WIDTH_BIG=1 (growth also
 * at records × 10: 30 M ≈ 2.6 GB), BENCH_WIDTH_ONLY (a,b,c,d subset), BENCH_FLOE_ARGS (extra
 * `floe load` arguments, split on spaces), BENCH_FLOE_BIN (another checkout's bin/floe.mjs),
 * BENCH_SEED (7), BENCH_KEEP=1 (keep the inputs, warehouses and DuckDB outputs).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, promises as fs, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sampleEvents, toNdjsonLine } from '../lambdas/src/sample/sample-events.ts';
import { envInt, fmtInt, median, type SummaryRow } from './common.ts';
import { writeFlightsFile } from './flights.ts';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const CHILD = here('./child.mjs');
const DUCK_CHILD = here('./duckdb-child.mjs');
const FLOE_BIN = resolve(process.env.BENCH_FLOE_BIN ?? here('../bin/floe.mjs'));
/** scripts/build.mjs writes this last; a change during a timed run means the run rebuilt dist/. */
const BUILD_INFO = join(dirname(dirname(FLOE_BIN)), 'dist', 'build-info.json');

const MIB = 1024 * 1024;
const RSS_TARGET_MIB = 512;
/** Linear growth, with 10 % of slack: 3.3 for 3 × the records. */
const GROWTH_SLACK = 1.1;

type Side = 'floe' | 'duck1' | 'duckN';
const SIDES: readonly Side[] = ['floe', 'duck1', 'duckN'];

interface Input {
  readonly path: string;
  readonly kind: 'flights' | 'mixed';
  readonly lines: number;
  readonly bytes: number;
  /** Distinct origins (flights). */
  readonly origins: number;
  readonly topOriginShare: number;
}

interface Workload {
  readonly key: string;
  readonly label: string;
  readonly input: Input;
  /** floe.config.json contents; undefined: no -c (the default config). */
  readonly floeConfig?: unknown;
  readonly expectTables: number;
  readonly partitionBy?: string;
}

interface ProcRun {
  /** Spawn to exit, as seen by the parent. */
  readonly wallS: number;
  /** Process start to its `exit` event, as seen by the child. */
  readonly childWallS: number;
  readonly maxRssMiB: number;
  readonly cpuS: number;
  /** Floe: the share of records parsed one by one (the generic path), from its report. */
  readonly genericShare?: number;
}

interface WorkloadResult {
  readonly workload: Workload;
  readonly runs: Record<Side, ProcRun[]>;
  readonly duckThreads: number;
}

/** The median of one measure of one side's runs. */
const med = (m: Record<Side, ProcRun[]>, side: Side, f: (r: ProcRun) => number) => median(m[side].map(f));

/** Inputs by (kind, records, seed), generated once per run. */
const inputs = new Map<string, Promise<Input>>();

function flightsInput(dir: string, records: number, seed: number): Promise<Input> {
  const key = `flights-${records}-${seed}`;
  let p = inputs.get(key);
  if (!p) {
    p = (async () => {
      const t0 = performance.now();
      const path = join(dir, `${key}.ndjson`);
      const f = await writeFlightsFile(path, { records, seed });
      const top = Math.max(...f.origins.values());
      const input: Input = {
        path,
        kind: 'flights',
        lines: f.lines,
        bytes: f.bytes,
        origins: f.origins.size,
        topOriginShare: top / f.lines,
      };
      console.log(
        `generated ${fmtInt(records)} flights (${(f.bytes / MIB).toFixed(0)} MiB, ${f.origins.size} origins, busiest ${(
          input.topOriginShare * 100
        ).toFixed(1)} %) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      return input;
    })();
    inputs.set(key, p);
  }
  return p;
}

function mixedInput(dir: string, records: number, seed: number): Promise<Input> {
  const key = `mixed-${records}-${seed}`;
  let p = inputs.get(key);
  if (!p) {
    p = (async () => {
      const t0 = performance.now();
      const path = join(dir, `${key}.ndjson`);
      const it = sampleEvents({ seed, nowMs: Date.UTC(2026, 10, 29, 12), version: 'v2' });
      const out = createWriteStream(path);
      let bytes = 0;
      let chunk: string[] = [];
      const flush = async () => {
        const text = `${chunk.join('\n')}\n`;
        chunk = [];
        bytes += Buffer.byteLength(text);
        if (!out.write(text)) await once(out, 'drain');
      };
      try {
        for (let i = 0; i < records; i++) {
          chunk.push(toNdjsonLine(it.next().value as Record<string, unknown>));
          if (chunk.length === 4096) await flush();
        }
        if (chunk.length > 0) await flush();
      } finally {
        out.end();
        await once(out, 'close');
      }
      console.log(
        `generated ${fmtInt(records)} sample events (${(bytes / MIB).toFixed(0)} MiB) in ${(
          (performance.now() - t0) / 1000
        ).toFixed(1)} s`,
      );
      return { path, kind: 'mixed', lines: records, bytes, origins: 0, topOriginShare: 0 } satisfies Input;
    })();
    inputs.set(key, p);
  }
  return p;
}

interface Spawned {
  readonly run: ProcRun;
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node bench/child.mjs target args…` in `cwd`, its output collected (stderr: the last 64 KiB). */
async function runChild(
  target: string,
  args: readonly string[],
  cwd: string,
  stats: string,
): Promise<Spawned> {
  await fs.rm(stats, { force: true });
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_CHILD_OUT: stats };
  delete env.BENCH_CHILD_FD;
  // `floe load` runs itself again with this glibc setting when it is not set (bin/floe.mjs); set
  // here, the measured process is the load itself, not a parent waiting for it.
  if (target === FLOE_BIN) env.MALLOC_MMAP_THRESHOLD_ ??= '131072';
  const t0 = performance.now();
  const child = spawn(process.execPath, [CHILD, target, ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s;
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr = (stderr + s).slice(-65536);
  });
  const [code] = (await once(child, 'close')) as [number | null];
  const wallS = (performance.now() - t0) / 1000;
  const text = await fs.readFile(stats, 'utf8').catch(() => '');
  const last = text.trim().split('\n').at(-1);
  if (!last) throw new Error(`${target} wrote no stats (exit ${code}):\n${stderr}`);
  const s = JSON.parse(last) as { maxRssKiB: number; wallMs: number; userMs: number; systemMs: number };
  return {
    run: {
      wallS,
      childWallS: s.wallMs / 1000,
      maxRssMiB: s.maxRssKiB / 1024,
      cpuS: (s.userMs + s.systemMs) / 1000,
    },
    code,
    stdout,
    stderr,
  };
}

const FLOE_ARGS = (process.env.BENCH_FLOE_ARGS ?? '').split(/\s+/).filter((a) => a !== '');
const KEEP = process.env.BENCH_KEEP === '1';

function buildStamp(): number | undefined {
  return statSync(BUILD_INFO, { throwIfNoEntry: false })?.mtimeMs;
}

const REPORT = /([\d,]+) lines read, ([\d,]+) rows committed to ([\d,]+) table\(s\), ([\d,]+) rejected/;
/** Printed when some records took the generic path (cli/load-report.ts). */
const GENERIC = /([\d,]+) record\(s\) \([\d.]+ %\) parsed one by one/;

async function floeRun(w: Workload, dir: string, config: string | undefined, n: number): Promise<ProcRun> {
  for (let attempt = 1; ; attempt++) {
    const wh = join(dir, `floe-${w.key}-${w.input.lines}-${n}`);
    await fs.rm(wh, { recursive: true, force: true });
    const before = buildStamp();
    const args = ['load', w.input.path, '-w', wh, ...(config ? ['-c', config] : []), '--quiet', ...FLOE_ARGS];
    const r = await runChild(FLOE_BIN, args, dir, join(dir, 'stats.jsonl'));
    if (before !== buildStamp() && attempt === 1) {
      console.log('  (dist/ was rebuilt during this Floe run: the sources changed; run repeated)');
      continue;
    }
    if (r.code !== 0)
      throw new Error(`floe load exited ${r.code} on ${w.label}:\n${r.stderr}\n${r.stdout.slice(-4000)}`);
    const m = REPORT.exec(r.stdout);
    if (!m) throw new Error(`floe load printed no report line on ${w.label}:\n${r.stdout.slice(-4000)}`);
    const [lines, rows, tables, rejected] = m.slice(1, 5).map((s) => Number(s.replaceAll(',', '')));
    if (lines !== w.input.lines || rows !== w.input.lines || tables !== w.expectTables || rejected !== 0)
      throw new Error(
        `floe load on ${w.label}: ${m[0]}; expected ${fmtInt(w.input.lines)} lines and rows, ${w.expectTables} table(s), 0 rejected`,
      );
    if (!KEEP) await fs.rm(wh, { recursive: true, force: true });
    const generic = GENERIC.exec(r.stdout);
    return { ...r.run, genericShare: generic ? Number(generic[1]!.replaceAll(',', '')) / lines : 0 };
  }
}

async function duckRun(
  w: Workload,
  dir: string,
  threads: '1' | 'default',
  n: number,
): Promise<[ProcRun, number]> {
  const out = join(dir, `duck${threads}-${w.key}-${w.input.lines}-${n}${w.partitionBy ? '' : '.parquet'}`);
  await fs.rm(out, { recursive: true, force: true });
  const args = [w.input.path, out, '--threads', threads, '--expect', String(w.input.lines)];
  if (w.partitionBy) args.push('--partition-by', w.partitionBy);
  const r = await runChild(DUCK_CHILD, args, dir, join(dir, 'stats.jsonl'));
  if (r.code !== 0) throw new Error(`duckdb-child exited ${r.code} on ${w.label}:\n${r.stderr}`);
  const res = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { rows: number; threads: number };
  if (res.rows !== w.input.lines) throw new Error(`DuckDB wrote ${res.rows} rows on ${w.label}`);
  if (!KEEP) await fs.rm(out, { recursive: true, force: true });
  return [r.run, res.threads];
}

async function runWorkload(w: Workload, dir: string, runs: number): Promise<WorkloadResult> {
  console.log(
    `\n### ${w.label}: ${fmtInt(w.input.lines)} records, ${(w.input.bytes / MIB).toFixed(0)} MiB, ${runs} alternating runs`,
  );
  let config: string | undefined;
  if (w.floeConfig !== undefined) {
    config = join(dir, `floe-${w.key}.config.json`);
    await fs.writeFile(config, JSON.stringify(w.floeConfig));
  }
  const result: Record<Side, ProcRun[]> = { floe: [], duck1: [], duckN: [] };
  let duckThreads = 0;
  const fmt = (r: ProcRun) => `${r.wallS.toFixed(2)} s ${r.maxRssMiB.toFixed(0)} MiB`;
  for (let run = 0; run < runs; run++) {
    // Rotate the order so that no side always goes first (or right after another's file writes).
    const order = SIDES.map((_, i) => SIDES[(i + run) % SIDES.length]!);
    const parts: string[] = [];
    for (const side of order) {
      let r: ProcRun;
      if (side === 'floe') r = await floeRun(w, dir, config, run);
      else {
        const [d, t] = await duckRun(w, dir, side === 'duck1' ? '1' : 'default', run);
        r = d;
        if (side === 'duckN') duckThreads = t;
      }
      result[side].push(r);
      parts.push(`${sideName(side, duckThreads)} ${fmt(r)}`);
    }
    console.log(`run ${run + 1}: ${parts.join(' | ')}`);
  }
  printWorkload(w, result, duckThreads);
  return { workload: w, runs: result, duckThreads };
}

function sideName(side: Side, threads: number): string {
  return side === 'floe' ? 'floe' : side === 'duck1' ? 'duckdb 1t' : `duckdb ${threads || 'default'}t`;
}

function printWorkload(w: Workload, m: Record<Side, ProcRun[]>, threads: number): void {
  const head = [
    'process (median of runs)',
    'wall s',
    'in-process s',
    'CPU s',
    'peak RSS MiB (max)',
    'rows/s',
  ];
  const rows = SIDES.map((side) => {
    const s = med(m, side, (r) => r.wallS);
    return [
      side === 'floe'
        ? `floe load${FLOE_ARGS.length ? ` ${FLOE_ARGS.join(' ')}` : ''}`
        : side === 'duck1'
          ? 'DuckDB, threads = 1'
          : `DuckDB, default threads (${threads})`,
      s.toFixed(2),
      med(m, side, (r) => r.childWallS).toFixed(2),
      med(m, side, (r) => r.cpuS).toFixed(2),
      `${med(m, side, (r) => r.maxRssMiB).toFixed(0)} (${Math.max(...m[side].map((r) => r.maxRssMiB)).toFixed(0)})`,
      fmtInt(w.input.lines / s),
    ];
  });
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i]!)).join(' | ')} |`;
  console.log('');
  console.log(line(head));
  console.log(`|${width.map((x) => '-'.repeat(x + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
  const f = med(m, 'floe', (r) => r.wallS);
  console.log(
    `DuckDB 1 thread / Floe: ${(med(m, 'duck1', (r) => r.wallS) / f).toFixed(2)}, DuckDB ${threads} threads / Floe: ${(
      med(m, 'duckN', (r) => r.wallS) / f
    ).toFixed(2)}`,
  );
}

const peakOf = (r: WorkloadResult, side: Side) => Math.max(...r.runs[side].map((x) => x.maxRssMiB));
const wallOf = (r: WorkloadResult, side: Side) => med(r.runs, side, (x) => x.wallS);

/** `width c: 230 tables, 3,000,000 flights` */
function nameOf(w: Workload): string {
  return `width ${w.key}: ${w.label}, ${fmtInt(w.input.lines)} ${w.input.kind === 'flights' ? 'flights' : 'events'}`;
}

function ratioRows(r: WorkloadResult, target1: number): SummaryRow[] {
  const w = r.workload;
  const f = wallOf(r, 'floe');
  const d1 = wallOf(r, 'duck1');
  const dn = wallOf(r, 'duckN');
  const name = nameOf(w);
  return [
    {
      measure: `${name}: DuckDB 1 thread / Floe`,
      value: `${(d1 / f).toFixed(2)} (${d1.toFixed(2)} s vs ${f.toFixed(2)} s)`,
      target: `≥ ${target1.toFixed(2)}`,
      pass: d1 / f >= target1,
    },
    {
      measure: `${name}: DuckDB ${r.duckThreads} threads / Floe`,
      value: `${(dn / f).toFixed(2)} (${dn.toFixed(2)} s vs ${f.toFixed(2)} s)`,
      target: '≥ 0.80',
      pass: dn / f >= 0.8,
    },
    rssRow(r),
    genericRow(r),
  ];
}

function genericRow(r: WorkloadResult): SummaryRow {
  const share = Math.max(...r.runs.floe.map((x) => x.genericShare ?? 0));
  return {
    measure: `${nameOf(r.workload)}: Floe records through the generic path`,
    value: `${(share * 100).toFixed(2)} %`,
    target: '< 1 %',
    pass: share < 0.01,
  };
}

function rssRow(r: WorkloadResult): SummaryRow {
  const w = r.workload;
  const p = peakOf(r, 'floe');
  return {
    measure: `${nameOf(w)}: Floe peak RSS`,
    value: `${p.toFixed(0)} MiB (DuckDB 1 thread ${peakOf(r, 'duck1').toFixed(0)}, ${r.duckThreads} threads ${peakOf(
      r,
      'duckN',
    ).toFixed(0)})`,
    target: `≤ ${RSS_TARGET_MIB} MiB`,
    pass: p <= RSS_TARGET_MIB,
  };
}

function growthRow(small: WorkloadResult, big: WorkloadResult): SummaryRow {
  const k = big.workload.input.lines / small.workload.input.lines;
  const t = (side: Side) => wallOf(big, side) / wallOf(small, side);
  const target = k * GROWTH_SLACK;
  return {
    measure: `width d: Floe time ${fmtInt(big.workload.input.lines)} / ${fmtInt(small.workload.input.lines)} flights (230 tables)`,
    value: `${t('floe').toFixed(2)} (${wallOf(small, 'floe').toFixed(2)} → ${wallOf(big, 'floe').toFixed(2)} s; RSS ${peakOf(
      small,
      'floe',
    ).toFixed(
      0,
    )} → ${peakOf(big, 'floe').toFixed(0)} MiB; DuckDB 1t ${t('duck1').toFixed(2)}, ${big.duckThreads}t ${t('duckN').toFixed(2)})`,
    target: `≤ ${target.toFixed(2)}`,
    pass: t('floe') <= target,
  };
}

/** Untimed: builds dist/ if it is stale (and fails clearly if it cannot), warms the file cache. */
async function warmUp(dir: string, seed: number): Promise<void> {
  const help = spawnSync(process.execPath, [FLOE_BIN, '--help'], { encoding: 'utf8' });
  if (help.status !== 0) throw new Error(`${FLOE_BIN} --help failed:\n${help.stderr}`);
  const tiny = await flightsInput(dir, 1000, seed);
  const w: Workload = {
    key: 'warm',
    label: 'warm-up',
    input: tiny,
    floeConfig: { routing: { template: 'flights_{origin}' } },
    expectTables: tiny.origins,
    partitionBy: 'origin',
  };
  const config = join(dir, 'floe-warm.config.json');
  await fs.writeFile(config, JSON.stringify(w.floeConfig));
  await floeRun(w, dir, config, 0);
  await duckRun(w, dir, '1', 0);
  await duckRun(w, dir, 'default', 0);
}

export async function benchWidth(work: string): Promise<SummaryRow[]> {
  const runs = envInt('BENCH_WIDTH_RUNS', 3);
  const records = envInt('BENCH_WIDTH_RECORDS', 3_000_000);
  const mixed = envInt('BENCH_WIDTH_MIXED', Math.max(1, Math.round(records / 4)));
  const seed = envInt('BENCH_SEED', 7);
  const big = process.env.BENCH_WIDTH_BIG === '1';
  const only = (process.env.BENCH_WIDTH_ONLY ?? 'a,b,c,d').split(',').map((s) => s.trim());
  for (const o of only)
    if (!['a', 'b', 'c', 'd'].includes(o))
      throw new Error(`BENCH_WIDTH_ONLY: unknown workload '${o}' (a, b, c, d)`);
  const dir = join(work, 'width');
  await fs.mkdir(dir, { recursive: true });
  console.log(
    `\n## Width (issue 18): floe load vs DuckDB, process to process, ${runs} alternating runs per workload (${availableParallelism()} cores)`,
  );
  console.log(`floe: ${FLOE_BIN}${FLOE_ARGS.length ? ` (extra args: ${FLOE_ARGS.join(' ')})` : ''}`);
  const rows: SummaryRow[] = [];
  try {
    await warmUp(dir, seed);
    const flights = (n: number) => flightsInput(dir, n, seed);
    const tables = (input: Input, key: string): Workload => ({
      key,
      label: '230 tables',
      input,
      floeConfig: { routing: { template: 'flights_{origin}' } },
      expectTables: input.origins,
      partitionBy: 'origin',
    });
    if (only.includes('a')) {
      const r = await runWorkload(
        {
          key: 'a',
          label: '1 table',
          input: await flights(records),
          floeConfig: { partitioning: { candidates: [] } },
          expectTables: 1,
        },
        dir,
        runs,
      );
      rows.push(...ratioRows(r, 0.8));
    }
    if (only.includes('b')) {
      const r = await runWorkload(
        {
          key: 'b',
          label: 'mixed sample (3 tables)',
          input: await mixedInput(dir, mixed, seed),
          expectTables: 3,
        },
        dir,
        runs,
      );
      rows.push(...ratioRows(r, 1.5));
    }
    let full: WorkloadResult | undefined;
    if (only.includes('c') || only.includes('d')) {
      full = await runWorkload(tables(await flights(records), 'c'), dir, runs);
      if (only.includes('c')) rows.push(...ratioRows(full, 1.0));
    }
    if (only.includes('d') && full) {
      const small = await runWorkload(
        tables(await flights(Math.max(1, Math.round(records / 3))), 'd'),
        dir,
        runs,
      );
      rows.push(growthRow(small, full));
      rows.push(rssRow(small));
      if (big) {
        const large = await runWorkload(tables(await flights(records * 10), 'd'), dir, runs);
        rows.push(growthRow(full, large));
        rows.push(rssRow(large));
      }
    }
  } finally {
    if (KEEP) console.log(`\nkept width inputs and outputs in ${dir}`);
    else {
      inputs.clear();
      await fs.rm(dir, { recursive: true, force: true });
    }
  }
  return rows;
}
