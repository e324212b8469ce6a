/**
 * The `floe` command line, run as a real process (`node bin/floe.mjs …`). Expected content is
 * derived from the generated input files and from the metadata JSON read straight off disk.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  currentSnapshotOf,
  fileWarehouse,
  generate,
  groupByTable,
  type Json,
  liveFiles,
  NOW_MS,
  openDuck,
  sorted,
  sqlString,
  tableOf,
  tempDir,
} from '../helpers/e2e.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/floe.mjs');
const COMMANDS = [
  'load',
  'tables',
  'describe',
  'snapshots',
  'query',
  'generate',
  'demo',
  'local',
  'dead-letters',
] as const;
const SUBCOMMANDS = [
  ['local', 'up'],
  ['dead-letters', 'list'],
  ['dead-letters', 'show'],
  ['dead-letters', 'replay'],
  ['branch', 'publish'],
] as const;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function floe(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    // FLOE_WAREHOUSE unset so no command falls back to a warehouse outside the test's folders.
    const env = { ...process.env };
    delete env.FLOE_WAREHOUSE;
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? (err as { code: number }).code
            : 1
          : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/** The current metadata JSON of a table, read with JSON.parse straight from the warehouse folder. */
function metadataJson(wh: string, table: string, ns = 'default'): Json {
  const dir = join(wh, ns, table, 'metadata');
  const hint = readFileSync(join(dir, 'version-hint.text'), 'utf8').trim();
  // Bigint ids survive as strings: quote long numbers before parsing.
  const text = readFileSync(join(dir, `v${hint}.metadata.json`), 'utf8').replace(
    /:\s*(-?\d{16,})/g,
    ': "$1"',
  );
  return JSON.parse(text) as Json;
}

const tmp = tempDir('floe-e2e-cli-');
afterAll(() => tmp.cleanup());

describe('floe --help', () => {
  it('prints usage and exits 0 for the program and every command', async () => {
    const runs = await Promise.all([floe('--help'), ...COMMANDS.map((c) => floe(c, '--help'))]);
    const [root, ...perCommand] = runs;
    expect(root!.code).toBe(0);
    expect(root!.stdout).toMatch(/^Usage: floe /m);
    for (const c of COMMANDS) expect(root!.stdout).toMatch(new RegExp(`^\\s+${c}\\b`, 'm'));
    perCommand.forEach((r, i) => {
      expect(r.code, COMMANDS[i]).toBe(0);
      expect(r.stdout, COMMANDS[i]).toMatch(new RegExp(`^Usage: floe ${COMMANDS[i]}\\b`, 'm'));
      expect(r.stdout).toContain('--help');
    });
    for (const [group, sub] of SUBCOMMANDS) {
      const r = await floe(group, sub, '--help');
      expect(r.code, `${group} ${sub}`).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage: floe ${group} ${sub}\\b`, 'm'));
    }
  });
});

describe('floe load, tables, describe, snapshots, query', () => {
  const wh = join(tmp.dir, 'wh');
  const v1 = generate(600, 'v1', 5);
  const v2 = generate(600, 'v2', 6, NOW_MS + 5 * 60_000);
  const byTable = groupByTable([...v1.events, ...v2.events]);
  const orders = byTable.get('order_events')!;

  beforeAll(async () => {
    const f1 = join(tmp.dir, 'v1.ndjson');
    const f2 = join(tmp.dir, 'v2.ndjson');
    writeFileSync(f1, `${v1.lines.join('\n')}\n`);
    writeFileSync(f2, `${v2.lines.join('\n')}\n`);
    for (const f of [f1, f2]) {
      const r = await floe('load', f, '--warehouse', wh);
      expect(r.stderr).not.toMatch(/^floe: /m);
      expect(r.code).toBe(0);
      // The report names every table (with its namespace) and the rows it committed from this file.
      const sent = groupByTable(f === f1 ? v1.events : v2.events);
      for (const [t, evs] of sent)
        expect(r.stdout).toMatch(new RegExp(`^default\\s+${t}\\s+${evs.length}\\s`, 'm'));
    }
  });

  it('tables lists each table with its row and snapshot counts', async () => {
    const r = await floe('tables', '-w', wh);
    expect(r.code).toBe(0);
    expect(readdirSync(join(wh, 'default')).sort()).toEqual([...byTable.keys()].sort());
    for (const [t, evs] of byTable) {
      const line = r.stdout.split('\n').find((l) => new RegExp(`\\b${t}\\b`).test(l));
      expect(line, t).toBeDefined();
      const cells = line!.trim().split(/\s+/);
      // namespace  table  format  columns  snapshots  rows  last commit
      expect(cells.slice(0, 2)).toEqual(['default', t]);
      const m = metadataJson(wh, t);
      const schema = (m.schemas as Json[]).find((s) => s['schema-id'] === m['current-schema-id'])!;
      expect(Number(cells[3])).toBe((schema.fields as Json[]).length);
      expect(Number(cells[4])).toBe(2);
      expect(Number(cells[5])).toBe(evs.length);
    }
  });

  it('describe shows every column with its field id and type, and the partition spec', async () => {
    const r = await floe('describe', 'order_events', '-w', wh);
    expect(r.code).toBe(0);
    const m = metadataJson(wh, 'order_events');
    const schema = (m.schemas as Json[]).find((s) => s['schema-id'] === m['current-schema-id'])!;
    const check = (fields: Json[]) => {
      for (const f of fields) {
        const type = typeof f.type === 'string' ? f.type : String((f.type as Json).type);
        expect(r.stdout, String(f.name)).toMatch(new RegExp(`^\\s*${f.id}\\s+${f.name}: ${type}\\b`, 'm'));
        if (typeof f.type === 'object' && (f.type as Json).type === 'struct')
          check((f.type as Json).fields as Json[]);
      }
    };
    check(schema.fields as Json[]);
    const spec = (m['partition-specs'] as Json[]).find((s) => s['spec-id'] === m['default-spec-id'])!;
    const partitionLine = r.stdout.split('\n').find((l) => l.startsWith('partition'));
    expect(partitionLine).toBeDefined();
    const fields = spec.fields as Json[];
    expect(fields.length).toBeGreaterThan(0);
    for (const pf of fields) {
      const source = (schema.fields as Json[]).find((f) => f.id === pf['source-id'])!;
      expect(partitionLine).toContain(`${pf.transform}(${source.name})`);
      expect(partitionLine).toContain(`${pf.name} [${pf['field-id']}]`);
    }
    // The generated events carry event_date and region: the default candidates partition by both.
    expect(fields.map((f) => f.name)).toEqual(['event_date', 'region']);
    expect(r.stdout).toMatch(new RegExp(`^live rows\\s+${orders.length}$`, 'm'));
  });

  it('describe shows the column v2 added', async () => {
    const r = await floe('describe', 'default.user_events', '-w', wh);
    expect(r.code).toBe(0);
    const m = metadataJson(wh, 'user_events');
    const schema = (m.schemas as Json[]).find((s) => s['schema-id'] === m['current-schema-id'])!;
    const ua = (schema.fields as Json[]).find((f) => f.name === 'user_agent')!;
    expect(ua).toBeDefined();
    expect(r.stdout).toMatch(new RegExp(`^\\s*${ua.id}\\s+user_agent: string`, 'm'));
  });

  it('snapshots lists every snapshot with parent, sequence number, operation and rows', async () => {
    const r = await floe('snapshots', 'order_events', '-w', wh);
    expect(r.code).toBe(0);
    const m = metadataJson(wh, 'order_events');
    const snaps = m.snapshots as Json[];
    expect(snaps).toHaveLength(2);
    const n1 = groupByTable(v1.events).get('order_events')!.length;
    const rows = [n1, orders.length - n1];
    let total = 0;
    snaps.forEach((s, i) => {
      total += rows[i]!;
      const line = r.stdout.split('\n').find((l) => l.startsWith(String(s['snapshot-id'])));
      expect(line, String(s['snapshot-id'])).toBeDefined();
      const cells = line!.trim().split(/\s+/);
      // snapshot id  parent  seq  committed at  operation  files+  rows+  total rows  schema
      expect(cells[1]).toBe(i === 0 ? '-' : String(snaps[i - 1]!['snapshot-id']));
      expect(cells[2]).toBe(String(i + 1));
      expect(cells[4]).toBe('append');
      expect(Number(cells[6])).toBe(rows[i]);
      expect(Number(cells[7])).toBe(total);
    });
  });

  it('query --json answers SQL over the tables', async () => {
    const [count, regions] = await Promise.all([
      floe(
        'query',
        '--json',
        '-w',
        wh,
        'select count(*) as n, count(distinct event_id) as ids, round(sum(amount), 2) as total from order_events',
      ),
      floe(
        'query',
        '--json',
        '-w',
        wh,
        'select region, count(*) as n from order_events group by region order by region',
      ),
    ]);
    expect(count.code).toBe(0);
    const row = JSON.parse(count.stdout.trim()) as Json;
    expect(Number(row.n)).toBe(orders.length);
    expect(Number(row.ids)).toBe(new Set(orders.map((e) => e.event_id)).size);
    const cents = orders.reduce((n, e) => n + Math.round(Number(e.amount) * 100), 0);
    expect(Math.round(Number(row.total) * 100)).toBe(cents);

    expect(regions.code).toBe(0);
    const got = regions.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    const want = new Map<string, number>();
    for (const e of orders) want.set(String(e.region), (want.get(String(e.region)) ?? 0) + 1);
    expect(got.map((g) => [g.region, Number(g.n)])).toEqual([...want].sort(([a], [b]) => a.localeCompare(b)));
  });

  it('an unknown table is a clear error naming it, with a non-zero exit code', async () => {
    const runs = await Promise.all([
      floe('describe', 'nope_events', '-w', wh),
      floe('snapshots', 'nope_events', '-w', wh),
      floe('query', '-w', wh, 'select count(*) from nope_events'),
    ]);
    for (const r of runs) {
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/^floe: .*nope_events/m);
      expect(r.stderr).not.toMatch(/\n\s+at /); // one clear line, no stack trace
      expect(r.stdout).toBe('');
    }
  });
});

describe('floe demo', () => {
  /** The demo's tables: JSON events by `event_type` + `_events`, Avro events by writer schema name. */
  function expectedTables(sent: readonly Json[], jsonCount: number): Map<string, string[]> {
    const out = new Map<string, string[]>();
    sent.forEach((e, i) => {
      const t = i < jsonCount ? tableOf(e) : `${String(e.event_type).toLowerCase()}event`;
      out.set(t, [...(out.get(t) ?? []), String(e.event_id)]);
    });
    return out;
  }

  /**
   * The demo's change events (Debezium envelopes, in the order sent) folded here, independently of
   * Floe, into the last row of each key; and what the stream exercised.
   */
  function expectedCustomers(wh: string) {
    const changes = readFileSync(join(wh, '_floe', 'demo-cdc-sent.ndjson'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    const rows = new Map<string, Json>();
    const seen = new Set<string>();
    let updates = 0;
    let deletes = 0;
    let reinserts = 0;
    let repeatedUpdates = 0;
    let previous = '';
    for (const c of changes) {
      const image = (c.op === 'd' ? c.before : c.after) as Json;
      const id = String(image.id);
      if (c.op === 'd') {
        deletes++;
        rows.delete(id);
      } else {
        if (c.op === 'u') updates++;
        else if (seen.has(id)) reinserts++;
        rows.set(id, image);
      }
      // The same key updated again by the very next change: both in one batch, one commit.
      if (c.op === 'u' && previous === `u ${id}`) repeatedUpdates++;
      previous = `${String(c.op)} ${id}`;
      seen.add(id);
    }
    return { changes, keys: seen.size, updates, deletes, reinserts, repeatedUpdates, rows };
  }

  /** The customers upsert table (read with `floe query`) holds the last state of every key sent. */
  async function checkCustomers(wh: string, stdout: string) {
    const want = expectedCustomers(wh);
    expect(want.updates).toBeGreaterThan(0);
    expect(want.deletes).toBeGreaterThan(0);
    expect(want.reinserts).toBeGreaterThan(0);
    expect(want.repeatedUpdates).toBeGreaterThan(0);
    expect(want.rows.size).toBeLessThan(want.keys);
    const line = `${want.keys} keys, ${want.updates} updates, ${want.deletes} deletes, ${want.reinserts} re-inserts after delete → ${want.rows.size} rows, matches the change stream`;
    expect(stdout).toContain(`customers (CDC): ${line}`);
    expect(stdout).toContain(`customers (CDC) after compaction: ${line}`);
    const columns = ['id', 'name', 'email', 'tier', 'region', 'revision'];
    const q = await floe('query', '--json', '-w', wh, `select ${columns.join(', ')} from customers`);
    expect(q.code, q.stderr).toBe(0);
    const got = q.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json)
      .map((r) => JSON.stringify(columns.map((c) => String(r[c]))));
    expect(sorted(got)).toEqual(
      sorted([...want.rows.values()].map((r) => JSON.stringify(columns.map((c) => String(r[c]))))),
    );
  }

  async function checkDemo(wh: string, sentFile: string, n: number) {
    const sent = readFileSync(sentFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(sent).toHaveLength(2 * n + Math.ceil(n / 2));
    const byTable = expectedTables(sent, 2 * n);
    expect(readdirSync(join(wh, 'default')).sort()).toEqual([...byTable.keys(), 'customers'].sort());
    // Every table's event ids, queried through the CLI, equal what was sent (duplicates included).
    for (const [t, ids] of byTable) {
      const q = await floe('query', '--json', '-w', wh, `select event_id from ${t}`);
      expect(q.code).toBe(0);
      const got = q.stdout
        .trim()
        .split('\n')
        .map((l) => String((JSON.parse(l) as Json).event_id));
      expect(sorted(got), t).toEqual(sorted(ids));
    }
  }

  it('streams through the local stack and leaves tables holding exactly the events it sent', async () => {
    const wh = join(tmp.dir, 'demo');
    const sentFile = join(tmp.dir, 'demo-sent.ndjson');
    const r = await floe('demo', '-n', '300', '-w', wh, '--record-to', sentFile);
    expect(r.stderr).not.toMatch(/^floe: /m);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('every table holds exactly the events sent, each exactly once');
    expect(r.stdout).toMatch(/schema evolved: .*scroll_depth/);
    // The demo ends by maintaining every table: compacted, one snapshot each, events intact.
    expect(r.stdout).toMatch(/default\.order_events\s+\d+ → \d+\s/);
    expect(r.stdout).toContain('every event id is still there exactly once');
    await checkDemo(wh, sentFile, 300);
    await checkCustomers(wh, r.stdout);
    // Independently of Floe's scan planner and query engine: walk each table's current snapshot
    // (manifest list → manifests → live files) and let DuckDB read the Parquet files themselves.
    const sent = readFileSync(sentFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    const byTable = expectedTables(sent, 600);
    const wh2 = fileWarehouse(wh);
    const duck = await openDuck();
    try {
      for (const [t, ids] of byTable) {
        const { metadata } = await wh2.catalog.loadTable({ namespace: 'default', name: t });
        const files = (await liveFiles(wh2.store, currentSnapshotOf(metadata)!)).map((f) =>
          wh2.store.pathOf(f.file.file_path),
        );
        const rows = await duck.rows(
          `SELECT CAST(event_id AS VARCHAR) AS id FROM read_parquet([${files.map(sqlString).join(', ')}])`,
        );
        expect(sorted(rows.map((x) => String(x.id))), t).toEqual(sorted(ids));
      }
    } finally {
      duck.close();
    }
  });

  it('--chaos injects faults and the check still holds', async () => {
    const wh = join(tmp.dir, 'demo-chaos');
    const sentFile = join(tmp.dir, 'demo-chaos-sent.ndjson');
    const r = await floe('demo', '-n', '400', '-s', '11', '--chaos', '-w', wh, '--record-to', sentFile);
    expect(r.code).toBe(0);
    const injected = /chaos injected: (.*)/.exec(r.stdout)?.[1] ?? '';
    const numbers = [...injected.matchAll(/\d+/g)].map((m) => Number(m[0]));
    expect(numbers.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(r.stdout).toContain('every event id is still there exactly once');
    await checkDemo(wh, sentFile, 400);
    await checkCustomers(wh, r.stdout);
    // What the faults left behind is gone: each table's folder holds what its metadata reaches.
    const wh2 = fileWarehouse(wh);
    for (const name of await wh2.catalog.listTables('default')) {
      const t = await wh2.catalog.loadTable({ namespace: 'default', name });
      expect(t.metadata.snapshots, name).toHaveLength(1);
      const data = (await wh2.store.list(`${t.metadata.location}/data`)).length;
      expect(data, name).toBe((await liveFiles(wh2.store, currentSnapshotOf(t.metadata)!)).length);
    }
  });

  it('refuses a warehouse that already holds tables', async () => {
    const r = await floe('demo', '-n', '10', '-w', join(tmp.dir, 'demo'));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/already holds tables/);
  });
});
