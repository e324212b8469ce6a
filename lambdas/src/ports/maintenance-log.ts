/**
 * When the scheduled maintenance last visited each table. A run works through the tables of its
 * namespace least recently visited first and stops starting tables when its time runs short, so
 * the next run begins with the tables this one did not reach (and a table skipped because the
 * committer held its lease comes first again). A visit is recorded when a table is started, so a
 * table whose maintenance outlasts a run goes to the back of the queue instead of blocking it.
 */
export interface MaintenanceLog {
  /** Table name → epoch ms of its last visit, for the tables of `namespace` ever visited. */
  visits(namespace: string): Promise<Map<string, number>>;
  recordVisit(namespace: string, table: string, atMs: number): Promise<void>;
}

/** Tables in visiting order: never visited first, then oldest visit first; ties by name. */
export function visitingOrder(tables: readonly string[], visits: ReadonlyMap<string, number>): string[] {
  const at = (t: string) => visits.get(t) ?? Number.NEGATIVE_INFINITY;
  return [...tables].sort((a, b) => at(a) - at(b) || (a < b ? -1 : a > b ? 1 : 0));
}
