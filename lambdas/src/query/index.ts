/** Querying Iceberg tables with DuckDB. */
export { IcebergQueryEngine, type IcebergQueryEngineOptions, type QueryResult } from './engine.ts';
export { countRows, type TableIo } from './live-rows.ts';
export { METADATA_TABLE_KINDS, type MetadataTableKind, metadataTableRows } from './metadata-tables.ts';
export {
  prepareQuery,
  type QueryTable,
  registerTables,
  type SnapshotChoice,
  type TimeTravelOptions,
  tableLabel,
} from './query-session.ts';
export { resultValueConverter } from './result-values.ts';
export { duckdbType, quoteIdent, quoteString } from './sql.ts';
export { type RowCounts, rowCountsFromSummary, rowsWrittenFromSummary } from './summary-rows.ts';
export { type ResolvePath, tableViewSql } from './table-view.ts';
export { parseSnapshotArg, parseTimestampMs, type SnapshotSelector, selectSnapshot } from './time-travel.ts';
