import { describe, expect, it } from 'vitest';
import { decodeAvroContainer, encodeAvroContainer } from '../../../lambdas/src/avro/index.ts';
import { crc32 } from '../../../lambdas/src/avro/snappy.ts';
import { type ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { readWithAvsc } from './avsc-reader.ts';

const SYNC = Uint8Array.from({ length: 16 }, (_, i) => (i * 37 + 11) & 0xff);
const ascii = (s: string) => [...Buffer.from(s, 'utf8')];

function expectFloe(fn: () => unknown, kind: string, msg?: RegExp): void {
  try {
    fn();
  } catch (e) {
    expect(isFloeError(e, kind as ErrorKind), String(e)).toBe(true);
    if (msg) expect((e as Error).message).toMatch(msg);
    return;
  }
  expect.unreachable('expected a FloeError');
}

const RECORD_SCHEMA = {
  type: 'record',
  name: 'r',
  fields: [
    { name: 'id', type: 'long', 'field-id': 1 },
    { name: 'name', type: ['null', 'string'], default: null, 'field-id': 2 },
    {
      name: 'ts',
      type: { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true },
      'field-id': 3,
    },
    { name: 'tags', type: { type: 'array', items: 'long', 'element-id': 5 }, 'field-id': 4 },
  ],
};
const RECORDS = [
  { id: 2n ** 62n + 12345n, name: 'a', ts: 1_700_000_000_000_000n, tags: [2n ** 53n + 1n, -(2n ** 63n)] },
  { id: -1n, name: null, ts: 0n, tags: [] },
  { id: 9_223_372_036_854_775_807n, name: 'ünïcode ✓', ts: -5n, tags: [0n] },
];

describe('encodeAvroContainer', () => {
  it('produces the exact bytes of the Avro spec framing (hand-assembled)', () => {
    const bytes = encodeAvroContainer({
      schemaJson: 'long' as unknown as object,
      records: [1n, -1n],
      syncMarker: SYNC,
    });
    // biome-ignore format: hand-assembled byte layout, one header entry per line
    const expected = Uint8Array.from([
      ...[0x4f, 0x62, 0x6a, 0x01], // "Obj" 1
      0x04, // header map block: 2 entries (zig-zag 2)
      0x16, ...ascii('avro.schema'), 0x0c, ...ascii('"long"'),
      0x14, ...ascii('avro.codec'), 0x08, ...ascii('null'),
      0x00, // end of map
      ...SYNC,
      0x04, 0x04, 0x02, 0x01, // block: 2 objects, 2 bytes, datums 1 and -1
      ...SYNC,
    ]);
    expect(Buffer.from(bytes).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
  });

  it('round-trips bigint longs beyond 2^53 with null and deflate codecs', () => {
    for (const codec of ['null', 'deflate'] as const) {
      const bytes = encodeAvroContainer({
        schemaJson: RECORD_SCHEMA,
        records: RECORDS,
        syncMarker: SYNC,
        codec,
      });
      const d = decodeAvroContainer(bytes);
      expect(d.codec).toBe(codec);
      expect(d.records.map((r) => ({ ...(r as object) }))).toEqual(RECORDS);
    }
  });

  it('writes the schema JSON verbatim, with non-standard attributes, and extra metadata', async () => {
    const bytes = encodeAvroContainer({
      schemaJson: RECORD_SCHEMA,
      records: RECORDS,
      syncMarker: SYNC,
      metadata: { 'format-version': '2', note: 'x' },
    });
    const d = decodeAvroContainer(bytes);
    expect(d.schemaJson).toEqual(RECORD_SCHEMA);
    expect(d.metadata).toEqual({ 'format-version': '2', note: 'x' });
    const avsc = await readWithAvsc(bytes);
    expect(avsc.rawSchema).toBe(JSON.stringify(RECORD_SCHEMA));
    expect(avsc.rawSchema).toContain('"field-id":3');
    expect(avsc.rawSchema).toContain('"element-id":5');
    expect(avsc.rawSchema).toContain('"adjust-to-utc":true');
  });

  it('is readable by avsc’s own container decoder (independent reader), for both codecs', async () => {
    for (const codec of ['null', 'deflate'] as const) {
      const bytes = encodeAvroContainer({
        schemaJson: RECORD_SCHEMA,
        records: RECORDS,
        syncMarker: SYNC,
        codec,
      });
      const read = await readWithAvsc(bytes);
      expect(read.codec).toBe(codec);
      expect(read.records.map((r) => ({ ...r }))).toEqual(RECORDS);
    }
  });

  it('splits into several blocks by blockSize, each followed by the sync marker', async () => {
    const many = Array.from({ length: 50 }, (_, i) => ({ id: BigInt(i), name: `n${i}`, ts: 1n, tags: [] }));
    const bytes = encodeAvroContainer({
      schemaJson: RECORD_SCHEMA,
      records: many,
      syncMarker: SYNC,
      blockSize: 64,
    });
    const syncCount = Buffer.from(bytes).toString('hex').split(Buffer.from(SYNC).toString('hex')).length - 1;
    expect(syncCount).toBeGreaterThan(3); // header sync + several blocks
    expect(decodeAvroContainer(bytes).records).toHaveLength(50);
    expect((await readWithAvsc(bytes)).records.map((r) => r.name)).toEqual(many.map((r) => r.name));
  });

  it('writes no data block for zero records', () => {
    const bytes = encodeAvroContainer({ schemaJson: RECORD_SCHEMA, records: [], syncMarker: SYNC });
    expect(Buffer.from(bytes.subarray(bytes.length - 16)).equals(Buffer.from(SYNC))).toBe(true);
    expect(decodeAvroContainer(bytes).records).toEqual([]);
  });

  it('is deterministic for a given sync marker', () => {
    const a = encodeAvroContainer({
      schemaJson: RECORD_SCHEMA,
      records: RECORDS,
      syncMarker: SYNC,
      codec: 'deflate',
    });
    const b = encodeAvroContainer({
      schemaJson: RECORD_SCHEMA,
      records: RECORDS,
      syncMarker: SYNC,
      codec: 'deflate',
    });
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });

  it('rejects bad inputs with typed errors', () => {
    const base = { schemaJson: RECORD_SCHEMA, records: RECORDS, syncMarker: SYNC };
    expectFloe(
      () => encodeAvroContainer({ ...base, syncMarker: new Uint8Array(8) }),
      'DataInvalid',
      /16 bytes/,
    );
    expectFloe(
      () => encodeAvroContainer({ ...base, metadata: { 'avro.x': '1' } }),
      'DataInvalid',
      /reserved/,
    );
    expectFloe(
      () => encodeAvroContainer({ ...base, records: [{ id: 1, name: null, ts: 0n, tags: [] }] }),
      'DataInvalid',
    );
    expectFloe(
      () => encodeAvroContainer({ ...base, records: [{ id: 2n ** 63n, name: null, ts: 0n, tags: [] }] }),
      'DataInvalid',
    );
  });
});

describe('decodeAvroContainer', () => {
  const good = encodeAvroContainer({ schemaJson: RECORD_SCHEMA, records: RECORDS, syncMarker: SYNC });

  it('rejects a bad magic, a truncated file and a corrupted sync marker', () => {
    const badMagic = Uint8Array.from(good);
    badMagic[3] = 2;
    expectFloe(() => decodeAvroContainer(badMagic), 'DataInvalid', /magic/);
    expectFloe(() => decodeAvroContainer(good.subarray(0, good.length - 5)), 'DataInvalid');
    const badSync = Uint8Array.from(good);
    badSync[badSync.length - 1] = badSync[badSync.length - 1]! ^ 0xff;
    expectFloe(() => decodeAvroContainer(badSync), 'DataInvalid', /sync/);
  });

  it('reads a snappy block (raw snappy + big-endian CRC32), as Avro specifies', () => {
    // CRC-32 check value from the CRC catalogue (IEEE, reflected).
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    const text = 'abcabcabcabcX';
    const datum = [text.length * 2, ...ascii(text)]; // Avro string: zig-zag length + UTF-8 (14 bytes)
    // Hand-built snappy: preamble 14; literal "\x1aabc"; copy(len 9, offset 3) that overlaps its own
    // output (→ "abcabcabc"); literal "X".
    const snappy = [0x0e, 0x0c, ...datum.slice(0, 4), 0x15, 0x03, 0x00, ...ascii('X')];
    const withCrc = (crc: number) => [
      ...snappy,
      crc >>> 24,
      (crc >>> 16) & 0xff,
      (crc >>> 8) & 0xff,
      crc & 0xff,
    ];
    // biome-ignore format: hand-assembled byte layout
    const file = (block: number[]) =>
      Uint8Array.from([
        ...[0x4f, 0x62, 0x6a, 0x01, 0x04],
        0x16, ...ascii('avro.schema'), 0x10, ...ascii('"string"'),
        0x14, ...ascii('avro.codec'), 0x0c, ...ascii('snappy'),
        0x00, ...SYNC,
        0x02, block.length * 2, ...block, ...SYNC,
      ]);
    const crc = crc32(Uint8Array.from(datum));
    expect(decodeAvroContainer(file(withCrc(crc))).records).toEqual([text]);
    expectFloe(() => decodeAvroContainer(file(withCrc(crc ^ 1))), 'DataInvalid', /CRC/);
  });

  it('reports unsupported codecs as FeatureUnsupported', () => {
    // biome-ignore format: hand-assembled byte layout
    const f = Uint8Array.from([
      ...[0x4f, 0x62, 0x6a, 0x01, 0x04],
      0x16, ...ascii('avro.schema'), 0x0c, ...ascii('"long"'),
      0x14, ...ascii('avro.codec'), 0x08, ...ascii('lzma'),
      0x00, ...SYNC,
      0x02, 0x02, 0x02, ...SYNC,
    ]);
    expectFloe(() => decodeAvroContainer(f), 'FeatureUnsupported', /lzma/);
  });
});
