/**
 * The last change of each key written as data files plus equality deletes (upsert-write.ts), read
 * back with hyparquet (not Floe's reader) and checked against a model of the change sequence.
 */
import fc from 'fast-check';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, describe, expect, it } from 'vitest';
import { fileUri, LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import { seededIds } from '../../../lambdas/src/adapters/local/system-clock.ts';
import { writeChanges } from '../../../lambdas/src/engine/upsert-write.ts';
import { DataFileContent } from '../../../lambdas/src/iceberg/manifest/types.ts';
import { applyUpdates } from '../../../lambdas/src/iceberg/metadata/index.ts';
import { newTableMetadata } from '../../../lambdas/src/iceberg/metadata/new-table.ts';
import type { PartitionSpec } from '../../../lambdas/src/iceberg/partition-spec.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import type { Snapshot } from '../../../lambdas/src/iceberg/snapshot.ts';
import type { TableMetadata } from '../../../lambdas/src/iceberg/table-metadata.ts';
import { currentSchema, defaultSpec } from '../../../lambdas/src/iceberg/table-metadata.ts';
import { field, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import type { Row } from '../../../lambdas/src/iceberg/values.ts';
import type { ChangeOp } from '../../../lambdas/src/records/change-event.ts';
import { tempDir } from '../../helpers/e2e.ts';

const tmp = tempDir('floe-upsert-write-');
afterAll(() => tmp.cleanup());
const store = new LocalObjectStore();
let tableNo = 0;

const SCHEMA: Schema = {
  schemaId: 0,
  fields: [
    field(1, 'id', T.long, true),
    field(2, 'region', T.string),
    field(3, 'n', T.long),
    field(4, 'customer', struct([field(5, 'tenant', T.string, true), field(6, 'x', T.double)]), true),
  ],
};

/** A table with one (empty) snapshot: older rows may exist, so changes need deletes. */
function table(spec?: PartitionSpec): TableMetadata {
  const m = emptyTable(spec);
  const snapshot: Snapshot = {
    'snapshot-id': 1n,
    'sequence-number': 1n,
    'timestamp-ms': 0n,
    'manifest-list': `${m.location}/metadata/snap-1.avro`,
    summary: { operation: 'append' },
    'schema-id': 0,
  };
  return applyUpdates(
    m,
    [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 1n },
    ],
    { nowMs: 0 },
  );
}

function emptyTable(spec?: PartitionSpec): TableMetadata {
  return newTableMetadata({
    location: `${fileUri(tmp.dir)}/t${++tableNo}`,
    schema: SCHEMA,
    ...(spec ? { spec } : {}),
    formatVersion: 2,
    tableUuid: `00000000-0000-4000-8000-${String(tableNo).padStart(12, '0')}`,
    nowMs: 0,
  });
}

const BY_REGION: PartitionSpec = {
  'spec-id': 0,
  fields: [{ 'source-id': 2, 'field-id': 1000, name: 'region', transform: 'identity' }],
};
const BY_ID: PartitionSpec = {
  'spec-id': 0,
  fields: [{ 'source-id': 1, 'field-id': 1000, name: 'id_bucket', transform: 'bucket[4]' }],
};

async function rowsOf(uri: string): Promise<Record<string, unknown>[]> {
  const bytes = await store.get(uri);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return (await parquetReadObjects({ file, compressors })) as Record<string, unknown>[];
}

async function fieldIdsOf(uri: string): Promise<number[]> {
  const bytes = await store.get(uri);
  const meta = parquetMetadata(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
  );
  return meta.schema.flatMap((e) => (e.field_id === undefined ? [] : [e.field_id]));
}

function row(id: number, region: string, n: number, tenant = 't'): Row {
  return { id: BigInt(id), region, n: BigInt(n), customer: { tenant, x: 1.5 } };
}

async function write(m: TableMetadata, rows: Row[], ops: ChangeOp[], key = ['id']) {
  return writeChanges(
    { store, ids: seededIds(tableNo) },
    m,
    currentSchema(m),
    defaultSpec(m),
    rows,
    ops,
    key,
    [],
    't',
  );
}

describe('writeChanges', () => {
  it('writes only the last change of each key, and one equality delete per touched key', async () => {
    const m = table();
    const w = await write(
      m,
      [row(1, 'eu', 1), row(2, 'eu', 1), row(1, 'us', 2), row(2, 'eu', 2), row(3, 'eu', 1), row(1, 'eu', 3)],
      ['upsert', 'upsert', 'upsert', 'delete', 'upsert', 'upsert'],
    );
    expect(w.failed.size).toBe(0);
    expect([w.upserted, w.deleted]).toEqual([2, 1]);
    const data = (await Promise.all(w.dataFiles.map((f) => rowsOf(f.file_path)))).flat();
    expect(data.map((r) => [r.id, r.n]).sort()).toEqual([
      [1n, 3n],
      [3n, 1n],
    ]);
    expect(w.deleteFiles).toHaveLength(1);
    const del = w.deleteFiles[0]!;
    expect(del.content).toBe(DataFileContent.EQUALITY_DELETES);
    expect(del.equality_ids).toEqual([1]);
    expect(del.record_count).toBe(3n);
    expect((await rowsOf(del.file_path)).map((r) => r.id).sort()).toEqual([1n, 2n, 3n]);
    expect(await fieldIdsOf(del.file_path)).toEqual([1]);
    expect(w.updates).toEqual([]); // unpartitioned: the table's own spec
  });

  it('writes global deletes under an added unpartitioned spec when a key can change partition', async () => {
    const m = table(BY_REGION);
    const w = await write(m, [row(1, 'eu', 1), row(1, 'us', 2)], ['upsert', 'upsert']);
    expect(w.updates).toEqual([{ action: 'add-spec', spec: { 'spec-id': 1, fields: [] } }]);
    expect(w.deleteSpecId).toBe(1);
    expect(w.deleteFiles.map((f) => f.partition)).toEqual([[]]);
    expect(w.dataFiles.map((f) => f.partition)).toEqual([['us']]);
  });

  it('writes partitioned deletes when the key decides the partition and the table has one spec', async () => {
    const m = table(BY_ID);
    const w = await write(
      m,
      [row(1, 'eu', 1), row(2, 'eu', 1), row(1, 'us', 2)],
      ['upsert', 'upsert', 'delete'],
    );
    expect(w.updates).toEqual([]);
    expect(w.deleteSpecId).toBe(0);
    // One delete file per bucket, each with the bucket of its keys.
    const deleted = await Promise.all(
      w.deleteFiles.map(async (f) => [f.partition, (await rowsOf(f.file_path)).map((r) => r.id)]),
    );
    expect(deleted.length).toBe(new Set(deleted.map(([p]) => JSON.stringify(p))).size);
    expect(deleted.flatMap(([, ids]) => ids as bigint[]).sort()).toEqual([1n, 2n]);
    for (const f of [...w.deleteFiles, ...w.dataFiles]) expect(f.partition).toHaveLength(1);
  });

  it('deletes by a composite key with a nested part, with the key columns nested as in the table', async () => {
    const m = table();
    const w = await write(
      m,
      [row(1, 'eu', 1, 'a'), row(1, 'eu', 2, 'b'), row(1, 'eu', 3, 'a')],
      ['upsert', 'upsert', 'delete'],
      ['id', 'customer.tenant'],
    );
    expect([w.upserted, w.deleted]).toEqual([1, 1]);
    expect(w.deleteFiles[0]!.equality_ids).toEqual([1, 5]);
    expect(await fieldIdsOf(w.deleteFiles[0]!.file_path)).toEqual([1, 4, 5]);
    const keys = (await rowsOf(w.deleteFiles[0]!.file_path)).map((r) => [
      r.id,
      (r.customer as { tenant: string }).tenant,
    ]);
    expect(keys.sort()).toEqual([
      [1n, 'a'],
      [1n, 'b'],
    ]);
  });

  it("writes no deletes in a table's first commit (no older row to remove)", async () => {
    const w = await write(
      emptyTable(BY_REGION),
      [row(1, 'eu', 1), row(1, 'us', 2), row(2, 'eu', 3)],
      ['upsert', 'upsert', 'delete'],
    );
    expect([w.deleteFiles, w.updates]).toEqual([[], []]);
    const data = (await Promise.all(w.dataFiles.map((f) => rowsOf(f.file_path)))).flat();
    expect(data.map((r) => [r.id, r.n])).toEqual([[1n, 2n]]);
  });

  it('refuses every record, naming the column, when the key is a double column', async () => {
    const m = table();
    const w = await write(m, [row(1, 'eu', 1)], ['upsert'], ['customer.x']);
    expect(w.failed.get(0)).toMatch(/key column 'customer\.x' is double/);
    expect(w.dataFiles).toEqual([]);
  });

  it('keeps exactly the last state of each key, for any change sequence', async () => {
    const change = fc.record({
      id: fc.integer({ min: 1, max: 6 }),
      region: fc.constantFrom('eu', 'us', 'ap'),
      op: fc.constantFrom<ChangeOp>('upsert', 'upsert', 'delete'),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(change, { minLength: 1, maxLength: 30 }),
        fc.boolean(),
        async (changes, partitioned) => {
          const m = table(partitioned ? BY_REGION : undefined);
          const rows = changes.map((c, i) => row(c.id, c.region, i));
          const w = await write(
            m,
            rows,
            changes.map((c) => c.op),
          );
          const model = new Map<bigint, bigint | undefined>();
          for (const [i, c] of changes.entries())
            model.set(BigInt(c.id), c.op === 'delete' ? undefined : BigInt(i));
          const data = (await Promise.all(w.dataFiles.map((f) => rowsOf(f.file_path)))).flat();
          const live = [...model].filter(([, n]) => n !== undefined);
          expect(data.map((r) => [r.id, r.n]).sort()).toEqual(live.sort());
          const keys = (await Promise.all(w.deleteFiles.map((f) => rowsOf(f.file_path)))).flat();
          expect(keys.map((r) => r.id).sort()).toEqual([...model.keys()].sort());
          expect([w.upserted, w.deleted]).toEqual([live.length, model.size - live.length]);
        },
      ),
      { numRuns: 60 },
    );
  });
});
