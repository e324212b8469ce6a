/**
 * The shape fuzzer over `floe load` (see test/fuzz/harness.ts for the properties). Fixed seeds,
 * so a run is repeatable; `npm run fuzz` runs the same properties longer with fresh seeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Duck, openDuck } from '../helpers/e2e.ts';
import { FuzzStats, runLoad, violations } from './harness.ts';
import { sequenceArb } from './json-shapes.ts';
import { assertFuzz } from './run-property.ts';

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck?.close());

const runs = Number(process.env.FLOE_FUZZ_RUNS ?? 600);
const seedOf = (fixed: number) => Number(process.env.FLOE_FUZZ_SEED ?? fixed);
const path = process.env.FLOE_FUZZ_PATH;

describe('shape fuzzer: floe load', () => {
  for (const fastPath of [true, false]) {
    it(`every line lands exactly or is a justified dead letter (${fastPath ? 'fast' : 'generic'} path)`, {
      timeout: 600_000,
    }, async () => {
      const stats = new FuzzStats();
      await assertFuzz(
        sequenceArb(),
        async (lines) => {
          const out = await runLoad(duck, lines, fastPath);
          stats.add(lines, out);
          return violations(lines, out);
        },
        { seed: seedOf(fastPath ? 10_001 : 10_002), numRuns: runs, ...(path ? { path } : {}) },
      );
      // Not vacuous: most records landed, and the grammar's bad lines and values were refused.
      expect(stats.landed, String(stats)).toBeGreaterThan(stats.records / 2);
      expect(stats.deadByReason.get('malformed-json') ?? 0, String(stats)).toBeGreaterThan(0);
      expect(stats.dead - (stats.deadByReason.get('malformed-json') ?? 0), String(stats)).toBeGreaterThan(0);
    });
  }
});
