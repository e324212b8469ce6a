import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fileUri, LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import {
  advance,
  committedFloor,
  decodeWatermark,
  encodeWatermark,
  encodeWithinLimit,
  furthest,
  isInlineWatermark,
  loadWatermark,
  MAX_PRUNE_CHECKS,
  MAX_WATERMARK_BYTES,
  type PruneScope,
  pruneSettledShards,
  readWatermark,
  type ShardMark,
  WATERMARK_KEY,
  type Watermark,
  watermarkFromSnapshots,
  watermarkKey,
} from '../../../lambdas/src/engine/watermark.ts';
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';
import { applyUpdates, newTableMetadata } from '../../../lambdas/src/iceberg/metadata/index.ts';
import type { Snapshot } from '../../../lambdas/src/iceberg/snapshot.ts';
import type { TableMetadata } from '../../../lambdas/src/iceberg/table-metadata.ts';
import { field, T } from '../../../lambdas/src/iceberg/types.ts';
import type { LedgerEntry, LedgerStatus } from '../../../lambdas/src/ports/ledger.ts';
import type { ObjectStore } from '../../../lambdas/src/ports/object-store.ts';

/** A 70-digit sequence number: far beyond 2^53 and 2^64, so any float or int64 detour shows. */
const HUGE = '4959033827149025660855969253836157109592157598913658889812345678901234';
const HUGE_PLUS_ONE = '4959033827149025660855969253836157109592157598913658889812345678901235';
/** A real Kinesis sequence number (56 digits) and shard id. */
const KINESIS_SEQ = '49590338271490256608559692538361571095921575989136588898';
const SHARD = 'shardId-000000000000';
const T0 = 1_741_964_400_000; // 2025-03-14T15:00:00Z, whole seconds
const DAY = 24 * 3600 * 1000;

function mark(sequence: string, movedAtMs = T0): ShardMark {
  return { sequence, movedAtMs };
}

function wm(entries: Record<string, string | ShardMark>): Map<string, ShardMark> {
  return new Map(Object.entries(entries).map(([k, v]) => [k, typeof v === 'string' ? mark(v) : v]));
}

function tableIn(properties: Record<string, string> = {}): { dir: string; meta: TableMetadata } {
  const dir = mkdtempSync(join(tmpdir(), 'floe-watermark-'));
  const meta = newTableMetadata({
    location: `${fileUri(dir)}/db/t`,
    schema: { schemaId: 0, fields: [field(1, 'x', T.long)] },
    properties,
    formatVersion: 2,
    tableUuid: '00000000-0000-4000-8000-000000000001',
    nowMs: T0,
  });
  return { dir, meta };
}

function withProperty(m: TableMetadata, key: string, value: string): TableMetadata {
  return { ...m, properties: { ...m.properties, [key]: value } };
}

/** `m` with one more snapshot on `branch` (main) whose summary is `operation` plus `extra`. */
function withSnapshot(
  m: TableMetadata,
  extra: Record<string, string> = {},
  operation = 'append',
  branch = 'main',
): TableMetadata {
  const parent =
    branch === 'main' ? m['current-snapshot-id'] : (m.refs[branch] ?? m.refs.main)?.['snapshot-id'];
  const id = BigInt(m.snapshots.length + 1) * 1000n;
  const snapshot: Snapshot = {
    'snapshot-id': id,
    ...(parent === undefined ? {} : { 'parent-snapshot-id': parent }),
    'sequence-number': m['last-sequence-number'] + 1n,
    'timestamp-ms': BigInt(T0) + id,
    'manifest-list': `${m.location}/metadata/snap-${id}.avro`,
    summary: { operation, ...extra } as Snapshot['summary'],
    'schema-id': 0,
  };
  return applyUpdates(
    m,
    [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': branch, type: 'branch', 'snapshot-id': id },
    ],
    { nowMs: T0 + Number(id) },
  );
}

/** A store every call of which fails the test (proves a read needs no object). */
const untouchable = new Proxy({} as ObjectStore, {
  get() {
    throw new Error('the store must not be used');
  },
});

function legacyDoc(shards: Record<string, unknown>): string {
  return JSON.stringify({ format: 'floe-commit-watermark', version: 1, shards });
}

function errorOf(f: () => unknown): FloeError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FloeError);
    return e as FloeError;
  }
  throw new Error('expected an error');
}

async function rejection(p: Promise<unknown>): Promise<FloeError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(FloeError);
  return e as FloeError;
}

describe('encodeWatermark / decodeWatermark (inline, version 2)', () => {
  it('round-trips shards, their sequence numbers and the time each last moved', () => {
    const w = wm({
      'shardId-000000000001': mark(KINESIS_SEQ, T0 + 5000),
      'shardId-000000000000': mark('0', 0),
      'shardId-000000000007': mark(HUGE, T0),
    });
    expect(decodeWatermark(encodeWatermark(w), 'here')).toEqual(w);
  });

  it('keeps 60+-digit sequence numbers exact (no number detour)', () => {
    const text = encodeWatermark(wm({ s: HUGE }));
    expect(text).toContain(`"${HUGE}"`);
    expect(decodeWatermark(text, 'w').get('s')?.sequence).toBe(HUGE);
    expect(decodeWatermark(encodeWatermark(wm({ s: HUGE_PLUS_ONE })), 'w').get('s')?.sequence).toBe(
      HUGE_PLUS_ONE,
    );
  });

  it('writes shards in sorted order, so equal watermarks give identical text', () => {
    const a = wm({ 'shardId-b': '2', 'shardId-c': '3', 'shardId-a': '1' });
    const b = wm({ 'shardId-a': '1', 'shardId-c': '3', 'shardId-b': '2' });
    expect(encodeWatermark(a)).toBe(encodeWatermark(b));
    const doc = JSON.parse(encodeWatermark(a)) as { format: string; version: number; shards: object };
    expect(Object.keys(doc.shards)).toEqual(['shardId-a', 'shardId-b', 'shardId-c']);
    expect([doc.format, doc.version]).toEqual(['floe-commit-watermark', 2]);
  });

  it('is compact: a Kinesis shard costs under 100 bytes, times in whole seconds', () => {
    const one = encodeWatermark(wm({ [SHARD]: mark(KINESIS_SEQ, T0 + 999) }));
    const two = encodeWatermark(
      wm({ [SHARD]: mark(KINESIS_SEQ, T0), 'shardId-000000000001': mark(KINESIS_SEQ, T0) }),
    );
    expect(two.length - one.length).toBeLessThan(100);
    expect(one).toContain(`"${SHARD}":["${KINESIS_SEQ}",${T0 / 1000}]`);
  });

  it('encodes the empty watermark and decodes it back to no shards', () => {
    expect(decodeWatermark(encodeWatermark(new Map()), 'w').size).toBe(0);
  });

  it('decodes sequence numbers to their canonical form (no leading zeros)', () => {
    const text = JSON.stringify({
      format: 'floe-commit-watermark',
      version: 2,
      shards: { a: ['000123', 1], b: ['0000', 2] },
    });
    expect(decodeWatermark(text, 'w')).toEqual(wm({ a: mark('123', 1000), b: mark('0', 2000) }));
  });

  it('reads a legacy side file (version 1: no times), its shards moved at the given time', () => {
    const text = legacyDoc({ [SHARD]: KINESIS_SEQ, other: '0007' });
    expect(decodeWatermark(text, 'file:///w.json', T0)).toEqual(
      wm({ [SHARD]: mark(KINESIS_SEQ, T0), other: mark('7', T0) }),
    );
  });

  it('rejects text that is not JSON as DataInvalid naming where it was read', () => {
    const e = errorOf(() => decodeWatermark('{"format":', 'table property floe.watermark'));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain('table property floe.watermark');
    expect(e.message).toContain('not JSON');
    expect(e.context.where).toBe('table property floe.watermark');
  });

  it.each([
    ['another format', { format: 'something-else', version: 2, shards: {} }],
    ['no format', { version: 2, shards: {} }],
    ['version 3', { format: 'floe-commit-watermark', version: 3, shards: {} }],
    ['version as text', { format: 'floe-commit-watermark', version: '2', shards: {} }],
    ['no shards', { format: 'floe-commit-watermark', version: 2 }],
    ['null shards', { format: 'floe-commit-watermark', version: 2, shards: null }],
    ['shards as text', { format: 'floe-commit-watermark', version: 2, shards: 'a=1' }],
    ['an array of shards', { format: 'floe-commit-watermark', version: 2, shards: [['1', 1]] }],
    ['a JSON null document', null],
    ['a JSON number document', 7],
  ])('rejects %s as DataInvalid naming the location', (_what, doc) => {
    const e = errorOf(() => decodeWatermark(JSON.stringify(doc), 'file:///w/here.json'));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain('file:///w/here.json');
  });

  it.each([
    ['a non-decimal sequence', ['12a', 1]],
    ['a negative sequence', ['-5', 1]],
    ['an empty sequence', ['', 1]],
    ['a sequence as a JSON number', [123, 1]],
    ['a bare sequence (the version 1 shape)', '123'],
    ['no time', ['123']],
    ['a time as text', ['123', '1']],
    ['a negative time', ['123', -1]],
    ['a fractional time', ['123', 1.5]],
    ['null', null],
  ])('rejects %s, naming the shard and location', (_what, value) => {
    const text = JSON.stringify({
      format: 'floe-commit-watermark',
      version: 2,
      shards: { good: ['1', 1], 'shardId-000000000009': value },
    });
    const e = errorOf(() => decodeWatermark(text, 'mem://loc'));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain('mem://loc');
    expect(e.message).toContain('shardId-000000000009');
  });

  it('tells the inline form from a legacy side file URI', () => {
    expect(isInlineWatermark(encodeWatermark(new Map()))).toBe(true);
    expect(isInlineWatermark(' {"format":"floe-commit-watermark"}')).toBe(true);
    expect(isInlineWatermark('s3://bucket/t/metadata/floe-watermark-1.json')).toBe(false);
    expect(isInlineWatermark('file:///w/t/metadata/floe-watermark-1.json')).toBe(false);
  });
});

describe('encodeWithinLimit', () => {
  const shards = (n: number) =>
    new Map(
      Array.from({ length: n }, (_, i) => [`shardId-${String(i).padStart(12, '0')}`, mark(KINESIS_SEQ, T0)]),
    );

  it("keeps 4,000 Kinesis shards within the limit, itself under Glue's 512,000-byte parameter values", () => {
    const text = encodeWithinLimit(shards(4000), 'orders');
    expect(text.length).toBeLessThanOrEqual(MAX_WATERMARK_BYTES);
    expect(MAX_WATERMARK_BYTES).toBeLessThan(512_000);
    expect(decodeWatermark(text, 'w').size).toBe(4000);
  });

  it('refuses a watermark over the limit as DataInvalid naming the table and its size', () => {
    const e = errorOf(() => encodeWithinLimit(shards(5000), 'orders'));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain("table 'orders'");
    expect(e.message).toContain('5000 shards');
    expect(e.context).toMatchObject({ table: 'orders', shards: 5000, limit: MAX_WATERMARK_BYTES });
  });
});

describe('loadWatermark / readWatermark', () => {
  it('is empty, without touching the store, for a table Floe never committed to', async () => {
    const { meta } = tableIn();
    expect((await loadWatermark(untouchable, withSnapshot(meta))).size).toBe(0);
  });

  it('reads the inline property without touching the store', async () => {
    const { meta } = tableIn();
    const w = wm({ [SHARD]: mark(KINESIS_SEQ, T0), s1: mark(HUGE, T0 - DAY) });
    const m = withProperty(meta, WATERMARK_KEY, encodeWatermark(w));
    expect(await loadWatermark(untouchable, m)).toEqual(w);
    expect(await readWatermark(untouchable, m)).toEqual(
      new Map([
        [SHARD, KINESIS_SEQ],
        ['s1', HUGE],
      ]),
    );
  });

  it('takes the property over summary copies (they may be older, or another engine may have copied one)', async () => {
    const { meta } = tableIn();
    const older = withSnapshot(meta, { [WATERMARK_KEY]: encodeWatermark(wm({ s: '5' })) });
    const m = withProperty(older, WATERMARK_KEY, encodeWatermark(wm({ s: '9' })));
    expect((await readWatermark(untouchable, m)).get('s')).toBe('9');
  });

  it('reports a damaged inline property as DataInvalid naming the property', async () => {
    const { meta } = tableIn();
    const m = withProperty(
      meta,
      WATERMARK_KEY,
      '{"format":"floe-commit-watermark","version":2,"shards":{"s":["x",1]}}',
    );
    const e = await rejection(loadWatermark(untouchable, m));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain(`table property ${WATERMARK_KEY}`);
  });

  it('reads a legacy side file the property names; its shards count as moved at the last metadata update', async () => {
    const { dir, meta } = tableIn();
    const path = join(dir, 'floe-watermark-1.json');
    writeFileSync(path, legacyDoc({ [SHARD]: KINESIS_SEQ, s1: '42' }));
    const m = withProperty(meta, WATERMARK_KEY, fileUri(path));
    const updated = Number(m['last-updated-ms']);
    expect(await loadWatermark(new LocalObjectStore(), m)).toEqual(
      wm({ [SHARD]: mark(KINESIS_SEQ, updated), s1: mark('42', updated) }),
    );
  });

  it('reports a damaged legacy side file as DataInvalid naming its location', async () => {
    const { dir, meta } = tableIn();
    const path = join(dir, 'broken.json');
    writeFileSync(path, legacyDoc({ s: 'x1' }));
    const e = await rejection(
      loadWatermark(new LocalObjectStore(), withProperty(meta, WATERMARK_KEY, fileUri(path))),
    );
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain(fileUri(path));
  });

  it('fails loudly when the legacy side file is gone and no snapshot carries an inline copy', async () => {
    const { dir, meta } = tableIn();
    const uri = fileUri(join(dir, 'metadata', 'floe-watermark-gone.json'));
    const m = withSnapshot(withProperty(meta, WATERMARK_KEY, uri), { [WATERMARK_KEY]: uri });
    const e = await rejection(loadWatermark(new LocalObjectStore(), m));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain(uri);
    expect(e.message).toContain('no longer exists');
    expect(e.message).toContain('not committed');
    expect(e.context).toMatchObject({ where: uri, reason: 'watermark-file-missing' });
  });

  it('falls back to the newest inline summary copy when the legacy side file is gone', async () => {
    const { dir, meta } = tableIn();
    const uri = fileUri(join(dir, 'gone.json'));
    const copy = wm({ [SHARD]: mark(KINESIS_SEQ, T0) });
    let m = withSnapshot(meta, { [WATERMARK_KEY]: encodeWatermark(wm({ [SHARD]: '1' })) });
    m = withSnapshot(m, { [WATERMARK_KEY]: encodeWatermark(copy) });
    m = withSnapshot(m, {}, 'replace'); // another engine's compaction: no Floe keys
    m = withProperty(m, WATERMARK_KEY, uri);
    expect(await loadWatermark(new LocalObjectStore(), m)).toEqual(copy);
  });

  it('does not fall back to an inline copy older than a legacy commit (it would be stale)', async () => {
    const { dir, meta } = tableIn();
    const uri = fileUri(join(dir, 'gone.json'));
    let m = withSnapshot(meta, { [WATERMARK_KEY]: encodeWatermark(wm({ [SHARD]: '1' })) });
    m = withSnapshot(m, { [WATERMARK_KEY]: uri });
    m = withProperty(m, WATERMARK_KEY, uri);
    expect(watermarkFromSnapshots(m)).toBeUndefined();
    const e = await rejection(loadWatermark(new LocalObjectStore(), m));
    expect(e.context.reason).toBe('watermark-file-missing');
  });

  it('passes on store failures other than a missing file (a transient error is not a lost watermark)', async () => {
    const { meta } = tableIn();
    const m = withProperty(meta, WATERMARK_KEY, 's3://bucket/t/metadata/floe-watermark-1.json');
    const flaky = {
      get: async () => {
        throw new FloeError(ErrorKind.Unexpected, 'S3 GetObject failed: SlowDown', { retryable: true });
      },
    } as unknown as ObjectStore;
    const e = await rejection(loadWatermark(flaky, m));
    expect(e.kind).toBe(ErrorKind.Unexpected);
    expect(e.retryable).toBe(true);
  });

  it('without the property, takes the newest inline copy of the lineage, walking past other engines', async () => {
    const { meta } = tableIn();
    const newest = wm({ [SHARD]: mark('20', T0), s1: mark('7', T0) });
    let m = withSnapshot(meta, { [WATERMARK_KEY]: encodeWatermark(wm({ [SHARD]: '10' })) });
    m = withSnapshot(m, { [WATERMARK_KEY]: encodeWatermark(newest) });
    m = withSnapshot(m, { 'spark.app.id': 'x' });
    m = withSnapshot(m, {}, 'replace');
    expect(await loadWatermark(untouchable, m)).toEqual(newest);
  });

  it('without the property, is empty once every copy-carrying snapshot has expired', async () => {
    const { meta } = tableIn();
    let m = withSnapshot(meta, { [WATERMARK_KEY]: encodeWatermark(wm({ s: '10' })) });
    const carrier = m['current-snapshot-id'] as bigint;
    m = withSnapshot(m, {}, 'replace');
    m = applyUpdates(m, [{ action: 'remove-snapshots', 'snapshot-ids': [carrier] }], { nowMs: T0 + DAY });
    expect((await loadWatermark(untouchable, m)).size).toBe(0);
  });
});

describe('watermarks per branch', () => {
  const copy = (w: Record<string, string>) => ({ [WATERMARK_KEY]: encodeWatermark(wm(w)) });

  it("names main's property floe.watermark and another branch's floe.watermark@<branch>", () => {
    expect(watermarkKey()).toBe(WATERMARK_KEY);
    expect(watermarkKey('main')).toBe(WATERMARK_KEY);
    expect(watermarkKey('audit')).toBe(`${WATERMARK_KEY}@audit`);
  });

  it("a branch reads its own property; main's is not it", async () => {
    const { meta } = tableIn();
    let m = withSnapshot(meta, copy({ s: '5' }));
    m = withSnapshot(m, copy({ s: '9' }), 'append', 'audit');
    m = withProperty(m, WATERMARK_KEY, encodeWatermark(wm({ s: '5' })));
    m = withProperty(m, watermarkKey('audit'), encodeWatermark(wm({ s: '9' })));
    expect((await readWatermark(untouchable, m)).get('s')).toBe('5');
    expect((await readWatermark(untouchable, m, 'audit')).get('s')).toBe('9');
  });

  it("a branch that does not exist yet holds what main holds: main's watermark", async () => {
    const { meta } = tableIn();
    const m = withProperty(withSnapshot(meta), WATERMARK_KEY, encodeWatermark(wm({ s: '7', t: '3' })));
    expect(await readWatermark(untouchable, m, 'audit')).toEqual(await readWatermark(untouchable, m));
  });

  it("without its property, a branch takes the newest copy along its own lineage, not main's", async () => {
    const { meta } = tableIn();
    let m = withSnapshot(meta, copy({ s: '5' }));
    m = withSnapshot(m, copy({ s: '9' }), 'append', 'audit'); // the branch leaves main at s=5
    m = withSnapshot(m, copy({ s: '6' })); // main moves on its own
    expect((await readWatermark(untouchable, m, 'audit')).get('s')).toBe('9');
    expect((await readWatermark(untouchable, m)).get('s')).toBe('6');
    expect(watermarkFromSnapshots(m, 'audit')?.get('s')?.sequence).toBe('9');
  });

  it('furthest: per shard the further position, with the time it moved there', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.bigInt({ min: 0n, max: 2n ** 80n })),
        fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.bigInt({ min: 0n, max: 2n ** 80n })),
        (x, y) => {
          const a = new Map(Object.entries(x).map(([k, v]) => [k, mark(String(v), T0)]));
          const b = new Map(Object.entries(y).map(([k, v]) => [k, mark(String(v), T0 + DAY)]));
          const out = furthest(a, b);
          expect([...out.keys()].sort()).toEqual([...new Set([...a.keys(), ...b.keys()])].sort());
          for (const [k, m] of out) {
            const want = ([x[k], y[k]].filter((v) => v !== undefined) as bigint[])
              .sort((p, q) => (p < q ? -1 : p > q ? 1 : 0))
              .at(-1);
            expect(m.sequence).toBe(String(want));
            // The mark comes from the side whose position it is (b only when strictly further).
            const fromB = y[k] !== undefined && (x[k] === undefined || y[k]! > x[k]!);
            expect(m.movedAtMs).toBe(fromB ? T0 + DAY : T0);
          }
        },
      ),
    );
  });
});

describe('advance', () => {
  it('moves a shard forward and stamps the time it moved', () => {
    const out = advance(wm({ a: mark('100', T0) }), new Map([['a', '101']]), T0 + DAY);
    expect(out.get('a')).toEqual(mark('101', T0 + DAY));
  });

  it('never moves a shard back, and keeps its time on an equal or lower position', () => {
    const w = wm({ a: mark('100', T0), b: mark('7', T0) });
    const out = advance(
      w,
      new Map([
        ['a', '99'],
        ['b', '007'],
      ]),
      T0 + DAY,
    );
    expect(out).toEqual(w);
  });

  it('compares sequence numbers as integers, not as text', () => {
    expect(advance(wm({ a: '9' }), new Map([['a', '10']]), T0).get('a')?.sequence).toBe('10');
    expect(advance(wm({ a: '10' }), new Map([['a', '9']]), T0).get('a')?.sequence).toBe('10');
    expect(advance(wm({ a: HUGE }), new Map([['a', HUGE_PLUS_ONE]]), T0).get('a')?.sequence).toBe(
      HUGE_PLUS_ONE,
    );
  });

  it('adds shards it did not hold, keeps the others as they were, and leaves its input unchanged', () => {
    const w = wm({ old: mark('5', T0 - DAY) });
    const out = advance(w, new Map([['new', '3']]), T0);
    expect(out).toEqual(wm({ old: mark('5', T0 - DAY), new: mark('3', T0) }));
    expect(w.size).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Pruning against a ledger

const TABLE = 'orders';

function entry(
  shardId: string,
  first: number,
  last: number,
  previous: number | null,
  status: LedgerStatus,
): LedgerEntry {
  return {
    table: TABLE,
    shardId,
    firstSequence: String(first),
    lastSequence: String(last),
    previousLastSequence: previous === null ? null : String(previous),
    files: [],
    records: last - first + 1,
    createdAtMs: T0,
    status,
  };
}

/** A chain of entries [1..10], [11..20] … up to `last`, committed up to `committedUpTo`. */
function chainOf(shardId: string, last: number, committedUpTo: number): LedgerEntry[] {
  const out: LedgerEntry[] = [];
  for (let end = 10; end <= last; end += 10) {
    out.push(
      entry(
        shardId,
        end - 9,
        end,
        end === 10 ? null : end - 10,
        end <= committedUpTo ? 'committed' : 'staged',
      ),
    );
  }
  return out;
}

/** Enough of a Ledger for pruning: chains by shard; counts reads. */
function ledgerOf(chains: Record<string, LedgerEntry[]>, failing: readonly string[] = []) {
  const reads: string[] = [];
  return {
    reads,
    entriesAfter: async (table: string, shard: string, after: string | null, limit: number) => {
      reads.push(shard);
      if (failing.includes(shard)) throw new Error('ThrottlingException');
      expect([table, after]).toEqual([TABLE, null]);
      return (chains[shard] ?? []).slice(0, limit);
    },
  };
}

function scope(ledger: PruneScope['ledger'], over: Partial<PruneScope> = {}): PruneScope {
  return { ledger, table: TABLE, nowMs: T0 + 10 * DAY, idleMs: 8 * DAY, maxEntries: 1000, ...over };
}

describe('committedFloor', () => {
  it('is where the leading run of committed entries ends, or `from` when that is higher', () => {
    const chain = chainOf('s', 40, 20);
    expect(committedFloor(chain, null)).toBe('20');
    expect(committedFloor(chain, '15')).toBe('20');
    expect(committedFloor(chain, '35')).toBe('35');
    expect(committedFloor(chainOf('s', 40, 0), null)).toBeNull();
    expect(committedFloor([], '7')).toBe('7');
  });
});

describe('pruneSettledShards', () => {
  const idle = T0; // ten days before `scope().nowMs`

  it('drops a shard idle past the horizon whose chain is committed up to its position', async () => {
    const ledger = ledgerOf({ closed: chainOf('closed', 30, 30), open: chainOf('open', 50, 50) });
    const w = wm({ closed: mark('30', idle), open: mark('50', T0 + 10 * DAY) });
    const out = await pruneSettledShards(w, scope(ledger));
    expect([...out.keys()]).toEqual(['open']);
    expect(ledger.reads).toEqual(['closed']);
  });

  it('keeps an idle shard whose entries at or below its position are still staged (commit landed, not yet marked)', async () => {
    const ledger = ledgerOf({ s: chainOf('s', 30, 20) });
    expect([...(await pruneSettledShards(wm({ s: mark('30', idle) }), scope(ledger))).keys()]).toEqual(['s']);
  });

  it('keeps an idle shard with staged work above its position', async () => {
    const ledger = ledgerOf({ s: chainOf('s', 40, 30) });
    expect([...(await pruneSettledShards(wm({ s: mark('30', idle) }), scope(ledger))).keys()]).toEqual(['s']);
  });

  it('keeps a shard the ledger knows nothing about (nothing proves the floor)', async () => {
    const ledger = ledgerOf({});
    expect([...(await pruneSettledShards(wm({ s: mark('30', idle) }), scope(ledger))).keys()]).toEqual(['s']);
  });

  it('keeps a shard whose readable committed floor stops short of its position (more entries than a read returns)', async () => {
    const ledger = ledgerOf({ s: chainOf('s', 30, 30) });
    const out = await pruneSettledShards(wm({ s: mark('30', idle) }), scope(ledger, { maxEntries: 2 }));
    expect([...out.keys()]).toEqual(['s']);
  });

  it('keeps a shard when the ledger read fails', async () => {
    const ledger = ledgerOf({ s: chainOf('s', 30, 30) }, ['s']);
    expect([...(await pruneSettledShards(wm({ s: mark('30', idle) }), scope(ledger))).keys()]).toEqual(['s']);
  });

  it('reads nothing for shards moved within the horizon, or when the horizon is infinite', async () => {
    const ledger = ledgerOf({ s: chainOf('s', 30, 30) });
    const w = wm({ s: mark('30', T0 + 3 * DAY) });
    expect(await pruneSettledShards(w, scope(ledger))).toEqual(w);
    expect(
      await pruneSettledShards(wm({ s: mark('30', idle) }), scope(ledger, { idleMs: Infinity })),
    ).toEqual(wm({ s: mark('30', idle) }));
    expect(ledger.reads).toEqual([]);
  });

  it(`checks at most ${MAX_PRUNE_CHECKS} shards per commit, the longest idle first`, async () => {
    const n = MAX_PRUNE_CHECKS + 4;
    const chains: Record<string, LedgerEntry[]> = {};
    const entries: Record<string, ShardMark> = {};
    for (let i = 0; i < n; i++) {
      const id = `s${String(i).padStart(2, '0')}`;
      chains[id] = chainOf(id, 10, 10);
      entries[id] = mark('10', idle - (n - i) * 1000); // s00 idle longest
    }
    const ledger = ledgerOf(chains);
    const out = await pruneSettledShards(wm(entries), scope(ledger));
    expect([...out.keys()].sort()).toEqual(['s16', 's17', 's18', 's19']);
    expect(ledger.reads).toHaveLength(MAX_PRUNE_CHECKS);
  });

  it('leaves its input unchanged', async () => {
    const w: Watermark = wm({ s: mark('30', idle) });
    await pruneSettledShards(w, scope(ledgerOf({ s: chainOf('s', 30, 30) })));
    expect(w.size).toBe(1);
  });
});
