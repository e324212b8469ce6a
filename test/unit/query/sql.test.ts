import { describe, expect, it } from 'vitest';
import { decimal, field, fixed, list, map, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import {
  decimalToString,
  duckdbType,
  epochToIso,
  quoteIdent,
  quoteString,
  valueToText,
} from '../../../lambdas/src/query/sql.ts';

describe('duckdbType', () => {
  it('maps primitives', () => {
    expect(duckdbType(T.long)).toBe('BIGINT');
    expect(duckdbType(T.int)).toBe('INTEGER');
    expect(duckdbType(decimal(10, 2))).toBe('DECIMAL(10,2)');
    expect(duckdbType(T.timestamptz)).toBe('TIMESTAMPTZ');
    expect(duckdbType(T.timestamp)).toBe('TIMESTAMP');
    expect(duckdbType(T.uuid)).toBe('UUID');
    expect(duckdbType(T.binary)).toBe('BLOB');
    expect(duckdbType(fixed(16))).toBe('BLOB');
    expect(duckdbType(T.date)).toBe('DATE');
  });
  it('maps nested types with quoted field names', () => {
    const t = struct([field(1, 'a b', list(2, T.string)), field(3, 'm', map(4, T.string, 5, decimal(9, 2)))]);
    expect(duckdbType(t)).toBe('STRUCT("a b" VARCHAR[], "m" MAP(VARCHAR, DECIMAL(9,2)))');
  });
});

describe('quoting', () => {
  it('doubles embedded quotes', () => {
    expect(quoteIdent('we"ird')).toBe('"we""ird"');
    expect(quoteString("it's")).toBe("'it''s'");
  });
});

describe('value text', () => {
  it('formats dates, timestamps and decimals the way DuckDB casts them back', () => {
    expect(valueToText(T.date, 19723)).toBe('2024-01-01');
    expect(valueToText(T.date, -1)).toBe('1969-12-31');
    expect(valueToText(T.timestamp, 1_704_067_200_000_001n)).toBe('2024-01-01T00:00:00.000001');
    expect(valueToText(T.timestamptz, -1n)).toBe('1969-12-31T23:59:59.999999+00:00');
    expect(valueToText(decimal(10, 2), -1420n)).toBe('-14.20');
    expect(valueToText(T.binary, Uint8Array.of(0xab, 0))).toBe('\\xAB\\x00');
    expect(valueToText(T.string, null)).toBeUndefined();
  });
  it('pads small decimals', () => {
    expect(decimalToString(5n, 3)).toBe('0.005');
    expect(decimalToString(-5n, 1)).toBe('-0.5');
  });
  it('formats nanosecond timestamps with 9 digits', () => {
    expect(epochToIso(1_000_000_001n, 9)).toBe('1970-01-01T00:00:01.000000001');
  });
});
