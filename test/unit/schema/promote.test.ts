import { describe, expect, it } from 'vitest';
import {
  decimal,
  list,
  map,
  type PrimitiveType,
  type StructType,
  T,
  typeToString,
} from '../../../lambdas/src/iceberg/types.ts';
import { JsonNumberText, parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';
import { valueDecidedColumns } from '../../../lambdas/src/schema/fit.ts';
import { columnNeeds, measureRecords, promotionFor, widerOf } from '../../../lambdas/src/schema/promote.ts';

const show = (t: PrimitiveType | undefined) => (t === undefined ? undefined : typeToString(t));
const needsOf = (m: ReadonlyMap<string, PrimitiveType>) =>
  Object.fromEntries([...m].map(([p, t]) => [p, show(t)]));

describe('promotionFor: int columns', () => {
  it.each([
    [2147483647n, undefined],
    [-2147483648n, undefined],
    [0n, undefined],
    [2147483648n, 'long'],
    [-2147483649n, 'long'],
    [9223372036854775807n, 'long'],
    // Beyond long: no promotion holds it (conversion dead-letters it).
    [9223372036854775808n, undefined],
    // 3e9 written as `3000000000.0`: an integral number fits a long.
    [3000000000, 'long'],
    [1.5, undefined],
    ['3000000000', undefined],
  ])('%s → %s', (v, expected) => {
    expect(show(promotionFor(T.int, v))).toBe(expected);
  });

  it('reads kept number literals exactly', () => {
    expect(show(promotionFor(T.int, new JsonNumberText('30000000000.0', 3e10)))).toBe('long');
    expect(show(promotionFor(T.int, new JsonNumberText('12.0', 12)))).toBeUndefined();
  });
});

describe('promotionFor: float columns (range only, never for rounding)', () => {
  it.each([
    // Not exact in float32 (nor in float64): rounding is what a float column means.
    [0.1, undefined],
    [16777217n, undefined],
    [3.4028234663852886e38, undefined],
    [-1e-30, undefined],
    [0, undefined],
    // Beyond float32's range: ±infinity, or digits lost down to zero.
    [3.5e38, 'double'],
    [-1e39, 'double'],
    [10n ** 39n, 'double'],
    [1e-39, 'double'],
    [-1e-45, 'double'],
  ])('%s → %s', (v, expected) => {
    expect(show(promotionFor(T.float, v))).toBe(expected);
  });
});

describe('promotionFor: decimal columns (precision, scale kept)', () => {
  const col = decimal(9, 2);
  it.each([
    [1234567.89, undefined],
    [-1234567.89, undefined],
    [12345678.9, 'decimal(10,2)'],
    [1234567890.12, 'decimal(12,2)'],
    [12345678901n, 'decimal(13,2)'],
    [new JsonNumberText('123456789012345678901234567890.5', 1.2345678901234568e29), 'decimal(32,2)'],
    // A third fractional digit: the scale cannot change, so nothing helps.
    [1.234, undefined],
    [12345678901.234, undefined],
    // More than 38 digits.
    [10n ** 37n, undefined],
  ])('%s → %s', (v, expected) => {
    expect(show(promotionFor(col, v))).toBe(expected);
  });
});

describe('widerOf', () => {
  it('takes the larger decimal precision and keeps long / double', () => {
    expect(show(widerOf(decimal(10, 2), decimal(12, 2)))).toBe('decimal(12,2)');
    expect(show(widerOf(decimal(13, 2), decimal(12, 2)))).toBe('decimal(13,2)');
    expect(show(widerOf(undefined, T.long))).toBe('long');
    expect(show(widerOf(T.double, T.double))).toBe('double');
  });
});

const table: StructType = {
  kind: 'struct',
  fields: [
    { id: 1, name: 'qty', required: false, type: T.int },
    { id: 2, name: 'score', required: false, type: T.float },
    { id: 3, name: 'amount', required: false, type: decimal(9, 2) },
    {
      id: 4,
      name: 'payload',
      required: false,
      type: { kind: 'struct', fields: [{ id: 5, name: 'n', required: false, type: T.int }] },
    },
    { id: 6, name: 'items', required: false, type: list(7, T.int) },
    { id: 8, name: 'attrs', required: false, type: map(9, T.string, 10, T.float) },
    // A struct field literally named `element` is not a list's element.
    {
      id: 11,
      name: 'box',
      required: false,
      type: { kind: 'struct', fields: [{ id: 12, name: 'element', required: false, type: T.int }] },
    },
  ],
};

const incoming: StructType = {
  kind: 'struct',
  fields: [
    { id: 1, name: 'qty', required: false, type: T.long },
    { id: 2, name: 'score', required: false, type: T.double },
    { id: 3, name: 'amount', required: false, type: T.double },
    {
      id: 4,
      name: 'payload',
      required: false,
      type: { kind: 'struct', fields: [{ id: 5, name: 'n', required: false, type: T.long }] },
    },
    { id: 6, name: 'items', required: false, type: list(7, T.long) },
    { id: 8, name: 'attrs', required: false, type: map(9, T.string, 10, T.double) },
    {
      id: 11,
      name: 'box',
      required: false,
      type: { kind: 'struct', fields: [{ id: 12, name: 'element', required: false, type: T.long }] },
    },
  ],
};

const records = (...lines: string[]) => lines.map((l) => parseJsonRecord(l) as object);

describe('measureRecords', () => {
  const decided = valueDecidedColumns(table, incoming);

  it('finds nothing when every value fits its column', () => {
    const r = records(
      '{"qty":2147483647,"score":0.1,"amount":1234567.89,"payload":{"n":-5},"items":[1,2],"attrs":{"a":1.5},"box":{"element":3}}',
    );
    expect(needsOf(measureRecords(table, decided, r))).toEqual({});
  });

  it('finds the widest need of each column, at every depth, matching keys by the column name rule', () => {
    const r = records(
      '{"QTY":3000000000,"amount":12345678.9,"payload":{"N":-3000000000},"items":[1,5000000000],"box":{"element":4294967296}}',
      '{"qty":5,"amount":1234567890.12,"attrs":{"k":1e39},"score":null,"items":null}',
      '{"qty":"not a number","amount":1.234,"payload":[1]}',
    );
    expect(needsOf(measureRecords(table, decided, r))).toEqual({
      qty: 'long',
      amount: 'decimal(12,2)',
      'payload.n': 'long',
      'items.element': 'long',
      'attrs.value': 'double',
      'box.element': 'long',
    });
  });
});

describe('columnNeeds', () => {
  it('takes a hinted promotion as declared and measures the rest', () => {
    const hints = new Map<string, PrimitiveType>([
      ['qty', T.long],
      ['score', T.long], // not a promotion of float: no need, the column stays
    ]);
    let measured: string[] = [];
    const needs = columnNeeds(table, incoming, hints, (columns) => {
      measured = [...columns.keys()];
      return new Map([['amount', decimal(10, 2)]]);
    });
    expect(needsOf(needs)).toEqual({ qty: 'long', amount: 'decimal(10,2)' });
    expect(measured).not.toContain('qty');
    expect(measured).not.toContain('score');
    expect(measured).toContain('amount');
  });

  it('measures nothing when no column is value-decided', () => {
    const plain: StructType = {
      kind: 'struct',
      fields: [{ id: 1, name: 'x', required: false, type: T.long }],
    };
    const needs = columnNeeds(plain, plain, new Map(), () => {
      throw new Error('must not measure');
    });
    expect(needs.size).toBe(0);
  });
});
