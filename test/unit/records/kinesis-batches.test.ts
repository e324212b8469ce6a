import { describe, expect, it } from 'vitest';
import {
  KINESIS_LIMITS,
  PutRequestBatcher,
  recordSize,
  splitIntoRequests,
  utf8ByteLength,
} from '../../../lambdas/src/records/kinesis-batches.ts';

const MIB = 1024 * 1024;
const rec = (bytes: number, partitionKey = 'k') => ({ data: new Uint8Array(bytes), partitionKey });
const sizes = (requests: { data: Uint8Array }[][]) => requests.map((r) => r.length);

describe('Kinesis PutRecords batching', () => {
  it('splits at 500 records per request, keeping order', () => {
    const records = Array.from({ length: 1201 }, (_, i) => rec(10, `k${i}`));
    const requests = splitIntoRequests(records);
    expect(sizes(requests)).toEqual([500, 500, 201]);
    expect(requests.flat()).toEqual(records);
  });

  it('splits at 5 MiB per request, counting partition keys', () => {
    // Five 900 KB records fit 5 MiB, a sixth does not.
    expect(sizes(splitIntoRequests(Array.from({ length: 7 }, (_, i) => rec(900_000, `${i}`))))).toEqual([
      5, 2,
    ]);
    // Exactly 5 MiB of data fits; one byte of partition key more does not.
    const exact = [
      rec(MIB - 1, '1'),
      rec(MIB - 1, '2'),
      rec(MIB - 1, '3'),
      rec(MIB - 1, '4'),
      rec(MIB - 1, '5'),
    ];
    expect(sizes(splitIntoRequests(exact))).toEqual([5]);
    expect(sizes(splitIntoRequests([...exact.slice(0, 4), rec(MIB, 'k')]))).toEqual([4, 1]);
    expect(KINESIS_LIMITS).toMatchObject({
      recordsPerRequest: 500,
      bytesPerRequest: 5 * MIB,
      bytesPerRecord: MIB,
    });
  });

  it('sends a record larger than a request alone, and nothing for no records', () => {
    expect(sizes(splitIntoRequests([rec(10, 'a'), rec(6 * MIB, 'b'), rec(10, 'c')]))).toEqual([1, 1, 1]);
    expect(splitIntoRequests([])).toEqual([]);
  });

  it('hands back full requests as records arrive, and the rest on flush', () => {
    const batcher = new PutRequestBatcher({ recordsPerRequest: 3, bytesPerRequest: 100 });
    const handed: number[] = [];
    for (const [i, size] of [10, 10, 10, 10, 60, 50, 1].entries()) {
      const full = batcher.add(rec(size, `${i}`));
      if (full) handed.push(full.length);
    }
    expect(handed).toEqual([3, 2]); // 3 records; then 10 + 60 + 50 > 100 (keys are 1 byte each)
    expect(batcher.pending).toBe(2);
    expect(batcher.flush()?.map((r) => r.data.length)).toEqual([50, 1]);
    expect(batcher.flush()).toBeUndefined();
  });

  it('puts a partition key in a request once, so a resent record never lands after a later one of its key', () => {
    const keys = ['a', 'b', 'a', 'c', 'a', 'a', 'b'];
    const requests = splitIntoRequests(keys.map((k, i) => ({ data: new Uint8Array([i]), partitionKey: k })));
    expect(requests.map((r) => r.map((x) => x.partitionKey).join(''))).toEqual(['ab', 'ac', 'a', 'ab']);
    expect(requests.flat().map((r) => r.data[0])).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('counts record sizes as data plus UTF-8 partition key', () => {
    for (const s of ['', 'abc', 'é', '日本', '🎉', 'a\ud800b', '\udc00'])
      expect(utf8ByteLength(s), JSON.stringify(s)).toBe(Buffer.byteLength(s, 'utf8'));
    expect(recordSize(rec(7, 'ü🎉'))).toBe(7 + 2 + 4);
  });
});
