/**
 * A Hadoop-style file catalog: `<warehouse>/<namespace>/<table>/metadata/v<N>.metadata.json`
 * plus `version-hint.text` holding N. This is the layout Spark's HadoopCatalog, DuckDB's
 * iceberg_scan and icebird read. The commit point is the exclusive create of `v<N+1>`; the hint
 * is advisory (a reader that finds a later `v<N+k>` uses it), so a crash between the two steps
 * loses nothing.
 */
import { ErrorKind, FloeError } from '../../errors.ts';
import type { TableMetadata } from '../../iceberg/table-metadata.ts';
import { parseTableMetadata, serializeTableMetadata } from '../../iceberg/table-metadata.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../../ports/catalog.ts';
import { tableIdToString } from '../../ports/catalog.ts';
import type { ObjectStore } from '../../ports/object-store.ts';
import { cachedMetadata, rememberMetadata } from '../metadata-files.ts';

const HINT = 'version-hint.text';
const VERSION_FILE = /^v(\d+)\.metadata\.json$/;
/** Java catalogs' naming (`00003-<uuid>.metadata.json`), found in tables copied from elsewhere. */
const JAVA_VERSION_FILE = /^(\d+)-[^/]*\.metadata\.json$/;

export interface FileCatalogOptions {
  /**
   * Called when a table's metadata names a location other than its folder (a table copied from S3
   * or written with relative paths), so the store can serve that location from the folder.
   */
  readonly relocate?: (foreignLocation: string, tableUri: string) => void;
}

interface CurrentFile {
  readonly version: number;
  readonly uri: string;
}

export class FileCatalog implements Catalog {
  /** New tables live at `defaultLocation`: created with their first snapshot in one metadata file. */
  readonly createsWithData = true;
  readonly warehouse: string;

  constructor(
    private readonly store: ObjectStore,
    warehouse: string,
    private readonly options: FileCatalogOptions = {},
  ) {
    this.warehouse = warehouse.replace(/\/$/, '');
  }

  defaultLocation(id: TableIdentifier): string {
    return `${this.warehouse}/${id.namespace}/${id.name}`;
  }

  private metadataDir(id: TableIdentifier): string {
    return `${this.defaultLocation(id)}/metadata`;
  }

  private versionUri(id: TableIdentifier, n: number): string {
    return `${this.metadataDir(id)}/v${n}.metadata.json`;
  }

  async listNamespaces(): Promise<string[]> {
    const out: string[] = [];
    for (const name of await this.store.listChildren(this.warehouse)) {
      if (isHidden(name)) continue;
      // Only folders that hold at least one table are namespaces (not stray files or empty dirs).
      if ((await this.listTables(name)).length > 0) out.push(name);
    }
    return out;
  }

  async createNamespace(namespace: string): Promise<void> {
    // Folders appear with their first table; nothing to write for a file catalog.
    void namespace;
  }

  async listTables(namespace: string): Promise<string[]> {
    const out: string[] = [];
    for (const name of await this.store.listChildren(`${this.warehouse}/${namespace}`)) {
      if (!isHidden(name) && (await this.currentVersion({ namespace, name })) > 0) out.push(name);
    }
    return out;
  }

  private async currentVersion(id: TableIdentifier): Promise<number> {
    return (await this.currentFile(id))?.version ?? 0;
  }

  /** Highest committed version: the hint, then any later v<N> a crashed writer left behind. */
  private async currentFile(id: TableIdentifier): Promise<CurrentFile | undefined> {
    let n = 0;
    let javaNamed: CurrentFile | undefined;
    try {
      const text = new TextDecoder().decode(await this.store.get(`${this.metadataDir(id)}/${HINT}`));
      const parsed = Number.parseInt(text.trim(), 10);
      if (Number.isFinite(parsed) && parsed > 0) n = parsed;
    } catch {
      // No hint: fall back to listing.
      for (const f of await this.store.listChildren(this.metadataDir(id))) {
        const m = VERSION_FILE.exec(f);
        if (m) n = Math.max(n, Number(m[1]));
        const j = JAVA_VERSION_FILE.exec(f);
        if (j && (javaNamed === undefined || Number(j[1]) > javaNamed.version)) {
          javaNamed = { version: Number(j[1]), uri: `${this.metadataDir(id)}/${f}` };
        }
      }
    }
    while (await this.store.exists(this.versionUri(id, n + 1))) n++;
    if (n === 0 && javaNamed) {
      // A Java-catalog table copied in: its newest file is current; our first commit writes v<N+1>.
      return javaNamed.version > 0 ? javaNamed : { version: 1, uri: javaNamed.uri };
    }
    return n > 0 ? { version: n, uri: this.versionUri(id, n) } : undefined;
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    return (await this.currentVersion(id)) > 0;
  }

  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    const current = await this.currentFile(id);
    if (current === undefined)
      throw new FloeError(ErrorKind.NotFound, `table ${tableIdToString(id)} does not exist`);
    const metadata =
      cachedMetadata(this.store, current.uri) ??
      parseTableMetadata(new TextDecoder().decode(await this.store.get(current.uri)), current.uri);
    rememberMetadata(this.store, current.uri, metadata);
    const own = this.defaultLocation(id);
    if (metadata.location.replace(/\/+$/, '') !== own) this.options.relocate?.(metadata.location, own);
    return { id, metadata, metadataLocation: current.uri, versionToken: String(current.version) };
  }

  async createTable(id: TableIdentifier, metadata: TableMetadata): Promise<LoadedTable> {
    const location = this.versionUri(id, 1);
    if (!(await this.store.putIfAbsent(location, serializeTableMetadata(metadata)))) {
      throw new FloeError(ErrorKind.AlreadyExists, `table ${tableIdToString(id)} already exists`);
    }
    await this.writeHint(id, 1);
    return { id, metadata, metadataLocation: location, versionToken: '1' };
  }

  async commitTable(base: LoadedTable, metadata: TableMetadata): Promise<LoadedTable> {
    const next = Number(base.versionToken) + 1;
    const location = this.versionUri(base.id, next);
    if (!(await this.store.putIfAbsent(location, serializeTableMetadata(metadata)))) {
      throw new FloeError(
        ErrorKind.CommitConflict,
        `table ${tableIdToString(base.id)} changed since version ${base.versionToken}`,
        { context: { table: tableIdToString(base.id) } },
      );
    }
    rememberMetadata(this.store, location, metadata);
    await this.writeHint(base.id, next);
    return { id: base.id, metadata, metadataLocation: location, versionToken: String(next) };
  }

  private async writeHint(id: TableIdentifier, n: number): Promise<void> {
    // Best effort and monotonic enough: readers probe past the hint anyway.
    await this.store.put(`${this.metadataDir(id)}/${HINT}`, String(n));
  }
}

/** `_floe/` (dead letters, staging) and dot-folders are never namespaces or tables. */
function isHidden(name: string): boolean {
  return name.startsWith('.') || name.startsWith('_');
}
