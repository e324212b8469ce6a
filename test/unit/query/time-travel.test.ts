/**
 * Choosing a snapshot by time, id or ref, on the icebird-java-bunnies fixture (three snapshots
 * with 64-bit ids). Expected ids and times come from its metadata JSON, read here as text.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import {
  parseSnapshotArg,
  parseTimestampMs,
  selectSnapshot,
} from '../../../lambdas/src/query/time-travel.ts';
import { loadFixtureTable } from '../../helpers/fixtures.ts';

const bunnies = loadFixtureTable('icebird-java-bunnies');
// The snapshot log as written: ids kept as digit strings (they exceed 2^53).
const log = [
  ...readFileSync(bunnies.metadataPath, 'utf8').matchAll(
    /\{\s*"timestamp-ms"\s*:\s*(\d+),\s*"snapshot-id"\s*:\s*(\d+)\s*\}/g,
  ),
].map((m) => ({ ms: BigInt(m[1]!), id: m[2]! }));

function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('selectSnapshot', () => {
  it('as of a time: the last snapshot committed at or before it', () => {
    expect(log).toHaveLength(3);
    const at = (ms: bigint) => String(selectSnapshot(bunnies.metadata, { kind: 'as-of', ms }, 'bunnies'));
    expect(at(log[0]!.ms)).toBe(log[0]!.id);
    expect(at(log[1]!.ms - 1n)).toBe(log[0]!.id);
    expect(at(log[1]!.ms)).toBe(log[1]!.id);
    expect(at(log[2]!.ms + 86_400_000n)).toBe(log[2]!.id);
  });

  it('before the first snapshot: an error naming the table and its first commit', () => {
    const err = caught(() =>
      selectSnapshot(bunnies.metadata, { kind: 'as-of', ms: log[0]!.ms - 1n }, 'bunnies'),
    );
    expect(isFloeError(err, ErrorKind.NotFound)).toBe(true);
    expect((err as Error).message).toContain('bunnies');
    expect((err as Error).message).toContain(new Date(Number(log[0]!.ms)).toISOString());
  });

  it('an id stays exact; an unknown id or ref is an error naming it', () => {
    const id = parseSnapshotArg(log[1]!.id);
    expect(id).toEqual({ kind: 'snapshot-id', id: BigInt(log[1]!.id) });
    expect(String(selectSnapshot(bunnies.metadata, id, 'bunnies'))).toBe(log[1]!.id);
    // One more than a real id: a Number round trip would make them equal.
    const near = BigInt(log[1]!.id) + 1n;
    const err = caught(() => selectSnapshot(bunnies.metadata, { kind: 'snapshot-id', id: near }, 'bunnies'));
    expect(isFloeError(err, ErrorKind.NotFound)).toBe(true);
    expect((err as Error).message).toContain(`bunnies has no snapshot ${near}`);
    expect(String(selectSnapshot(bunnies.metadata, parseSnapshotArg('main'), 'bunnies'))).toBe(log[2]!.id);
    const ref = caught(() => selectSnapshot(bunnies.metadata, parseSnapshotArg('audit'), 'bunnies'));
    expect((ref as Error).message).toContain("no branch or tag 'audit'");
  });

  it('refuses ids outside 64 bits', () => {
    expect(
      isFloeError(
        caught(() => parseSnapshotArg('9223372036854775808')),
        ErrorKind.DataInvalid,
      ),
    ).toBe(true);
  });
});

describe('parseTimestampMs', () => {
  const utc = BigInt(Date.UTC(2025, 2, 14, 15, 0, 0));
  it('reads ISO 8601, offsets, region names (Trino), dates and epoch milliseconds', () => {
    expect(parseTimestampMs('2025-03-14T15:00:00Z')).toBe(utc);
    expect(parseTimestampMs('2025-03-14 15:00:00')).toBe(utc); // no zone: UTC
    expect(parseTimestampMs('2025-03-14 16:00:00+01:00')).toBe(utc);
    expect(parseTimestampMs('2025-03-14T10:00-0500')).toBe(utc);
    expect(parseTimestampMs('2025-03-14 15:00:00.123456 UTC')).toBe(utc + 123n);
    expect(parseTimestampMs('2025-03-14 16:00:00 Europe/Vienna')).toBe(utc); // CET, winter
    expect(parseTimestampMs('2025-07-14 17:00:00 Europe/Vienna')).toBe(BigInt(Date.UTC(2025, 6, 14, 15))); // CEST
    expect(parseTimestampMs('2025-03-14')).toBe(BigInt(Date.UTC(2025, 2, 14)));
    expect(parseTimestampMs('1743410793010')).toBe(1743410793010n);
  });

  it('refuses what is not a point in time, quoting it', () => {
    for (const bad of ['yesterday', '2025-02-30', '2025-03-14T25:00:00Z', '2025-03-14 15:00 Mars/Olympus']) {
      const err = caught(() => parseTimestampMs(bad));
      expect(isFloeError(err, ErrorKind.DataInvalid), bad).toBe(true);
      expect((err as Error).message).toContain(`'${bad}'`);
    }
  });
});
