/**
 * Puts records into a Kinesis stream (a real one, or kinesalite): PutRecords in requests of at most
 * 500 records and 5 MiB (the API's limits), resending exactly the entries the service rejected
 * (throughput exceeded) with a growing pause, so every record is sent once accepted.
 */
import http from 'node:http';
import https from 'node:https';
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  PutRecordsCommand,
  type PutRecordsRequestEntry,
} from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { ErrorKind, FloeError } from '../../errors.ts';
import { splitIntoRequests } from '../../records/kinesis-batches.ts';
import { isRetryable, messageOf, nameOf } from './sdk-errors.ts';

export type { KinesisClient } from '@aws-sdk/client-kinesis';

/**
 * A Kinesis client for AWS (the SDK's default credentials; region from the argument or the
 * environment; endpoint from `AWS_ENDPOINT_URL_KINESIS` / `AWS_ENDPOINT_URL` when set, resolved by
 * the SDK), or for an explicit local endpoint such as kinesalite (dummy credentials).
 *
 * Always HTTP/1.1 with keep-alive: the SDK's Kinesis default is HTTP/2 (for SubscribeToShard,
 * which Floe does not use), and kinesalite, moto and other emulators an `AWS_ENDPOINT_URL` may name
 * speak HTTP/1.1 only; AWS serves PutRecords on either.
 */
export function createKinesisClient(opts: { endpoint?: string; region?: string } = {}): KinesisClient {
  const region = opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
  const requestHandler = new NodeHttpHandler({
    httpAgent: new http.Agent({ keepAlive: true, maxSockets: 32 }),
    httpsAgent: new https.Agent({ keepAlive: true, maxSockets: 32 }),
  });
  if (opts.endpoint === undefined) return new KinesisClient({ region, requestHandler });
  return new KinesisClient({
    region,
    endpoint: opts.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler,
  });
}

/** Creates a stream and waits until it is ACTIVE (local streams: a few polls). */
export async function createStream(client: KinesisClient, streamName: string, shards: number): Promise<void> {
  await client.send(new CreateStreamCommand({ StreamName: streamName, ShardCount: shards }));
  for (let i = 0; i < 100; i++) {
    const d = await client.send(new DescribeStreamSummaryCommand({ StreamName: streamName }));
    if (d.StreamDescriptionSummary?.StreamStatus === 'ACTIVE') return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new FloeError(ErrorKind.Unexpected, `Kinesis stream ${streamName} did not become ACTIVE`, {
    retryable: true,
    context: { streamName },
  });
}

export interface ProducerRecord {
  readonly data: Uint8Array;
  readonly partitionKey: string;
}

export interface PutOutcome {
  readonly sent: number;
  /** Entries the service rejected at least once and that were sent again. */
  readonly resent: number;
}

const MAX_ATTEMPTS = 20;

/**
 * Sends `records` in order, split into requests within the PutRecords limits. Records must each
 * be within the 1 MiB record limit (see `KINESIS_LIMITS`); the service rejects a request holding
 * a larger one.
 */
export async function putRecords(
  client: KinesisClient,
  streamName: string,
  records: readonly ProducerRecord[],
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<PutOutcome> {
  let resent = 0;
  for (const request of splitIntoRequests(records)) {
    let entries: PutRecordsRequestEntry[] = request.map((r) => ({
      Data: r.data,
      PartitionKey: r.partitionKey,
    }));
    for (let attempt = 1; entries.length > 0; attempt++) {
      const out = await send(client, streamName, entries);
      const failed = entries.filter((_, j) => Boolean(out.Records?.[j]?.ErrorCode));
      if (failed.length === 0) break;
      if (attempt >= MAX_ATTEMPTS) {
        const why = out.Records?.find((r) => r.ErrorCode)?.ErrorMessage ?? 'rejected';
        throw new FloeError(
          ErrorKind.Unexpected,
          `Kinesis stream ${streamName}: ${failed.length} records still rejected after ${attempt} attempts (${why})`,
          {
            retryable: true,
            context: { streamName },
          },
        );
      }
      resent += failed.length;
      entries = failed;
      await sleep(Math.min(1000, 50 * 2 ** (attempt - 1)));
    }
  }
  return { sent: records.length, resent };
}

/** One PutRecords call; a failed call becomes a FloeError naming the stream (one clear CLI line). */
async function send(client: KinesisClient, streamName: string, entries: PutRecordsRequestEntry[]) {
  try {
    return await client.send(new PutRecordsCommand({ StreamName: streamName, Records: entries }));
  } catch (e) {
    const name = nameOf(e);
    if (name === 'ResourceNotFoundException')
      throw new FloeError(
        ErrorKind.NotFound,
        `Kinesis stream ${streamName} does not exist (${messageOf(e)})`,
        {
          cause: e,
          context: { streamName },
        },
      );
    throw new FloeError(
      ErrorKind.Unexpected,
      `PutRecords to Kinesis stream ${streamName} failed: ${name ? `${name}: ` : ''}${messageOf(e)}`,
      { cause: e, retryable: isRetryable(e), context: { streamName } },
    );
  }
}
