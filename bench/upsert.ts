/**
 * Upserts (issue 13): the same change stream loaded with `floe load`'s code (`loadSources`
 * in-process) into a plain table (append: every record a row) and into an upsert table
 * (`upsert.customers = {key: ['customer_id'], operationField: 'op'}`: the last change of each key,
 * as data files plus equality delete files). 200,000 records in 20 loads of 10,000: 65 % new keys,
 * 30 % updates of a live key, 5 % deletes of one. Reported: records/s of both, files written (data
 * and delete), and `floe query` of a GROUP BY on the merged table before and after compaction
 * (`maintainTable`), whose results must be identical and equal the expected final state.
 *
 * Env: BENCH_UPSERT_RECORDS (200000), BENCH_UPSERT_LOADS (20), BENCH_UPSERT_RUNS (3 alternating
 * append / upsert builds), BENCH_UPSERT_QUERY_RUNS (7), BENCH_SEED (7). See bench/README.md.
 */
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { FileCatalog } from '../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../lambdas/src/adapters/local/local-object-store.ts';
import { randomIds, systemClock } from '../lambdas/src/adapters/local/system-clock.ts';
import { type LoadReport, loadSources } from '../lambdas/src/app/load.ts';
import { maintainTable } from '../lambdas/src/app/maintain/index.ts';
import { liveRowsReader } from '../lambdas/src/app/maintain/live-rows.ts';
import { queryCommand } from '../lambdas/src/cli/query-command.ts';
import { type FloeConfig, parseConfig } from '../lambdas/src/config.ts';
import type { Catalog, TableIdentifier } from '../lambdas/src/ports/catalog.ts';
import { Prng } from '../lambdas/src/sample/prng.ts';
import { envInt, fmtInt, median, profiled, type SummaryRow } from './common.ts';

const RECORDS = envInt('BENCH_UPSERT_RECORDS', 200_000);
const LOADS = envInt('BENCH_UPSERT_LOADS', 20);
const RUNS = envInt('BENCH_UPSERT_RUNS', 3);
const QUERY_RUNS = envInt('BENCH_UPSERT_QUERY_RUNS', 7);
const SEED = envInt('BENCH_SEED', 7);
const UPDATE_SHARE = 0.3;
const DELETE_SHARE = 0.05;

const TABLE = 'customers';
const ID: TableIdentifier = { namespace: 'default', name: TABLE };
const QUERY = `SELECT region, tier, count(*) AS n, sum(x) AS x FROM ${TABLE} GROUP BY ALL ORDER BY ALL`;
/** Records without a routing field go to the default table: the customers table in both. */
const APPEND_CONFIG = parseConfig({ routing: { defaultTable: TABLE } });
const UPSERT_CONFIG = parseConfig({
  routing: { defaultTable: TABLE },
  upsert: { [TABLE]: { key: ['customer_id'], operationField: 'op' } },
});

const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'ap-southeast-1'] as const;
const TIERS = ['free', 'pro', 'team', 'enterprise'] as const;

interface Row {
  readonly customer_id: number;
  readonly region: string;
  readonly tier: string;
  /** Integer cents: sums do not depend on the order of additions. */
  readonly x: number;
}

interface ChangeStream {
  /** `LOADS` slices of NDJSON lines, in stream order. */
  readonly loads: string[][];
  readonly creates: number;
  readonly updates: number;
  readonly deletes: number;
  /** What the upsert table must hold: key → row. */
  readonly final: ReadonlyMap<number, Row>;
}

/** The change stream: new keys, updates and deletes of live keys (picked uniformly), in order. */
function changeStream(): ChangeStream {
  const rnd = new Prng(SEED * 7919 + 13);
  const live = new Map<number, Row>();
  const ids: number[] = [];
  const where = new Map<number, number>();
  const pickLive = () => ids[rnd.int(0, ids.length - 1)]!;
  const drop = (id: number) => {
    const i = where.get(id)!;
    const last = ids.pop()!;
    if (last !== id) {
      ids[i] = last;
      where.set(last, i);
    }
    where.delete(id);
  };
  let next = 1;
  let creates = 0;
  let updates = 0;
  let deletes = 0;
  const t0 = Date.UTC(2026, 10, 29, 12);
  const lines: string[] = [];
  for (let i = 0; i < RECORDS; i++) {
    const roll = rnd.next();
    const ts = new Date(t0 + i * 10).toISOString();
    let op: 'c' | 'u' | 'd';
    let row: Row;
    if (roll < UPDATE_SHARE && ids.length > 0) {
      op = 'u';
      const id = pickLive();
      const old = live.get(id)!;
      row = {
        ...old,
        ...(rnd.next() < 0.5 ? { tier: rnd.pick(TIERS) } : { region: rnd.pick(REGIONS) }),
        x: old.x + rnd.int(1, 10_000),
      };
      live.set(id, row);
      updates++;
    } else if (roll < UPDATE_SHARE + DELETE_SHARE && ids.length > 0) {
      op = 'd';
      const id = pickLive();
      row = live.get(id)!;
      live.delete(id);
      drop(id);
      deletes++;
    } else {
      op = 'c';
      const id = next++;
      row = { customer_id: id, region: rnd.pick(REGIONS), tier: rnd.pick(TIERS), x: rnd.int(0, 100_000) };
      live.set(id, row);
      where.set(id, ids.length);
      ids.push(id);
      creates++;
    }
    lines.push(
      JSON.stringify({
        op,
        customer_id: row.customer_id,
        region: row.region,
        tier: row.tier,
        x: row.x,
        name: `customer ${row.customer_id}`,
        email: `c${row.customer_id}@example.com`,
        updated_at: ts,
      }),
    );
  }
  const per = Math.ceil(RECORDS / LOADS);
  const loads: string[][] = [];
  for (let k = 0; k < RECORDS; k += per) loads.push(lines.slice(k, k + per));
  return { loads, creates, updates, deletes, final: live };
}

/** The query's result rows as `region|tier|count|sum`, from what the table must hold. */
function expectedResult(final: ReadonlyMap<number, Row>): string[] {
  const groups = new Map<string, { n: number; x: number }>();
  for (const r of final.values()) {
    const k = `${r.region}|${r.tier}`;
    const g = groups.get(k) ?? { n: 0, x: 0 };
    g.n++;
    g.x += r.x;
    groups.set(k, g);
  }
  return [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, g]) => `${k}|${g.n}|${g.x}`);
}

interface Warehouse {
  readonly dir: string;
  readonly store: LocalObjectStore;
  readonly catalog: Catalog;
}

function warehouse(dir: string): Warehouse {
  const store = new LocalObjectStore();
  return { dir, store, catalog: new FileCatalog(store, fileUri(dir)) };
}

async function load(w: Warehouse, config: FloeConfig, lines: readonly string[], name: string) {
  const t0 = performance.now();
  const report: LoadReport = await loadSources(
    {
      catalog: w.catalog,
      store: w.store,
      clock: systemClock,
      ids: randomIds,
      config,
      onDeadLetter: (d) => {
        throw new Error(`unexpected dead letter: ${d.detail}`);
      },
    },
    [{ name, lines }],
  );
  const ms = performance.now() - t0;
  const t = report.tables[0];
  if (report.failures.length > 0 || report.tables.length !== 1 || t?.snapshotId === undefined)
    throw new Error(`load ${name} did not land: ${String(report.failures[0]?.error)}`);
  return { ms, path: t.path };
}

/** Data and delete files every snapshot added, and the live ones now (from the snapshot summaries). */
async function filesOf(w: Warehouse) {
  const t = await w.catalog.loadTable(ID);
  let data = 0;
  let deletes = 0;
  for (const s of t.metadata.snapshots ?? []) {
    const sum = s.summary as Record<string, string | undefined>;
    data += Number(sum['added-data-files'] ?? 0);
    deletes += Number(sum['added-delete-files'] ?? 0);
  }
  const cur = (t.metadata.snapshots ?? []).find(
    (s) => s['snapshot-id'] === t.metadata['current-snapshot-id'],
  );
  const sum = (cur?.summary ?? {}) as Record<string, string | undefined>;
  return {
    data,
    deletes,
    liveData: Number(sum['total-data-files'] ?? 0),
    liveDeletes: Number(sum['total-delete-files'] ?? 0),
    equalityDeletes: Number(sum['total-equality-deletes'] ?? 0),
    records: Number(sum['total-records'] ?? 0),
  };
}

async function floeQuery(dir: string): Promise<{ ms: number; lines: string[] }> {
  const out: string[] = [];
  const t0 = performance.now();
  await queryCommand(QUERY, { warehouse: dir, json: true }, (s) => out.push(s));
  const ms = performance.now() - t0;
  const lines = out.map((l) => {
    const r = JSON.parse(l) as Record<string, unknown>;
    return `${String(r.region)}|${String(r.tier)}|${String(r.n)}|${String(r.x)}`;
  });
  return { ms, lines };
}

/** Hard links where the system has `cp -al` (table files are immutable), else a real copy. */
async function copyTree(from: string, to: string): Promise<void> {
  const linked = await new Promise<boolean>((resolve) => {
    const child = spawn('cp', ['-al', from, to], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
  if (!linked) {
    await fs.rm(to, { recursive: true, force: true });
    await fs.cp(from, to, { recursive: true });
  }
}

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const msText = (ms: number) => `${ms.toFixed(0)} ms`;
const rate = (ms: number) => fmtInt(RECORDS / (ms / 1000));

export async function benchUpsert(work: string): Promise<SummaryRow[]> {
  console.log(
    `\n## Upserts: ${fmtInt(RECORDS)} change records in ${LOADS} loads, append vs upsert table, ${RUNS} alternating runs`,
  );
  const stream = changeStream();
  const want = expectedResult(stream.final);
  console.log(
    `stream: ${fmtInt(stream.creates)} new keys, ${fmtInt(stream.updates)} updates, ${fmtInt(stream.deletes)} deletes of a live key → ` +
      `${fmtInt(stream.final.size)} keys live at the end; ${stream.loads.length} loads of ${fmtInt(stream.loads[0]!.length)} records; ` +
      `8 fields per record, partitioned by region (4 values)`,
  );

  const appendMs: number[] = [];
  const upsertMs: number[] = [];
  let last: { append: Warehouse; upsert: Warehouse } | undefined;
  const paths = new Set<string>();
  for (let run = 1; run <= RUNS; run++) {
    const append = warehouse(join(work, `upsert-bench-append-${run}`));
    const upsert = warehouse(join(work, `upsert-bench-upsert-${run}`));
    let a = 0;
    let u = 0;
    // Alternating load by load, so both see the same state of a shared machine.
    for (const [k, lines] of stream.loads.entries()) {
      const first = k % 2 === 0;
      const la = first
        ? await profiled('append', () => load(append, APPEND_CONFIG, lines, `load-${k}`))
        : undefined;
      const lu = await profiled('upsert', () => load(upsert, UPSERT_CONFIG, lines, `load-${k}`));
      const lb = first
        ? la!
        : await profiled('append', () => load(append, APPEND_CONFIG, lines, `load-${k}`));
      a += lb.ms;
      u += lu.ms;
      paths.add(`append ${lb.path}, upsert ${lu.path}`);
    }
    appendMs.push(a);
    upsertMs.push(u);
    console.log(
      `run ${run}: append ${sec(a)} (${rate(a)} records/s), upsert ${sec(u)} (${rate(u)} records/s): ${(u / a).toFixed(2)} × the time`,
    );
    if (last && process.env.BENCH_KEEP !== '1') {
      await fs.rm(last.append.dir, { recursive: true, force: true });
      await fs.rm(last.upsert.dir, { recursive: true, force: true });
    }
    last = { append, upsert };
  }
  const { append, upsert } = last!;
  const ma = median(appendMs);
  const mu = median(upsertMs);
  console.log(`ingest paths: ${[...paths].join('; ')}`);
  console.log(
    `median: append ${sec(ma)} = ${rate(ma)} records/s, upsert ${sec(mu)} = ${rate(mu)} records/s (${(mu / ma).toFixed(2)} × the time)`,
  );

  const fa = await filesOf(append);
  const fu = await filesOf(upsert);
  console.log(
    `files written: append ${fmtInt(fa.data)} data files (${fmtInt(fa.records)} rows); upsert ${fmtInt(fu.data)} data + ` +
      `${fmtInt(fu.deletes)} equality delete files (${fmtInt(fu.records)} rows written, ${fmtInt(fu.equalityDeletes)} delete rows)`,
  );

  // Query the merged table before compaction (a hard-linked copy) and after (the original).
  const before = join(work, 'upsert-bench-before');
  await copyTree(upsert.dir, before);
  const c0 = performance.now();
  const report = await profiled('upsert-compact', () =>
    maintainTable(
      {
        catalog: upsert.catalog,
        store: upsert.store,
        clock: systemClock,
        ids: randomIds,
        liveRows: liveRowsReader(upsert.store),
      },
      ID,
      { steps: { compact: true, rewriteManifests: true, expire: false, orphans: false } },
    ),
  );
  const compactMs = performance.now() - c0;
  const fc = await filesOf(upsert);
  if (report.failed.length > 0)
    throw new Error(`maintenance failed: ${report.failed.map((f) => `${f.step}: ${f.error}`).join('; ')}`);
  console.log(
    `compaction + manifest rewrite: ${sec(compactMs)} — data files ${report.before.dataFiles} → ${report.after.dataFiles}, ` +
      `delete files ${report.before.deleteFiles} → ${report.after.deleteFiles} applying to some data file (live in the snapshot: ${fu.liveDeletes} → ${fc.liveDeletes}), ` +
      `rows ${fmtInt(Number(report.before.records))} → ${fmtInt(Number(report.after.records))}`,
  );

  const check = (what: string, lines: readonly string[]) => {
    if (lines.join('\n') !== want.join('\n'))
      throw new Error(
        `${what}: query result differs from the expected final state:\n got:  ${lines.slice(0, 4).join('\n  ')}\n want: ${want.slice(0, 4).join('\n  ')}`,
      );
  };
  // Untimed warm-up of each, checked against the expected state.
  check('before compaction', (await floeQuery(before)).lines);
  check('after compaction', (await floeQuery(upsert.dir)).lines);
  const appendRows = (await floeQuery(append.dir)).lines;
  const bMs: number[] = [];
  const aMs: number[] = [];
  const pMs: number[] = [];
  for (let run = 1; run <= QUERY_RUNS; run++) {
    const b = await profiled('upsert-query-before', () => floeQuery(before));
    const a = await profiled('upsert-query-after', () => floeQuery(upsert.dir));
    const p = await profiled('upsert-query-append', () => floeQuery(append.dir));
    check(`query run ${run} before`, b.lines);
    check(`query run ${run} after`, a.lines);
    if (p.lines.join('\n') !== appendRows.join('\n'))
      throw new Error(`query run ${run}: append results changed`);
    bMs.push(b.ms);
    aMs.push(a.ms);
    pMs.push(p.ms);
    console.log(
      `query run ${run}: merged table before compaction ${msText(b.ms)}, after ${msText(a.ms)}; append table ${msText(p.ms)}`,
    );
  }
  const qb = median(bMs);
  const qa = median(aMs);
  const qp = median(pMs);
  console.log(
    `median query: before compaction ${msText(qb)} (${fu.liveData} data + ${fu.liveDeletes} delete files), after ${msText(qa)} ` +
      `(${fc.liveData} data + ${fc.liveDeletes} delete files), ${(qb / qa).toFixed(1)} × faster; ` +
      `append table ${msText(qp)} (${fa.liveData} files, ${fmtInt(fa.records)} rows); ${want.length} result rows, identical and as expected`,
  );
  if (process.env.BENCH_KEEP !== '1') {
    await fs.rm(before, { recursive: true, force: true });
    await fs.rm(append.dir, { recursive: true, force: true });
    await fs.rm(upsert.dir, { recursive: true, force: true });
  }
  return [
    {
      measure: `upsert: ${fmtInt(RECORDS)} records in ${LOADS} loads, append records/s`,
      value: `${rate(ma)} (${sec(ma)})`,
      target: '(info)',
    },
    {
      measure: '  upsert table (30 % updates, 5 % deletes) records/s',
      value: `${rate(mu)} (${sec(mu)}, ${(mu / ma).toFixed(2)} × append's time)`,
      target: '(info)',
    },
    {
      measure: '  files written: append data / upsert data + delete',
      value: `${fa.data} / ${fu.data} + ${fu.deletes}`,
      target: '(info)',
    },
    {
      measure: `  query GROUP BY on the merged table, before / after compaction`,
      value: `${msText(qb)} / ${msText(qa)} (append table ${msText(qp)}); results as expected`,
      target: 'identical',
      pass: true,
    },
  ];
}
