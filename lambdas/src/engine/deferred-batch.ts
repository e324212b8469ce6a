/**
 * Batches staged as they arrived, for the committer to route (app/route-deferred.ts): the bytes of
 * one deferred batch's records, and the two ledger chains per shard that say what is deferred and
 * what is routed.
 *
 * **Chains.** A deferred batch is an entry of the shard's `floe~batch` chain (one file, the records
 * below). Once the committer has routed the chain up to a position — every record staged in its
 * table's own chain or dead-lettered — it appends an entry ending there to the shard's
 * `floe~routed` chain. Both are ordinary ledger chains (the append protocol, tails and retries are
 * the ledger's); `~` never occurs in a table name, so no table's chain can be either. While
 * `floe~batch` ends beyond `floe~routed` on a shard, the ingest defers every batch of it: a table's
 * own chain then only ever grows in stream order.
 *
 * **Bytes.** `FLDB`, a version byte (1), the record count (u32), then per record: the sequence
 * number (u16 length + ASCII digits), the partition key (u16 length + UTF-8), the arrival time
 * (f64, epoch ms) and the data (u32 length + bytes), all big-endian. The data is kept exactly as
 * Kinesis delivered it (framings still on), so routing it later is routing it now.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import type { KinesisBatchRecord } from '../records/kinesis-event.ts';

/** The shard's chain of deferred batches. */
export const DEFERRED_CHAIN = 'floe~batch';
/** The shard's chain of routed positions. */
export const ROUTED_CHAIN = 'floe~routed';

/** Whether a ledger chain name is one of these two (never a table's). */
export function isDeferralChain(name: string): boolean {
  return name === DEFERRED_CHAIN || name === ROUTED_CHAIN;
}

const MAGIC = [0x46, 0x4c, 0x44, 0x42]; // FLDB
const VERSION = 1;
const utf8 = new TextEncoder();
const utf8d = new TextDecoder('utf-8', { fatal: true });

export function encodeDeferredBatch(records: readonly KinesisBatchRecord[]): Uint8Array {
  const keys = records.map((r) => utf8.encode(r.partitionKey));
  let size = 9;
  records.forEach((r, i) => {
    if (r.sequenceNumber.length > 0xffff || keys[i]!.length > 0xffff)
      throw new FloeError(
        ErrorKind.DataInvalid,
        `deferred batch: record ${r.sequenceNumber} has an oversized key`,
      );
    size += 2 + r.sequenceNumber.length + 2 + keys[i]!.length + 8 + 4 + r.data.length;
  });
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  out[4] = VERSION;
  view.setUint32(5, records.length);
  let at = 9;
  records.forEach((r, i) => {
    view.setUint16(at, r.sequenceNumber.length);
    at += 2;
    for (let j = 0; j < r.sequenceNumber.length; j++) out[at++] = r.sequenceNumber.charCodeAt(j);
    const key = keys[i]!;
    view.setUint16(at, key.length);
    out.set(key, at + 2);
    at += 2 + key.length;
    view.setFloat64(at, r.arrivalMs);
    view.setUint32(at + 8, r.data.length);
    out.set(r.data, at + 12);
    at += 12 + r.data.length;
  });
  return out;
}

/** The records of a deferred batch; `where` names it in errors (DataInvalid). */
export function decodeDeferredBatch(bytes: Uint8Array, where: string): KinesisBatchRecord[] {
  const bad = (why: string) =>
    new FloeError(ErrorKind.DataInvalid, `deferred batch ${where}: ${why}`, { context: { where } });
  if (bytes.length < 9 || MAGIC.some((b, i) => bytes[i] !== b))
    throw bad('not a deferred batch (no FLDB header)');
  if (bytes[4] !== VERSION) throw bad(`unknown version ${bytes[4]}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(5);
  const out: KinesisBatchRecord[] = [];
  let at = 9;
  const need = (n: number) => {
    if (at + n > bytes.length) throw bad(`truncated at byte ${at} (record ${out.length + 1} of ${count})`);
  };
  for (let i = 0; i < count; i++) {
    need(2);
    const seqLen = view.getUint16(at);
    need(2 + seqLen);
    let sequenceNumber = '';
    for (let j = 0; j < seqLen; j++) sequenceNumber += String.fromCharCode(bytes[at + 2 + j]!);
    if (!/^\d+$/.test(sequenceNumber)) throw bad(`record ${i + 1}: sequence number '${sequenceNumber}'`);
    at += 2 + seqLen;
    need(2);
    const keyLen = view.getUint16(at);
    need(2 + keyLen + 12);
    const partitionKey = utf8d.decode(bytes.subarray(at + 2, at + 2 + keyLen));
    at += 2 + keyLen;
    const arrivalMs = view.getFloat64(at);
    const dataLen = view.getUint32(at + 8);
    at += 12;
    need(dataLen);
    out.push({ sequenceNumber, partitionKey, arrivalMs, data: bytes.slice(at, at + dataLen) });
    at += dataLen;
  }
  if (at !== bytes.length) throw bad(`${bytes.length - at} bytes after the last record`);
  return out;
}
