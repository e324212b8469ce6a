import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { toBinary } from '../../../lambdas/src/iceberg/conversions.ts';
import { encodeManifest, encodeManifestList } from '../../../lambdas/src/iceberg/manifest/index.ts';
import {
  type DataFile,
  DataFileContent,
  ManifestContent,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestFile,
} from '../../../lambdas/src/iceberg/manifest/types.ts';
import type { PartitionSpec } from '../../../lambdas/src/iceberg/partition-spec.ts';
import { assignDeletes, type PlannedFile, planScan } from '../../../lambdas/src/iceberg/scan.ts';
import type { Snapshot } from '../../../lambdas/src/iceberg/snapshot.ts';
import type { TableMetadata } from '../../../lambdas/src/iceberg/table-metadata.ts';
import { field, struct, T } from '../../../lambdas/src/iceberg/types.ts';

// Synthetic tables: manifests are encoded with the real codecs into an in-memory object store.
const store = new Map<string, Uint8Array>();
const read = async (uri: string) => {
  const bytes = store.get(uri);
  if (!bytes) throw Object.assign(new Error(`ENOENT: ${uri}`), { code: 'ENOENT' });
  return bytes;
};
const SYNC = new Uint8Array(16).fill(7);

const UNPARTITIONED: PartitionSpec = { 'spec-id': 0, fields: [] };
const BY_NAME: PartitionSpec = {
  'spec-id': 1,
  fields: [{ 'source-id': 2, 'field-id': 1000, name: 'name', transform: 'identity' }],
};
const SPECS = [UNPARTITIONED, BY_NAME];

function file(
  path: string,
  content: DataFile['content'] = DataFileContent.DATA,
  extra: Partial<DataFile> = {},
): DataFile {
  return {
    content,
    file_path: path,
    file_format: 'PARQUET',
    partition: [],
    record_count: 1n,
    file_size_in_bytes: 100n,
    ...extra,
  };
}
const planned = (f: DataFile, seq: bigint, specId = 0): PlannedFile => ({
  file: f,
  dataSequenceNumber: seq,
  specId,
});
const deletesOf = (tasks: ReturnType<typeof assignDeletes>, path: string) =>
  tasks.find((t) => t.file.file_path === path)?.deletes.map((d) => d.file.file_path);

describe('assignDeletes: sequence-number rules', () => {
  const data = file('s3://t/data/a.parquet');
  const pos = file('s3://t/data/pos.parquet', DataFileContent.POSITION_DELETES);
  const eq = file('s3://t/data/eq.parquet', DataFileContent.EQUALITY_DELETES, { equality_ids: [1] });

  it('applies a position delete with the same data sequence number (same commit)', () => {
    expect(deletesOf(assignDeletes([planned(data, 3n)], [planned(pos, 3n)], SPECS), data.file_path)).toEqual([
      pos.file_path,
    ]);
  });
  it('does not apply a position delete older than the data file', () => {
    expect(deletesOf(assignDeletes([planned(data, 4n)], [planned(pos, 3n)], SPECS), data.file_path)).toEqual(
      [],
    );
  });
  it('does not apply an equality delete with the same sequence number (strictly older data only)', () => {
    expect(deletesOf(assignDeletes([planned(data, 3n)], [planned(eq, 3n)], SPECS), data.file_path)).toEqual(
      [],
    );
  });
  it('applies an equality delete to strictly older data', () => {
    expect(deletesOf(assignDeletes([planned(data, 2n)], [planned(eq, 3n)], SPECS), data.file_path)).toEqual([
      eq.file_path,
    ]);
  });
  it('orders the applicable deletes by sequence number', () => {
    const eq2 = file('s3://t/data/eq2.parquet', DataFileContent.EQUALITY_DELETES, { equality_ids: [1] });
    const tasks = assignDeletes(
      [planned(data, 1n)],
      [planned(eq2, 5n), planned(pos, 2n), planned(eq, 3n)],
      SPECS,
    );
    expect(deletesOf(tasks, data.file_path)).toEqual([pos.file_path, eq.file_path, eq2.file_path]);
  });
});

describe('assignDeletes: partition scoping', () => {
  const a = file('s3://t/data/name=a/1.parquet', DataFileContent.DATA, { partition: ['a'] });
  const b = file('s3://t/data/name=b/2.parquet', DataFileContent.DATA, { partition: ['b'] });
  const eqB = file('s3://t/data/name=b/eq.parquet', DataFileContent.EQUALITY_DELETES, {
    partition: ['b'],
    equality_ids: [1],
  });

  it('applies a partitioned equality delete only inside its partition', () => {
    const tasks = assignDeletes([planned(a, 1n, 1), planned(b, 1n, 1)], [planned(eqB, 2n, 1)], SPECS);
    expect(deletesOf(tasks, a.file_path)).toEqual([]);
    expect(deletesOf(tasks, b.file_path)).toEqual([eqB.file_path]);
  });
  it('treats a partition value and the same value under another spec as different partitions', () => {
    const other: PartitionSpec = {
      'spec-id': 2,
      fields: [{ 'source-id': 3, 'field-id': 1001, name: 'x', transform: 'identity' }],
    };
    const tasks = assignDeletes([planned(b, 1n, 2)], [planned(eqB, 2n, 1)], [...SPECS, other]);
    expect(deletesOf(tasks, b.file_path)).toEqual([]);
  });
  it('applies an equality delete of an unpartitioned spec to every partition (global)', () => {
    const global = file('s3://t/data/eq-global.parquet', DataFileContent.EQUALITY_DELETES, {
      equality_ids: [1],
    });
    const tasks = assignDeletes([planned(a, 1n, 1), planned(b, 1n, 1)], [planned(global, 2n, 0)], SPECS);
    expect(deletesOf(tasks, a.file_path)).toEqual([global.file_path]);
    expect(deletesOf(tasks, b.file_path)).toEqual([global.file_path]);
  });
  it('does not treat an unpartitioned position delete as global', () => {
    const pos = file('s3://t/data/pos.parquet', DataFileContent.POSITION_DELETES);
    const tasks = assignDeletes([planned(a, 1n, 1)], [planned(pos, 2n, 0)], SPECS);
    expect(deletesOf(tasks, a.file_path)).toEqual([]);
  });
  it('matches null partition values with each other', () => {
    const n = file('s3://t/data/name=null/3.parquet', DataFileContent.DATA, { partition: [null] });
    const eqNull = file('s3://t/data/name=null/eq.parquet', DataFileContent.EQUALITY_DELETES, {
      partition: [null],
      equality_ids: [1],
    });
    const tasks = assignDeletes([planned(n, 1n, 1), planned(a, 1n, 1)], [planned(eqNull, 2n, 1)], SPECS);
    expect(deletesOf(tasks, n.file_path)).toEqual([eqNull.file_path]);
    expect(deletesOf(tasks, a.file_path)).toEqual([]);
  });
});

describe('assignDeletes: position delete targeting', () => {
  const a = file('s3://t/data/a.parquet');
  const z = file('s3://t/data/z.parquet');
  const enc = (s: string) => new TextEncoder().encode(s);

  it('honours referenced_data_file', () => {
    const pos = file('s3://t/data/pos.parquet', DataFileContent.POSITION_DELETES, {
      referenced_data_file: z.file_path,
    });
    const tasks = assignDeletes([planned(a, 1n), planned(z, 1n)], [planned(pos, 1n)], SPECS);
    expect(deletesOf(tasks, a.file_path)).toEqual([]);
    expect(deletesOf(tasks, z.file_path)).toEqual([pos.file_path]);
  });
  it('skips data files outside the file_path bounds (2147483546)', () => {
    const pos = file('s3://t/data/pos.parquet', DataFileContent.POSITION_DELETES, {
      lower_bounds: new Map([[2147483546, enc('s3://t/data/m')]]),
      upper_bounds: new Map([[2147483546, enc('s3://t/data/zz')]]),
    });
    const tasks = assignDeletes([planned(a, 1n), planned(z, 1n)], [planned(pos, 1n)], SPECS);
    expect(deletesOf(tasks, a.file_path)).toEqual([]);
    expect(deletesOf(tasks, z.file_path)).toEqual([pos.file_path]);
  });
  it('ignores position delete files for a data file that has a deletion vector', () => {
    const pos = file('s3://t/data/pos.parquet', DataFileContent.POSITION_DELETES);
    const dv = file('s3://t/data/dv.puffin', DataFileContent.POSITION_DELETES, {
      file_format: 'puffin',
      referenced_data_file: a.file_path,
    });
    const tasks = assignDeletes([planned(a, 1n), planned(z, 1n)], [planned(pos, 2n), planned(dv, 2n)], SPECS);
    expect(deletesOf(tasks, a.file_path)).toEqual([dv.file_path]);
    expect(deletesOf(tasks, z.file_path)).toEqual([pos.file_path]);
  });
});

// ---- planScan over synthetic manifests ----

const LOCATION = 's3://bucket/t';
const SCHEMA = {
  schemaId: 0,
  fields: [
    { id: 1, name: 'id', required: true, type: T.long },
    { id: 2, name: 'name', required: false, type: T.string },
  ],
};

function metadata(snapshots: Snapshot[], current?: bigint, formatVersion: 1 | 2 = 2): TableMetadata {
  return {
    'format-version': formatVersion,
    'table-uuid': '00000000-0000-0000-0000-000000000001',
    location: LOCATION,
    'last-sequence-number': 9n,
    'last-updated-ms': 0n,
    'last-column-id': 2,
    schemas: [SCHEMA],
    'current-schema-id': 0,
    'partition-specs': SPECS,
    'default-spec-id': 1,
    'last-partition-id': 1000,
    properties: {},
    ...(current === undefined ? {} : { 'current-snapshot-id': current }),
    snapshots,
    'snapshot-log': [],
    'metadata-log': [],
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    'default-sort-order-id': 0,
    refs: {},
    statistics: [],
    'partition-statistics': [],
  } as TableMetadata;
}

function manifestFile(
  path: string,
  content: ManifestFile['content'],
  seq: bigint,
  snapshotId: bigint,
  specId = 1,
): ManifestFile {
  return {
    manifest_path: path,
    manifest_length: 1n,
    partition_spec_id: specId,
    content,
    sequence_number: seq,
    min_sequence_number: seq,
    added_snapshot_id: snapshotId,
    added_files_count: 1,
    existing_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: 1n,
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
  };
}

function putManifest(
  uri: string,
  entries: ManifestEntry[],
  content: ManifestFile['content'] = ManifestContent.DATA,
  formatVersion: 1 | 2 = 2,
): void {
  const partitionType = struct([field(1000, 'name', T.string)]);
  store.set(
    uri,
    encodeManifest({
      formatVersion,
      schema: SCHEMA,
      spec: BY_NAME,
      partitionType,
      content,
      entries,
      syncMarker: SYNC,
    }),
  );
}

function putManifestList(uri: string, snapshotId: bigint, seq: bigint, manifests: ManifestFile[]): void {
  store.set(
    uri,
    encodeManifestList({ formatVersion: 2, snapshotId, sequenceNumber: seq, manifests, syncMarker: SYNC }),
  );
}

describe('planScan', () => {
  const snap = (id: bigint, seq: bigint, list?: string, manifests?: string[]): Snapshot =>
    ({
      'snapshot-id': id,
      'sequence-number': seq,
      'timestamp-ms': 0n,
      summary: { operation: 'append' },
      ...(list ? { 'manifest-list': list } : {}),
      ...(manifests ? { manifests } : {}),
      'schema-id': 0,
    }) as Snapshot;

  const dA = file(`${LOCATION}/data/name=a/a.parquet`, DataFileContent.DATA, {
    partition: ['a'],
    lower_bounds: new Map([[1, toBinary(T.long, 10n)]]),
    upper_bounds: new Map([[1, toBinary(T.long, 19n)]]),
  });
  const dB = file(`${LOCATION}/data/name=b/b.parquet`, DataFileContent.DATA, {
    partition: ['b'],
    lower_bounds: new Map([[1, toBinary(T.long, 20n)]]),
    upper_bounds: new Map([[1, toBinary(T.long, 29n)]]),
  });
  const gone = file(`${LOCATION}/data/name=a/gone.parquet`, DataFileContent.DATA, { partition: ['a'] });
  const eqA = file(`${LOCATION}/data/name=a/eq.parquet`, DataFileContent.EQUALITY_DELETES, {
    partition: ['a'],
    equality_ids: [1],
  });
  putManifestList(`${LOCATION}/metadata/snap-2.avro`, 2n, 2n, [
    manifestFile(`${LOCATION}/metadata/m-data.avro`, ManifestContent.DATA, 2n, 2n),
    manifestFile(`${LOCATION}/metadata/m-del.avro`, ManifestContent.DELETES, 2n, 2n),
  ]);
  putManifest(`${LOCATION}/metadata/m-data.avro`, [
    // EXISTING keeps its explicit sequence number; ADDED inherits the manifest's (2).
    {
      status: ManifestEntryStatus.EXISTING,
      snapshot_id: 1n,
      sequence_number: 1n,
      file_sequence_number: 1n,
      data_file: dA,
    },
    { status: ManifestEntryStatus.ADDED, data_file: dB },
    {
      status: ManifestEntryStatus.DELETED,
      snapshot_id: 2n,
      sequence_number: 1n,
      file_sequence_number: 1n,
      data_file: gone,
    },
  ]);
  putManifest(
    `${LOCATION}/metadata/m-del.avro`,
    [{ status: ManifestEntryStatus.ADDED, data_file: eqA }],
    ManifestContent.DELETES,
  );
  const m = metadata(
    [snap(1n, 1n, `${LOCATION}/metadata/missing.avro`), snap(2n, 2n, `${LOCATION}/metadata/snap-2.avro`)],
    2n,
  );

  it('lists live data files with inherited sequence numbers and skips DELETED entries', async () => {
    const plan = await planScan(m, read);
    expect(plan.snapshot?.['snapshot-id']).toBe(2n);
    expect(plan.schema).toBe(SCHEMA);
    const byPath = Object.fromEntries(plan.tasks.map((t) => [t.file.file_path, t]));
    expect(Object.keys(byPath).sort()).toEqual([dA.file_path, dB.file_path]);
    expect(byPath[dA.file_path]?.dataSequenceNumber).toBe(1n);
    expect(byPath[dB.file_path]?.dataSequenceNumber).toBe(2n);
    expect(byPath[dA.file_path]?.specId).toBe(1);
  });

  it('attaches the equality delete to the older file of its partition only', async () => {
    const plan = await planScan(m, read);
    const byPath = Object.fromEntries(
      plan.tasks.map((t) => [t.file.file_path, t.deletes.map((d) => d.file.file_path)]),
    );
    expect(byPath[dA.file_path]).toEqual([eqA.file_path]);
    expect(byPath[dB.file_path]).toEqual([]);
  });

  it('prunes by identity partition value and by column bounds', async () => {
    const byPartition = await planScan(m, read, { filter: [{ column: 'name', op: '=', value: 'b' }] });
    expect(byPartition.tasks.map((t) => t.file.file_path)).toEqual([dB.file_path]);
    const byBounds = await planScan(m, read, { filter: [{ column: 'id', op: '<', value: 20n }] });
    expect(byBounds.tasks.map((t) => t.file.file_path)).toEqual([dA.file_path]);
    const both = await planScan(m, read, {
      filter: [
        { column: 'id', op: '>=', value: 19n },
        { column: 'name', op: '=', value: 'a' },
      ],
    });
    expect(both.tasks.map((t) => t.file.file_path)).toEqual([dA.file_path]);
  });

  it('returns no tasks for a table without a current snapshot', async () => {
    const plan = await planScan(metadata([]), read);
    expect(plan.snapshot).toBeUndefined();
    expect(plan.tasks).toEqual([]);
  });

  it('raises NotFound naming the manifest list when it is missing', async () => {
    const err = await planScan(m, read, { snapshotId: 1n }).catch((e: unknown) => e);
    expect(isFloeError(err, ErrorKind.NotFound)).toBe(true);
    expect(String((err as Error).message)).toContain('missing.avro');
  });

  it('raises NotFound for an unknown snapshot id', async () => {
    const err = await planScan(m, read, { snapshotId: 42n }).catch((e: unknown) => e);
    expect(isFloeError(err, ErrorKind.NotFound)).toBe(true);
  });

  it('reads v1 inline `manifests` with sequence number 0', async () => {
    putManifest(
      `${LOCATION}/metadata/v1-m0.avro`,
      [
        {
          status: ManifestEntryStatus.ADDED,
          snapshot_id: 7n,
          data_file: { ...dA, content: DataFileContent.DATA },
        },
      ],
      ManifestContent.DATA,
      1,
    );
    const v1 = metadata([snap(7n, 0n, undefined, [`${LOCATION}/metadata/v1-m0.avro`])], 7n, 1);
    const plan = await planScan(v1, read);
    expect(plan.tasks.map((t) => [t.file.file_path, t.dataSequenceNumber, t.specId])).toEqual([
      [dA.file_path, 0n, 1],
    ]);
  });
});
