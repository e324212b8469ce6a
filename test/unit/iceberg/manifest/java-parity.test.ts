/**
 * Our generated Avro schemas must be byte-identical to the ones Java wrote into the fixture files
 * (same field order, names, docs, ids and attribute order), since they come from the field tables.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeAvroContainer } from '../../../../lambdas/src/avro/index.ts';
import { icebergToAvroSchema } from '../../../../lambdas/src/iceberg/avro-schema.ts';
import {
  encodeManifest,
  encodeManifestList,
  manifestEntryType,
  manifestFileType,
} from '../../../../lambdas/src/iceberg/manifest/index.ts';
import type { PartitionSpec } from '../../../../lambdas/src/iceberg/partition-spec.ts';
import { schemaFromJson } from '../../../../lambdas/src/iceberg/schema.ts';
import { field, struct, T } from '../../../../lambdas/src/iceberg/types.ts';
import { FIXTURES_ROOT } from '../../../helpers/fixture-root.ts';
import { SYNC } from './samples.ts';

const F = FIXTURES_ROOT;
const header = (p: string) => {
  const d = decodeAvroContainer(readFileSync(`${F}/${p}`));
  return { avro: JSON.stringify(d.schemaJson), meta: d.metadata };
};

/** Writes an empty manifest with the fixture's own schema and spec, and returns its header. */
function ours(fixture: ReturnType<typeof header>, v: 1 | 2, partitionType = struct([])) {
  const spec: PartitionSpec = {
    'spec-id': Number(fixture.meta['partition-spec-id']),
    fields: JSON.parse(fixture.meta['partition-spec']!),
  };
  const bytes = encodeManifest({
    formatVersion: v,
    schema: schemaFromJson(JSON.parse(fixture.meta.schema!)),
    spec,
    partitionType,
    content: 0,
    entries: [],
    syncMarker: SYNC,
  });
  const d = decodeAvroContainer(bytes);
  return { avro: JSON.stringify(d.schemaJson), meta: d.metadata };
}

describe('generated schemas equal Java’s (Iceberg 1.8.1 / 1.10.0 fixtures)', () => {
  it('v2 manifest list (icebird-java-bunnies)', () => {
    const java = header(
      'icebird-java-bunnies/metadata/snap-4951213507629824583-1-583a45a0-7389-4d71-9305-ac3a8725c38b.avro',
    );
    const bytes = encodeManifestList({
      formatVersion: 2,
      snapshotId: 1n,
      sequenceNumber: 1n,
      manifests: [],
      syncMarker: SYNC,
    });
    const d = decodeAvroContainer(bytes);
    expect(JSON.stringify(d.schemaJson)).toBe(java.avro);
    expect(d.metadata['iceberg.schema']).toBe(java.meta['iceberg.schema']);
  });

  it('v1 manifest list (duckdb-v1-legacy-manifests-field, Java 1.10)', () => {
    const java = header(
      'duckdb-v1-legacy-manifests-field/metadata/snap-2456114553637229296-1-d65f86b0-b799-467f-b1f4-9c697e4c4fc7.avro',
    );
    expect(JSON.stringify(icebergToAvroSchema(manifestFileType(1), 'manifest_file'))).toBe(java.avro);
  });

  it('v2 unpartitioned manifest (icebird-java-bunnies)', () => {
    const java = header('icebird-java-bunnies/metadata/583a45a0-7389-4d71-9305-ac3a8725c38b-m0.avro');
    const mine = ours(java, 2);
    expect(mine.avro).toBe(java.avro);
    expect(mine.meta['iceberg.schema']).toBe(java.meta['iceberg.schema']);
    expect(mine.meta['partition-spec']).toBe(java.meta['partition-spec']);
    expect(mine.meta.content).toBe(java.meta.content);
    expect(JSON.parse(mine.meta.schema!)).toEqual(JSON.parse(java.meta.schema!));
  });

  it('v2 identity(string) partitioned manifest (duckdb-equality-deletes-partitioned)', () => {
    const java = header(
      'duckdb-equality-deletes-partitioned/metadata/2b5d4ce3-154e-4498-a648-89be96ebd74a-m0.avro',
    );
    const mine = ours(java, 2, struct([field(1000, 'name', T.string)]));
    expect(mine.avro).toBe(java.avro);
    expect(mine.meta['iceberg.schema']).toBe(java.meta['iceberg.schema']);
    expect(mine.meta['partition-spec']).toBe(java.meta['partition-spec']);
  });

  it('v1 partitioned manifest (duckdb-v1-legacy-manifests-field)', () => {
    const java = header(
      'duckdb-v1-legacy-manifests-field/metadata/d65f86b0-b799-467f-b1f4-9c697e4c4fc7-m0.avro',
    );
    const mine = ours(java, 1, struct([field(1000, 'category', T.string)]));
    expect(mine.avro).toBe(java.avro);
    expect(mine.meta['iceberg.schema']).toBe(java.meta['iceberg.schema']);
  });

  it('bucket + date partition record r102 (icebird-spark-rename-column, older Spark runtime)', () => {
    const java = header('icebird-spark-rename-column/metadata/abf62b15-903b-40b6-9e6b-26bcdceac9b3-m0.avro');
    const r102 = (s: string) =>
      JSON.stringify(/"type":(\{"type":"record","name":"r102".*?\]\})/.exec(s)?.[1]);
    const entry = manifestEntryType(
      2,
      struct([field(1000, 'id_bucket', T.int), field(1001, 'date', T.date)]),
    );
    const mine = JSON.stringify(icebergToAvroSchema(entry, 'manifest_entry'));
    expect(r102(mine)).not.toBe(JSON.stringify(undefined));
    expect(r102(mine)).toBe(r102(java.avro));
  });
});
