/**
 * Avro object container files (Avro spec: "Object Container Files"): magic `Obj\x01`, a header map
 * (`avro.schema`, `avro.codec`, user metadata), a 16-byte sync marker, then blocks of
 * `count, size, data, sync`. The framing is done here; datums are encoded by avsc (`datum.ts`).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { ByteSink, ByteSource } from './binary.ts';
import { type AvroWriteCodec, compressBlock, decompressBlock } from './codecs.ts';
import { avroDatumType } from './datum.ts';

export const AVRO_MAGIC: Uint8Array = Uint8Array.of(0x4f, 0x62, 0x6a, 0x01);
export const SYNC_SIZE = 16;
/** Uncompressed bytes after which a block is closed (Java's Avro default sync interval is 64000). */
export const DEFAULT_BLOCK_SIZE = 64 * 1024;

export interface EncodeAvroContainerOptions {
  /** Written verbatim (JSON.stringify) as `avro.schema`, so non-standard attributes survive. */
  readonly schemaJson: object;
  readonly records: readonly unknown[];
  /** Extra header entries; keys starting with `avro.` are reserved by the Avro spec. */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly codec?: AvroWriteCodec;
  /** 16 bytes; injected so that output is byte-deterministic. */
  readonly syncMarker: Uint8Array;
  /** Uncompressed bytes per block before a new block starts (default 64 KiB). */
  readonly blockSize?: number;
}

/** Encodes records into an Avro object container file. */
export function encodeAvroContainer(opts: EncodeAvroContainerOptions): Uint8Array {
  const { schemaJson, records, metadata = {}, codec = 'null', syncMarker } = opts;
  const blockSize = opts.blockSize ?? DEFAULT_BLOCK_SIZE;
  if (syncMarker.length !== SYNC_SIZE) {
    throw new FloeError(ErrorKind.DataInvalid, `avro: sync marker must be ${SYNC_SIZE} bytes`);
  }
  if (!(blockSize > 0)) throw new FloeError(ErrorKind.DataInvalid, 'avro: blockSize must be positive');
  const entries: [string, string][] = [
    ['avro.schema', JSON.stringify(schemaJson)],
    ['avro.codec', codec],
  ];
  for (const [k, v] of Object.entries(metadata)) {
    if (k.startsWith('avro.'))
      throw new FloeError(ErrorKind.DataInvalid, `avro: reserved metadata key '${k}'`);
    entries.push([k, v]);
  }
  const out = new ByteSink().bytes(AVRO_MAGIC).long(entries.length);
  for (const [k, v] of entries) out.string(k).string(v);
  out.long(0).bytes(syncMarker);

  const type = avroDatumType(schemaJson);
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const flush = () => {
    if (pending.length === 0) return;
    const raw = new ByteSink();
    for (const p of pending) raw.bytes(p);
    const data = compressBlock(codec, raw.concat());
    out.long(pending.length).long(data.length).bytes(data).bytes(syncMarker);
    pending = [];
    pendingBytes = 0;
  };
  for (const r of records) {
    const d = type.encode(r);
    pending.push(d);
    pendingBytes += d.length;
    if (pendingBytes >= blockSize) flush();
  }
  flush();
  return out.concat();
}

export interface DecodedAvroContainer {
  /** The writer schema exactly as found in `avro.schema`. */
  readonly schemaJson: object;
  readonly codec: string;
  /** Header entries other than `avro.schema` and `avro.codec`, decoded as UTF-8. */
  readonly metadata: Record<string, string>;
  readonly records: unknown[];
}

export interface DecodeAvroContainerOptions {
  /**
   * Rewrites the writer schema before it is compiled. Must keep the binary layout identical
   * (e.g. renaming record fields that avsc rejects); the returned `schemaJson` stays the original.
   */
  readonly mapSchema?: (writerSchema: object) => object;
}

function readHeader(src: ByteSource): Map<string, Uint8Array> {
  const magic = src.take(4);
  if (!AVRO_MAGIC.every((b, i) => magic[i] === b)) {
    throw new FloeError(ErrorKind.DataInvalid, 'avro: not an object container file (bad magic)');
  }
  const meta = new Map<string, Uint8Array>();
  for (;;) {
    let n = src.count();
    if (n === 0) break;
    // A negative count is followed by the block's byte size (Avro spec: "Complex Types" / maps).
    if (n < 0) {
      n = -n;
      src.long();
    }
    for (let i = 0; i < n; i++) meta.set(src.string(), src.lengthPrefixed());
  }
  return meta;
}

/** Decodes an Avro object container file with the writer schema from its header. */
export function decodeAvroContainer(
  bytes: Uint8Array,
  opts: DecodeAvroContainerOptions = {},
): DecodedAvroContainer {
  const src = new ByteSource(bytes);
  const meta = readHeader(src);
  const sync = src.take(SYNC_SIZE).slice();
  const utf8 = new TextDecoder();
  const schemaBytes = meta.get('avro.schema');
  if (!schemaBytes) throw new FloeError(ErrorKind.DataInvalid, 'avro: header has no avro.schema');
  let schemaJson: object;
  try {
    schemaJson = JSON.parse(utf8.decode(schemaBytes)) as object;
  } catch (e) {
    throw new FloeError(ErrorKind.DataInvalid, 'avro: avro.schema is not JSON', { cause: e });
  }
  const codecBytes = meta.get('avro.codec');
  const codec = codecBytes ? utf8.decode(codecBytes) : 'null';
  const metadata: Record<string, string> = {};
  for (const [k, v] of meta) if (k !== 'avro.schema' && k !== 'avro.codec') metadata[k] = utf8.decode(v);

  const type = avroDatumType(opts.mapSchema ? opts.mapSchema(schemaJson) : schemaJson);
  const records: unknown[] = [];
  while (src.remaining > 0) {
    const count = src.count();
    const data = decompressBlock(codec, src.lengthPrefixed());
    let off = 0;
    for (let i = 0; i < count; i++) {
      const r = type.decode(data, off);
      records.push(r.value);
      off = r.offset;
    }
    if (off !== data.length) {
      throw new FloeError(ErrorKind.DataInvalid, `avro: block has ${data.length - off} trailing bytes`);
    }
    const blockSync = src.take(SYNC_SIZE);
    if (!sync.every((b, i) => blockSync[i] === b)) {
      throw new FloeError(ErrorKind.DataInvalid, 'avro: sync marker mismatch (corrupt or truncated file)');
    }
  }
  return { schemaJson, codec, metadata, records };
}
