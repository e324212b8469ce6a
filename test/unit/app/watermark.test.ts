import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fileUri, LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import { seededIds } from '../../../lambdas/src/adapters/local/system-clock.ts';
import {
  advance,
  decodeWatermark,
  encodeWatermark,
  readWatermark,
  WATERMARK_KEY,
  writeWatermark,
} from '../../../lambdas/src/app/watermark.ts';
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';
import { newTableMetadata } from '../../../lambdas/src/iceberg/metadata/index.ts';
import type { TableMetadata } from '../../../lambdas/src/iceberg/table-metadata.ts';
import { field, T } from '../../../lambdas/src/iceberg/types.ts';
import type { ObjectStore } from '../../../lambdas/src/ports/object-store.ts';

/** A 70-digit sequence number: far beyond 2^53 and 2^64, so any float or int64 detour shows. */
const HUGE = '4959033827149025660855969253836157109592157598913658889812345678901234';
const HUGE_PLUS_ONE = '4959033827149025660855969253836157109592157598913658889812345678901235';

function tableIn(properties: Record<string, string> = {}): { dir: string; meta: TableMetadata } {
  const dir = mkdtempSync(join(tmpdir(), 'floe-watermark-'));
  const meta = newTableMetadata({
    location: `${fileUri(dir)}/db/t`,
    schema: { schemaId: 0, fields: [field(1, 'x', T.long)] },
    properties,
    formatVersion: 2,
    tableUuid: '00000000-0000-4000-8000-000000000001',
    nowMs: 1_700_000_000_000,
  });
  return { dir, meta };
}

function withProperty(m: TableMetadata, key: string, value: string): TableMetadata {
  return { ...m, properties: { ...m.properties, [key]: value } };
}

function decodeError(text: string, where: string): FloeError {
  try {
    decodeWatermark(text, where);
  } catch (e) {
    expect(e).toBeInstanceOf(FloeError);
    return e as FloeError;
  }
  throw new Error(`expected ${text} to be rejected`);
}

describe('encodeWatermark / decodeWatermark', () => {
  it('round-trips shards and their sequence numbers', () => {
    const w = new Map([
      ['shardId-000000000001', '49590338271490256608559692538361571095921575989136588898'],
      ['shardId-000000000000', '0'],
      ['shardId-000000000007', HUGE],
    ]);
    const back = decodeWatermark(encodeWatermark(w), 'mem://w.json');
    expect(back).toEqual(w);
  });

  it('keeps 60+-digit sequence numbers exact (no number detour)', () => {
    const text = encodeWatermark(new Map([['s', HUGE]]));
    expect(text).toContain(`"${HUGE}"`);
    expect(decodeWatermark(text, 'w').get('s')).toBe(HUGE);
    // A neighbour one apart stays distinct: a float would collapse them.
    expect(decodeWatermark(encodeWatermark(new Map([['s', HUGE_PLUS_ONE]])), 'w').get('s')).toBe(
      HUGE_PLUS_ONE,
    );
  });

  it('writes shards in sorted order, so equal watermarks give identical text', () => {
    const a = new Map([
      ['shardId-b', '2'],
      ['shardId-c', '3'],
      ['shardId-a', '1'],
    ]);
    const b = new Map([
      ['shardId-a', '1'],
      ['shardId-c', '3'],
      ['shardId-b', '2'],
    ]);
    const text = encodeWatermark(a);
    expect(text).toBe(encodeWatermark(b));
    const doc = JSON.parse(text) as { format: string; version: number; shards: Record<string, string> };
    expect(Object.keys(doc.shards)).toEqual(['shardId-a', 'shardId-b', 'shardId-c']);
    expect(doc.format).toBe('floe-commit-watermark');
    expect(doc.version).toBe(1);
  });

  it('encodes the empty watermark and decodes it back to no shards', () => {
    const back = decodeWatermark(encodeWatermark(new Map()), 'w');
    expect(back.size).toBe(0);
  });

  it('decodes sequence numbers to their canonical form (no leading zeros)', () => {
    const text = JSON.stringify({
      format: 'floe-commit-watermark',
      version: 1,
      shards: { a: '000123', b: '0000', c: `000${HUGE}` },
    });
    expect(decodeWatermark(text, 'w')).toEqual(
      new Map([
        ['a', '123'],
        ['b', '0'],
        ['c', HUGE],
      ]),
    );
  });

  it('rejects text that is not JSON as DataInvalid naming the location', () => {
    const e = decodeError('{"format":', 's3://bucket/t/metadata/floe-watermark-1.json');
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain('s3://bucket/t/metadata/floe-watermark-1.json');
    expect(e.message).toContain('not JSON');
    expect(e.context.where).toBe('s3://bucket/t/metadata/floe-watermark-1.json');
  });

  it.each([
    ['another format', { format: 'something-else', version: 1, shards: {} }],
    ['no format', { version: 1, shards: {} }],
    ['version 2', { format: 'floe-commit-watermark', version: 2, shards: {} }],
    ['version as text', { format: 'floe-commit-watermark', version: '1', shards: {} }],
    ['no shards', { format: 'floe-commit-watermark', version: 1 }],
    ['null shards', { format: 'floe-commit-watermark', version: 1, shards: null }],
    ['shards as text', { format: 'floe-commit-watermark', version: 1, shards: 'a=1' }],
    ['a JSON null document', null],
    ['a JSON number document', 7],
  ])('rejects %s as DataInvalid naming the location', (_what, doc) => {
    const e = decodeError(JSON.stringify(doc), 'file:///w/here.json');
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain('file:///w/here.json');
    expect(e.context.where).toBe('file:///w/here.json');
  });

  it.each([
    ['a non-decimal text', '12a'],
    ['a negative number', '-5'],
    ['an empty text', ''],
    ['a hexadecimal text', '0x10'],
    ['a fraction', '1.5'],
    ['a JSON number', 123],
    ['null', null],
  ])('rejects %s as a sequence number, naming the shard and location', (_what, seq) => {
    const text = JSON.stringify({
      format: 'floe-commit-watermark',
      version: 1,
      shards: { good: '1', 'shardId-000000000009': seq },
    });
    const e = decodeError(text, 'mem://loc');
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain('mem://loc');
    expect(e.message).toContain('shardId-000000000009');
  });
});

describe('advance', () => {
  it('moves a shard forward to a later position', () => {
    const out = advance(new Map([['a', '100']]), new Map([['a', '101']]));
    expect(out.get('a')).toBe('101');
  });

  it('never moves a shard back, and keeps it on an equal position', () => {
    const w = new Map([
      ['a', '100'],
      ['b', '7'],
    ]);
    const out = advance(
      w,
      new Map([
        ['a', '99'],
        ['b', '7'],
      ]),
    );
    expect(out).toEqual(w);
  });

  it('compares sequence numbers as integers, not as text', () => {
    // Lexically '9' > '10' and '10' < '9'; numerically the opposite.
    expect(advance(new Map([['a', '9']]), new Map([['a', '10']])).get('a')).toBe('10');
    expect(advance(new Map([['a', '10']]), new Map([['a', '9']])).get('a')).toBe('10');
    expect(advance(new Map([['a', HUGE]]), new Map([['a', HUGE_PLUS_ONE]])).get('a')).toBe(HUGE_PLUS_ONE);
    expect(advance(new Map([['a', HUGE_PLUS_ONE]]), new Map([['a', HUGE]])).get('a')).toBe(HUGE_PLUS_ONE);
  });

  it('adds shards it did not hold and keeps shards without a new position', () => {
    const out = advance(
      new Map([['old', '5']]),
      new Map([
        ['new-1', '3'],
        ['new-2', HUGE],
      ]),
    );
    expect(out).toEqual(
      new Map([
        ['old', '5'],
        ['new-1', '3'],
        ['new-2', HUGE],
      ]),
    );
  });

  it('returns a new map and leaves its input unchanged', () => {
    const w = new Map([['a', '1']]);
    const out = advance(w, new Map([['a', '2']]));
    expect(out).not.toBe(w);
    expect(w.get('a')).toBe('1');
  });
});

describe('readWatermark / writeWatermark', () => {
  it('returns an empty watermark without touching the store when the table has no floe.watermark', async () => {
    const { meta } = tableIn();
    expect(meta.properties[WATERMARK_KEY]).toBeUndefined();
    const untouchable = new Proxy({} as ObjectStore, {
      get() {
        throw new Error('the store must not be used');
      },
    });
    const w = await readWatermark(untouchable, meta);
    expect(w.size).toBe(0);
  });

  it('writes a file under the table metadata folder that readWatermark reads back', async () => {
    const { meta } = tableIn();
    const store = new LocalObjectStore();
    const w = new Map([
      ['shardId-000000000000', HUGE],
      ['shardId-000000000001', '42'],
    ]);
    const uri = await writeWatermark(store, seededIds(5), meta, w);
    expect(uri.startsWith(`${meta.location}/metadata/floe-watermark-`)).toBe(true);
    expect(uri.endsWith('.json')).toBe(true);
    const path = fileURLToPath(uri);
    expect(existsSync(path)).toBe(true);
    expect(decodeWatermark(readFileSync(path, 'utf8'), uri)).toEqual(w);

    const read = await readWatermark(store, withProperty(meta, WATERMARK_KEY, uri));
    expect(read).toEqual(w);
  });

  it('puts the file under write.metadata.path when the table sets it', async () => {
    const { dir, meta: plain } = tableIn();
    const elsewhere = `${fileUri(dir)}/custom-metadata`;
    const meta = withProperty(plain, 'write.metadata.path', elsewhere);
    const store = new LocalObjectStore();
    const uri = await writeWatermark(store, seededIds(6), meta, new Map([['s', '1']]));
    expect(uri.startsWith(`${elsewhere}/floe-watermark-`)).toBe(true);
    expect(uri.startsWith(`${meta.location}/metadata/`)).toBe(false);
    expect(existsSync(fileURLToPath(uri))).toBe(true);
  });

  it('writes every watermark to a new file (immutable files, never overwritten)', async () => {
    const { meta } = tableIn();
    const store = new LocalObjectStore();
    const ids = seededIds(7);
    const first = await writeWatermark(store, ids, meta, new Map([['s', '1']]));
    const second = await writeWatermark(store, ids, meta, new Map([['s', '2']]));
    expect(second).not.toBe(first);
    expect(await readWatermark(store, withProperty(meta, WATERMARK_KEY, first))).toEqual(
      new Map([['s', '1']]),
    );
    expect(await readWatermark(store, withProperty(meta, WATERMARK_KEY, second))).toEqual(
      new Map([['s', '2']]),
    );
  });

  it('reports a damaged referenced file as DataInvalid naming its location', async () => {
    const { dir, meta } = tableIn();
    const path = join(dir, 'broken-watermark.json');
    writeFileSync(path, '{"format":"floe-commit-watermark","version":1,"shards":{"s":"x1"}}');
    const uri = fileUri(path);
    const err = await readWatermark(new LocalObjectStore(), withProperty(meta, WATERMARK_KEY, uri)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FloeError);
    expect((err as FloeError).kind).toBe(ErrorKind.DataInvalid);
    expect((err as FloeError).message).toContain(uri);
  });

  it('hands out a copy: changing a returned watermark does not change later reads', async () => {
    const { meta } = tableIn();
    const store = new LocalObjectStore();
    const uri = await writeWatermark(store, seededIds(8), meta, new Map([['s', '10']]));
    const m = withProperty(meta, WATERMARK_KEY, uri);
    const first = await readWatermark(store, m);
    first.set('s', '999');
    first.set('extra', '1');
    expect(await readWatermark(store, m)).toEqual(new Map([['s', '10']]));
  });
});

describe('decodeWatermark: shards must be an object', () => {
  it('rejects an array of shards', () => {
    expect(() =>
      decodeWatermark('{"format":"floe-commit-watermark","version":1,"shards":["5"]}', 'mem://w'),
    ).toThrow(FloeError);
  });
});
