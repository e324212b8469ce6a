import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../lambdas/src/config.ts';
import { isFloeError } from '../../../lambdas/src/errors.ts';
import { type JsonObject, parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';
import { compileConsolidation } from '../../../lambdas/src/routing/consolidate.ts';

const rule = {
  table: 'driver_ride_activity',
  discriminators: ['event_type', 'ride_type'],
  shared: ['event_id', 'event_time'],
  variantColumn: '{ride_type}_ride_attributes',
};
const obj = (text: string) => parseJsonRecord(text) as JsonObject;

describe('compileConsolidation', () => {
  const c = compileConsolidation([rule])!;

  it('keeps discriminators and shared fields top-level and nests the rest in the variant block', () => {
    const r = c(
      obj(
        '{"event_id":"e1","event_time":"t","event_type":"COMPLETED","ride_type":"SHARED","passenger_count":2,"pool":{"score":0.5}}',
      ),
    );
    expect(r).toEqual({
      ok: true,
      table: 'driver_ride_activity',
      variantColumn: 'shared_ride_attributes',
      value: {
        event_type: 'COMPLETED',
        ride_type: 'SHARED',
        event_id: 'e1',
        event_time: 't',
        shared_ride_attributes: { passenger_count: 2n, pool: { score: 0.5 } },
      },
    });
  });

  it('leaves records without the discriminators to ordinary routing, by default', () => {
    expect(c(obj('{"event_type":"ORDER","amount":1}'))).toBeUndefined();
  });

  it('a `when` rule that matches but lacks a discriminator is a failure naming it', () => {
    const w = compileConsolidation([{ ...rule, when: { source: ['rides'] } }])!;
    const r = w(obj('{"source":"rides","ride_type":"SHARED"}'));
    expect(r).toMatchObject({ ok: false, table: 'driver_ride_activity' });
    expect(r && !r.ok && r.detail).toContain('discriminator event_type is missing');
    expect(w(obj('{"source":"orders","event_type":"A","ride_type":"B"}'))).toBeUndefined();
  });

  it('hostile discriminator values always give a legal column or a failure, never a path', () => {
    for (const v of ['../x', '..', 'a/b\\\\c', 'ÉLITE ✈', "x'; DROP TABLE t;--", 'z'.repeat(400)]) {
      const r = c({ event_type: 'A', ride_type: v, other: 1n });
      expect(r).toBeDefined();
      if (r!.ok) expect(r!.variantColumn).toMatch(/^[a-z0-9_]{1,255}$/);
      else expect(r!.detail).toContain('cannot be a column name');
    }
    const long = c({ event_type: 'A', ride_type: 'z'.repeat(400), other: 1n });
    expect(long?.ok).toBe(false);
  });

  it('a variant column colliding with a shared field is a failure', () => {
    const k = compileConsolidation([{ ...rule, shared: ['shared_ride_attributes'] }])!;
    const r = k({ event_type: 'A', ride_type: 'SHARED', shared_ride_attributes: 1n, x: 1n });
    expect(r).toMatchObject({ ok: false });
  });
});

describe('config: consolidate', () => {
  it('parses a rule and rejects bad ones naming the key', () => {
    expect(parseConfig({ consolidate: [rule] }).consolidate).toEqual([rule]);
    const bad: [unknown, string][] = [
      [{ consolidate: {} }, "'consolidate': expected an array"],
      [{ consolidate: [{ ...rule, table: 'Bad Name' }] }, "'consolidate[0].table'"],
      [{ consolidate: [{ ...rule, discriminators: [] }] }, "'consolidate[0].discriminators'"],
      [{ consolidate: [{ ...rule, variantColumn: 'no_placeholder' }] }, "'consolidate[0].variantColumn'"],
      [{ consolidate: [{ ...rule, when: { ride_type: [] } }] }, "'consolidate[0].when.ride_type'"],
      [{ consolidate: [{ ...rule, extra: 1 }] }, "'consolidate[0].extra': unknown key"],
    ];
    for (const [json, message] of bad) {
      try {
        parseConfig(json);
        expect.unreachable(JSON.stringify(json));
      } catch (e) {
        expect(isFloeError(e)).toBe(true);
        expect((e as Error).message).toContain(message);
      }
    }
  });
});
