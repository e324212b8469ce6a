/**
 * End to end load semantics through `loadSources` (in process) and, for dead-letter files, the CLI:
 * counts, schema evolution and snapshot lineage, bad input, concurrent writers and long histories.
 * Expectations come from the generated input and from reading metadata/manifests/Parquet directly;
 * every warehouse a scenario ends with passes the independent Iceberg validator (every snapshot).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../lambdas/src/config.ts';
import { DeadLetterReason } from '../../lambdas/src/engine/dead-letters.ts';
import { ErrorKind, FloeError, isFloeError } from '../../lambdas/src/errors.ts';
import { ManifestEntryStatus } from '../../lambdas/src/iceberg/manifest/index.ts';
import type { TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import type { Catalog, LoadedTable } from '../../lambdas/src/ports/catalog.ts';
import {
  currentSnapshotOf,
  fileWarehouse,
  generate,
  groupByTable,
  type Json,
  type LiveFile,
  liveFiles,
  load,
  manifestsOf,
  NOW_MS,
  openDuck,
  sorted,
  sqlString,
  type TestWarehouse,
  tempDir,
} from '../helpers/e2e.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NS = 'default';

const tmp = tempDir('floe-e2e-sem-');
afterAll(() => tmp.cleanup());
let whCounter = 0;
function freshWarehouse(): TestWarehouse {
  return fileWarehouse(join(tmp.dir, `wh${whCounter++}`));
}

async function meta(wh: TestWarehouse, name: string): Promise<TableMetadata> {
  return (await wh.catalog.loadTable({ namespace: NS, name })).metadata;
}

async function current(wh: TestWarehouse, name: string): Promise<LiveFile[]> {
  return liveFiles(wh.store, currentSnapshotOf(await meta(wh, name))!);
}

/** event_id of every row in the table's current snapshot, read by field id with DuckDB. */
async function eventIds(wh: TestWarehouse, name: string): Promise<string[]> {
  const m = await meta(wh, name);
  const schema = m.schemas.find((s) => s.schemaId === m['current-schema-id'])!;
  const idField = schema.fields.find((f) => f.name === 'event_id')!;
  const files = (await current(wh, name)).map((f) => sqlString(wh.store.pathOf(f.file.file_path)));
  const duck = await openDuck();
  try {
    const rows = await duck.rows(
      `SELECT e FROM read_parquet([${files.join(', ')}], schema=map{${idField.id}: {name: 'e', type: 'VARCHAR', default_value: NULL}}, hive_partitioning=false)`,
    );
    return sorted(rows.map((r) => String(r.e)));
  } finally {
    duck.close();
  }
}

function countsByTable(events: readonly Json[]): Record<string, number> {
  return Object.fromEntries([...groupByTable(events)].map(([t, evs]) => [t, evs.length]));
}

async function rowCounts(wh: TestWarehouse): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of await wh.catalog.listTables(NS)) {
    out[name] = (await current(wh, name)).reduce((n, f) => n + Number(f.file.record_count), 0);
  }
  return out;
}

function sha(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Data sequence number of a live entry (explicit, or inherited from its manifest when ADDED). */
function dataSeq(f: LiveFile): bigint {
  return f.entry.sequence_number ?? f.manifest.sequence_number;
}

function addedBy(f: LiveFile): bigint {
  return f.entry.snapshot_id ?? f.manifest.added_snapshot_id;
}

/** A catalog that forwards everything and lets the test intercept `commitTable`. */
function interceptCommits(
  inner: Catalog,
  onCommit: (base: LoadedTable, next: TableMetadata, call: number) => Promise<LoadedTable>,
): Catalog {
  let calls = 0;
  return {
    listNamespaces: () => inner.listNamespaces(),
    createNamespace: (ns) => inner.createNamespace(ns),
    listTables: (ns) => inner.listTables(ns),
    loadTable: (id) => inner.loadTable(id),
    tableExists: (id) => inner.tableExists(id),
    defaultLocation: (id) => inner.defaultLocation(id),
    createTable: (id, m) => inner.createTable(id, m),
    commitTable: (base, next) => onCommit(base, next, ++calls),
  };
}

// ---------------------------------------------------------------------------------------------

describe('a. counts: every input record lands, duplicates included, the same in any warehouse', () => {
  it('two fresh warehouses loaded from the same files hold exactly the generated count per event type', async () => {
    const v1 = generate(1500, 'v1', 11);
    const v2 = generate(1500, 'v2', 12, NOW_MS + 5 * 60_000);
    const dir = join(tmp.dir, 'inputs-a');
    await fs.mkdir(dir, { recursive: true });
    const files = [join(dir, 'v1.ndjson'), join(dir, 'v2.ndjson')];
    writeFileSync(files[0]!, `${v1.lines.join('\n')}\n`);
    writeFileSync(files[1]!, `${v2.lines.join('\n')}\n`);
    const all = [...v1.events, ...v2.events];
    // The generator repeats ~10 % of event ids: those are distinct records and must all land.
    expect(new Set(all.map((e) => e.event_id)).size).toBeLessThan(all.length);
    const want = countsByTable(all);

    const results: Record<string, number>[] = [];
    for (let i = 0; i < 2; i++) {
      const wh = freshWarehouse();
      const sources = files.map((f) => ({ name: f, lines: readFileSync(f, 'utf8').split('\n') }));
      const { report, dead } = await load(wh, sources);
      expect(dead).toEqual([]);
      expect(report.rows).toBe(all.length);
      const counts = await rowCounts(wh);
      expect(counts).toEqual(want);
      for (const [name, n] of Object.entries(want)) {
        const ids = await eventIds(wh, name);
        expect(ids).toEqual(
          sorted(
            groupByTable(all)
              .get(name)!
              .map((e) => String(e.event_id)),
          ),
        );
        const snap = currentSnapshotOf(await meta(wh, name))!;
        expect(snap.summary['total-records']).toBe(String(n));
      }
      await expectWarehouseValid(wh);
      results.push(counts);
    }
    expect(results[0]).toEqual(results[1]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('b. v1 then v2: additive evolution, old files untouched, lineage', () => {
  let wh: TestWarehouse;
  let before: Map<string, { meta: TableMetadata; files: LiveFile[]; sha: Map<string, string> }>;
  let v1: ReturnType<typeof generate>;
  let v2: ReturnType<typeof generate>;

  beforeAll(async () => {
    wh = freshWarehouse();
    v1 = generate(1200, 'v1', 21);
    v2 = generate(1200, 'v2', 22, NOW_MS + 5 * 60_000);
    expect((await load(wh, [{ name: 'v1', lines: v1.lines }])).dead).toEqual([]);
    before = new Map();
    for (const name of await wh.catalog.listTables(NS)) {
      const m = await meta(wh, name);
      const files = await liveFiles(wh.store, currentSnapshotOf(m)!);
      before.set(name, {
        meta: m,
        files,
        sha: new Map(files.map((f) => [f.file.file_path, sha(wh.store.pathOf(f.file.file_path))])),
      });
    }
    expect((await load(wh, [{ name: 'v2', lines: v2.lines }])).dead).toEqual([]);
  });

  it('adds user_agent (string) and scroll_depth (long) as new optional columns with fresh ids; other ids unchanged', async () => {
    const added = { user_events: ['user_agent', 'string'], click_events: ['scroll_depth', 'long'] } as const;
    for (const [table, [column, type]] of Object.entries(added)) {
      const old = before.get(table)!.meta;
      const m = await meta(wh, table);
      expect(m.schemas.map((s) => s.schemaId)).toEqual([0, 1]);
      expect(m['current-schema-id']).toBe(1);
      const s0 = m.schemas[0]!;
      const s1 = m.schemas[1]!;
      expect(s0).toEqual(old.schemas[0]); // the old schema is kept as it was
      const f = s1.fields.find((x) => x.name === column)!;
      expect(f, `${table}.${column}`).toBeDefined();
      expect(f.required).toBe(false);
      expect(f.type).toEqual({ kind: type });
      expect(f.id).toBe(old['last-column-id'] + 1);
      expect(m['last-column-id']).toBe(f.id);
      expect(s1.fields.filter((x) => x.name !== column)).toEqual(s0.fields);
    }
    // order_events got no new column: still one schema.
    const orders = await meta(wh, 'order_events');
    expect(orders.schemas).toEqual(before.get('order_events')!.meta.schemas);
  });

  it('rows from v1 read back null in the new columns, v2 rows carry their values', async () => {
    const duck = await openDuck();
    try {
      for (const [table, column] of [
        ['user_events', 'user_agent'],
        ['click_events', 'scroll_depth'],
      ] as const) {
        const m = await meta(wh, table);
        const s1 = m.schemas.find((s) => s.schemaId === m['current-schema-id'])!;
        const col = s1.fields.find((f) => f.name === column)!;
        const id = s1.fields.find((f) => f.name === 'event_id')!;
        const files = (await current(wh, table)).map((f) => sqlString(wh.store.pathOf(f.file.file_path)));
        const rows = await duck.rows(
          `SELECT e, CAST(c AS VARCHAR) AS c FROM read_parquet([${files.join(', ')}], schema=map{${id.id}: {name: 'e', type: 'VARCHAR', default_value: NULL}, ${col.id}: {name: 'c', type: '${col.type.kind === 'long' ? 'BIGINT' : 'VARCHAR'}', default_value: NULL}}, hive_partitioning=false)`,
        );
        const want = [...v1.events, ...v2.events]
          .filter((e) => `${String(e.event_type).toLowerCase()}_events` === table)
          .map((e) => `${e.event_id}|${e[column] === undefined ? 'null' : String(e[column])}`);
        expect(sorted(rows.map((r) => `${r.e}|${r.c === null ? 'null' : r.c}`))).toEqual(sorted(want));
        expect(v1.events.some((e) => e[column] !== undefined)).toBe(false);
      }
    } finally {
      duck.close();
    }
  });

  it('keeps the first snapshot’s data files referenced unchanged (same paths, sizes, bytes, sequence number 1)', async () => {
    for (const [table, old] of before) {
      const m = await meta(wh, table);
      const now = await liveFiles(wh.store, currentSnapshotOf(m)!);
      const byPath = new Map(now.map((f) => [f.file.file_path, f]));
      expect(old.files.length).toBeGreaterThan(0);
      for (const f of old.files) {
        const still = byPath.get(f.file.file_path);
        expect(still, `${table}: ${f.file.file_path} still referenced`).toBeDefined();
        expect(still!.file.file_size_in_bytes).toBe(f.file.file_size_in_bytes);
        expect(still!.file.record_count).toBe(f.file.record_count);
        expect(sha(wh.store.pathOf(f.file.file_path))).toBe(old.sha.get(f.file.file_path));
        expect((await fs.stat(wh.store.pathOf(f.file.file_path))).size).toBe(
          Number(f.file.file_size_in_bytes),
        );
        expect(dataSeq(still!)).toBe(1n);
      }
      // The v2 files are new ones, added at sequence number 2; nothing else.
      const fresh = now.filter((f) => !old.sha.has(f.file.file_path));
      expect(fresh.length).toBeGreaterThan(0);
      for (const f of fresh) expect(dataSeq(f)).toBe(2n);
      expect(now.length).toBe(old.files.length + fresh.length);
      // The first snapshot's manifests are carried over as they were.
      const oldManifests = (await manifestsOf(wh.store, currentSnapshotOf(old.meta)!)).map(
        (x) => x.manifest_path,
      );
      const newManifests = (await manifestsOf(wh.store, currentSnapshotOf(m)!)).map((x) => x.manifest_path);
      for (const p of oldManifests) expect(newManifests).toContain(p);
    }
  });

  it('records the lineage: parent ids, sequence numbers 1 and 2, schema ids per snapshot', async () => {
    for (const table of before.keys()) {
      const m = await meta(wh, table);
      expect(m.snapshots).toHaveLength(2);
      const [s1, s2] = m.snapshots as [
        TableMetadata['snapshots'][number],
        TableMetadata['snapshots'][number],
      ];
      expect(s1['parent-snapshot-id']).toBeUndefined();
      expect(s2['parent-snapshot-id']).toBe(s1['snapshot-id']);
      expect([s1['sequence-number'], s2['sequence-number']]).toEqual([1n, 2n]);
      expect(m['last-sequence-number']).toBe(2n);
      expect(m['current-snapshot-id']).toBe(s2['snapshot-id']);
      expect(m.refs.main?.['snapshot-id']).toBe(s2['snapshot-id']);
      expect(s1['schema-id']).toBe(0);
      expect(s2['schema-id']).toBe(m['current-schema-id']);
      expect(s2['timestamp-ms']).toBeGreaterThanOrEqual(s1['timestamp-ms']);
      const n1 = v1.events.filter((e) => `${String(e.event_type).toLowerCase()}_events` === table).length;
      const n2 = v2.events.filter((e) => `${String(e.event_type).toLowerCase()}_events` === table).length;
      expect(s1.summary['added-records']).toBe(String(n1));
      expect(s2.summary['added-records']).toBe(String(n2));
      expect(s2.summary['total-records']).toBe(String(n1 + n2));
    }
  });

  it('an independent validator accepts every table, every snapshot', async () => {
    const reports = await expectWarehouseValid(wh);
    expect([...reports.keys()].sort()).toEqual([...before.keys()].map((t) => `${NS}.${t}`).sort());
  });
});

// ---------------------------------------------------------------------------------------------

/** A file mixing good and bad lines; `expect` is what each bad line must come back as. */
function badInput() {
  const good = generate(40, 'v1', 31).lines;
  const lines: string[] = [];
  const bad = new Map<number, { reason: string; table?: string; detail?: RegExp }>();
  const push = (line: string, reason?: string, table?: string, detail?: RegExp) => {
    lines.push(line);
    if (reason) bad.set(lines.length, { reason, ...(table ? { table } : {}), ...(detail ? { detail } : {}) });
  };
  // Numeric ORDER amounts first, so the table's amount column is a double.
  for (const l of good.slice(0, 20)) push(l);
  push('{"event_type":"ORDER","event_id":"bad-json"', DeadLetterReason.MalformedJson);
  push('[{"event_type":"ORDER"}]', DeadLetterReason.NotAnObject, undefined, /array/);
  push('42', DeadLetterReason.NotAnObject);
  push('null', DeadLetterReason.NotAnObject, undefined, /null/);
  push('   "just a string"  ', DeadLetterReason.NotAnObject);
  push('{"event_type":"%%%","event_id":"weird-1"}', DeadLetterReason.IllegalTableName, undefined, /%%%/);
  push(
    '{"event_type":"ORDER","note":"caf\u00e9 \u2713 \ud83d\ude00",\tbroken}',
    DeadLetterReason.MalformedJson,
  );
  push(
    '{"event_type":"ORDER","event_id":"ORDER-abc","amount":"abc","region":"us-east-1"}',
    DeadLetterReason.TypeConflict,
    'order_events',
    /amount/,
  );
  push('');
  push('{"event_type":"USER","event_id":"USER-obj","profile":{"tier":"gold","since":2019}}');
  push(
    '{"event_type":"USER","event_id":"USER-str","profile":"gold"}',
    DeadLetterReason.TypeConflict,
    'user_events',
    /profile/,
  );
  // No routing value at all, an empty one and a non-text one: the default table (unknown_events).
  push('{"event_id":"NOTYPE-1","note":"no event_type"}');
  push('{"event_type":"","event_id":"NOTYPE-2","note":"empty"}');
  push('{"event_type":"   ","event_id":"NOTYPE-3","note":"blank"}');
  push('  {"event_type" : "CLICK",  "event_id":"CLICK-ws", "note": "caf\u00e9 \\u00e9 \\ud83d\\ude00"}  ');
  for (const l of good.slice(20)) push(l);
  return { lines, bad, good };
}

describe('c. bad input: every bad line is a dead letter with source, line and reason; good lines land', () => {
  it('in process: reasons, line numbers, raw text; counts of the good lines per table', async () => {
    const config = parseConfig({});
    expect(config.routing.defaultTable).toBe('unknown_events');
    const { lines, bad } = badInput();
    const wh = freshWarehouse();
    const { report, dead } = await load(wh, [{ name: 'mixed.ndjson', lines }], { config });

    expect(sorted(dead.map((d) => String(d.line)))).toEqual(sorted([...bad.keys()].map(String)));
    for (const d of dead) {
      const want = bad.get(d.line)!;
      expect(d.source).toBe('mixed.ndjson');
      expect(d.reason, `line ${d.line}`).toBe(want.reason);
      expect(d.raw).toBe(lines[d.line - 1]);
      if (want.table) expect(d.table).toBe(want.table);
      if (want.detail) expect(d.detail).toMatch(want.detail);
      expect(d.detail.length).toBeGreaterThan(0);
    }
    const byReason: Record<string, number> = {};
    for (const w of bad.values()) byReason[w.reason] = (byReason[w.reason] ?? 0) + 1;
    expect(report.deadLetters).toEqual(byReason);

    // Good lines: everything that parses to an object and is not in `bad`.
    const goodEvents = lines
      .map((l, i) => ({ l, n: i + 1 }))
      .filter(({ l, n }) => l.trim() !== '' && !bad.has(n))
      .map(({ l }) => JSON.parse(l) as Json);
    const want: Record<string, number> = {};
    for (const e of goodEvents) {
      const t =
        typeof e.event_type === 'string' && e.event_type.trim() !== ''
          ? `${e.event_type.toLowerCase()}_events`
          : 'unknown_events';
      want[t] = (want[t] ?? 0) + 1;
    }
    expect(want.unknown_events).toBe(3);
    expect(await rowCounts(wh)).toEqual(want);
    expect(report.rows).toBe(goodEvents.length);
    expect(report.lines).toBe(lines.length);
    // The rejected ORDER is not in the table; the accepted ones are.
    const orderIds = await eventIds(wh, 'order_events');
    expect(orderIds).not.toContain('ORDER-abc');
    expect(orderIds).toEqual(
      sorted(goodEvents.filter((e) => e.event_type === 'ORDER').map((e) => String(e.event_id))),
    );
    await expectWarehouseValid(wh);
  });

  it('a later load whose values cannot join the existing column is dead-lettered; compatible records still land', async () => {
    const wh = freshWarehouse();
    const first = generate(60, 'v1', 41);
    expect((await load(wh, [{ name: 'first', lines: first.lines }])).dead).toEqual([]);
    const before = (await rowCounts(wh)).order_events!;
    const lines = [
      '{"event_type":"ORDER","event_id":"ORDER-good-1","amount":3.5}',
      '{"event_type":"ORDER","event_id":"ORDER-bad","amount":"abc"}',
      '{"event_type":"ORDER","event_id":"ORDER-good-2","amount":4.25}',
    ];
    const { dead } = await load(wh, [{ name: 'second', lines }]);
    expect(dead.map((d) => [d.line, d.reason])).toEqual([[2, DeadLetterReason.TypeConflict]]);
    expect((await rowCounts(wh)).order_events).toBe(before + 2);
    await expectWarehouseValid(wh);
  });

  // A batch that conflicts is screened record by record against the table's schema first, so an
  // incompatible FIRST record cannot decide the column type for the compatible ones after it.
  it('a bad record first in the batch does not take the compatible records down with it', async () => {
    const wh = freshWarehouse();
    expect((await load(wh, [{ name: 'first', lines: generate(60, 'v1', 42).lines }])).dead).toEqual([]);
    const before = (await rowCounts(wh)).order_events!;
    const lines = [
      '{"event_type":"ORDER","event_id":"ORDER-bad","amount":"abc"}',
      '{"event_type":"ORDER","event_id":"ORDER-good-1","amount":3.5}',
    ];
    const { dead } = await load(wh, [{ name: 'second', lines }]);
    expect(dead.map((d) => [d.line, d.reason])).toEqual([[1, DeadLetterReason.TypeConflict]]);
    expect((await rowCounts(wh)).order_events).toBe(before + 1);
    await expectWarehouseValid(wh);
  });

  // A record with no typed field (`{}`, `{"note":null}`) bound for a table that does not exist has
  // nothing to form a column: it is dead-lettered (no-typed-values) and the other tables still land.
  it('a record with no typed fields is a dead letter, not a failed load', async () => {
    const wh = freshWarehouse();
    const lines = [
      '{"event_type":"ORDER","event_id":"ORDER-1","amount":1.5}',
      '{}',
      '{"event_type":"USER","event_id":"USER-1"}',
    ];
    const { dead } = await load(wh, [{ name: 'empty', lines }]);
    expect(dead.map((d) => d.line)).toEqual([2]);
    expect(await rowCounts(wh)).toMatchObject({ order_events: 1, user_events: 1 });
    await expectWarehouseValid(wh);
  });

  it('via the CLI: the dead-letter file holds one JSON line per rejected line, with reason, line and the raw text byte for byte', async () => {
    const { lines, bad } = badInput();
    const dir = join(tmp.dir, 'cli-c');
    await fs.mkdir(dir, { recursive: true });
    const input = join(dir, 'mixed.ndjson');
    writeFileSync(input, `${lines.join('\n')}\n`);
    const dl = join(dir, 'out', 'dead.ndjson');
    const wh = join(dir, 'wh');
    // Exit code 3 (partial: lines were dead-lettered): execFile rejects, with the output attached.
    const { stdout, code } = await exec(
      process.execPath,
      [join(ROOT, 'bin/floe.mjs'), 'load', input, '--warehouse', wh, '--dead-letters', dl, '-q'],
      {
        cwd: ROOT,
      },
    ).then(
      (r) => ({ ...r, code: 0 }),
      (e: { stdout: string; code: number }) => e,
    );
    expect(code).toBe(3);
    const text = readFileSync(dl, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const records = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(records).toHaveLength(bad.size);
    expect(sorted(records.map((r) => String(r.line)))).toEqual(sorted([...bad.keys()].map(String)));
    for (const r of records) {
      const line = r.line as number;
      expect(r.reason).toBe(bad.get(line)!.reason);
      expect(r.source).toBe(input);
      expect(r.raw).toBe(lines[line - 1]);
      // Byte for byte: the raw text re-encoded is the exact bytes of that input line.
      expect(
        Buffer.from(String(r.raw), 'utf8').equals(
          readFileSync(input).subarray(...lineSpan(readFileSync(input), line)),
        ),
      ).toBe(true);
    }
    expect(stdout).toContain(dl);
    // And the good lines landed (read independently: summary totals in the metadata JSON).
    const goodCount = lines.filter((l, i) => l.trim() !== '' && !bad.has(i + 1)).length;
    let total = 0;
    for (const t of readdirSync(join(wh, NS))) {
      const hint = readFileSync(join(wh, NS, t, 'metadata', 'version-hint.text'), 'utf8').trim();
      const m = JSON.parse(
        readFileSync(join(wh, NS, t, 'metadata', `v${hint}.metadata.json`), 'utf8'),
      ) as Json;
      const snaps = m.snapshots as Json[];
      const cur = snaps.find((s) => String(s['snapshot-id']) === String(m['current-snapshot-id']))!;
      total += Number((cur.summary as Json)['total-records']);
    }
    expect(total).toBe(goodCount);
    await expectWarehouseValid(fileWarehouse(wh));
  });
});

/** [start, end) byte offsets of 1-based line `n` in `buf` (lines end with \n). */
function lineSpan(buf: Buffer, n: number): [number, number] {
  let start = 0;
  for (let i = 1; i < n; i++) start = buf.indexOf(0x0a, start) + 1;
  const end = buf.indexOf(0x0a, start);
  return [start, end < 0 ? buf.length : end];
}

// ---------------------------------------------------------------------------------------------

describe('d. concurrent writers', () => {
  function orderLines(seed: number, n: number): string[] {
    return generate(n * 3, 'v1', seed)
      .lines.filter((l) => (JSON.parse(l) as Json).event_type === 'ORDER')
      .slice(0, n);
  }

  async function assertTableHolds(
    wh: TestWarehouse,
    name: string,
    lines: readonly string[],
    snapshots: number,
  ) {
    const m = await meta(wh, name);
    const live = await current(wh, name);
    // Every data file referenced once, and every Parquet file in the table folder is referenced.
    const paths = live.map((f) => f.file.file_path);
    expect(new Set(paths).size).toBe(paths.length);
    const onDisk = (await wh.store.list(`${m.location}/data`)).filter((p) => p.endsWith('.parquet'));
    expect(sorted(onDisk)).toEqual(sorted(paths));
    // Exactly the rows sent (duplicates of the input stay duplicates; nothing doubled).
    expect(await eventIds(wh, name)).toEqual(
      sorted(lines.map((l) => String((JSON.parse(l) as Json).event_id))),
    );
    // A straight line of snapshots, sequence numbers 1..n, and no manifest list left by a failed attempt.
    expect(m.snapshots).toHaveLength(snapshots);
    m.snapshots.forEach((s, i) => {
      expect(s['sequence-number']).toBe(BigInt(i + 1));
      expect(s['parent-snapshot-id']).toBe(i === 0 ? undefined : m.snapshots[i - 1]!['snapshot-id']);
    });
    const lists = (await wh.store.list(`${m.location}/metadata`)).filter((p) =>
      /\/snap-[^/]*\.avro$/.test(p),
    );
    expect(sorted(lists)).toEqual(sorted(m.snapshots.map((s) => s['manifest-list']!)));
    await expectWarehouseValid(wh);
  }

  it('two loads racing on the same table both commit (one retries) and the table holds the sum', async () => {
    const wh = freshWarehouse();
    const init = orderLines(51, 30);
    const a = orderLines(52, 40);
    const b = orderLines(53, 50);
    await load(wh, [{ name: 'init', lines: init }]);

    // Hold each writer's first commit until both have staged against the same base version.
    let arrived = 0;
    let release!: () => void;
    const bothReady = new Promise<void>((r) => {
      release = r;
    });
    const conflicts: string[] = [];
    const racing = () =>
      interceptCommits(wh.catalog, async (base, next, call) => {
        if (call === 1) {
          if (++arrived === 2) release();
          await bothReady;
        }
        try {
          return await wh.catalog.commitTable(base, next);
        } catch (e) {
          if (isFloeError(e, ErrorKind.CommitConflict)) conflicts.push(e.message);
          throw e;
        }
      });
    const [ra, rb] = await Promise.all([
      load(wh, [{ name: 'a', lines: a }], { catalog: racing() }),
      load(wh, [{ name: 'b', lines: b }], { catalog: racing() }),
    ]);
    expect(ra.dead).toEqual([]);
    expect(rb.dead).toEqual([]);
    expect(ra.report.rows).toBe(a.length);
    expect(rb.report.rows).toBe(b.length);
    expect(conflicts).toHaveLength(1);
    expect(sorted([ra, rb].map((r) => String(r.report.tables[0]!.attempts)))).toEqual(['1', '2']);
    await assertTableHolds(wh, 'order_events', [...init, ...a, ...b], 3);
  });

  it('a conflict injected after another writer’s commit: the retry rebuilds on top of it and lands exactly once', async () => {
    const wh = freshWarehouse();
    const init = orderLines(61, 30);
    const other = orderLines(62, 25);
    const ours = orderLines(63, 35);
    await load(wh, [{ name: 'init', lines: init }]);

    let otherSnapshot: bigint | undefined;
    let firstError: unknown;
    const catalog = interceptCommits(wh.catalog, async (base, next, call) => {
      if (call === 1) {
        // Another writer commits between our load and our swap …
        const r = await load(wh, [{ name: 'other', lines: other }]);
        otherSnapshot = r.report.tables[0]!.snapshotId;
        // … so the swap must fail with CommitConflict.
        try {
          await wh.catalog.commitTable(base, next);
        } catch (e) {
          firstError = e;
          throw e;
        }
        throw new Error('commit against a stale base succeeded');
      }
      return wh.catalog.commitTable(base, next);
    });
    const r = await load(wh, [{ name: 'ours', lines: ours }], { catalog });
    expect(firstError).toBeInstanceOf(FloeError);
    expect((firstError as FloeError).kind).toBe(ErrorKind.CommitConflict);
    expect(r.report.tables[0]!.attempts).toBe(2);
    expect(r.report.rows).toBe(ours.length);

    const m = await meta(wh, 'order_events');
    const snap = currentSnapshotOf(m)!;
    expect(snap['snapshot-id']).toBe(r.report.tables[0]!.snapshotId);
    expect(snap['parent-snapshot-id']).toBe(otherSnapshot);
    expect(snap.summary['added-records']).toBe(String(ours.length));
    expect(snap.summary['total-records']).toBe(String(init.length + other.length + ours.length));
    await assertTableHolds(wh, 'order_events', [...init, ...other, ...ours], 3);
  });
});

// ---------------------------------------------------------------------------------------------

describe('e. a long history: 120 small appends', () => {
  it('keeps the manifest count bounded (merging) and every row readable with its original sequence number', async () => {
    const wh = freshWarehouse();
    const orders = generate(1200, 'v1', 71).lines.filter(
      (l) => (JSON.parse(l) as Json).event_type === 'ORDER',
    );
    const COMMITS = 120;
    const PER = 3;
    expect(orders.length).toBeGreaterThanOrEqual(COMMITS * PER);
    const sent: string[] = [];
    for (let i = 0; i < COMMITS; i++) {
      const chunk = orders.slice(i * PER, (i + 1) * PER);
      sent.push(...chunk);
      const { dead } = await load(wh, [{ name: `chunk-${i}`, lines: chunk }]);
      expect(dead).toEqual([]);
    }
    const m = await meta(wh, 'order_events');
    expect(m.snapshots).toHaveLength(COMMITS);
    expect(m['last-sequence-number']).toBe(BigInt(COMMITS));
    const snap = currentSnapshotOf(m)!;
    const manifests = await manifestsOf(wh.store, snap);
    const minCount = Number(m.properties['commit.manifest.min-count-to-merge'] ?? 100);
    // Without merging there would be one manifest per commit.
    expect(manifests.length).toBeLessThan(minCount);
    expect(manifests.length).toBeLessThan(COMMITS);

    const live = await liveFiles(wh.store, snap);
    const paths = live.map((f) => f.file.file_path);
    expect(new Set(paths).size).toBe(paths.length);
    expect(live.reduce((n, f) => n + Number(f.file.record_count), 0)).toBe(sent.length);
    // Merged entries are EXISTING and keep the snapshot id and data sequence number of the commit that added them.
    expect(live.some((f) => f.entry.status === ManifestEntryStatus.EXISTING)).toBe(true);
    const seqOf = new Map(m.snapshots.map((s) => [s['snapshot-id'], s['sequence-number']]));
    for (const f of live) expect(dataSeq(f), f.file.file_path).toBe(seqOf.get(addedBy(f)));
    expect(new Set(live.map(addedBy)).size).toBe(COMMITS);
    // All rows still read correctly.
    expect(await eventIds(wh, 'order_events')).toEqual(
      sorted(sent.map((l) => String((JSON.parse(l) as Json).event_id))),
    );
    await expectWarehouseValid(wh);
  });
});

describe('type-conflict policy', () => {
  it("'coerce' lands lossless mismatches and records them in the snapshot summary; 'dead-letter' rejects them", async () => {
    const { dir, cleanup } = tempDir();
    try {
      for (const policy of ['coerce', 'dead-letter'] as const) {
        const wh = fileWarehouse(`${dir}/${policy}`);
        const config = parseConfig({ typeConflict: { tables: { order_events: policy } } });
        const first = await load(
          wh,
          [{ name: 'a', lines: ['{"event_type":"ORDER","id":1,"amount":10.5,"note":"x"}'] }],
          { config },
        );
        expect(first.dead).toEqual([]);
        const second = await load(
          wh,
          [
            {
              name: 'b',
              lines: [
                '{"event_type":"ORDER","id":"2","amount":"12.50","note":7}',
                '{"event_type":"ORDER","id":"3.5","amount":1.0,"note":"y"}',
              ],
            },
          ],
          { config },
        );
        const t = await wh.catalog.loadTable({ namespace: 'default', name: 'order_events' });
        const summary = t.metadata.snapshots.at(-1)!.summary;
        if (policy === 'coerce') {
          expect(second.dead.map((d) => d.reason)).toEqual(['type-conflict']); // "3.5" into a long column
          expect(summary['total-records']).toBe('2');
          expect(summary['floe.coerced']).toBe(
            'id: string→long ×1; amount: string→double ×1; note: integer→string ×1',
          );
        } else {
          expect(second.dead.map((d) => d.reason)).toEqual(['type-conflict', 'type-conflict']);
          expect(summary['total-records']).toBe('1');
          expect(summary['floe.coerced']).toBeUndefined();
        }
        await expectWarehouseValid(wh);
      }
    } finally {
      cleanup();
    }
  });
});
