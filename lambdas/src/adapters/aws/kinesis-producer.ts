/**
 * Puts records into a Kinesis stream (a real one, or kinesalite): PutRecords in chunks of 500
 * (the API's limit), resending exactly the entries the service rejected (throughput exceeded) with
 * a growing pause, so every record is sent once accepted.
 */
import { type KinesisClient, PutRecordsCommand, type PutRecordsRequestEntry } from '@aws-sdk/client-kinesis';
import { ErrorKind, FloeError } from '../../errors.ts';

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

export async function putRecords(
  client: KinesisClient,
  streamName: string,
  records: readonly ProducerRecord[],
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<PutOutcome> {
  let resent = 0;
  for (let i = 0; i < records.length; i += 500) {
    let entries: PutRecordsRequestEntry[] = records
      .slice(i, i + 500)
      .map((r) => ({ Data: r.data, PartitionKey: r.partitionKey }));
    for (let attempt = 1; entries.length > 0; attempt++) {
      const out = await client.send(new PutRecordsCommand({ StreamName: streamName, Records: entries }));
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
