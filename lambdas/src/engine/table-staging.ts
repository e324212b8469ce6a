/**
 * What both ingest paths of a load share: creating a table, evolving its schema and spec for a
 * batch, storing data files, and committing what was staged with retries.
 */

import { partitionFieldsFor, upsertFor } from '../config.ts';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import { identifierIdsOf, requirePaths } from '../iceberg/identifier-fields.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import { DataFileContent } from '../iceberg/manifest/types.ts';
import { LAST_ADDED, newTableMetadata, type TableUpdate } from '../iceberg/metadata/index.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { type DesiredPartitionField, evolveSpec, partitionPath } from '../iceberg/partitioning.ts';
import { type Schema, schemaStruct } from '../iceberg/schema.ts';
import { assignFreshIds, partitionSourceTransforms, unionByName } from '../iceberg/schema-evolution.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { currentSchema, defaultSpec } from '../iceberg/table-metadata.ts';
import type { StructType } from '../iceberg/types.ts';
import type { IcebergValue } from '../iceberg/values.ts';
import type { DataFileResult } from '../parquet/index.ts';
import type { LoadedTable, TableIdentifier } from '../ports/catalog.ts';
import { deleteQuietly } from '../ports/object-store.ts';
import { type FitOptions, fitToExisting } from '../schema/fit.ts';
import { type AppendResult, commitAppend, createWithAppend, type PreparedAppend } from './append.ts';
import type { DeadLetter } from './dead-letters.ts';
import type { UpsertCounts } from './generic-stage.ts';

import type { LoadDeps, TableLoadResult } from './load-types.ts';

export interface Staged {
  readonly prepared: PreparedAppend;
  readonly rejected: readonly DeadLetter[];
  readonly changes: readonly string[];
  readonly specChanged: boolean;
  /** Upsert tables: keys whose last change upserted / deleted a row. */
  readonly upserts?: UpsertCounts;
}

export interface Committed {
  readonly result: AppendResult;
  /** What the winning attempt staged. */
  readonly staged?: Staged;
}

/**
 * Commits what `stageFor` writes against the freshly loaded base. The staged files are reused
 * while the base's schema and spec stay the same; when they move (another writer evolved the
 * table) the old files are deleted as orphans and the batch is staged again.
 */
export async function commitStaged(
  deps: LoadDeps,
  id: TableIdentifier,
  stageFor: (base: LoadedTable, files: string[]) => Promise<Staged>,
  /** Already staged for a table of this metadata (a table staged before it was created). */
  prestaged?: { readonly metadata: TableMetadata; readonly staged: Staged; readonly files: string[] },
): Promise<Committed> {
  let last: (Staged & { key: string }) | undefined = prestaged
    ? { key: stagingKey(prestaged.metadata), ...prestaged.staged }
    : undefined;
  const files: string[] = [...(prestaged?.files ?? [])];
  try {
    const result = await commitAppend(deps, {
      table: id,
      summary: deps.summary,
      prepare: async (base: LoadedTable) => {
        const key = stagingKey(base.metadata);
        if (last?.key === key) return last.prepared;
        await deleteQuietly(deps.store, files.splice(0));
        last = { key, ...(await stageFor(base, files)) };
        return last.prepared;
      },
    });
    return { result, ...(last ? { staged: last } : {}) };
  } catch (e) {
    if (e instanceof UseGenericPath) await deleteQuietly(deps.store, files.splice(0));
    throw e;
  }
}

/**
 * Creates the table the batch was staged for, with the staged files as its first snapshot, in one
 * metadata file where the catalog can (`createWithAppend`), else created and then committed; when
 * another writer created the table meanwhile, the batch is staged again for that table
 * (`commitStaged`). `created`: this call created it.
 */
export async function createAndCommit(
  deps: LoadDeps,
  id: TableIdentifier,
  stageFor: (base: LoadedTable, files: string[]) => Promise<Staged>,
  prestaged: { readonly metadata: TableMetadata; readonly staged: Staged; readonly files: string[] },
): Promise<Committed & { readonly created: boolean }> {
  const direct = await createWithAppend(
    deps,
    id,
    prestaged.metadata,
    prestaged.staged.prepared,
    deps.summary,
  );
  if (direct !== 'unsupported' && direct !== 'exists') {
    return { result: direct, staged: prestaged.staged, created: true };
  }
  const created = direct === 'unsupported' ? await createTableAs(deps, id, prestaged.metadata) : false;
  return { ...(await commitStaged(deps, id, stageFor, prestaged)), created };
}

/** What staged files depend on: the schema, the spec and where the table's data lives. */
export function stagingKey(m: TableMetadata): string {
  return `${m['current-schema-id']}/${m['last-column-id']}/${m['default-spec-id']}/${m['last-partition-id']}@${m.location}`;
}

export function tableResult(
  name: string,
  created: boolean,
  deadLetters: number,
  c: Committed,
  path: TableLoadResult['path'],
): TableLoadResult {
  const files = c.staged?.prepared.dataFiles ?? [];
  return {
    table: name,
    created,
    rows: Number(files.reduce((n, f) => n + f.record_count, 0n)),
    files: files.length,
    bytes: Number(files.reduce((n, f) => n + f.file_size_in_bytes, 0n)),
    deadLetters,
    schemaChanges: c.staged?.changes ?? [],
    specChanged: c.staged?.specChanged ?? false,
    ...(c.result.snapshot ? { snapshotId: c.result.snapshot['snapshot-id'] } : {}),
    attempts: c.result.attempts,
    path,
    ...(c.staged?.upserts ? { upserts: c.staged.upserts } : {}),
  };
}

/** The schema a new table gets for a batch: fresh ids 1, 2, … (Java's order). */
export function initialSchema(batchType: StructType): Schema {
  let next = 0;
  return { schemaId: 0, fields: assignFreshIds(batchType, () => ++next).fields };
}

/** Creates the table with the batch's schema and partition spec; false if someone else won. */
export async function createTable(
  deps: LoadDeps,
  id: TableIdentifier,
  batchType: StructType,
  candidates: readonly string[],
): Promise<boolean> {
  return createTableAs(deps, id, newTableFor(deps, id, batchType, candidates, deps.ids.uuid()).metadata);
}

/**
 * The table a batch would create, as pure metadata (nothing is stored): its schema with fresh
 * ids, and a spec of the candidates it has. The same type gives the same ids and spec, so data
 * can be staged for a table before it exists, and the table then created as staged.
 */
export function newTableFor(
  deps: Pick<LoadDeps, 'catalog' | 'config' | 'clock'>,
  id: TableIdentifier,
  batchType: StructType,
  candidates: readonly string[],
  tableUuid: string,
): LoadedTable {
  // Upsert tables: the key columns are required and become the schema's identifier fields.
  const key = upsertFor(deps.config, `${id.namespace}.${id.name}`)?.key;
  const initial = initialSchema(key ? requirePaths(batchType, key) : batchType);
  const identifierFieldIds = key && identifierIdsOf(initial, key);
  const schema: Schema = identifierFieldIds ? { ...initial, identifierFieldIds } : initial;
  const desired = partitionFieldsFor(schemaStruct(schema), candidates);
  const spec: PartitionSpec = {
    'spec-id': 0,
    fields: desired.map((d, i) => ({
      'source-id': d.sourceId,
      'field-id': 1000 + i,
      name: d.name,
      transform: d.transform,
    })),
  };
  const metadata = newTableMetadata({
    location: deps.catalog.defaultLocation(id),
    schema,
    spec,
    properties: deps.config.tableProperties,
    formatVersion: deps.config.formatVersion,
    tableUuid,
    nowMs: deps.clock.nowMs(),
  });
  return { id, metadata, metadataLocation: '', versionToken: '' };
}

/** Creates the table with exactly `metadata`; false if someone else created it first. */
export async function createTableAs(
  deps: Pick<LoadDeps, 'catalog'>,
  id: TableIdentifier,
  metadata: TableMetadata,
): Promise<boolean> {
  await deps.catalog.createNamespace(id.namespace);
  try {
    await deps.catalog.createTable(id, metadata);
    return true;
  } catch (e) {
    if (isFloeError(e, ErrorKind.AlreadyExists)) return false;
    throw e;
  }
}

export interface Evolved {
  readonly schema: Schema;
  readonly spec: PartitionSpec;
  readonly updates: TableUpdate[];
  readonly changes: string[];
  readonly specChanged: boolean;
}

/**
 * Schema and spec evolution of `base` for a batch (metadata-only updates). `fit` carries what the
 * batch's values need (promotions) or says its types are declared (Avro), see `fitToExisting`.
 */
export function evolve(
  base: LoadedTable,
  batchType: StructType,
  candidates: readonly string[],
  fit: FitOptions = {},
): Evolved {
  const m = base.metadata;
  const updates: TableUpdate[] = [];
  const current = currentSchema(m);
  const maxSchemaId = Math.max(...m.schemas.map((s) => s.schemaId));
  // The base may have moved on since the batch was fitted: fit again to what is there now.
  const fitted = fitToExisting(schemaStruct(current), batchType, fit);
  const evolved = unionByName(current, fitted, m['last-column-id'], m['format-version'], {
    tableName: base.id.name,
    maxSchemaId,
    partitionTransforms: partitionSourceTransforms(m['partition-specs']),
  });
  const schema = evolved.schema ?? current;
  if (evolved.schema) {
    updates.push({ action: 'add-schema', schema: evolved.schema, 'last-column-id': evolved.lastColumnId });
    updates.push({ action: 'set-current-schema', 'schema-id': LAST_ADDED });
  }
  const spec = evolveSpec(
    m['partition-specs'],
    m['default-spec-id'],
    m['last-partition-id'],
    desiredPartitioning(defaultSpec(m), schema, candidates),
    schema,
  );
  if (spec.changed) {
    if (m['partition-specs'].some((s) => s['spec-id'] === spec.spec['spec-id'])) {
      updates.push({ action: 'set-default-spec', 'spec-id': spec.spec['spec-id'] });
    } else {
      updates.push({ action: 'add-spec', spec: spec.spec });
      updates.push({ action: 'set-default-spec', 'spec-id': LAST_ADDED });
    }
  }
  return { schema, spec: spec.spec, updates, changes: evolved.changes, specChanged: spec.changed };
}

/** Stores one written Parquet file and describes it for the manifest. */
export async function putDataFile(
  deps: Pick<LoadDeps, 'store' | 'ids'>,
  m: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  tuple: IcebergValue[],
  file: DataFileResult,
  ordinal: number,
  staged: string[],
): Promise<DataFile> {
  const dir = partitionPath(spec, schema, tuple);
  const uri = `${dataLocation(m)}/${dir ? `${dir}/` : ''}${String(ordinal).padStart(5, '0')}-${deps.ids.uuid()}.parquet`;
  staged.push(uri); // before the put: a failed or unfinished put is cleaned up too
  await deps.store.put(uri, file.bytes);
  return {
    content: DataFileContent.DATA,
    file_path: uri,
    file_format: 'PARQUET',
    partition: tuple,
    record_count: BigInt(file.recordCount),
    file_size_in_bytes: BigInt(file.bytes.length),
    column_sizes: file.metrics.columnSizes,
    value_counts: file.metrics.valueCounts,
    null_value_counts: file.metrics.nullValueCounts,
    nan_value_counts: file.metrics.nanValueCounts,
    lower_bounds: file.metrics.lowerBounds,
    upper_bounds: file.metrics.upperBounds,
    split_offsets: file.metrics.splitOffsets,
    sort_order_id: 0,
  };
}

/**
 * The spec a table should have: its current fields, plus each candidate that its schema now has
 * and the spec lacks. Specs only grow: a table's existing partitioning (Floe's or another
 * engine's) is never dropped behind the user's back.
 */
export function desiredPartitioning(
  current: PartitionSpec,
  schema: Schema,
  candidates: readonly string[],
): DesiredPartitionField[] {
  const out: DesiredPartitionField[] = current.fields.map((f) => ({
    sourceId: f['source-id'],
    transform: f.transform,
    name: f.name,
  }));
  const have = new Set(out.map((f) => `${f.sourceId}/${f.transform}`));
  for (const d of partitionFieldsFor(schemaStruct(schema), candidates)) {
    if (have.has(`${d.sourceId}/${d.transform}`) || out.some((f) => f.name === d.name)) continue;
    out.push(d);
  }
  return out;
}

export function dataLocation(m: TableMetadata): string {
  return m.properties['write.data.path'] ?? `${m.location}/data`;
}

export function codecOf(m: TableMetadata): 'zstd' | 'snappy' | 'gzip' | 'uncompressed' {
  const c = (m.properties['write.parquet.compression-codec'] ?? 'zstd').toLowerCase();
  if (c === 'zstd' || c === 'snappy' || c === 'gzip' || c === 'uncompressed') return c;
  throw new FloeError(
    ErrorKind.ConfigInvalid,
    `table ${m.location}: unsupported write.parquet.compression-codec '${c}'`,
  );
}

/** Thrown inside a commit attempt when the fast path meets something only the generic path handles. */
export class UseGenericPath extends Error {}
