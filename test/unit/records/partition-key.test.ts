import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  hashPartitionKey,
  isUsablePartitionKey,
  keyFieldCandidates,
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

  it('follows a dotted path through nested objects, with the same value rules as a top-level field', () => {
    expect(partitionKeyOf(bytes('{"op":"c","after":{"id":7,"name":"x"}}'), 'after.id')).toBe('7');
    expect(partitionKeyOf(bytes('{"after":{"id":"ü-🎉"}}'), 'after.id')).toBe('ü-🎉');
    expect(partitionKeyOf(bytes('{"after":{"id":12345678901234567890123}}'), 'after.id')).toBe(
      '12345678901234567890123',
    );
    expect(partitionKeyOf(bytes('{"after":{"id":-7}}'), 'after.id')).toBe('-7');
    expect(partitionKeyOf(bytes('{"after":{"id":2.5}}'), 'after.id')).toBe('2.5');
    expect(partitionKeyOf(bytes('{"after":{"id":true}}'), 'after.id')).toBe('true');
    expect(
      partitionKeyOf(bytes('{"schema":{},"payload":{"after":{"id":"p-1"},"op":"c"}}'), 'payload.after.id'),
    ).toBe('p-1');
    expect(partitionKeyOf(bytes('{"a":{"__proto__":"p"}}'), 'a.__proto__')).toBe('p');
    // A field named exactly like the path is taken first, as before paths existed.
    expect(partitionKeyOf(bytes('{"after":{"id":"nested"},"after.id":"flat"}'), 'after.id')).toBe('flat');
    expect(partitionKeyOf(bytes('{"after.id":null,"after":{"id":"nested"}}'), 'after.id')).toBe(
      sha(bytes('{"after.id":null,"after":{"id":"nested"}}')),
    );
    const unusable = [
      '{"after":null}',
      '{"after":{}}',
      '{"after":{"id":null}}',
      '{"after":{"id":{"a":1}}}',
      '{"after":{"id":[1]}}',
      '{"after":{"id":""}}',
      `{"after":{"id":"${'k'.repeat(257)}"}}`,
      '{"after":[{"id":1}]}',
      '{"after":"id"}',
      '{"after":{"ID":1}}',
      '{"after":{"id":1}} trailing',
      '{"id":1}',
    ];
    for (const l of unusable) expect(partitionKeyOf(bytes(l), 'after.id'), l).toBe(sha(bytes(l)));
    // Own fields only, at every step.
    for (const path of ['after.constructor', 'after.toString', 'after.id.length', 'constructor.name'])
      expect(partitionKeyOf(bytes('{"after":{"id":"abc"}}'), path), path).toBe(
        sha(bytes('{"after":{"id":"abc"}}')),
      );
  });

  it('tries comma-separated candidates in order: the first usable value wins', () => {
    const fields = keyFieldCandidates('after.id,before.id')!;
    expect(fields).toEqual(['after.id', 'before.id']);
    // Debezium: create and update carry the key in `after`, a delete only in `before`.
    expect(partitionKeyOf(bytes('{"op":"c","before":null,"after":{"id":1}}'), fields)).toBe('1');
    expect(partitionKeyOf(bytes('{"op":"u","before":{"id":2},"after":{"id":3}}'), fields)).toBe('3');
    expect(partitionKeyOf(bytes('{"op":"d","before":{"id":4},"after":null}'), fields)).toBe('4');
    // An unusable first value falls through to the next candidate too.
    expect(partitionKeyOf(bytes('{"after":{"id":""},"before":{"id":5}}'), fields)).toBe('5');
    expect(partitionKeyOf(bytes(`{"after":{"id":"${'k'.repeat(300)}"},"before":{"id":6}}`), fields)).toBe(
      '6',
    );
    const none = bytes('{"op":"t","before":null,"after":null}');
    expect(partitionKeyOf(none, fields)).toBe(sha(none));
    // The option text itself works as well; top-level names mix with paths.
    expect(partitionKeyOf(bytes('{"key":"k","after":{"id":9}}'), 'missing,after.id,key')).toBe('9');
    expect(partitionKeyOf(bytes('{"key":"k","after":{"id":9}}'), 'key,after.id')).toBe('k');
    expect(keyFieldCandidates('id')).toEqual(['id']);
    for (const bad of ['a,,b', 'a,', ',a', ',']) expect(keyFieldCandidates(bad), bad).toBeUndefined();
  });

  it('accepts keys of 1 to 256 UTF-16 units of well-formed text', () => {
    expect(isUsablePartitionKey('k'.repeat(256))).toBe(true);
    expect(isUsablePartitionKey('🎉'.repeat(128))).toBe(true);
    expect(isUsablePartitionKey('k'.repeat(257))).toBe(false);
    expect(isUsablePartitionKey('')).toBe(false);
    expect(isUsablePartitionKey('a\udc00')).toBe(false);
  });
});
