/**
 * Dead letters end to end: `floe load` records every rejected line in the warehouse's dead-letter
 * store; `floe dead-letters list|show|replay` read them and load them again once the config is
 * fixed. A few commands run as real processes (`node bin/floe.mjs …`), the rest in process through
 * the same commander program; `replayDeadLetters` is also driven directly for the cases the CLI
 * input cannot produce (a reason that changes, a key that changes, a binary record).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { ObjectStoreDeadLetterStore } from '../../lambdas/src/adapters/object-dead-letter-store.ts';
import { OverlayObjectStore, replayDeadLetters, sourceMatches } from '../../lambdas/src/app/replay.ts';
import { buildProgram } from '../../lambdas/src/cli/main.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import { DeadLetterReason } from '../../lambdas/src/engine/dead-letters.ts';
import { isFloeError } from '../../lambdas/src/errors.ts';
import { deadLetterKey, deadLetterRecord } from '../../lambdas/src/ports/dead-letters.ts';
import {
  currentSnapshotOf,
  fileWarehouse,
  type Json,
  liveFiles,
  NOW_MS,
  type TestWarehouse,
  tempDir,
} from '../helpers/e2e.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/floe.mjs');
const NS = 'default';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `floe …` as a real process. */
function floe(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    delete env.FLOE_WAREHOUSE;
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** `floe …` in this process (same commander program); stdout lines are returned. */
async function floeIn(...args: string[]): Promise<string> {
  const lines: string[] = [];
  const before = process.exitCode;
  await buildProgram((s) => lines.push(s)).parseAsync(['node', 'floe', ...args]);
  expect(process.exitCode ?? 0, `floe ${args.join(' ')}`).toBe(before ?? 0);
  return lines.join('\n');
}

async function listJson(...args: string[]): Promise<Json[]> {
  const text = await floeIn('dead-letters', 'list', '--json', ...args);
  return text === '' ? [] : text.split('\n').map((l) => JSON.parse(l) as Json);
}

/** Rows per table, counted from the live data files of each current snapshot. */
async function rowCounts(wh: TestWarehouse): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of await wh.catalog.listTables(NS)) {
    const snap = currentSnapshotOf((await wh.catalog.loadTable({ namespace: NS, name })).metadata);
    const files = snap ? await liveFiles(wh.store, snap) : [];
    out[name] = files.reduce((n, f) => n + Number(f.file.record_count), 0);
  }
  return out;
}

const tmp = tempDir('floe-e2e-dead-letters-');
afterAll(() => tmp.cleanup());

// Line numbers are 1-based; line 8 is blank (skipped, not a dead letter).
const LINES = [
  '{"event_type":"ORDER","event_id":"ORDER-1","amount":1.5}',
  '{"event_type":"ORDER","event_id":"ORDER-2","amount":2.25}',
  '{"event_type":"ORDER","event_id":"ORDER-3","amount":',
  '{"event_id":"LOST-1","note":"no type"}',
  '{"event_type":"USER","event_id":"USER-1","name":"ann"}',
  '{"event_type":"ORDER","event_id":"ORDER-bad","amount":"abc"}',
  '  {"event_id":"LOST-2","note":"caf\u00e9 \u2615 \\u00e9"}',
  '',
  '{"event_type":"CLICK","event_id":"CLICK-1","page":"/home"}',
];
const BAD = new Map<number, string>([
  [3, DeadLetterReason.MalformedJson],
  [4, DeadLetterReason.NoRoute],
  [6, DeadLetterReason.TypeConflict],
  [7, DeadLetterReason.NoRoute],
]);

describe('floe load → dead-letters list / show / replay', () => {
  const dir = join(tmp.dir, 'main');
  const whDir = join(dir, 'wh');
  const wh = fileWarehouse(whDir);
  const input = join(dir, 'events.ndjson');
  const strict = join(dir, 'strict.json');
  const fixed = join(dir, 'fixed.json');
  const exported = join(dir, 'out', 'dead.ndjson');
  const keyOf = (line: number) => deadLetterKey({ source: input, line });

  beforeAll(async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(input, `${LINES.join('\n')}\n`);
    writeFileSync(strict, JSON.stringify({ routing: { defaultTable: null } }));
    writeFileSync(fixed, JSON.stringify({ routing: { defaultTable: 'unknown_events' } }));
  });

  it('load records every rejected line in the store, says where and how to list them, and still exports NDJSON', async () => {
    const r = await floe('load', input, '-w', whDir, '-c', strict, '--dead-letters', exported, '-q');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(3); // partial: lines were dead-lettered, every table committed
    expect(r.stdout).toContain(join(whDir, '_floe', 'dead-letters'));
    expect(r.stdout).toContain(`floe dead-letters list -w ${whDir}`);
    expect(r.stdout).toContain('floe dead-letters replay');
    expect(r.stdout).toContain(exported);
    const lines = readFileSync(exported, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as Json).line).sort()).toEqual([...BAD.keys()].sort());
    expect(await rowCounts(wh)).toEqual({ order_events: 2, user_events: 1, click_events: 1 });
  });

  it('list shows exactly the rejected lines with their reasons, as an aligned table with a count', async () => {
    const r = await floe('dead-letters', 'list', '-w', whDir);
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => l.includes(`${input}:`));
    expect(rows).toHaveLength(BAD.size);
    for (const [line, reason] of BAD) {
      const row = rows.find((l) => l.includes(`${input}:${line} `));
      expect(row, `line ${line}`).toBeDefined();
      expect(row!.split(/\s+/).slice(0, 2)).toEqual([keyOf(line), reason]);
    }
    expect(r.stdout).toMatch(/^key\s+reason\s+source:line\s+table\s+detail$/m);
    expect(r.stdout).toContain('4 dead letter(s) (malformed-json: 1, no-route: 2, type-conflict: 1)');
  });

  it('list filters by reason, source, table and limit; --json prints the full records', async () => {
    const all = await listJson('-w', whDir);
    expect(all.map((d) => [d.key, d.line, d.reason])).toEqual([...BAD].map(([l, r]) => [keyOf(l), l, r]));
    for (const d of all) {
      expect(d.source).toBe(input);
      expect(d.raw).toBe(LINES[(d.line as number) - 1]);
    }
    const lines = async (...args: string[]) => (await listJson('-w', whDir, ...args)).map((d) => d.line);
    expect(await lines('--reason', 'no-route')).toEqual([4, 7]);
    expect(await lines('--reason', 'malformed-json')).toEqual([3]);
    expect(await lines('--table', 'order_events')).toEqual([6]);
    expect(await lines('--source', 'events.ndjson')).toEqual([3, 4, 6, 7]);
    expect(await lines('--source', input, '--reason', 'type-conflict')).toEqual([6]);
    expect(await lines('--source', 'other.ndjson')).toEqual([]);
    expect(await lines('--limit', '2')).toEqual([3, 4]);
    expect(await floeIn('dead-letters', 'list', '-w', whDir, '--reason', 'no-route', '--limit', '1')).toMatch(
      /2 dead letter\(s\) matching reason no-route \(no-route: 2\), first 1 shown/,
    );
    await expect(floeIn('dead-letters', 'list', '-w', whDir, '--reason', 'nope')).rejects.toThrow(/'nope'/);
    await expect(floeIn('dead-letters', 'list', '-w', whDir, '--limit', 'x')).rejects.toThrow(/'x'/);
  });

  it('show prints the whole record with the raw text byte for byte; an unknown key is a clear NotFound', async () => {
    const [shown, missing, help] = await Promise.all([
      floe('dead-letters', 'show', keyOf(7), '-w', whDir),
      floe('dead-letters', 'show', 'events.ndjson-0000000000000000/0000000099', '-w', whDir),
      Promise.all(
        ['dead-letters', 'list', 'show', 'replay'].map((c) =>
          c === 'dead-letters' ? floe(c, '--help') : floe('dead-letters', c, '--help'),
        ),
      ),
    ]);
    expect(shown.code).toBe(0);
    const raw = LINES[6]!;
    expect(shown.stdout.split('\n')).toContain(raw);
    expect(shown.stdout).toContain(`raw (${Buffer.byteLength(raw, 'utf8')} bytes):`);
    expect(shown.stdout).toMatch(new RegExp(`^key\\s+${keyOf(7)}$`, 'm'));
    expect(shown.stdout).toMatch(/^reason\s+no-route$/m);
    expect(shown.stdout).toMatch(/^line\s+7$/m);
    expect(shown.stdout).toMatch(/^detail\s+\S/m);

    expect(missing.code).not.toBe(0);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^floe: no dead letter with key 'events.ndjson-0+\/0+99'.*\[NotFound\]$/m);
    expect(missing.stderr).not.toMatch(/\n\s+at /);

    const [group, list, show, replay] = help;
    expect(group!.code).toBe(0);
    for (const c of ['list', 'show', 'replay'])
      expect(group!.stdout).toMatch(new RegExp(`^\\s+${c}\\b`, 'm'));
    for (const [r, c] of [
      [list, 'list'],
      [show, 'show'],
      [replay, 'replay'],
    ] as const) {
      expect(r!.code, c).toBe(0);
      expect(r!.stdout).toMatch(new RegExp(`^Usage: floe dead-letters ${c}\\b`, 'm'));
    }
    expect(replay!.stdout).toContain('--dry-run');
    expect(replay!.stdout).toContain('--key');
  });

  it('loading the same file again skips it and records none of its dead letters; --force overwrites them instead of duplicating them', async () => {
    const before = await listJson('-w', whDir);
    const again = await floe('load', input, '-w', whDir, '-c', strict, '-q');
    expect(again.code).toBe(0);
    // The type conflict is judged per table: the skipped table never sees the line again.
    const readingRejects = [...BAD.values()].filter((r) => r !== DeadLetterReason.TypeConflict).length;
    expect(again.stdout).toContain(
      `${readingRejects} rejected line(s) of already loaded files not recorded again`,
    );
    expect(again.stdout).toContain('skipped');
    expect((await listJson('-w', whDir)).map((d) => [d.key, d.reason])).toEqual(
      before.map((d) => [d.key, d.reason]),
    );
    const forced = await floe('load', input, '-w', whDir, '-c', strict, '-q', '--force');
    expect(forced.code).toBe(3);
    expect(forced.stdout).toContain(`${BAD.size} rejected`);
    const after = await listJson('-w', whDir);
    expect(after.map((d) => [d.key, d.reason])).toEqual(before.map((d) => [d.key, d.reason]));
  });

  it('a dry run reports what would land and changes nothing', async () => {
    const counts = await rowCounts(wh);
    const out = await floeIn('dead-letters', 'replay', '-w', whDir, '-c', fixed, '--dry-run', '-q');
    expect(out).toContain('dry run');
    expect(out).toContain('would replay 4 dead letter(s) from 1 source(s)');
    expect(out).toContain('would land: 2 (unknown_events: 2)');
    expect(out).toContain('would still fail: 2 (malformed-json: 1, type-conflict: 1)');
    expect(await rowCounts(wh)).toEqual(counts);
    expect(existsSync(join(whDir, NS, 'unknown_events'))).toBe(false);
    expect((await listJson('-w', whDir)).map((d) => d.line)).toEqual([3, 4, 6, 7]);
  });

  it('replay under a fixed config lands the unroutable records exactly once; the rest stay with their reasons', async () => {
    const counts = await rowCounts(wh);
    const r = await floe('dead-letters', 'replay', '-w', whDir, '-c', fixed, '--reason', 'no-route');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('replayed 2 dead letter(s) from 1 source(s) (reason no-route)');
    expect(r.stdout).toContain('landed: 2 (unknown_events: 2), removed from the dead-letter store');
    expect(r.stderr).toContain('replaying 2 dead letter(s)');
    expect(await rowCounts(wh)).toEqual({ ...counts, unknown_events: 2 });
    const left = await listJson('-w', whDir);
    expect(left.map((d) => [d.line, d.reason])).toEqual([
      [3, DeadLetterReason.MalformedJson],
      [6, DeadLetterReason.TypeConflict],
    ]);

    // Everything again (twice): nothing more lands, nothing is duplicated, the malformed line stays.
    for (let i = 0; i < 2; i++) {
      const out = await floeIn('dead-letters', 'replay', '-w', whDir, '-c', fixed, '-q');
      expect(out).toContain('landed: 0');
      expect(out).toContain('still failing: 2 (malformed-json: 1, type-conflict: 1)');
      expect(await rowCounts(wh)).toEqual({ ...counts, unknown_events: 2 });
      expect((await listJson('-w', whDir)).map((d) => [d.line, d.reason])).toEqual([
        [3, DeadLetterReason.MalformedJson],
        [6, DeadLetterReason.TypeConflict],
      ]);
    }
    const q = await floeIn(
      'query',
      '--json',
      '-w',
      whDir,
      'select event_id, note from unknown_events order by 1',
    );
    expect(q.split('\n').map((l) => JSON.parse(l) as Json)).toEqual([
      { event_id: 'LOST-1', note: 'no type' },
      { event_id: 'LOST-2', note: 'caf\u00e9 \u2615 \u00e9' },
    ]);
  });

  it('replay of named keys: an unknown key is an error naming it and replays nothing', async () => {
    const counts = await rowCounts(wh);
    await expect(
      floeIn(
        'dead-letters',
        'replay',
        '-w',
        whDir,
        '-c',
        fixed,
        '--key',
        keyOf(3),
        'x-0000000000000000/0000000001',
      ),
    ).rejects.toThrow(/'x-0000000000000000\/0000000001'/);
    const out = await floeIn('dead-letters', 'replay', '-w', whDir, '-c', fixed, '--key', keyOf(3), '-q');
    expect(out).toContain('replayed 1 dead letter(s) from 1 source(s) (1 key(s))');
    expect(out).toContain('still failing: 1 (malformed-json: 1)');
    expect(await rowCounts(wh)).toEqual(counts);
  });
});

describe('replayDeadLetters (in process)', () => {
  const whDir = join(tmp.dir, 'app');
  const wh = fileWarehouse(whDir);
  const store = new ObjectStoreDeadLetterStore(wh.store, `${wh.uri}/_floe/dead-letters`);
  const deps = (config = parseConfig({})) => ({
    catalog: wh.catalog,
    store: wh.store,
    clock: fixedClock(NOW_MS),
    ids: seededIds(7),
    sleep: async () => undefined,
    config,
    deadLetters: store,
  });

  it('a record that fails for a new reason is stored again under it; a changed key replaces the old; binary records are left alone', async () => {
    expect((await replayDeadLetters(deps(), {})).selected).toBe(0);
    // S-1 lands (order_events.amount becomes double), S-2 then conflicts with it.
    await store.put(
      deadLetterRecord({
        source: 'seed.ndjson',
        line: 1,
        reason: DeadLetterReason.NoRoute,
        detail: 'old',
        raw: '{"event_type":"ORDER","event_id":"S-1","amount":1.5}',
      }),
    );
    await store.put(
      deadLetterRecord({
        source: 'seed.ndjson',
        line: 2,
        reason: DeadLetterReason.NoRoute,
        detail: 'old',
        raw: '{"event_type":"ORDER","event_id":"S-2","amount":"zzz"}',
      }),
    );
    const legacyKey = 'legacy-0000000000000000/0000000003';
    await store.put({
      key: legacyKey,
      source: 'seed.ndjson',
      line: 3,
      reason: DeadLetterReason.MalformedJson,
      detail: 'old',
      raw: '{"broken":',
    });
    const binary = deadLetterRecord(
      { source: 'shard-1', line: 0, reason: DeadLetterReason.NotGsrFramed, detail: 'binary', raw: '' },
      { shardId: 'shard-1', sequenceNumber: '123456789012345678901234567890', rawBase64: 'AAEC' },
    );
    await store.put(binary);

    const r = await replayDeadLetters(deps(), { source: 'seed.ndjson' });
    expect(r.selected).toBe(3);
    expect(r.landed).toBe(1);
    expect(r.failingByReason).toEqual({ 'malformed-json': 1, 'type-conflict': 1 });
    const s2 = r.outcomes.find((o) => o.line === 2)!;
    expect([s2.previousReason, s2.status, s2.reason, s2.table]).toEqual([
      'no-route',
      'failing',
      'type-conflict',
      'order_events',
    ]);
    const newKey = deadLetterKey({ source: 'seed.ndjson', line: 3 });
    expect(r.outcomes.find((o) => o.line === 3)!.newKey).toBe(newKey);

    const left = await store.list();
    expect(left.map((d) => [d.key, d.reason])).toEqual(
      [
        [deadLetterKey({ source: 'seed.ndjson', line: 2 }), 'type-conflict'],
        [newKey, 'malformed-json'],
        [binary.key, 'not-gsr-framed'],
      ].sort(([a], [b]) => (a! < b! ? -1 : 1)),
    );
    expect(await store.get(legacyKey)).toBeUndefined();
    expect((await rowCounts(wh)).order_events).toBe(1);

    const skipped = await replayDeadLetters(deps(), { keys: [binary.key] });
    expect(skipped.outcomes.map((o) => o.status)).toEqual(['skipped']);
    expect(await store.get(binary.key)).toBeDefined();
  });

  it('a dry run without a scratch catalog only parses and routes; with one it stages into an overlay', async () => {
    await store.put(
      deadLetterRecord({
        source: 'dry.ndjson',
        line: 1,
        reason: DeadLetterReason.NoRoute,
        detail: 'old',
        raw: '{"event_id":"D-1"}',
      }),
    );
    const config = parseConfig({ routing: { defaultTable: 'misc_events' } });
    const routed = await replayDeadLetters(deps(config), { source: 'dry.ndjson', dryRun: true });
    expect([routed.mode, routed.routableByTable]).toEqual(['routed', { misc_events: 1 }]);
    const { FileCatalog } = await import('../../lambdas/src/adapters/local/file-catalog.ts');
    const staged = await replayDeadLetters(
      { ...deps(config), scratchCatalog: (s) => new FileCatalog(s, wh.uri) },
      { source: 'dry.ndjson', dryRun: true },
    );
    expect([staged.mode, staged.landedByTable]).toEqual(['staged', { misc_events: 1 }]);
    expect(staged.load?.tables.map((t) => [t.table, t.rows, t.created])).toEqual([['misc_events', 1, true]]);
    expect(await wh.catalog.tableExists({ namespace: NS, name: 'misc_events' })).toBe(false);
    expect((await store.list({ prefix: deadLetterKey({ source: 'dry.ndjson', line: 1 }) })).length).toBe(1);
  });

  it('the overlay store never writes through and hides what it deleted', async () => {
    const overlay = new OverlayObjectStore(wh.store);
    const uri = `${wh.uri}/scratch/a.txt`;
    await overlay.put(uri, 'x');
    expect(await overlay.exists(uri)).toBe(true);
    expect(await wh.store.exists(uri)).toBe(false);
    expect(await overlay.listChildren(`${wh.uri}/scratch`)).toEqual(['a.txt']);
    await wh.store.put(`${wh.uri}/scratch/b.txt`, 'y');
    await overlay.delete(`${wh.uri}/scratch/b.txt`);
    expect(await overlay.list(`${wh.uri}/scratch`)).toEqual([uri]);
    expect(await wh.store.exists(`${wh.uri}/scratch/b.txt`)).toBe(true);
    await expect(overlay.get(`${wh.uri}/scratch/b.txt`)).rejects.toSatisfy((e) => isFloeError(e));
  });

  it('sources match exactly or by their trailing path', () => {
    expect(sourceMatches('/data/in/events.ndjson', 'events.ndjson')).toBe(true);
    expect(sourceMatches('/data/in/events.ndjson', './in/events.ndjson')).toBe(true);
    expect(sourceMatches('/data/in/myevents.ndjson', 'events.ndjson')).toBe(false);
    expect(sourceMatches('shardId-000000000001', 'shardId-000000000001')).toBe(true);
  });
});
