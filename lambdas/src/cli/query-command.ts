/** `floe query "SQL"`: DuckDB over the current snapshot of every table in the warehouse. */

import { ErrorKind, FloeError } from '../errors.ts';
import { IcebergQueryEngine } from '../query/index.ts';
import { renderTable } from './format.ts';
import { listAllTables, openTablePath, openWarehouse, type Warehouse } from './warehouse.ts';

export interface QueryCommandOptions {
  readonly warehouse?: string;
  readonly json?: boolean;
  /** `name=path` pairs: table folders outside the warehouse. */
  readonly table?: readonly string[];
}

/** An engine with one view per table: `name` (when unique) and `namespace.name`. */
export async function openQueryEngine(wh: Warehouse): Promise<IcebergQueryEngine> {
  const engine = new IcebergQueryEngine({
    read: (uri) => wh.store.get(uri),
    resolvePath: (uri) => wh.store.pathOf(uri),
  });
  const ids = await listAllTables(wh);
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id.name, (counts.get(id.name) ?? 0) + 1);
  for (const id of ids) {
    const t = await wh.catalog.loadTable(id);
    if (counts.get(id.name) === 1) await engine.registerTable(id.name, t.metadata);
    await engine.registerTable(id.name, t.metadata, { schema: id.namespace });
  }
  return engine;
}

export async function queryCommand(
  sql: string,
  opts: QueryCommandOptions,
  out: (s: string) => void,
): Promise<void> {
  const engine = await openQueryEngine(openWarehouse(opts.warehouse));
  try {
    for (const spec of opts.table ?? []) {
      const eq = spec.indexOf('=');
      if (eq <= 0) throw new FloeError(ErrorKind.ConfigInvalid, `--table wants name=path, got '${spec}'`);
      const { table, store } = await openTablePath(spec.slice(eq + 1));
      await engine.registerTable(spec.slice(0, eq), table.metadata, {
        read: (uri: string) => store.get(uri),
        resolvePath: (uri: string) => store.pathOf(uri),
      });
    }
    const r = await engine.query(sql);
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

function cell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object' && !(v instanceof Uint8Array)) {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  }
  return String(v);
}
