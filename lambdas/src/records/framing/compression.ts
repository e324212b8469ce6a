/**
 * Compressed payloads, recognised by their magic bytes: gzip (`1F 8B`, RFC 1952; concatenated
 * members are one stream) and Zstandard (`28 B5 2F FD`, RFC 8878). Decompression is bounded: past
 * `maxBytes` of output it stops and says so, so a small record that inflates without end (a
 * "zip bomb") costs at most that much memory and becomes a dead letter. A file `floe load` reads
 * is inflated as a stream instead (`inflate`), a chunk at a time, with no bound on its total.
 *
 * zstd: Node's own decoder where it has one (22.15+), else `fzstd` (pure JavaScript, decompression
 * only, ~30 KB), fed in slices so that the bound holds while it inflates.
 */
import * as zlib from 'node:zlib';
import { Decompress } from 'fzstd';

export type Compression = 'gzip' | 'zstd';

/** Default bound on one record's decompressed bytes (the ingest's Lambda has ~1.5 GB at most). */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

export function compressionOf(bytes: Uint8Array): Compression | undefined {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes.length >= 4 && bytes[0] === 0x28 && bytes[1] === 0xb5 && bytes[2] === 0x2f && bytes[3] === 0xfd)
    return 'zstd';
  return undefined;
}

export type Decompressed =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly tooLarge: boolean; readonly detail: string };

/** Decompresses `bytes` (whose magic said `kind`) into at most `maxBytes`. */
export function decompress(kind: Compression, bytes: Uint8Array, maxBytes: number): Decompressed {
  try {
    return kind === 'gzip' ? gunzip(bytes, maxBytes) : unzstd(bytes, maxBytes);
  } catch (e) {
    if (isTooLarge(e)) return tooLarge(kind, bytes, maxBytes);
    return { ok: false, tooLarge: false, detail: `${kind} payload of ${bytes.length} bytes: ${message(e)}` };
  }
}

function gunzip(bytes: Uint8Array, maxBytes: number): Decompressed {
  return { ok: true, bytes: zlib.gunzipSync(bytes, { maxOutputLength: maxBytes }) };
}

/** Node's own zstd decoder (22.15+), when the runtime has it. */
const nodeZstd = zlib as unknown as {
  zstdDecompressSync?: (buf: Uint8Array, opts: { maxOutputLength: number }) => Buffer;
  createZstdDecompress?: () => NodeJS.ReadWriteStream;
};

class TooLarge extends Error {}
const SLICE = 64 * 1024;

function unzstd(bytes: Uint8Array, maxBytes: number): Decompressed {
  if (nodeZstd.zstdDecompressSync)
    return { ok: true, bytes: nodeZstd.zstdDecompressSync(bytes, { maxOutputLength: maxBytes }) };
  const parts: Uint8Array[] = [];
  let total = 0;
  let finished = false;
  const d = new Decompress((chunk, final) => {
    total += chunk.length;
    if (total > maxBytes) throw new TooLarge();
    parts.push(chunk);
    if (final) finished = true;
  });
  for (let at = 0; at < bytes.length; at += SLICE) {
    const end = Math.min(bytes.length, at + SLICE);
    d.push(bytes.subarray(at, end), end === bytes.length);
  }
  if (!finished) throw new Error('the zstd frame is truncated');
  return { ok: true, bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts) };
}

function isTooLarge(e: unknown): boolean {
  if (e instanceof TooLarge) return true;
  const code = (e as { code?: unknown })?.code;
  return (
    code === 'ERR_BUFFER_TOO_LARGE' || (e instanceof RangeError && /larger than|too large/i.test(e.message))
  );
}

function tooLarge(kind: Compression, bytes: Uint8Array, maxBytes: number): Decompressed {
  return {
    ok: false,
    tooLarge: true,
    detail: `${kind} payload of ${bytes.length} bytes inflates past the ${maxBytes}-byte bound (source.maxDecompressedBytes)`,
  };
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Decompresses a stream of chunks, unbounded (a file `floe load` reads as it goes): gzip with zlib,
 * zstd with Node's own decoder where it has one, else fzstd.
 */
export async function* inflate(
  chunks: AsyncIterable<Uint8Array>,
  kind: Compression,
): AsyncGenerator<Uint8Array> {
  const streamZstd = nodeZstd.createZstdDecompress;
  if (kind === 'gzip' || streamZstd) {
    const z = kind === 'gzip' ? zlib.createGunzip() : streamZstd!();
    const feed = (async () => {
      for await (const c of chunks) if (!z.write(c)) await new Promise((r) => z.once('drain', r));
      z.end();
    })();
    feed.catch((e: unknown) => (z as unknown as { destroy(e: unknown): void }).destroy(e));
    for await (const out of z as AsyncIterable<Uint8Array>) yield out;
    await feed;
    return;
  }
  let parts: Uint8Array[] = [];
  const d = new Decompress((c) => {
    parts.push(c);
  });
  for await (const c of chunks) {
    d.push(c);
    if (parts.length > 0) {
      yield* parts;
      parts = [];
    }
  }
  d.push(new Uint8Array(0), true);
  yield* parts;
}
