/**
 * The shape fuzzer over the streaming path: each sequence is cut into Kinesis batches of one
 * shard, ingested by the real ingest app (dynalite ledger) and committed by the real committer
 * after each batch, so records meet a missing table (pending fragments), an existing one (data
 * files) and an evolving one. Properties: test/fuzz/harness.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { type Duck, openDuck } from '../helpers/e2e.ts';
import { FuzzStats, runStreaming, streamingCuts, violations } from './harness.ts';
import { sequenceArb } from './json-shapes.ts';
import { assertFuzz } from './run-property.ts';

let duck: Duck;
let dynamo: LocalDynamo;
beforeAll(async () => {
  duck = await openDuck();
  dynamo = await startDynalite();
});
afterAll(async () => {
  duck?.close();
  await dynamo?.close();
});

const runs = Number(process.env.FLOE_FUZZ_STREAM_RUNS ?? 200);
const seed = Number(process.env.FLOE_FUZZ_SEED ?? 20_001);
const path = process.env.FLOE_FUZZ_PATH;

describe('shape fuzzer: streaming ingest + committer', () => {
  it('every record lands exactly or is a justified dead letter', { timeout: 600_000 }, async () => {
    let run = 0;
    const stats = new FuzzStats();
    await assertFuzz(
      sequenceArb({ maxRecords: 10 }),
      async (lines) => {
        const out = await runStreaming(duck, dynamo, lines, streamingCuts(lines), ++run);
        stats.add(lines, out);
        return violations(lines, out);
      },
      { seed, numRuns: runs, ...(path ? { path } : {}) },
    );
    // Not vacuous: most records landed, and the grammar's bad lines and values were refused.
    expect(stats.landed, String(stats)).toBeGreaterThan(stats.records / 2);
    expect(stats.deadByReason.get('malformed-json') ?? 0, String(stats)).toBeGreaterThan(0);
    expect(stats.dead - (stats.deadByReason.get('malformed-json') ?? 0), String(stats)).toBeGreaterThan(0);
  });
});
