/**
 * `$partitions` of one snapshot, with Trino's columns: per partition of the live data files (delete
 * files are not counted, as in Trino) the rows written, files and bytes, and per column min / max /
 * null and NaN counts aggregated from the files' metrics.
 */
import { compareValues } from '../iceberg/conversions.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import { DataFileContent } from '../iceberg/manifest/types.ts';
import { snapshotManifests } from '../iceberg/scan.ts';
import { currentSchema, type TableMetadata } from '../iceberg/table-metadata.ts';
import { isPrimitive, type PrimitiveType } from '../iceberg/types.ts';
import { liveEntries } from './manifest-walk.ts';
import { decode, snapshotOf, specOf } from './metadata-file-tables.ts';
import type { MetadataTableSource } from './metadata-tables.ts';
import { partitionColumns, partitionLiteral, partitionStructType } from './partition-columns.ts';
import { duckdbType } from './sql.ts';
import {
  NULL,
  type RowSet,
  type SqlColumn,
  sqlBigint,
  sqlStruct,
  sqlValue,
  structType,
} from './sql-literals.ts';

interface ColumnStats {
  min: unknown;
  max: unknown;
  /** False once a file with non-null values has no bound: min/max are then unknown. */
  boundsKnown: boolean;
  nullCount: bigint | undefined;
  nanCount: bigint | undefined;
}

interface PartitionStats {
  readonly literal: string;
  recordCount: bigint;
  fileCount: bigint;
  totalSize: bigint;
  readonly columns: Map<number, ColumnStats>;
}

/**
 * Per partition of the snapshot's live data files (delete files are not counted, as in Trino):
 * rows written, files, bytes, and per column min / max / null and NaN counts from the file metrics.
 */
export async function partitionsRows(src: MetadataTableSource): Promise<RowSet> {
  const m = src.metadata;
  const partitions = partitionColumns(m);
  const partitionType = partitionStructType(partitions);
  const dataColumns = metricColumns(m);
  const dataType =
    dataColumns.length === 0
      ? undefined
      : structType(
          dataColumns.map((c) => ({
            name: c.name,
            type: structType([
              { name: 'min', type: duckdbType(c.type) },
              { name: 'max', type: duckdbType(c.type) },
              { name: 'null_count', type: 'BIGINT' },
              { name: 'nan_count', type: 'BIGINT' },
            ]),
          })),
        );
  const columns: SqlColumn[] = [
    ...(partitionType ? [{ name: 'partition', type: partitionType }] : []),
    { name: 'record_count', type: 'BIGINT' },
    { name: 'file_count', type: 'BIGINT' },
    { name: 'total_size', type: 'BIGINT' },
    ...(dataType ? [{ name: 'data', type: dataType }] : []),
  ];
  const snapshot = snapshotOf(src);
  if (!snapshot) return { columns, rows: [] };
  const entries = await liveEntries(
    await snapshotManifests(snapshot, src.read, src.table),
    src.read,
    src.table,
  );
  const groups = new Map<string, PartitionStats>();
  for (const { manifest, entry } of entries) {
    const f = entry.data_file;
    if (f.content !== DataFileContent.DATA) continue;
    const spec = specOf(m, manifest.partition_spec_id);
    const literal = partitionLiteral(partitions, spec, f.partition);
    // Trino keys a partition by its spec's field ids as well as its values.
    const key = `${spec?.fields.map((x) => x['field-id']).join(',')}|${literal}`;
    let g = groups.get(key);
    if (!g) {
      g = { literal, recordCount: 0n, fileCount: 0n, totalSize: 0n, columns: new Map() };
      groups.set(key, g);
    }
    g.recordCount += f.record_count;
    g.fileCount += 1n;
    g.totalSize += f.file_size_in_bytes;
    for (const c of dataColumns) addFileStats(g.columns, c, f);
  }
  const rows = [...groups.values()].map((g) => [
    ...(partitionType ? [g.literal] : []),
    sqlBigint(g.recordCount),
    sqlBigint(g.fileCount),
    sqlBigint(g.totalSize),
    ...(dataType ? [dataLiteral(dataColumns, g.columns)] : []),
  ]);
  return { columns, rows };
}

interface MetricColumn {
  readonly id: number;
  readonly name: string;
  readonly type: PrimitiveType;
}

/** Trino's `data` columns: top-level primitive columns that are not identity partition sources. */
function metricColumns(m: TableMetadata): MetricColumn[] {
  const spec = specOf(m, m['default-spec-id']);
  const identitySources = new Set(
    (spec?.fields ?? []).filter((f) => f.transform === 'identity').map((f) => f['source-id']),
  );
  return currentSchema(m)
    .fields.filter((f) => isPrimitive(f.type) && f.type.kind !== 'unknown' && !identitySources.has(f.id))
    .map((f) => ({ id: f.id, name: f.name, type: f.type as PrimitiveType }));
}

function addFileStats(stats: Map<number, ColumnStats>, c: MetricColumn, f: DataFile): void {
  let s = stats.get(c.id);
  const nulls = f.null_value_counts?.get(c.id);
  const nans = f.nan_value_counts?.get(c.id);
  if (!s) {
    s = { min: undefined, max: undefined, boundsKnown: true, nullCount: nulls, nanCount: nans };
    stats.set(c.id, s);
  } else {
    s.nullCount = s.nullCount === undefined || nulls === undefined ? undefined : s.nullCount + nulls;
    s.nanCount = s.nanCount === undefined || nans === undefined ? undefined : s.nanCount + nans;
  }
  // A file holding only nulls in this column has no bounds and needs none.
  if (nulls !== undefined && nulls === f.record_count) return;
  const lower = decode(c.type, f.lower_bounds?.get(c.id));
  const upper = decode(c.type, f.upper_bounds?.get(c.id));
  if (lower === undefined || upper === undefined) {
    s.boundsKnown = false;
    return;
  }
  if (s.min === undefined || compareValues(c.type, lower as never, s.min as never) < 0) s.min = lower;
  if (s.max === undefined || compareValues(c.type, upper as never, s.max as never) > 0) s.max = upper;
}

function dataLiteral(columns: readonly MetricColumn[], stats: ReadonlyMap<number, ColumnStats>): string {
  return sqlStruct(
    columns.map((c) => {
      const s = stats.get(c.id);
      const min = s?.boundsKnown ? s.min : undefined;
      const max = s?.boundsKnown ? s.max : undefined;
      if (!s || (min === undefined && max === undefined && s.nullCount === undefined)) return [c.name, NULL];
      return [
        c.name,
        sqlStruct([
          ['min', sqlValue(c.type, min)],
          ['max', sqlValue(c.type, max)],
          ['null_count', sqlBigint(s.nullCount)],
          ['nan_count', sqlBigint(s.nanCount)],
        ]),
      ];
    }),
  );
}
