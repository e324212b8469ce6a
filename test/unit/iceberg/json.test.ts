import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isFloeError } from '../../../lambdas/src/errors.ts';
import { parseJson, stringifyJson } from '../../../lambdas/src/iceberg/json.ts';

describe('parseJson', () => {
  it('keeps 64-bit integers exact as bigint and leaves safe numbers alone', () => {
    const v = parseJson(
      '{"id": 7342794868382145167, "neg": -9223372036854775808, "safe": 9007199254740991, "unsafe": 9007199254740993, "f": 1.5, "e": 1e21, "z": -0}',
    ) as Record<string, unknown>;
    expect(v.id).toBe(7342794868382145167n);
    expect(v.neg).toBe(-9223372036854775808n);
    expect(v.safe).toBe(9007199254740991);
    expect(v.unsafe).toBe(9007199254740993n);
    expect(v.f).toBe(1.5);
    expect(v.e).toBe(1e21);
    expect(Object.is(v.z, -0)).toBe(true);
  });

  it('does not touch digits inside strings, including escaped quotes', () => {
    const v = parseJson('["a\\"12345678901234567890", "12345678901234567890", 12345678901234567890]');
    expect(v).toEqual(['a"12345678901234567890', '12345678901234567890', 12345678901234567890n]);
  });

  it('keeps fractional numbers with many digits as numbers (JSON.parse semantics)', () => {
    const text = '[12345678901234567.5, 1234567890123456789e2]';
    expect(parseJson(text)).toEqual(JSON.parse(text));
    expect((parseJson(text) as unknown[]).every((x) => typeof x === 'number')).toBe(true);
  });

  it('falls back correctly when the text itself contains an escaped U+0001', () => {
    const v = parseJson('{"s": "\\u0001bigint:5", "n": 12345678901234567890}');
    expect(v).toEqual({ s: '\u0001bigint:5', n: 12345678901234567890n });
  });

  it('rejects malformed JSON, including a big-number object key, with DataInvalid', () => {
    for (const bad of ['{12345678901234567890: 1}', '{"a": 1, 12345678901234567890: 2}', '[1,', '']) {
      let err: unknown;
      try {
        parseJson(bad);
      } catch (e) {
        err = e;
      }
      expect(isFloeError(err, 'DataInvalid'), bad).toBe(true);
    }
  });

  it('equals JSON.parse for any JSON without unsafe integers', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        fc.pre(!hasUnsafeInteger(JSON.parse(text)));
        expect(parseJson(text)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('round-trips any bigint through stringify/parse', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (b) => {
        const back = parseJson(stringifyJson({ b }));
        const expected =
          b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
        expect((back as { b: unknown }).b).toBe(expected);
      }),
    );
  });

  it('parses a few MB of metadata quickly', () => {
    const big = {
      snapshots: Array.from({ length: 20_000 }, (_, i) => ({
        'snapshot-id': 7342794868382145167n + BigInt(i),
        'timestamp-ms': 1735689600000 + i,
        summary: { operation: 'append', 'added-records': '10' },
      })),
    };
    const text = stringifyJson(big, 2);
    expect(text.length).toBeGreaterThan(2_000_000);
    const t0 = performance.now();
    const back = parseJson(text) as typeof big;
    const ms = performance.now() - t0;
    expect(back.snapshots[19_999]!['snapshot-id']).toBe(7342794868382145167n + 19_999n);
    expect(ms).toBeLessThan(1500);
  });
});

describe('stringifyJson', () => {
  it('writes bigints as bare integers and matches JSON.stringify otherwise', () => {
    expect(stringifyJson({ a: 7342794868382145167n, b: [1n, 'x'] })).toBe(
      '{"a":7342794868382145167,"b":[1,"x"]}',
    );
    const sample = { a: [1, { b: [] }, {}], c: 'q', d: null, u: undefined, n: Number.NaN, arr: [undefined] };
    expect(stringifyJson(sample)).toBe(JSON.stringify(sample));
    expect(stringifyJson(sample, 2)).toBe(JSON.stringify(sample, null, 2));
  });

  it('matches JSON.stringify for arbitrary JSON values, compact and indented', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(stringifyJson(v)).toBe(JSON.stringify(v));
        expect(stringifyJson(v, 2)).toBe(JSON.stringify(v, null, 2));
      }),
    );
  });
});

function hasUnsafeInteger(v: unknown): boolean {
  if (typeof v === 'number') return Number.isInteger(v) && !Number.isSafeInteger(v) && Math.abs(v) < 1e21;
  if (Array.isArray(v)) return v.some(hasUnsafeInteger);
  if (v !== null && typeof v === 'object') return Object.values(v).some(hasUnsafeInteger);
  return false;
}

describe('stringifyJson fast path', () => {
  it('writes bigints bare, and is not fooled by data that looks like its bigint marker', () => {
    const v = { a: 12345678901234567890n, b: [1, -5n, '\u0000B1', 'x\u0000B2'], k: { '\u0000B3': 4n } };
    const text = stringifyJson(v);
    expect(text).toBe('{"a":12345678901234567890,"b":[1,-5,"\\u0000B1","x\\u0000B2"],"k":{"\\u0000B3":4}}');
    expect(JSON.parse(text.replace(/12345678901234567890/, '1'))).toEqual({
      a: 1,
      b: [1, -5, '\u0000B1', 'x\u0000B2'],
      k: { '\u0000B3': 4 },
    });
  });

  it('leaves BigInt.prototype as it found it, also when serialisation throws', () => {
    const cyclic: Record<string, unknown> = { n: 1n };
    cyclic.self = cyclic;
    expect(() => stringifyJson(cyclic)).toThrow();
    expect(Object.hasOwn(BigInt.prototype, 'toJSON')).toBe(false);
    expect(stringifyJson([2n ** 70n], 2)).toBe('[\n  1180591620717411303424\n]');
  });
});
