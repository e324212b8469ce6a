import { describe, expect, it } from 'vitest';
import { ByteSink, ByteSource } from '../../../lambdas/src/avro/binary.ts';
import { isFloeError } from '../../../lambdas/src/errors.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('Avro zig-zag varints', () => {
  // The zig-zag table in the Avro spec ("Binary Encoding" / int and long).
  const specVectors: [bigint, string][] = [
    [0n, '00'],
    [-1n, '01'],
    [1n, '02'],
    [-2n, '03'],
    [2n, '04'],
    [-64n, '7f'],
    [64n, '8001'],
  ];
  it.each(specVectors)('encodes %s as %s (Avro spec table)', (n, h) => {
    expect(hex(new ByteSink().long(n).concat())).toBe(h);
    expect(new ByteSource(Buffer.from(h, 'hex')).long()).toBe(n);
  });

  it('is lossless beyond 2^53 and at the 64-bit limits', () => {
    // 2^53+1 → zig-zag 2^54+2: 7-bit groups 0x02, six zero groups, then bit 54 → 0x20 (hand-computed).
    expect(hex(new ByteSink().long(2n ** 53n + 1n).concat())).toBe('8280808080808020');
    for (const n of [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n, -(2n ** 53n) - 7n]) {
      expect(new ByteSource(new ByteSink().long(n).concat()).long()).toBe(n);
    }
    // -2^63 zig-zags to 2^64-1: nine 0xff groups then 0x01.
    expect(hex(new ByteSink().long(-(2n ** 63n)).concat())).toBe('ffffffffffffffffff01');
  });

  it('reads strings and fails typed on truncation', () => {
    const b = new ByteSink().string('héllo').concat();
    expect(new ByteSource(b).string()).toBe('héllo');
    try {
      new ByteSource(b.subarray(0, 3)).string();
      expect.unreachable();
    } catch (e) {
      expect(isFloeError(e, 'DataInvalid')).toBe(true);
    }
  });
});
