import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import {
  canonicalSequence,
  compareSequence,
  entryContent,
  isStaged,
  kinesisSequenceOf,
  type LedgerEntry,
  nextSequence,
  normalizeEntry,
  padSequence,
  SEQUENCE_WIDTH,
  type StagedRange,
  SUB_WIDTH,
  sameEntryContent,
  sameSequence,
  subPosition,
  unbrokenRun,
  unpadSequence,
} from '../../../lambdas/src/ports/ledger.ts';

const MAX = 10n ** BigInt(SEQUENCE_WIDTH) - 1n;
/** Sequence numbers of every size up to Kinesis' 129 digits, biased towards the 56-digit ones. */
const sequence = fc.oneof(
  fc.bigInt({ min: 0n, max: MAX }),
  fc.bigInt({ min: 10n ** 55n, max: 10n ** 56n - 1n }),
  fc.bigInt({ min: 0n, max: 2n ** 64n }),
);

function throwsKind(f: () => unknown, kind: ErrorKind): void {
  try {
    f();
  } catch (e) {
    expect(isFloeError(e, kind)).toBe(true);
    return;
  }
  throw new Error('expected a throw');
}

describe('sequence numbers', () => {
  it('compareSequence and padSequence agree with BigInt order', () => {
    fc.assert(
      fc.property(sequence, sequence, (a, b) => {
        const expected = a < b ? -1 : a > b ? 1 : 0;
        expect(compareSequence(a.toString(), b.toString())).toBe(expected);
        const pa = padSequence(a.toString());
        const pb = padSequence(b.toString());
        expect(pa).toHaveLength(SEQUENCE_WIDTH);
        expect(pa < pb ? -1 : pa > pb ? 1 : 0).toBe(expected);
        expect(padSequence(a)).toBe(pa);
        expect(unpadSequence(pa)).toBe(a.toString());
      }),
      { numRuns: 500 },
    );
  });

  it('ignores leading zeros and compares beyond 2^53', () => {
    expect(compareSequence('007', '7')).toBe(0);
    expect(canonicalSequence('000')).toBe('0');
    expect(padSequence('0042')).toBe(padSequence('42'));
    const a = '49590338271490256608559692538361571095921575989136588898';
    const b = '49590338271490256608559692538361571095921575989136588899';
    expect(Number(a)).toBe(Number(b));
    expect(compareSequence(a, b)).toBe(-1);
    expect(compareSequence('9', '10')).toBe(-1); // not lexical
    expect(nextSequence(a)).toBe(`${a}.1`); // the smallest position after a: its first sub-record
    expect(compareSequence(nextSequence(a), b)).toBe(-1);
    expect(sameSequence(null, null)).toBe(true);
    expect(sameSequence('01', '1')).toBe(true);
    expect(sameSequence(null, '0')).toBe(false);
  });

  it('rejects what is not a decimal sequence number', () => {
    for (const bad of ['', '-1', '1e5', '12a', ' 1', '1.', '.1', '1.2.3', `1.${'1'.repeat(11)}`])
      throwsKind(() => compareSequence(bad, '1'), ErrorKind.DataInvalid);
    throwsKind(() => padSequence('1'.repeat(SEQUENCE_WIDTH + 1)), ErrorKind.DataInvalid);
    throwsKind(() => padSequence(-1n), ErrorKind.DataInvalid);
    expect(padSequence('9'.repeat(SEQUENCE_WIDTH))).toBe('9'.repeat(SEQUENCE_WIDTH));
  });
});

describe('positions of sub-records (seq.sub)', () => {
  const sub = fc.oneof(
    fc.constant(0),
    fc.integer({ min: 1, max: 20 }),
    fc.integer({ min: 0, max: 9_999_999_999 }),
  );
  const position = fc.tuple(sequence, sub);
  const text = ([seq, k]: [bigint, number]) => subPosition(seq.toString(), k);

  it('order as (seq, sub), in compareSequence and in the padded form alike', () => {
    fc.assert(
      fc.property(position, position, (a, b) => {
        const expected = a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
        const [ta, tb] = [text(a), text(b)];
        expect(compareSequence(ta, tb)).toBe(expected);
        const [pa, pb] = [padSequence(ta), padSequence(tb)];
        expect(pa < pb ? -1 : pa > pb ? 1 : 0).toBe(expected);
        expect(unpadSequence(pa)).toBe(ta);
        expect(canonicalSequence(ta)).toBe(ta);
        expect(kinesisSequenceOf(ta)).toBe(a[0].toString());
        // Nothing lies between a position and the next one.
        const next = nextSequence(ta);
        expect(compareSequence(ta, next)).toBe(-1);
        if (compareSequence(ta, tb) < 0) expect(compareSequence(next, tb)).toBeLessThanOrEqual(0);
      }),
      { numRuns: 500 },
    );
  });

  it('seq.0 is seq: a plain record keeps the position it always had', () => {
    expect(subPosition('42', 0)).toBe('42');
    expect(canonicalSequence('42.0')).toBe('42');
    expect(canonicalSequence('0042.0007')).toBe('42.7');
    expect(padSequence('42.0')).toBe(padSequence('42'));
    expect(compareSequence('42.9', '43')).toBe(-1);
    expect(compareSequence('42.10', '42.9')).toBe(1); // sub-records compare as numbers
    expect(nextSequence('42.9999999999')).toBe('43'); // past the last sub-record: the next record
    expect(padSequence('42.3')).toBe(`${'42'.padStart(SEQUENCE_WIDTH, '0')}.${'3'.padStart(SUB_WIDTH, '0')}`);
    throwsKind(() => subPosition('42.1', 1), ErrorKind.DataInvalid);
    throwsKind(() => subPosition('42', -1), ErrorKind.DataInvalid);
  });

  it('a chain of sub-record entries is unbroken across the Kinesis records it spans', () => {
    const e = (first: string, last: string, previous: string | null): LedgerEntry => ({
      table: 't',
      shardId: 's',
      firstSequence: first,
      lastSequence: last,
      previousLastSequence: previous,
      files: [],
      records: 1,
      createdAtMs: 0,
      status: 'staged',
    });
    const chain = [e('10', '10.4', null), e('10.5', '12', '10.4'), e('12.1', '12.7', '12')];
    expect(unbrokenRun(chain, null)).toHaveLength(3);
    expect(unbrokenRun(chain, '10.4')).toEqual(chain.slice(1));
    expect(isStaged(chain, 't', '10.3')).toBe(true);
    expect(isStaged(chain, 't', '12.8')).toBe(false);
  });
});

function entry(first: number, last: number, previous: number | null, table = 't'): LedgerEntry {
  return {
    table,
    shardId: 'shardId-000000000000',
    firstSequence: `${first}00000000000000000000000000000000000000000000000000`,
    lastSequence: `${last}00000000000000000000000000000000000000000000000000`,
    previousLastSequence:
      previous === null ? null : `${previous}00000000000000000000000000000000000000000000000000`,
    files: [{ uri: `s3://b/${table}/${first}.parquet`, kind: 'data', records: 1, bytes: 10 }],
    records: 1,
    createdAtMs: 1,
    status: 'staged',
  };
}
const big = (k: number) => `${k}00000000000000000000000000000000000000000000000000`;

describe('unbrokenRun', () => {
  const e1 = entry(1, 5, null);
  const e2 = entry(6, 9, 5);
  const e3 = entry(10, 20, 9);
  const e4 = entry(30, 31, 25); // links to an entry we have not seen

  it('takes the chain from the start, in sequence order, whatever the input order', () => {
    expect(unbrokenRun([e3, e1, e2], null)).toEqual([e1, e2, e3]);
    expect(unbrokenRun([], null)).toEqual([]);
  });

  it('starts at the watermark and skips entries at or below it', () => {
    expect(unbrokenRun([e1, e2, e3], big(5))).toEqual([e2, e3]);
    expect(unbrokenRun([e2, e3], big(9))).toEqual([e3]);
    expect(unbrokenRun([e1, e2, e3], big(20))).toEqual([]);
  });

  it('stops at the first gap (an entry not seen yet is never jumped over)', () => {
    expect(unbrokenRun([e1, e3], null)).toEqual([e1]);
    expect(unbrokenRun([e2, e3], null)).toEqual([]); // the chain's first entry is missing
    expect(unbrokenRun([e1, e2, e3, e4], null)).toEqual([e1, e2, e3]);
    expect(unbrokenRun([e3], big(5))).toEqual([]);
  });

  it('tolerates duplicates', () => {
    expect(unbrokenRun([e1, e1, e2, e2], null)).toEqual([e1, e2]);
  });

  it('compares links as numbers (leading zeros, 56 digits)', () => {
    const a = { ...entry(1, 2, null), lastSequence: `000${big(2)}` };
    const b = entry(3, 4, 2);
    expect(unbrokenRun([b, a], null)).toEqual([a, b]);
  });
});

describe('entries', () => {
  it('normalizes and validates', () => {
    const e = { ...entry(1, 5, null), firstSequence: `00${big(1)}` };
    expect(normalizeEntry(e).firstSequence).toBe(big(1));
    throwsKind(() => normalizeEntry(entry(5, 1, null)), ErrorKind.DataInvalid);
    throwsKind(() => normalizeEntry(entry(5, 6, 5)), ErrorKind.DataInvalid);
    throwsKind(() => normalizeEntry({ ...entry(1, 2, null), table: '' }), ErrorKind.DataInvalid);
    throwsKind(() => normalizeEntry({ ...entry(1, 2, null), shardId: 's#1' }), ErrorKind.DataInvalid);
    throwsKind(() => normalizeEntry({ ...entry(1, 2, null), records: -1 }), ErrorKind.DataInvalid);
    throwsKind(
      () =>
        normalizeEntry({
          ...entry(1, 2, null),
          files: [{ uri: 'x', kind: 'other' as 'data', records: 1, bytes: 1 }],
        }),
      ErrorKind.DataInvalid,
    );
  });

  it('keeps and validates a file dataFile descriptor', () => {
    const e = entry(1, 5, null);
    const file = e.files[0]!;
    const withDescriptor = { ...e, files: [{ ...file, dataFile: '{"file_path":"s3://b/t/1.parquet"}' }] };
    expect(normalizeEntry(withDescriptor).files[0]!.dataFile).toBe('{"file_path":"s3://b/t/1.parquet"}');
    expect(normalizeEntry(withDescriptor).files).toEqual(withDescriptor.files);
    expect(normalizeEntry(e).files[0]).not.toHaveProperty('dataFile');
    expect(normalizeEntry({ ...e, files: [{ ...file, dataFile: undefined }] }).files[0]).not.toHaveProperty(
      'dataFile',
    );
    for (const bad of ['', 42, null]) {
      throwsKind(
        () => normalizeEntry({ ...e, files: [{ ...file, dataFile: bad as unknown as string }] }),
        ErrorKind.DataInvalid,
      );
    }
    expect(() => normalizeEntry({ ...e, files: [{ ...file, dataFile: '' }] })).toThrow(
      /file dataFile must be a non-empty string/,
    );
  });

  it('tells entries apart by their files dataFile descriptors', () => {
    const e = entry(1, 5, null);
    const file = e.files[0]!;
    const a = { ...e, files: [{ ...file, dataFile: '{"a":1}' }] };
    const b = { ...e, files: [{ ...file, dataFile: '{"a":2}' }] };
    expect(sameEntryContent(a, b)).toBe(false);
    expect(sameEntryContent(a, e)).toBe(false);
    expect(sameEntryContent(a, { ...a, createdAtMs: 5, files: [{ ...file, dataFile: '{"a":1}' }] })).toBe(
      true,
    );
    expect(entryContent(normalizeEntry(a))).toContain('"specId":null,"dataFile":"{\\"a\\":1}"');
    expect(entryContent(normalizeEntry(e))).toContain('"dataFile":null');
  });

  it('compares content ignoring time, status and number formatting', () => {
    const e = entry(1, 5, null);
    expect(sameEntryContent(e, { ...e, createdAtMs: 99, status: 'committed' })).toBe(true);
    expect(sameEntryContent(e, { ...e, lastSequence: `0${e.lastSequence}` })).toBe(true);
    expect(sameEntryContent(e, { ...e, records: 2 })).toBe(false);
    expect(sameEntryContent(e, { ...e, files: [{ ...e.files[0]!, schemaId: 1 }] })).toBe(false);
  });

  it('isStaged finds the range of the record’s table', () => {
    const ranges: StagedRange[] = [
      { ...entry(1, 5, null, 'a'), status: 'staged' },
      { ...entry(3, 9, null, 'b'), status: 'staged' },
    ];
    expect(isStaged(ranges, 'a', big(1))).toBe(true);
    expect(isStaged(ranges, 'a', big(5))).toBe(true);
    expect(isStaged(ranges, 'a', big(6))).toBe(false);
    expect(isStaged(ranges, 'b', big(6))).toBe(true);
    expect(isStaged(ranges, 'c', big(3))).toBe(false);
  });
});
