/**
 * Reads every record of a Kinesis stream back (each shard from TRIM_HORIZON, GetShardIterator +
 * GetRecords) with the SDK directly, independent of Floe's poller: what a consumer would see.
 */
import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  ListShardsCommand,
} from '@aws-sdk/client-kinesis';

export interface StreamRecord {
  readonly shardId: string;
  readonly sequenceNumber: string;
  readonly partitionKey: string;
  readonly data: Uint8Array;
}

export async function readStream(client: KinesisClient, streamName: string): Promise<StreamRecord[]> {
  const shards = (await client.send(new ListShardsCommand({ StreamName: streamName }))).Shards ?? [];
  const records: StreamRecord[] = [];
  for (const shard of shards) {
    const shardId = shard.ShardId!;
    let iterator = (
      await client.send(
        new GetShardIteratorCommand({
          StreamName: streamName,
          ShardId: shardId,
          ShardIteratorType: 'TRIM_HORIZON',
        }),
      )
    ).ShardIterator;
    while (iterator) {
      const page = await client.send(new GetRecordsCommand({ ShardIterator: iterator }));
      for (const r of page.Records ?? [])
        records.push({
          shardId,
          sequenceNumber: r.SequenceNumber!,
          partitionKey: r.PartitionKey!,
          data: r.Data!,
        });
      // An open shard always has a next iterator: stop once a page is empty and nothing is behind.
      if ((page.Records ?? []).length === 0 && (page.MillisBehindLatest ?? 0) === 0) break;
      iterator = page.NextShardIterator;
    }
  }
  return records;
}
