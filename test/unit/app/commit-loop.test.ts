/**
 * `runCommitLoop`'s cadence, on a clock of its own: passes start an interval apart (at once after
 * a pass that took longer), none starts that would end past `untilMs`, and none after the start
 * deadline. The ledger is a port stand-in that reports no tables and makes each pass take `passMs`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCommitLoop } from '../../../lambdas/src/app/commit-loop.ts';
import type { CommitterDeps } from '../../../lambdas/src/app/committer.ts';

function fixture(passMs: (pass: number) => number) {
  let now = 1_000_000;
  const starts: number[] = [];
  const ends: number[] = [];
  const ledger = {
    tablesWithStagedWork: async () => {
      starts.push(now);
      now += passMs(starts.length);
      ends.push(now);
      return [] as string[];
    },
  };
  const deps = { ledger, clock: { nowMs: () => now } } as unknown as CommitterDeps;
  const sleep = async (ms: number) => {
    expect(ms).toBeGreaterThan(0);
    now += ms;
  };
  return { deps, sleep, starts, ends, now: () => now };
}

describe('runCommitLoop', () => {
  it('one pass without an interval or a window', async () => {
    const f = fixture(() => 10);
    expect((await runCommitLoop(f.deps, { sleep: f.sleep })).passes).toBe(1);
    expect((await runCommitLoop(f.deps, { sleep: f.sleep, intervalMs: 1000 })).passes).toBe(1);
    expect((await runCommitLoop(f.deps, { sleep: f.sleep, untilMs: f.now() + 60_000 })).passes).toBe(1);
  });

  it('passes an interval apart until the window ends; none ends past it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 100, max: 20_000 }),
        fc.integer({ min: 0, max: 120_000 }),
        fc.array(fc.integer({ min: 0, max: 30_000 }), { minLength: 1, maxLength: 50 }),
        async (interval, window, durations) => {
          const f = fixture((i) => durations[(i - 1) % durations.length]!);
          const t0 = f.now();
          const until = t0 + window;
          const r = await runCommitLoop(f.deps, { sleep: f.sleep, intervalMs: interval, untilMs: until });
          expect(r.passes).toBe(f.starts.length);
          expect(f.starts[0]).toBe(t0);
          for (let i = 1; i < f.starts.length; i++) {
            // An interval after the previous start, or at once after a pass that took longer.
            expect(f.starts[i]).toBe(Math.max(f.starts[i - 1]! + interval, f.ends[i - 1]!));
            // Started only when the previous pass's length would still end inside the window.
            const prev = f.ends[i - 1]! - f.starts[i - 1]!;
            expect(f.starts[i]! + prev).toBeLessThanOrEqual(until);
          }
          // It stopped because the next pass could not fit (not early).
          const last = f.starts.length - 1;
          const next = Math.max(f.starts[last]! + interval, f.ends[last]!);
          expect(next + (f.ends[last]! - f.starts[last]!)).toBeGreaterThan(until);
        },
      ),
    );
  });

  it('no pass starts at or after the start deadline; stopped() ends the loop', async () => {
    const f = fixture(() => 100);
    const t0 = f.now();
    const r = await runCommitLoop(f.deps, {
      sleep: f.sleep,
      intervalMs: 1000,
      untilMs: t0 + 60_000,
      startDeadlineMs: t0 + 3500,
    });
    expect(f.starts.map((s) => s - t0)).toEqual([0, 1000, 2000, 3000]);
    expect(r.passes).toBe(4);
    const g = fixture(() => 100);
    let n = 0;
    await runCommitLoop(g.deps, {
      sleep: g.sleep,
      intervalMs: 1000,
      untilMs: g.now() + 60_000,
      stopped: () => ++n >= 3,
    });
    expect(g.starts).toHaveLength(2);
  });
});
