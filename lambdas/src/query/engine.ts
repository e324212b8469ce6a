/**
 * SQL over Iceberg tables with an in-process DuckDB: each registered table becomes a VIEW over its
 * planned data files (see table-view.ts), so any DuckDB SQL can join and aggregate them.
 */
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import { planScan, type ReadFile, type ScanOptions, type ScanPlan } from '../iceberg/scan.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { resultValueConverter } from './result-values.ts';
import { quoteIdent } from './sql.ts';
import type { RowSet } from './sql-literals.ts';
import { type ResolvePath, tableViewSql } from './table-view.ts';

/** Rows per INSERT when filling a metadata table (keeps each statement a modest size). */
const INSERT_BATCH = 500;

export interface IcebergQueryEngineOptions {
  /** Reads a metadata file (manifest list, manifest) by its URI. */
  readonly read: ReadFile;
  /** Maps a table file URI to a local path or an http(s)/s3 URL DuckDB can open. */
  readonly resolvePath: ResolvePath;
}

export interface QueryResult {
  readonly columns: string[];
  /** Values converted as described in result-values.ts (bigint, ISO strings, Uint8Array …). */
  readonly rows: Record<string, unknown>[];
}

export class IcebergQueryEngine {
  private readonly opts: IcebergQueryEngineOptions;
  private connection: Promise<{ instance: DuckDBInstance; conn: DuckDBConnection }> | undefined;

  constructor(opts: IcebergQueryEngineOptions) {
    this.opts = opts;
  }

  /**
   * Plans `metadata` (current snapshot, or `opts.snapshotId`) and (re)creates a VIEW named `name` over it.
   * The view is a snapshot in time: register again after the table changes.
   */
  async registerTable(
    name: string,
    metadata: TableMetadata,
    opts: ScanOptions & { schema?: string; read?: ReadFile; resolvePath?: ResolvePath } = {},
  ): Promise<void> {
    const plan = await planScan(metadata, opts.read ?? this.opts.read, opts);
    await this.registerScanPlan(name, plan, opts);
  }

  /** (Re)creates a VIEW named `name` (in `opts.schema`) over an already planned scan. */
  async registerScanPlan(
    name: string,
    plan: ScanPlan,
    opts: { schema?: string; resolvePath?: ResolvePath } = {},
  ): Promise<void> {
    const select = tableViewSql(plan, opts.resolvePath ?? this.opts.resolvePath);
    const target = await this.target(name, opts.schema);
    await this.run(`CREATE OR REPLACE VIEW ${target} AS ${select}`, `register view ${target}`);
  }

  /** (Re)creates an in-memory TABLE `name` (in `schema`) holding rows built in JS (metadata tables). */
  async registerRows(name: string, rows: RowSet, schema?: string): Promise<void> {
    const target = await this.target(name, schema);
    const columns = rows.columns.map((c) => `${quoteIdent(c.name)} ${c.type}`).join(', ');
    await this.run(`CREATE OR REPLACE TABLE ${target} (${columns})`, `create table ${target}`);
    for (let i = 0; i < rows.rows.length; i += INSERT_BATCH) {
      const values = rows.rows
        .slice(i, i + INSERT_BATCH)
        .map((r) => `(${r.join(', ')})`)
        .join(', ');
      await this.run(`INSERT INTO ${target} VALUES ${values}`, `fill table ${target}`);
    }
  }

  /** `"name"` or `"schema"."name"`, creating the schema when needed. */
  private async target(name: string, schema: string | undefined): Promise<string> {
    if (schema === undefined) return quoteIdent(name);
    await this.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`, 'create schema');
    return `${quoteIdent(schema)}.${quoteIdent(name)}`;
  }

  /** Runs one SQL statement and returns its rows. */
  async query(sql: string): Promise<QueryResult> {
    const { conn } = await this.open();
    try {
      const reader = await conn.runAndReadAll(sql);
      return { columns: reader.columnNames(), rows: reader.convertRowObjects(resultValueConverter) };
    } catch (e) {
      throw wrap(e, 'query failed');
    }
  }

  /** Releases the DuckDB connection and database. */
  close(): void {
    const pending = this.connection;
    this.connection = undefined;
    void pending?.then(({ instance, conn }) => {
      conn.closeSync();
      instance.closeSync();
    });
  }

  private async run(sql: string, what: string): Promise<void> {
    const { conn } = await this.open();
    try {
      await conn.run(sql);
    } catch (e) {
      throw wrap(e, `${what} failed`);
    }
  }

  private open(): Promise<{ instance: DuckDBInstance; conn: DuckDBConnection }> {
    this.connection ??= (async () => {
      const instance = await DuckDBInstance.create(':memory:');
      const conn = await instance.connect();
      return { instance, conn };
    })();
    return this.connection;
  }
}

function wrap(e: unknown, what: string): FloeError {
  if (isFloeError(e)) return e;
  const message = e instanceof Error ? e.message : String(e);
  // DuckDB reports errors as text; its prefixes say whose fault it is.
  const kind = /^(Parser|Binder) Error/.test(message)
    ? ErrorKind.DataInvalid
    : /^Catalog Error|No files found|HTTP 404/i.test(message)
      ? ErrorKind.NotFound
      : ErrorKind.Unexpected;
  return new FloeError(kind, `${what}: ${message}`, { cause: e });
}
