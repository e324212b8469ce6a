/**
 * Catalog on Amazon S3 Tables (facts §10), committing directly through the control plane as the
 * Java `S3TablesCatalog` (awslabs/s3-tables-catalog) does:
 *
 * - namespace = S3 Tables namespace, table = S3 Tables table of format ICEBERG, in one table
 *   bucket (`tableBucketARN`). Names: 1–255 of `[a-z0-9_]`, starting and ending with a letter or
 *   digit; namespaces must not start with `aws`.
 * - `versionToken` = the service's version token; `metadataLocation` = the service's pointer.
 * - Metadata files go to `<warehouseLocation>/metadata/<NNNNN>-<uuid>.metadata.json` through the
 *   injected ObjectStore (the service only accepts a pointer that begins with the table's
 *   warehouse location and ends in `.metadata.json`).
 *
 * **Table location.** S3 Tables assigns each table its own storage (`warehouseLocation`, an
 * `s3://…--table-s3` URI) when the table is created, so `defaultLocation` can only return a
 * provisional `s3tables://<bucket-name>/<namespace>/<table>` placeholder. `createTable` replaces
 * the metadata's `location` with the warehouse location, and callers must use the *returned*
 * LoadedTable (whose `metadata.location` is the real one) for everything they write afterwards —
 * never `defaultLocation`. Metadata with snapshots cannot be created this way (its files would lie
 * outside the table's storage).
 *
 * createTable: `CreateTable(format ICEBERG)` (no schema: Floe writes the first metadata itself),
 * `GetTableMetadataLocation` → warehouse location, token and possibly a metadata file the service
 * wrote itself; write ours as the next version and `UpdateTableMetadataLocation` with that token.
 * If the table exists but has no metadata yet (a writer crashed between the two steps), the table
 * is adopted the same way; a table with metadata → AlreadyExists.
 *
 * commitTable: `GetTableMetadataLocation`, check its pointer is still the base's (else
 * CommitConflict before anything is written), write the next metadata file under the warehouse
 * location, then `UpdateTableMetadataLocation` with the base's version token. `ConflictException`
 * (someone — possibly the service's own compaction — committed first) → CommitConflict (retryable)
 * and the new file is deleted (best effort: S3 Tables storage may refuse deletes; the service's
 * unreferenced-file removal collects it). An unknown outcome (5xx, network, SDK retries) is
 * resolved by re-reading the pointer, as in the Glue catalog.
 */
import {
  CreateNamespaceCommand,
  CreateTableCommand,
  GetTableMetadataLocationCommand,
  type GetTableMetadataLocationCommandOutput,
  ListNamespacesCommand,
  ListTablesCommand,
  type S3TablesClient,
  UpdateTableMetadataLocationCommand,
} from '@aws-sdk/client-s3tables';
import { ErrorKind, FloeError } from '../../errors.ts';
import type { TableMetadata } from '../../iceberg/table-metadata.ts';
import { serializeTableMetadata } from '../../iceberg/table-metadata.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../../ports/catalog.ts';
import { tableIdToString } from '../../ports/catalog.ts';
import type { Ids } from '../../ports/clock.ts';
import type { ObjectStore } from '../../ports/object-store.ts';
import { deleteQuietly, parseMetadataVersion, readMetadata, rememberMetadata } from '../metadata-files.ts';
import { conflict, isRetryable, mayHaveApplied, messageOf, nameOf } from './sdk-errors.ts';

const NAME = /^[a-z0-9](?:[a-z0-9_]{0,253}[a-z0-9])?$/;
const BUCKET_ARN = /^arn:aws[a-z-]*:s3tables:[a-z0-9-]+:\d{12}:bucket\/([a-z0-9][a-z0-9-]{1,61}[a-z0-9])$/;

/** Scheme of the provisional location `defaultLocation` returns (replaced by `createTable`). */
export const PROVISIONAL_LOCATION_SCHEME = 's3tables://';

export interface S3TablesCatalogOptions {
  readonly client: S3TablesClient;
  /** Reads and writes metadata files in the tables' storage (S3 in production). */
  readonly store: ObjectStore;
  readonly ids: Ids;
  /** `arn:aws:s3tables:<region>:<account>:bucket/<name>`. */
  readonly tableBucketARN: string;
}

interface Pointer {
  readonly versionToken: string;
  readonly metadataLocation: string | undefined;
  readonly warehouseLocation: string;
}

export class S3TablesCatalog implements Catalog {
  readonly tableBucketARN: string;
  private readonly bucketName: string;
  private readonly client: S3TablesClient;
  private readonly store: ObjectStore;
  private readonly ids: Ids;

  constructor(options: S3TablesCatalogOptions) {
    const m = BUCKET_ARN.exec(options.tableBucketARN);
    if (!m) {
      throw new FloeError(
        ErrorKind.ConfigInvalid,
        `invalid S3 table bucket ARN '${options.tableBucketARN}': expected arn:aws:s3tables:<region>:<account>:bucket/<name>`,
      );
    }
    this.tableBucketARN = options.tableBucketARN;
    this.bucketName = m[1]!;
    this.client = options.client;
    this.store = options.store;
    this.ids = options.ids;
  }

  /**
   * Provisional: S3 Tables decides a table's location when it is created. `createTable` replaces
   * this with the service's warehouse location; use the LoadedTable it returns.
   */
  defaultLocation(id: TableIdentifier): string {
    validateId(id);
    return `${PROVISIONAL_LOCATION_SCHEME}${this.bucketName}/${id.namespace}/${id.name}`;
  }

  async listNamespaces(): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const res = await this.call('ListNamespaces', `table bucket ${this.tableBucketARN}`, () =>
        this.client.send(
          new ListNamespacesCommand({
            tableBucketARN: this.tableBucketARN,
            ...(token ? { continuationToken: token } : {}),
          }),
        ),
      );
      for (const ns of res.namespaces ?? []) if (ns.namespace?.[0]) out.push(ns.namespace[0]);
      token = res.continuationToken || undefined;
    } while (token);
    return out;
  }

  async createNamespace(namespace: string): Promise<void> {
    validateNamespace(namespace);
    try {
      await this.client.send(
        new CreateNamespaceCommand({ tableBucketARN: this.tableBucketARN, namespace: [namespace] }),
      );
    } catch (e) {
      if (nameOf(e) === 'ConflictException') return; // already exists
      throw translateS3TablesError(e, 'CreateNamespace', `namespace ${namespace}`);
    }
  }

  async listTables(namespace: string): Promise<string[]> {
    validateNamespace(namespace);
    const out: string[] = [];
    let token: string | undefined;
    do {
      let res: Awaited<ReturnType<typeof this.listTablesPage>>;
      try {
        res = await this.listTablesPage(namespace, token);
      } catch (e) {
        if (nameOf(e) === 'NotFoundException') return [];
        throw translateS3TablesError(e, 'ListTables', `namespace ${namespace}`);
      }
      for (const t of res.tables ?? []) if (t.name) out.push(t.name);
      token = res.continuationToken || undefined;
    } while (token);
    return out;
  }

  private listTablesPage(namespace: string, token: string | undefined) {
    return this.client.send(
      new ListTablesCommand({
        tableBucketARN: this.tableBucketARN,
        namespace,
        ...(token ? { continuationToken: token } : {}),
      }),
    );
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    try {
      return (await this.pointer(id)).metadataLocation !== undefined;
    } catch (e) {
      if (e instanceof FloeError && e.kind === ErrorKind.NotFound) return false;
      throw e;
    }
  }

  /** A table that exists but has no metadata yet is NotFound, as in Java's `doRefresh`. */
  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    const p = await this.pointer(id);
    if (p.metadataLocation === undefined) {
      throw new FloeError(ErrorKind.NotFound, `table ${tableIdToString(id)} has no Iceberg metadata yet`, {
        context: { table: tableIdToString(id) },
      });
    }
    const metadata = await readMetadata(this.store, p.metadataLocation, id);
    return { id, metadata, metadataLocation: p.metadataLocation, versionToken: p.versionToken };
  }

  /**
   * Creates the table and writes its first metadata with `location` = the service's warehouse
   * location (the input's `location` is ignored). Returns the LoadedTable to use from then on.
   */
  async createTable(id: TableIdentifier, metadata: TableMetadata): Promise<LoadedTable> {
    validateId(id);
    const name = tableIdToString(id);
    if (metadata.snapshots.length > 0) {
      throw new FloeError(
        ErrorKind.FeatureUnsupported,
        `cannot create S3 Tables table ${name} from metadata with snapshots: its files must live in the table's own storage`,
        { context: { table: name } },
      );
    }
    let adopting = false;
    try {
      await this.client.send(
        new CreateTableCommand({
          tableBucketARN: this.tableBucketARN,
          namespace: id.namespace,
          name: id.name,
          format: 'ICEBERG',
        }),
      );
    } catch (e) {
      if (nameOf(e) !== 'ConflictException') throw translateS3TablesError(e, 'CreateTable', `table ${name}`);
      adopting = true;
    }
    const p = await this.pointer(id);
    // An existing table whose pointer is set belongs to another writer. One we just created may
    // carry a metadata file the service wrote itself; ours replaces it as the next version.
    if (adopting && p.metadataLocation !== undefined) {
      throw new FloeError(ErrorKind.AlreadyExists, `table ${name} already exists in S3 Tables`, {
        context: { table: name },
      });
    }
    const located: TableMetadata = { ...metadata, location: p.warehouseLocation };
    const version = p.metadataLocation === undefined ? 0 : parseMetadataVersion(p.metadataLocation) + 1;
    const location = metadataFileUri(p.warehouseLocation, version, this.ids.uuid());
    try {
      return await this.swap(id, p.versionToken, located, location);
    } catch (e) {
      // A conflict on a table's first metadata means another writer initialised it first.
      if (e instanceof FloeError && e.kind === ErrorKind.CommitConflict) {
        throw new FloeError(ErrorKind.AlreadyExists, `table ${name} already exists in S3 Tables`, {
          cause: e,
          context: { table: name },
        });
      }
      throw e;
    }
  }

  async commitTable(base: LoadedTable, metadata: TableMetadata): Promise<LoadedTable> {
    const id = base.id;
    const name = tableIdToString(id);
    const p = await this.pointer(id);
    if (p.metadataLocation !== base.metadataLocation) {
      throw conflict(
        id,
        `table ${name} changed: S3 Tables metadataLocation is ${p.metadataLocation ?? 'unset'}, expected ${base.metadataLocation}`,
      );
    }
    const location = metadataFileUri(
      p.warehouseLocation,
      parseMetadataVersion(base.metadataLocation) + 1,
      this.ids.uuid(),
    );
    return this.swap(id, base.versionToken || p.versionToken, metadata, location);
  }

  /** Writes `metadata` to `location` and points the table at it iff it is still at `versionToken`. */
  private async swap(
    id: TableIdentifier,
    versionToken: string,
    metadata: TableMetadata,
    location: string,
  ): Promise<LoadedTable> {
    const name = tableIdToString(id);
    await this.store.put(location, serializeTableMetadata(metadata));
    rememberMetadata(this.store, location, metadata);
    try {
      const res = await this.client.send(
        new UpdateTableMetadataLocationCommand({
          tableBucketARN: this.tableBucketARN,
          namespace: id.namespace,
          name: id.name,
          versionToken,
          metadataLocation: location,
        }),
      );
      return { id, metadata, metadataLocation: location, versionToken: res.versionToken ?? '' };
    } catch (e) {
      if (mayHaveApplied(e)) {
        const landed = await this.commitLanded(id, location);
        if (landed !== undefined) return { id, metadata, metadataLocation: location, versionToken: landed };
      }
      await deleteQuietly(this.store, location);
      if (nameOf(e) === 'ConflictException') {
        throw conflict(id, `table ${name} changed concurrently (S3 Tables ConflictException)`, e);
      }
      throw translateS3TablesError(e, 'UpdateTableMetadataLocation', `table ${name}`);
    }
  }

  /**
   * After an update whose outcome is unknown: the version token to use when `location` became the
   * table's metadata (current, or in the current file's `metadata-log`), else undefined. Throws a
   * non-retryable FloeError when the table cannot be read (the file is then kept).
   */
  private async commitLanded(id: TableIdentifier, location: string): Promise<string | undefined> {
    try {
      const p = await this.pointer(id);
      if (p.metadataLocation === location) return p.versionToken;
      if (p.metadataLocation === undefined) return undefined;
      const m = await readMetadata(this.store, p.metadataLocation, id);
      // Landed, then someone committed on top: our token is stale, so a commit from it conflicts.
      return m['metadata-log'].some((e) => e['metadata-file'] === location) ? p.versionToken : undefined;
    } catch (e) {
      throw new FloeError(
        ErrorKind.Unexpected,
        `commit state of table ${tableIdToString(id)} is unknown (new metadata ${location}): ${messageOf(e)}`,
        { cause: e, retryable: false, context: { table: tableIdToString(id), metadataLocation: location } },
      );
    }
  }

  private async pointer(id: TableIdentifier): Promise<Pointer> {
    validateId(id);
    const res: GetTableMetadataLocationCommandOutput = await this.call(
      'GetTableMetadataLocation',
      `table ${tableIdToString(id)}`,
      () =>
        this.client.send(
          new GetTableMetadataLocationCommand({
            tableBucketARN: this.tableBucketARN,
            namespace: id.namespace,
            name: id.name,
          }),
        ),
    );
    if (!res.warehouseLocation || !res.versionToken) {
      throw new FloeError(
        ErrorKind.Unexpected,
        `S3 Tables returned no warehouse location or version token for table ${tableIdToString(id)}`,
        { context: { table: tableIdToString(id) } },
      );
    }
    return {
      versionToken: res.versionToken,
      metadataLocation: res.metadataLocation || undefined,
      warehouseLocation: res.warehouseLocation.replace(/\/+$/, ''),
    };
  }

  private async call<T>(op: string, what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw translateS3TablesError(e, op, what);
    }
  }
}

// ---- metadata files ----

function metadataFileUri(warehouseLocation: string, version: number, uuid: string): string {
  return `${warehouseLocation}/metadata/${String(Math.max(0, version)).padStart(5, '0')}-${uuid}.metadata.json`;
}

// ---- names and errors ----

function validateNamespace(namespace: string): void {
  if (!NAME.test(namespace) || namespace.startsWith('aws')) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `invalid S3 Tables namespace '${namespace}': expected 1-255 of [a-z0-9_], starting and ending with a letter or digit, not starting with 'aws'`,
      { context: { namespace } },
    );
  }
}

function validateId(id: TableIdentifier): void {
  validateNamespace(id.namespace);
  if (!NAME.test(id.name)) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `invalid S3 Tables table name '${id.name}' in ${id.namespace}: expected 1-255 of [a-z0-9_], starting and ending with a letter or digit`,
      { context: { table: tableIdToString(id) } },
    );
  }
}

/** SDK error → FloeError naming what was being accessed. */
export function translateS3TablesError(e: unknown, op: string, what: string): FloeError {
  if (e instanceof FloeError) return e;
  const name = nameOf(e) || 'Error';
  const context = { operation: op, target: what, awsError: name };
  switch (name) {
    case 'NotFoundException':
      return new FloeError(
        ErrorKind.NotFound,
        `${what} does not exist in S3 Tables (${op}: ${messageOf(e)})`,
        {
          cause: e,
          context,
        },
      );
    case 'ConflictException':
      return new FloeError(
        ErrorKind.CommitConflict,
        `S3 Tables ${op} conflict for ${what}: ${messageOf(e)}`,
        {
          cause: e,
          context,
          retryable: true,
        },
      );
  }
  const retryable = isRetryable(e);
  return new FloeError(ErrorKind.Unexpected, `S3 Tables ${op} failed for ${what}: ${name}: ${messageOf(e)}`, {
    cause: e,
    context,
    retryable,
  });
}
