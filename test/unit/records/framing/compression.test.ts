import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compressionOf, decompress } from '../../../../lambdas/src/records/framing/compression.ts';

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../../../fixtures/framing/${name}`, import.meta.url)));

describe('compressed payloads', () => {
  it('gzip: any bytes come back as they were, concatenated members as one stream', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), fc.uint8Array({ maxLength: 500 }), (a, b) => {
        const z = Buffer.concat([gzipSync(a), gzipSync(b)]);
        expect(compressionOf(z)).toBe('gzip');
        const out = decompress('gzip', z, 10_000);
        expect(out.ok && Buffer.from(out.bytes).equals(Buffer.concat([a, b]))).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('zstd: reads what the reference encoder wrote', () => {
    const z = fixture('lines.ndjson.zst');
    expect(compressionOf(z)).toBe('zstd');
    const out = decompress('zstd', z, 10_000);
    expect(out.ok && Buffer.from(out.bytes).toString()).toBe(
      '{"event_type":"order","id":1}\n{"event_type":"order","id":2}\n\n{"event_type":"user","id":3}\n',
    );
  });

  it('stops at the bound: a 3 KB zstd or 100 KB gzip bomb costs the bound, not 100 MB', () => {
    const zbomb = fixture('bomb-100mb.zst');
    expect(zbomb.length).toBeLessThan(10_000);
    expect(decompress('zstd', zbomb, 1024 * 1024)).toEqual({
      ok: false,
      tooLarge: true,
      detail: expect.stringContaining('inflates past the 1048576-byte bound'),
    });
    const gbomb = gzipSync(Buffer.alloc(100_000_000));
    expect(decompress('gzip', gbomb, 1024 * 1024)).toMatchObject({ ok: false, tooLarge: true });
    // Exactly at the bound is still fine.
    const exact = gzipSync(Buffer.alloc(4096, 1));
    expect(decompress('gzip', exact, 4096).ok).toBe(true);
    expect(decompress('gzip', exact, 4095).ok).toBe(false);
  });

  it('a corrupt or truncated payload is corrupt, not too large', () => {
    const z = gzipSync(Buffer.from('{"a":1}\n'.repeat(100)));
    expect(decompress('gzip', z.subarray(0, z.length - 9), 1e6)).toMatchObject({
      ok: false,
      tooLarge: false,
    });
    const zs = fixture('lines.ndjson.zst');
    expect(decompress('zstd', zs.subarray(0, zs.length - 5), 1e6)).toMatchObject({
      ok: false,
      tooLarge: false,
    });
    expect(compressionOf(Uint8Array.of(0x1f))).toBeUndefined();
    expect(compressionOf(new TextEncoder().encode('{"a":1}'))).toBeUndefined();
  });
});
