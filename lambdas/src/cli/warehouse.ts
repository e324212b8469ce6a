/** Opens a local warehouse folder as an object store + file catalog. */
import { resolve } from 'node:path';
import { FileCatalog } from '../adapters/local/file-catalog.ts';
import { LocalObjectStore, fileUri } from '../adapters/local/local-object-store.ts';
import { ErrorKind, FloeError } from '../errors.ts';
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
  return { dir: abs, uri, store, catalog: new FileCatalog(store, uri) };
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
  if (hits.length === 0) throw new FloeError(ErrorKind.NotFound, `table ${ref} not found in warehouse ${wh.dir}`);
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
