/**
 * Concurrency that leaves nothing behind (engine/bounded.ts): whatever fails, `settleAll`,
 * `inGroups` and `forEachBounded` return only when every task they started has settled, pass on
 * the first failure, never run more than their bound at once, and start nothing after a failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forEachBounded, inGroups, settleAll } from '../../../lambdas/src/engine/bounded.ts';

interface Task {
  readonly ms: number;
  readonly fails: boolean;
}
const tasksArb = fc.array(fc.record({ ms: fc.integer({ min: 0, max: 3 }), fails: fc.boolean() }), {
  maxLength: 12,
});

/** Runs tasks, tracking how many run at once and which started / settled. */
function tracker() {
  const t = {
    running: 0,
    peak: 0,
    started: [] as number[],
    settled: 0,
    /** How many had started when the first task failed. */
    startedAtFailure: undefined as number | undefined,
  };
  const run = async (task: Task, i: number) => {
    t.started.push(i);
    t.running++;
    t.peak = Math.max(t.peak, t.running);
    try {
      await new Promise((r) => setTimeout(r, task.ms));
      if (task.fails) {
        t.startedAtFailure ??= t.started.length;
        throw new Error(`task ${i}`);
      }
      return i;
    } finally {
      t.running--;
      t.settled++;
    }
  };
  return { t, run };
}

const outcome = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: Error) => e.message,
  );

describe('engine/bounded', () => {
  it('forEachBounded runs every item once, starting them in order, never more than the limit at a time', async () => {
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

  it('forEachBounded handles no items and a limit below one', async () => {
    const seen: number[] = [];
    await forEachBounded([], 4, async (n: number) => {
      seen.push(n);
    });
    await forEachBounded([1, 2], 0, async (n) => {
      seen.push(n);
    });
    expect(seen).toEqual([1, 2]);
  });

  it('settleAll: every promise settled first, then the first failure in array order', async () => {
    await fc.assert(
      fc.asyncProperty(tasksArb, async (tasks) => {
        const { t, run } = tracker();
        const got = await outcome(settleAll(tasks.map(run)));
        expect(t.running).toBe(0);
        const first = tasks.findIndex((x) => x.fails);
        expect(got).toBe(first < 0 ? undefined : `task ${first}`);
      }),
      { numRuns: 40 },
    );
  });

  it('inGroups: a group at a time, each settled before the next; nothing after a failing group', async () => {
    await fc.assert(
      fc.asyncProperty(tasksArb, fc.integer({ min: 1, max: 4 }), async (tasks, size) => {
        const { t, run } = tracker();
        const got = await outcome(inGroups(tasks, size, (x) => run(x, tasks.indexOf(x))));
        expect(t.running).toBe(0);
        expect(t.peak).toBeLessThanOrEqual(size);
        const first = tasks.findIndex((x) => x.fails);
        if (first < 0) expect(got).toBeUndefined();
        else {
          expect(got).toMatch(/^task \d+$/);
          // The failing task's group ran whole; no later group started.
          const groupEnd = (Math.floor(first / size) + 1) * size;
          expect(Math.max(...t.started)).toBeLessThan(Math.min(groupEnd, tasks.length));
        }
      }),
      { numRuns: 40 },
    );
  });

  it('forEachBounded: at most the limit at once, nothing new after a failure, all settled on return', async () => {
    await fc.assert(
      fc.asyncProperty(tasksArb, fc.integer({ min: 1, max: 5 }), async (tasks, limit) => {
        const { t, run } = tracker();
        const got = await outcome(
          forEachBounded(
            tasks.map((x, i) => ({ ...x, i })),
            limit,
            async (x) => {
              await run(x, x.i);
            },
          ),
        );
        expect(t.running).toBe(0);
        expect(t.settled).toBe(t.started.length);
        expect(t.peak).toBeLessThanOrEqual(limit);
        // Started in item order.
        expect(t.started).toEqual(t.started.map((_, k) => k));
        const first = tasks.findIndex((x) => x.fails);
        if (first < 0) {
          expect(got).toBeUndefined();
          expect(t.started.length).toBe(tasks.length);
        } else {
          expect(got).toMatch(/^task \d+$/);
          // Nothing started once a task had failed.
          expect(t.started.length).toBe(t.startedAtFailure);
        }
      }),
      { numRuns: 60 },
    );
  });
});
