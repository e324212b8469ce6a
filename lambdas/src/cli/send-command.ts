/**
 * `floe send FILE…`: replays NDJSON files into a Kinesis stream, local (`floe local up`,
 * `--endpoint`) or deployed (the SDK's default credentials and region). Every non-blank line goes
 * out as one record, byte for byte — malformed lines too, so the pipeline dead-letters them as it
 * would in production. Files are streamed, never read whole; requests respect the PutRecords
 * limits; a line over the 1 MiB record limit is reported, skipped, and makes the exit code
 * {@link EXIT_LINES_SKIPPED}. `--partition-key-field` names the key: a field, a dotted path, or
 * comma-separated candidates tried in order (records/partition-key.ts).
 */
import { promises as fs } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createKinesisClient, type KinesisClient, putRecords } from '../adapters/aws/kinesis-producer.ts';
import { readByteLines } from '../adapters/local/byte-line-reader.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import { aggregate, aggregatedSize } from '../records/framing/kpl.ts';
import { KINESIS_LIMITS, PutRequestBatcher, recordSize } from '../records/kinesis-batches.ts';
import { keyFieldCandidates, partitionKeyOf } from '../records/partition-key.ts';
import {
  EXIT_LINES_SKIPPED,
  type FileSendReport,
  ProgressMeter,
  renderSendReport,
  type SendReport,
  type SkippedLine,
  skippedMessage,
} from './send-report.ts';

export { EXIT_LINES_SKIPPED } from './send-report.ts';

/** The stream `floe local up` creates (LocalStack's default), so `--endpoint` alone suffices. */
export const DEFAULT_STREAM = 'floe-events';

export interface SendOptions {
  readonly stream?: string;
  readonly endpoint?: string;
  readonly region?: string;
  readonly partitionKeyField?: string;
  readonly quiet?: boolean;
  /**
   * Pack lines into KPL aggregates of at most this many bytes (`true`: the KPL's default 51,200),
   * as the Kinesis Producer Library does: each line is a user record of its own.
   */
  readonly aggregate?: boolean | string | number;
  /** Gzip each record (or each aggregate's records, one by one) before it is sent. */
  readonly gzip?: boolean;
}

/** The KPL's default `AggregationMaxSize`. */
export const KPL_DEFAULT_AGGREGATE_BYTES = 51_200;

export interface SendDeps {
  /** Defaults to a client for `--endpoint` / `--region` (closed when done). */
  readonly client?: KinesisClient;
  /** Progress and skipped lines; default stderr. */
  readonly err?: (s: string) => void;
  readonly nowMs?: () => number;
}

interface LineRecord {
  readonly data: Uint8Array;
  readonly partitionKey: string;
  readonly line: number;
}

const RECORD_LIMIT = KINESIS_LIMITS.bytesPerRecord;
const bytesText = (n: number) => `${n.toLocaleString('en-US')} bytes`;

/** Empty, or only spaces and tabs (a CR is already gone): nothing an event could be. */
function isBlank(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0b && b !== 0x0c) return false;
  return true;
}

async function checkFiles(files: readonly string[]): Promise<void> {
  for (const f of files) {
    const st = await fs.stat(f).catch(() => undefined);
    if (!st?.isFile()) throw new FloeError(ErrorKind.NotFound, `input file ${f} does not exist`);
  }
}

export async function sendCommand(
  files: readonly string[],
  opts: SendOptions,
  out: (s: string) => void,
  deps: SendDeps = {},
): Promise<SendReport> {
  if (files.length === 0) throw new FloeError(ErrorKind.ConfigInvalid, 'floe send needs at least one file');
  const spec = opts.partitionKeyField;
  if (spec === '') throw new FloeError(ErrorKind.ConfigInvalid, '--partition-key-field must not be empty');
  const fields = spec === undefined ? undefined : keyFieldCandidates(spec);
  if (spec !== undefined && fields === undefined)
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `--partition-key-field '${spec}' has an empty field name (give comma-separated fields or dotted paths, e.g. after.id,before.id)`,
    );
  const aggregateBytes = aggregateLimit(opts.aggregate);
  await checkFiles(files);
  const stream = opts.stream ?? DEFAULT_STREAM;
  const err = deps.err ?? ((s: string) => process.stderr.write(`${s}\n`));
  const log = opts.quiet ? () => undefined : err;
  const client =
    deps.client ??
    createKinesisClient({
      ...(opts.endpoint === undefined ? {} : { endpoint: opts.endpoint }),
      ...(opts.region === undefined ? {} : { region: opts.region }),
    });
  const meter = new ProgressMeter(log, deps.nowMs ?? Date.now);
  const reports: FileSendReport[] = [];
  const skipped: SkippedLine[] = [];
  const total = { sent: 0, bytes: 0 };
  log(`sending ${files.length} file(s) to stream ${stream}${opts.endpoint ? ` at ${opts.endpoint}` : ''}`);

  const sendFile = async (file: string, report: FileSendReport) => {
    const skip = (line: number, bytes: number, reason: string) => {
      const s = { file, line, bytes, reason };
      skipped.push(s);
      report.skipped++;
      err(skippedMessage(s));
    };
    const put = async (records: LineRecord[]) => {
      try {
        report.resent += (await putRecords(client, stream, records)).resent;
      } catch (e) {
        // Everything before this request is in the stream: say where a re-run could start.
        err(
          `stopped at ${file}:${records[0]!.line}: every line before it was sent (${total.sent} records), it and later lines may not have been`,
        );
        throw e;
      }
      let bytes = 0;
      for (const r of records) bytes += r.data.length;
      report.sent += records.length;
      report.bytes += bytes;
      total.sent += records.length;
      total.bytes += bytes;
      meter.tick(file, total.sent, total.bytes);
    };
    const batcher = new PutRequestBatcher<LineRecord>();
    const packer = aggregateBytes === undefined ? undefined : new AggregatePacker(aggregateBytes);
    const send = async (record: LineRecord) => {
      const full = batcher.add(record);
      if (full) await put(full);
    };
    for await (const lines of readByteLines(file, RECORD_LIMIT)) {
      for (const l of lines) {
        if ('tooLongBytes' in l) {
          skip(l.number, l.tooLongBytes, `${bytesText(l.tooLongBytes)}, over the 1 MiB Kinesis record limit`);
          continue;
        }
        if (isBlank(l.bytes)) {
          report.blank++;
          continue;
        }
        const data = opts.gzip ? gzipSync(l.bytes) : l.bytes;
        const record = { data, partitionKey: partitionKeyOf(l.bytes, fields), line: l.number };
        const size = recordSize(record);
        if (size > RECORD_LIMIT) {
          skip(
            l.number,
            size,
            `${bytesText(l.bytes.length)} + ${size - l.bytes.length} of partition key, over the 1 MiB Kinesis record limit`,
          );
          continue;
        }
        if (packer) {
          report.userRecords = (report.userRecords ?? 0) + 1;
          for (const ready of packer.add(record)) await send(ready);
          continue;
        }
        await send(record);
      }
    }
    const rest = packer?.flush();
    if (rest) await send(rest);
    const last = batcher.flush();
    if (last) await put(last);
  };

  try {
    for (const file of files) {
      const report: FileSendReport = { file, sent: 0, bytes: 0, resent: 0, skipped: 0, blank: 0 };
      reports.push(report);
      await sendFile(file, report);
    }
  } finally {
    if (deps.client === undefined) client.destroy();
  }
  const result: SendReport = {
    stream,
    files: reports,
    sent: total.sent,
    bytes: total.bytes,
    resent: reports.reduce((n, f) => n + f.resent, 0),
    blank: reports.reduce((n, f) => n + f.blank, 0),
    skipped,
    exitCode: skipped.length > 0 ? EXIT_LINES_SKIPPED : 0,
  };
  out(renderSendReport(result, meter.elapsedMs()));
  return result;
}

function aggregateLimit(v: SendOptions['aggregate']): number | undefined {
  if (v === undefined || v === false) return undefined;
  if (v === true) return KPL_DEFAULT_AGGREGATE_BYTES;
  const n = typeof v === 'number' ? v : /^\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < 64 || n > RECORD_LIMIT - 256)
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `--aggregate ${JSON.stringify(v)}: expected the aggregate's size in bytes, 64 to ${RECORD_LIMIT - 256}`,
    );
  return n;
}

/**
 * Packs lines into KPL aggregates of at most `maxBytes`, as the KPL does: a line that does not fit
 * closes the aggregate; an aggregate's partition key is its first record's (the KPL's choice too);
 * a line larger than `maxBytes` is an aggregate of its own (it still fits a Kinesis record).
 */
class AggregatePacker {
  private records: LineRecord[] = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Adds a line; returns the aggregates it closed (none, one, or two when it is an aggregate of its own). */
  add(r: LineRecord): LineRecord[] {
    const size = aggregatedSize(r.partitionKey, r.data);
    const out: LineRecord[] = [];
    if (this.records.length > 0 && this.bytes + size > this.maxBytes) out.push(this.flush()!);
    this.records.push(r);
    this.bytes += size;
    if (size > this.maxBytes) out.push(this.flush()!); // larger than an aggregate may be: alone
    return out;
  }

  flush(): LineRecord | undefined {
    const records = this.records;
    if (records.length === 0) return undefined;
    this.records = [];
    this.bytes = 0;
    return { data: aggregate(records), partitionKey: records[0]!.partitionKey, line: records[0]!.line };
  }
}
