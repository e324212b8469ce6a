/**
 * Kinesis PutRecords limits and the split of records into requests that respect them: at most 500
 * records and 5 MiB per request, where a record's size is its data plus its partition key (UTF-8),
 * and at most 1 MiB per record. Pure: the producer adapter and `floe send` share it.
 */

export const KINESIS_LIMITS = {
  recordsPerRequest: 500,
  bytesPerRequest: 5 * 1024 * 1024,
  bytesPerRecord: 1024 * 1024,
} as const;

export interface RequestLimits {
  readonly recordsPerRequest: number;
  readonly bytesPerRequest: number;
}

export interface SizedRecord {
  readonly data: Uint8Array;
  readonly partitionKey: string;
}

/** UTF-8 byte length of a string (lone surrogates count as U+FFFD, 3 bytes, as encoders write them). */
export function utf8ByteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** What a record counts against the 1 MiB record and 5 MiB request limits. */
export function recordSize(r: SizedRecord): number {
  return r.data.length + utf8ByteLength(r.partitionKey);
}

/**
 * Accumulates records in order and hands back a full request as soon as the next record would
 * break a limit, or would repeat a partition key of the request: PutRecords may reject some entries
 * of a request and accept later ones, so a rejected record sent again would land after a later
 * record of its key — the wrong order for an upsert table. With one record per key per request,
 * every key's records land in order. A record larger than a whole request still goes alone (the
 * service rejects it; callers check {@link KINESIS_LIMITS.bytesPerRecord} first).
 */
export class PutRequestBatcher<R extends SizedRecord> {
  private records: R[] = [];
  private bytes = 0;
  private readonly keys = new Set<string>();

  constructor(private readonly limits: RequestLimits = KINESIS_LIMITS) {}

  /** Adds `r`; returns the request it closed (the records before `r`), if any. */
  add(r: R): R[] | undefined {
    const size = recordSize(r);
    let full: R[] | undefined;
    if (
      this.records.length > 0 &&
      (this.records.length >= this.limits.recordsPerRequest ||
        this.bytes + size > this.limits.bytesPerRequest ||
        this.keys.has(r.partitionKey))
    ) {
      full = this.records;
      this.records = [];
      this.bytes = 0;
      this.keys.clear();
    }
    this.records.push(r);
    this.bytes += size;
    this.keys.add(r.partitionKey);
    return full;
  }

  /** The records not yet handed back, if any (the last request). */
  flush(): R[] | undefined {
    if (this.records.length === 0) return undefined;
    const rest = this.records;
    this.records = [];
    this.bytes = 0;
    this.keys.clear();
    return rest;
  }

  get pending(): number {
    return this.records.length;
  }
}

/** Splits records, in order, into requests within the limits. */
export function splitIntoRequests<R extends SizedRecord>(
  records: readonly R[],
  limits: RequestLimits = KINESIS_LIMITS,
): R[][] {
  const batcher = new PutRequestBatcher<R>(limits);
  const requests: R[][] = [];
  for (const r of records) {
    const full = batcher.add(r);
    if (full) requests.push(full);
  }
  const last = batcher.flush();
  if (last) requests.push(last);
  return requests;
}
