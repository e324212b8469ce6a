/**
 * How the committer asks for tables' maintenance out of schedule (app/commit-compaction.ts):
 * `request` hands the tables to the maintenance function and returns once that is accepted, not
 * when they are maintained. Losing a request loses nothing: the scheduled sweep still visits every
 * table, and the next commit asks again once the cooldown has passed.
 */
export interface MaintenanceRequests {
  request(tables: readonly string[]): Promise<void>;
}

/** The event a requested maintenance run receives. */
export interface MaintainTablesEvent {
  readonly floeMaintainTables: { readonly tables: readonly string[]; readonly requestedBy: string };
}

/** The tables of a maintenance request event, or undefined for any other event (a schedule tick). */
export function requestedTablesOf(event: unknown): string[] | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const e = (event as Partial<MaintainTablesEvent>).floeMaintainTables;
  if (typeof e !== 'object' || e === null || !Array.isArray(e.tables)) return undefined;
  const tables = e.tables.filter((t): t is string => typeof t === 'string' && t !== '');
  return tables.length > 0 ? tables : undefined;
}
