import { describe, expect, it } from 'vitest';
import { decodeAvroContainer } from '../../../../lambdas/src/avro/index.ts';
import { isFloeError } from '../../../../lambdas/src/errors.ts';
import {
  assignManifestFirstRowIds,
  decodeManifestList,
  type EncodeManifestListOptions,
  encodeManifestList,
  readManifestList,
} from '../../../../lambdas/src/iceberg/manifest/index.ts';
import { dig, readWithAvsc } from '../../avro/avsc-reader.ts';
import { BIG_SNAPSHOT, BIG_SNAPSHOT_2, manifestFile, SYNC } from './samples.ts';

const MANIFESTS = [
  manifestFile('s3://b/t/metadata/m0.avro'),
  manifestFile('s3://b/t/metadata/m1.avro', { content: 1, partitions: [], key_metadata: undefined }),
  manifestFile('s3://b/t/metadata/m2.avro', { partitions: undefined, sequence_number: 2n ** 53n + 5n }),
];

const base = (over: Partial<EncodeManifestListOptions> = {}): EncodeManifestListOptions => ({
  formatVersion: 2,
  snapshotId: BIG_SNAPSHOT,
  parentSnapshotId: BIG_SNAPSHOT_2,
  sequenceNumber: 12n,
  manifests: MANIFESTS,
  syncMarker: SYNC,
  ...over,
});

function expectInvalid(fn: () => unknown, msg: RegExp): void {
  try {
    fn();
  } catch (e) {
    expect(isFloeError(e, 'DataInvalid'), String(e)).toBe(true);
    expect((e as Error).message).toMatch(msg);
    return;
  }
  expect.unreachable('expected DataInvalid');
}

describe('encodeManifestList → decodeManifestList', () => {
  it('round-trips a v2 list with every optional field and ids above 2^53', () => {
    for (const codec of ['null', 'deflate'] as const) {
      expect(decodeManifestList(encodeManifestList(base({ codec })))).toEqual(MANIFESTS);
    }
  });

  it('writes Java’s header keys; parent-snapshot-id is the string "null" without a parent', () => {
    const h = decodeAvroContainer(encodeManifestList(base())).metadata;
    expect(h['snapshot-id']).toBe('9158179788527662767');
    expect(h['parent-snapshot-id']).toBe('9007199254740993');
    expect(h['sequence-number']).toBe('12');
    expect(h['format-version']).toBe('2');
    expect(h['first-row-id']).toBeUndefined();
    const noParent = decodeAvroContainer(encodeManifestList(base({ parentSnapshotId: undefined }))).metadata;
    expect(noParent['parent-snapshot-id']).toBe('null');
    const list = readManifestList(encodeManifestList(base({ parentSnapshotId: undefined })));
    expect(list.parentSnapshotId).toBeUndefined();
    expect(list.snapshotId).toBe(BIG_SNAPSHOT);
    expect(list.sequenceNumber).toBe(12n);
  });

  it('v3 assigns first_row_id to new data manifests from first-row-id (Java V3 ManifestListWriter)', () => {
    const ms = [
      manifestFile('a', { added_rows_count: 10n, existing_rows_count: 5n }),
      manifestFile('b', { content: 1 }),
      manifestFile('c', { first_row_id: 7n }),
      manifestFile('d', { added_rows_count: 3n, existing_rows_count: 0n }),
    ];
    const bytes = encodeManifestList(base({ formatVersion: 3, firstRowId: 100n, manifests: ms }));
    const list = readManifestList(bytes);
    expect(list.formatVersion).toBe(3);
    expect(list.firstRowId).toBe(100n);
    // a: 100 (next 100+10+5); b: deletes get none; c: keeps 7; d: 115.
    expect(list.manifests.map((m) => m.first_row_id)).toEqual([100n, undefined, 7n, 115n]);
    expect(decodeAvroContainer(bytes).metadata['first-row-id']).toBe('100');
    expect(assignManifestFirstRowIds(ms, 100n).nextRowId).toBe(118n);
  });

  it('is readable by avsc’s container reader with field ids in the header', async () => {
    const read = await readWithAvsc(encodeManifestList(base({ codec: 'deflate' })));
    expect(read.records).toHaveLength(3);
    const r0 = read.records[0];
    expect(dig(r0, 'added_snapshot_id')).toBe(BIG_SNAPSHOT);
    expect(dig(r0, 'added_rows_count')).toBe(2n ** 54n);
    expect(dig(r0, 'partitions', 1)).toEqual(
      expect.objectContaining({ contains_null: true, lower_bound: null }),
    );
    expect(dig(read.records[2], 'sequence_number')).toBe(2n ** 53n + 5n);
    expect(read.rawSchema).toContain('"element-id":508');
    expect(read.rawSchema).toContain('"name":"r508"');
    expect(read.rawSchema).toContain('"field-id":517');
  });

  it('validates first_row_id use and content', () => {
    expectInvalid(
      () => encodeManifestList(base({ manifests: [manifestFile('x', { first_row_id: 1n })] })),
      /needs v3/,
    );
    expectInvalid(() => encodeManifestList(base({ formatVersion: 3 })), /need firstRowId/);
    expectInvalid(
      () =>
        encodeManifestList(
          base({
            formatVersion: 3,
            firstRowId: 0n,
            manifests: [manifestFile('x', { content: 1, first_row_id: 1n })],
          }),
        ),
      /delete manifests have no first_row_id/,
    );
    expectInvalid(() => encodeManifestList(base({ firstRowId: 1n })), /format version 3/);
  });
});
