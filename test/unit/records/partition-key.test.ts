import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  hashPartitionKey,
  isUsablePartitionKey,
  partitionKeyOf,
} from '../../../lambdas/src/records/partition-key.ts';

const bytes = (s: string) => new TextEncoder().encode(s);
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex').slice(0, 32);

describe('partition keys for floe send', () => {
  it("takes the field's value: strings as they are, numbers and booleans as JSON text", () => {
    expect(partitionKeyOf(bytes('{"id":"ü-🎉"}'), 'id')).toBe('ü-🎉');
    expect(partitionKeyOf(bytes('{"id":"a\\u0042\\n"}'), 'id')).toBe('aB\n');
    expect(partitionKeyOf(bytes('{"id":12345678901234567890123}'), 'id')).toBe('12345678901234567890123');
    expect(partitionKeyOf(bytes('{"id":-7}'), 'id')).toBe('-7');
    expect(partitionKeyOf(bytes('{"id":2.5}'), 'id')).toBe('2.5');
    expect(partitionKeyOf(bytes('{"id":0.12345678901234567891}'), 'id')).toBe('0.12345678901234567891');
    expect(partitionKeyOf(bytes('{"id":false}'), 'id')).toBe('false');
    expect(partitionKeyOf(bytes('{"__proto__":"p"}'), '__proto__')).toBe('p');
  });

  it('falls back to the hash of the bytes when the value is missing or unusable', () => {
    const lines = [
      '{"other":1}',
      '{"id":null}',
      '{"id":{"a":1}}',
      '{"id":[1]}',
      '{"id":""}',
      `{"id":"${'k'.repeat(257)}"}`,
      `{"id":"${'🎉'.repeat(129)}"}`,
      '{"id":"\\ud800"}',
      '[{"id":"x"}]',
      '"id"',
      '{not json',
      '{"id":"x"} trailing',
      '{"id":toString}',
      '{"id":"constructor"',
    ];
    for (const l of lines) expect(partitionKeyOf(bytes(l), 'id'), l).toBe(sha(bytes(l)));
    const invalidUtf8 = new Uint8Array([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);
    expect(partitionKeyOf(invalidUtf8, 'id')).toBe(sha(invalidUtf8));
  });

  it('hashes without a field: stable, equal lines equal keys, 32 hex digits', () => {
    const l = bytes('{"id":"x"}');
    expect(partitionKeyOf(l)).toBe(sha(l));
    expect(partitionKeyOf(bytes('{"id":"x"}'))).toBe(partitionKeyOf(l));
    expect(partitionKeyOf(bytes('{"id":"y"}'))).not.toBe(partitionKeyOf(l));
    expect(hashPartitionKey(l)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('accepts keys of 1 to 256 UTF-16 units of well-formed text', () => {
    expect(isUsablePartitionKey('k'.repeat(256))).toBe(true);
    expect(isUsablePartitionKey('🎉'.repeat(128))).toBe(true);
    expect(isUsablePartitionKey('k'.repeat(257))).toBe(false);
    expect(isUsablePartitionKey('')).toBe(false);
    expect(isUsablePartitionKey('a\udc00')).toBe(false);
  });
});
