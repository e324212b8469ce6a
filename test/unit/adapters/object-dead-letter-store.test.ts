import { mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../../lambdas/src/adapters/aws/s3-object-store.ts';
import { fileUri, LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import { ObjectStoreDeadLetterStore } from '../../../lambdas/src/adapters/object-dead-letter-store.ts';
import { type DeadLetter, DeadLetterReason } from '../../../lambdas/src/engine/dead-letters.ts';
import { isFloeError } from '../../../lambdas/src/errors.ts';
import {
  type DeadLetterRecord,
  deadLetterKey,
  deadLetterRecord,
  deadLetterSourcePrefix,
  isDeadLetterKey,
} from '../../../lambdas/src/ports/dead-letters.ts';
import { startS3rver } from '../../contract/object-store.contract.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function fresh() {
  const d = mkdtempSync(join(tmpdir(), 'floe-dlq-'));
  dirs.push(d);
  const objects = new LocalObjectStore();
  const base = `${fileUri(d)}/dead-letters`;
  return { objects, base, dls: new ObjectStoreDeadLetterStore(objects, base) };
}

const letter = (over: Partial<DeadLetter> = {}): DeadLetter => ({
  source: 'events/2024-01-01.ndjson',
  line: 7,
  reason: DeadLetterReason.MalformedJson,
  detail: 'Unexpected token } at column 12',
  raw: '{"event_type": "ORDER",}',
  ...over,
});

describe('deadLetterKey', () => {
  it('is deterministic and depends only on the source and position', () => {
    const a = deadLetterKey({ source: 'events/a.ndjson', line: 3 });
    expect(deadLetterKey({ source: 'events/a.ndjson', line: 3 })).toBe(a);
    expect(deadLetterKey({ source: 'events/a.ndjson', line: 4 })).not.toBe(a);
    expect(deadLetterKey({ source: 'events/b.ndjson', line: 3 })).not.toBe(a);
    expect(a).toMatch(/^events_a\.ndjson-[0-9a-f]{16}\/0000000003$/);
    // Same record, different reason or detail: same key (a retry overwrites).
    expect(deadLetterRecord(letter()).key).toBe(
      deadLetterRecord(letter({ reason: DeadLetterReason.TypeConflict, detail: 'x' })).key,
    );
  });

  it('uses shard id and sequence number for streamed records, ignoring the batch ordinal', () => {
    const seq = '49590338271490256608559692538361571095921575989136588898';
    const k1 = deadLetterKey({
      source: 'shardId-000000000001',
      line: 5,
      shardId: 'shardId-000000000001',
      sequenceNumber: seq,
    });
    const k2 = deadLetterKey({
      source: 'shardId-000000000001',
      line: 1,
      shardId: 'shardId-000000000001',
      sequenceNumber: seq,
    });
    expect(k1).toBe(k2);
    expect(k1.startsWith(deadLetterSourcePrefix('shardId-000000000001'))).toBe(true);
    expect(k1.endsWith(`/${seq.padStart(64, '0')}`)).toBe(true);
    // Keys sort in sequence order even when the numbers have different lengths.
    const small = deadLetterKey({ source: 's', line: 1, shardId: 's', sequenceNumber: '9' });
    const big = deadLetterKey({ source: 's', line: 1, shardId: 's', sequenceNumber: '10' });
    expect(small < big).toBe(true);
  });

  it('makes hostile sources safe and keeps distinct sources distinct', () => {
    const hostile = [
      '../x',
      '../../etc/passwd',
      '..',
      '.',
      '',
      '/abs/path/file.ndjson',
      'a/b',
      'a_b',
      'C:\\temp\\x.ndjson',
      'ünïcødé 日本 🧊',
      'with space?&#%00\u0000\n',
      'x'.repeat(2000),
    ];
    const keys = hostile.map((source) => deadLetterKey({ source, line: 1 }));
    for (const k of keys) {
      expect(isDeadLetterKey(k)).toBe(true);
      expect(k.split('/')).toHaveLength(2);
      for (const seg of k.split('/')) {
        expect(seg).not.toBe('..');
        expect(seg).not.toBe('.');
        expect(seg.startsWith('.')).toBe(false);
      }
      expect(k.length).toBeLessThanOrEqual(100);
      expect(k).toMatch(/^[A-Za-z0-9._/-]+$/);
    }
    expect(new Set(keys).size).toBe(keys.length);
    expect(deadLetterKey({ source: 'x', line: 1, shardId: 's', sequenceNumber: '../1' })).toMatch(
      /^s-[0-9a-f]{16}\/0+x[0-9a-f]{16}$/,
    );
  });
});

describe('ObjectStoreDeadLetterStore', () => {
  it('stores one object per dead letter under <base>/<reason>/<key>.json; the same record twice is one object', async () => {
    const { objects, base, dls } = fresh();
    const d = deadLetterRecord(letter());
    await dls.put(d);
    await dls.put({ ...d, detail: 'second attempt' });
    const files = await objects.list(base);
    expect(files).toEqual([`${base}/malformed-json/${d.key}.json`]);
    expect(await dls.get(d.key)).toEqual({ ...d, detail: 'second attempt' });
    expect(await dls.list()).toHaveLength(1);
  });

  it('keeps one copy when a retry classifies the record under another reason', async () => {
    const { objects, base, dls } = fresh();
    const first = deadLetterRecord(letter({ reason: DeadLetterReason.InvalidValue }));
    await dls.put(first);
    const retry = deadLetterRecord(
      letter({ reason: DeadLetterReason.TypeConflict, detail: 'now a conflict' }),
    );
    expect(retry.key).toBe(first.key);
    await dls.put(retry);
    expect(await objects.list(base)).toEqual([`${base}/type-conflict/${retry.key}.json`]);
    expect(await dls.get(first.key)).toEqual(retry);
  });

  it('lists in key order with prefix and limit, gets and deletes', async () => {
    const { dls } = fresh();
    const shard = 'shardId-000000000002';
    const records: DeadLetterRecord[] = [
      deadLetterRecord(letter({ source: 'b.ndjson', line: 2 })),
      deadLetterRecord(letter({ source: 'b.ndjson', line: 1, reason: DeadLetterReason.NoRoute })),
      deadLetterRecord(letter({ source: 'a.ndjson', line: 10, reason: DeadLetterReason.TypeConflict })),
      deadLetterRecord(letter({ source: shard, line: 1, raw: '' }), {
        shardId: shard,
        sequenceNumber: '49590338271490256608559692538361571095921575989136588898',
        partitionKey: 'pk-1',
        arrivalTimeMs: 1_700_000_000_000,
        rawBase64: Buffer.from([3, 0, 1, 2, 255]).toString('base64'),
      }),
    ];
    for (const r of records) await dls.put(r);

    const all = await dls.list();
    expect(all.map((r) => r.key)).toEqual(records.map((r) => r.key).sort());
    expect(all.find((r) => r.shardId === shard)).toEqual(records[3]);

    const bOnly = await dls.list({ prefix: deadLetterSourcePrefix('b.ndjson') });
    expect(bOnly.map((r) => r.line)).toEqual([1, 2]);
    expect(bOnly.map((r) => r.reason)).toEqual(['no-route', 'malformed-json']);
    expect(await dls.list({ prefix: deadLetterSourcePrefix(shard) })).toEqual([records[3]]);
    expect(await dls.list({ limit: 2 })).toEqual(all.slice(0, 2));
    expect(await dls.list({ limit: 0 })).toEqual([]);

    expect(await dls.get(records[2]!.key)).toEqual(records[2]);
    await dls.delete(records[2]!.key);
    expect(await dls.get(records[2]!.key)).toBeUndefined();
    await dls.delete(records[2]!.key); // idempotent
    expect(await dls.list()).toHaveLength(3);
  });

  it('works on an empty or missing base folder', async () => {
    const { dls } = fresh();
    expect(await dls.list()).toEqual([]);
    expect(await dls.get(deadLetterKey({ source: 'a', line: 1 }))).toBeUndefined();
    await dls.delete(deadLetterKey({ source: 'a', line: 1 }));
  });

  it('stores records from hostile sources inside the base folder only', async () => {
    const { objects, base, dls } = fresh();
    const sources = ['../x', '../../escape', 'ünïcødé/日本', 'a b+c', '..'];
    for (const source of sources) {
      await dls.put(deadLetterRecord(letter({ source, raw: `from ${source}` })));
    }
    const files = await objects.list(base);
    expect(files).toHaveLength(sources.length);
    for (const f of files) expect(f.startsWith(`${base}/malformed-json/`)).toBe(true);
    // Nothing was written next to the base folder.
    expect(await objects.listChildren(base.replace(/\/dead-letters$/, ''))).toEqual(['dead-letters']);
    const listed = await dls.list();
    expect(listed.map((r) => r.source).sort()).toEqual([...sources].sort());
  });

  it('rejects keys that deadLetterKey cannot produce', async () => {
    const { dls } = fresh();
    for (const bad of ['../x/1', 'a/../../b', 'a', 'a/b/c', '/a/b', 'a/.hidden', '']) {
      const err = await dls.get(bad).catch((e: unknown) => e);
      expect(isFloeError(err, 'DataInvalid')).toBe(true);
      await expect(dls.delete(bad)).rejects.toThrow(/not a dead-letter key/);
    }
    await expect(dls.put({ ...deadLetterRecord(letter()), key: '../../x' })).rejects.toThrow(
      /dead-letter key/,
    );
  });
});

describe('ObjectStoreDeadLetterStore.entries and delete(key, reason)', () => {
  it('entries lists key, reason, stored size and stored time without reading the records', async () => {
    const { objects, base, dls } = fresh();
    const a = deadLetterRecord(letter({ line: 1 }));
    const b = deadLetterRecord(letter({ line: 2, reason: DeadLetterReason.NoRoute, raw: '{"x":1}' }));
    await dls.put(b);
    await dls.put(a);
    const when = Date.UTC(2022, 0, 2, 3, 4, 5, 6);
    const path = objects.pathOf(`${base}/no-route/${b.key}.json`);
    utimesSync(path, new Date(when), new Date(when));
    const entries = await dls.entries();
    expect(entries.map((e) => [e.key, e.reason, e.bytes])).toEqual([
      [a.key, 'malformed-json', statSync(objects.pathOf(`${base}/malformed-json/${a.key}.json`)).size],
      [b.key, 'no-route', statSync(path).size],
    ]);
    expect(entries[1]!.storedAtMs).toBe(when);
    await objects.put(`${base}/no-route/not-a-key.txt`, 'ignored');
    expect(await dls.entries()).toHaveLength(2);
  });

  it('delete with a reason removes only the copy under that reason', async () => {
    const { objects, base, dls } = fresh();
    const a = deadLetterRecord(letter());
    await dls.put(a);
    // A stale copy under another reason (a put whose clean-up failed) stays until deleted itself.
    await objects.put(`${base}/no-route/${a.key}.json`, `${JSON.stringify({ ...a, reason: 'no-route' })}\n`);
    await dls.delete(a.key, 'no-route');
    expect((await dls.entries()).map((e) => e.reason)).toEqual(['malformed-json']);
    await dls.delete(a.key, 'no-route'); // missing: not an error
    await dls.delete(a.key, 'malformed-json');
    expect(await dls.entries()).toEqual([]);
    await expect(dls.delete(a.key, '../x')).rejects.toThrow(/illegal dead-letter reason/);
  });
});

describe('ObjectStoreDeadLetterStore on S3 (s3rver)', () => {
  let s3: Awaited<ReturnType<typeof startS3rver>>;
  beforeAll(async () => {
    s3 = await startS3rver();
  });
  afterAll(async () => {
    await s3?.close();
  });

  it('puts idempotently, re-files a re-classified record, lists, gets and deletes', async () => {
    const objects = new S3ObjectStore(s3.client);
    const base = 's3://bucket/floe/dead-letters';
    const dls = new ObjectStoreDeadLetterStore(objects, base);
    const a = deadLetterRecord(letter({ source: '../hostile/ünï', line: 3 }));
    const b = deadLetterRecord(letter({ source: 'shardId-000000000000', raw: '' }), {
      shardId: 'shardId-000000000000',
      sequenceNumber: '123',
      rawBase64: 'AwAB',
    });
    await dls.put(a);
    await dls.put(a);
    await dls.put(b);
    await dls.put({ ...b, reason: DeadLetterReason.TypeConflict });
    expect(await objects.list(base)).toEqual(
      [`${base}/malformed-json/${a.key}.json`, `${base}/type-conflict/${b.key}.json`].sort(),
    );
    expect(await dls.get(a.key)).toEqual(a);
    expect(await dls.list({ prefix: deadLetterSourcePrefix('shardId-000000000000') })).toEqual([
      { ...b, reason: 'type-conflict' },
    ]);
    await dls.delete(a.key);
    expect(await dls.get(a.key)).toBeUndefined();
    expect((await dls.list()).map((r) => r.key)).toEqual([b.key]);
    const [entry, ...more] = await dls.entries();
    expect(more).toEqual([]);
    expect(entry).toMatchObject({ key: b.key, reason: 'type-conflict' });
    expect(entry!.bytes).toBe(await objects.size(`${base}/type-conflict/${b.key}.json`));
    expect(Math.abs(entry!.storedAtMs - Date.now())).toBeLessThan(60_000);
    await dls.delete(b.key, 'type-conflict');
    expect(await dls.entries()).toEqual([]);
  });
});
