/**
 * Reads a text file as batches of lines (LF or CRLF), a few MiB at a time: far cheaper than
 * readline's one event per line, and memory stays bounded by the chunk size.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
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
 * final newline). The bytes are never decoded here: clean records are scanned as bytes. Each read
 * goes straight into the chunk's own buffer, after the partial line the previous read ended with
 * (the only bytes copied), and a chunk is never touched again once yielded: the caller may keep or
 * transfer it.
 */
export async function* readByteChunks(
  path: string,
  chunkBytes = 4 * 1024 * 1024,
): AsyncGenerator<Uint8Array> {
  const file = await open(path, 'r');
  try {
    let buf = Buffer.allocUnsafeSlow(chunkBytes);
    let held = 0;
    for (;;) {
      if (held === buf.length) {
        // One line longer than the buffer: room for more of it.
        const bigger = Buffer.allocUnsafeSlow(buf.length * 2);
        buf.copy(bigger, 0, 0, held);
        buf = bigger;
      }
      const { bytesRead } = await file.read(buf, held, buf.length - held, null);
      if (bytesRead === 0) break;
      const end = held + bytesRead;
      const cut = buf.lastIndexOf(10, end - 1);
      if (cut < 0) {
        held = end;
        continue;
      }
      const rest = end - (cut + 1);
      const next = Buffer.allocUnsafeSlow(rest + chunkBytes);
      buf.copy(next, 0, cut + 1, end);
      yield buf.subarray(0, cut + 1);
      buf = next;
      held = rest;
    }
    if (held > 0) yield buf.subarray(0, held);
  } finally {
    await file.close();
  }
}
