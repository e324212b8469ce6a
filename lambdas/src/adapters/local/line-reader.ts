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
