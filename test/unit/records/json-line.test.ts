import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';
import {
  isTooDeep,
  JsonNumberText,
  type JsonValue,
  parseJsonRecord,
  splitLines,
} from '../../../lambdas/src/records/json-line.ts';

function errorOf(text: string): FloeError {
  try {
    parseJsonRecord(text);
  } catch (e) {
    expect(e).toBeInstanceOf(FloeError);
    return e as FloeError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

/** JSON.parse's view of our value: bigints as numbers, kept texts as their numbers. */
function asJsonParse(v: JsonValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof JsonNumberText) return v.value;
  if (Array.isArray(v)) return v.map(asJsonParse);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v))
      Object.defineProperty(out, k, {
        value: asJsonParse(v[k]!),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  }
  return v;
}

describe('parseJsonRecord: numbers keep their source type', () => {
  it('integers become bigint, exactly beyond 2^53', () => {
    expect(parseJsonRecord('9007199254740993')).toBe(9007199254740993n);
    expect(parseJsonRecord('-9223372036854775808')).toBe(-9223372036854775808n);
    expect(parseJsonRecord('123456789012345678901234567890')).toBe(123456789012345678901234567890n);
    expect(parseJsonRecord('0')).toBe(0n);
    expect(parseJsonRecord('-0')).toBe(0n);
    expect(parseJsonRecord('42')).toBe(42n);
  });

  it('fractions and exponents become numbers, even when integral (1.0 stays a double)', () => {
    expect(parseJsonRecord('1.0')).toBe(1);
    expect(typeof parseJsonRecord('1.0')).toBe('number');
    expect(typeof parseJsonRecord('1e3')).toBe('number');
    expect(parseJsonRecord('1e3')).toBe(1000);
    expect(parseJsonRecord('-2.5E-3')).toBe(-0.0025);
    expect(parseJsonRecord('0.1')).toBe(0.1);
    expect(parseJsonRecord('1E+2')).toBe(100);
  });

  it('keeps the text of long fractions only when asked', () => {
    expect(parseJsonRecord('1234567890123456.78')).toBe(1234567890123456.8);
    const kept = parseJsonRecord('{"a":1234567890123456.78,"b":12.5}', { exactFractions: true }) as Record<
      string,
      JsonValue
    >;
    expect(kept.a).toBeInstanceOf(JsonNumberText);
    expect((kept.a as JsonNumberText).text).toBe('1234567890123456.78');
    expect(kept.b).toBe(12.5); // 3 significant digits: a plain double is exact enough
  });

  it('rejects malformed numbers', () => {
    for (const bad of [
      '01',
      '-',
      '1.',
      '.5',
      '1e',
      '1e+',
      '+1',
      '- 1',
      '0x10',
      'NaN',
      'Infinity',
      '-Infinity',
      '1.5.2',
    ]) {
      expect(errorOf(bad).kind, bad).toBe(ErrorKind.DataInvalid);
    }
  });
});

describe('parseJsonRecord: structure', () => {
  it('parses objects, arrays and literals', () => {
    expect(parseJsonRecord(' {"a": [1, 2.5, "x", true, false, null], "b": {}} ')).toEqual({
      a: [1n, 2.5, 'x', true, false, null],
      b: {},
    });
    expect(parseJsonRecord('[]')).toEqual([]);
    expect(parseJsonRecord('\t\r\n"s"\n')).toBe('s');
  });

  it('keeps __proto__ as an own data key and never changes the prototype', () => {
    const v = parseJsonRecord('{"__proto__": {"polluted": 1}, "a": 1}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(['__proto__', 'a']);
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toEqual({ polluted: 1n });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('lets the last duplicate key win, like JSON.parse', () => {
    expect(parseJsonRecord('{"a":1,"a":2}')).toEqual({ a: 2n });
  });

  it('handles deep nesting up to the limit and rejects deeper input without a stack overflow', () => {
    const ok = `${'['.repeat(500)}1${']'.repeat(500)}`;
    let v = parseJsonRecord(ok);
    for (let i = 0; i < 500; i++) v = (v as JsonValue[])[0]!;
    expect(v).toBe(1n);
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const e = errorOf(deep);
    expect(e.message).toMatch(/nests deeper than 512 levels/);
    expect(isTooDeep(e)).toBe(true);
    expect(() => parseJsonRecord(`${'['.repeat(20)}${']'.repeat(20)}`, { maxDepth: 10 })).toThrow(
      /nests deeper than 10 levels of objects and arrays/,
    );
    expect(isTooDeep(errorOf('{"a":'))).toBe(false); // malformed is not too deep
    // Objects and arrays both count; the root object is level 1.
    expect(parseJsonRecord('{"a":[{"b":1}]}', { maxDepth: 3 })).toEqual({ a: [{ b: 1n }] });
    expect(() => parseJsonRecord('{"a":[{"b":[1]}]}', { maxDepth: 3 })).toThrow(/deeper than 3/);
  });
});

describe('parseJsonRecord: strings', () => {
  it('decodes every escape', () => {
    expect(parseJsonRecord(String.raw`"a\"b\\c\/d\be\ff\ng\rh\ti"`)).toBe('a"b\\c/d\be\ff\ng\rh\ti');
    expect(parseJsonRecord(String.raw`"\u00e9\u20AC"`)).toBe('é€');
  });

  it('joins surrogate-pair escapes into one code point and keeps raw astral characters', () => {
    expect(parseJsonRecord(String.raw`"\uD83D\uDE00"`)).toBe('😀');
    expect(parseJsonRecord('"x😀y"')).toBe('x😀y');
  });

  // Shape fuzzer: a lone surrogate escape has no UTF-8 form, so a Parquet string could only hold
  // U+FFFD in its place; the record must be a dead letter instead of changing silently.
  it('refuses lone surrogate escapes (high, low, high followed by a non-low escape), naming the offset', () => {
    for (const text of [
      String.raw`"\ud800"`,
      String.raw`"x\udc00"`,
      String.raw`"\ud800\u0041"`,
      String.raw`{"\ud83dx":1}`,
    ]) {
      expect(() => parseJsonRecord(text), text).toThrow(
        /lone surrogate \\u(d800|dc00|d83d): not valid Unicode/,
      );
    }
    expect(() => parseJsonRecord(String.raw`"ab\ud800"`)).toThrow(/at byte 3\b/);
  });

  it('handles escapes after plain strings and plain strings after escapes', () => {
    expect(parseJsonRecord(String.raw`["a","b\n","c","\"","d"]`)).toEqual(['a', 'b\n', 'c', '"', 'd']);
    expect(parseJsonRecord(String.raw`{"k\u0041":"v","k2":"w\\"}`)).toEqual({ kA: 'v', k2: 'w\\' });
  });

  it('rejects bad escapes, raw control characters and unterminated strings', () => {
    expect(errorOf(String.raw`"\x"`).message).toMatch(/invalid escape/);
    expect(errorOf(String.raw`"\u12G4"`).message).toMatch(/\\u escape/);
    expect(errorOf('"a\tb"').message).toMatch(/control character/);
    expect(errorOf('{"a":"b\nc"}').message).toMatch(/control character/);
    expect(errorOf('"abc').message).toMatch(/unterminated string/);
    expect(errorOf('"abc\\').message).toMatch(/unterminated string/);
  });
});

describe('parseJsonRecord: errors name the byte offset and an excerpt', () => {
  it('trailing garbage', () => {
    const e = errorOf('{"a":1} x');
    expect(e.message).toMatch(/at byte 8: unexpected data after the JSON value/);
    expect(e.context.byteOffset).toBe(8);
    expect(e.message).toContain('⟨here⟩x');
  });

  it('counts UTF-8 bytes, not UTF-16 units', () => {
    const e = errorOf('{"é😀":1,}');
    // {"é😀":1,  = 1 + 1 + 2 + 4 + 1 + 1 + 1 + 1 bytes before the offending '}'
    expect(e.context.byteOffset).toBe(12);
    expect(e.context.charOffset).toBe(9);
    expect(e.message).toMatch(/expected a string key/);
  });

  it.each([
    ['', /unexpected end of input/],
    ['{', /unterminated object/],
    ['{"a"', /expected ':'/],
    ['{"a":}', /expected a value/],
    ['{"a":1,}', /expected a string key/],
    ['[1,]', /expected a value/],
    ['[1 2]', /expected ',' or '\]'/],
    ['[,1]', /expected a value/],
    ['{"a" 1}', /expected ':'/],
    ['{a:1}', /expected a string key/],
    ['[1', /unterminated array/],
    ['tru', /invalid literal/],
    ['nul', /invalid literal/],
    ["{'a':1}", /expected a string key/],
    ['{"a":1}{"b":2}', /unexpected data after/],
  ])('%j', (text, re) => {
    const e = errorOf(text);
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toMatch(re);
    expect(e.message).toMatch(/at byte \d+/);
  });
});

describe('parseJsonRecord agrees with JSON.parse', () => {
  it('on anything JSON.stringify produces (modulo bigint)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(asJsonParse(parseJsonRecord(text))).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('on pretty-printed text and unicode strings', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.string({ unit: 'binary' }), (value, s) => {
        const text = JSON.stringify({ v: value, s }, null, 2);
        expect(asJsonParse(parseJsonRecord(text))).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('rejects what JSON.parse rejects on mutated inputs', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 3 }),
        fc.nat(),
        fc.constantFrom('', ',', '}', ']', '"', '\\', ':', 'x', '\u0001'),
        (v, at, ins) => {
          const base = JSON.stringify(v);
          const i = at % (base.length + 1);
          const text = base.slice(0, i) + ins + base.slice(i);
          let expected: unknown;
          let jsonOk = true;
          try {
            expected = JSON.parse(text);
          } catch {
            jsonOk = false;
          }
          if (jsonOk) expect(asJsonParse(parseJsonRecord(text))).toStrictEqual(expected);
          else expect(() => parseJsonRecord(text)).toThrow(FloeError);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('splitLines', () => {
  it('splits on \\n and \\r\\n, skips blank lines and keeps 1-based line numbers', () => {
    expect(splitLines('{"a":1}\r\n\n  \n{"b":2}\n{"c":3}')).toEqual([
      { text: '{"a":1}', line: 1 },
      { text: '{"b":2}', line: 4 },
      { text: '{"c":3}', line: 5 },
    ]);
    expect(splitLines('')).toEqual([]);
    expect(splitLines('x\n')).toEqual([{ text: 'x', line: 1 }]);
  });
});
