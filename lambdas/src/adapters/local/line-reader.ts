/**
 * Reads a text file as batches of lines (LF or CRLF), a few MiB at a time: far cheaper than
 * readline's one event per line, and memory stays bounded by the chunk size.
 */
import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

export async function* readLineBatches(path: string, chunkBytes = 4 * 1024 * 1024): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of createReadStream(path, { highWaterMark: chunkBytes })) {
    const text = rest + decoder.write(chunk as Buffer);
    const lines = text.split('\n');
    rest = lines.pop() ?? '';
    yield stripCr(lines);
  }
  const last = rest + decoder.end();
  if (last !== '') yield stripCr([last]);
}

function stripCr(lines: string[]): string[] {
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.endsWith('\r')) lines[i] = l.slice(0, -1);
  }
  return lines;
}

/**
 * Reads a file as chunks of UTF-8 bytes that each end at a line boundary (the last may lack the
 * final newline). The bytes are never decoded here: clean records are scanned as bytes.
 */
export async function* readByteChunks(
  path: string,
  chunkBytes = 4 * 1024 * 1024,
): AsyncGenerator<Uint8Array> {
  let rest: Uint8Array | undefined;
  for await (const data of createReadStream(path, { highWaterMark: chunkBytes })) {
    const buf = data as Buffer;
    const chunk = rest ? Buffer.concat([rest, buf]) : buf;
    const cut = chunk.lastIndexOf(10);
    if (cut < 0) {
      rest = chunk;
      continue;
    }
    rest = cut + 1 < chunk.length ? chunk.subarray(cut + 1) : undefined;
    yield chunk.subarray(0, cut + 1);
  }
  if (rest && rest.length > 0) yield rest;
}
