import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import {
  batchItemFailures,
  buildKinesisEvent,
  type KinesisBatchRecord,
  parseKinesisEvent,
} from '../../../lambdas/src/records/kinesis-event.ts';

const SHARD = 'shardId-000000000003';
const ARN = 'arn:aws:kinesis:eu-west-1:123456789012:stream/floe-events';
// Genuine Kinesis sequence numbers: 56 digits, far beyond 2^53.
const SEQ_A = '49590338271490256608559692538361571095921575989136588898';
const SEQ_B = '49590338271490256608559692540925702759324208523137515618';
const SEQ_C = '49590338271490256608559692540925702759324208523137515619';

const text = new TextEncoder();

function rec(sequenceNumber: string, body: string, arrivalMs = 1_545_084_650_987): KinesisBatchRecord {
  return { sequenceNumber, partitionKey: `pk-${body}`, arrivalMs, data: text.encode(body) };
}

function expectInvalid(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    expect(isFloeError(e, ErrorKind.DataInvalid)).toBe(true);
    return;
  }
  throw new Error('expected FloeError DataInvalid');
}

describe('buildKinesisEvent / parseKinesisEvent', () => {
  it('builds the genuine Lambda shape', () => {
    const event = buildKinesisEvent(SHARD, ARN, 'eu-west-1', [rec(SEQ_A, '{"a":1}')]);
    expect(event.Records[0]).toEqual({
      kinesis: {
        kinesisSchemaVersion: '1.0',
        partitionKey: 'pk-{"a":1}',
        sequenceNumber: SEQ_A,
        data: Buffer.from('{"a":1}').toString('base64'),
        approximateArrivalTimestamp: 1545084650.987,
      },
      eventSource: 'aws:kinesis',
      eventVersion: '1.0',
      eventID: `${SHARD}:${SEQ_A}`,
      eventName: 'aws:kinesis:record',
      invokeIdentityArn: expect.any(String),
      awsRegion: 'eu-west-1',
      eventSourceARN: ARN,
    });
  });

  it('round-trips records, including binary payloads and empty data', () => {
    const binary = new Uint8Array([0, 255, 1, 254, 0xc3, 0x28]);
    const records = [
      rec(SEQ_A, 'héllo ✓'),
      { sequenceNumber: SEQ_B, partitionKey: 'b', arrivalMs: 1_700_000_000_001, data: binary },
      { sequenceNumber: SEQ_C, partitionKey: 'c', arrivalMs: 1_700_000_000_002, data: new Uint8Array(0) },
    ];
    const parsed = parseKinesisEvent(
      JSON.parse(JSON.stringify(buildKinesisEvent(SHARD, ARN, 'eu-west-1', records))),
    );
    expect(parsed.shardId).toBe(SHARD);
    expect(parsed.streamArn).toBe(ARN);
    expect(parsed.records.map((r) => r.sequenceNumber)).toEqual([SEQ_A, SEQ_B, SEQ_C]);
    expect(parsed.records.map((r) => r.arrivalMs)).toEqual(records.map((r) => r.arrivalMs));
    expect(parsed.records.map((r) => r.partitionKey)).toEqual(['pk-héllo ✓', 'b', 'c']);
    expect(new TextDecoder().decode(parsed.records[0]?.data)).toBe('héllo ✓');
    expect([...(parsed.records[1]?.data ?? [])]).toEqual([...binary]);
    expect(parsed.records[2]?.data.byteLength).toBe(0);
    expect(parsed.records[1]?.data).toBeInstanceOf(Uint8Array);
  });

  it('orders 56-digit sequence numbers as integers, not as JS numbers', () => {
    // As doubles SEQ_B and SEQ_C are equal; as BigInt C follows B.
    expect(Number(SEQ_B)).toBe(Number(SEQ_C));
    expect(
      parseKinesisEvent(buildKinesisEvent(SHARD, ARN, 'r', [rec(SEQ_B, 'x'), rec(SEQ_C, 'y')])).records,
    ).toHaveLength(2);
    // Lexically '9' > '10', numerically not: a shorter number sorts first.
    expect(
      parseKinesisEvent(buildKinesisEvent(SHARD, ARN, 'r', [rec('9', 'x'), rec('10', 'y')])).records,
    ).toHaveLength(2);
    expectInvalid(() =>
      parseKinesisEvent(buildKinesisEvent(SHARD, ARN, 'r', [rec(SEQ_C, 'x'), rec(SEQ_B, 'y')])),
    );
    expectInvalid(() =>
      parseKinesisEvent(buildKinesisEvent(SHARD, ARN, 'r', [rec('10', 'x'), rec('9', 'y')])),
    );
    expectInvalid(() =>
      parseKinesisEvent(buildKinesisEvent(SHARD, ARN, 'r', [rec(SEQ_B, 'x'), rec(SEQ_B, 'y')])),
    );
  });

  it('rejects malformed envelopes with DataInvalid', () => {
    const good = (): Record<string, unknown> & { Records: Record<string, unknown>[] } =>
      JSON.parse(JSON.stringify(buildKinesisEvent(SHARD, ARN, 'r', [rec(SEQ_A, 'x'), rec(SEQ_B, 'y')])));
    // biome-ignore lint/suspicious/noExplicitAny: the test breaks the envelope on purpose
    const mutate = (f: (r: any) => void) => {
      const e = good();
      f(e.Records[1]);
      return e;
    };
    expect(() => parseKinesisEvent(good())).not.toThrow();
    for (const bad of [
      null,
      'x',
      [],
      {},
      { Records: {} },
      { Records: [] },
      { Records: [null] },
      mutate((r) => {
        r.eventSource = 'aws:sqs';
      }),
      mutate((r) => {
        r.kinesis = 'x';
      }),
      mutate((r) => {
        r.kinesis.sequenceNumber = 1;
      }),
      mutate((r) => {
        r.kinesis.sequenceNumber = '12e5';
      }),
      mutate((r) => {
        r.kinesis.data = 'not base64!';
      }),
      mutate((r) => {
        r.kinesis.data = 'abc';
      }),
      ...[
        'QQ=A',
        'Q!==',
        'AB=CDEFG',
        '====',
        'A===',
        'QQ!=',
        'QU JD'.replace(' ', '='),
        'QUJ-',
        'QUJDQ_==',
        'QUJD\n',
      ].map((bad) =>
        mutate((r) => {
          r.kinesis.data = bad;
        }),
      ),
      mutate((r) => {
        r.kinesis.approximateArrivalTimestamp = '1545084650.987';
      }),
      mutate((r) => {
        r.kinesis.partitionKey = undefined;
      }),
      mutate((r) => {
        r.eventID = SEQ_B;
      }),
      mutate((r) => {
        r.eventID = `${SHARD}:${SEQ_C}`;
      }),
      // Two shards or two streams in one batch: Lambda never does that.
      mutate((r) => {
        r.eventID = `shardId-000000000004:${SEQ_B}`;
      }),
      mutate((r) => {
        r.eventSourceARN = `${ARN}-other`;
      }),
    ]) {
      expectInvalid(() => parseKinesisEvent(bad));
    }
  });
});

describe('batchItemFailures', () => {
  it('is empty for full success', () => {
    expect(batchItemFailures([])).toEqual({ batchItemFailures: [] });
  });

  it('reports only the lowest failed sequence number, compared as BigInt', () => {
    expect(batchItemFailures([SEQ_C, SEQ_A, SEQ_B])).toEqual({
      batchItemFailures: [{ itemIdentifier: SEQ_A }],
    });
    expect(batchItemFailures([SEQ_C, SEQ_B])).toEqual({ batchItemFailures: [{ itemIdentifier: SEQ_B }] });
    expect(batchItemFailures(['10', '9', '100'])).toEqual({ batchItemFailures: [{ itemIdentifier: '9' }] });
  });

  it('never emits a bogus identifier (Lambda would fail the whole batch)', () => {
    expectInvalid(() => batchItemFailures(['']));
    expectInvalid(() => batchItemFailures([SEQ_A, 'abc']));
  });
});

describe('parseKinesisEvent: base64 and sequence order at scale', () => {
  it('decodes every valid padding variant exactly', () => {
    const bodies = ['', 'a', 'ab', 'abc', 'abcd', '\u0000\u00ff', '{"x":"é"}'];
    const recs = bodies.map((b, i) => rec(`${SEQ_A.slice(0, -1)}${i}`, b));
    const parsed = parseKinesisEvent(buildKinesisEvent(SHARD, ARN, 'eu-west-1', recs));
    expect(parsed.records.map((r) => new TextDecoder().decode(r.data))).toEqual(bodies);
  });

  it('orders sequence numbers of different lengths numerically, not as text', () => {
    const short = '99';
    const long = '100';
    const ok = parseKinesisEvent(
      buildKinesisEvent(SHARD, ARN, 'eu-west-1', [rec(short, 'a'), rec(long, 'b')]),
    );
    expect(ok.records.map((r) => r.sequenceNumber)).toEqual(['99', '100']);
    expectInvalid(() =>
      parseKinesisEvent(buildKinesisEvent(SHARD, ARN, 'eu-west-1', [rec(long, 'a'), rec(short, 'b')])),
    );
    // Leading zeros fall back to exact comparison: 099 < 100.
    const padded = parseKinesisEvent(
      buildKinesisEvent(SHARD, ARN, 'eu-west-1', [rec('099', 'a'), rec('100', 'b')]),
    );
    expect(padded.records).toHaveLength(2);
    expectInvalid(() =>
      parseKinesisEvent(buildKinesisEvent(SHARD, ARN, 'eu-west-1', [rec('0100', 'a'), rec('99', 'b')])),
    );
  });
});
