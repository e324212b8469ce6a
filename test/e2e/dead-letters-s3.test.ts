/**
 * `floe dead-letters list|show --store s3://…`: the dead letters a deployed pipeline keeps in S3
 * (written here by the ingest app through the S3 object store, on s3rver).
 */

import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand } from '@aws-sdk/client-kinesis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStream } from '../../lambdas/src/adapters/aws/kinesis-producer.ts';
import { S3ObjectStore } from '../../lambdas/src/adapters/aws/s3-object-store.ts';
import { startKinesalite } from '../../lambdas/src/adapters/local/emulators.ts';
import { ObjectStoreDeadLetterStore } from '../../lambdas/src/adapters/object-dead-letter-store.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { listCommand, replayCommand, showCommand } from '../../lambdas/src/cli/dead-letters-command.ts';
import { startS3rver } from '../contract/object-store.contract.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { tempDir } from '../helpers/e2e.ts';
import { batchOf, records, startPipeline } from '../helpers/pipeline.ts';

let s3: Awaited<ReturnType<typeof startS3rver>>;
let dynamo: LocalDynamo;
let tmp: ReturnType<typeof tempDir>;
const STORE = 's3://bucket/floe/dead-letters';

const savedEnv = { ...process.env };

beforeAll(async () => {
  // The CLI takes credentials from the environment, as against AWS (s3rver accepts these).
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  s3 = await startS3rver();
  dynamo = await startDynalite();
  tmp = tempDir('floe-dl-s3-');
}, 60_000);

afterAll(async () => {
  process.env.AWS_ACCESS_KEY_ID = savedEnv.AWS_ACCESS_KEY_ID;
  process.env.AWS_SECRET_ACCESS_KEY = savedEnv.AWS_SECRET_ACCESS_KEY;
  if (savedEnv.AWS_ACCESS_KEY_ID === undefined) delete process.env.AWS_ACCESS_KEY_ID;
  if (savedEnv.AWS_SECRET_ACCESS_KEY === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
  await s3?.close();
  await dynamo?.close();
  tmp?.cleanup();
});

describe('floe dead-letters on an S3 store', () => {
  it('lists and shows what the ingest dead-lettered, with shard, sequence number and raw text', async () => {
    const p = await startPipeline(dynamo, tmp.dir);
    const deadLetters = new ObjectStoreDeadLetterStore(new S3ObjectStore(s3.client), STORE);
    const recs = records(['{"event_type":"ORDER","event_id":"a"}', '{not json', '[1,2]']);
    const r = await ingestBatch(p.ingestDeps({ deadLetters }), batchOf('shardId-000000000007', recs));
    expect(r.deadLetters).toEqual({ 'malformed-json': 1, 'not-an-object': 1 });

    const lines: string[] = [];
    await listCommand({ store: STORE, s3Endpoint: s3.endpoint, json: true }, (s) => lines.push(s));
    const listed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(listed.map((d) => [d.reason, d.sequenceNumber, d.shardId, d.raw])).toEqual([
      ['malformed-json', recs[1]!.sequenceNumber, 'shardId-000000000007', '{not json'],
      ['not-an-object', recs[2]!.sequenceNumber, 'shardId-000000000007', '[1,2]'],
    ]);
    const shown: string[] = [];
    await showCommand(String(listed[0]!.key), { store: STORE, s3Endpoint: s3.endpoint }, (s) =>
      shown.push(s),
    );
    expect(shown.join('\n')).toContain('{not json');
    expect(shown.join('\n')).toContain('malformed-json');
  });

  it('replay --to-stream puts the original records back into Kinesis and empties the store', async () => {
    const k = await startKinesalite();
    try {
      await createStream(k.client, 'replay', 1);
      const before: string[] = [];
      await listCommand({ store: STORE, s3Endpoint: s3.endpoint, json: true }, (l) => before.push(l));
      const letters = before.map((l) => JSON.parse(l) as { raw: string; partitionKey: string });
      expect(letters.length).toBe(2);
      const out: string[] = [];
      const code = await replayCommand(
        { store: STORE, s3Endpoint: s3.endpoint, toStream: 'replay', endpoint: k.endpoint },
        (l) => out.push(l),
      );
      expect(code).toBe(0);
      expect(out.join('\n')).toContain('put 2 dead letter(s)');
      const shards = await k.client.send(new ListShardsCommand({ StreamName: 'replay' }));
      const it0 = await k.client.send(
        new GetShardIteratorCommand({
          StreamName: 'replay',
          ShardId: shards.Shards![0]!.ShardId!,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      );
      const got = await k.client.send(new GetRecordsCommand({ ShardIterator: it0.ShardIterator! }));
      expect(got.Records?.map((r) => [new TextDecoder().decode(r.Data), r.PartitionKey])).toEqual(
        letters.map((d) => [d.raw, d.partitionKey]),
      );
      const after: string[] = [];
      await listCommand({ store: STORE, s3Endpoint: s3.endpoint, json: true }, (l) => after.push(l));
      expect(after).toEqual([]);
    } finally {
      await k.close();
    }
  });

  it('rejects a store that is not s3://', async () => {
    await expect(listCommand({ store: '/tmp/x' }, () => undefined)).rejects.toThrow(
      '--store must be an s3:// URI',
    );
  });
});
