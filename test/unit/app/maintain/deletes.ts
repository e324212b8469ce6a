/**
 * Commits row-level deletes to a Floe table the way another engine (Spark MERGE, Flink upserts)
 * would: a Parquet delete file per partition, a delete manifest, an `overwrite`-free `delete`
 * snapshot. Floe never writes deletes itself; compaction must apply them.
 */
import { seededIds } from '../../../../lambdas/src/adapters/local/system-clock.ts';
import { commitSnapshot } from '../../../../lambdas/src/app/maintain/snapshot-commit.ts';
import type { CommitDeps } from '../../../../lambdas/src/engine/append.ts';
import {
  type ManifestIo,
  readManifestList,
  writeEntriesManifest,
} from '../../../../lambdas/src/engine/manifest-io.ts';
import {
  type DataFile,
  DataFileContent,
  ManifestContent,
  ManifestEntryStatus,
} from '../../../../lambdas/src/iceberg/manifest/types.ts';
import { planScan } from '../../../../lambdas/src/iceberg/scan.ts';
import type { Schema } from '../../../../lambdas/src/iceberg/schema.ts';
import { currentSchema, currentSnapshot } from '../../../../lambdas/src/iceberg/table-metadata.ts';
import { field, T } from '../../../../lambdas/src/iceberg/types.ts';
import type { Row } from '../../../../lambdas/src/iceberg/values.ts';
import { writeDataFile } from '../../../../lambdas/src/parquet/writer.ts';
import type { TableIdentifier } from '../../../../lambdas/src/ports/catalog.ts';
import { puffinOf } from '../../../helpers/puffin-dv.ts';

const POSITION_SCHEMA: Schema = {
  schemaId: 0,
  fields: [field(2147483546, 'file_path', T.string, true), field(2147483545, 'pos', T.long, true)],
};

let seed = 90_000;

type Deletes =
  | { readonly kind: 'position'; readonly filePath: string; readonly positions: readonly bigint[] }
  /** A format v3 deletion vector (Puffin `deletion-vector-v1`, test/helpers/puffin-dv.ts). */
  | { readonly kind: 'dv'; readonly filePath: string; readonly positions: readonly bigint[] }
  | { readonly kind: 'equality'; readonly ids: readonly bigint[] };

/**
 * Deletes rows: by position in one data file, or by `id` value (an equality delete on column
 * `id`, one file per partition holding the targeted ids). Returns the delete snapshot's sequence number.
 */
export async function commitDeletes(deps: CommitDeps, id: TableIdentifier, del: Deletes): Promise<bigint> {
  const io: ManifestIo = { store: deps.store, ids: seededIds(seed++) };
  const base = await deps.catalog.loadTable(id);
  const meta = base.metadata;
  const schema = currentSchema(meta);
  const plan = await planScan(meta, (u) => deps.store.get(u));
  const files: { specId: number; file: DataFile }[] = [];
  if (del.kind === 'position') {
    const target = plan.tasks.find((t) => t.file.file_path === del.filePath)!;
    const rows: Row[] = del.positions.map((pos) => ({ file_path: del.filePath, pos }));
    files.push({
      specId: target.specId,
      file: await put(
        deps,
        io,
        meta.location,
        POSITION_SCHEMA,
        rows,
        target.file.partition,
        DataFileContent.POSITION_DELETES,
      ),
    });
  } else if (del.kind === 'dv') {
    const target = plan.tasks.find((t) => t.file.file_path === del.filePath)!;
    const { bytes, blobs } = puffinOf([{ referencedDataFile: del.filePath, positions: del.positions }]);
    const uri = `${meta.location}/data/dv-${io.ids.uuid()}.puffin`;
    await deps.store.put(uri, bytes);
    files.push({
      specId: target.specId,
      file: {
        content: DataFileContent.POSITION_DELETES,
        file_path: uri,
        file_format: 'PUFFIN',
        partition: target.file.partition,
        record_count: BigInt(del.positions.length),
        file_size_in_bytes: BigInt(bytes.length),
        referenced_data_file: del.filePath,
        content_offset: BigInt(blobs[0]!.offset),
        content_size_in_bytes: BigInt(blobs[0]!.length),
      },
    });
  } else {
    const idField = schema.fields.find((f) => f.name === 'id')!;
    const region = schema.fields.find((f) => f.name === 'region')!;
    const eqSchema: Schema = { schemaId: schema.schemaId, fields: [idField, region] };
    for (const part of new Set(plan.tasks.map((t) => String(t.file.partition[0])))) {
      const want = del.ids.filter((i) => (i % 2n === 0n ? 'eu' : 'us') === part);
      if (want.length === 0) continue;
      const task = plan.tasks.find((t) => String(t.file.partition[0]) === part)!;
      const rows: Row[] = want.map((i) => ({ id: i, region: part }));
      const f = await put(
        deps,
        io,
        meta.location,
        eqSchema,
        rows,
        task.file.partition,
        DataFileContent.EQUALITY_DELETES,
        [idField.id],
      );
      files.push({ specId: task.specId, file: f });
    }
  }
  const out = await commitSnapshot(deps, id, async (now, snapshotId, sequenceNumber) => {
    const parent = currentSnapshot(now.metadata)!;
    const manifests = await readManifestList(io, now.metadata, parent);
    const m = await writeEntriesManifest(
      io,
      now.metadata,
      files[0]!.specId,
      ManifestContent.DELETES,
      files.map((f) => ({ status: ManifestEntryStatus.ADDED, data_file: f.file })),
      snapshotId,
      sequenceNumber,
    );
    return {
      operation: 'delete',
      manifests: [m, ...manifests],
      written: [m.manifest_path],
      changes: { added: [], removed: [], addedDeletes: files.map((f) => f.file) },
    };
  });
  return out.snapshot!['sequence-number']!;
}

async function put(
  deps: CommitDeps,
  io: ManifestIo,
  location: string,
  schema: Schema,
  rows: Row[],
  partition: readonly unknown[],
  content: DataFileContent,
  equalityIds?: number[],
): Promise<DataFile> {
  const written = writeDataFile(schema, rows);
  const uri = `${location}/data/deletes-${io.ids.uuid()}.parquet`;
  await deps.store.put(uri, written.bytes);
  return {
    content,
    file_path: uri,
    file_format: 'PARQUET',
    partition,
    record_count: BigInt(rows.length),
    file_size_in_bytes: BigInt(written.bytes.length),
    ...(equalityIds ? { equality_ids: equalityIds } : {}),
  };
}
