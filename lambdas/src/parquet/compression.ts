/**
 * Page compression for the Parquet writer of columnar batches (parquet/file-writer.ts): the codecs
 * of parquet.thrift's `CompressionCodec` that it can write itself, each a function from a page's
 * bytes to its compressed bytes.
 *
 * - ZSTD: Node's own zstd (zlib, Node ≥ 22.15 / 23.8: the Lambda runtime's) when it has one, else
 *   the reference C library built to wasm (`@bokuweb/zstd-wasm`, loaded once when this module is
 *   first imported). Level 1, parquet-rs' default: measured on this workload's pages it is ~2 ×
 *   level 3's speed for ~10 % larger pages.
 * - GZIP: Node's zlib (a gzip member, as parquet-mr and parquet-rs write).
 * - UNCOMPRESSED: the bytes as they are.
 *
 * SNAPPY has no compressor here: a file of that codec is written by parquet-wasm, as before.
 */
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

/** parquet.thrift `CompressionCodec`. */
export const Codec = { UNCOMPRESSED: 0, SNAPPY: 1, GZIP: 2, ZSTD: 6 } as const;
export type CodecId = (typeof Codec)[keyof typeof Codec];

export type Compressor = (page: Uint8Array) => Uint8Array;

const ZSTD_LEVEL = 1;

type NodeZstd = (b: Uint8Array, o: { params: Record<number, number> }) => Buffer;
const nodeZstd = (zlib as unknown as { zstdCompressSync?: NodeZstd }).zstdCompressSync;
const ZSTD_LEVEL_PARAM = (zlib.constants as unknown as Record<string, number>).ZSTD_c_compressionLevel ?? 100;

/** The wasm build of the zstd library, when Node has no zstd of its own (Node 20). */
const wasmZstd: Compressor | undefined = nodeZstd === undefined ? await loadWasmZstd() : undefined;

async function loadWasmZstd(): Promise<Compressor | undefined> {
  try {
    // CommonJS; it reads its .wasm beside its own file.
    const z = createRequire(import.meta.url)('@bokuweb/zstd-wasm') as {
      init(): Promise<void>;
      compress(b: Uint8Array, level: number): Uint8Array;
    };
    await z.init();
    return (page) => z.compress(page, ZSTD_LEVEL);
  } catch {
    // Not installed (a bundle without it): zstd files are written by parquet-wasm instead.
    return undefined;
  }
}

const zstd: Compressor | undefined =
  nodeZstd !== undefined
    ? (page) => nodeZstd(page, { params: { [ZSTD_LEVEL_PARAM]: ZSTD_LEVEL } })
    : wasmZstd;

/** The compressor of `codec`, or undefined when this writer has none for it. */
export function compressorFor(codec: CodecId): Compressor | undefined {
  switch (codec) {
    case Codec.UNCOMPRESSED:
      return (page) => page;
    case Codec.GZIP:
      return (page) => zlib.gzipSync(page, { level: 1 });
    case Codec.ZSTD:
      return zstd;
    default:
      return undefined;
  }
}
