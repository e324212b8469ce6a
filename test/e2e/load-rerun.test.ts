/**
 * Running a load again is safe: `floe load` records each file it loaded (content hash, size, name)
 * in the snapshot summary of every table it commits to and skips a file a table already holds.
 * Run as the real command (`node bin/floe.mjs …`), and in process with a catalog that fails one
 * table's commit (a load that stopped half-way).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { loadSources } from '../../lambdas/src/app/load.ts';
import {
  FileLoadHistory,
  type HistoryEvent,
  LOADED_FILES_KEY,
  type LoadedFile,
  parseLoadedFiles,
} from '../../lambdas/src/app/load-history.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import type { DeadLetter } from '../../lambdas/src/engine/dead-letters.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import type { Catalog } from '../../lambdas/src/ports/catalog.ts';
import {
  currentSnapshotOf,
  fileWarehouse,
  generate,
  groupByTable,
  type Json,
  NOW_MS,
  tempDir,
} from '../helpers/e2e.ts';
import { BIN, runNode } from '../helpers/run-node.ts';

const NS = 'default';
const tmp = tempDir('floe-e2e-rerun-');
afterAll(() => tmp.cleanup());

const floe = (...args: string[]) => runNode([BIN, ...args], { FLOE_WAREHOUSE: undefined });

/** A table's current metadata JSON, read off disk (64-bit ids kept as strings). */
function metadataJson(wh: string, table: string): Json {
  const dir = join(wh, NS, table, 'metadata');
  const hint = readFileSync(join(dir, 'version-hint.text'), 'utf8').trim();
  const text = readFileSync(join(dir, `v${hint}.metadata.json`), 'utf8').replace(
    /:\s*(-?\d{16,})/g,
    ': "$1"',
  );
  return JSON.parse(text) as Json;
}

function currentSnapshot(wh: string, table: string): { id: string; count: number; summary: Json } {
  const m = metadataJson(wh, table);
  const snaps = m.snapshots as Json[];
  const id = String(m['current-snapshot-id']);
  const cur = snaps.find((s) => String(s['snapshot-id']) === id)!;
  return { id, count: snaps.length, summary: cur.summary as Json };
}

/** Rows per table, answered by one `floe query`. */
async function rows(wh: string, tables: readonly string[]): Promise<Record<string, number>> {
  const sql = `SELECT ${tables.map((t) => `(SELECT count(*) FROM ${t}) AS ${t}`).join(', ')}`;
  const r = await floe('query', '-w', wh, '--json', sql);
  expect(r.code, r.stderr).toBe(0);
  const counts = JSON.parse(r.stdout.trim()) as Record<string, string>;
  return Object.fromEntries(tables.map((t) => [t, Number(counts[t])]));
}

const sha128 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, 32);
const times = (m: Record<string, number>, k: number) =>
  Object.fromEntries(Object.entries(m).map(([t, n]) => [t, n * k]));

describe('floe load, run again', () => {
  const dir = join(tmp.dir, 'cli');
  const wh = join(dir, 'wh');
  const input = join(dir, 'events.ndjson');
  const gen = generate(90, 'v1', 11);
  const perTable = Object.fromEntries([...groupByTable(gen.events)].map(([t, evs]) => [t, evs.length]));
  const tables = Object.keys(perTable).sort();

  beforeAll(async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(input, `${gen.lines.join('\n')}\n`);
    const r = await floe('load', input, '-w', wh, '-q');
    expect(r.code, r.stderr).toBe(0);
    expect(tables.length).toBeGreaterThan(1);
  });

  it('records the file (SHA-256, size, name) in the summary of every table it committed to', () => {
    const bytes = readFileSync(input);
    for (const t of tables) {
      expect(currentSnapshot(wh, t).summary[LOADED_FILES_KEY]).toBe(
        `${sha128(bytes)} ${bytes.length} events.ndjson`,
      );
    }
  });

  it('the same file again is skipped for every table, and says so: exit 0, no new snapshot, rows not doubled', async () => {
    const before = Object.fromEntries(tables.map((t) => [t, currentSnapshot(wh, t)]));
    const r = await floe('load', input, '-w', wh, '-q');
    expect(r.code, r.stderr).toBe(0);
    for (const t of tables) {
      expect(r.stdout).toContain(
        `skipped ${input} for ${NS}.${t}: already loaded in snapshot ${before[t]!.id} (`,
      );
      expect(currentSnapshot(wh, t)).toEqual(before[t]);
    }
    expect(r.stdout).toContain('use --force to load it again');
    expect(r.stdout).toContain('0 rows committed to 0 table(s)');
    expect(await rows(wh, tables)).toEqual(perTable);
  });

  it('--force loads it again: a new snapshot per table, rows doubled', async () => {
    const before = Object.fromEntries(tables.map((t) => [t, currentSnapshot(wh, t).count]));
    const r = await floe('load', input, '-w', wh, '-q', '--force');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('skipped');
    for (const t of tables) expect(currentSnapshot(wh, t).count).toBe(before[t]! + 1);
    expect(await rows(wh, tables)).toEqual(times(perTable, 2));
  });

  it('a renamed copy is the same file: skipped, named as loaded before', async () => {
    const copy = join(dir, 'renamed.ndjson');
    copyFileSync(input, copy);
    const r = await floe('load', copy, '-w', wh, '-q');
    expect(r.code, r.stderr).toBe(0);
    for (const t of tables)
      expect(r.stdout).toMatch(
        new RegExp(
          `skipped \\S*renamed\\.ndjson for ${NS}\\.${t}: already loaded as events\\.ndjson in snapshot \\d+`,
        ),
      );
    expect(await rows(wh, tables)).toEqual(times(perTable, 2));
  });

  it('the same file given twice in one load is loaded once', async () => {
    const wh2 = join(dir, 'wh-twice');
    const copy = join(dir, 'twice.ndjson');
    copyFileSync(input, copy);
    const r = await floe('load', input, copy, input, '-w', wh2, '-q');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`skipped ${copy}: same content as ${input} in this load, loaded once`);
    expect(await rows(wh2, tables)).toEqual(perTable);
  });

  it('a file that was appended to is a different file: loaded in full, and the output says so', async () => {
    const grownDir = join(dir, 'later');
    mkdirSync(grownDir, { recursive: true });
    const grown = join(grownDir, 'events.ndjson');
    copyFileSync(input, grown);
    const extra = { event_type: 'ORDER', event_id: 'ORDER-appended', amount: 1.25 };
    appendFileSync(grown, `${JSON.stringify(extra)}\n`);
    const before = await rows(wh, tables);
    const r = await floe('load', grown, '-w', wh, '-q');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `note: ${grown} was appended to since its first ${readFileSync(input).length} bytes were loaded`,
    );
    const after = await rows(wh, tables);
    for (const t of tables) expect(after[t]).toBe(before[t]! + perTable[t]! + (t === 'order_events' ? 1 : 0));
  });

  it('a file whose content changed otherwise is loaded as a new file, with a note', async () => {
    const changedDir = join(dir, 'changed');
    mkdirSync(changedDir, { recursive: true });
    const changed = join(changedDir, 'events.ndjson');
    writeFileSync(changed, `${gen.lines.slice(1).join('\n')}\n`);
    const before = await rows(wh, tables);
    const r = await floe('load', changed, '-w', wh, '-q');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /note: \S*changed\/events\.ndjson differs from the events\.ndjson loaded into default\.\w+ in snapshot \d+/,
    );
    const first = gen.events[0]!;
    const after = await rows(wh, tables);
    for (const t of tables) {
      const less = `${String(first.event_type).toLowerCase()}_events` === t ? 1 : 0;
      expect(after[t]).toBe(before[t]! + perTable[t]! - less);
    }
  });

  it('a load where one table failed, run again, lands that table once and skips the others', async () => {
    const wh3 = join(dir, 'wh-failed');
    // A table folder whose metadata is not JSON: that table's commit fails, the others land.
    const broken = join(wh3, NS, 'user_events', 'metadata');
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, 'v1.metadata.json'), '{ not metadata');
    writeFileSync(join(broken, 'version-hint.text'), '1');
    const first = await floe('load', input, '-w', wh3, '-q');
    expect(first.code).toBe(4);
    expect(first.stdout).toMatch(
      new RegExp(`table ${NS}\\.user_events: NOT LOADED \\(${perTable.user_events} records\\)`),
    );
    rmSync(join(wh3, NS, 'user_events'), { recursive: true });
    const again = await floe('load', input, '-w', wh3, '-q');
    expect(again.code, again.stderr).toBe(0);
    for (const t of tables.filter((x) => x !== 'user_events'))
      expect(again.stdout).toContain(`skipped ${input} for ${NS}.${t}: already loaded`);
    expect(again.stdout).toMatch(new RegExp(`^${NS}\\s+user_events\\s+${perTable.user_events}\\s`, 'm'));
    expect(await rows(wh3, tables)).toEqual(perTable);
  });
});

describe('loadSources with a load history (in process): a commit that failed half-way', () => {
  const wh = fileWarehouse(join(tmp.dir, 'app'));
  const config = parseConfig({});
  const line = (type: string, id: string) => JSON.stringify({ event_type: type, event_id: id, n: 1 });
  const a = { name: '/in/a.ndjson', lines: [line('ORDER', 'a1'), line('ORDER', 'a2'), line('USER', 'a3')] };
  const b = { name: '/in/b.ndjson', lines: [line('ORDER', 'b1'), line('CLICK', 'b2')] };
  const c = { name: '/in/c.ndjson', lines: [line('ORDER', 'c1'), line('USER', 'c2')] };
  const d = { name: '/in/d.ndjson', lines: [line('ORDER', 'd1'), line('USER', 'd2')] };
  const fingerprints = new Map<string, LoadedFile>([
    [a.name, { hash: 'a'.repeat(32), size: 30, name: 'a.ndjson' }],
    [b.name, { hash: 'b'.repeat(32), size: 20, name: 'b.ndjson' }],
    [c.name, { hash: 'c'.repeat(32), size: 20, name: 'c.ndjson' }],
    [d.name, { hash: 'd'.repeat(32), size: 20, name: 'd.ndjson' }],
  ]);
  let seed = 1;

  /** A catalog whose commits to `failing` fail (as a crash or a lost conflict would leave them). */
  const failingFor = (failing: string): Catalog => {
    const fail = (name: string) => {
      if (name === failing) throw new FloeError(ErrorKind.Unexpected, `injected failure for ${name}`);
    };
    const cat = wh.catalog;
    return {
      listNamespaces: () => cat.listNamespaces(),
      listTables: (ns) => cat.listTables(ns),
      loadTable: (id) => cat.loadTable(id),
      tableExists: (id) => cat.tableExists(id),
      createNamespace: (ns) => cat.createNamespace(ns),
      defaultLocation: (id) => cat.defaultLocation(id),
      createTable: async (id, m) => {
        fail(id.name);
        return cat.createTable(id, m);
      },
      commitTable: async (base, m) => {
        fail(base.id.name);
        return cat.commitTable(base, m);
      },
    };
  };

  const run = async (sources: readonly (typeof a)[], catalog: Catalog = wh.catalog, fastPath = true) => {
    const events: HistoryEvent[] = [];
    const dead: DeadLetter[] = [];
    const history = new FileLoadHistory(wh.catalog, fingerprints, {
      force: false,
      onEvent: (e) => events.push(e),
    });
    const report = await loadSources(
      {
        catalog,
        store: wh.store,
        clock: fixedClock(NOW_MS),
        ids: seededIds(seed++),
        sleep: async () => undefined,
        config,
        history,
        fastPath,
        onDeadLetter: (d) => {
          dead.push(d);
        },
      },
      sources,
    );
    return { report, events, dead };
  };

  const ids = async (table: string): Promise<string[]> => {
    const { IcebergQueryEngine } = await import('../../lambdas/src/query/index.ts');
    const engine = new IcebergQueryEngine({
      read: (u) => wh.store.get(u),
      resolvePath: (u) => wh.store.pathOf(u),
    });
    try {
      await engine.registerTable(
        table,
        (await wh.catalog.loadTable({ namespace: NS, name: table })).metadata,
      );
      const r = await engine.query(`SELECT event_id FROM ${table} ORDER BY 1`);
      return r.rows.map((x) => String(x.event_id));
    } finally {
      engine.close();
    }
  };

  it('the failed table gets its records on the next run, the others none: every record exactly once', async () => {
    const first = await run([a, b], failingFor('user_events'));
    expect(first.report.failures.map((f) => f.table)).toEqual(['user_events']);
    expect(first.report.tables.map((t) => t.table)).toEqual(['click_events', 'order_events']);
    const orders = currentSnapshotOf(
      (await wh.catalog.loadTable({ namespace: NS, name: 'order_events' })).metadata,
    );
    expect(parseLoadedFiles(orders?.summary[LOADED_FILES_KEY]).map((f) => f.name)).toEqual([
      'a.ndjson',
      'b.ndjson',
    ]);

    const second = await run([a, b]);
    expect(second.report.failures).toEqual([]);
    expect(second.report.tables.map((t) => [t.table, t.rows])).toEqual([['user_events', 1]]);
    expect(
      second.events.map((e) =>
        e.kind === 'already-loaded' ? `${basename(e.source)} ${e.table.name}` : e.kind,
      ),
      // In the order the load meets them: a table's first record of a file it holds.
    ).toEqual(['a.ndjson order_events', 'b.ndjson order_events', 'b.ndjson click_events']);

    const third = await run([a, b]);
    expect(third.report.tables).toEqual([]);
    expect(await ids('order_events')).toEqual(['a1', 'a2', 'b1']);
    expect(await ids('user_events')).toEqual(['a3']);
    expect(await ids('click_events')).toEqual(['b2']);
  });

  it.each([
    [true, c],
    [false, d],
  ])(
    'a table fed by a loaded and a new file gets only the new one (fast path %s)',
    async (fastPath, fresh) => {
      const before = await ids('order_events');
      const r = await run([a, fresh], wh.catalog, fastPath);
      expect(r.report.tables.map((t) => [t.table, t.rows])).toEqual([
        ['order_events', 1],
        ['user_events', 1],
      ]);
      const freshId = `${basename(fresh.name)[0]}1`;
      expect(await ids('order_events')).toEqual([...before, freshId].sort());
      const orders = currentSnapshotOf(
        (await wh.catalog.loadTable({ namespace: NS, name: 'order_events' })).metadata,
      );
      expect(parseLoadedFiles(orders?.summary[LOADED_FILES_KEY]).map((f) => f.name)).toEqual([
        basename(fresh.name),
      ]);
      // Once more: both files are held by both tables now, nothing lands.
      expect((await run([a, fresh], wh.catalog, fastPath)).report.tables).toEqual([]);
    },
  );
});
