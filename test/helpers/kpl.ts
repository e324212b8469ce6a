/**
 * The awslabs `aws-kinesis-agg` module (dev dependency): KPL aggregated records written and read
 * by code we did not write, the oracle for Floe's own decoder and encoder (records/framing/kpl.ts).
 */
import { createRequire } from 'node:module';

export interface AwslabsUserRecord {
  readonly partitionKey: string;
  readonly explicitHashKey?: string;
  readonly data: Uint8Array;
}

export const awslabs = createRequire(import.meta.url)('aws-kinesis-agg') as {
  RecordAggregator: new () => {
    addUserRecord(r: { partitionKey: string; explicitHashKey?: string; data: Buffer }): void;
    build(): { partitionKey: string; data: Buffer };
  };
  deaggregateSync(
    r: { data: string; partitionKey: string; sequenceNumber: string },
    computeChecksums: boolean,
    cb: (err: unknown, records?: { partitionKey: string; data: string }[]) => void,
  ): void;
};

/** One aggregated record of `records`, as the awslabs aggregator writes it. */
export function awslabsAggregate(records: readonly AwslabsUserRecord[]): Uint8Array {
  const a = new awslabs.RecordAggregator();
  for (const r of records) a.addUserRecord({ ...r, data: Buffer.from(r.data) });
  return new Uint8Array(a.build().data);
}
