/**
 * Byte-for-byte golden files for manifests and manifest lists (codec `null`, fixed sync marker), so
 * any change to the bytes we write is deliberate. The goldens are justified independently: avsc's own
 * container reader must decode each one back to the inputs. Regenerate with UPDATE_GOLDEN=1
 * (see test/golden/avro/README.md).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  decodeManifest,
  decodeManifestList,
  encodeManifest,
  encodeManifestList,
  type ManifestEntry,
} from '../../../../lambdas/src/iceberg/manifest/index.ts';
import { dig, readWithAvsc } from '../../avro/avsc-reader.ts';
import {
  BIG_SNAPSHOT,
  BIG_SNAPSHOT_2,
  dataEntries,
  dataFile,
  deleteEntriesV2,
  manifestFile,
  PARTITION_A,
  PARTITION_TYPE,
  SCHEMA,
  SPEC,
  SYNC,
} from './samples.ts';

const DIR = join(import.meta.dirname, '../../../golden/avro');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

function golden(name: string, bytes: Uint8Array): void {
  const path = join(DIR, name);
  if (UPDATE || !existsSync(path)) {
    if (!UPDATE) throw new Error(`missing golden ${path}; run with UPDATE_GOLDEN=1`);
    mkdirSync(DIR, { recursive: true });
    writeFileSync(path, bytes);
  }
  const want = readFileSync(path);
  expect(Buffer.from(bytes).equals(want), `${name} differs from its golden file`).toBe(true);
}

const DV: ManifestEntry = {
  status: 1,
  data_file: dataFile('s3://b/t/data/dv.puffin', PARTITION_A, {
    content: 1,
    file_format: 'PUFFIN',
    record_count: 3n,
    referenced_data_file: 's3://b/t/data/a.parquet',
    content_offset: 4n,
    content_size_in_bytes: 40n,
  }),
};

const cases = {
  'manifest-v2-data.avro': () =>
    encodeManifest({
      formatVersion: 2,
      schema: SCHEMA,
      spec: SPEC,
      partitionType: PARTITION_TYPE,
      content: 0,
      entries: dataEntries(),
      syncMarker: SYNC,
      codec: 'null',
    }),
  'manifest-v3-deletes.avro': () =>
    encodeManifest({
      formatVersion: 3,
      schema: SCHEMA,
      spec: SPEC,
      partitionType: PARTITION_TYPE,
      content: 1,
      entries: [...deleteEntriesV2(), DV],
      syncMarker: SYNC,
      codec: 'null',
    }),
  'manifest-list-v2.avro': () =>
    encodeManifestList({
      formatVersion: 2,
      snapshotId: BIG_SNAPSHOT,
      parentSnapshotId: BIG_SNAPSHOT_2,
      sequenceNumber: 12n,
      manifests: [
        manifestFile('s3://b/t/metadata/m0.avro'),
        manifestFile('s3://b/t/metadata/m1.avro', { content: 1 }),
      ],
      syncMarker: SYNC,
      codec: 'null',
    }),
  'manifest-list-v3.avro': () =>
    encodeManifestList({
      formatVersion: 3,
      snapshotId: BIG_SNAPSHOT,
      sequenceNumber: 1n,
      firstRowId: 2n ** 60n,
      manifests: [
        manifestFile('s3://b/t/metadata/m0.avro'),
        manifestFile('s3://b/t/metadata/m1.avro', { content: 1 }),
      ],
      syncMarker: SYNC,
      codec: 'null',
    }),
};

describe('golden Avro files', () => {
  it.each(Object.keys(cases))('%s matches byte for byte', (name) => {
    golden(name, cases[name as keyof typeof cases]());
  });

  it('goldens decode with avsc’s reader to the inputs, and with ours', async () => {
    const m2 = readFileSync(join(DIR, 'manifest-v2-data.avro'));
    const avsc = await readWithAvsc(m2);
    expect(avsc.codec).toBe('null');
    expect(
      avsc.records.map((r) => [dig(r, 'status'), dig(r, 'snapshot_id'), dig(r, 'data_file', 'file_path')]),
    ).toEqual(dataEntries().map((e) => [e.status, e.snapshot_id ?? null, e.data_file.file_path]));
    expect(decodeManifest(m2).entries).toEqual(dataEntries());
    expect(decodeManifest(readFileSync(join(DIR, 'manifest-v3-deletes.avro'))).entries).toEqual([
      ...deleteEntriesV2(),
      DV,
    ]);
    const l3 = readFileSync(join(DIR, 'manifest-list-v3.avro'));
    const avscList = await readWithAvsc(l3);
    expect(avscList.meta['first-row-id']).toBe(String(2n ** 60n));
    expect(avscList.records.map((r) => dig(r, 'first_row_id'))).toEqual([2n ** 60n, null]);
    expect(
      decodeManifestList(readFileSync(join(DIR, 'manifest-list-v2.avro'))).map((m) => m.manifest_path),
    ).toEqual(['s3://b/t/metadata/m0.avro', 's3://b/t/metadata/m1.avro']);
  });
});
