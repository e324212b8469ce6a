/**
 * fast-check's assert, with a report a person can act on: the seed, the replay path and the
 * shrunk counterexample as the NDJSON lines themselves (long lines cut in the middle).
 */
import fc from 'fast-check';
import type { FuzzLine } from './json-shapes.ts';

export interface FuzzRun {
  readonly seed: number;
  readonly numRuns: number;
  /** Replay one failure exactly (fast-check's `path`). */
  readonly path?: string;
  /** How to replay a failure, for the report (default: the test's environment variables). */
  readonly replay?: (seed: number, path: string) => string;
}

export async function assertFuzz(
  arb: fc.Arbitrary<FuzzLine[]>,
  check: (lines: FuzzLine[]) => Promise<string[]>,
  run: FuzzRun,
): Promise<void> {
  const details = await fc.check(
    fc.asyncProperty(arb, async (lines) => {
      const v = await check(lines);
      if (v.length > 0) throw new FuzzFailure(v);
    }),
    { seed: run.seed, numRuns: run.numRuns, ...(run.path ? { path: run.path } : {}) },
  );
  if (!details.failed) return;
  const lines = details.counterexample?.[0] ?? [];
  const cause = details.errorInstance;
  const why = cause instanceof FuzzFailure ? cause.violations : [String(cause)];
  throw new Error(
    [
      `shape fuzzer: property failed after ${details.numRuns} runs (seed ${run.seed}); replay with ${(run.replay ?? envReplay)(run.seed, details.counterexamplePath ?? '')}`,
      ...why.map((w) => `  - ${cut(w, 600)}`),
      '--- shrunk input (NDJSON) ---',
      ...lines.map((l) => cut(l.text, 2000)),
    ].join('\n'),
  );
}

function envReplay(seed: number, path: string): string {
  return `FLOE_FUZZ_SEED=${seed} FLOE_FUZZ_PATH="${path}" npx vitest run test/fuzz`;
}

export class FuzzFailure extends Error {
  constructor(readonly violations: string[]) {
    super(violations.join('\n'));
  }
}

function cut(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n / 2)} …(${s.length - n} chars)… ${s.slice(-n / 2)}`;
}
