/**
 * Test helper: an INDEPENDENT reader. Decodes an Avro container with avsc's own streaming
 * BlockDecoder (framing, header map, codecs and sync checks are all avsc's, not ours).
 */
import avsc from 'avsc';

// A bigint long for avsc, written here rather than imported so the check does not reuse production code.
const TestLong = avsc.types.LongType.__with({
  fromBuffer: (b: Buffer) => b.readBigInt64LE(0),
  toBuffer: (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(n);
    return b;
  },
  fromJSON: (x: unknown) => BigInt(x as string),
  toJSON: (n: bigint) => n.toString(),
  isValid: (n: unknown) => typeof n === 'bigint',
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});

export interface AvscRead {
  records: Record<string, unknown>[];
  codec: string;
  meta: Record<string, string>;
  rawSchema: string;
}

export function readWithAvsc(bytes: Uint8Array): Promise<AvscRead> {
  return new Promise((resolve, reject) => {
    const records: Record<string, unknown>[] = [];
    let codec = '';
    let meta: Record<string, string> = {};
    let rawSchema = '';
    const dec = new avsc.streams.BlockDecoder({
      parseHook: (schema: unknown) =>
        avsc.Type.forSchema(schema as avsc.Schema, {
          typeHook: (s: unknown) =>
            s === 'long' || (typeof s === 'object' && s !== null && (s as { type?: unknown }).type === 'long')
              ? TestLong
              : undefined,
        }),
    } as never);
    dec.on('metadata', (_type: unknown, c: string, header: { meta: Record<string, Buffer> }) => {
      codec = c;
      meta = Object.fromEntries(Object.entries(header.meta).map(([k, v]) => [k, v.toString('utf8')]));
      rawSchema = meta['avro.schema'] ?? '';
    });
    dec.on('data', (r: Record<string, unknown>) => records.push(r));
    dec.on('error', reject);
    dec.on('end', () => resolve({ records, codec, meta, rawSchema }));
    dec.end(Buffer.from(bytes));
  });
}

/** Walks a decoded avsc value by keys / indexes (avsc records are untyped). */
export function dig(v: unknown, ...path: (string | number)[]): unknown {
  let cur = v;
  for (const k of path) cur = (cur as Record<string | number, unknown> | null | undefined)?.[k];
  return cur;
}
