import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { murmur3Hash32, murmur3HashLong } from '../../../lambdas/src/iceberg/murmur3.ts';

const utf8 = (s: string) => new TextEncoder().encode(s);

describe('murmur3Hash32 (x86, 32-bit)', () => {
  it('matches published Murmur3_x86_32 vectors', () => {
    expect(murmur3Hash32(new Uint8Array())).toBe(0);
    expect(murmur3Hash32(new Uint8Array(), 1)).toBe(0x514e28b7);
    expect(murmur3Hash32(new Uint8Array(), 0xffffffff)).toBe(0x81f16f39 | 0);
    expect(murmur3Hash32(Uint8Array.of(0xff, 0xff, 0xff, 0xff))).toBe(0x76293b50);
    expect(murmur3Hash32(Uint8Array.of(0x21, 0x43, 0x65, 0x87))).toBe(0xf55b516b | 0);
    expect(murmur3Hash32(Uint8Array.of(0x21, 0x43, 0x65))).toBe(0x7e4a8634);
    expect(murmur3Hash32(Uint8Array.of(0x21, 0x43))).toBe(0xa0f7b07a | 0);
    expect(murmur3Hash32(Uint8Array.of(0x21))).toBe(0x72661cf4);
    expect(murmur3Hash32(utf8('Hello, world!'), 1234)).toBe(0xfaf6cdb3 | 0);
  });

  it('matches the Iceberg spec test vectors', () => {
    expect(murmur3HashLong(34n)).toBe(2017239379);
    expect(murmur3Hash32(utf8('iceberg'))).toBe(1210000089);
    expect(murmur3Hash32(Uint8Array.of(0, 1, 2, 3))).toBe(-188683207);
    expect(murmur3HashLong(1n)).toBe(1392991556); // boolean true as a long
  });

  it('returns signed 32-bit integers and depends on every byte', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.nat(), (b, i) => {
        const h = murmur3Hash32(b);
        expect(Number.isInteger(h) && h >= -(2 ** 31) && h < 2 ** 31).toBe(true);
        const flipped = b.slice();
        const at = i % b.length;
        flipped[at] = flipped[at]! ^ 1;
        // Murmur3 is a bijection on single blocks, so flipping one bit of a ≤4-byte input always changes the hash.
        if (b.length <= 4) expect(murmur3Hash32(flipped)).not.toBe(h);
      }),
    );
  });
});
