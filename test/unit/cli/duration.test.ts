import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../lambdas/src/cli/duration.ts';
import { isFloeError } from '../../../lambdas/src/errors.ts';

describe('parseDuration', () => {
  it('reads a whole number and one unit: s, m, h, d, w', () => {
    expect(parseDuration('0s')).toBe(0);
    expect(parseDuration('45s')).toBe(45_000);
    expect(parseDuration('30m')).toBe(30 * 60_000);
    expect(parseDuration('12h')).toBe(12 * 3_600_000);
    expect(parseDuration('5d')).toBe(5 * 86_400_000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
    expect(parseDuration('007d')).toBe(7 * 86_400_000);
  });

  it('refuses anything else with a ConfigInvalid error naming the option and the value', () => {
    const bad = ['', '5', 'd', '-1d', '+1d', '1.5d', '1h30m', ' 5d', '5d ', '5 d', '5D', '5ms', '5y', '1e3s'];
    for (const text of [...bad, '99999999999999999999w']) {
      let err: unknown;
      try {
        parseDuration(text, '--older-than');
      } catch (e) {
        err = e;
      }
      expect(isFloeError(err, 'ConfigInvalid'), JSON.stringify(text)).toBe(true);
      expect((err as Error).message).toBe(
        `--older-than must be a whole number and a unit s, m, h, d or w (e.g. 0s, 30m, 12h, 5d), got '${text}'`,
      );
    }
  });
});

describe('formatDuration', () => {
  it('rounds down to the two largest units', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(59_999)).toBe('59s');
    expect(formatDuration(12 * 60_000 + 5_000)).toBe('12m');
    expect(formatDuration(5 * 3_600_000 + 3 * 60_000)).toBe('5h 3m');
    expect(formatDuration(2 * 3_600_000)).toBe('2h');
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000 + 59 * 60_000)).toBe('3d 4h');
    expect(formatDuration(10 * 86_400_000)).toBe('10d');
    expect(formatDuration(-5)).toBe('0s');
  });
});
