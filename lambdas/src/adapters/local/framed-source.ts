/**
 * `floe load` of files that producers' framings wrap (records/framing): a gzip or zstd file of
 * NDJSON (decompressed as it is read), and files whose lines are CloudWatch Logs subscription
 * batches or EventBridge events (each line deframed into its records, as the ingest does). The
 * framing is decided once per file from its first bytes and its first non-blank line; a plain
 * NDJSON file is none of these and is read as before (`sniffFraming` returns undefined).
 */
import { open } from 'node:fs/promises';
import * as zlib from 'node:zlib';
import { Decompress } from 'fzstd';
import type { FloeConfig } from '../../config.ts';
import type { DeadLetter } from '../../engine/dead-letters.ts';
import { looksLikeLogBatch } from '../../records/framing/cloudwatch-logs.ts';
import { type Compression, compressionOf, inflate } from '../../records/framing/compression.ts';
import { deframe, deframeOptionsOf } from '../../records/framing/deframe.ts';
import { looksLikeEvent } from '../../records/framing/eventbridge.ts';

export interface FileFraming {
  /** The file is compressed as a whole. */
  readonly compression?: Compression;
  /** Its lines are framed documents (CloudWatch Logs batches, EventBridge events): deframe each. */
  readonly framedLines: boolean;
}

const SNIFF_BYTES = 256 * 1024;
const utf8 = new TextDecoder('utf-8');

/** How the file is framed, or undefined for plain NDJSON (or when the config turns framings off). */
export async function sniffFraming(path: string, config: FloeConfig): Promise<FileFraming | undefined> {
  const framings = config.source.framings;
  const head = await readHead(path, SNIFF_BYTES);
  const kind = compressionOf(head);
  const compression = kind !== undefined && framings.has(kind) ? kind : undefined;
  const text = compression === undefined ? head : decompressHead(compression, head);
  const first = firstLine(text);
  const framedLines =
    first !== undefined &&
    ((framings.has('cloudwatch-logs') && looksLikeLogBatch(first)) ||
      (framings.has('eventbridge') && looksLikeEvent(first)));
  if (compression === undefined && !framedLines) return undefined;
  return { ...(compression === undefined ? {} : { compression }), framedLines };
}

/**
 * The file's records as lines of text, in batches: decompressed, and deframed when its lines
 * are framed. A line that cannot be deframed goes to `reject` (with its 1-based line number).
 */
export async function* framedLines(
  chunks: AsyncIterable<Uint8Array>,
  framing: FileFraming,
  config: FloeConfig,
  source: string,
  reject: (d: DeadLetter) => void | Promise<void>,
): AsyncGenerator<string[]> {
  const bytes = framing.compression === undefined ? chunks : inflate(chunks, framing.compression);
  const opts = deframeOptionsOf(config);
  let line = 0;
  for await (const lines of splitLines(bytes)) {
    const out: string[] = [];
    for (const l of lines) {
      line++;
      if (!framing.framedLines) {
        out.push(utf8.decode(l));
        continue;
      }
      const d = deframe([{ sequenceNumber: String(line), partitionKey: '', arrivalMs: 0, data: l }], opts);
      for (const r of d.records) out.push(utf8.decode(r.data));
      for (const x of d.rejected) {
        await reject({ source, line, reason: x.reason, detail: x.detail, raw: utf8.decode(l) });
      }
    }
    if (out.length > 0) yield out;
  }
}

async function readHead(path: string, n: number): Promise<Uint8Array> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** As much of the decompressed start as the head gives (a truncated stream is fine here). */
function decompressHead(kind: Compression, head: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  try {
    if (kind === 'gzip') {
      parts.push(zlib.gunzipSync(head, { finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    } else {
      const d = new Decompress((c) => {
        parts.push(c);
      });
      d.push(head);
    }
  } catch {
    // a head cut mid-block: what decompressed so far is enough to sniff
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

function firstLine(bytes: Uint8Array): Uint8Array | undefined {
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(10, start);
    if (end < 0) end = bytes.length;
    const l = bytes.subarray(start, end);
    if (utf8.decode(l).trim() !== '') return l;
    start = end + 1;
  }
  return undefined;
}

/** Non-blank lines (LF or CRLF) of a byte stream, one batch per chunk. */
async function* splitLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array[]> {
  let carry: Uint8Array = new Uint8Array(0);
  const take = (l: Uint8Array, out: Uint8Array[]) => {
    const end = l.length > 0 && l[l.length - 1] === 13 ? l.length - 1 : l.length;
    const line = l.subarray(0, end);
    for (const b of line) {
      if (b !== 0x20 && b !== 0x09) {
        out.push(line);
        return;
      }
    }
  };
  for await (const chunk of chunks) {
    const data = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    const out: Uint8Array[] = [];
    let start = 0;
    for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
      take(data.subarray(start, nl), out);
      start = nl + 1;
    }
    carry = data.subarray(start);
    if (out.length > 0) yield out;
  }
  const out: Uint8Array[] = [];
  if (carry.length > 0) take(carry, out);
  if (out.length > 0) yield out;
}
