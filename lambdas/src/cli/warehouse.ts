/** Opens a local warehouse folder as an object store + file catalog. */
import { promises as fs } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { FileCatalog } from '../adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../adapters/local/local-object-store.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import { parseTableMetadata } from '../iceberg/table-metadata.ts';
import type { TableIdentifier } from '../ports/catalog.ts';

export interface Warehouse {
  readonly dir: string;
  readonly uri: string;
  readonly store: LocalObjectStore;
  readonly catalog: FileCatalog;
}

export const DEFAULT_WAREHOUSE = '.floe/warehouse';

export function openWarehouse(dir: string | undefined): Warehouse {
  const abs = resolve(dir ?? process.env.FLOE_WAREHOUSE ?? DEFAULT_WAREHOUSE);
  const store = new LocalObjectStore();
  const uri = fileUri(abs);
  const relocate = (foreign: string, tableUri: string) => store.addRoot(foreign, store.pathOf(tableUri));
  return { dir: abs, uri, store, catalog: new FileCatalog(store, uri, { relocate }) };
}

/**
 * What marks a folder as a warehouse: Floe's own `_floe/` folder (dead letters, schema registry,
 * staging), which `floe load`, `floe local up` and `floe demo` create even before any table, or
 * at least one Iceberg table `<namespace>/<table>/metadata/` (a warehouse another engine wrote).
 */
export const WAREHOUSE_MARKER = '_floe';

/** Makes `wh.dir` a warehouse (idempotent): the folder and its marker. */
export async function markWarehouse(wh: Warehouse): Promise<void> {
  await fs.mkdir(join(wh.dir, WAREHOUSE_MARKER), { recursive: true });
}

/** The warehouse at `dir`, or a NotFound error naming the folder when it is none. */
export async function requireWarehouse(dir: string | undefined): Promise<Warehouse> {
  const wh = openWarehouse(dir);
  const st = await fs.stat(wh.dir).catch(() => undefined);
  const make = `floe load FILES -w ${wh.dir} or floe local up -w ${wh.dir} makes one`;
  if (!st)
    throw new FloeError(ErrorKind.NotFound, `no warehouse at ${wh.dir}: the folder does not exist (${make})`);
  if (!st.isDirectory())
    throw new FloeError(ErrorKind.NotFound, `${wh.dir} is a file, not a warehouse folder`);
  if (!(await isWarehouse(wh))) {
    throw new FloeError(
      ErrorKind.NotFound,
      `${wh.dir} is not a warehouse: it holds no ${WAREHOUSE_MARKER}/ folder and no Iceberg table (<namespace>/<table>/metadata/); ${make}`,
    );
  }
  return wh;
}

async function isWarehouse(wh: Warehouse): Promise<boolean> {
  if ((await fs.stat(join(wh.dir, WAREHOUSE_MARKER)).catch(() => undefined))?.isDirectory()) return true;
  // Stop at the first table: a wrong folder may be large.
  for (const namespace of await wh.store.listChildren(wh.uri)) {
    if (namespace.startsWith('.') || namespace.startsWith('_')) continue;
    for (const name of await wh.store.listChildren(`${wh.uri}/${namespace}`)) {
      if (await wh.catalog.tableExists({ namespace, name })) return true;
    }
  }
  return false;
}

/**
 * Before a command that reads a warehouse runs (a commander `preAction` hook): refuses a folder
 * that is no warehouse. Not for table paths (`describe ./t`), S3 stores (`--store`), or `query`
 * over `-t` tables alone.
 */
export async function checkReadCommandWarehouse(cmd: Command): Promise<void> {
  const name = cmd.parent?.name() === 'dead-letters' ? `dead-letters ${cmd.name()}` : cmd.name();
  const opts = cmd.opts() as { warehouse?: string; store?: string; table?: readonly string[] };
  switch (name) {
    case 'tables':
      break;
    case 'describe':
    case 'snapshots':
      if (looksLikePath(String(cmd.args[0] ?? ''))) return;
      break;
    case 'query':
      if ((opts.table?.length ?? 0) > 0 && opts.warehouse === undefined && !process.env.FLOE_WAREHOUSE)
        return;
      break;
    case 'dead-letters list':
    case 'dead-letters show':
    case 'dead-letters replay':
    case 'dead-letters purge':
      if (opts.store !== undefined) return;
      break;
    default:
      return;
  }
  await requireWarehouse(opts.warehouse);
}

/** `name` (searched in every namespace) or `namespace.name`. */
export async function resolveTable(wh: Warehouse, ref: string): Promise<TableIdentifier> {
  const dot = ref.indexOf('.');
  if (dot > 0) {
    const id = { namespace: ref.slice(0, dot), name: ref.slice(dot + 1) };
    if (await wh.catalog.tableExists(id)) return id;
    throw new FloeError(ErrorKind.NotFound, `table ${ref} not found in warehouse ${wh.dir}`);
  }
  const hits: TableIdentifier[] = [];
  for (const namespace of await wh.catalog.listNamespaces()) {
    if ((await wh.catalog.listTables(namespace)).includes(ref)) hits.push({ namespace, name: ref });
  }
  if (hits.length === 1) return hits[0]!;
  if (hits.length === 0)
    throw new FloeError(ErrorKind.NotFound, `table ${ref} not found in warehouse ${wh.dir}`);
  throw new FloeError(
    ErrorKind.DataInvalid,
    `table name ${ref} is ambiguous: ${hits.map((h) => `${h.namespace}.${h.name}`).join(', ')}; qualify it`,
  );
}

export async function listAllTables(wh: Warehouse): Promise<TableIdentifier[]> {
  const out: TableIdentifier[] = [];
  for (const namespace of await wh.catalog.listNamespaces()) {
    for (const name of await wh.catalog.listTables(namespace)) out.push({ namespace, name });
  }
  return out;
}

/** A table opened from a folder (or one of its metadata files) outside any warehouse layout. */
export interface OpenedTable {
  readonly table: import('../ports/catalog.ts').LoadedTable;
  readonly store: LocalObjectStore;
  /** A table folder's catalog (commits go through it); absent when a metadata file was named. */
  readonly catalog?: FileCatalog;
}

/**
 * Opens `path`: a table folder (holding `metadata/`) or a `*.metadata.json` file. File URIs in the
 * metadata that point elsewhere (`s3://…`, relative paths) are served from the folder.
 */
export async function openTablePath(path: string): Promise<OpenedTable> {
  const abs = resolve(path);
  const st = await fs.stat(abs).catch(() => undefined);
  if (!st) throw new FloeError(ErrorKind.NotFound, `no table at ${path}`);
  const store = new LocalObjectStore();
  if (st.isDirectory()) {
    const catalog = new FileCatalog(store, fileUri(dirname(dirname(abs))), {
      relocate: (foreign) => store.addRoot(foreign, abs),
    });
    const id = { namespace: basename(dirname(abs)), name: basename(abs) };
    if (!(await catalog.tableExists(id))) {
      throw new FloeError(ErrorKind.NotFound, `${path} holds no Iceberg table (no metadata/*.metadata.json)`);
    }
    return { table: await catalog.loadTable(id), store, catalog };
  }
  const tableDir = basename(dirname(abs)) === 'metadata' ? dirname(dirname(abs)) : dirname(abs);
  const metadata = parseTableMetadata(await fs.readFile(abs, 'utf8'), abs);
  store.addRoot(metadata.location, tableDir);
  const id = { namespace: basename(dirname(tableDir)), name: basename(tableDir) };
  return { table: { id, metadata, metadataLocation: fileUri(abs), versionToken: '' }, store };
}

/** True when a table argument names a path rather than a table in the warehouse. */
export function looksLikePath(ref: string): boolean {
  return ref.includes('/') || ref.endsWith('.json');
}
