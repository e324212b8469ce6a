import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareSequence, kinesisSequenceOf } from '../../../../lambdas/src/ports/ledger.ts';
import { deframe } from '../../../../lambdas/src/records/framing/deframe.ts';
import type { KinesisBatchRecord } from '../../../../lambdas/src/records/kinesis-event.ts';
import { awslabsAggregate } from '../../../helpers/kpl.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();
const SEQ = 49590338271490256608559692538361571095921575989136588898n;

/** One Kinesis record as a producer writes it, and what the model says it holds. */
interface Produced {
  readonly data: Uint8Array;
  /** The records it yields, as JSON values (their texts compared after parsing). */
  readonly yields: readonly unknown[];
  readonly corrupt?: string;
  readonly control?: boolean;
}

const event = fc.record({ event_type: fc.constantFrom('order', 'user'), id: fc.nat(), note: fc.string() });

function kpl(events: readonly unknown[]): Uint8Array {
  return awslabsAggregate(
    events.map((e, i) => ({ partitionKey: `k${i % 3}`, data: Buffer.from(JSON.stringify(e)) })),
  );
}

const logBatch = (events: readonly { message: string }[], control = false) =>
  gzipSync(
    JSON.stringify({
      messageType: control ? 'CONTROL_MESSAGE' : 'DATA_MESSAGE',
      owner: '123456789012',
      logGroup: '/aws/lambda/orders',
      logStream: '2026/12/02/[$LATEST]0123',
      subscriptionFilters: ['floe'],
      logEvents: events.map((e, i) => ({ id: `3${i}`, timestamp: 1764700000000 + i, ...e })),
    }),
  );

const produced: fc.Arbitrary<Produced> = fc.oneof(
  event.map((e) => ({ data: enc.encode(JSON.stringify(e)), yields: [e] })),
  fc.array(event, { minLength: 1, maxLength: 8 }).map((es) => ({ data: kpl(es), yields: es })),
  fc
    .array(event, { minLength: 1, maxLength: 8 })
    .map((es) => ({ data: gzipSync(`${es.map((e) => JSON.stringify(e)).join('\n')}\n`), yields: es })),
  fc.array(event, { minLength: 1, maxLength: 5 }).map((es) => ({
    // A structured log line (JSON message) per event.
    data: logBatch(es.map((e) => ({ message: JSON.stringify(e) }))),
    yields: es.map((e, i) => ({
      ...e,
      log_group: '/aws/lambda/orders',
      log_stream: '2026/12/02/[$LATEST]0123',
      log_event_id: `3${i}`,
      log_time: new Date(1764700000000 + i).toISOString(),
    })),
  })),
  fc.constant({ data: logBatch([{ message: 'CWL CONTROL MESSAGE' }], true), yields: [], control: true }),
  fc.array(event, { minLength: 1, maxLength: 4 }).map((es) => {
    const bytes = kpl(es);
    bytes[bytes.length - 1]! ^= 1; // the MD5 no longer matches
    return { data: bytes, yields: [], corrupt: 'corrupt-aggregate' };
  }),
  fc.constant({ data: gzipSync(Buffer.alloc(200_000, 0x20)), yields: [], corrupt: 'decompressed-too-large' }),
);

function stream(ps: readonly Produced[]): KinesisBatchRecord[] {
  return ps.map((p, i) => ({
    sequenceNumber: (SEQ + BigInt(i * 1000)).toString(),
    partitionKey: `pk-${i}`,
    arrivalMs: 1000 + i,
    data: p.data,
  }));
}

const OPTS = { maxDecompressedBytes: 100_000 };

describe('deframing a shard', () => {
  it('yields every record the model says, in order, each at its own increasing position', () => {
    fc.assert(
      fc.property(fc.array(produced, { minLength: 1, maxLength: 25 }), (ps) => {
        const recs = stream(ps);
        const out = deframe(recs, OPTS);
        expect(out.records.map((r) => JSON.parse(dec.decode(r.data)))).toEqual(ps.flatMap((p) => p.yields));
        for (let i = 1; i < out.records.length; i++) {
          expect(compareSequence(out.records[i - 1]!.sequenceNumber, out.records[i]!.sequenceNumber)).toBe(
            -1,
          );
        }
        // Each record sits under its own Kinesis record (what a batch item failure names).
        const owner = ps.flatMap((p, i) => p.yields.map(() => recs[i]!.sequenceNumber));
        expect(out.records.map((r) => kinesisSequenceOf(r.sequenceNumber))).toEqual(owner);
        // A corrupt record is one dead letter with the bytes as they came, at its Kinesis position.
        const bad = ps.flatMap((p, i) => (p.corrupt ? [[recs[i]!.sequenceNumber, p.corrupt, p.data]] : []));
        expect(out.rejected.map((x) => [x.record.sequenceNumber, x.reason, x.record.data])).toEqual(bad);
        expect(out.counts.controlMessages).toBe(ps.filter((p) => p.control).length);
      }),
      { numRuns: 120 },
    );
  });

  it('positions do not depend on how the stream is cut into batches (retries, bisection)', () => {
    fc.assert(
      fc.property(fc.array(produced, { minLength: 2, maxLength: 20 }), fc.nat(), (ps, cut) => {
        const recs = stream(ps);
        const at = 1 + (cut % (recs.length - 1));
        const whole = deframe(recs, OPTS).records.map((r) => [r.sequenceNumber, dec.decode(r.data)]);
        const halves = [recs.slice(0, at), recs.slice(at)].flatMap((b) =>
          deframe(b, OPTS).records.map((r) => [r.sequenceNumber, dec.decode(r.data)]),
        );
        expect(halves).toEqual(whole);
      }),
      { numRuns: 80 },
    );
  });

  it('leaves a stream with nothing framed as it is: the same array, the same records', () => {
    const recs = stream([
      { data: enc.encode('{"a":1}'), yields: [] },
      { data: enc.encode('not json'), yields: [] },
    ]);
    const out = deframe(recs);
    expect(out.records).toBe(recs);
    expect(out.rejected).toEqual([]);
  });

  it('KPL user records keep their own partition keys; a sub-record position names the Kinesis record', () => {
    const recs = stream([{ data: kpl([{ a: 1 }, { a: 2 }, { a: 3 }]), yields: [] }]);
    const out = deframe(recs);
    expect(out.records.map((r) => [r.sequenceNumber, r.partitionKey])).toEqual([
      [recs[0]!.sequenceNumber, 'k0'],
      [`${recs[0]!.sequenceNumber}.1`, 'k1'],
      [`${recs[0]!.sequenceNumber}.2`, 'k2'],
    ]);
    expect(out.counts).toMatchObject({ aggregates: 1, aggregatedRecords: 3 });
  });

  it('CloudWatch Logs: a message that is not JSON is kept as text, never dropped', () => {
    const recs = stream([
      { data: logBatch([{ message: 'START RequestId: 42' }, { message: '{"level":"INFO"}' }]), yields: [] },
    ]);
    const rows = deframe(recs).records.map((r) => JSON.parse(dec.decode(r.data)));
    expect(rows).toEqual([
      expect.objectContaining({ message: 'START RequestId: 42', log_group: '/aws/lambda/orders' }),
      expect.objectContaining({ level: 'INFO', log_time: '2025-12-02T18:26:40.001Z' }),
    ]);
    expect(rows[1]).not.toHaveProperty('message');
  });

  it('an invalid log batch is a dead letter; a record that merely has a messageType is a record', () => {
    const broken = gzipSync(JSON.stringify({ messageType: 'DATA_MESSAGE', logEvents: [{ message: 'x' }] }));
    const plain = enc.encode('{"messageType":"chat","text":"hi"}');
    const out = deframe(
      stream([
        { data: broken, yields: [] },
        { data: plain, yields: [] },
      ]),
    );
    expect(out.rejected.map((x) => x.reason)).toEqual(['invalid-log-batch']);
    expect(out.records.map((r) => dec.decode(r.data))).toEqual(['{"messageType":"chat","text":"hi"}']);
  });

  it('EventBridge: the detail with the envelope beside it; a detail field named like the envelope is kept apart', () => {
    const ev = {
      version: '0',
      id: 'e-1',
      'detail-type': 'Order Placed',
      source: 'com.shop',
      account: '123456789012',
      time: '2026-12-02T10:00:00Z',
      region: 'eu-west-1',
      resources: ['arn:aws:s3:::b'],
      detail: { order_id: 12345678901234567890n.toString(), total: 2.5, source: 'web' },
    };
    const text = JSON.stringify(ev).replace('"12345678901234567890"', '12345678901234567890');
    const out = deframe(stream([{ data: enc.encode(text), yields: [] }]));
    expect(dec.decode(out.records[0]!.data)).toBe(
      '{"version":"0","id":"e-1","detail-type":"Order Placed","source":"com.shop","account":"123456789012","time":"2026-12-02T10:00:00Z","region":"eu-west-1","resources":["arn:aws:s3:::b"],"order_id":12345678901234567890,"total":2.5,"detail_source":"web"}',
    );
    expect(out.counts.events).toBe(1);
    // Framings can be turned off: then the envelope is the record.
    expect(
      deframe(stream([{ data: enc.encode(text), yields: [] }]), { framings: new Set() }).records[0]!.data,
    ).toEqual(enc.encode(text));
  });
});
