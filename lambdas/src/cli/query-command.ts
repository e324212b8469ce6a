/**
 * `floe query "SQL"`: DuckDB over every table in the warehouse — at its current snapshot, or as of
 * a time (`--as-of`) or a snapshot (`--snapshot`, `FOR VERSION AS OF`) — plus the metadata tables
 * (`"t$snapshots"`, `"t$files"` …) the SQL names.
 */

import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import { type TableIdentifier, tableIdToString } from '../ports/catalog.ts';
import {
  IcebergQueryEngine,
  parseSnapshotArg,
  parseTimestampMs,
  prepareQuery,
  type QueryTable,
  registerTables,
  type SnapshotChoice,
  type TimeTravelOptions,
} from '../query/index.ts';
import { assertReadOnly } from '../query/read-only.ts';
import { renderTable } from './format.ts';
import { listAllTables, openTablePath, openWarehouse, type Warehouse } from './warehouse.ts';

export interface QueryCommandOptions {
  readonly warehouse?: string;
  readonly json?: boolean;
  /** `name=path` pairs: table folders outside the warehouse. */
  readonly table?: readonly string[];
  /** Read every table as of this time (ISO 8601 or epoch milliseconds). */
  readonly asOf?: string;
  /** `[TABLE=]ID` pairs: read TABLE (or the one table the SQL names) at snapshot ID. */
  readonly snapshot?: readonly string[];
  /** Run statements that write files or change the engine (COPY … TO, ATTACH, INSTALL, SET …). */
  readonly allowWrites?: boolean;
}

/** An engine with one view per table: `name` (when unique) and `namespace.name`. */
export async function openQueryEngine(wh: Warehouse): Promise<IcebergQueryEngine> {
  const engine = engineFor(wh);
  await registerTables(engine, await warehouseTables(wh));
  return engine;
}

export async function queryCommand(
  sql: string,
  opts: QueryCommandOptions,
  out: (s: string) => void,
): Promise<void> {
  if (!opts.allowWrites) assertReadOnly(sql);
  const timeTravel = timeTravelOptions(opts);
  const wh = openWarehouse(opts.warehouse);
  const external = await externalTables(opts.table ?? []);
  const shadowed = new Set(external.map((t) => t.name.toLowerCase()));
  const tables = [...(await warehouseTables(wh, shadowed)), ...external];
  const engine = engineFor(wh);
  try {
    const r = await engine.query(await prepareQuery(engine, tables, sql, timeTravel));
    if (opts.json) {
      for (const row of r.rows)
        out(JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
      return;
    }
    out(
      renderTable(
        r.columns,
        r.rows.map((row) => r.columns.map((c) => cell(row[c]))),
      ),
    );
    out(`(${r.rows.length} row${r.rows.length === 1 ? '' : 's'})`);
  } finally {
    engine.close();
  }
}

/**
 * A read-only session over the warehouse that answers SQL as `floe query` does (time travel
 * clauses, `namespace.table` names); for commands that check data before they act.
 */
export async function warehouseSession(
  wh: Warehouse,
  /** The tables the SQL reads (default every one: each table's metadata is loaded). */
  only?: readonly TableIdentifier[],
): Promise<{ rows(sql: string): Promise<Record<string, unknown>[]>; close(): void }> {
  const engine = engineFor(wh);
  const tables = await warehouseTables(wh, new Set(), only);
  return {
    rows: async (sql) => {
      assertReadOnly(sql);
      return (await engine.query(await prepareQuery(engine, tables, sql))).rows;
    },
    close: () => engine.close(),
  };
}

function engineFor(wh: Warehouse): IcebergQueryEngine {
  return new IcebergQueryEngine({
    read: (uri) => wh.store.get(uri),
    resolvePath: (uri) => wh.store.pathOf(uri),
  });
}

/** Every warehouse table; a bare name only when one namespace has it and no `-t` table takes it. */
async function warehouseTables(
  wh: Warehouse,
  shadowed: ReadonlySet<string> = new Set(),
  only?: readonly TableIdentifier[],
): Promise<QueryTable[]> {
  const ids = await listAllTables(wh);
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id.name, (counts.get(id.name) ?? 0) + 1);
  const wanted = only && new Set(only.map(tableIdToString));
  const out: QueryTable[] = [];
  for (const id of ids) {
    if (wanted && !wanted.has(tableIdToString(id))) continue;
    const t = await wh.catalog.loadTable(id);
    out.push({
      name: id.name,
      namespace: id.namespace,
      bare: counts.get(id.name) === 1 && !shadowed.has(id.name.toLowerCase()),
      metadata: t.metadata,
      read: (uri) => wh.store.get(uri),
      resolvePath: (uri) => wh.store.pathOf(uri),
    });
  }
  return out;
}

/** `-t name=path` tables (folders outside the warehouse, e.g. written by Spark). */
async function externalTables(specs: readonly string[]): Promise<QueryTable[]> {
  const out: QueryTable[] = [];
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    if (eq <= 0) throw new FloeError(ErrorKind.ConfigInvalid, `--table wants name=path, got '${spec}'`);
    const { table, store } = await openTablePath(spec.slice(eq + 1));
    out.push({
      name: spec.slice(0, eq),
      bare: true,
      metadata: table.metadata,
      read: (uri) => store.get(uri),
      resolvePath: (uri) => store.pathOf(uri),
    });
  }
  return out;
}

function timeTravelOptions(opts: QueryCommandOptions): TimeTravelOptions {
  const snapshots = (opts.snapshot ?? []).map(snapshotChoice);
  if (opts.asOf === undefined) return { snapshots };
  try {
    return { asOfMs: parseTimestampMs(opts.asOf), snapshots };
  } catch (e) {
    if (isFloeError(e)) throw new FloeError(e.kind, `--as-of: ${e.message}`, { cause: e });
    throw e;
  }
}

/** `ID`, `TABLE=ID` or `TABLE=BRANCH_OR_TAG`. */
function snapshotChoice(text: string): SnapshotChoice {
  const eq = text.indexOf('=');
  if (eq === 0) throw new FloeError(ErrorKind.ConfigInvalid, `--snapshot wants [TABLE=]ID, got '${text}'`);
  if (eq < 0) return { selector: parseSnapshotArg(text) };
  return { table: text.slice(0, eq), selector: parseSnapshotArg(text.slice(eq + 1)) };
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object' && !(v instanceof Uint8Array)) {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  }
  return String(v);
}
