/**
 * `floe dead-letters purge`: by reason, source, table and age, `--dry-run`, the `--all` safety
 * catch; on the warehouse's store and on S3 (s3rver). Ages are judged against an injected `now`
 * and dead letters with known times (arrival times, or file times set with utimes); the real
 * command runs with thresholds far from any dead letter's age.
 */
import { statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lambdas/src/adapters/aws/s3-object-store.ts';
import { ObjectStoreDeadLetterStore } from '../../lambdas/src/adapters/object-dead-letter-store.ts';
import { openDeadLetterStore } from '../../lambdas/src/cli/dead-letters-command.ts';
import { type PurgeOptions, purgeCommand } from '../../lambdas/src/cli/dead-letters-purge.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { DeadLetterReason } from '../../lambdas/src/engine/dead-letters.ts';
import { isFloeError } from '../../lambdas/src/errors.ts';
import { type DeadLetterRecord, deadLetterRecord } from '../../lambdas/src/ports/dead-letters.ts';
import { startS3rver } from '../contract/object-store.contract.ts';
import { tempDir } from '../helpers/e2e.ts';
import { BIN, runNode } from '../helpers/run-node.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The injected "now" of the in-process tests. */
const T0 = Date.UTC(2024, 5, 1, 12);

let tmp: ReturnType<typeof tempDir>;
let s3: Awaited<ReturnType<typeof startS3rver>>;

beforeAll(async () => {
  tmp = tempDir('floe-dl-purge-');
  s3 = await startS3rver();
}, 60_000);

afterAll(async () => {
  await s3?.close();
  tmp?.cleanup();
});

function streamed(seq: number, reason: DeadLetterRecord['reason'], arrivalTimeMs: number): DeadLetterRecord {
  const shardId = 'shardId-000000000001';
  return deadLetterRecord(
    { source: shardId, line: seq, reason, detail: `streamed ${seq}`, raw: `{"seq":${seq}` },
    { shardId, sequenceNumber: String(seq), partitionKey: `p${seq}`, arrivalTimeMs },
  );
}

function loaded(source: string, line: number, reason: DeadLetterRecord['reason'], table?: string) {
  return deadLetterRecord({
    source,
    line,
    reason,
    detail: `loaded ${line}`,
    raw: `{"line":${line}}`,
    ...(table === undefined ? {} : { table }),
  });
}

/**
 * A warehouse with four dead letters, as of T0:
 * - `oldStream`: streamed, malformed-json, arrived 10 days ago;
 * - `newStream`: streamed, no-route, arrived exactly 1 hour ago;
 * - `oldLoad`: `floe load`, type-conflict in table orders, stored 3 days ago (file time);
 * - `newLoad`: `floe load`, no-route, stored 10 minutes ago (file time).
 */
async function seedWarehouse(name: string) {
  const dir = join(tmp.dir, name);
  const store = openDeadLetterStore(openWarehouse(dir));
  const oldStream = streamed(1, DeadLetterReason.MalformedJson, T0 - 10 * DAY);
  const newStream = streamed(2, DeadLetterReason.NoRoute, T0 - HOUR);
  const oldLoad = loaded('in/orders.ndjson', 3, DeadLetterReason.TypeConflict, 'orders');
  const newLoad = loaded('in/events.ndjson', 4, DeadLetterReason.NoRoute);
  for (const d of [oldStream, newStream, oldLoad, newLoad]) await store.put(d);
  const fileOf = (d: DeadLetterRecord) => join(dir, '_floe', 'dead-letters', d.reason, `${d.key}.json`);
  const setTime = (d: DeadLetterRecord, ms: number) => utimesSync(fileOf(d), new Date(ms), new Date(ms));
  // A streamed record's arrival time decides, not its file's time: the recent arrival's file is
  // made old and the old arrival's file new, so judging by file time would pick the wrong one.
  setTime(oldStream, T0);
  setTime(newStream, T0 - 30 * DAY);
  setTime(oldLoad, T0 - 3 * DAY);
  setTime(newLoad, T0 - 10 * 60_000);
  const sizes = new Map(
    [oldStream, newStream, oldLoad, newLoad].map((d) => [d.key, statSync(fileOf(d)).size]),
  );
  const bytes = (d: DeadLetterRecord) => sizes.get(d.key) as number;
  const remaining = async () => (await store.list()).map((d) => d.key).sort();
  return { dir, store, oldStream, newStream, oldLoad, newLoad, bytes, remaining };
}

async function purge(opts: PurgeOptions, now = T0): Promise<string> {
  const lines: string[] = [];
  await purgeCommand(opts, (s) => lines.push(s), now);
  return lines.join('\n');
}

const keys = (...ds: DeadLetterRecord[]) => ds.map((d) => d.key).sort();

describe('purge on the warehouse store (in process, now injected)', () => {
  it('--older-than selects by arrival time (streamed) or stored time (load); age ≥ the threshold', async () => {
    const w = await seedWarehouse('age');
    const out = await purge({ warehouse: w.dir, olderThan: '2d' });
    const where = join(w.dir, '_floe', 'dead-letters');
    const total = w.bytes(w.oldStream) + w.bytes(w.oldLoad);
    expect(out.split('\n')).toEqual([
      `deleted 2 dead letter(s) (${total} B) matching older than 2d from ${where}`,
      `  malformed-json: 1 (${w.bytes(w.oldStream)} B)`,
      `  type-conflict: 1 (${w.bytes(w.oldLoad)} B)`,
    ]);
    expect(await w.remaining()).toEqual(keys(w.newStream, w.newLoad));
    // Exactly one hour old counts as older than 1h; ten minutes does not.
    expect(await purge({ warehouse: w.dir, olderThan: '1h' })).toContain('deleted 1 dead letter(s)');
    expect(await w.remaining()).toEqual(keys(w.newLoad));
    expect(await purge({ warehouse: w.dir, olderThan: '0s' })).toContain('deleted 1 dead letter(s)');
    expect(await w.remaining()).toEqual([]);
  });

  it('age is judged against the given now, not the wall clock', async () => {
    const w = await seedWarehouse('now');
    expect(await purge({ warehouse: w.dir, olderThan: '11d' })).toContain(
      'no dead letters matching older than 11d',
    );
    expect(await purge({ warehouse: w.dir, olderThan: '11d' }, T0 + DAY)).toContain(
      'deleted 1 dead letter(s)',
    );
    expect(await w.remaining()).toEqual(keys(w.newStream, w.oldLoad, w.newLoad));
  });

  it('--dry-run lists what would go, with age and bytes, and deletes nothing', async () => {
    const w = await seedWarehouse('dry');
    const out = await purge({ warehouse: w.dir, olderThan: '2d', dryRun: true });
    const lines = out.split('\n');
    expect(lines[0]).toMatch(/^key\s+reason\s+source:line\s+age\s+bytes\s+detail$/);
    const rows = lines.slice(2, lines.indexOf(''));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain(w.oldLoad.key);
    expect(rows[0]).toMatch(new RegExp(`in/orders.ndjson:3\\s+3d\\s+${w.bytes(w.oldLoad)}\\s`));
    expect(rows[1]).toContain(w.oldStream.key);
    expect(rows[1]).toMatch(new RegExp(`shardId-000000000001:1\\s+10d\\s+${w.bytes(w.oldStream)}\\s`));
    expect(out).toContain('dry run: would delete 2 dead letter(s)');
    expect(out).toContain('; nothing was deleted');
    expect(out).toContain(`  malformed-json: 1 (${w.bytes(w.oldStream)} B)`);
    expect(await w.remaining()).toEqual(keys(w.oldStream, w.newStream, w.oldLoad, w.newLoad));
  });

  it('--reason, --source and --table select, alone and with --older-than', async () => {
    const w = await seedWarehouse('filters');
    const out = await purge({ warehouse: w.dir, reason: 'no-route', olderThan: '30m' });
    expect(out).toContain('deleted 1 dead letter(s)');
    expect(out).toContain('matching reason no-route, older than 30m');
    expect(await w.remaining()).toEqual(keys(w.oldStream, w.oldLoad, w.newLoad));
    await purge({ warehouse: w.dir, source: 'events.ndjson' });
    expect(await w.remaining()).toEqual(keys(w.oldStream, w.oldLoad));
    await purge({ warehouse: w.dir, table: 'orders' });
    expect(await w.remaining()).toEqual(keys(w.oldStream));
    await purge({ warehouse: w.dir, reason: 'malformed-json' });
    expect(await w.remaining()).toEqual([]);
  });

  it('refuses a purge with no filter unless --all, and says so', async () => {
    const w = await seedWarehouse('all');
    const err = await purge({ warehouse: w.dir }).catch((e: unknown) => e);
    expect(isFloeError(err, 'ConfigInvalid')).toBe(true);
    expect((err as Error).message).toContain(
      `refusing to purge every dead letter in ${join(w.dir, '_floe', 'dead-letters')}`,
    );
    expect((err as Error).message).toContain('or pass --all');
    expect(await w.remaining()).toHaveLength(4);
    expect(await purge({ warehouse: w.dir, all: true })).toContain('deleted 4 dead letter(s)');
    expect(await w.remaining()).toEqual([]);
    expect(await purge({ warehouse: w.dir, all: true })).toBe(
      `no dead letters in ${join(w.dir, '_floe', 'dead-letters')}; nothing to purge`,
    );
  });

  it('refuses a bad duration or an unknown reason before deleting anything', async () => {
    const w = await seedWarehouse('bad');
    for (const olderThan of ['5', '5x', '-1d', '1.5d', '1h30m']) {
      const err = await purge({ warehouse: w.dir, olderThan }).catch((e: unknown) => e);
      expect(isFloeError(err, 'ConfigInvalid'), olderThan).toBe(true);
      expect((err as Error).message).toContain(`--older-than must be a whole number and a unit`);
    }
    await expect(purge({ warehouse: w.dir, reason: 'no-such-reason' })).rejects.toThrow(
      "unknown dead-letter reason 'no-such-reason'",
    );
    expect(await w.remaining()).toHaveLength(4);
  });
});

describe('purge on an S3 store (s3rver, in process)', () => {
  const savedEnv = { ...process.env };
  beforeAll(() => {
    process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  });
  afterAll(() => {
    for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) {
      if (savedEnv[k] === undefined) delete process.env[k];
      else process.env[k] = savedEnv[k];
    }
  });

  async function seedS3(prefix: string, letters: readonly DeadLetterRecord[]) {
    const uri = `s3://bucket/${prefix}`;
    const store = new ObjectStoreDeadLetterStore(new S3ObjectStore(s3.client), uri);
    for (const d of letters) await store.put(d);
    const remaining = async () => (await store.list()).map((d) => d.key).sort();
    return { uri, store, remaining };
  }

  it('by reason and by arrival time, naming the S3 store and reporting bytes per reason', async () => {
    const old = streamed(1, DeadLetterReason.MalformedJson, T0 - 10 * DAY);
    const recent = streamed(2, DeadLetterReason.MalformedJson, T0 - HOUR);
    const unrouted = streamed(3, DeadLetterReason.NoRoute, T0 - 20 * DAY);
    const s = await seedS3('purge-arrival', [old, recent, unrouted]);
    const sizes = new Map((await s.store.entries()).map((e) => [e.key, e.bytes]));

    const out = await purge({ store: s.uri, s3Endpoint: s3.endpoint, reason: 'no-route' });
    expect(out.split('\n')).toEqual([
      `deleted 1 dead letter(s) (${sizes.get(unrouted.key)} B) matching reason no-route from ${s.uri}`,
      `  no-route: 1 (${sizes.get(unrouted.key)} B)`,
    ]);
    expect(await s.remaining()).toEqual(keys(old, recent));

    const dry = await purge({ store: s.uri, s3Endpoint: s3.endpoint, olderThan: '1d', dryRun: true });
    expect(dry).toContain(old.key);
    expect(dry).not.toContain(recent.key);
    expect(dry).toContain(
      `dry run: would delete 1 dead letter(s) (${sizes.get(old.key)} B) matching older than 1d from ${s.uri}`,
    );
    expect(await s.remaining()).toEqual(keys(old, recent));

    await purge({ store: s.uri, s3Endpoint: s3.endpoint, olderThan: '1d' });
    expect(await s.remaining()).toEqual(keys(recent));
  });

  it('a dead letter without an arrival time ages from its object’s last-modified time', async () => {
    const a = loaded('in/a.ndjson', 1, DeadLetterReason.MalformedJson);
    const b = loaded('in/a.ndjson', 2, DeadLetterReason.NoRoute);
    const s = await seedS3('purge-stored', [a, b]);
    const stored = (await s.store.entries()).map((e) => e.storedAtMs);
    expect(stored).toHaveLength(2);
    // Half an hour after the later write, neither is an hour old; two hours after, both are.
    const none = await purge(
      { store: s.uri, s3Endpoint: s3.endpoint, olderThan: '1h' },
      Math.max(...stored) + HOUR / 2,
    );
    expect(none).toBe(`no dead letters matching older than 1h in ${s.uri}; nothing to purge`);
    expect(await s.remaining()).toEqual(keys(a, b));
    await purge({ store: s.uri, s3Endpoint: s3.endpoint, olderThan: '1h' }, Math.max(...stored) + 2 * HOUR);
    expect(await s.remaining()).toEqual([]);
  });

  it('refuses a purge with no filter unless --all, naming the S3 store', async () => {
    const s = await seedS3('purge-all', [streamed(1, DeadLetterReason.NoRoute, T0)]);
    await expect(purge({ store: s.uri, s3Endpoint: s3.endpoint })).rejects.toThrow(
      `refusing to purge every dead letter in ${s.uri}`,
    );
    expect(await s.remaining()).toHaveLength(1);
    await purge({ store: s.uri, s3Endpoint: s3.endpoint, all: true });
    expect(await s.remaining()).toEqual([]);
  });
});

describe('floe dead-letters purge (real command)', () => {
  /** Real-time seeds: one dead letter that arrived in 2020, two written just now. */
  async function seedNow(name: string) {
    const dir = join(tmp.dir, name);
    const store = openDeadLetterStore(openWarehouse(dir));
    const ancient = streamed(1, DeadLetterReason.MalformedJson, Date.UTC(2020, 0, 1));
    const fresh = streamed(2, DeadLetterReason.NoRoute, Date.now());
    const loadedNow = loaded('in/events.ndjson', 3, DeadLetterReason.NoRoute);
    for (const d of [ancient, fresh, loadedNow]) await store.put(d);
    const remaining = async () => (await store.list()).map((d) => d.key).sort();
    return { dir, ancient, fresh, loadedNow, remaining };
  }
  const env = { FLOE_WAREHOUSE: undefined };
  const floe = (...args: string[]) => runNode([BIN, 'dead-letters', 'purge', ...args], env);

  it('--older-than with a threshold far from every age: --dry-run deletes nothing, then the purge deletes the old one', async () => {
    const w = await seedNow('bin-age');
    const dry = await floe('-w', w.dir, '--older-than', '365d', '--dry-run');
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(w.ancient.key);
    expect(dry.stdout).not.toContain(w.fresh.key);
    expect(dry.stdout).toContain('dry run: would delete 1 dead letter(s)');
    expect(await w.remaining()).toEqual(keys(w.ancient, w.fresh, w.loadedNow));

    const real = await floe('-w', w.dir, '--older-than', '365d');
    expect(real.code).toBe(0);
    expect(real.stdout).toContain(`deleted 1 dead letter(s)`);
    expect(real.stdout).toContain(`matching older than 365d from ${join(w.dir, '_floe', 'dead-letters')}`);
    expect(real.stdout).toContain('  malformed-json: 1 (');
    expect(await w.remaining()).toEqual(keys(w.fresh, w.loadedNow));
  });

  it('no filter is refused (exit 1, says to pass --all); --all deletes everything; a bad duration is a clear error', async () => {
    const w = await seedNow('bin-all');
    const refused = await floe('-w', w.dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `refusing to purge every dead letter in ${join(w.dir, '_floe', 'dead-letters')}`,
    );
    expect(refused.stderr).toContain('--all');
    expect(refused.stderr).toContain('[ConfigInvalid]');
    expect(await w.remaining()).toHaveLength(3);

    const bad = await floe('-w', w.dir, '--older-than', '5x');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      "--older-than must be a whole number and a unit s, m, h, d or w (e.g. 0s, 30m, 12h, 5d), got '5x'",
    );
    expect(await w.remaining()).toHaveLength(3);

    const byReason = await floe('-w', w.dir, '--reason', 'no-route');
    expect(byReason.code).toBe(0);
    expect(byReason.stdout).toContain('deleted 2 dead letter(s)');
    expect(byReason.stdout).toContain('  no-route: 2 (');
    expect(await w.remaining()).toEqual(keys(w.ancient));

    const all = await floe('-w', w.dir, '--all');
    expect(all.code).toBe(0);
    expect(all.stdout).toContain('deleted 1 dead letter(s)');
    expect(await w.remaining()).toEqual([]);
  });

  it('--store s3://… with AWS_ENDPOINT_URL purges the S3 store and names it', async () => {
    const uri = 's3://bucket/purge-bin';
    const store = new ObjectStoreDeadLetterStore(new S3ObjectStore(s3.client), uri);
    const a = streamed(1, DeadLetterReason.MalformedJson, Date.UTC(2020, 0, 1));
    const b = streamed(2, DeadLetterReason.NoRoute, Date.UTC(2020, 0, 1));
    for (const d of [a, b]) await store.put(d);
    const r = await runNode([BIN, 'dead-letters', 'purge', '--store', uri, '--reason', 'malformed-json'], {
      AWS_ENDPOINT_URL: s3.endpoint,
      AWS_ENDPOINT_URL_S3: undefined,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
      AWS_PROFILE: undefined,
      FLOE_WAREHOUSE: undefined,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^deleted 1 dead letter\\(s\\) \\(\\d+ B\\) matching reason malformed-json from ${uri}\\n`),
    );
    expect((await store.list()).map((d) => d.key)).toEqual([b.key]);
  });

  it('--help describes the filters and the safety catch', async () => {
    const r = await runNode([BIN, 'dead-letters', 'purge', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: floe dead-letters purge\b/m);
    for (const o of [
      '--reason',
      '--source',
      '--table',
      '--older-than',
      '--all',
      '--dry-run',
      '--store',
      '--s3-path-style',
    ]) {
      expect(r.stdout).toContain(o);
    }
  });
});
