/**
 * The Kinesis Producer Library's aggregated record
 * (https://github.com/awslabs/amazon-kinesis-producer/blob/master/aggregation-format.md):
 * the magic bytes `F3 89 9A C2`, a protobuf `AggregatedRecord`, and the MD5 of that protobuf.
 *
 * ```
 * message AggregatedRecord {
 *   repeated string partition_key_table     = 1;
 *   repeated string explicit_hash_key_table = 2;
 *   repeated Record records                 = 3;
 * }
 * message Record {
 *   required uint64 partition_key_index     = 1;
 *   optional uint64 explicit_hash_key_index = 2;
 *   required bytes  data                    = 3;
 *   repeated Tag    tags                    = 4;   // key = 1, value = 2
 * }
 * ```
 *
 * A hand-written decoder of these two messages, not the awslabs `aws-kinesis-agg` module: that
 * module pulls in protobufjs (~0.5 MB in the bundle; it decodes into objects and copies each
 * record's data) and treats a checksum mismatch as "not aggregated", where Floe must keep the
 * whole record as a dead letter. Here a user record's data is a view into the Kinesis record's
 * bytes (no copy). The tests check this decoder against aggregates the awslabs module writes.
 */
import { createHash } from 'node:crypto';
import { ProtobufError, ProtoReader, ProtoWriter } from './protobuf.ts';

export const KPL_MAGIC = Uint8Array.of(0xf3, 0x89, 0x9a, 0xc2);
const DIGEST_BYTES = 16;

/** One user record of an aggregate. */
export interface UserRecord {
  readonly partitionKey: string;
  readonly explicitHashKey?: string;
  readonly data: Uint8Array;
}

export type Deaggregated =
  | { readonly ok: true; readonly records: UserRecord[] }
  | { readonly ok: false; readonly detail: string };

/** True when `bytes` begin with the KPL magic (the record claims to be an aggregate). */
export function isAggregate(bytes: Uint8Array): boolean {
  return (
    bytes.length >= 4 && bytes[0] === 0xf3 && bytes[1] === 0x89 && bytes[2] === 0x9a && bytes[3] === 0xc2
  );
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The user records of an aggregate, in order; or why it is corrupt (too short, checksum mismatch,
 * malformed protobuf, an index outside its key table, no records). Call only when `isAggregate`.
 */
export function deaggregate(bytes: Uint8Array): Deaggregated {
  if (bytes.length < KPL_MAGIC.length + DIGEST_BYTES) {
    return { ok: false, detail: `KPL aggregate of ${bytes.length} bytes is shorter than magic + MD5` };
  }
  const body = bytes.subarray(KPL_MAGIC.length, bytes.length - DIGEST_BYTES);
  const digest = bytes.subarray(bytes.length - DIGEST_BYTES);
  const actual = createHash('md5').update(body).digest();
  if (!actual.equals(digest)) {
    return {
      ok: false,
      detail: `KPL aggregate of ${bytes.length} bytes: MD5 ${Buffer.from(digest).toString('hex')} does not match its contents (${actual.toString('hex')})`,
    };
  }
  try {
    return { ok: true, records: readAggregate(body) };
  } catch (e) {
    const why = e instanceof ProtobufError || e instanceof TypeError ? e.message : String(e);
    return { ok: false, detail: `KPL aggregate of ${bytes.length} bytes: ${why}` };
  }
}

interface RawRecord {
  pk: number;
  ehk: number | undefined;
  data: Uint8Array;
}

function readAggregate(body: Uint8Array): UserRecord[] {
  const r = new ProtoReader(body);
  const keys: string[] = [];
  const hashKeys: string[] = [];
  const raw: RawRecord[] = [];
  while (!r.done) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === 2) keys.push(text(r.lengthDelimited(), 'partition key'));
    else if (field === 2 && wire === 2) hashKeys.push(text(r.lengthDelimited(), 'explicit hash key'));
    else if (field === 3 && wire === 2) raw.push(readRecord(r.lengthDelimited(), raw.length));
    else r.skip(wire);
  }
  if (raw.length === 0) throw new ProtobufError('it holds no user records');
  return raw.map((x, i): UserRecord => {
    const partitionKey = keys[x.pk];
    if (partitionKey === undefined) {
      throw new ProtobufError(`record ${i}: partition key index ${x.pk} of ${keys.length}`);
    }
    if (x.ehk === undefined) return { partitionKey, data: x.data };
    const explicitHashKey = hashKeys[x.ehk];
    if (explicitHashKey === undefined) {
      throw new ProtobufError(`record ${i}: explicit hash key index ${x.ehk} of ${hashKeys.length}`);
    }
    return { partitionKey, explicitHashKey, data: x.data };
  });
}

function readRecord(bytes: Uint8Array, index: number): RawRecord {
  const r = new ProtoReader(bytes);
  let pk: number | undefined;
  let ehk: number | undefined;
  let data: Uint8Array | undefined;
  while (!r.done) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === 0) pk = r.varint();
    else if (field === 2 && wire === 0) ehk = r.varint();
    else if (field === 3 && wire === 2) data = r.lengthDelimited();
    else r.skip(wire); // tags (field 4) are not kept
  }
  if (pk === undefined) throw new ProtobufError(`record ${index} has no partition key index`);
  if (data === undefined) throw new ProtobufError(`record ${index} has no data`);
  return { pk, ehk, data };
}

function text(bytes: Uint8Array, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new ProtobufError(`a ${what} is not UTF-8`);
  }
}

/**
 * Aggregates user records into one KPL record (what `floe send --aggregate` puts): partition keys
 * de-duplicated into the key table in first-seen order, as the KPL does.
 */
export function aggregate(records: readonly UserRecord[]): Uint8Array {
  const keyIndex = new Map<string, number>();
  const hashIndex = new Map<string, number>();
  const w = new ProtoWriter();
  const enc = new TextEncoder();
  for (const rec of records) {
    if (!keyIndex.has(rec.partitionKey)) {
      keyIndex.set(rec.partitionKey, keyIndex.size);
      w.bytesField(1, enc.encode(rec.partitionKey));
    }
  }
  for (const rec of records) {
    if (rec.explicitHashKey !== undefined && !hashIndex.has(rec.explicitHashKey)) {
      hashIndex.set(rec.explicitHashKey, hashIndex.size);
      w.bytesField(2, enc.encode(rec.explicitHashKey));
    }
  }
  for (const rec of records) {
    const inner = new ProtoWriter().varintField(1, keyIndex.get(rec.partitionKey)!);
    if (rec.explicitHashKey !== undefined) inner.varintField(2, hashIndex.get(rec.explicitHashKey)!);
    inner.bytesField(3, rec.data);
    w.bytesField(3, inner.finish());
  }
  const body = w.finish();
  const digest = createHash('md5').update(body).digest();
  const out = new Uint8Array(KPL_MAGIC.length + body.length + DIGEST_BYTES);
  out.set(KPL_MAGIC, 0);
  out.set(body, KPL_MAGIC.length);
  out.set(digest, KPL_MAGIC.length + body.length);
  return out;
}

/** The bytes one more user record adds to an aggregate (an upper bound), for packing under a size limit. */
export function aggregatedSize(partitionKey: string, data: Uint8Array): number {
  return Buffer.byteLength(partitionKey) + data.length + 24;
}
