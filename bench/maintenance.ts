/**
 * "A month in minutes" (issue 12): 2,000 one-minute commits to a partitioned table on a simulated
 * clock, into two warehouses built alike — one left alone, one maintained every simulated hour
 * (compaction, manifest rewrite, snapshot expiry; orphan cleanup once a simulated day) — then:
 *
 *   1. commit time on the month-old tables (last 100 commits) against fresh tables committed to in
 *      the same iterations (target: maintained ≤ 1.2 × fresh);
 *   2. metadata.json size over time (target: bounded with maintenance, see `boundedCriterion`);
 *   3. `floe query` of a GROUP BY over the whole un-maintained table, before and after a full
 *      maintenance of it (target: ≥ 5 × faster after; results must be identical);
 *   4. data files and snapshots at the end, maintenance time per run, and the peak memory of one
 *      compaction bin per input MiB (a child process: bench/compact-memory.ts).
 *
 * Env: BENCH_MONTH_COMMITS (2000), BENCH_MONTH_ROWS (100 rows per commit), BENCH_MONTH_EVERY (60
 * commits between maintenance runs), BENCH_MONTH_ORPHANS_EVERY (1440), BENCH_MONTH_RETAIN (60
 * snapshots), BENCH_MONTH_TIMED (100 last commits timed), BENCH_MONTH_FRESH_SPAN (10 commits per
 * fresh table), BENCH_MONTH_QUERY_RUNS (5), BENCH_COMPACT_MIB (128 = DEFAULT_MAX_BIN_BYTES),
 * BENCH_COMPACT_SMALL_MIB (4), BENCH_COMPACT_ONLY (1: only the compaction-memory part, ~1 min).
 * See bench/README.md.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FileCatalog } from '../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../lambdas/src/adapters/local/local-object-store.ts';
import { randomIds } from '../lambdas/src/adapters/local/system-clock.ts';
import { type LoadReport, loadSources } from '../lambdas/src/app/load.ts';
import { type TableHealth, tableHealth } from '../lambdas/src/app/maintain/health.ts';
import {
  type MaintenanceDeps,
  maintainTable,
  type TableMaintenanceReport,
} from '../lambdas/src/app/maintain/index.ts';
import { liveRowsReader } from '../lambdas/src/app/maintain/live-rows.ts';
import { DEFAULT_MAX_BIN_BYTES, type MaintenanceOptions } from '../lambdas/src/app/maintain/options.ts';
import { queryCommand } from '../lambdas/src/cli/query-command.ts';
import { type FloeConfig, parseConfig } from '../lambdas/src/config.ts';
import { decodeManifestList } from '../lambdas/src/iceberg/manifest/index.ts';
import { currentSnapshot, type TableMetadata } from '../lambdas/src/iceberg/table-metadata.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../lambdas/src/ports/catalog.ts';
import type { Clock } from '../lambdas/src/ports/clock.ts';
import { sampleEvents, toNdjsonLine } from '../lambdas/src/sample/sample-events.ts';
import { envInt, fmtInt, median, profiled, type SummaryRow } from './common.ts';
import type { CompactMemoryReport } from './compact-memory.ts';

const SEED = envInt('BENCH_SEED', 7);
const COMMITS = envInt('BENCH_MONTH_COMMITS', 2_000);
const ROWS = envInt('BENCH_MONTH_ROWS', 100);
const EVERY = envInt('BENCH_MONTH_EVERY', 60);
const ORPHANS_EVERY = envInt('BENCH_MONTH_ORPHANS_EVERY', 1_440);
const RETAIN = envInt('BENCH_MONTH_RETAIN', 60);
const TIMED = Math.min(envInt('BENCH_MONTH_TIMED', 100), COMMITS);
const FRESH_SPAN = envInt('BENCH_MONTH_FRESH_SPAN', 10);
const QUERY_RUNS = envInt('BENCH_MONTH_QUERY_RUNS', 7);
const COMPACT_MIB = envInt('BENCH_COMPACT_MIB', DEFAULT_MAX_BIN_BYTES / 1048576);
const COMPACT_SMALL_MIB = envInt('BENCH_COMPACT_SMALL_MIB', 4);
/** A stray file (an abandoned writer's) lands in each table every this many commits: orphans to find. */
const STRAY_EVERY = 100;
/** Collect garbage before each timed commit (BENCH_MONTH_GC=0: don't). */
const GC_BEFORE = process.env.BENCH_MONTH_GC !== '0';
/** Events per load (one file each) when building compaction's input. */
const COMPACT_LOAD_ROWS = 30_000;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Simulated time of commit 1: 2026-11-01T00:00Z. */
const START_MS = Date.UTC(2026, 10, 1);
const TABLE = 'order_events';
const MiB = 1048576;
const PERMUTATIONS3 = [
  [0, 1, 2],
  [1, 2, 0],
  [2, 0, 1],
  [0, 2, 1],
  [2, 1, 0],
  [1, 0, 2],
];

/**
 * A full garbage collection now: the un-maintained table's commits leave megabytes of garbage
 * (its 2 MB metadata.json parsed and serialised each time) whose collection would otherwise land
 * in whichever commit runs next — adding the same milliseconds to fresh and maintained commits
 * and pulling their ratio towards 1.
 */
function collectGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}
let gc: (() => void) | undefined;

// ---------------------------------------------------------------------------------------------
// A simulated clock, and a store that gives files their simulated write time

/** Time stands at `at` (set by the driver); each read moves it 1 ms on, so it never runs backwards. */
class SimClock implements Clock {
  private t = 0;
  at(ms: number): void {
    this.t = Math.max(this.t, ms);
  }
  nowMs(): number {
    this.t += 1;
    return this.t;
  }
}

/**
 * A local store that remembers what was written since the last `stamp`, so the driver can give
 * those files the simulated time as their mtime (untimed): orphan cleanup compares listed mtimes
 * with the injected clock, and real mtimes (minutes apart) would make every new file look a day old.
 */
class StampingStore extends LocalObjectStore {
  private written: string[] = [];
  override async put(uri: string, bytes: Uint8Array | string): Promise<void> {
    await super.put(uri, bytes);
    this.written.push(uri);
  }
  override async putIfAbsent(uri: string, bytes: Uint8Array | string): Promise<boolean> {
    const ok = await super.putIfAbsent(uri, bytes);
    if (ok) this.written.push(uri);
    return ok;
  }
  async stamp(ms: number): Promise<void> {
    const files = this.written;
    this.written = [];
    const t = new Date(ms);
    await Promise.all(files.map((u) => fs.utimes(this.pathOf(u), t, t).catch(() => undefined)));
  }
}

interface Warehouse {
  readonly name: string;
  readonly dir: string;
  readonly store: StampingStore;
  readonly catalog: Catalog;
  /**
   * Time in `loadTable` and `commitTable` (metadata.json read, parse, serialize, write), and when
   * each commit ended (marks the steps of a maintenance run).
   */
  readonly catalogTime: CatalogTime;
  readonly clock: SimClock;
  readonly config: FloeConfig;
}

async function warehouse(work: string, name: string): Promise<Warehouse> {
  const dir = join(work, name);
  await fs.mkdir(join(dir, '_floe'), { recursive: true });
  const store = new StampingStore();
  const catalogTime: CatalogTime = { ms: 0, commits: [] };
  return {
    name,
    dir,
    store,
    catalog: timedCatalog(new FileCatalog(store, fileUri(dir)), catalogTime),
    catalogTime,
    clock: new SimClock(),
    config: parseConfig({}),
  };
}

interface CatalogTime {
  ms: number;
  /** performance.now() at the end of each commit. */
  commits: number[];
}

/** The catalog, with the time spent in its metadata reads and writes added up in `time`. */
function timedCatalog(inner: FileCatalog, time: CatalogTime): Catalog {
  const timed =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const t0 = performance.now();
      try {
        return await f(...a);
      } finally {
        time.ms += performance.now() - t0;
      }
    };
  return {
    listNamespaces: () => inner.listNamespaces(),
    createNamespace: (ns) => inner.createNamespace(ns),
    listTables: (ns) => inner.listTables(ns),
    tableExists: (id) => inner.tableExists(id),
    defaultLocation: (id) => inner.defaultLocation(id),
    createTable: (id, m) => inner.createTable(id, m),
    loadTable: timed((id: TableIdentifier) => inner.loadTable(id)),
    commitTable: timed(async (base: LoadedTable, m: TableMetadata) => {
      const out = await inner.commitTable(base, m);
      time.commits.push(performance.now());
      return out;
    }),
  };
}

const tableId = (w: Warehouse, name = TABLE): TableIdentifier => ({ namespace: w.config.namespace, name });

/** One minute's rows (ORDER events at simulated time `ms`), as NDJSON lines. */
function minuteLines(i: number, ms: number): string[] {
  const it = sampleEvents({ seed: SEED * 100_000 + i, nowMs: ms, version: 'v2' });
  const out: string[] = [];
  while (out.length < ROWS) {
    const ev = it.next().value as Record<string, unknown>;
    if (ev.event_type === 'ORDER') out.push(toNdjsonLine({ ...ev }));
  }
  return out;
}

async function commit(w: Warehouse, lines: readonly string[], ms: number, name: string): Promise<number> {
  w.clock.at(ms);
  const t0 = performance.now();
  const report: LoadReport = await loadSources(
    {
      catalog: w.catalog,
      store: w.store,
      clock: w.clock,
      ids: randomIds,
      config: w.config,
      sleep: async () => undefined,
      onDeadLetter: (d) => {
        throw new Error(`unexpected dead letter: ${d.detail}`);
      },
    },
    [{ name, lines }],
  );
  const took = performance.now() - t0;
  if (report.failures.length > 0 || report.tables.length !== 1 || report.tables[0]!.snapshotId === undefined)
    throw new Error(`${w.name}: commit ${name} did not land: ${String(report.failures[0]?.error)}`);
  await w.store.stamp(ms);
  return took;
}

async function metadataBytes(w: Warehouse, name = TABLE): Promise<number> {
  const t = await w.catalog.loadTable(tableId(w, name));
  return (await fs.stat(w.store.pathOf(t.metadataLocation))).size;
}

function maintenanceDeps(w: Warehouse, progress?: (m: string) => void): MaintenanceDeps {
  return {
    catalog: w.catalog,
    store: w.store,
    clock: w.clock,
    ids: randomIds,
    sleep: async () => undefined,
    liveRows: liveRowsReader(w.store),
    ...(progress ? { progress } : {}),
  };
}

/** The hourly run: compaction, manifest rewrite, expiry (last RETAIN snapshots / one hour); orphans daily. */
function hourlyOptions(orphans: boolean): MaintenanceOptions {
  return {
    steps: { compact: true, rewriteManifests: true, expire: true, orphans },
    retainLast: RETAIN,
    expireOlderThanMs: EVERY * MINUTE,
    orphansOlderThanMs: HOUR,
  };
}

/** Where a maintenance run's time went (ms), from its progress messages and commits. */
interface StepTimes {
  /** Loading the table, its health before, planning the compaction. */
  readonly plan: number;
  /** Reading, rewriting and committing the small files. */
  readonly compact: number;
  readonly rewriteManifests: number;
  /** Expiry commit and deleting what only expired snapshots reached. */
  readonly expire: number;
  readonly orphans: number;
  /** The health after (a scan plan of the new snapshot). */
  readonly after: number;
}

interface MaintenanceRun {
  readonly ms: number;
  readonly report: TableMaintenanceReport;
  /** Only when compaction and manifest rewrite both committed (so the marks are unambiguous). */
  readonly steps?: StepTimes;
}

async function maintain(w: Warehouse, ms: number, opts: MaintenanceOptions): Promise<MaintenanceRun> {
  w.clock.at(ms);
  const said: { text: string; t: number }[] = [];
  w.catalogTime.commits = [];
  const t0 = performance.now();
  const report = await maintainTable(
    maintenanceDeps(w, (text) => said.push({ text, t: performance.now() })),
    tableId(w),
    opts,
  );
  const t1 = performance.now();
  if (report.failed.length > 0)
    throw new Error(
      `${w.name}: maintenance failed: ${report.failed.map((f) => `${f.step}: ${f.error}`).join('; ')}`,
    );
  if (report.skipped.length > 0)
    throw new Error(
      `${w.name}: maintenance skipped: ${report.skipped.map((f) => `${f.step}: ${f.reason}`).join('; ')}`,
    );
  await w.store.stamp(ms);
  const at = (word: string) => said.find((x) => x.text.includes(`: ${word}: `))?.t;
  const planned = at('compaction');
  const expired = at('expiry');
  const orphaned = opts.steps.orphans ? at('orphans') : expired;
  const [compacted, rewritten] = w.catalogTime.commits;
  const clear =
    report.compaction?.snapshotId !== undefined &&
    report.manifests?.snapshotId !== undefined &&
    w.catalogTime.commits.length === 3;
  const steps =
    clear && planned && compacted && rewritten && expired && orphaned
      ? {
          plan: planned - t0,
          compact: compacted - planned,
          rewriteManifests: rewritten - compacted,
          expire: expired - rewritten,
          orphans: orphaned - expired,
          after: t1 - orphaned,
        }
      : undefined;
  return { ms: t1 - t0, report, ...(steps ? { steps } : {}) };
}

async function strayFile(w: Warehouse, i: number, ms: number): Promise<void> {
  const t = await w.catalog.loadTable(tableId(w));
  await w.store.put(`${t.metadata.location}/data/stray-${i}.parquet`, new Uint8Array(1024));
  await w.store.stamp(ms);
}

async function manifestCount(w: Warehouse): Promise<number> {
  const t = await w.catalog.loadTable(tableId(w));
  const snap = currentSnapshot(t.metadata);
  return snap?.['manifest-list'] ? decodeManifestList(await w.store.get(snap['manifest-list'])).length : 0;
}

const kib = (b: number) => `${(b / 1024).toFixed(0)} KiB`;
const msText = (x: number) => `${x.toFixed(1)} ms`;
const health = (h: TableHealth) =>
  `${fmtInt(h.dataFiles)} data files, ${fmtInt(h.snapshots)} snapshots, ${fmtInt(Number(h.records))} rows, metadata.json ${kib(h.metadataBytes)}`;

// ---------------------------------------------------------------------------------------------
// The month

export async function benchMaintenance(work: string): Promise<SummaryRow[]> {
  if (process.env.BENCH_COMPACT_ONLY === '1') return benchCompactMemory(work);
  console.log(
    `\n## A month in minutes: ${fmtInt(COMMITS)} one-minute commits of ${ROWS} rows (ORDER events, partitioned by event_date × region), ` +
      `maintenance every ${EVERY} commits (orphans every ${ORPHANS_EVERY})`,
  );
  const plain = await warehouse(work, 'month-plain');
  const kept = await warehouse(work, 'month-maintained');
  const fresh = await warehouse(work, 'month-fresh');

  const plainMs: number[] = [];
  const keptMs: number[] = [];
  const freshMs: number[] = [];
  const plainCatalogMs: number[] = [];
  const keptCatalogMs: number[] = [];
  const freshCatalogMs: number[] = [];
  const plainMeta: number[] = [0];
  const keptMeta: number[] = [0];
  const runs: (MaintenanceRun & { at: number })[] = [];
  /** Every stray left in the un-maintained table (its full maintenance at the end deletes the old ones). */
  const plainStrays: number[] = [];
  /** Stray files not yet deleted, by the commit that left them. */
  const strays: number[] = [];
  let strayOld = 0;
  const timedFrom = COMMITS - TIMED + 1;
  /** Every commit of the timed window (written to BENCH_MONTH_TRACE, if set, for analysis). */
  const trace: { i: number; which: number; position: number; ms: number; catalogMs: number }[] = [];
  const t0 = performance.now();
  let lap = t0;
  for (let i = 1; i <= COMMITS; i++) {
    const at = START_MS + (i - 1) * MINUTE;
    const lines = minuteLines(i, at);
    const timed = i >= timedFrom;
    // In the timed window a fresh table commits too: a new one every FRESH_SPAN commits, its
    // creating commit untimed. The order of the commits rotates through every permutation, so
    // none always follows another's garbage (or I/O).
    const k = Math.floor((i - timedFrom) / FRESH_SPAN);
    const freshTimed = timed && (i - timedFrom) % FRESH_SPAN !== 0;
    const freshLines = timed
      ? lines.map((l) => l.replace('"event_type":"ORDER"', `"event_type":"FRESH${k}"`))
      : [];
    const order = timed ? PERMUTATIONS3[i % 6]! : i % 2 === 0 ? [0, 1] : [1, 0];
    for (const which of order) {
      const w = [plain, kept, fresh][which]!;
      w.catalogTime.ms = 0;
      const section = !timed
        ? 'month-build'
        : ['month-commit-plain', 'month-commit-maintained', 'month-commit-fresh'][which]!;
      if (timed && GC_BEFORE) collectGarbage();
      const took = await profiled(section, () =>
        commit(w, which === 2 ? freshLines : lines, at, `minute-${i}`),
      );
      if (timed)
        trace.push({ i, which, position: order.indexOf(which), ms: took, catalogMs: w.catalogTime.ms });
      if (which === 2 && !freshTimed) continue;
      [plainMs, keptMs, freshMs][which]!.push(took);
      [plainCatalogMs, keptCatalogMs, freshCatalogMs][which]!.push(w.catalogTime.ms);
    }
    if (i % STRAY_EVERY === STRAY_EVERY / 2) {
      await strayFile(plain, i, at);
      await strayFile(kept, i, at);
      strays.push(i);
      plainStrays.push(i);
    }
    if (i % EVERY === 0) {
      const orphanRun = i % ORPHANS_EVERY === 0;
      if (orphanRun) {
        // Strays written an hour or more (simulated) before this run are orphans to delete.
        const old = strays.filter((j) => j <= i - HOUR / MINUTE);
        strayOld += old.length;
        strays.splice(0, old.length);
      }
      const r = await profiled('maintain', () => maintain(kept, at + MINUTE / 2, hourlyOptions(orphanRun)));
      runs.push({ at: i, ...r });
      const m = r.report;
      const c = m.orphans;
      console.log(
        `  maintenance after commit ${i}: ${msText(r.ms)}: ${m.compaction?.filesRewritten ?? 0} files (${fmtInt(Number(m.compaction?.rowsAfter ?? 0n))} rows) → ` +
          `${m.compaction?.filesWritten ?? 0}, manifests ${m.manifests?.manifestsBefore} → ${m.manifests?.manifestsAfter}, ` +
          `${m.expiry?.snapshotsExpired ?? 0} snapshots expired (${m.expiry?.freed.dataFiles ?? 0} data files freed)` +
          (c
            ? `, orphans: ${c.orphans} deleted of ${c.listed} listed (${c.young} unreferenced but younger than 1 h)`
            : ''),
      );
    }
    plainMeta.push(await metadataBytes(plain));
    keptMeta.push(await metadataBytes(kept));
    if (i % 250 === 0 || i === COMMITS) {
      const now = performance.now();
      const n = i % 250 === 0 ? 250 : i % 250;
      const inBlock = runs.filter((r) => r.at > i - n);
      console.log(
        `commits ${i - n + 1}–${i}: ${((now - lap) / 1000).toFixed(1)} s; median commit without maintenance ` +
          `${msText(median(plainMs.slice(-n)))}, with ${msText(median(keptMs.slice(-n)))}; ` +
          `${inBlock.length} maintenance runs ${(inBlock.reduce((x, r) => x + r.ms, 0) / 1000).toFixed(1)} s; ` +
          `metadata.json ${kib(plainMeta[i]!)} vs ${kib(keptMeta[i]!)}`,
      );
      lap = now;
    }
  }
  const buildS = (performance.now() - t0) / 1000;
  if (process.env.BENCH_MONTH_TRACE) await fs.writeFile(process.env.BENCH_MONTH_TRACE, JSON.stringify(trace));
  const lastPlain = plainMs.slice(-TIMED);
  const lastKept = keptMs.slice(-TIMED);
  const mp = median(lastPlain);
  const mk = median(lastKept);
  const mf = median(freshMs);
  const earlyPlain = median(plainMs.slice(1, 1 + TIMED));
  const plainHealth = await tableHealth(plain.store, await plain.catalog.loadTable(tableId(plain)));
  const keptHealth = await tableHealth(kept.store, await kept.catalog.loadTable(tableId(kept)));
  console.log(
    `built in ${buildS.toFixed(0)} s (${fmtInt(COMMITS)} commits × 2 warehouses, ${runs.length} maintenance runs, ${TIMED} fresh-table commits)`,
  );
  console.log(
    `median commit, last ${TIMED}: without maintenance ${msText(mp)} (catalog ${msText(median(plainCatalogMs.slice(-TIMED)))}), ` +
      `with maintenance ${msText(mk)} (catalog ${msText(median(keptCatalogMs.slice(-TIMED)))}), ` +
      `fresh tables ${msText(mf)} (catalog ${msText(median(freshCatalogMs))}, ${freshMs.length} commits); ` +
      `first ${TIMED} commits of the month ${msText(earlyPlain)}`,
  );
  console.log(`end, without maintenance: ${health(plainHealth)}, ${await manifestCount(plain)} manifests`);
  console.log(`end, with maintenance:    ${health(keptHealth)}, ${await manifestCount(kept)} manifests`);

  // metadata.json over time: sampled after every commit; at a quarter, half, three quarters, all.
  const marks = [COMMITS / 4, COMMITS / 2, (3 * COMMITS) / 4, COMMITS].map((m) => Math.max(1, Math.round(m)));
  const windowMax = (xs: readonly number[], end: number) =>
    Math.max(...xs.slice(Math.max(1, end - EVERY + 1), end + 1));
  for (const m of marks) {
    console.log(
      `metadata.json at commit ${m}: without maintenance ${kib(plainMeta[m]!)}, with ${kib(keptMeta[m]!)} ` +
        `(largest over commits ${Math.max(1, m - EVERY + 1)}–${m}: ${kib(windowMax(keptMeta, m))})`,
    );
  }
  const early = windowMax(keptMeta, marks[0]!);
  const late = windowMax(keptMeta, COMMITS);
  const growth = late / early;

  const maintMs = runs.map((r) => r.ms);
  const compacted = runs.map((r) => r.report.compaction?.filesRewritten ?? 0);
  console.log(
    `maintenance: ${runs.length} runs, median ${msText(median(maintMs))}, max ${msText(Math.max(...maintMs))}, ` +
      `first ${msText(maintMs[0] ?? 0)}, last ${msText(maintMs.at(-1) ?? 0)}; files rewritten per run median ${median(compacted)}`,
  );
  const stepped = runs.flatMap((r) => (r.steps ? [r.steps] : []));
  const step = (k: keyof StepTimes) => median(stepped.map((x) => x[k]));
  const stepText =
    stepped.length === 0
      ? 'no run with every step committing'
      : `plan ${msText(step('plan'))}, compaction ${msText(step('compact'))}, manifest rewrite ` +
        `${msText(step('rewriteManifests'))}, expiry ${msText(step('expire'))}, health after ${msText(step('after'))}`;
  console.log(`maintenance steps (median of ${stepped.length} runs): ${stepText}`);
  const orphanRuns = runs.filter((r) => r.report.orphans);
  const orphansDeleted = orphanRuns.reduce((n, r) => n + r.report.orphans!.orphans, 0);

  // Query: the un-maintained table as it is, then after a full maintenance of it.
  const plainOld = plainStrays.filter((j) => j <= COMMITS - HOUR / MINUTE).length;
  const q = await benchQuery(work, plain, plainOld);
  const mem = await benchCompactMemory(work);

  const ratio = mk / mf;
  return [
    {
      measure: `month: commit (${ROWS} rows) to a fresh table, median`,
      value: msText(mf),
      target: '',
    },
    {
      measure: '  of which catalog (metadata.json): fresh / without / with maintenance',
      value: [freshCatalogMs, plainCatalogMs.slice(-TIMED), keptCatalogMs.slice(-TIMED)]
        .map((xs) => msText(median(xs)))
        .join(' / '),
      target: '',
    },
    {
      measure: `  to the ${fmtInt(COMMITS)}-commit table without maintenance (last ${TIMED})`,
      value: `${msText(mp)} (${(mp / mf).toFixed(2)} × fresh)`,
      target: '(info)',
    },
    {
      measure: `  to the ${fmtInt(COMMITS)}-commit table with maintenance (last ${TIMED})`,
      value: `${msText(mk)} (${ratio.toFixed(2)} × fresh)`,
      target: '≤ 1.2 × fresh',
      pass: ratio <= 1.2,
    },
    {
      measure: `month: metadata.json at ${marks.join(' / ')} without maintenance`,
      value: marks.map((m) => kib(plainMeta[m]!)).join(' / '),
      target: '',
    },
    {
      measure: '  with maintenance',
      value: marks.map((m) => kib(keptMeta[m]!)).join(' / '),
      target: '',
    },
    {
      measure: `  with: largest over the last ${EVERY} commits up to ${COMMITS} / up to ${marks[0]}`,
      value: `${kib(late)} / ${kib(early)} = ${growth.toFixed(2)}`,
      target: '≤ 1.2 (bounded)',
      pass: growth <= 1.2,
    },
    {
      measure: 'month: data files / snapshots at the end, without maintenance',
      value: `${fmtInt(plainHealth.dataFiles)} / ${fmtInt(plainHealth.snapshots)}`,
      target: '',
    },
    {
      measure: '  with maintenance',
      value: `${fmtInt(keptHealth.dataFiles)} / ${fmtInt(keptHealth.snapshots)}`,
      target: '',
    },
    {
      measure: `month: maintenance run (every ${EVERY} commits), median / max`,
      value: `${msText(median(maintMs))} / ${msText(Math.max(...maintMs))}`,
      target: '',
    },
    { measure: '  of which (medians)', value: stepText, target: '' },
    {
      measure: `  orphan cleanup (${orphanRuns.length} runs): deleted / strays older than 1 h`,
      value: `${orphansDeleted} / ${strayOld}`,
      target: 'equal',
      pass: orphansDeleted === strayOld,
    },
    ...q.rows,
    ...mem,
  ];
}

// ---------------------------------------------------------------------------------------------
// Query before / after compaction

const QUERY =
  `SELECT event_date, region, count(*) AS orders, count(DISTINCT customer_id) AS customers, ` +
  `sum(CAST(round(amount * 100) AS BIGINT)) AS cents, min(event_time) AS first, max(event_time) AS last ` +
  `FROM ${TABLE} GROUP BY ALL ORDER BY ALL`;

async function floeQuery(dir: string): Promise<{ ms: number; lines: string[] }> {
  const lines: string[] = [];
  const t0 = performance.now();
  await queryCommand(QUERY, { warehouse: dir, json: true }, (s) => lines.push(s));
  return { ms: performance.now() - t0, lines };
}

/**
 * A copy of a warehouse: hard links where the system has `cp -al` (table files are immutable and
 * every write replaces a file by rename, so the two copies never share a change), else a real copy.
 */
async function copyTree(from: string, to: string): Promise<void> {
  const linked = await new Promise<boolean>((resolve) => {
    const child = spawn('cp', ['-al', from, to], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
  if (!linked) {
    await fs.rm(to, { recursive: true, force: true });
    await fs.cp(from, to, { recursive: true, preserveTimestamps: true });
  }
}

async function benchQuery(
  work: string,
  plain: Warehouse,
  oldStrays: number,
): Promise<{ rows: SummaryRow[] }> {
  console.log(`\n## Query: GROUP BY over the whole un-maintained table, before and after a full maintenance`);
  const before = join(work, 'month-before');
  const c0 = performance.now();
  await copyTree(plain.dir, before);
  console.log(`copied the un-maintained warehouse in ${((performance.now() - c0) / 1000).toFixed(1)} s`);
  const last = await plain.catalog.loadTable(tableId(plain));
  const endMs = Number(currentSnapshot(last.metadata)!['timestamp-ms']) + MINUTE / 2;
  const full = await profiled('maintain-full', () => maintain(plain, endMs, { ...hourlyOptions(true) }));
  const r = full.report;
  console.log(
    `full maintenance of the un-maintained table: ${(full.ms / 1000).toFixed(1)} s — compaction ${r.compaction?.filesRewritten} → ` +
      `${r.compaction?.filesWritten} files, manifests ${r.manifests?.manifestsBefore} → ${r.manifests?.manifestsAfter}, ` +
      `${r.expiry?.snapshotsExpired} snapshots expired, ${r.orphans?.orphans} orphans deleted; after: ${health(r.after)}`,
  );
  if (full.steps) {
    const f = full.steps;
    console.log(
      `  of which: plan ${msText(f.plan)}, compaction ${msText(f.compact)}, manifest rewrite ${msText(f.rewriteManifests)}, ` +
        `expiry ${msText(f.expire)}, orphans ${msText(f.orphans)}, health after ${msText(f.after)}`,
    );
  }
  // Untimed warm-up of each (DuckDB, the planner's code, the file cache).
  const wb = await floeQuery(before);
  const wa = await floeQuery(plain.dir);
  if (wb.lines.length === 0) throw new Error('query returned no rows');
  if (wb.lines.join('\n') !== wa.lines.join('\n')) {
    throw new Error(
      `QUERY RESULTS DIFFER before / after maintenance:\n before: ${wb.lines.slice(0, 5).join('\n  ')}\n after:  ${wa.lines.slice(0, 5).join('\n  ')}`,
    );
  }
  const beforeMs: number[] = [];
  const afterMs: number[] = [];
  for (let run = 1; run <= QUERY_RUNS; run++) {
    const b = await profiled('query-before', () => floeQuery(before));
    const a = await profiled('query-after', () => floeQuery(plain.dir));
    for (const x of [b, a])
      if (x.lines.join('\n') !== wb.lines.join('\n')) throw new Error(`query run ${run}: results changed`);
    beforeMs.push(b.ms);
    afterMs.push(a.ms);
    console.log(`run ${run}: before compaction ${msText(b.ms)}, after ${msText(a.ms)}`);
  }
  const mb = median(beforeMs);
  const ma = median(afterMs);
  console.log(
    `median: before ${msText(mb)} (${fmtInt(r.before.dataFiles)} files), after ${msText(ma)} (${fmtInt(r.after.dataFiles)} files): ` +
      `${(mb / ma).toFixed(1)} × faster; ${wb.lines.length} result rows, identical`,
  );
  if (process.env.BENCH_KEEP !== '1') await fs.rm(before, { recursive: true, force: true });
  return {
    rows: [
      {
        measure: `query: GROUP BY over the table, before compaction (${fmtInt(r.before.dataFiles)} files)`,
        value: msText(mb),
        target: '',
      },
      {
        measure: `  after full maintenance (${fmtInt(r.after.dataFiles)} files), results identical`,
        value: `${msText(ma)} (${(mb / ma).toFixed(1)} × faster)`,
        target: '≥ 5 × faster',
        pass: mb / ma >= 5,
      },
      {
        measure: '  full maintenance of the un-maintained table (once)',
        value: `${(full.ms / 1000).toFixed(1)} s`,
        target: '',
      },
      {
        measure: '  its orphan cleanup: deleted / strays older than 1 h',
        value: `${r.orphans?.orphans ?? 0} / ${oldStrays}`,
        target: 'equal',
        pass: r.orphans?.orphans === oldStrays,
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Peak memory of compaction per input MiB

async function benchCompactMemory(work: string): Promise<SummaryRow[]> {
  console.log(
    `\n## Compaction memory: one bin of ~${COMPACT_SMALL_MIB} and ~${COMPACT_MIB} MiB of small files, each in a child process`,
  );
  const small = await compactMemory(work, COMPACT_SMALL_MIB);
  const big = await compactMemory(work, COMPACT_MIB);
  const slope = (big.maxRssMiB - small.maxRssMiB) / (big.inputMiB - small.inputMiB);
  console.log(
    `per input MiB: (${big.maxRssMiB} − ${small.maxRssMiB}) / (${big.inputMiB.toFixed(1)} − ${small.inputMiB.toFixed(1)}) = ${slope.toFixed(1)} MiB of RSS`,
  );
  return [
    {
      measure: `compaction peak RSS, one bin of ${big.inputMiB.toFixed(0)} MiB input (${fmtInt(big.rows)} rows)`,
      value:
        `${big.maxRssMiB} MiB (${big.baselineRssMiB} before; heap ${big.peakHeapUsedMiB}, external ` +
        `${big.peakExternalMiB}), ${big.seconds.toFixed(1)} s`,
      target: '(info)',
    },
    {
      measure: `  one bin of ${small.inputMiB.toFixed(0)} MiB input`,
      value: `${small.maxRssMiB} MiB (${small.baselineRssMiB} before), ${small.seconds.toFixed(1)} s`,
      target: '(info)',
    },
    {
      measure: '  RSS per input MiB: slope between the two; whole peak / input of the large one',
      value: `${slope.toFixed(1)} MiB; ${(big.maxRssMiB / big.inputMiB).toFixed(1)} MiB`,
      target: '(info)',
    },
  ];
}

interface CompactMemory extends CompactMemoryReport {
  readonly inputMiB: number;
}

async function compactMemory(work: string, mib: number): Promise<CompactMemory> {
  const w = await warehouse(work, `compact-${mib}`);
  // Unpartitioned ORDER events in files of ~2 MiB (loads of 30,000 events), up to `mib` in all.
  const config = parseConfig({ partitioning: { candidates: [] } });
  let bytes = 0;
  let rows = 0;
  let k = 0;
  const t0 = performance.now();
  // Stop before the next load's file would push the bin over `mib` (each is about the first's size).
  // The same events in every file (compaction neither knows nor cares), so building is quick.
  const it = sampleEvents({ seed: SEED + 9000, nowMs: START_MS, version: 'v2' });
  const lines: string[] = [];
  while (lines.length < COMPACT_LOAD_ROWS) {
    const ev = it.next().value as Record<string, unknown>;
    if (ev.event_type === 'ORDER') lines.push(toNdjsonLine({ ...ev }));
  }
  while (k === 0 || bytes + (bytes / k) * 1.05 <= mib * MiB) {
    w.clock.at(START_MS + k * MINUTE);
    const report = await loadSources(
      {
        catalog: w.catalog,
        store: w.store,
        clock: w.clock,
        ids: randomIds,
        config,
        onDeadLetter: (d) => {
          throw new Error(`unexpected dead letter: ${d.detail}`);
        },
      },
      [{ name: `part-${k}`, lines }],
    );
    const t = report.tables[0];
    if (!t || report.failures.length > 0 || t.files !== 1)
      throw new Error('compaction input did not load as one file');
    bytes += t.bytes;
    rows += t.rows;
    k++;
  }
  console.log(
    `input: ${k} files, ${fmtInt(rows)} rows, ${(bytes / MiB).toFixed(1)} MiB of Parquet (built in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  const script = fileURLToPath(new URL('./compact-memory.ts', import.meta.url));
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      env: {
        ...process.env,
        BENCH_CHILD_DIR: w.dir,
        BENCH_CHILD_TABLE: TABLE,
        // One bin whatever the default cap: the input is what is measured.
        BENCH_CHILD_MAX_BIN_BYTES: String(Math.max(bytes + MiB, DEFAULT_MAX_BIN_BYTES)),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(buf) : reject(new Error(`compaction child exited ${code}`)),
    );
  });
  const r = JSON.parse(out.trim().split('\n').pop()!) as CompactMemoryReport;
  if (r.filesRewritten !== k || r.filesWritten !== 1)
    throw new Error(
      `compaction child rewrote ${r.filesRewritten} files into ${r.filesWritten}, expected ${k} into 1`,
    );
  console.log(
    `compacted ${r.filesRewritten} files (${(r.inputBytes / MiB).toFixed(1)} MiB, ${fmtInt(r.rows)} rows) into ${r.filesWritten} in ${r.seconds.toFixed(1)} s: ` +
      `max RSS ${r.maxRssMiB} MiB (${r.baselineRssMiB} before), peak heap used ${r.peakHeapUsedMiB} MiB, peak external ${r.peakExternalMiB} MiB (of which ArrayBuffers ${r.peakArrayBuffersMiB} MiB)`,
  );
  await fs.rm(w.dir, { recursive: true, force: true });
  return { ...r, inputMiB: r.inputBytes / MiB };
}
