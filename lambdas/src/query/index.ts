/** Querying Iceberg tables with DuckDB. */
export { IcebergQueryEngine, type IcebergQueryEngineOptions, type QueryResult } from './engine.ts';
export { resultValueConverter } from './result-values.ts';
export { duckdbType, quoteIdent, quoteString } from './sql.ts';
export { type ResolvePath, tableViewSql } from './table-view.ts';
