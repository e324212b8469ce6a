import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  decodeFragment,
  encodeFragment,
  type FragmentRecord,
} from '../../../lambdas/src/engine/pending-fragment.ts';
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';

const HEADER = { table: 'db.order_events', shardId: 'shardId-000000000003' };
const HEADER_LINE = JSON.stringify({ format: 'floe-pending-fragment', version: 1, ...HEADER });
const WHERE = 's3://bucket/_floe/pending/db.order_events/frag-0001.jsonl.gz';

function allBytes(): Uint8Array {
  const b = new Uint8Array(256);
  for (let i = 0; i < 256; i++) b[i] = i;
  return b;
}

function gz(text: string): Uint8Array {
  return new Uint8Array(gzipSync(text));
}

function decodeError(bytes: Uint8Array, where = WHERE): FloeError {
  try {
    decodeFragment(bytes, where);
  } catch (e) {
    expect(e).toBeInstanceOf(FloeError);
    return e as FloeError;
  }
  throw new Error('expected the fragment to be rejected');
}

describe('encodeFragment / decodeFragment', () => {
  it('round-trips records: every byte value, unicode, huge sequence numbers, optional value', () => {
    const records: FragmentRecord[] = [
      {
        sequenceNumber: '49590338271490256608559692538361571095921575989136588898123456789012',
        partitionKey: 'key-1',
        arrivalMs: 1_700_000_000_123,
        data: allBytes(),
      },
      {
        sequenceNumber: '0',
        partitionKey: 'clé 🔑 中文 "quoted" \\ back\nslash',
        arrivalMs: 0,
        data: new TextEncoder().encode('{"event_type":"café ☕","n":1}'),
        value: '{"event_type":"café ☕","n":1.0,"emoji":"😀","nl":"a\\nb"}',
      },
      {
        sequenceNumber: '18446744073709551617',
        partitionKey: '',
        arrivalMs: 1,
        data: new Uint8Array(0),
        value: '',
      },
    ];
    const { header, records: back } = decodeFragment(encodeFragment(HEADER, records), WHERE);
    expect(header).toEqual(HEADER);
    expect(back).toHaveLength(3);
    for (let i = 0; i < records.length; i++) {
      const want = records[i]!;
      const got = back[i]!;
      expect(got.sequenceNumber).toBe(want.sequenceNumber);
      expect(got.partitionKey).toBe(want.partitionKey);
      expect(got.arrivalMs).toBe(want.arrivalMs);
      expect(got.data).toBeInstanceOf(Uint8Array);
      expect([...got.data]).toEqual([...want.data]);
      expect(got.value).toBe(want.value);
    }
    // A record without a value decodes without the key (not `value: undefined` from a null).
    expect('value' in back[0]!).toBe(false);
    // An empty value is a value.
    expect('value' in back[2]!).toBe(true);
  });

  it('writes exactly the bytes of a view into a larger buffer (respects byteOffset/byteLength)', () => {
    const backing = new Uint8Array(64).fill(0xee);
    backing.set([1, 2, 3, 0, 255], 10);
    const view = backing.subarray(10, 15);
    const { records } = decodeFragment(
      encodeFragment(HEADER, [{ sequenceNumber: '5', partitionKey: 'k', arrivalMs: 5, data: view }]),
      WHERE,
    );
    expect([...records[0]!.data]).toEqual([1, 2, 3, 0, 255]);
  });

  it('round-trips a fragment without records', () => {
    const out = decodeFragment(encodeFragment(HEADER, []), WHERE);
    expect(out.header).toEqual(HEADER);
    expect(out.records).toEqual([]);
  });

  it('keeps the records in order', () => {
    const records = Array.from(
      { length: 50 },
      (_, i): FragmentRecord => ({
        sequenceNumber: String(1000 + i),
        partitionKey: `k${i}`,
        arrivalMs: i,
        data: new Uint8Array([i]),
      }),
    );
    const back = decodeFragment(encodeFragment(HEADER, records), WHERE).records;
    expect(back.map((r) => r.sequenceNumber)).toEqual(records.map((r) => r.sequenceNumber));
    expect(back.map((r) => r.data[0])).toEqual(records.map((_, i) => i));
  });

  it('is real gzip (magic 1f 8b) of JSON lines starting with the header', () => {
    const bytes = encodeFragment(HEADER, [
      { sequenceNumber: '7', partitionKey: 'k', arrivalMs: 3, data: new Uint8Array([104, 105]) },
    ]);
    expect(bytes[0]).toBe(0x1f);
    expect(bytes[1]).toBe(0x8b);
    const lines = gunzipSync(bytes).toString('utf8').split('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ format: 'floe-pending-fragment', version: 1, ...HEADER });
    expect(JSON.parse(lines[1]!)).toMatchObject({ s: '7', k: 'k', t: 3 });
    expect(Buffer.from(JSON.parse(lines[1]!).d as string, 'base64').toString()).toBe('hi');
  });
});

describe('decodeFragment rejects damaged input as DataInvalid naming the location', () => {
  const good = encodeFragment(HEADER, [
    { sequenceNumber: '1', partitionKey: 'k', arrivalMs: 1, data: allBytes() },
    { sequenceNumber: '2', partitionKey: 'k', arrivalMs: 2, data: allBytes() },
  ]);

  function expectDataInvalid(e: FloeError, fragment?: string): void {
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain(WHERE);
    expect(e.context.where).toBe(WHERE);
    if (fragment !== undefined) expect(e.message).toContain(fragment);
  }

  it('bytes that are not gzip', () => {
    expectDataInvalid(decodeError(new TextEncoder().encode(`${HEADER_LINE}\n`)), 'not gzip');
  });

  it('a truncated gzip stream', () => {
    expectDataInvalid(decodeError(good.subarray(0, good.length - 12)), 'not gzip');
  });

  it('a gzip stream with a corrupted body (checksum mismatch)', () => {
    const bad = new Uint8Array(good);
    // Flip bits of the CRC-32 in the trailer: inflating succeeds, the check must not.
    bad[bad.length - 8] = bad[bad.length - 8]! ^ 0xff;
    expectDataInvalid(decodeError(bad), 'not gzip');
  });

  it('an empty fragment (no header line)', () => {
    expectDataInvalid(decodeError(gz('')));
  });

  it('records without a header line', () => {
    expectDataInvalid(decodeError(gz('{"s":"1","k":"k","t":1,"d":"AA=="}\n')), 'header');
  });

  it.each([
    ['another format', { format: 'other', version: 1, ...HEADER }],
    ['version 2', { format: 'floe-pending-fragment', version: 2, ...HEADER }],
    ['no table', { format: 'floe-pending-fragment', version: 1, shardId: 's' }],
    ['a numeric shard id', { format: 'floe-pending-fragment', version: 1, table: 't', shardId: 3 }],
  ])('a header with %s', (_what, head) => {
    expectDataInvalid(decodeError(gz(`${JSON.stringify(head)}\n`)), 'header');
  });

  it('a header line that is not JSON', () => {
    expectDataInvalid(decodeError(gz('floe-pending-fragment v1\n')), 'not JSON');
  });

  it('a record line that is not JSON', () => {
    const text = `${HEADER_LINE}\n{"s":"1","k":"k","t":1,"d":"AA=="}\n{"s":"2",\n`;
    expectDataInvalid(decodeError(gz(text)), 'not JSON');
  });

  it.each([
    ['no sequence number', { k: 'k', t: 1, d: 'AA==' }],
    ['a numeric sequence number', { s: 2, k: 'k', t: 1, d: 'AA==' }],
    ['no partition key', { s: '2', t: 1, d: 'AA==' }],
    ['an arrival time as text', { s: '2', k: 'k', t: '1', d: 'AA==' }],
    ['no data', { s: '2', k: 'k', t: 1 }],
    ['data as a byte array', { s: '2', k: 'k', t: 1, d: [0] }],
    ['an array instead of an object', ['2', 'k', 1, 'AA==']],
  ])('a record with %s (naming the record)', (_what, rec) => {
    const text = `${HEADER_LINE}\n{"s":"1","k":"k","t":1,"d":"AA=="}\n${JSON.stringify(rec)}\n`;
    expectDataInvalid(decodeError(gz(text)), 'record 2');
  });
});

describe('decodeFragment: JSON null lines', () => {
  it('a record line `null` is DataInvalid naming the record', () => {
    const e = decodeError(gz(`${HEADER_LINE}\nnull\n`));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain(WHERE);
    expect(e.message).toContain('record 1');
  });
  it('a header line `null` is DataInvalid', () => {
    expect(() => decodeFragment(gz('null\n'), 'mem://frag')).toThrow(FloeError);
  });
});

describe('fragments of versioned change tables', () => {
  it('carry the table key the data declared and each change version', () => {
    const header = { ...HEADER, upsert: { key: ['pk', 'sk'], envelope: 'dynamodb' as const } };
    const records: FragmentRecord[] = [
      {
        sequenceNumber: '1',
        partitionKey: 'p',
        arrivalMs: 1,
        data: new Uint8Array([1]),
        op: 'upsert',
        version: 1_733_000_000_123_456n,
      },
      {
        sequenceNumber: '2',
        partitionKey: 'p',
        arrivalMs: 2,
        data: new Uint8Array([2]),
        op: 'delete',
        version: 18_446_744_073_709_551_617n,
      },
      { sequenceNumber: '3', partitionKey: 'p', arrivalMs: 3, data: new Uint8Array([3]) },
    ];
    const back = decodeFragment(encodeFragment(header, records), WHERE);
    expect(back.header).toEqual(header);
    expect(back.records.map((r) => [r.op, r.version])).toEqual([
      ['upsert', 1_733_000_000_123_456n],
      ['delete', 18_446_744_073_709_551_617n],
      [undefined, undefined],
    ]);
    expect('version' in back.records[2]!).toBe(false);
  });
});
