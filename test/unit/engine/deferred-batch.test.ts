/**
 * The bytes of a deferred batch (engine/deferred-batch.ts): every record back exactly (sequence
 * numbers far beyond 2^64, any partition key, any data bytes, any arrival time), and a damaged
 * object refused naming where, never read as other records.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasBacklog } from '../../../lambdas/src/app/ingest/defer-batch.ts';
import {
  DEFERRED_CHAIN,
  decodeDeferredBatch,
  encodeDeferredBatch,
  isDeferralChain,
  ROUTED_CHAIN,
} from '../../../lambdas/src/engine/deferred-batch.ts';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import type { KinesisBatchRecord } from '../../../lambdas/src/records/kinesis-event.ts';

const recordArb: fc.Arbitrary<KinesisBatchRecord> = fc.record({
  sequenceNumber: fc.bigInt({ min: 0n, max: 10n ** 60n }).map(String),
  partitionKey: fc.string({ maxLength: 256, unit: 'grapheme' }),
  arrivalMs: fc.oneof(fc.integer({ min: 0, max: 2 ** 45 }), fc.double({ noNaN: true })),
  data: fc.uint8Array({ maxLength: 2000 }),
});

describe('deferred batch bytes', () => {
  it('decode(encode(records)) is the records', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 30 }), (records) => {
        const back = decodeDeferredBatch(encodeDeferredBatch(records), 'x');
        expect(back).toEqual(records.map((r) => ({ ...r, data: Uint8Array.from(r.data) })));
      }),
    );
  });

  it('a truncated, extended or foreign object is DataInvalid naming it', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 1, maxLength: 5 }), fc.nat(), (records, cut) => {
        const bytes = encodeDeferredBatch(records);
        const damaged = [
          bytes.subarray(0, cut % bytes.length),
          Uint8Array.from([...bytes, 0]),
          Uint8Array.from([0x50, ...bytes.subarray(1)]),
        ];
        for (const d of damaged) {
          let error: unknown;
          try {
            decodeDeferredBatch(d, 's3://staging/deferred/a.fldb');
          } catch (e) {
            error = e;
          }
          expect(isFloeError(error, ErrorKind.DataInvalid)).toBe(true);
          expect((error as Error).message).toContain('s3://staging/deferred/a.fldb');
        }
      }),
    );
  });
});

describe('deferral chains', () => {
  it('are no table name (routing never makes a ~) and are told apart', () => {
    expect(isDeferralChain(DEFERRED_CHAIN)).toBe(true);
    expect(isDeferralChain(ROUTED_CHAIN)).toBe(true);
    expect(isDeferralChain('floe_batch')).toBe(false);
    expect(DEFERRED_CHAIN).toContain('~');
  });

  it('a backlog: deferred batches beyond the routed position', () => {
    const tails = (d?: string, r?: string) =>
      new Map([
        ...(d === undefined ? [] : [[DEFERRED_CHAIN, d] as [string, string]]),
        ...(r === undefined ? [] : [[ROUTED_CHAIN, r] as [string, string]]),
      ]);
    expect(hasBacklog(tails())).toBe(false);
    expect(hasBacklog(tails('100'))).toBe(true);
    expect(hasBacklog(tails('100', '90'))).toBe(true);
    expect(hasBacklog(tails('100', '100'))).toBe(false);
    expect(
      hasBacklog(
        tails(
          '49590338271490256608559692538361571095921575989136588899',
          '49590338271490256608559692538361571095921575989136588898',
        ),
      ),
    ).toBe(true);
  });
});
