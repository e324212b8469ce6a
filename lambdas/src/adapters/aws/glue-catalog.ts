/**
 * Catalog on the AWS Glue Data Catalog, writing tables the way Iceberg's Java `GlueCatalog` does
 * (facts §9), so Athena, Spark and EMR see them as Iceberg tables:
 *
 * - namespace = Glue database (`^[a-z0-9_]{1,252}$`), table name `^[a-z0-9_]{1,255}$`;
 * - table: `TableType: EXTERNAL_TABLE`, `Parameters.table_type = ICEBERG`, `metadata_location`,
 *   `previous_metadata_location` (other parameters are preserved on update, as Java copies them),
 *   `StorageDescriptor.Location` = table location, `StorageDescriptor.Columns` = current-schema
 *   columns then columns of older schemas (deduplicated by name), each with `iceberg.field.id`,
 *   `iceberg.field.optional`, `iceberg.field.current` parameters (Java `IcebergToGlueConverter`);
 * - metadata files `<location>/metadata/<NNNNN>-<uuid>.metadata.json` (or under
 *   `write.metadata.path`), written through the injected ObjectStore;
 * - `versionToken` = the Glue table `VersionId`.
 *
 * Commit (Java `GlueTableOperations.doCommit`): `GetTable` and check that `metadata_location` is
 * still the base's (else CommitConflict, before anything is written), write the next metadata file,
 * then `UpdateTable` with `VersionId` = the base's token (optimistic locking; the only lock Athena
 * honours) and `SkipArchive: true` (no table-version quota burn). `ConcurrentModificationException`
 * → CommitConflict (retryable) and the new, unreferenced metadata file is deleted (best effort).
 * When the outcome is unknown (5xx, network error, or an SDK retry after which the request may
 * have been applied) the table is re-read: if the new file became current (or is in the history)
 * the commit succeeded; otherwise it failed and the file is deleted. If that check fails too, the
 * file is kept and a non-retryable "commit state unknown" error is raised.
 *
 * SDK errors become FloeErrors naming the table: EntityNotFound → NotFound, AlreadyExists →
 * AlreadyExists, throttling / 5xx / network → Unexpected with `retryable: true`, other 4xx →
 * Unexpected, not retryable.
 */
import {
  type Column,
  CreateDatabaseCommand,
  CreateTableCommand,
  GetDatabasesCommand,
  GetTableCommand,
  GetTablesCommand,
  type GlueClient,
  type Table as GlueTable,
  type TableInput,
  UpdateTableCommand,
} from '@aws-sdk/client-glue';
import { ErrorKind, FloeError } from '../../errors.ts';
import type { Schema } from '../../iceberg/schema.ts';
import type { TableMetadata } from '../../iceberg/table-metadata.ts';
import { currentSchema, serializeTableMetadata } from '../../iceberg/table-metadata.ts';
import type { IcebergType, NestedField } from '../../iceberg/types.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../../ports/catalog.ts';
import { tableIdToString } from '../../ports/catalog.ts';
import type { Ids } from '../../ports/clock.ts';
import type { ObjectStore } from '../../ports/object-store.ts';
import { deleteQuietly, parseMetadataVersion, readMetadata, rememberMetadata } from '../metadata-files.ts';

export { parseMetadataVersion, readMetadata };

import { conflict, isRetryable, mayHaveApplied, messageOf, nameOf } from './sdk-errors.ts';

export const TABLE_TYPE_PROP = 'table_type';
export const ICEBERG_TABLE_TYPE = 'ICEBERG';
export const METADATA_LOCATION_PROP = 'metadata_location';
export const PREVIOUS_METADATA_LOCATION_PROP = 'previous_metadata_location';
export const GLUE_EXTERNAL_TABLE_TYPE = 'EXTERNAL_TABLE';
export const ICEBERG_FIELD_ID = 'iceberg.field.id';
export const ICEBERG_FIELD_OPTIONAL = 'iceberg.field.optional';
export const ICEBERG_FIELD_CURRENT = 'iceberg.field.current';

/** Table properties whose values Java lists in `StorageDescriptor.AdditionalLocations`. */
const ADDITIONAL_LOCATION_PROPS = [
  'write.data.path',
  'write.metadata.path',
  'write.object-storage.path',
  'write.folder-storage.path',
] as const;

const DATABASE_NAME = /^[a-z0-9_]{1,252}$/;
const TABLE_NAME = /^[a-z0-9_]{1,255}$/;

export interface GlueCatalogOptions {
  readonly glue: GlueClient;
  /** Where metadata JSON files are read and written (S3 in production). */
  readonly store: ObjectStore;
  readonly ids: Ids;
  /** `s3://bucket/prefix`: new tables go to `<warehouse>/<namespace>/<table>`. */
  readonly warehouse: string;
  /** Glue catalog id (account id); omitted from requests when undefined (= caller's account). */
  readonly catalogId?: string;
}

export class GlueCatalog implements Catalog {
  /** New tables live at `defaultLocation`: created with their first snapshot in one metadata file. */
  readonly createsWithData = true;
  readonly warehouse: string;
  private readonly glue: GlueClient;
  private readonly store: ObjectStore;
  private readonly ids: Ids;
  private readonly catalogId: string | undefined;

  constructor(options: GlueCatalogOptions) {
    this.glue = options.glue;
    this.store = options.store;
    this.ids = options.ids;
    this.catalogId = options.catalogId;
    this.warehouse = options.warehouse.replace(/\/+$/, '');
  }

  defaultLocation(id: TableIdentifier): string {
    validateId(id);
    return `${this.warehouse}/${id.namespace}/${id.name}`;
  }

  private catalogField(): { CatalogId?: string } {
    return this.catalogId === undefined ? {} : { CatalogId: this.catalogId };
  }

  async listNamespaces(): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const res = await this.call('GetDatabases', undefined, () =>
        this.glue.send(
          new GetDatabasesCommand({ ...this.catalogField(), ...(token ? { NextToken: token } : {}) }),
        ),
      );
      for (const db of res.DatabaseList ?? []) if (db.Name) out.push(db.Name);
      token = res.NextToken || undefined;
    } while (token);
    return out;
  }

  async createNamespace(namespace: string): Promise<void> {
    validateNamespace(namespace);
    try {
      await this.glue.send(
        new CreateDatabaseCommand({
          ...this.catalogField(),
          DatabaseInput: { Name: namespace, LocationUri: `${this.warehouse}/${namespace}` },
        }),
      );
    } catch (e) {
      if (nameOf(e) === 'AlreadyExistsException') return;
      throw translateGlueError(e, 'CreateDatabase', `database ${namespace}`);
    }
  }

  /** Iceberg tables of the database (others are skipped, as Java does); [] if it does not exist. */
  async listTables(namespace: string): Promise<string[]> {
    validateNamespace(namespace);
    const out: string[] = [];
    let token: string | undefined;
    do {
      let res: Awaited<ReturnType<typeof this.getTablesPage>>;
      try {
        res = await this.getTablesPage(namespace, token);
      } catch (e) {
        if (nameOf(e) === 'EntityNotFoundException') return [];
        throw translateGlueError(e, 'GetTables', `database ${namespace}`);
      }
      for (const t of res.TableList ?? []) if (t.Name && isIcebergTable(t)) out.push(t.Name);
      token = res.NextToken || undefined;
    } while (token);
    return out;
  }

  private getTablesPage(namespace: string, token: string | undefined) {
    return this.glue.send(
      new GetTablesCommand({
        ...this.catalogField(),
        DatabaseName: namespace,
        ...(token ? { NextToken: token } : {}),
      }),
    );
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    try {
      await this.getIcebergTable(id, 'GetTable');
      return true;
    } catch (e) {
      if (e instanceof FloeError && e.kind === ErrorKind.NotFound) return false;
      throw e;
    }
  }

  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    const { table, metadataLocation } = await this.getIcebergTable(id, 'GetTable');
    const metadata = await readMetadata(this.store, metadataLocation, id);
    return { id, metadata, metadataLocation, versionToken: table.VersionId ?? '' };
  }

  async createTable(id: TableIdentifier, metadata: TableMetadata): Promise<LoadedTable> {
    validateId(id);
    const location = metadataFileUri(metadata, 0, this.ids.uuid());
    await this.store.put(location, serializeTableMetadata(metadata));
    rememberMetadata(this.store, location, metadata);
    try {
      await this.glue.send(
        new CreateTableCommand({
          ...this.catalogField(),
          DatabaseName: id.namespace,
          TableInput: tableInput(id, metadata, {
            [TABLE_TYPE_PROP]: ICEBERG_TABLE_TYPE,
            [METADATA_LOCATION_PROP]: location,
          }),
        }),
      );
    } catch (e) {
      // CreateTable is not conditional on anything but the name, so a failure leaves the file
      // unreferenced unless the request was applied before an error we could not see.
      if (!mayHaveApplied(e)) await deleteQuietly(this.store, location);
      if (nameOf(e) === 'EntityNotFoundException') {
        throw new FloeError(
          ErrorKind.NotFound,
          `Glue database ${id.namespace} does not exist (creating table ${tableIdToString(id)})`,
          { cause: e, context: { table: tableIdToString(id) } },
        );
      }
      throw translateGlueError(e, 'CreateTable', `table ${tableIdToString(id)}`);
    }
    return { id, metadata, metadataLocation: location, versionToken: await this.versionIdAfter(id) };
  }

  async commitTable(base: LoadedTable, metadata: TableMetadata): Promise<LoadedTable> {
    const id = base.id;
    const name = tableIdToString(id);
    const current = await this.getIcebergTable(id, 'GetTable');
    if (current.metadataLocation !== base.metadataLocation) {
      throw conflict(
        id,
        `table ${name} changed: Glue metadata_location is ${current.metadataLocation}, expected ${base.metadataLocation}`,
      );
    }
    const location = metadataFileUri(
      metadata,
      parseMetadataVersion(base.metadataLocation) + 1,
      this.ids.uuid(),
    );
    await this.store.put(location, serializeTableMetadata(metadata));
    rememberMetadata(this.store, location, metadata);
    const parameters: Record<string, string> = {
      ...(current.table.Parameters ?? {}),
      [TABLE_TYPE_PROP]: ICEBERG_TABLE_TYPE,
      [METADATA_LOCATION_PROP]: location,
      [PREVIOUS_METADATA_LOCATION_PROP]: base.metadataLocation,
    };
    try {
      await this.glue.send(
        new UpdateTableCommand({
          ...this.catalogField(),
          DatabaseName: id.namespace,
          TableInput: tableInput(id, metadata, parameters, current.table.Description),
          SkipArchive: true,
          VersionId: base.versionToken || current.table.VersionId,
        }),
      );
    } catch (e) {
      if (mayHaveApplied(e) && (await this.commitLanded(id, location))) {
        return { id, metadata, metadataLocation: location, versionToken: await this.versionIdAfter(id) };
      }
      await deleteQuietly(this.store, location);
      if (isConflictError(e)) {
        throw conflict(
          id,
          `table ${name} changed concurrently (Glue ${nameOf(e)}) since ${base.metadataLocation}`,
          e,
        );
      }
      throw translateGlueError(e, 'UpdateTable', `table ${name}`);
    }
    return { id, metadata, metadataLocation: location, versionToken: await this.versionIdAfter(id) };
  }

  /**
   * After an UpdateTable whose outcome is unknown: true when `location` is current, the previous
   * location, or in the current metadata's `metadata-log` (someone committed on top of ours).
   * Throws a non-retryable FloeError when the table cannot be read (the file is then kept).
   */
  private async commitLanded(id: TableIdentifier, location: string): Promise<boolean> {
    try {
      const { table, metadataLocation } = await this.getIcebergTable(id, 'GetTable');
      if (metadataLocation === location) return true;
      if (table.Parameters?.[PREVIOUS_METADATA_LOCATION_PROP] === location) return true;
      const m = await readMetadata(this.store, metadataLocation, id);
      return m['metadata-log'].some((e) => e['metadata-file'] === location);
    } catch (e) {
      throw new FloeError(
        ErrorKind.Unexpected,
        `commit state of table ${tableIdToString(id)} is unknown (new metadata ${location}): ${messageOf(e)}`,
        { cause: e, retryable: false, context: { table: tableIdToString(id), metadataLocation: location } },
      );
    }
  }

  /** The table's VersionId after our write; '' if it cannot be read (commits then use GetTable's). */
  private async versionIdAfter(id: TableIdentifier): Promise<string> {
    try {
      const res = await this.glue.send(
        new GetTableCommand({ ...this.catalogField(), DatabaseName: id.namespace, Name: id.name }),
      );
      return res.Table?.VersionId ?? '';
    } catch {
      return '';
    }
  }

  private async getIcebergTable(
    id: TableIdentifier,
    op: string,
  ): Promise<{ table: GlueTable; metadataLocation: string }> {
    validateId(id);
    const name = tableIdToString(id);
    const res = await this.call(op, `table ${name}`, () =>
      this.glue.send(
        new GetTableCommand({ ...this.catalogField(), DatabaseName: id.namespace, Name: id.name }),
      ),
    );
    const table = res.Table;
    if (!table) throw new FloeError(ErrorKind.NotFound, `table ${name} does not exist in Glue`);
    if (!isIcebergTable(table)) {
      throw new FloeError(
        ErrorKind.FeatureUnsupported,
        `Glue table ${name} is not an Iceberg table (table_type=${table.Parameters?.[TABLE_TYPE_PROP] ?? 'unset'})`,
        { context: { table: name } },
      );
    }
    const metadataLocation = table.Parameters?.[METADATA_LOCATION_PROP];
    if (!metadataLocation) {
      throw new FloeError(ErrorKind.DataInvalid, `Glue table ${name} has no ${METADATA_LOCATION_PROP}`, {
        context: { table: name },
      });
    }
    return { table, metadataLocation };
  }

  private async call<T>(op: string, what: string | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw translateGlueError(e, op, what);
    }
  }
}

// ---- Glue table shape (Java IcebergToGlueConverter) ----

/** The `TableInput` Java's GlueCatalog writes for `metadata`. */
export function tableInput(
  id: TableIdentifier,
  metadata: TableMetadata,
  parameters: Record<string, string>,
  existingDescription?: string,
): TableInput {
  const additional: string[] = [];
  for (const key of ADDITIONAL_LOCATION_PROPS) {
    const v = metadata.properties[key];
    if (v && !additional.includes(v)) additional.push(v);
  }
  const description = metadata.properties.comment ?? existingDescription;
  return {
    Name: id.name,
    ...(description !== undefined ? { Description: description } : {}),
    TableType: GLUE_EXTERNAL_TABLE_TYPE,
    Parameters: parameters,
    StorageDescriptor: {
      Location: metadata.location,
      Columns: glueColumns(metadata),
      ...(additional.length > 0 ? { AdditionalLocations: additional } : {}),
    },
  };
}

/** Current-schema columns, then columns only older schemas have (first occurrence of a name wins). */
export function glueColumns(metadata: TableMetadata): Column[] {
  const out: Column[] = [];
  const seen = new Set<string>();
  const add = (schema: Schema, current: boolean) => {
    for (const f of schema.fields) {
      if (seen.has(f.name)) continue;
      seen.add(f.name);
      out.push(glueColumn(f, current));
    }
  };
  const cur = currentSchema(metadata);
  add(cur, true);
  for (const s of metadata.schemas) if (s.schemaId !== cur.schemaId) add(s, false);
  return out;
}

function glueColumn(f: NestedField, current: boolean): Column {
  return {
    Name: f.name,
    Type: glueTypeString(f.type),
    ...(f.doc !== undefined ? { Comment: f.doc } : {}),
    Parameters: {
      [ICEBERG_FIELD_ID]: String(f.id),
      [ICEBERG_FIELD_OPTIONAL]: String(!f.required),
      [ICEBERG_FIELD_CURRENT]: String(current),
    },
  };
}

/** Hive-style type string (Java `IcebergToGlueConverter.toTypeString`). */
export function glueTypeString(t: IcebergType): string {
  switch (t.kind) {
    case 'boolean':
    case 'int':
    case 'float':
    case 'double':
    case 'date':
    case 'binary':
      return t.kind;
    case 'long':
      return 'bigint';
    case 'time':
    case 'string':
    case 'uuid':
      return 'string';
    case 'timestamp':
    case 'timestamptz':
      return 'timestamp';
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return 'timestamp_nano';
    case 'fixed':
      return 'binary';
    case 'decimal':
      return `decimal(${t.precision},${t.scale})`;
    case 'struct':
      return `struct<${t.fields.map((f) => `${f.name}:${glueTypeString(f.type)}`).join(',')}>`;
    case 'list':
      return `array<${glueTypeString(t.element)}>`;
    case 'map':
      return `map<${glueTypeString(t.key)},${glueTypeString(t.value)}>`;
    case 'unknown':
      return 'unknown';
  }
}

function isIcebergTable(t: GlueTable): boolean {
  return t.Parameters?.[TABLE_TYPE_PROP]?.toUpperCase() === ICEBERG_TABLE_TYPE;
}

// ---- metadata files ----

/** `<location>/metadata/<NNNNN>-<uuid>.metadata.json`, or under `write.metadata.path` when set. */
export function metadataFileUri(metadata: TableMetadata, version: number, uuid: string): string {
  const dir = (
    metadata.properties['write.metadata.path'] ?? `${metadata.location.replace(/\/+$/, '')}/metadata`
  ).replace(/\/+$/, '');
  return `${dir}/${String(version).padStart(5, '0')}-${uuid}.metadata.json`;
}

// ---- names and errors ----

function validateNamespace(namespace: string): void {
  if (!DATABASE_NAME.test(namespace)) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `invalid Glue database name '${namespace}': expected ^[a-z0-9_]{1,252}$`,
      { context: { namespace } },
    );
  }
}

function validateId(id: TableIdentifier): void {
  validateNamespace(id.namespace);
  if (!TABLE_NAME.test(id.name)) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `invalid Glue table name '${id.name}' in ${id.namespace}: expected ^[a-z0-9_]{1,255}$`,
      { context: { table: tableIdToString(id) } },
    );
  }
}

function isConflictError(e: unknown): boolean {
  const n = nameOf(e);
  return n === 'ConcurrentModificationException' || n === 'VersionMismatchException';
}

/** SDK error → FloeError naming what was being accessed. */
export function translateGlueError(e: unknown, op: string, what?: string): FloeError {
  if (e instanceof FloeError) return e;
  const name = nameOf(e) || 'Error';
  const subject = what ? ` for ${what}` : '';
  const message = `Glue ${op} failed${subject}: ${name}: ${messageOf(e)}`;
  const context = { operation: op, ...(what ? { target: what } : {}), awsError: name };
  switch (name) {
    case 'EntityNotFoundException':
      return new FloeError(
        ErrorKind.NotFound,
        `${what ?? 'entity'} does not exist in Glue (${op}: ${messageOf(e)})`,
        {
          cause: e,
          context,
        },
      );
    case 'AlreadyExistsException':
      return new FloeError(ErrorKind.AlreadyExists, `${what ?? 'entity'} already exists in Glue (${op})`, {
        cause: e,
        context,
      });
    case 'ConcurrentModificationException':
    case 'VersionMismatchException':
      return new FloeError(ErrorKind.CommitConflict, message, { cause: e, context, retryable: true });
  }
  const retryable = isRetryable(e);
  return new FloeError(ErrorKind.Unexpected, message, { cause: e, context, retryable });
}
