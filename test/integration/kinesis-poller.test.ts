import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  PutRecordsCommand,
} from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KinesisPoller, type KinesisPollerOptions } from '../../lambdas/src/adapters/local/kinesis-poller.ts';
import { compareSequence } from '../../lambdas/src/ports/ledger.ts';
import {
  batchItemFailures,
  type KinesisEvent,
  parseKinesisEvent,
} from '../../lambdas/src/records/kinesis-event.ts';

// kinesalite ships no type declarations; load it through require with the little we use.
interface KinesaliteServer {
  listen(port: number, host: string, cb: (err?: Error) => void): void;
  address(): { port: number };
  close(cb?: (err?: Error) => void): void;
}
const kinesalite = createRequire(import.meta.url)('kinesalite') as (
  options: Record<string, number>,
) => KinesaliteServer;

let server: KinesaliteServer;
let client: KinesisClient;
let streamCount = 0;
let dir: string;

beforeAll(async () => {
  server = kinesalite({ createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 100 });
  await new Promise<void>((resolve, reject) =>
    server.listen(0, '127.0.0.1', (e) => (e ? reject(e) : resolve())),
  );
  client = new KinesisClient({
    endpoint: `http://127.0.0.1:${server.address().port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    // kinesalite speaks HTTP/1.1 only.
    requestHandler: new NodeHttpHandler({ httpAgent: new http.Agent({ keepAlive: true, maxSockets: 32 }) }),
  });
  dir = await mkdtemp(join(tmpdir(), 'floe-kinesis-poller-'));
});

afterAll(async () => {
  client?.destroy();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

const LOW_KEY = '0';
const HIGH_KEY = (2n ** 128n - 1n).toString();

/** A fresh 2-shard stream; returns its name. */
async function freshStream(): Promise<string> {
  const name = `floe-events-${++streamCount}`;
  await client.send(new CreateStreamCommand({ StreamName: name, ShardCount: 2 }));
  for (;;) {
    const d = await client.send(new DescribeStreamSummaryCommand({ StreamName: name }));
    if (d.StreamDescriptionSummary?.StreamStatus === 'ACTIVE') return name;
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Put {
  readonly body: string;
  readonly shardId: string;
  readonly sequenceNumber: string;
}

/** Puts `count` records, alternating between the two shards; returns them in put order. */
async function put(stream: string, count: number, from = 0): Promise<Put[]> {
  const bodies = Array.from({ length: count }, (_, i) => `{"n":${from + i}}`);
  const res = await client.send(
    new PutRecordsCommand({
      StreamName: stream,
      Records: bodies.map((b, i) => ({
        Data: new TextEncoder().encode(b),
        PartitionKey: `pk-${from + i}`,
        ExplicitHashKey: i % 2 === 0 ? LOW_KEY : HIGH_KEY,
      })),
    }),
  );
  expect(res.FailedRecordCount ?? 0).toBe(0);
  return (res.Records ?? []).map((r, i) => ({
    body: bodies[i] as string,
    shardId: r.ShardId as string,
    sequenceNumber: r.SequenceNumber as string,
  }));
}

interface Delivery {
  readonly shardId: string;
  readonly sequenceNumber: string;
  readonly body: string;
}

function deliveries(event: KinesisEvent): Delivery[] {
  const batch = parseKinesisEvent(event);
  return batch.records.map((r) => ({
    shardId: batch.shardId,
    sequenceNumber: r.sequenceNumber,
    body: new TextDecoder().decode(r.data),
  }));
}

function byShard<T extends { shardId: string }>(items: readonly T[]): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of items) m.set(x.shardId, [...(m.get(x.shardId) ?? []), x]);
  return m;
}

function poller(stream: string, o: Partial<KinesisPollerOptions> & Pick<KinesisPollerOptions, 'handler'>) {
  return new KinesisPoller({ client, streamName: stream, batchSize: 50, pollIntervalMs: 20, ...o });
}

describe('KinesisPoller (kinesalite)', () => {
  it('delivers every record exactly once, in sequence order per shard, and resumes from its checkpoint file', async () => {
    const stream = await freshStream();
    const puts = await put(stream, 300);
    const shards = byShard(puts);
    expect(shards.size).toBe(2);

    const got: Delivery[] = [];
    const events: KinesisEvent[] = [];
    let inFlight = new Map<string, number>();
    let overlapped = false;
    const checkpointFile = join(dir, 'checkpoints', `${stream}.json`);
    const handler = async (event: KinesisEvent) => {
      const d = deliveries(event);
      const shard = d[0]?.shardId as string;
      if ((inFlight.get(shard) ?? 0) > 0) overlapped = true;
      inFlight.set(shard, 1);
      await new Promise((r) => setTimeout(r, 1));
      inFlight.set(shard, 0);
      events.push(event);
      got.push(...d);
    };
    const p = poller(stream, { handler, checkpointFile });
    await p.start();
    await p.drain();
    await p.stop();

    expect(overlapped).toBe(false); // ParallelizationFactor 1: one in-flight batch per shard
    expect(got).toHaveLength(300);
    for (const [shardId, expected] of shards) {
      const delivered = got.filter((g) => g.shardId === shardId);
      expect(delivered.map((g) => g.sequenceNumber)).toEqual(expected.map((e) => e.sequenceNumber));
      expect(delivered.map((g) => g.body)).toEqual(expected.map((e) => e.body));
      for (let i = 1; i < delivered.length; i++) {
        expect(
          compareSequence(
            (delivered[i - 1] as Delivery).sequenceNumber,
            (delivered[i] as Delivery).sequenceNumber,
          ),
        ).toBe(-1);
      }
    }
    for (const e of events) {
      expect(e.Records.length).toBeLessThanOrEqual(50);
      expect(e.Records[0]?.eventSourceARN).toMatch(
        new RegExp(`^arn:aws:kinesis:us-east-1:\\d+:stream/${stream}$`),
      );
      expect(e.Records[0]?.awsRegion).toBe('us-east-1');
    }
    const stats = p.stats();
    expect(stats.running).toBe(false);
    expect(stats.shards.map((s) => s.checkpoint)).toEqual(
      [...shards.values()].map((v) => v.at(-1)?.sequenceNumber),
    );
    const saved = JSON.parse(await readFile(checkpointFile, 'utf8'));
    expect(saved).toEqual(Object.fromEntries(stats.shards.map((s) => [s.shardId, s.checkpoint])));

    // A new poller on the same checkpoint file delivers only what was put since.
    const more = await put(stream, 10, 300);
    got.length = 0;
    inFlight = new Map();
    const p2 = poller(stream, { handler, checkpointFile });
    await p2.start();
    await p2.drain();
    await p2.stop();
    expect(got.map((g) => g.sequenceNumber).sort()).toEqual(more.map((m) => m.sequenceNumber).sort());
  });

  // K mid-batch (index 70: batches of 50) and K first in its batch (index 50: no progress, so the
  // batch counts as a function error and is bisected — K is still re-delivered first).
  it.each([70, 50])(
    're-delivers from the lowest reported failure: K (#%i) and everything after it in that shard',
    async (kIndex) => {
      const stream = await freshStream();
      const puts = await put(stream, 300);
      const shards = [...byShard(puts).entries()];
      const [failShard, failRecords] = shards[0] as [string, Put[]];
      const [otherShard, otherRecords] = shards[1] as [string, Put[]];
      const k = failRecords[kIndex] as Put;
      const later = failRecords[kIndex + 2] as Put; // also reported: must not matter, the lowest wins

      const got: Delivery[] = [];
      let failed = false;
      const p = poller(stream, {
        handler: async (event) => {
          const d = deliveries(event);
          got.push(...d);
          if (!failed && d.some((x) => x.sequenceNumber === k.sequenceNumber)) {
            failed = true;
            return batchItemFailures([later.sequenceNumber, k.sequenceNumber]);
          }
          return { batchItemFailures: [] };
        },
      });
      await p.start();
      await p.drain();
      await p.stop();

      const mine = got.filter((g) => g.shardId === failShard).map((g) => g.sequenceNumber);
      const seqs = failRecords.map((r) => r.sequenceNumber);
      // Delivered up to the end of K's batch, then K and everything after it again, exactly in order.
      const firstK = mine.indexOf(k.sequenceNumber);
      const secondK = mine.indexOf(k.sequenceNumber, firstK + 1);
      expect(firstK).toBe(kIndex);
      expect(secondK).toBeGreaterThan(firstK);
      expect(mine.slice(0, secondK)).toEqual(seqs.slice(0, secondK));
      expect(mine.slice(secondK)).toEqual(seqs.slice(kIndex));
      expect(secondK).toBe(100); // the rest of K's batch (up to record 99) was delivered before the replay
      // The other shard is unaffected: exactly once.
      expect(got.filter((g) => g.shardId === otherShard).map((g) => g.sequenceNumber)).toEqual(
        otherRecords.map((r) => r.sequenceNumber),
      );
      const failStats = p.stats().shards.find((s) => s.shardId === failShard);
      expect(failStats?.partialFailures).toBe(1);
      expect(failStats?.checkpoint).toBe(seqs.at(-1));
    },
  );

  it('bisects a batch with a poison record down to that record, retries it, then hands it to onFailure', async () => {
    const stream = await freshStream();
    const puts = await put(stream, 300);
    const poison = puts[131] as Put;
    const maxRetries = 2;

    const succeeded: Delivery[] = [];
    const poisonAlone: number[] = [];
    const failures: { event: KinesisEvent; error: unknown }[] = [];
    const p = poller(stream, {
      batchSize: 100,
      maxRetries,
      handler: async (event) => {
        const d = deliveries(event);
        if (d.some((x) => x.sequenceNumber === poison.sequenceNumber)) {
          if (d.length === 1) poisonAlone.push(1);
          throw new Error('poison');
        }
        succeeded.push(...d);
      },
      onFailure: (event, error) => {
        failures.push({ event, error });
      },
    });
    await p.start();
    await p.drain();
    await p.stop();

    expect(failures).toHaveLength(1);
    expect(failures[0]?.event.Records.map((r) => r.kinesis.sequenceNumber)).toEqual([poison.sequenceNumber]);
    expect(failures[0]?.error).toEqual(new Error('poison'));
    expect(poisonAlone).toHaveLength(1 + maxRetries);
    // Every other record was delivered (successfully), exactly once, in order per shard.
    for (const [shardId, expected] of byShard(puts.filter((x) => x !== poison))) {
      expect(succeeded.filter((s) => s.shardId === shardId).map((s) => s.sequenceNumber)).toEqual(
        expected.map((e) => e.sequenceNumber),
      );
    }
    const stats = p.stats().shards.find((s) => s.shardId === poison.shardId);
    expect(stats?.batchesFailed).toBe(1);
    expect(stats?.recordsFailed).toBe(1);
    expect(stats?.bisections).toBeGreaterThanOrEqual(6); // 100 → 50 → 25 → 13 → 7 → 4 → 2 → 1
  });
});
