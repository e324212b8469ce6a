/**
 * What the ingest knows about tables between invocations (DESIGN §1: "compare with the table's
 * cached schema and spec"): a bounded, least-recently-used cache of loaded tables, each refreshed
 * after `refreshMs`. A stale entry is harmless: a batch that looks like it needs a change is staged
 * as a pending fragment (the committer evolves the table), and one that fits an older schema is a
 * valid data file of that schema (Iceberg reads it by field id).
 */
import { ErrorKind, isFloeError } from '../errors.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../ports/catalog.ts';
import { tableIdToString } from '../ports/catalog.ts';
import type { Clock } from '../ports/clock.ts';

export interface TableCacheOptions {
  /** Reload a table after this long (default 30 s). */
  readonly refreshMs?: number;
  /** Tables kept (default 256). */
  readonly maxTables?: number;
}

interface Cached {
  readonly table: LoadedTable | undefined;
  readonly loadedAtMs: number;
}

export class TableCache {
  private readonly entries = new Map<string, Cached>();
  private readonly refreshMs: number;
  private readonly maxTables: number;
  hits = 0;
  loads = 0;

  constructor(
    private readonly catalog: Catalog,
    private readonly clock: Clock,
    opts: TableCacheOptions = {},
  ) {
    this.refreshMs = opts.refreshMs ?? 30_000;
    this.maxTables = opts.maxTables ?? 256;
  }

  /** The table, or undefined when it does not exist (also cached, so new tables appear after a refresh). */
  async get(id: TableIdentifier): Promise<LoadedTable | undefined> {
    const key = tableIdToString(id);
    const now = this.clock.nowMs();
    const hit = this.entries.get(key);
    if (hit && now - hit.loadedAtMs < this.refreshMs) {
      this.entries.delete(key);
      this.entries.set(key, hit); // most recently used last
      this.hits++;
      return hit.table;
    }
    this.loads++;
    let table: LoadedTable | undefined;
    try {
      table = await this.catalog.loadTable(id);
    } catch (e) {
      if (!isFloeError(e, ErrorKind.NotFound)) throw e;
    }
    this.entries.delete(key);
    this.entries.set(key, { table, loadedAtMs: now });
    while (this.entries.size > this.maxTables)
      this.entries.delete(this.entries.keys().next().value as string);
    return table;
  }

  /** Forget a table (e.g. after a failure that suggests it changed). */
  invalidate(id: TableIdentifier): void {
    this.entries.delete(tableIdToString(id));
  }
}
