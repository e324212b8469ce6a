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
import { fitToExisting, isWiderPromotion, valueDecidedColumns } from '../../../lambdas/src/schema/fit.ts';

const struct = (fields: [string, StructType['fields'][number]['type']][]): StructType => ({
  kind: 'struct',
  fields: fields.map(([name, type], i) => ({ id: i + 1, name, required: false, type })),
});
const types = (s: StructType) => s.fields.map((f) => [f.name, typeToString(f.type)]);

const table = struct([
  ['qty', T.int],
  ['score', T.float],
  ['amount', decimal(9, 2)],
  ['total', T.long],
  ['ratio', T.double],
  ['label', T.string],
  ['ts', T.timestamp],
]);

describe('fitToExisting: inferred (JSON) types', () => {
  const inferred = struct([
    ['qty', T.long],
    ['score', T.double],
    ['amount', T.double],
    ['total', T.long],
    ['ratio', T.long],
    ['label', T.timestamptz],
    ['ts', T.timestamptz],
  ]);

  it('keeps every existing column its values can fill when nothing needs more', () => {
    expect(types(fitToExisting(table, inferred))).toEqual([
      ['qty', 'int'],
      ['score', 'float'],
      ['amount', 'decimal(9,2)'],
      ['total', 'long'],
      ['ratio', 'double'],
      ['label', 'string'],
      ['ts', 'timestamp'],
    ]);
  });

  it('promotes the columns whose values need a wider type', () => {
    const needs = new Map<string, PrimitiveType>([
      ['qty', T.long],
      ['score', T.double],
      ['amount', decimal(12, 2)],
    ]);
    expect(types(fitToExisting(table, inferred, { needs })).slice(0, 3)).toEqual([
      ['qty', 'long'],
      ['score', 'double'],
      ['amount', 'decimal(12,2)'],
    ]);
  });

  it('ignores a need that is not a promotion of the column (a table that moved on, or a narrower need)', () => {
    const wide = struct([['amount', decimal(14, 2)]]);
    const needs = new Map<string, PrimitiveType>([['amount', decimal(12, 2)]]);
    expect(types(fitToExisting(wide, struct([['amount', T.double]]), { needs }))).toEqual([
      ['amount', 'decimal(14,2)'],
    ]);
    const longCol = struct([['qty', T.long]]);
    expect(
      types(
        fitToExisting(longCol, struct([['qty', T.long]]), {
          needs: new Map<string, PrimitiveType>([['qty', T.int]]),
        }),
      ),
    ).toEqual([['qty', 'long']]);
  });

  it('finds needs by dotted path inside structs, lists and maps', () => {
    const nested = struct([
      ['payload', { kind: 'struct', fields: [{ id: 10, name: 'qty', required: false, type: T.int }] }],
      ['items', list(11, T.int)],
      ['attrs', map(12, T.string, 13, T.float)],
    ]);
    const incoming = struct([
      ['payload', { kind: 'struct', fields: [{ id: 1, name: 'qty', required: false, type: T.long }] }],
      ['items', list(2, T.long)],
      ['attrs', map(3, T.string, 4, T.double)],
    ]);
    const needs = new Map<string, PrimitiveType>([
      ['payload.qty', T.long],
      ['items.element', T.long],
      ['attrs.value', T.double],
    ]);
    expect(types(fitToExisting(nested, incoming))).toEqual([
      ['payload', 'struct<qty: int>'],
      ['items', 'list<int>'],
      ['attrs', 'map<string, float>'],
    ]);
    expect(types(fitToExisting(nested, incoming, { needs }))).toEqual([
      ['payload', 'struct<qty: long>'],
      ['items', 'list<long>'],
      ['attrs', 'map<string, double>'],
    ]);
  });
});

describe('fitToExisting: declared (Avro) types', () => {
  it('keeps a declared wider type, so the column is promoted instead of narrowing the values', () => {
    const declared = struct([
      ['qty', T.long],
      ['score', T.double],
      ['amount', decimal(12, 2)],
    ]);
    expect(types(fitToExisting(table, declared, { declared: true }))).toEqual([
      ['qty', 'long'],
      ['score', 'double'],
      ['amount', 'decimal(12,2)'],
    ]);
  });

  it('fits only where the row values need no conversion (timestamptz µs into a timestamp column)', () => {
    const declared = struct([
      ['ts', T.timestamptz],
      ['label', T.timestamptz],
      ['ratio', T.long],
    ]);
    expect(types(fitToExisting(table, declared, { declared: true }))).toEqual([
      ['ts', 'timestamp'],
      ['label', 'timestamptz'],
      ['ratio', 'long'],
    ]);
  });
});

describe('valueDecidedColumns', () => {
  it('lists the int, float and decimal columns the inferred kinds fill, by path', () => {
    const incoming = struct([
      ['qty', T.long],
      ['score', T.long],
      ['amount', T.double],
      ['total', T.long],
      ['ratio', T.long],
      ['label', T.string],
      ['new_col', T.long],
    ]);
    expect([...valueDecidedColumns(table, incoming)].map(([p, t]) => [p, typeToString(t)])).toEqual([
      ['qty', 'int'],
      ['score', 'float'],
      ['amount', 'decimal(9,2)'],
    ]);
  });

  it('leaves out columns whose incoming type is not a JSON kind they take (a hinted decimal, a double for an int)', () => {
    const incoming = struct([
      ['qty', T.double],
      ['amount', decimal(12, 2)],
    ]);
    expect(valueDecidedColumns(table, incoming).size).toBe(0);
  });
});

describe('isWiderPromotion', () => {
  it.each([
    [T.int, T.long, true],
    [T.float, T.double, true],
    [decimal(9, 2), decimal(12, 2), true],
    [decimal(9, 2), decimal(9, 2), false],
    [decimal(9, 2), decimal(12, 3), false],
    [decimal(12, 2), decimal(9, 2), false],
    [T.long, T.int, false],
    [T.int, T.double, false],
    [T.float, T.long, false],
  ])('%o → %o: %s', (from, to, expected) => {
    expect(isWiderPromotion(from, to)).toBe(expected);
  });
});
