import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aggregate,
  deaggregate,
  isAggregate,
  KPL_MAGIC,
} from '../../../../lambdas/src/records/framing/kpl.ts';
import { awslabs, awslabsAggregate } from '../../../helpers/kpl.ts';

const userRecord = fc.record(
  {
    partitionKey: fc.string({ minLength: 1, maxLength: 20, unit: 'grapheme' }),
    explicitHashKey: fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }).map(String),
    data: fc.uint8Array({ minLength: 1, maxLength: 300 }),
  },
  { requiredKeys: ['partitionKey', 'data'] },
);

describe('KPL aggregated records', () => {
  it('reads what the awslabs aggregator writes: every user record, in order, byte for byte', () => {
    // The module keeps its partition-key table in a plain object, so a key named `__proto__` gets
    // no index and the aggregate it writes is malformed (Floe's own `aggregate` handles it).
    const awslabsKey = userRecord.filter((r) => r.partitionKey !== '__proto__');
    fc.assert(
      fc.property(fc.array(awslabsKey, { minLength: 1, maxLength: 40 }), (records) => {
        const bytes = awslabsAggregate(records);
        expect(isAggregate(bytes)).toBe(true);
        const out = deaggregate(bytes);
        expect(out.ok).toBe(true);
        if (!out.ok) return;
        expect(out.records.map((r) => r.partitionKey)).toEqual(records.map((r) => r.partitionKey));
        // (Explicit hash keys are not compared here: the module writes its hash-key table from a
        // plain object, so numeric keys come out in ascending order, not in the indexes it gave.)
        expect(out.records.map((r) => Buffer.from(r.data).toString('hex'))).toEqual(
          records.map((r) => Buffer.from(r.data).toString('hex')),
        );
      }),
      { numRuns: 150 },
    );
  });

  it('reads back what it writes, explicit hash keys included', () => {
    fc.assert(
      fc.property(fc.array(userRecord, { minLength: 1, maxLength: 40 }), (records) => {
        const out = deaggregate(aggregate(records));
        expect(out).toEqual({
          ok: true,
          records: records.map((r) => ({ ...r, data: expect.anything() })),
        });
        if (out.ok) expect(out.records.map((r) => [...r.data])).toEqual(records.map((r) => [...r.data]));
      }),
      { numRuns: 150 },
    );
  });

  it('writes what the awslabs deaggregator reads (floe send --aggregate)', () => {
    fc.assert(
      fc.property(fc.array(userRecord, { minLength: 1, maxLength: 40 }), (records) => {
        const bytes = aggregate(records);
        let read: { partitionKey: string; data: string }[] | undefined;
        awslabs.deaggregateSync(
          { data: Buffer.from(bytes).toString('base64'), partitionKey: 'p', sequenceNumber: '1' },
          true,
          (err, rs) => {
            expect(err).toBeFalsy();
            read = rs;
          },
        );
        expect(read?.map((r) => r.partitionKey)).toEqual(records.map((r) => r.partitionKey));
        expect(read?.map((r) => Buffer.from(r.data, 'base64').toString('hex'))).toEqual(
          records.map((r) => Buffer.from(r.data).toString('hex')),
        );
      }),
      { numRuns: 150 },
    );
  });

  it('any damaged byte or a cut makes the whole aggregate corrupt, never a partial read', () => {
    fc.assert(
      fc.property(
        fc.array(userRecord, { minLength: 1, maxLength: 10 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (records, at, flip) => {
          const bytes = aggregate(records);
          const i = KPL_MAGIC.length + (at % (bytes.length - KPL_MAGIC.length));
          const damaged = Uint8Array.from(bytes);
          damaged[i]! ^= flip;
          const out = deaggregate(damaged);
          expect(out.ok).toBe(false);
          if (!out.ok) expect(out.detail).toMatch(/MD5|KPL aggregate/);
          expect(deaggregate(bytes.subarray(0, i)).ok).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a well-formed checksum over a broken protobuf is corrupt too, and says why', () => {
    // Magic + a body whose only field claims 100 bytes it does not have + the body's true MD5.
    const body = Uint8Array.of(0x1a, 100, 1, 2, 3);
    const digest = new Uint8Array(createHash('md5').update(body).digest());
    const out = deaggregate(Uint8Array.from([...KPL_MAGIC, ...body, ...digest]));
    expect(out).toEqual({ ok: false, detail: expect.stringContaining('runs past the end') });
    // An index past the partition key table.
    const rec = Uint8Array.of(0x08, 5, 0x1a, 1, 0x7b);
    const body2 = Uint8Array.of(0x0a, 1, 0x61, 0x1a, rec.length, ...rec);
    const d2 = new Uint8Array(createHash('md5').update(body2).digest());
    expect(deaggregate(Uint8Array.from([...KPL_MAGIC, ...body2, ...d2]))).toEqual({
      ok: false,
      detail: expect.stringContaining('partition key index 5 of 1'),
    });
  });
});
