/**
 * Data-file partition paths: Java's `PartitionSpec.partitionToPath` (`URLEncoder.encode(…, UTF_8)`
 * of field name and human value) for every kind of value, and the shortening of segments Java
 * would write too long for a file system or an S3 key.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_PARTITION_PATH_BYTES,
  MAX_SEGMENT_BYTES,
  partitionPathOf,
  urlEncode,
} from '../../../lambdas/src/iceberg/partition-path.ts';
import type { PartitionField, PartitionSpec } from '../../../lambdas/src/iceberg/partition-spec.ts';
import { partitionPath, partitionTuple } from '../../../lambdas/src/iceberg/partitioning.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import { field, T } from '../../../lambdas/src/iceberg/types.ts';

const schema: Schema = {
  schemaId: 0,
  fields: [
    field(1, 's', T.string),
    field(2, 'ts', T.timestamptz),
    field(3, 'lts', T.timestamp),
    field(4, 'd', T.date),
    field(5, 'n', T.long),
    field(6, 'x', T.double),
  ],
};
const pf = (sourceId: number, fieldId: number, name: string, transform: string): PartitionField => ({
  'source-id': sourceId,
  'field-id': fieldId,
  name,
  transform,
});
const one = (f: PartitionField): PartitionSpec => ({ 'spec-id': 1, fields: [f] });

/** Path of one row under a one-field spec, through the real transform. */
function pathOf(f: PartitionField, row: Record<string, unknown>): string {
  const spec = one(f);
  return partitionPath(spec, schema, partitionTuple(spec, schema, row as never));
}

// 2017-11-16T22:31:08Z, the spec's example instant, in microseconds.
const TS = BigInt(Date.parse('2017-11-16T22:31:08Z')) * 1000n;

describe('partition paths escape values as Java does (URLEncoder, UTF-8)', () => {
  // Expected strings written by hand from Java's rule: [A-Za-z0-9.*_-] kept, space '+', every
  // other UTF-8 byte %XX in upper case; a null value is the text 'null'.
  const golden: [string | null, string][] = [
    ['a/b', 's=a%2Fb'],
    ['a b', 's=a+b'],
    ['a+b', 's=a%2Bb'],
    ['%', 's=%25'],
    ['100%2F', 's=100%252F'],
    ['é', 's=%C3%A9'],
    ['東京', 's=%E6%9D%B1%E4%BA%AC'],
    ['😀', 's=%F0%9F%98%80'],
    ['', 's='],
    [null, 's=null'],
    ['null', 's=null'],
    ['=?#&\\', 's=%3D%3F%23%26%5C'],
    ['.*-_~', 's=.*-_%7E'],
    ["!'()", 's=%21%27%28%29'],
    ['\u0000\n\t\u001f\u007f', 's=%00%0A%09%1F%7F'],
    ['..', 's=..'],
    ['/../x', 's=%2F..%2Fx'],
    // Java encodes a lone surrogate as '?' (UTF-8 replacement of String.getBytes).
    ['\ud800x', 's=%3Fx'],
  ];
  for (const [value, want] of golden) {
    it(`identity ${JSON.stringify(value)} → ${want}`, () => {
      expect(pathOf(pf(1, 1000, 's', 'identity'), { s: value })).toBe(want);
    });
  }

  it('escapes the field name too (Java ≥ 1.0)', () => {
    expect(pathOf(pf(1, 1000, 'na me/x=', 'identity'), { s: 'v' })).toBe('na+me%2Fx%3D=v');
  });

  it('renders transform results in their human form before escaping', () => {
    expect(pathOf(pf(2, 1000, 'ts_day', 'day'), { ts: TS })).toBe('ts_day=2017-11-16');
    expect(pathOf(pf(2, 1000, 'ts_hour', 'hour'), { ts: TS })).toBe('ts_hour=2017-11-16-22');
    expect(pathOf(pf(2, 1000, 'ts_month', 'month'), { ts: TS })).toBe('ts_month=2017-11');
    expect(pathOf(pf(2, 1000, 'ts_year', 'year'), { ts: TS })).toBe('ts_year=2017');
    expect(pathOf(pf(2, 1000, 'ts', 'identity'), { ts: TS })).toBe('ts=2017-11-16T22%3A31%3A08%2B00%3A00');
    expect(pathOf(pf(2, 1000, 'ts', 'identity'), { ts: TS + 123_456n })).toBe(
      'ts=2017-11-16T22%3A31%3A08.123456%2B00%3A00',
    );
    expect(pathOf(pf(3, 1000, 'lts', 'identity'), { lts: TS })).toBe('lts=2017-11-16T22%3A31%3A08');
    expect(pathOf(pf(4, 1000, 'd', 'identity'), { d: 17486 })).toBe('d=2017-11-16');
    expect(pathOf(pf(4, 1000, 'd_day', 'day'), { d: -1 })).toBe('d_day=1969-12-31');
    expect(pathOf(pf(2, 1000, 'ts_day', 'day'), { ts: null })).toBe('ts_day=null');
  });

  it('escapes truncate results (code points) and renders buckets and numbers in decimal', () => {
    expect(pathOf(pf(1, 1000, 's_trunc', 'truncate[3]'), { s: 'eu/west' })).toBe('s_trunc=eu%2F');
    expect(pathOf(pf(1, 1000, 's_trunc', 'truncate[2]'), { s: '😀é x' })).toBe('s_trunc=%F0%9F%98%80%C3%A9');
    // bucket[16]('iceberg') = murmur3('iceberg') 1210000089 mod 16 (spec §"Bucket Transform Details").
    expect(pathOf(pf(1, 1000, 's_bucket', 'bucket[16]'), { s: 'iceberg' })).toBe('s_bucket=9');
    expect(pathOf(pf(5, 1000, 'n', 'identity'), { n: -7n })).toBe('n=-7');
    expect(pathOf(pf(5, 1000, 'n_trunc', 'truncate[10]'), { n: -7n })).toBe('n_trunc=-10');
    expect(pathOf(pf(6, 1000, 'x', 'identity'), { x: -2.5 })).toBe('x=-2.5');
  });

  it('joins segments with / in spec order', () => {
    const spec: PartitionSpec = {
      'spec-id': 1,
      fields: [pf(1, 1000, 's', 'identity'), pf(2, 1001, 'ts_day', 'day'), pf(5, 1002, 'n', 'identity')],
    };
    expect(partitionPath(spec, schema, ['a/b', 17486, null])).toBe('s=a%2Fb/ts_day=2017-11-16/n=null');
  });

  it('urlEncode output uses only [A-Za-z0-9.*_+%-] and decodes back (never a raw / or ~)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        const e = urlEncode(s);
        expect(e).toMatch(/^[A-Za-z0-9.*_+%-]*$/);
        expect(decodeURIComponent(e.replace(/\+/g, ' '))).toBe(s);
      }),
    );
  });
});

describe('overlong segments', () => {
  const SUFFIX = /~[0-9a-f]{16}$/;
  const path1 = (value: string) => pathOf(pf(1, 1000, 's', 'identity'), { s: value });

  it('keeps a segment of exactly MAX_SEGMENT_BYTES whole and shortens one byte more', () => {
    const exact = 'x'.repeat(MAX_SEGMENT_BYTES - 2); // 's=' + value
    expect(path1(exact)).toBe(`s=${exact}`);
    const over = path1(`${exact}x`);
    expect(over).toMatch(SUFFIX);
    expect(over.length).toBeLessThanOrEqual(MAX_SEGMENT_BYTES);
  });

  it('shortens a 1,000-character value to a prefix plus a hash, under 255 bytes and unique', () => {
    const a = 'x'.repeat(1000);
    const b = `${'x'.repeat(999)}y`; // same 999-character prefix
    const pa = path1(a);
    const pb = path1(b);
    for (const p of [pa, pb]) {
      expect(p.length).toBeLessThanOrEqual(MAX_SEGMENT_BYTES);
      expect(p.startsWith(`s=${'x'.repeat(200)}`)).toBe(true);
      expect(p).toMatch(SUFFIX);
    }
    expect(pa).not.toBe(pb);
    expect(path1(a)).toBe(pa); // deterministic: every writer names the partition alike
  });

  it('cuts between whole characters: the kept prefix decodes to a prefix of the value', () => {
    for (const ch of ['é', '😀', '/', ' ', '%', '\u0001']) {
      const value = `${ch}`.repeat(1000);
      const p = path1(value);
      expect(p.length).toBeLessThanOrEqual(MAX_SEGMENT_BYTES);
      const head = p.replace(SUFFIX, '').slice('s='.length);
      const decoded = decodeURIComponent(head.replace(/\+/g, ' ')); // throws on a split %XX run
      expect(decoded.length).toBeGreaterThan(0);
      expect(value.startsWith(decoded)).toBe(true);
      // The longest such prefix: one more character would not leave room for '~' and the hash.
      expect('s='.length + urlEncode(decoded + ch).length + 17).toBeGreaterThan(MAX_SEGMENT_BYTES);
    }
  });

  it('shortens an overlong field name as well', () => {
    const p = pathOf(pf(1, 1000, 'n'.repeat(400), 'identity'), { s: 'v' });
    expect(p.length).toBeLessThanOrEqual(MAX_SEGMENT_BYTES);
    expect(p).toMatch(SUFFIX);
  });

  it('keeps the whole path within MAX_PARTITION_PATH_BYTES; short segments stay whole', () => {
    const long = (c: string) => c.repeat(1000);
    const path = partitionPathOf([
      ['a', long('a')],
      ['b', long('é')],
      ['c', long('/')],
      ['d', long('😀')],
      ['day', '2025-03-14'],
    ]);
    const segments = path.split('/');
    expect(segments).toHaveLength(5);
    expect(path.length).toBeLessThanOrEqual(MAX_PARTITION_PATH_BYTES);
    expect(segments[4]).toBe('day=2025-03-14');
    for (const s of segments.slice(0, 4)) expect(s).toMatch(SUFFIX);
    // Two long values get the whole-segment limit when the budget allows.
    const two = partitionPathOf([
      ['a', long('a')],
      ['b', long('b')],
    ]).split('/');
    expect(two.map((s) => s.length)).toEqual([MAX_SEGMENT_BYTES, MAX_SEGMENT_BYTES]);
  });

  it('never shortens what Java would write in full within the limits', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (v) => {
        fc.pre('s='.length + urlEncode(v).length <= MAX_SEGMENT_BYTES);
        expect(partitionPathOf([['s', v]])).toBe(`s=${urlEncode(v)}`);
      }),
    );
  });
});
