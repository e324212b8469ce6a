export type { Catalog, LoadedTable, TableIdentifier } from './catalog.ts';
export { tableIdToString } from './catalog.ts';
export type { Clock, Ids } from './clock.ts';
export type { ObjectStore } from './object-store.ts';
