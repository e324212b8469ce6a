/**
 * What a table holds, read two independent ways: the column paths of its current Iceberg schema,
 * and DuckDB straight on the live Parquet files of its current snapshot (our manifests list them;
 * no Iceberg reader of ours is in the loop). Used to check that a field really is (or is not) there.
 */

import type { LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import { schemaColumnPaths } from '../../lambdas/src/engine/record-rules.ts';
import { currentSchema } from '../../lambdas/src/iceberg/table-metadata.ts';
import type { Catalog, TableIdentifier } from '../../lambdas/src/ports/catalog.ts';
import {
  currentSnapshotOf,
  type Duck,
  liveFiles,
  type ParquetSchemaRow,
  parquetPaths,
  sqlString,
} from './e2e.ts';

export interface TableContents {
  /** Column paths of the current schema (nested fields dotted), sorted. */
  readonly schemaColumns: string[];
  /** Live data files of the current snapshot. */
  readonly files: number;
  /** Column paths any of those Parquet files has (from `parquet_schema`), sorted. */
  readonly parquetColumns: string[];
  /** Every row of those files as DuckDB's JSON text, sorted. */
  readonly rows: string[];
}

export async function tableContents(
  duck: Duck,
  wh: { store: LocalObjectStore; catalog: Catalog },
  id: TableIdentifier,
): Promise<TableContents> {
  const { metadata } = await wh.catalog.loadTable(id);
  const snap = currentSnapshotOf(metadata);
  const paths = snap ? (await liveFiles(wh.store, snap)).map((f) => wh.store.pathOf(f.file.file_path)) : [];
  const parquetColumns = new Set<string>();
  for (const path of paths) {
    const schema = (await duck.rows(
      `SELECT name, num_children, field_id, logical_type, type FROM parquet_schema(${sqlString(path)})`,
    )) as unknown as ParquetSchemaRow[];
    for (const p of parquetPaths(schema).keys()) parquetColumns.add(p);
  }
  const rows =
    paths.length === 0
      ? []
      : await duck.rows(
          `SELECT to_json(t)::VARCHAR AS j FROM read_parquet([${paths.map(sqlString).join(', ')}], hive_partitioning=false, union_by_name=true) t`,
        );
  return {
    schemaColumns: [...schemaColumnPaths(currentSchema(metadata))].sort(),
    files: paths.length,
    parquetColumns: [...parquetColumns].sort(),
    rows: rows.map((r) => String(r.j)).sort(),
  };
}

export interface RequiredColumns {
  /** Top-level columns the current Iceberg schema holds as required, sorted. */
  readonly schema: string[];
  /** Per live data file, the top-level columns its Parquet schema writes as `REQUIRED`, sorted. */
  readonly files: string[][];
}

/** Which top-level columns of `id` are required: in its metadata, and in DuckDB's reading of each file. */
export async function requiredColumns(
  duck: Duck,
  wh: { store: LocalObjectStore; catalog: Catalog },
  id: TableIdentifier,
): Promise<RequiredColumns> {
  const { metadata } = await wh.catalog.loadTable(id);
  const snap = currentSnapshotOf(metadata);
  const files: string[][] = [];
  for (const f of snap ? await liveFiles(wh.store, snap) : []) {
    const rows = (await duck.rows(
      `SELECT name, num_children, field_id, logical_type, type, repetition_type FROM parquet_schema(${sqlString(wh.store.pathOf(f.file.file_path))})`,
    )) as unknown as ParquetSchemaRow[];
    files.push(
      [...parquetPaths(rows)]
        .filter(([path, row]) => !path.includes('.') && row.repetition_type === 'REQUIRED')
        .map(([path]) => path)
        .sort(),
    );
  }
  return {
    schema: currentSchema(metadata)
      .fields.filter((f) => f.required)
      .map((f) => f.name)
      .sort(),
    files,
  };
}
