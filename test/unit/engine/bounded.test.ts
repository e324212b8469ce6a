import { describe, expect, it } from 'vitest';
import { forEachBounded } from '../../../lambdas/src/engine/bounded.ts';

describe('forEachBounded', () => {
  it('runs every item once, starting them in order, never more than the limit at a time', async () => {
    const started: number[] = [];
    let running = 0;
    let peak = 0;
    await forEachBounded([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      started.push(n);
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, (8 - n) * 2));
      running--;
    });
    expect(started).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });

  it('handles no items and a limit below one', async () => {
    const seen: number[] = [];
    await forEachBounded([], 4, async (n: number) => {
      seen.push(n);
    });
    await forEachBounded([1, 2], 0, async (n) => {
      seen.push(n);
    });
    expect(seen).toEqual([1, 2]);
  });
});
