/**
 * Reads a file as numbered lines of raw bytes (LF or CRLF, the terminator dropped), never decoded,
 * so a line goes out exactly as it was written even when it is not valid UTF-8. Memory stays
 * bounded: a line longer than `maxLineBytes` is not kept, only its length, however long it is
 * (`readByteChunks` would buffer a whole line first).
 */
import { createReadStream } from 'node:fs';

export type ByteLine =
  /** `number` is 1-based and counts every line, blank ones too. */
  | { readonly number: number; readonly bytes: Uint8Array }
  | { readonly number: number; readonly tooLongBytes: number };

const LF = 10;
const CR = 13;

/** Yields the lines of each chunk read (in order), as batches: one await per chunk, not per line. */
export async function* readByteLines(
  path: string,
  maxLineBytes: number,
  chunkBytes = 1024 * 1024,
): AsyncGenerator<ByteLine[]> {
  let number = 0;
  // The line being read when a chunk ends: its pieces, unless it already outgrew the limit.
  let pieces: Uint8Array[] = [];
  let length = 0;
  let lastByte = -1;
  const endLine = (tail: Uint8Array, out: ByteLine[]) => {
    number++;
    length += tail.length;
    if (tail.length > 0) lastByte = tail[tail.length - 1]!;
    const cr = lastByte === CR ? 1 : 0;
    if (length - cr > maxLineBytes) out.push({ number, tooLongBytes: length - cr });
    else {
      const whole = pieces.length === 0 ? tail : Buffer.concat([...pieces, tail]);
      out.push({ number, bytes: cr ? whole.subarray(0, whole.length - 1) : whole });
    }
    pieces = [];
    length = 0;
    lastByte = -1;
  };
  const keepPiece = (piece: Uint8Array) => {
    if (piece.length === 0) return;
    length += piece.length;
    lastByte = piece[piece.length - 1]!;
    // One byte of slack for a CR before the LF.
    if (length <= maxLineBytes + 1) pieces.push(piece);
    else pieces = [];
  };
  for await (const data of createReadStream(path, { highWaterMark: chunkBytes })) {
    const chunk = data as Buffer;
    const out: ByteLine[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(LF, start); nl >= 0; nl = chunk.indexOf(LF, start)) {
      endLine(chunk.subarray(start, nl), out);
      start = nl + 1;
    }
    keepPiece(chunk.subarray(start));
    if (out.length > 0) yield out;
  }
  if (length > 0) {
    const out: ByteLine[] = [];
    endLine(new Uint8Array(0), out);
    yield out;
  }
}
