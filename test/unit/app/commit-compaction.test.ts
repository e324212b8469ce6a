import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompactionRequests, compactionDue } from '../../../lambdas/src/app/commit-compaction.ts';
import type { TableCommitResult } from '../../../lambdas/src/app/committer.ts';

const MIB = 1024 * 1024;
const result = (
  table: string,
  files?: number,
  bytes?: number,
  status: TableCommitResult['status'] = 'committed',
) =>
  ({
    table,
    status,
    ...(files === undefined ? {} : { totalDataFiles: files }),
    ...(bytes === undefined ? {} : { totalFilesBytes: bytes }),
  }) as TableCommitResult;

describe('compaction by file count', () => {
  const t = { atFiles: 100, targetFileSizeBytes: 128 * MIB, cooldownMs: 60_000 };

  it('due at atFiles data files averaging under half the target, after a commit only', () => {
    expect(compactionDue(result('a', 100, 100 * MIB), t)).toBe(true);
    expect(compactionDue(result('a', 99, 99 * MIB), t)).toBe(false);
    // Big files on average: compaction would rewrite little.
    expect(compactionDue(result('a', 1000, 1000 * 64 * MIB), t)).toBe(false);
    expect(compactionDue(result('a', 1000, 1000 * 64 * MIB - 1), t)).toBe(true);
    expect(compactionDue(result('a', 1000, MIB, 'locked'), t)).toBe(false);
    expect(compactionDue(result('a', 1000, MIB, 'failed'), t)).toBe(false);
    // No totals (a summary without them): nothing to go by.
    expect(compactionDue(result('a'), t)).toBe(false);
  });

  it('a table is asked for at most once per cooldown, whatever the commits', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.nat(5_000), fc.integer({ min: 1, max: 30_000 })),
          {
            maxLength: 200,
          },
        ),
        (commits) => {
          const r = new CompactionRequests(t);
          let now = 0;
          const asked = new Map<string, number[]>();
          for (const [table, files, step] of commits) {
            now += step;
            for (const x of r.due([result(table, files, files * MIB)], now))
              asked.set(x, [...(asked.get(x) ?? []), now]);
            const due = compactionDue(result(table, files, files * MIB), t);
            const times = asked.get(table) ?? [];
            // Asked now exactly when due and the last ask is a cooldown ago (or there was none).
            if (times.at(-1) === now) expect(due).toBe(true);
            else if (due) expect(times.length > 0 && now - times.at(-1)! < t.cooldownMs).toBe(true);
          }
          for (const times of asked.values())
            for (let i = 1; i < times.length; i++)
              expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(t.cooldownMs);
        },
      ),
    );
  });
});
