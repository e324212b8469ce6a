import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isInstantString,
  parseDate,
  parseDateBytes,
  parseInstantMicrosBytes,
  parseTimestamp,
} from '../../../lambdas/src/schema/temporal.ts';

const enc = new TextEncoder();

/** Near-miss timestamps: valid ones with one character changed, dropped or added. */
const stamp = fc
  .tuple(
    fc.date({
      min: new Date('1600-01-01T00:00:00Z'),
      max: new Date('2400-12-31T23:59:59Z'),
      noInvalidDate: true,
    }),
    fc.constantFrom('Z', 'z', '+02:00', '-11:30', '+18:00', '+18:01', '', '+2:00'),
    fc.constantFrom('', '.5', '.123456', '.123456789', '.1234567891'),
    fc.nat(40),
    fc.constantFrom('', 'x', '9', ':', '-', 'T', ' '),
  )
  .map(([d, zone, frac, at, junk]) => {
    const s = `${d.toISOString().slice(0, 19)}${frac}${zone}`;
    const i = at % (s.length + 1);
    return junk === ' ' ? s.slice(0, i) + s.slice(i + 1) : s.slice(0, i) + junk + s.slice(i);
  });

describe('temporal parsing over bytes', () => {
  it('agrees with the string grammar on instants and near misses', () => {
    fc.assert(
      fc.property(stamp, (s) => {
        const b = enc.encode(`__${s}__`);
        const viaBytes = parseInstantMicrosBytes(b, 2, b.length - 2);
        expect(viaBytes).toBe(isInstantString(s) ? parseTimestamp(s, 'micros', 'required') : undefined);
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees with parseDate on dates and near misses', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0001-01-01T00:00:00Z'),
          max: new Date('9999-12-31T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.nat(12),
        fc.constantFrom('', '0', '-', 'x', '3'),
        (d, at, junk) => {
          const base = d.toISOString().slice(0, 10);
          const s = base.slice(0, at) + junk + base.slice(at + (junk === '' ? 0 : 1));
          const b = enc.encode(s);
          expect(parseDateBytes(b, 0, b.length)).toBe(parseDate(s));
        },
      ),
      { numRuns: 3000 },
    );
    expect(parseDateBytes(enc.encode('2024-02-29'), 0, 10)).toBe(parseDate('2024-02-29'));
    expect(parseDateBytes(enc.encode('2023-02-29'), 0, 10)).toBeUndefined();
  });
});
