/**
 * `floe demo` (what `npm run demo` runs): sample events, v1 then v2, loaded through the real
 * routing → inference → evolution → Parquet → commit path into a local warehouse; then every
 * table is shown (columns with new ones marked, partition spec, snapshots, rows) and queried in
 * DuckDB, and the counts are checked against what was sent.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import type { DeadLetter } from '../app/dead-letters.ts';
import { loadSources } from '../app/load.ts';
import { parseConfig } from '../config.ts';
import { currentSchema } from '../iceberg/table-metadata.ts';
import { sampleEvents, toNdjsonLine } from '../sample/sample-events.ts';
import { renderTable } from './format.ts';
import { describeReport, snapshotsReport } from './inspect.ts';
import { openQueryEngine } from './query-command.ts';
import { listAllTables, openWarehouse } from './warehouse.ts';

export interface DemoOptions {
  readonly warehouse?: string;
  readonly events?: string;
  readonly seed?: string;
  readonly recordTo?: string;
}

export async function demoCommand(opts: DemoOptions, out: (s: string) => void): Promise<number> {
  const t0 = Date.now();
  const n = Number(opts.events ?? 2000);
  const seed = Number(opts.seed ?? 42);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--events must be a positive integer, got ${opts.events}`);
  const dir = opts.warehouse ? resolve(opts.warehouse) : await fs.mkdtemp(join(tmpdir(), 'floe-demo-'));
  const wh = openWarehouse(dir);
  await fs.mkdir(wh.dir, { recursive: true });
  const config = parseConfig({});
  const step = (s: string) => out(`\n▶ ${s}`);
  out(`Floe demo: ${n} v1 events, then ${n} v2 events (seed ${seed}) into ${wh.dir}`);

  const sent = new Map<string, number>();
  const recorded: string[] = [];
  const dead: DeadLetter[] = [];
  const knownIds = new Map<string, Set<number>>();
  let failed = false;

  for (const version of ['v1', 'v2'] as const) {
    step(
      `sending ${n} ${version} events (ORDER 40 %, USER 30 %, CLICK 30 %; ~10 % duplicate deliveries, ~5 % late)`,
    );
    const it = sampleEvents({ seed: seed + (version === 'v2' ? 1 : 0), nowMs: systemClock.nowMs(), version });
    const lines: string[] = [];
    for (let i = 0; i < n; i++) {
      const ev = it.next().value as Record<string, unknown>;
      const table = `${String(ev.event_type).toLowerCase()}_events`;
      sent.set(table, (sent.get(table) ?? 0) + 1);
      lines.push(toNdjsonLine(ev));
    }
    recorded.push(...lines);
    const report = await loadSources(
      {
        catalog: wh.catalog,
        store: wh.store,
        clock: systemClock,
        ids: randomIds,
        config,
        onDeadLetter: (d) => {
          dead.push(d);
        },
        onProgress: (p) => {
          if (p.kind === 'table-done') {
            const r = p.result;
            out(
              `  ${r.table}: +${r.rows} rows in ${r.files} file(s)${r.created ? '  [table created]' : ''}${
                r.schemaChanges.length ? `  [schema evolved: ${r.schemaChanges.join('; ')}]` : ''
              }${r.specChanged ? '  [partition spec evolved]' : ''}`,
            );
          }
        },
        summary: { 'floe.demo-phase': version, 'engine-name': 'floe' },
      },
      [{ name: `sample-${version}.ndjson`, lines }],
    );
    out(
      `  ${report.rows} rows committed, ${Object.values(report.deadLetters).reduce((a, b) => a + b, 0)} rejected`,
    );
    for (const f of report.failures) {
      out(`  ✘ ${f.table} not loaded: ${(f.error as Error).message}`);
      failed = true;
    }
    for (const id of await listAllTables(wh)) {
      const t = await wh.catalog.loadTable(id);
      const before = knownIds.get(id.name);
      const ids = new Set([...indexIds(currentSchema(t.metadata).fields)]);
      if (version === 'v2') {
        const fresh = new Set([...ids].filter((x) => !before?.has(x)));
        step(
          `${id.namespace}.${id.name} after v2${fresh.size > 0 ? ` (${fresh.size} new column(s) marked ← new)` : ''}`,
        );
        out(describeReport(t, fresh));
        out('');
        out(snapshotsReport(t));
      }
      knownIds.set(id.name, ids);
    }
  }

  if (opts.recordTo) await fs.writeFile(resolve(opts.recordTo), `${recorded.join('\n')}\n`);

  step('querying every table in DuckDB (columns read by Parquet field id)');
  const engine = await openQueryEngine(wh);
  let ok = dead.length === 0 && !failed;
  const rows: string[][] = [];
  try {
    for (const id of await listAllTables(wh)) {
      const t = await wh.catalog.loadTable(id);
      const q = `SELECT count(*) AS n, count(DISTINCT event_id) AS ids, min(event_time) AS first, max(event_time) AS last FROM "${id.name}"`;
      const r = (await engine.query(q)).rows[0]!;
      const expected = sent.get(id.name) ?? 0;
      const summaryTotal = Number(t.metadata.snapshots.at(-1)?.summary['total-records'] ?? 0);
      const good = Number(r.n) === expected && summaryTotal === expected;
      ok &&= good;
      rows.push([
        id.name,
        String(expected),
        String(r.n),
        String(summaryTotal),
        String(r.ids),
        String(r.first),
        String(r.last),
        good ? 'ok' : 'MISMATCH',
      ]);
    }
    out(
      renderTable(
        ['table', 'sent', 'queried', 'summary', 'distinct ids', 'first event', 'last event', 'check'],
        rows,
      ),
    );
    const sample = await engine.query(
      'SELECT region, count(*) AS orders, round(sum(amount), 2) AS revenue FROM order_events GROUP BY region ORDER BY region',
    );
    out(`\nSELECT region, count(*), sum(amount) FROM order_events GROUP BY region:`);
    out(
      renderTable(
        sample.columns,
        sample.rows.map((r) => sample.columns.map((c) => String(r[c]))),
      ),
    );
  } finally {
    engine.close();
  }
  for (const d of dead.slice(0, 10)) out(`  rejected ${d.source}:${d.line} [${d.reason}] ${d.detail}`);
  out(
    `\n${ok ? '✔ every table holds exactly the events sent' : '✘ counts disagree with what was sent'} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
  out(`warehouse: ${wh.dir}   try: npx floe tables -w ${wh.dir}`);
  return ok ? 0 : 1;
}

function* indexIds(fields: readonly { id: number; type: unknown }[]): Generator<number> {
  for (const f of fields) {
    yield f.id;
    const t = f.type as { kind: string; fields?: { id: number; type: unknown }[] };
    if (t.kind === 'struct' && t.fields) yield* indexIds(t.fields);
  }
}
