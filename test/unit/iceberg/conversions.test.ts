import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import {
  civilFromDays,
  compareBytes,
  compareStrings,
  compareValues,
  daysFromCivil,
  decimalFromBytes,
  decimalToBytes,
  formatDate,
  fromBinary,
  fromJsonSingleValue,
  toBinary,
  toJsonSingleValue,
  truncateLowerBound,
  truncateUpperBound,
} from '../../../lambdas/src/iceberg/conversions.ts';
import { decimal, fixed, type PrimitiveType, T } from '../../../lambdas/src/iceberg/types.ts';
import type { IcebergValue } from '../../../lambdas/src/iceberg/values.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const bytes = (h: string) => Uint8Array.from(Buffer.from(h.replace(/\s/g, ''), 'hex'));

const long = fc.bigInt(-(1n << 63n), (1n << 63n) - 1n);
const int = fc.integer({ min: -2147483648, max: 2147483647 });
const uuid = fc.uuid().map((u) => u.toLowerCase());

/** Every primitive type with an arbitrary of its in-memory values. */
const TYPED: [PrimitiveType, fc.Arbitrary<IcebergValue>][] = [
  [T.boolean, fc.boolean()],
  [T.int, int],
  [T.long, long],
  [T.float, fc.float({ noNaN: true })],
  [T.double, fc.double({ noNaN: true })],
  [T.date, fc.integer({ min: -1_000_000, max: 2_000_000 })],
  [T.time, fc.bigInt(0n, 86_400_000_000n - 1n)],
  [T.timestamp, long],
  [T.timestamptz, long],
  [T.timestamp_ns, long],
  [T.timestamptz_ns, long],
  [T.string, fc.string({ unit: 'grapheme' })],
  [T.uuid, uuid],
  [fixed(5), fc.uint8Array({ minLength: 5, maxLength: 5 })],
  [T.binary, fc.uint8Array()],
  [decimal(9, 2), fc.bigInt(-(10n ** 9n) + 1n, 10n ** 9n - 1n)],
  [decimal(38, 10), fc.bigInt(-(10n ** 38n) + 1n, 10n ** 38n - 1n)],
];

function expectFloeError(fn: () => unknown, kind: ErrorKind, text?: string) {
  try {
    fn();
  } catch (e) {
    expect(isFloeError(e, kind)).toBe(true);
    if (text) expect((e as Error).message).toContain(text);
    return;
  }
  throw new Error('expected a FloeError');
}

describe('toBinary / fromBinary (Appendix D)', () => {
  it('encodes the spec examples', () => {
    expect(hex(toBinary(T.boolean, true))).toBe('01');
    expect(hex(toBinary(T.boolean, false))).toBe('00');
    expect(hex(toBinary(T.int, 1))).toBe('01000000');
    expect(hex(toBinary(T.int, -2))).toBe('feffffff');
    expect(hex(toBinary(T.date, 17486))).toBe('4e440000');
    expect(hex(toBinary(T.long, 1n))).toBe('0100000000000000');
    expect(hex(toBinary(T.long, -1n))).toBe('ffffffffffffffff');
    expect(hex(toBinary(T.timestamp, 1510871468000000n))).toBe('00c3262d215e0500');
    expect(hex(toBinary(T.float, 1))).toBe('0000803f');
    expect(hex(toBinary(T.double, 1))).toBe('000000000000f03f');
    expect(hex(toBinary(T.string, 'iceberg'))).toBe(hex(Buffer.from('iceberg')));
    expect(hex(toBinary(T.string, 'é😀'))).toBe('c3a9f09f9880');
    expect(hex(toBinary(T.uuid, 'f79c3e09-677c-4bbd-a479-3f349cb785e7'))).toBe(
      'f79c3e09677c4bbda4793f349cb785e7',
    );
    expect(hex(toBinary(decimal(4, 2), 1420n))).toBe('058c');
    expect(hex(toBinary(fixed(3), bytes('0a0b0c')))).toBe('0a0b0c');
  });

  it('encodes decimals as minimal two-s complement big-endian', () => {
    expect(hex(decimalToBytes(0n))).toBe('00');
    expect(hex(decimalToBytes(127n))).toBe('7f');
    expect(hex(decimalToBytes(128n))).toBe('0080');
    expect(hex(decimalToBytes(-1n))).toBe('ff');
    expect(hex(decimalToBytes(-128n))).toBe('80');
    expect(hex(decimalToBytes(-129n))).toBe('ff7f');
    expect(hex(decimalToBytes(-1420n))).toBe('fa74');
    expect(decimalFromBytes(bytes('ff7f'))).toBe(-129n);
    expect(decimalFromBytes(bytes('00000080'))).toBe(128n); // padded input still decodes
  });

  it('applies the promotion rule when decoding short values', () => {
    expect(fromBinary(T.long, toBinary(T.int, -5))).toBe(-5n);
    expect(fromBinary(T.double, toBinary(T.float, 1.5))).toBe(1.5);
    expect(fromBinary(T.timestamp, toBinary(T.date, 1))).toBe(86_400_000_000n);
    expect(fromBinary(T.timestamptz, toBinary(T.date, -1))).toBe(-86_400_000_000n);
    expect(fromBinary(T.timestamp_ns, toBinary(T.date, 2))).toBe(2n * 86_400_000_000_000n);
    expect(fromBinary(decimal(20, 2), bytes('058c'))).toBe(1420n);
  });

  it('rejects wrong lengths and wrong value shapes, naming the type', () => {
    expectFloeError(() => fromBinary(T.int, bytes('0100')), ErrorKind.DataInvalid, 'int');
    expectFloeError(() => fromBinary(T.time, bytes('01000000')), ErrorKind.DataInvalid, 'time');
    expectFloeError(() => fromBinary(T.uuid, bytes('01')), ErrorKind.DataInvalid, 'uuid');
    expectFloeError(() => fromBinary(fixed(2), bytes('010203')), ErrorKind.DataInvalid, 'fixed[2]');
    expectFloeError(() => fromBinary(T.string, bytes('ff')), ErrorKind.DataInvalid, 'UTF-8');
    expectFloeError(() => toBinary(T.int, 2 ** 31), ErrorKind.DataInvalid, 'int');
    expectFloeError(() => toBinary(T.int, 1.5), ErrorKind.DataInvalid);
    expectFloeError(() => toBinary(T.long, 1.5), ErrorKind.DataInvalid, 'long');
    expectFloeError(() => toBinary(T.long, 1n << 63n), ErrorKind.DataInvalid, 'range');
    expectFloeError(() => toBinary(decimal(3, 1), 1000n), ErrorKind.DataInvalid, 'precision 3');
    expectFloeError(() => toBinary(fixed(2), bytes('01')), ErrorKind.DataInvalid, 'fixed[2]');
    expectFloeError(() => toBinary(T.uuid, 'not-a-uuid'), ErrorKind.DataInvalid, 'uuid');
    expectFloeError(() => toBinary(T.string, null), ErrorKind.DataInvalid, 'null');
    expectFloeError(() => toBinary(T.unknown, 1), ErrorKind.FeatureUnsupported);
  });

  it('accepts safe-integer numbers for long types', () => {
    expect(hex(toBinary(T.long, 34))).toBe(hex(toBinary(T.long, 34n)));
  });

  for (const [type, arb] of TYPED) {
    it(`round-trips ${JSON.stringify(type)}`, () => {
      fc.assert(
        fc.property(arb, (v) => {
          const back = fromBinary(type, toBinary(type, v));
          if (type.kind === 'float') expect(back).toBe(Math.fround(v as number));
          else expect(back).toEqual(v);
        }),
      );
    });
  }

  it('decimal bytes are minimal and keep the sign', () => {
    fc.assert(
      fc.property(fc.bigInt(-(10n ** 38n), 10n ** 38n), (v) => {
        const b = decimalToBytes(v);
        expect((b[0]! & 0x80) !== 0).toBe(v < 0n);
        // minimal: dropping the first byte would change the value
        if (b.length > 1) expect(decimalFromBytes(b.subarray(1))).not.toBe(v);
      }),
    );
  });
});

describe('bound truncation', () => {
  it('truncates strings by code points', () => {
    expect(truncateLowerBound(T.string, 'abcdef', 3)).toBe('abc');
    expect(truncateLowerBound(T.string, 'abc', 3)).toBe('abc');
    expect(truncateLowerBound(T.string, '😀😁😂😃', 2)).toBe('😀😁');
    expect(truncateUpperBound(T.string, 'abcdef', 3)).toBe('abd');
    expect(truncateUpperBound(T.string, 'abc', 3)).toBe('abc');
    expect(truncateUpperBound(T.string, '😀😁😂😃', 2)).toBe('😀😂');
  });

  it('skips surrogates and carries past the maximum code point', () => {
    expect(truncateUpperBound(T.string, 'a\ud7ffz', 2)).toBe('a\ue000');
    expect(truncateUpperBound(T.string, 'a\u{10ffff}z', 2)).toBe('b');
    expect(truncateUpperBound(T.string, '\u{10ffff}\u{10ffff}z', 2)).toBeUndefined();
    // a lone surrogate is stored as U+FFFD, so the bound must exceed that
    const hi = truncateUpperBound(T.string, 'a\ud800zz', 2) as string;
    expect(compareBytes(toBinary(T.string, hi), toBinary(T.string, 'a\ud800zz'))).toBe(1);
  });

  it('truncates binary by bytes and increments the last byte below 0xFF', () => {
    expect(hex(truncateLowerBound(T.binary, bytes('01020304'), 2) as Uint8Array)).toBe('0102');
    expect(hex(truncateUpperBound(T.binary, bytes('01020304'), 2) as Uint8Array)).toBe('0103');
    expect(hex(truncateUpperBound(T.binary, bytes('01ffff'), 2) as Uint8Array)).toBe('02');
    expect(truncateUpperBound(T.binary, bytes('ffff00'), 2)).toBeUndefined();
    expect(hex(truncateUpperBound(T.binary, bytes('ffff'), 2) as Uint8Array)).toBe('ffff');
  });

  it('leaves other types alone and defaults to 16', () => {
    expect(truncateLowerBound(T.long, 5n)).toBe(5n);
    expect(truncateUpperBound(T.int, 5)).toBe(5);
    expect(truncateLowerBound(T.string, 'x'.repeat(40))).toBe('x'.repeat(16));
    expect(truncateUpperBound(T.string, 'x'.repeat(40))).toBe(`${'x'.repeat(15)}y`);
    expectFloeError(() => truncateLowerBound(T.string, 'x', 0), ErrorKind.ConfigInvalid, 'width');
  });

  it('lower bound ≤ value ≤ upper bound (strings, by UTF-8 bytes)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' })), { minLength: 1 }),
        fc.integer({ min: 1, max: 6 }),
        (vs, w) => {
          for (const v of vs) {
            const lo = truncateLowerBound(T.string, v, w) as string;
            const hi = truncateUpperBound(T.string, v, w);
            expect(compareBytes(toBinary(T.string, lo), toBinary(T.string, v))).toBeLessThanOrEqual(0);
            expect([...lo].length).toBeLessThanOrEqual(w);
            if (hi !== undefined) {
              expect(
                compareBytes(toBinary(T.string, hi as string), toBinary(T.string, v)),
              ).toBeGreaterThanOrEqual(0);
              expect([...(hi as string)].length).toBeLessThanOrEqual(w);
            }
          }
        },
      ),
    );
  });

  it('lower bound ≤ value ≤ upper bound (binary)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), fc.integer({ min: 1, max: 6 }), (v, w) => {
        const lo = truncateLowerBound(T.binary, v, w) as Uint8Array;
        const hi = truncateUpperBound(T.binary, v, w) as Uint8Array | undefined;
        expect(compareBytes(lo, v)).toBeLessThanOrEqual(0);
        expect(lo.length).toBeLessThanOrEqual(w);
        if (hi === undefined) expect(v.subarray(0, w).every((x) => x === 0xff)).toBe(true);
        else {
          expect(compareBytes(hi, v)).toBeGreaterThanOrEqual(0);
          expect(hi.length).toBeLessThanOrEqual(w);
        }
      }),
    );
  });
});

describe('compareValues', () => {
  it('orders strings by code point, not UTF-16 unit', () => {
    // U+FF61 is one UTF-16 unit above the surrogate range; U+1F600 is a surrogate pair.
    expect(compareValues(T.string, '\uff61', '😀')).toBe(-1);
    expect('\uff61' < '😀').toBe(false); // JS order differs
    expect(compareValues(T.string, 'ab', 'abc')).toBe(-1);
    expect(compareValues(T.string, 'b', 'abc')).toBe(1);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareStrings(a, b))).toBe(
          Math.sign(compareBytes(toBinary(T.string, a), toBinary(T.string, b))),
        );
      }),
    );
  });

  it('orders floats with -0 < +0 and numbers/bigints numerically', () => {
    expect(compareValues(T.double, -0, 0)).toBe(-1);
    expect(compareValues(T.double, 0, -0)).toBe(1);
    expect(compareValues(T.float, -1, -0)).toBe(-1);
    expect(compareValues(T.double, Number.NaN, Number.POSITIVE_INFINITY)).toBe(1);
    expect(compareValues(T.long, -(1n << 62n), 3n)).toBe(-1);
    expect(compareValues(decimal(9, 2), 1420n, 1419n)).toBe(1);
    expect(compareValues(T.int, 2, 2)).toBe(0);
    expect(compareValues(T.boolean, false, true)).toBe(-1);
  });

  it('orders bytes unsigned and uuids by their bytes', () => {
    expect(compareValues(T.binary, bytes('80'), bytes('7f'))).toBe(1);
    expect(compareValues(T.binary, bytes('01'), bytes('0100'))).toBe(-1);
    expect(
      compareValues(T.uuid, 'f0000000-0000-0000-0000-000000000000', '10000000-0000-0000-0000-000000000000'),
    ).toBe(1);
  });
});

describe('JSON single values', () => {
  const cases: [PrimitiveType, IcebergValue, unknown][] = [
    [T.boolean, true, true],
    [T.int, 34, 34],
    [T.long, 34n, 34],
    [T.long, 1n << 60n, 1n << 60n],
    [T.double, 1.5, 1.5],
    [decimal(4, 2), 1420n, '14.20'],
    [decimal(4, 2), -5n, '-0.05'],
    [decimal(4, 0), 7n, '7'],
    [T.date, 17486, '2017-11-16'],
    [T.date, -1, '1969-12-31'],
    [T.time, 81068123456n, '22:31:08.123456'],
    [T.timestamp, 1510871468123456n, '2017-11-16T22:31:08.123456'],
    [T.timestamp, -1n, '1969-12-31T23:59:59.999999'],
    [T.timestamptz, 1510871468123456n, '2017-11-16T22:31:08.123456+00:00'],
    [T.timestamp_ns, 1510871468123456789n, '2017-11-16T22:31:08.123456789'],
    [T.timestamptz_ns, 1510871468123456789n, '2017-11-16T22:31:08.123456789+00:00'],
    [T.string, 'iceberg', 'iceberg'],
    [T.uuid, 'f79c3e09-677c-4bbd-a479-3f349cb785e7', 'f79c3e09-677c-4bbd-a479-3f349cb785e7'],
    [fixed(4), bytes('000102ff'), '000102ff'],
    [T.binary, bytes('000102ff'), '000102ff'],
  ];
  for (const [type, value, json] of cases) {
    it(`${JSON.stringify(type)} ${String(value)} ⇔ ${String(json)}`, () => {
      expect(toJsonSingleValue(type, value)).toEqual(json);
      expect(fromJsonSingleValue(type, json)).toEqual(value);
    });
  }

  it('parses lenient forms and rejects bad ones', () => {
    expect(fromJsonSingleValue(T.timestamp, '2017-11-16T22:31:08')).toBe(1510871468000000n);
    expect(fromJsonSingleValue(T.timestamp, '2017-11-16T22:31')).toBe(1510871460000000n);
    expect(fromJsonSingleValue(T.uuid, 'F79C3E09-677C-4BBD-A479-3F349CB785E7')).toBe(
      'f79c3e09-677c-4bbd-a479-3f349cb785e7',
    );
    expect(fromJsonSingleValue(T.binary, 'FF')).toEqual(bytes('ff'));
    expect(fromJsonSingleValue(decimal(4, 2), '14.2')).toBe(1420n);
    expect(fromJsonSingleValue(T.long, { isLosslessNumber: true, value: '9007199254740993' })).toBe(
      9007199254740993n,
    );
    expect(fromJsonSingleValue(T.int, null)).toBeNull();
    expectFloeError(
      () => fromJsonSingleValue(T.timestamptz, '2017-11-16T22:31:08Z'),
      ErrorKind.DataInvalid,
      '+00:00',
    );
    expectFloeError(() => fromJsonSingleValue(T.date, '2017-02-30'), ErrorKind.DataInvalid, 'date');
    expectFloeError(() => fromJsonSingleValue(decimal(4, 2), '1.234'), ErrorKind.DataInvalid, 'scale');
    expectFloeError(
      () => fromJsonSingleValue(T.timestamp, '2017-11-16T22:31:08.1234567'),
      ErrorKind.DataInvalid,
    );
    expectFloeError(() => fromJsonSingleValue(T.int, '3'), ErrorKind.DataInvalid, 'int');
  });

  for (const [type, arb] of TYPED) {
    it(`round-trips ${JSON.stringify(type)} through JSON text`, () => {
      fc.assert(
        fc.property(arb, (v) => {
          const j = toJsonSingleValue(type, v);
          // bigints only appear for longs beyond 2^53 (a lossless serializer writes those)
          const text = JSON.stringify(j, (_k, x) => (typeof x === 'bigint' ? { $big: x.toString() } : x));
          const parsed = JSON.parse(text, (_k, x) =>
            x && typeof x === 'object' && '$big' in x ? BigInt(x.$big) : x,
          );
          const back = fromJsonSingleValue(type, parsed);
          // JSON text has no -0, so floats compare with === (−0 === 0)
          if (type.kind === 'float') expect(back === Math.fround(v as number)).toBe(true);
          else if (type.kind === 'double') expect(back === v).toBe(true);
          else expect(back).toEqual(v);
        }),
      );
    });
  }
});

describe('calendar helpers', () => {
  it('matches Date for a wide range and round-trips', () => {
    fc.assert(
      fc.property(fc.integer({ min: -700_000, max: 2_900_000 }), (d) => {
        const c = civilFromDays(d);
        const js = new Date(d * 86_400_000);
        expect([c.year, c.month, c.day]).toEqual([
          js.getUTCFullYear(),
          js.getUTCMonth() + 1,
          js.getUTCDate(),
        ]);
        expect(daysFromCivil(c.year, c.month, c.day)).toBe(d);
      }),
    );
    expect(formatDate(0)).toBe('1970-01-01');
    expect(formatDate(daysFromCivil(12000, 1, 1))).toBe('+12000-01-01');
    expect(formatDate(daysFromCivil(-5, 3, 1))).toBe('-0005-03-01');
  });
});
