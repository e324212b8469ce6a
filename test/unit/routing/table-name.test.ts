import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLegalTableName, sanitizeTableName } from '../../../lambdas/src/routing/table-name.ts';

const LEGAL = /^[a-z0-9](?:[a-z0-9_]{0,253}[a-z0-9])?$/;

describe('sanitizeTableName', () => {
  it.each([
    ['ORDER', 'order'],
    ['Order.Created', 'order_created'],
    ['user-signup v2', 'user_signup_v2'],
    ['__a__b__', 'a_b'],
    ['../x', 'x'],
    ['../../etc/passwd', 'etc_passwd'],
    ['a/b\\c', 'a_b_c'],
    ["x'; DROP TABLE users; --", 'x_drop_table_users'],
    ['Événement', 'evenement'],
    ['Straße', 'stra_e'],
    ['2024_sales', '2024_sales'],
    ['ｆｕｌｌｗｉｄｔｈ', 'fullwidth'],
  ])('%j → %j', (raw, expected) => {
    expect(sanitizeTableName(raw)).toBe(expected);
  });

  it.each(['', '___', '...', '😀', '日本語', ' ', '\u0000', '-'])('%j cannot be made legal', (raw) => {
    expect(sanitizeTableName(raw)).toBeUndefined();
  });

  it('rejects (never truncates) names longer than the limit', () => {
    expect(sanitizeTableName('a'.repeat(255))).toBe('a'.repeat(255));
    expect(sanitizeTableName('a'.repeat(256))).toBeUndefined();
    expect(sanitizeTableName('a'.repeat(250), 248)).toBeUndefined();
    expect(sanitizeTableName('x'.repeat(10_000))).toBeUndefined();
    expect(sanitizeTableName(`${'!'.repeat(10_000)}a`)).toBeUndefined();
  });

  it('property: any input yields a legal name or undefined', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 300 }),
          fc.string({
            unit: fc.constantFrom('a', 'Z', '_', '.', '/', '-', ' ', '9', 'é', '\u0301'),
            maxLength: 400,
          }),
          fc.string({ unit: 'grapheme', maxLength: 50 }),
        ),
        (raw) => {
          const name = sanitizeTableName(raw);
          if (name !== undefined) {
            expect(name).toMatch(LEGAL);
            expect(isLegalTableName(name)).toBe(true);
            // idempotent: a legal name is its own sanitised form
            expect(sanitizeTableName(name)).toBe(name);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
