/**
 * Staging the columnar fast path's records: a table's batch of columns (engine/columnar-batch.ts,
 * filled by engine/fast-path.ts) inferred, fitted to the table, converted and written as Parquet,
 * without an object per record. Anything that needs the generic path's rules falls back to it.
 */

import { hintsFor, partitionCandidatesFor } from '../config.ts';
import { ErrorKind, isFloeError } from '../errors.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { indexById, type Schema, schemaStruct } from '../iceberg/schema.ts';
import { partitionSourceTransforms, unionByName } from '../iceberg/schema-evolution.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { currentSchema } from '../iceberg/table-metadata.ts';
import { parseTransform } from '../iceberg/transform.ts';
import { isPrimitive, type PrimitiveType, parsePrimitive, type StructType } from '../iceberg/types.ts';
import {
  type ColumnarBatch,
  type DataFileResult,
  supportsColumnar,
  writeColumnarDataFile,
} from '../parquet/index.ts';
import type { LoadedTable, TableIdentifier } from '../ports/catalog.ts';
import { deleteQuietly } from '../ports/object-store.ts';
import { type JsonValue, parseJsonRecord } from '../records/json-line.ts';
import { type FitOptions, fitToExisting } from '../schema/fit.ts';
import { columnNeeds } from '../schema/promote.ts';
import { type ColumnarTableBatch, gatherRows, partitionGroups } from './columnar-batch.ts';
import type { LoadDeps, PendingRecord, TableLoadResult } from './load-types.ts';
import { schemaColumnPaths } from './record-rules.ts';
import {
  codecOf,
  commitStaged,
  createTableAs,
  evolve,
  newTableFor,
  putDataFile,
  settleAll,
  tableResult,
  UseGenericPath,
} from './table-staging.ts';

/**
 * Loads a table whose records all came through the fast path, or returns undefined (having
 * written nothing that stays) when any rule needs the generic path.
 */
export async function loadTableColumnar(
  deps: LoadDeps,
  id: TableIdentifier,
  batch: ColumnarTableBatch,
): Promise<TableLoadResult | undefined> {
  const cfg = deps.config;
  const name = id.name;
  const candidates = partitionCandidatesFor(cfg, name);
  const hints = hintsFor(cfg, name);
  const batchType = batch.inferType(hints, cfg.inference.detectTimestamps);
  if (!batchType || batchType.fields.length === 0) return undefined;
  const exists = await deps.catalog.tableExists(id);
  let fit: FitOptions = {};
  let have = new Set<string>();
  if (exists) {
    const base = await deps.catalog.loadTable(id);
    const current = currentSchema(base.metadata);
    have = schemaColumnPaths(current);
    fit = columnarFit(current, batch, batchType, hints);
    try {
      unionByName(
        current,
        fitToExisting(schemaStruct(current), batchType, fit),
        base.metadata['last-column-id'],
        base.metadata['format-version'],
        { partitionTransforms: partitionSourceTransforms(base.metadata['partition-specs']) },
      );
    } catch (e) {
      if (isFloeError(e, ErrorKind.SchemaIncompatible)) return undefined;
      throw e;
    }
  }
  // Past `guards.maxColumnsPerTable`: the generic path admits records one by one.
  let columns = have.size;
  for (const p of schemaColumnPaths({ schemaId: 0, fields: batchType.fields })) if (!have.has(p)) columns++;
  if (columns > cfg.limits.maxColumnsPerTable) return undefined;
  const stageFor = async (base: LoadedTable, files: string[]) => {
    const ev = evolve(base, batchType, candidates, fit);
    if (!supportsColumnar(ev.schema)) throw new UseGenericPath();
    const columns = batch.toColumnar(ev.schema);
    if (!columns) throw new UseGenericPath();
    const dataFiles = await writeColumnarFiles(deps, base.metadata, ev.schema, ev.spec, columns, files);
    return {
      prepared: { updates: ev.updates, dataFiles, specId: ev.spec['spec-id'] },
      rejected: [],
      changes: ev.changes,
      specChanged: ev.specChanged,
    };
  };
  // A new table is staged for before it is created, and created only once every value converted
  // and was written: a batch that falls back to the generic path finds no table shaped by
  // records it then dead-letters.
  let created = false;
  let prestaged: Parameters<typeof commitStaged>[3];
  if (!exists) {
    const fresh = newTableFor(deps, id, batchType, candidates, deps.ids.uuid());
    const files: string[] = [];
    let staged: Awaited<ReturnType<typeof stageFor>>;
    try {
      staged = await stageFor(fresh, files);
    } catch (e) {
      await deleteQuietly(deps.store, files);
      if (e instanceof UseGenericPath) return undefined;
      throw e;
    }
    created = await createTableAs(deps, id, fresh.metadata);
    prestaged = { metadata: fresh.metadata, staged, files };
  }
  try {
    const committed = await commitStaged(deps, id, stageFor, prestaged);
    return tableResult(name, created, 0, committed, 'columnar');
  } catch (e) {
    if (e instanceof UseGenericPath) return undefined;
    throw e;
  }
}

/**
 * What the batch's values (or hints) need of the table's existing columns: the promotions the
 * generic path would make (see promote.ts), so both paths give the same table.
 */
export function columnarFit(
  current: Schema,
  batch: ColumnarTableBatch,
  batchType: StructType,
  hints: Readonly<Record<string, string>>,
): FitOptions {
  const needs = columnNeeds(schemaStruct(current), batchType, hintTypes(hints), (columns) =>
    batch.measureNeeds(columns),
  );
  return needs.size === 0 ? {} : { needs };
}

function hintTypes(hints: Readonly<Record<string, string>>): Map<string, PrimitiveType> {
  return new Map(Object.entries(hints).map(([path, type]) => [path, parsePrimitive(type)]));
}

/** Splits converted columns by partition and writes one Parquet file per partition (and size). */
export async function writeColumnarFiles(
  deps: Pick<LoadDeps, 'store' | 'ids' | 'maxRowsPerFile' | 'encoder'>,
  m: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  columns: ColumnarBatch,
  staged: string[],
): Promise<DataFile[]> {
  const n = columns.rowCount;
  const byId = indexById(schema);
  const fields = spec.fields.map((f) => {
    const source = byId.get(f['source-id'])?.field;
    if (!source || !isPrimitive(source.type)) throw new UseGenericPath();
    return {
      transform: parseTransform(f.transform),
      type: source.type,
      leaf: columns.leaves.get(f['source-id']),
    };
  });
  const groups = partitionGroups(fields, n);
  const maxRows = deps.maxRowsPerFile ?? 1_000_000;
  const compression = codecOf(m);
  // Each file is stored while the next one is encoded (object stores are network round trips).
  const puts: Promise<DataFile>[] = [];
  for (const g of groups) {
    for (let i = 0; i < g.rows.length; i += maxRows) {
      const rows = g.rows.slice(i, i + maxRows);
      const part = groups.length === 1 && rows.length === n ? columns : gatherRows(columns, rows);
      let file: DataFileResult;
      try {
        file = (deps.encoder?.columns ?? writeColumnarDataFile)(schema, part, { compression });
      } catch {
        // Nobody foresaw this (the values converted): the generic path isolates the records.
        throw new UseGenericPath();
      }
      const put = putDataFile(deps, m, schema, spec, g.tuple, file, puts.length, staged);
      put.catch(() => undefined); // settled below
      puts.push(put);
    }
  }
  return settleAll(puts);
}

/**
 * The fast path's records as generic records (re-parsed), when a table needs the generic path;
 * `reshape` gives each the shape the field lists gave it on the fast path (`RecordRules.project`).
 */
export async function reparse(
  batch: ColumnarTableBatch,
  reshape?: (value: Record<string, JsonValue>) => Record<string, JsonValue>,
): Promise<PendingRecord[]> {
  return (await batch.provenance()).map((p) => {
    const value = parseJsonRecord(p.raw) as Record<string, JsonValue>;
    return { ...p, value: reshape ? reshape(value) : value };
  });
}

export function mergeBySeq(a: PendingRecord[], b: PendingRecord[]): PendingRecord[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  return [...a, ...b].sort((x, y) => x.seq - y.seq);
}
