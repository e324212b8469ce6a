import { describe, expect, it } from 'vitest';
import { decodeAvroContainer } from '../../../../lambdas/src/avro/index.ts';
import { isFloeError } from '../../../../lambdas/src/errors.ts';
import {
  decodeManifest,
  type EncodeManifestOptions,
  encodeManifest,
  type ManifestEntry,
} from '../../../../lambdas/src/iceberg/manifest/index.ts';
import { schemaToJson } from '../../../../lambdas/src/iceberg/schema.ts';
import { dig, readWithAvsc } from '../../avro/avsc-reader.ts';
import {
  BIG_SNAPSHOT,
  BIG_SNAPSHOT_2,
  dataEntries,
  dataFile,
  deleteEntriesV2,
  PARTITION_A,
  PARTITION_TYPE,
  SCHEMA,
  SPEC,
  SYNC,
  UUID,
} from './samples.ts';

const base = (over: Partial<EncodeManifestOptions> = {}): EncodeManifestOptions => ({
  formatVersion: 2,
  schema: SCHEMA,
  spec: SPEC,
  partitionType: PARTITION_TYPE,
  content: 0,
  entries: dataEntries(),
  syncMarker: SYNC,
  ...over,
});

function expectInvalid(opts: EncodeManifestOptions, msg: RegExp): void {
  try {
    encodeManifest(opts);
  } catch (e) {
    expect(isFloeError(e, 'DataInvalid'), String(e)).toBe(true);
    expect((e as Error).message).toMatch(msg);
    return;
  }
  expect.unreachable('expected DataInvalid');
}

describe('encodeManifest → decodeManifest', () => {
  it.each([2, 3] as const)('round-trips a v%i data manifest with every status and optional field', (v) => {
    const entries: ManifestEntry[] =
      v === 3
        ? dataEntries().map((e, i) =>
            i === 1 ? { ...e, data_file: { ...e.data_file, first_row_id: 2n ** 60n } } : e,
          )
        : dataEntries();
    for (const codec of ['null', 'deflate'] as const) {
      const m = decodeManifest(encodeManifest(base({ formatVersion: v, entries, codec })));
      expect(m.formatVersion).toBe(v);
      expect(m.specId).toBe(2);
      expect(m.content).toBe(0);
      expect(m.schemaJson).toEqual(schemaToJson(SCHEMA));
      expect(m.partitionFields).toEqual(SPEC.fields.map((f) => ({ fieldId: f['field-id'], name: f.name })));
      expect(m.partitionSpecFields).toEqual(SPEC.fields);
      expect(m.entries).toEqual(entries);
    }
  });

  it('keeps partition values of each result type in their internal representation', () => {
    const [added] = decodeManifest(encodeManifest(base())).entries;
    const p = added!.data_file.partition;
    expect(p).toEqual([3, 19723, 'a b/c', -12345n, UUID, 1_700_000_000_123_456n, 2n ** 60n, true]);
    expect(typeof p[3]).toBe('bigint'); // decimal → unscaled bigint
    expect(typeof p[1]).toBe('number'); // date → days
  });

  it('round-trips v2 delete manifests (position + equality) and v3 deletion vectors', () => {
    const v2 = decodeManifest(encodeManifest(base({ content: 1, entries: deleteEntriesV2() })));
    expect(v2.content).toBe(1);
    expect(v2.entries).toEqual(deleteEntriesV2());
    const dv: ManifestEntry = {
      status: 1,
      data_file: dataFile('s3://b/t/data/dv.puffin', PARTITION_A, {
        content: 1,
        file_format: 'PUFFIN',
        record_count: 3n,
        referenced_data_file: 's3://b/t/data/a.parquet',
        content_offset: 4n,
        content_size_in_bytes: 2n ** 33n,
      }),
    };
    const v3 = decodeManifest(
      encodeManifest(base({ formatVersion: 3, content: 1, entries: [...deleteEntriesV2(), dv] })),
    );
    expect(v3.entries).toEqual([...deleteEntriesV2(), dv]);
  });

  it('writes the header key-value metadata of spec §Manifests (plus Java’s iceberg.schema)', () => {
    const { metadata } = decodeAvroContainer(encodeManifest(base()));
    expect(metadata.schema).toBe(JSON.stringify(schemaToJson(SCHEMA)));
    expect(metadata['schema-id']).toBe('3');
    expect(JSON.parse(metadata['partition-spec']!)).toEqual(SPEC.fields);
    expect(
      metadata['partition-spec']!.startsWith(
        '[{"name":"id_bucket","transform":"bucket[16]","source-id":1,"field-id":1000}',
      ),
    ).toBe(true);
    expect(metadata['partition-spec-id']).toBe('2');
    expect(metadata['format-version']).toBe('2');
    expect(metadata.content).toBe('data');
    expect(JSON.parse(metadata['iceberg.schema']!).fields.map((f: { id: number }) => f.id)).toEqual([
      0, 1, 3, 4, 2,
    ]);
    expect(
      decodeAvroContainer(encodeManifest(base({ content: 1, entries: deleteEntriesV2() }))).metadata.content,
    ).toBe('deletes');
  });

  it('defaults to deflate, as Java does', () => {
    expect(decodeAvroContainer(encodeManifest(base())).codec).toBe('deflate');
  });
});

describe('independent check with avsc’s container reader', () => {
  it('reads our manifest and sees raw Avro values with field ids in the header', async () => {
    const bytes = encodeManifest(base({ codec: 'deflate' }));
    const read = await readWithAvsc(bytes);
    expect(read.codec).toBe('deflate');
    expect(read.meta['format-version']).toBe('2');
    for (const attr of [
      '"field-id":1000',
      '"element-id":133',
      '"logicalType":"map"',
      '"adjust-to-utc":true',
    ]) {
      expect(read.rawSchema).toContain(attr);
    }
    // The sanitised partition name keeps the Iceberg name (spec Appendix A naming rules).
    expect(read.rawSchema).toContain(
      '"name":"event_x20time_day","type":["null",{"type":"int","logicalType":"date"}],"default":null,"iceberg-field-name":"event time_day","field-id":1001',
    );
    expect(read.records).toHaveLength(3);
    const [r0, r1, r2] = read.records;
    expect(dig(r0, 'status')).toBe(1);
    expect(dig(r0, 'snapshot_id')).toBeNull();
    expect(dig(r0, 'sequence_number')).toBeNull();
    expect(dig(r1, 'snapshot_id')).toBe(BIG_SNAPSHOT_2);
    expect(dig(r2, 'snapshot_id')).toBe(BIG_SNAPSHOT);
    expect(dig(r1, 'data_file', 'record_count')).toBe(2n ** 55n + 3n);
    const part = (...k: string[]) => dig(r0, 'data_file', 'partition', ...k);
    expect(part('id_bucket')).toBe(3);
    expect(part('event_x20time_day')).toBe(19723);
    // decimal(10,2) is fixed[5]; -12345 in 5-byte two's complement is 2^40 - 12345 = ff ff ff cf c7.
    expect(Buffer.from(part('price') as Uint8Array).toString('hex')).toBe('ffffffcfc7');
    expect(Buffer.from(part('u') as Uint8Array).toString('hex')).toBe(UUID.replace(/-/g, ''));
    expect(part('event_x20time')).toBe(1_700_000_000_123_456n);
    // int-keyed metric maps are arrays of {key, value} records (k117_v118 …).
    expect(
      (dig(r0, 'data_file', 'column_sizes') as unknown[]).map((kv) => [dig(kv, 'key'), dig(kv, 'value')]),
    ).toEqual([
      [1, 120n],
      [3, 2n ** 40n],
    ]);
    expect(dig(r0, 'data_file', 'split_offsets')).toEqual([4n, 2n ** 33n]);
  });
});

describe('encodeManifest validation', () => {
  it('requires explicit sequence numbers on EXISTING/DELETED entries (facts §2.8)', () => {
    const [added, existing, deleted] = dataEntries();
    expectInvalid(
      base({ entries: [{ ...existing!, sequence_number: undefined }] }),
      /explicit sequence_number/,
    );
    expectInvalid(
      base({ entries: [{ ...deleted!, file_sequence_number: undefined }] }),
      /explicit sequence_number/,
    );
    expectInvalid(base({ entries: [{ ...existing!, snapshot_id: undefined }] }), /explicit snapshot_id/);
    expect(() => encodeManifest(base({ entries: [added!] }))).not.toThrow();
  });

  it('rejects fields the format version does not have', () => {
    const [added] = dataEntries();
    const withRowId = { ...added!, data_file: { ...added!.data_file, first_row_id: 1n } };
    expectInvalid(base({ entries: [withRowId] }), /first_row_id.*version 2/);
    expect(() => encodeManifest(base({ formatVersion: 3, entries: [withRowId] }))).not.toThrow();
    const eq = deleteEntriesV2()[1]!;
    expectInvalid(base({ formatVersion: 1, content: 1, entries: [eq] }), /v1 manifests hold data files only/);
  });

  it('keeps data and delete files apart and checks delete-file invariants', () => {
    expectInvalid(base({ content: 1 }), /cannot go in a delete manifest/);
    expectInvalid(base({ entries: deleteEntriesV2() }), /cannot go in a data manifest/);
    const eq = deleteEntriesV2()[1]!;
    expectInvalid(
      base({ content: 1, entries: [{ ...eq, data_file: { ...eq.data_file, equality_ids: undefined } }] }),
      /need equality_ids/,
    );
    const pos = deleteEntriesV2()[0]!;
    expectInvalid(
      base({
        formatVersion: 3,
        content: 1,
        entries: [{ ...pos, data_file: { ...pos.data_file, content_offset: 1n } }],
      }),
      /go together/,
    );
  });

  it('checks partition arity and that the partition type matches the spec', () => {
    const [added] = dataEntries();
    expectInvalid(
      base({ entries: [{ ...added!, data_file: { ...added!.data_file, partition: [1] } }] }),
      /partition values/,
    );
    expectInvalid(base({ spec: { ...SPEC, fields: SPEC.fields.slice(1) } }), /does not match partition spec/);
  });

  it('rejects partition values of the wrong type', () => {
    const [added] = dataEntries();
    const bad = [...PARTITION_A];
    bad[3] = 1.5; // decimal must be an unscaled bigint
    expectInvalid(
      base({ entries: [{ ...added!, data_file: { ...added!.data_file, partition: bad } }] }),
      /decimal/,
    );
  });
});

describe('v1 manifests', () => {
  it('are written as Java’s V1Metadata (block_size_in_bytes, no content, no sequence numbers)', async () => {
    const [added] = dataEntries();
    const bytes = encodeManifest(base({ formatVersion: 1, entries: [added!] }));
    const read = await readWithAvsc(bytes);
    expect(read.meta.content).toBeUndefined();
    expect(dig(read.records[0], 'data_file', 'block_size_in_bytes')).toBe(64n * 1024n * 1024n);
    expect(dig(read.records[0], 'sequence_number')).toBeUndefined();
    const m = decodeManifest(bytes);
    expect(m.formatVersion).toBe(1);
    expect(m.entries).toEqual([added]);
  });
});
