/**
 * A catalog maps a table identifier to its current metadata file and swaps that pointer
 * atomically (spec: "Metastore Tables"). Implementations: local file catalog (version hint),
 * Glue Data Catalog (`UpdateTable` + `VersionId`), S3 Tables (`versionToken`).
 */
import type { TableMetadata } from '../iceberg/table-metadata.ts';

export interface TableIdentifier {
  readonly namespace: string;
  readonly name: string;
}

export function tableIdToString(id: TableIdentifier): string {
  return `${id.namespace}.${id.name}`;
}

export interface LoadedTable {
  readonly id: TableIdentifier;
  readonly metadata: TableMetadata;
  readonly metadataLocation: string;
  /** Opaque token the catalog checks on commit (version number, Glue VersionId, S3 Tables token). */
  readonly versionToken: string;
}

export interface Catalog {
  listNamespaces(): Promise<string[]>;
  /** Idempotent. */
  createNamespace(namespace: string): Promise<void>;
  listTables(namespace: string): Promise<string[]>;
  /** Throws FloeError NotFound when the table does not exist. */
  loadTable(id: TableIdentifier): Promise<LoadedTable>;
  tableExists(id: TableIdentifier): Promise<boolean>;
  /**
   * Where a new table's files go (`<warehouse>/<namespace>/<table>`). A catalog that assigns the
   * location itself (S3 Tables) returns a provisional value: use the location of the table that
   * `createTable` returns, never this one, for data files.
   */
  defaultLocation(id: TableIdentifier): string;
  /**
   * Registers a new table; throws FloeError AlreadyExists when another writer created it first.
   * The catalog may replace `metadata.location` (S3 Tables owns the warehouse location).
   */
  createTable(id: TableIdentifier, metadata: TableMetadata): Promise<LoadedTable>;
  /**
   * The table's location is `defaultLocation`'s, so a new table may be created with metadata
   * that already holds a snapshot of files written there (one metadata file instead of two, as
   * Java's create transaction writes). Not so for S3 Tables (the service assigns the location).
   */
  readonly createsWithData?: boolean;
  /**
   * Writes `metadata` as the table's next version and swaps the pointer iff the table is still at
   * `base`. Throws FloeError CommitConflict (retryable) when someone else committed first.
   */
  commitTable(base: LoadedTable, metadata: TableMetadata): Promise<LoadedTable>;
}
