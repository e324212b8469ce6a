/**
 * The committer's hook for a catalog service's own maintenance: a catalog whose `createTable` also
 * sets the new table's managed maintenance up (Glue table optimizers, S3 Tables maintenance). A
 * failed setup never fails the commit — the table exists and its staged work must land; it is
 * reported, and the scheduled maintenance sweep sets the table up on its next run.
 */
import type { TableMetadata } from '../../iceberg/table-metadata.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../../ports/catalog.ts';
import type { ManagedMaintenance, ManagedOutcome } from '../../ports/managed-maintenance.ts';

export interface SetUpReport {
  readonly table: TableIdentifier;
  readonly outcome?: ManagedOutcome;
  readonly error?: unknown;
}

export function withManagedSetUp(
  inner: Catalog,
  managed: ManagedMaintenance,
  report: (r: SetUpReport) => void = () => undefined,
): Catalog {
  return {
    listNamespaces: () => inner.listNamespaces(),
    createNamespace: (ns: string) => inner.createNamespace(ns),
    listTables: (ns: string) => inner.listTables(ns),
    loadTable: (id: TableIdentifier) => inner.loadTable(id),
    tableExists: (id: TableIdentifier) => inner.tableExists(id),
    defaultLocation: (id: TableIdentifier) => inner.defaultLocation(id),
    commitTable: (base: LoadedTable, m: TableMetadata) => inner.commitTable(base, m),
    createTable: async (id: TableIdentifier, m: TableMetadata): Promise<LoadedTable> => {
      const created = await inner.createTable(id, m);
      try {
        report({ table: id, outcome: await managed.setUp(id) });
      } catch (error) {
        report({ table: id, error });
      }
      return created;
    },
  };
}
