/**
 * Content fingerprints of input files (app/load-history.ts): the first 128 bits of SHA-256, in
 * hex, and the size. Computed on the chunks the load reads anyway, so a file is read once.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { FileFingerprint } from '../app/load-history.ts';

const HASH_HEX_DIGITS = 32;

/** Passes `chunks` through unchanged; once the last one is consumed, `done` gets their fingerprint. */
export async function* fingerprinted(
  chunks: AsyncIterable<Uint8Array>,
  done: (fp: FileFingerprint) => void | Promise<void>,
): AsyncGenerator<Uint8Array> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of chunks) {
    hash.update(chunk);
    size += chunk.length;
    yield chunk;
  }
  await done({ hash: hash.digest('hex').slice(0, HASH_HEX_DIGITS), size });
}

/** The fingerprint of a file's first `bytes` bytes (to recognise a file that was appended to). */
export async function prefixFingerprint(path: string, bytes: number): Promise<FileFingerprint> {
  const hash = createHash('sha256');
  let size = 0;
  if (bytes > 0) {
    for await (const chunk of createReadStream(path, { start: 0, end: bytes - 1 })) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  }
  return { hash: hash.digest('hex').slice(0, HASH_HEX_DIGITS), size };
}
