import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { daysFromCivil } from '../../../lambdas/src/iceberg/conversions.ts';
import {
  applyTransform,
  canTransform,
  defaultPartitionFieldName,
  parseTransform,
  partitionValueToPath,
  type Transform,
  transformResultType,
  transformToString,
} from '../../../lambdas/src/iceberg/transform.ts';
import { decimal, fixed, list, type PrimitiveType, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import type { IcebergValue } from '../../../lambdas/src/iceberg/values.ts';

const bytes = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));
const us = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

/** bucket[N] = (hash & 0x7FFFFFFF) % N for several N, including one near 2^31. */
const bucketOf = (source: PrimitiveType, v: IcebergValue, n: number) =>
  applyTransform({ kind: 'bucket', n }, source, v);
const expectBucket = (source: PrimitiveType, v: IcebergValue, hash: number) => {
  for (const n of [1, 7, 16, 1000, 2147483647]) expect(bucketOf(source, v, n)).toBe((hash & 0x7fffffff) % n);
};

describe('parseTransform / transformToString', () => {
  it('parses every known transform and round-trips', () => {
    const cases: [string, Transform][] = [
      ['identity', { kind: 'identity' }],
      ['bucket[16]', { kind: 'bucket', n: 16 }],
      ['truncate[4]', { kind: 'truncate', width: 4 }],
      ['year', { kind: 'year' }],
      ['month', { kind: 'month' }],
      ['day', { kind: 'day' }],
      ['hour', { kind: 'hour' }],
      ['void', { kind: 'void' }],
    ];
    for (const [s, t] of cases) {
      expect(parseTransform(s)).toEqual(t);
      expect(transformToString(t)).toBe(s);
    }
    expect(parseTransform(' Bucket[ 8 ] ')).toEqual({ kind: 'bucket', n: 8 });
    expect(parseTransform('zorder')).toEqual({ kind: 'unknown', text: 'zorder' });
    expect(transformToString(parseTransform('zorder'))).toBe('zorder');
  });

  it('rejects a zero parameter', () => {
    try {
      parseTransform('bucket[0]');
      expect.unreachable();
    } catch (e) {
      expect(isFloeError(e, ErrorKind.DataInvalid)).toBe(true);
      expect((e as Error).message).toContain('bucket[0]');
    }
  });
});

describe('canTransform / transformResultType', () => {
  it('follows the spec table', () => {
    const b: Transform = { kind: 'bucket', n: 4 };
    const tr: Transform = { kind: 'truncate', width: 4 };
    expect(canTransform(b, T.uuid)).toBe(true);
    expect(canTransform(b, T.float)).toBe(false);
    expect(canTransform(b, T.boolean)).toBe(false);
    expect(canTransform(tr, T.string)).toBe(true);
    expect(canTransform(tr, T.uuid)).toBe(false);
    expect(canTransform(tr, fixed(4))).toBe(false);
    expect(canTransform({ kind: 'day' }, T.date)).toBe(true);
    expect(canTransform({ kind: 'hour' }, T.date)).toBe(false);
    expect(canTransform({ kind: 'hour' }, T.timestamptz_ns)).toBe(true);
    expect(canTransform({ kind: 'year' }, T.long)).toBe(false);
    expect(canTransform({ kind: 'identity' }, T.double)).toBe(true);
    expect(canTransform({ kind: 'identity' }, struct([]))).toBe(false);
    expect(canTransform({ kind: 'identity' }, list(3, T.int))).toBe(false);
    expect(canTransform({ kind: 'void' }, list(3, T.int))).toBe(true);
    expect(canTransform({ kind: 'unknown', text: 'x' }, T.int)).toBe(false);
  });

  it('reports result types', () => {
    expect(transformResultType({ kind: 'day' }, T.timestamp)).toEqual(T.date);
    expect(transformResultType({ kind: 'year' }, T.date)).toEqual(T.int);
    expect(transformResultType({ kind: 'hour' }, T.timestamp)).toEqual(T.int);
    expect(transformResultType({ kind: 'bucket', n: 2 }, T.string)).toEqual(T.int);
    expect(transformResultType({ kind: 'truncate', width: 2 }, decimal(9, 2))).toEqual(decimal(9, 2));
    expect(transformResultType({ kind: 'identity' }, T.uuid)).toEqual(T.uuid);
    expect(transformResultType({ kind: 'void' }, T.long)).toEqual(T.long);
  });
});

describe('bucket (spec test vectors)', () => {
  it('hashes ints, longs, dates, times and timestamps as 8-byte longs', () => {
    expectBucket(T.int, 34, 2017239379);
    expectBucket(T.long, 34n, 2017239379);
    expectBucket(T.date, daysFromCivil(2017, 11, 16), -653330422);
    expectBucket(T.time, (22n * 3600n + 31n * 60n + 8n) * 1_000_000n, -662762989);
    expectBucket(T.timestamp, us('2017-11-16T22:31:08Z'), -2047944441);
    expectBucket(T.timestamp, us('2017-11-16T22:31:08Z') + 1n, -1207196810);
    expectBucket(T.timestamptz, us('2017-11-16T14:31:08-08:00'), -2047944441);
    expectBucket(T.timestamptz, us('2017-11-16T14:31:08-08:00') + 1n, -1207196810);
    expectBucket(T.timestamp_ns, (us('2017-11-16T22:31:08Z') + 1n) * 1000n + 1n, -1207196810);
    expectBucket(T.timestamptz_ns, us('2017-11-16T22:31:08Z') * 1000n, -2047944441);
  });

  it('hashes decimals, strings, uuids, fixed and binary', () => {
    expectBucket(decimal(9, 2), 1420n, -500754589);
    expectBucket(T.string, 'iceberg', 1210000089);
    expectBucket(T.uuid, 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 1488055340);
    expectBucket(fixed(4), bytes('00010203'), -188683207);
    expectBucket(T.binary, bytes('00010203'), -188683207);
  });

  it('int and long bucket identically (promotion safe) and stay in [0, N)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -2147483648, max: 2147483647 }),
        fc.integer({ min: 1, max: 1 << 20 }),
        (v, n) => {
          const b = bucketOf(T.int, v, n) as number;
          expect(b).toBe(bucketOf(T.long, BigInt(v), n));
          expect(Number.isInteger(b) && b >= 0 && b < n).toBe(true);
        },
      ),
    );
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 100 }), (s, n) => {
        const b = bucketOf(T.string, s, n) as number;
        expect(b >= 0 && b < n).toBe(true);
      }),
    );
  });

  it('rejects non-bucketable types', () => {
    expect(() => bucketOf(T.double, 1, 4)).toThrow(/bucket\[4\].*double/);
  });
});

describe('truncate', () => {
  const tr = (w: number): Transform => ({ kind: 'truncate', width: w });
  it('matches the spec examples', () => {
    expect(applyTransform(tr(10), T.int, 1)).toBe(0);
    expect(applyTransform(tr(10), T.int, -1)).toBe(-10);
    expect(applyTransform(tr(10), T.int, 10)).toBe(10);
    expect(applyTransform(tr(10), T.long, 1n)).toBe(0n);
    expect(applyTransform(tr(10), T.long, -1n)).toBe(-10n);
    expect(applyTransform(tr(50), decimal(9, 2), 1065n)).toBe(1050n);
    expect(applyTransform(tr(10), decimal(9, 2), -5n)).toBe(-10n);
    expect(applyTransform(tr(3), T.string, 'iceberg')).toBe('ice');
    expect(applyTransform(tr(2), T.string, '😀😁😂')).toBe('😀😁');
    expect(applyTransform(tr(3), T.string, 'ab')).toBe('ab');
    expect(applyTransform(tr(3), T.binary, bytes('0102030405'))).toEqual(bytes('010203'));
  });

  it('results are ≤ value, within W, and multiples of W', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -2147483648 + 1000, max: 2147483647 }),
        fc.integer({ min: 1, max: 1000 }),
        (v, w) => {
          const r = applyTransform(tr(w), T.int, v) as number;
          expect(r).toBeLessThanOrEqual(v);
          expect(v - r).toBeLessThan(w);
          expect(Math.abs(r % w)).toBe(0);
        },
      ),
    );
    fc.assert(
      fc.property(fc.bigInt(-(1n << 62n), 1n << 62n), fc.bigInt(1n, 1n << 40n), (v, w) => {
        const r = applyTransform(tr(Number(w)), T.long, v) as bigint;
        expect(r <= v && v - r < w && r % w === 0n).toBe(true);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.integer({ min: 1, max: 8 }), (s, w) => {
        const r = applyTransform(tr(w), T.string, s) as string;
        expect(s.startsWith(r)).toBe(true);
        expect([...r].length).toBe(Math.min(w, [...s].length));
      }),
    );
  });

  // Within W of the minimum the spec's formula overflows; Java's TruncateInteger/TruncateLong
  // wrap (int / long arithmetic), and so must we, or Floe's partition values would differ from
  // Java's for the same row (and, before, the throw failed the whole table).
  it('wraps like Java at the minimum int and long', () => {
    expect(applyTransform(tr(10), T.int, -2147483648)).toBe(2147483646);
    expect(applyTransform(tr(10), T.long, -(2n ** 63n))).toBe(2n ** 63n - 2n);
    expect(applyTransform(tr(10), T.long, -(2n ** 63n) + 8n)).toBe(-(2n ** 63n) + 8n); // a multiple of 10: no overflow
  });
});

describe('time transforms', () => {
  const year: Transform = { kind: 'year' };
  const month: Transform = { kind: 'month' };
  const day: Transform = { kind: 'day' };
  const hour: Transform = { kind: 'hour' };
  const ts = us('2017-11-16T22:31:08Z');

  it('counts units since the epoch', () => {
    expect(applyTransform(year, T.timestamp, ts)).toBe(47);
    expect(applyTransform(month, T.timestamp, ts)).toBe(47 * 12 + 10);
    expect(applyTransform(day, T.timestamp, ts)).toBe(17486);
    expect(applyTransform(hour, T.timestamp, ts)).toBe(17486 * 24 + 22);
    expect(applyTransform(day, T.date, 17486)).toBe(17486);
    expect(applyTransform(month, T.date, 17486)).toBe(574);
    expect(applyTransform(hour, T.timestamp_ns, ts * 1000n + 999n)).toBe(17486 * 24 + 22);
    expect(applyTransform(day, T.timestamptz_ns, ts * 1000n)).toBe(17486);
  });

  it('uses floor semantics before 1970', () => {
    for (const t of [year, month, day, hour]) expect(applyTransform(t, T.timestamp, -1n)).toBe(-1);
    for (const t of [year, month, day, hour]) expect(applyTransform(t, T.timestamp_ns, -1n)).toBe(-1);
    expect(applyTransform(year, T.date, -1)).toBe(-1);
    expect(applyTransform(month, T.date, -1)).toBe(-1);
    expect(applyTransform(year, T.date, -365)).toBe(-1); // 1969-01-01
    expect(applyTransform(month, T.date, -365)).toBe(-12);
    expect(applyTransform(year, T.date, -366)).toBe(-2); // 1968-12-31
    expect(applyTransform(month, T.date, -366)).toBe(-13);
    expect(applyTransform(hour, T.timestamp, -3_600_000_001n)).toBe(-2);
  });

  it('agrees with Date for arbitrary timestamps', () => {
    fc.assert(
      fc.property(fc.bigInt(-(10n ** 17n), 10n ** 17n), (micros) => {
        const d = new Date(Number(floor(micros, 1000n)));
        expect(applyTransform(year, T.timestamptz, micros)).toBe(d.getUTCFullYear() - 1970);
        expect(applyTransform(month, T.timestamptz, micros)).toBe(
          (d.getUTCFullYear() - 1970) * 12 + d.getUTCMonth(),
        );
        expect(applyTransform(day, T.timestamptz, micros)).toBe(Math.floor(d.getTime() / 86_400_000));
        expect(applyTransform(hour, T.timestamptz, micros)).toBe(Math.floor(d.getTime() / 3_600_000));
      }),
    );
  });
});

function floor(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

describe('identity / void / null', () => {
  it('maps null to null and void to null', () => {
    expect(applyTransform({ kind: 'bucket', n: 4 }, T.int, null)).toBeNull();
    expect(applyTransform({ kind: 'day' }, T.date, undefined)).toBeNull();
    expect(applyTransform({ kind: 'void' }, T.string, 'x')).toBeNull();
    expect(applyTransform({ kind: 'identity' }, T.string, 'x')).toBe('x');
  });
  it('refuses a transform that does not apply and unknown transforms', () => {
    expect(() => applyTransform({ kind: 'hour' }, T.date, 1)).toThrow(/hour.*date/);
    try {
      applyTransform({ kind: 'unknown', text: 'zorder' }, T.int, 1);
      expect.unreachable();
    } catch (e) {
      expect(isFloeError(e)).toBe(true);
    }
  });
});

describe('partitionValueToPath', () => {
  it('uses the human forms', () => {
    expect(partitionValueToPath({ kind: 'year' }, T.int, 47)).toBe('2017');
    expect(partitionValueToPath({ kind: 'month' }, T.int, 574)).toBe('2017-11');
    expect(partitionValueToPath({ kind: 'day' }, T.date, 17486)).toBe('2017-11-16');
    expect(partitionValueToPath({ kind: 'hour' }, T.int, 17486 * 24 + 22)).toBe('2017-11-16-22');
    expect(partitionValueToPath({ kind: 'year' }, T.int, -1)).toBe('1969');
    expect(partitionValueToPath({ kind: 'month' }, T.int, -1)).toBe('1969-12');
    expect(partitionValueToPath({ kind: 'month' }, T.int, -13)).toBe('1968-12');
    expect(partitionValueToPath({ kind: 'hour' }, T.int, -1)).toBe('1969-12-31-23');
    expect(partitionValueToPath({ kind: 'bucket', n: 16 }, T.int, 5)).toBe('5');
    expect(partitionValueToPath({ kind: 'day' }, T.date, null)).toBe('null');
    expect(partitionValueToPath({ kind: 'identity' }, T.string, 'a b')).toBe('a b');
    expect(partitionValueToPath({ kind: 'identity' }, T.long, 12n)).toBe('12');
    expect(partitionValueToPath({ kind: 'identity' }, decimal(9, 2), 1420n)).toBe('14.20');
    expect(partitionValueToPath({ kind: 'identity' }, T.timestamp, us('2017-11-16T22:31:08Z'))).toBe(
      '2017-11-16T22:31:08',
    );
    expect(partitionValueToPath({ kind: 'identity' }, T.timestamptz, us('2017-11-16T22:31:08.5Z'))).toBe(
      '2017-11-16T22:31:08.500+00:00',
    );
    expect(partitionValueToPath({ kind: 'identity' }, T.timestamp, -1n)).toBe('1969-12-31T23:59:59.999999');
    expect(partitionValueToPath({ kind: 'identity' }, T.binary, bytes('00010203'))).toBe('AAECAw==');
    expect(partitionValueToPath({ kind: 'identity' }, T.double, 1)).toBe('1.0');
  });
});

describe('defaultPartitionFieldName', () => {
  it('uses Java names', () => {
    expect(defaultPartitionFieldName({ kind: 'identity' }, 'id')).toBe('id');
    expect(defaultPartitionFieldName({ kind: 'bucket', n: 16 }, 'id')).toBe('id_bucket');
    expect(defaultPartitionFieldName({ kind: 'truncate', width: 4 }, 'name')).toBe('name_trunc');
    expect(defaultPartitionFieldName({ kind: 'year' }, 'ts')).toBe('ts_year');
    expect(defaultPartitionFieldName({ kind: 'month' }, 'ts')).toBe('ts_month');
    expect(defaultPartitionFieldName({ kind: 'day' }, 'ts')).toBe('ts_day');
    expect(defaultPartitionFieldName({ kind: 'hour' }, 'ts')).toBe('ts_hour');
    expect(defaultPartitionFieldName({ kind: 'void' }, 'ts')).toBe('ts_null');
  });
});
