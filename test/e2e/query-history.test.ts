/**
 * History through the real `floe` binary: time travel in `floe query` (--as-of, --snapshot, FOR
 * VERSION / TIMESTAMP AS OF), the metadata tables ("t$snapshots" …), `floe snapshots` with its
 * summaries and --json, and live row counts in `floe tables` / `floe describe`. Expectations come
 * from the input files, the metadata JSON read as text (64-bit ids kept as digit strings) and an
 * independent walk of the manifests.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  currentSnapshotOf,
  fileWarehouse,
  type Json,
  liveFiles,
  manifestsOf,
  tempDir,
} from '../helpers/e2e.ts';
import { FIXTURES_ROOT } from '../helpers/fixtures.ts';
import { BIN, runNode } from '../helpers/run-node.ts';
import { copyTableInto } from '../helpers/warehouse-copy.ts';

const tmp = tempDir('floe-e2e-history-');
afterAll(() => tmp.cleanup());
const wh = join(tmp.dir, 'wh');
const BUNNIES = 'test/fixtures/iceberg/icebird-java-bunnies';

function floe(...args: string[]) {
  // FLOE_WAREHOUSE unset: no command falls back to a warehouse outside the test's folders.
  return runNode([BIN, ...args], { FLOE_WAREHOUSE: undefined });
}

async function jsonRows(...args: string[]): Promise<Json[]> {
  const r = await floe('query', '--json', ...args);
  expect(r.stderr, args.join(' ')).toBe('');
  expect(r.code).toBe(0);
  return r.stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Json);
}

/** The current metadata JSON, every integer of 16+ digits quoted so ids survive exactly. */
function metadataJson(table = 'order_events'): Json {
  const dir = join(wh, 'default', table, 'metadata');
  const hint = readFileSync(join(dir, 'version-hint.text'), 'utf8').trim();
  const text = readFileSync(join(dir, `v${hint}.metadata.json`), 'utf8');
  return JSON.parse(text.replace(/:\s*(-?\d{16,})/g, ': "$1"')) as Json;
}

const iso = (ms: unknown) => new Date(Number(ms)).toISOString();

// First load: six orders in two regions; second load: three more, one amount a string ("7.25")
// that the coerce policy converts to the double column.
const first = [1, 2, 3, 4, 5, 6].map((i) => ({
  event_type: 'ORDER',
  event_id: `o${i}`,
  region: i % 2 === 0 ? 'eu' : 'us',
  amount: i + 0.5,
}));
const second = [
  { event_type: 'ORDER', event_id: 'o7', region: 'eu', amount: '7.25' },
  { event_type: 'ORDER', event_id: 'o8', region: 'us', amount: 8.5 },
  { event_type: 'ORDER', event_id: 'o9', region: 'ap', amount: 0.25 },
];
const all = [...first, ...second];
let snapshots: Json[] = [];
let s1 = '';
let s2 = '';

beforeAll(async () => {
  const f1 = join(tmp.dir, 'first.ndjson');
  const f2 = join(tmp.dir, 'second.ndjson');
  const cfg = join(tmp.dir, 'floe.config.json');
  writeFileSync(f1, `${first.map((e) => JSON.stringify(e)).join('\n')}\n`);
  writeFileSync(f2, `${second.map((e) => JSON.stringify(e)).join('\n')}\n`);
  writeFileSync(cfg, JSON.stringify({ typeConflict: 'coerce' }));
  for (const args of [[f1], [f2, '-c', cfg]]) {
    const r = await floe('load', ...args, '-w', wh, '-q');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  }
  snapshots = metadataJson().snapshots as Json[];
  expect(snapshots).toHaveLength(2);
  s1 = String(snapshots[0]!['snapshot-id']);
  s2 = String(snapshots[1]!['snapshot-id']);
  // Two separate processes: the second commit is strictly later.
  expect(BigInt(String(snapshots[1]!['timestamp-ms']))).toBeGreaterThan(
    BigInt(String(snapshots[0]!['timestamp-ms'])),
  );
});

const ids = (rows: Json[]) => rows.map((r) => String(r.event_id)).sort();
const firstIds = first.map((e) => e.event_id).sort();
const allIds = all.map((e) => e.event_id).sort();

describe('floe query: time travel', () => {
  it('--as-of a time between the commits reads the first load; at the second commit, both', async () => {
    const t1 = snapshots[0]!['timestamp-ms'];
    const t2 = snapshots[1]!['timestamp-ms'];
    const sql = 'SELECT event_id FROM order_events';
    expect(ids(await jsonRows('-w', wh, '--as-of', iso(t1), sql))).toEqual(firstIds);
    expect(ids(await jsonRows('-w', wh, '--as-of', String(BigInt(String(t2)) - 1n), sql))).toEqual(firstIds);
    expect(ids(await jsonRows('-w', wh, '--as-of', iso(t2), sql))).toEqual(allIds);
    expect(ids(await jsonRows('-w', wh, sql))).toEqual(allIds);
  });

  it('--snapshot ID, --snapshot TABLE=ID and FOR VERSION / TIMESTAMP AS OF read the first snapshot', async () => {
    expect(ids(await jsonRows('-w', wh, '--snapshot', s1, 'SELECT event_id FROM order_events'))).toEqual(
      firstIds,
    );
    expect(
      ids(
        await jsonRows(
          '-w',
          wh,
          '--snapshot',
          `order_events=${s1}`,
          'SELECT event_id FROM "default".order_events',
        ),
      ),
    ).toEqual(firstIds);
    expect(
      ids(await jsonRows('-w', wh, `SELECT event_id FROM order_events FOR VERSION AS OF ${s1}`)),
    ).toEqual(firstIds);
    const at = iso(snapshots[0]!['timestamp-ms']);
    const both = await jsonRows(
      '-w',
      wh,
      `SELECT count(*) AS n FROM order_events FOR TIMESTAMP AS OF TIMESTAMP '${at}' AS old
       UNION ALL SELECT count(*) FROM order_events FOR VERSION AS OF ${s2}`,
    );
    expect(both.map((r) => Number(r.n))).toEqual([first.length, all.length]);
  });

  it('a time before the table and an unknown snapshot id are clear errors', async () => {
    const before = String(BigInt(String(snapshots[0]!['timestamp-ms'])) - 1n);
    const early = await floe('query', '-w', wh, '--as-of', before, 'SELECT count(*) FROM order_events');
    expect(early.code).not.toBe(0);
    expect(early.stdout).toBe('');
    expect(early.stderr).toMatch(/^floe: table default\.order_events has no snapshot at or before /m);
    expect(early.stderr).toContain(
      `first snapshot (${s1}) was committed at ${iso(snapshots[0]!['timestamp-ms'])}`,
    );

    // One past a real id: a Number round trip would find the real one.
    const wrong = String(BigInt(s1) + 1n);
    const unknown = await floe('query', '-w', wh, '--snapshot', wrong, 'SELECT count(*) FROM order_events');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain(
      `table default.order_events has no snapshot ${wrong}; its snapshots: ${s1}, ${s2}`,
    );

    const noTable = await floe('query', '-w', wh, '--snapshot', s1, 'SELECT 1');
    expect(noTable.code).not.toBe(0);
    expect(noTable.stderr).toMatch(/--snapshot .*names no table/);
  });

  it('on a fixture with several snapshots: each snapshot with its own schema and deletes', async () => {
    const json = JSON.parse(
      readFileSync(join(FIXTURES_ROOT, 'icebird-java-bunnies/metadata/v5.metadata.json'), 'utf8').replace(
        /:\s*(-?\d{16,})/g,
        ': "$1"',
      ),
    ) as Json;
    const [b1, b2] = json.snapshots as Json[];
    const sql = 'SELECT count(*) AS n, list_sort(list(DISTINCT "Breed Name")) AS breeds FROM bunnies';
    const between = iso(BigInt(String(b2!['timestamp-ms'])) - 1n);
    const [asOf] = await jsonRows('-t', `bunnies=${BUNNIES}`, '--as-of', between, sql);
    const [atSecond] = await jsonRows(
      '-t',
      `bunnies=${BUNNIES}`,
      '--snapshot',
      String(b2!['snapshot-id']),
      sql,
    );
    const [now] = await jsonRows('-t', `bunnies=${BUNNIES}`, sql);
    expect([asOf!.n, atSecond!.n, now!.n].map(Number)).toEqual([21, 15, 15]);
    // The first snapshot's schema has no __happy__ column (added by schema 1).
    const cols = async (...a: string[]) =>
      Object.keys((await jsonRows('-t', `bunnies=${BUNNIES}`, ...a, 'SELECT * FROM bunnies LIMIT 1'))[0]!);
    expect(await cols('--snapshot', String(b1!['snapshot-id']))).not.toContain('__happy__');
    expect(await cols()).toContain('__happy__');
  });
});

describe('floe query: metadata tables of a Floe table', () => {
  it('"t$snapshots", "t$history" and "t$refs" match the metadata JSON, ids exact', async () => {
    const m = metadataJson();
    const snaps = await jsonRows('-w', wh, 'SELECT * FROM "order_events$snapshots" ORDER BY committed_at');
    expect(snaps.map((r) => r.snapshot_id)).toEqual([s1, s2]);
    expect(snaps.map((r) => r.parent_id)).toEqual([null, s1]);
    expect(snaps.map((r) => r.operation)).toEqual(['append', 'append']);
    snaps.forEach((r, i) => {
      const summary = Object.fromEntries(
        (r.summary as { key: string; value: string }[]).map((e) => [e.key, e.value]),
      );
      expect(summary['floe.load-id']).toBe((snapshots[i]!.summary as Json)['floe.load-id']);
      expect(r.manifest_list).toBe(snapshots[i]!['manifest-list']);
    });
    const history = await jsonRows('-w', wh, 'SELECT * FROM "default"."order_events$history"');
    expect(history.map((r) => [r.snapshot_id, r.is_current_ancestor])).toEqual(
      (m['snapshot-log'] as Json[]).map((e) => [e['snapshot-id'], true]),
    );
    const refs = await jsonRows('-w', wh, 'SELECT name, type, snapshot_id FROM "order_events$refs"');
    expect(refs).toEqual([{ name: 'main', type: 'BRANCH', snapshot_id: m['current-snapshot-id'] }]);
  });

  it('"t$files" and "t$manifests" list what the manifests hold, at the current or a chosen snapshot', async () => {
    const w = fileWarehouse(wh);
    const { metadata } = await w.catalog.loadTable({ namespace: 'default', name: 'order_events' });
    const live = await liveFiles(w.store, currentSnapshotOf(metadata)!);
    const files = await jsonRows('-w', wh, 'SELECT * FROM "order_events$files"');
    expect(files.map((r) => r.file_path).sort()).toEqual(live.map((f) => f.file.file_path).sort());
    expect(files.reduce((n, r) => n + Number(r.record_count), 0)).toBe(all.length);
    for (const r of files) {
      expect(r.content).toBe(0);
      expect(Number(r.file_size_in_bytes)).toBe(statSync(w.store.pathOf(String(r.file_path))).size);
      expect(r.file_format).toBe('PARQUET');
      expect(Object.keys(r.partition as Json)).toEqual(['region']);
    }
    const atFirst = await jsonRows(
      '-w',
      wh,
      '--snapshot',
      s1,
      'SELECT record_count FROM "order_events$files"',
    );
    expect(atFirst.reduce((n, r) => n + Number(r.record_count), 0)).toBe(first.length);

    const manifests = await manifestsOf(w.store, currentSnapshotOf(metadata)!);
    const rows = await jsonRows('-w', wh, 'SELECT * FROM "order_events$manifests"');
    expect(rows.map((r) => [r.path, r.length, r.added_snapshot_id])).toEqual(
      manifests.map((mf) => [mf.manifest_path, String(mf.manifest_length), String(mf.added_snapshot_id)]),
    );
    expect(rows.map((r) => r.added_snapshot_id).sort()).toEqual([s1, s2].sort());
  });

  it('"t$partitions" sums rows per region with the amount bounds of the input', async () => {
    const rows = await jsonRows(
      '-w',
      wh,
      'SELECT * FROM "order_events$partitions" ORDER BY partition.region',
    );
    const regions = [...new Set(all.map((e) => e.region))].sort();
    expect(rows.map((r) => (r.partition as Json).region)).toEqual(regions);
    for (const r of rows) {
      const inRegion = all.filter((e) => e.region === (r.partition as Json).region);
      const amounts = inRegion.map((e) => Number(e.amount));
      expect(Number(r.record_count)).toBe(inRegion.length);
      const amount = (r.data as Json).amount as Json;
      expect([amount.min, amount.max, amount.null_count]).toEqual([
        Math.min(...amounts),
        Math.max(...amounts),
        '0',
      ]);
      expect((r.data as Json).region).toBeUndefined(); // an identity partition column shows in `partition`
    }
  });
});

describe('floe snapshots', () => {
  it('prints each summary, Floe keys first: floe.load-id, and floe.coerced on the coercing load', async () => {
    const r = await floe('snapshots', 'order_events', '-w', wh);
    expect(r.code).toBe(0);
    const block = (id: string) =>
      r.stdout.split(`summary of snapshot ${id} (append, `)[1]?.split('\n\n')[0] ?? '';
    const summary1 = snapshots[0]!.summary as Json;
    const summary2 = snapshots[1]!.summary as Json;
    expect(block(s1)).toMatch(new RegExp(`^\\s+floe\\.load-id\\s+${summary1['floe.load-id']}$`, 'm'));
    expect(block(s1)).not.toContain('floe.coerced');
    expect(block(s2)).toMatch(/^\s+floe\.coerced\s+amount: string→double ×1$/m);
    expect(block(s2)).toMatch(new RegExp(`^\\s+floe\\.load-id\\s+${summary2['floe.load-id']}$`, 'm'));
    expect(block(s2)).toMatch(/^\s+added-records\s+3$/m);
    expect(block(s2).indexOf('floe.coerced')).toBeLessThan(block(s2).indexOf('added-records'));
  });

  it('--json: one object per snapshot, ids as exact strings, the summary verbatim', async () => {
    const r = await floe('snapshots', 'order_events', '-w', wh, '--json');
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json);
    expect(lines.map((l) => [l.snapshot_id, l.parent_id, l.sequence_number])).toEqual([
      [s1, null, '1'],
      [s2, s1, '2'],
    ]);
    lines.forEach((l, i) => {
      expect(l.summary).toEqual(snapshots[i]!.summary);
      expect(l.committed_at).toBe(iso(snapshots[i]!['timestamp-ms']));
    });
    expect(String((lines[1]!.summary as Json)['floe.coerced'])).toContain('amount');
    expect((lines[0]!.summary as Json)['floe.load-id']).toMatch(/\S/);
  });
});

describe('floe tables and describe: live rows', () => {
  it('a Floe table: every row loaded', async () => {
    const tables = await floe('tables', '-w', wh);
    expect(tables.code).toBe(0);
    expect(tables.stdout).toMatch(
      /^namespace\s+table\s+format\s+columns\s+snapshots\s+live rows\s+last commit$/m,
    );
    expect(tables.stdout).toMatch(
      new RegExp(`^default\\s+order_events\\s+2\\s+\\d+\\s+2\\s+${all.length}\\s`, 'm'),
    );
    const describe = await floe('describe', 'order_events', '-w', wh);
    expect(describe.stdout).toMatch(new RegExp(`^live rows\\s+${all.length}$`, 'm'));
  });

  it('icebird-java-bunnies: 15 live rows, not the 22 written (position and equality deletes)', async () => {
    const wh2 = join(tmp.dir, 'wh-bunnies');
    await copyTableInto(join(FIXTURES_ROOT, 'icebird-java-bunnies'), wh2, {
      namespace: 'fx',
      name: 'bunnies',
    });
    const tables = await floe('tables', '-w', wh2);
    expect(tables.stderr).toBe('');
    expect(tables.stdout).toMatch(/^fx\s+bunnies\s+2\s+9\s+3\s+15\s/m);
    const describe = await floe('describe', BUNNIES);
    expect(describe.code).toBe(0);
    expect(describe.stdout).toMatch(/^live rows\s+15 \(22 written, 7 removed by deletes\)$/m);
    // The same count the query engine gives.
    const [row] = await jsonRows('-t', `b=${BUNNIES}`, 'SELECT count(*) AS n FROM b');
    expect(Number(row!.n)).toBe(15);
  });
});
