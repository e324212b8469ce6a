/**
 * Helpers for tests that copy read-only fixture tables into a scratch warehouse and query them
 * through the file catalog (as `floe query` does).
 */
import { promises as fs } from 'node:fs';
import { join, relative } from 'node:path';
import type { Warehouse } from '../../lambdas/src/cli/warehouse.ts';
import type { TableIdentifier } from '../../lambdas/src/ports/catalog.ts';
import { IcebergQueryEngine } from '../../lambdas/src/query/engine.ts';

/** `relative/path → "size mode mtime"` for every entry under `dir` (directories included). */
export async function treeListing(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const st = await fs.stat(p);
      out[relative(dir, p)] =
        `${e.isDirectory() ? 'dir' : st.size} ${(st.mode & 0o7777).toString(8)} ${st.mtimeMs}`;
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk(dir);
  return out;
}

/** Recursively adds owner write permission (fs.cp keeps the fixtures' read-only modes). */
export async function makeWritable(dir: string): Promise<void> {
  const st = await fs.stat(dir);
  await fs.chmod(dir, (st.mode & 0o7777) | 0o200);
  if (!st.isDirectory()) return;
  await fs.chmod(dir, (st.mode & 0o7777) | 0o700);
  for (const name of await fs.readdir(dir)) await makeWritable(join(dir, name));
}

/** Copies a table folder into `<wh>/<namespace>/<name>` and makes the copy writable. */
export async function copyTableInto(srcDir: string, whDir: string, id: TableIdentifier): Promise<string> {
  const dest = join(whDir, id.namespace, id.name);
  await fs.mkdir(join(whDir, id.namespace), { recursive: true });
  await fs.cp(srcDir, dest, { recursive: true });
  await makeWritable(dest);
  return dest;
}

/**
 * Loads `id` through the warehouse catalog (which registers foreign locations with the store) and
 * runs `sql` against it as view `t`.
 */
export async function queryWarehouseTable(
  wh: Warehouse,
  id: TableIdentifier,
  sql: string,
): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
  const table = await wh.catalog.loadTable(id);
  const engine = new IcebergQueryEngine({
    read: (uri) => wh.store.get(uri),
    resolvePath: (uri) => wh.store.pathOf(uri),
  });
  try {
    await engine.registerTable('t', table.metadata);
    return await engine.query(sql);
  } finally {
    engine.close();
  }
}

/** A stable text form of a result row (bigint- and Uint8Array-safe), for multiset comparisons. */
export function rowKey(row: Record<string, unknown>, columns: readonly string[]): string {
  return JSON.stringify(
    columns.map((c) => row[c]),
    (_k, v) =>
      typeof v === 'bigint'
        ? `${v}n`
        : v instanceof Uint8Array
          ? `bytes:${Buffer.from(v).toString('hex')}`
          : v,
  );
}

/** Sorted row keys: equal arrays ⇔ equal multisets of rows. */
export function rowMultiset(rows: readonly Record<string, unknown>[], columns: readonly string[]): string[] {
  return rows.map((r) => rowKey(r, columns)).sort();
}
