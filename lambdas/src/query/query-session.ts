/**
 * Prepares one SQL statement over a set of Iceberg tables: a view per table (at its current
 * snapshot, or where time travel puts it), the metadata tables the SQL names (`"t$files"` …, built
 * only when named, so plain queries stay fast) and Trino's `FOR VERSION / TIMESTAMP AS OF` clauses
 * rewritten to views of their own.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { planScan, type ReadFile } from '../iceberg/scan.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import type { IcebergQueryEngine } from './engine.ts';
import {
  isMetadataTableKind,
  METADATA_TABLE_KINDS,
  type MetadataTableKind,
  metadataTableRows,
  SNAPSHOT_SCOPED,
  splitMetadataName,
} from './metadata-tables.ts';
import { quoteIdent } from './sql.ts';
import { type NameChain, rewriteSql, sqlReferences, type VersionSpec } from './sql-references.ts';
import type { ResolvePath } from './table-view.ts';
import { CURRENT, parseTimestampMs, type SnapshotSelector, selectSnapshot } from './time-travel.ts';

export interface QueryTable {
  readonly name: string;
  /** Also registered as `"namespace"."name"` when set. */
  readonly namespace?: string;
  /** Registered under the bare name too (false when two namespaces share the name). */
  readonly bare: boolean;
  readonly metadata: TableMetadata;
  readonly read: ReadFile;
  readonly resolvePath: ResolvePath;
}

/** `--snapshot [TABLE=]ID`: without a table it applies to the one table the SQL names. */
export interface SnapshotChoice {
  readonly table?: string;
  readonly selector: SnapshotSelector;
}

export interface TimeTravelOptions {
  /** Read every table as it was at this time (epoch milliseconds). */
  readonly asOfMs?: bigint;
  readonly snapshots?: readonly SnapshotChoice[];
}

/** How a table is named in messages and in `--snapshot TABLE=ID`. */
export function tableLabel(t: QueryTable): string {
  return t.namespace === undefined ? t.name : `${t.namespace}.${t.name}`;
}

/** Registers a view per table at its current snapshot (no SQL to look at). */
export async function registerTables(
  engine: IcebergQueryEngine,
  tables: readonly QueryTable[],
): Promise<void> {
  for (const t of tables) await registerView(engine, t, undefined);
}

/** Registers what `sql` needs and returns the SQL to run (time-travel clauses rewritten). */
export async function prepareQuery(
  engine: IcebergQueryEngine,
  tables: readonly QueryTable[],
  sql: string,
  opts: TimeTravelOptions = {},
): Promise<string> {
  const refs = sqlReferences(sql);
  const inClause = new Set(refs.timeTravel.map((c) => c.table.start));
  const named = refs.chains.flatMap((chain) => {
    const hit = matchTable(tables, chain);
    return hit ? [{ chain, ...hit }] : [];
  });
  const selectors = chooseSelectors(tables, named, opts);

  // Views of every table (as before: SHOW TABLES and information_schema see them all). A table that
  // did not exist yet at --as-of is left out, unless the SQL reads it: then that is the error.
  const readsData = new Set(
    named
      .filter((n) => !inClause.has(n.chain.start) && (n.kind === undefined || SNAPSHOT_SCOPED.has(n.kind)))
      .map((n) => n.table),
  );
  const snapshotIds = new Map<QueryTable, bigint | undefined>();
  for (const t of tables) {
    const selector = selectors.get(t) ?? CURRENT;
    let id: bigint | undefined;
    try {
      id = selectSnapshot(t.metadata, selector, tableLabel(t));
    } catch (e) {
      if (selector.kind === 'as-of' && !readsData.has(t)) continue;
      throw e;
    }
    snapshotIds.set(t, id);
    await registerView(engine, t, id);
  }

  const registered = new Set<string>();
  for (const n of named) {
    if (n.kind === undefined || inClause.has(n.chain.start)) continue;
    const key = `${tableLabel(n.table)}$${n.kind}`;
    if (registered.has(key)) continue;
    registered.add(key);
    await registerMetadataTable(engine, n.table, n.kind, snapshotIds.get(n.table));
  }

  const edits: { start: number; end: number; text: string }[] = [];
  const clauseViews = new Map<string, string>();
  for (const clause of refs.timeTravel) {
    const hit = matchTable(tables, clause.table);
    if (!hit) {
      throw new FloeError(
        ErrorKind.NotFound,
        `${clause.table.parts.join('.')} ${clause.text}: no table ${clause.table.parts.join('.')} to time travel in`,
      );
    }
    const { table, kind } = hit;
    if (kind !== undefined && !SNAPSHOT_SCOPED.has(kind)) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `${clause.table.parts.join('.')} lists the whole history already; ${clause.text} applies to the table and to its $files, $manifests and $partitions`,
      );
    }
    const id = selectSnapshot(table.metadata, selectorOf(clause.version), tableLabel(table));
    const name = kind === undefined ? table.name : `${table.name}$${kind}`;
    const key = `${tableLabel(table)}|${kind ?? ''}|${id}`;
    let schema = clauseViews.get(key);
    if (schema === undefined) {
      schema = `__floe_tt_${clauseViews.size}`;
      clauseViews.set(key, schema);
      if (kind === undefined) await registerView(engine, table, id, { schema, bare: false });
      else await registerMetadataTable(engine, table, kind, id, schema);
    }
    edits.push({ start: clause.start, end: clause.end, text: `${quoteIdent(schema)}.${quoteIdent(name)}` });
  }
  return rewriteSql(sql, edits);
}

interface TableMatch {
  readonly table: QueryTable;
  /** Set for `t$files` and the like. */
  readonly kind?: MetadataTableKind;
}

/** The table (or metadata table) a name chain ends with: `t`, `ns.t`, `"t$files"`, `ns."t$files"`. */
function matchTable(tables: readonly QueryTable[], chain: NameChain): TableMatch | undefined {
  const last = (chain.parts.at(-1) as string).toLowerCase();
  const namespace = chain.parts.at(-2)?.toLowerCase();
  const find = (name: string) =>
    tables.find((t) => t.namespace?.toLowerCase() === namespace && t.name.toLowerCase() === name) ??
    tables.find((t) => t.bare && t.name.toLowerCase() === name);
  const plain = find(last);
  if (plain) return { table: plain };
  const split = splitMetadataName(last);
  const base = split && find(split.base);
  if (!split || !base) return undefined;
  if (!isMetadataTableKind(split.suffix)) {
    throw new FloeError(
      ErrorKind.NotFound,
      `${chain.parts.join('.')}: table ${tableLabel(base)} has no metadata table $${split.suffix}; there are ${METADATA_TABLE_KINDS.map((k) => `$${k}`).join(', ')}`,
    );
  }
  return { table: base, kind: split.suffix };
}

/** Which selector each table gets from `--snapshot` and `--as-of` (an explicit snapshot wins). */
function chooseSelectors(
  tables: readonly QueryTable[],
  named: readonly { readonly table: QueryTable }[],
  opts: TimeTravelOptions,
): Map<QueryTable, SnapshotSelector> {
  const out = new Map<QueryTable, SnapshotSelector>();
  if (opts.asOfMs !== undefined) for (const t of tables) out.set(t, { kind: 'as-of', ms: opts.asOfMs });
  for (const choice of opts.snapshots ?? []) {
    out.set(
      choice.table === undefined ? onlyNamedTable(named, choice) : tableByRef(tables, choice.table),
      choice.selector,
    );
  }
  return out;
}

function onlyNamedTable(
  named: readonly { readonly table: QueryTable }[],
  choice: SnapshotChoice,
): QueryTable {
  const distinct = [...new Set(named.map((n) => n.table))];
  if (distinct.length === 1) return distinct[0] as QueryTable;
  const shown = describeSelector(choice.selector);
  throw new FloeError(
    ErrorKind.DataInvalid,
    distinct.length === 0
      ? `--snapshot ${shown}: the SQL names no table of the warehouse to read at that snapshot`
      : `--snapshot ${shown}: the SQL names ${distinct.map(tableLabel).join(', ')}; say which one: --snapshot TABLE=${shown}`,
  );
}

function tableByRef(tables: readonly QueryTable[], ref: string): QueryTable {
  const r = ref.toLowerCase();
  const hits = tables.filter((t) => tableLabel(t).toLowerCase() === r || t.name.toLowerCase() === r);
  if (hits.length === 1) return hits[0] as QueryTable;
  throw new FloeError(
    hits.length === 0 ? ErrorKind.NotFound : ErrorKind.DataInvalid,
    hits.length === 0
      ? `--snapshot ${ref}=…: no table ${ref}`
      : `--snapshot ${ref}=…: ${ref} is ambiguous (${hits.map(tableLabel).join(', ')}); qualify it`,
  );
}

function describeSelector(s: SnapshotSelector): string {
  switch (s.kind) {
    case 'snapshot-id':
      return String(s.id);
    case 'ref':
      return s.name;
    default:
      return s.kind;
  }
}

function selectorOf(v: VersionSpec): SnapshotSelector {
  switch (v.kind) {
    case 'snapshot-id':
      return { kind: 'snapshot-id', id: v.id };
    case 'ref':
      return { kind: 'ref', name: v.name };
    case 'timestamp':
      return { kind: 'as-of', ms: parseTimestampMs(v.text) };
  }
}

async function registerView(
  engine: IcebergQueryEngine,
  t: QueryTable,
  snapshotId: bigint | undefined,
  where: { schema: string; bare: boolean } = { schema: t.namespace ?? '', bare: t.bare },
): Promise<void> {
  const plan = await planScan(t.metadata, t.read, snapshotId === undefined ? {} : { snapshotId });
  const io = { resolvePath: t.resolvePath };
  if (where.bare) await engine.registerScanPlan(t.name, plan, io);
  if (where.schema !== '') await engine.registerScanPlan(t.name, plan, { ...io, schema: where.schema });
}

async function registerMetadataTable(
  engine: IcebergQueryEngine,
  t: QueryTable,
  kind: MetadataTableKind,
  snapshotId: bigint | undefined,
  schema?: string,
): Promise<void> {
  const rows = await metadataTableRows(kind, {
    metadata: t.metadata,
    read: t.read,
    table: tableLabel(t),
    ...(snapshotId === undefined ? {} : { snapshotId }),
  });
  const name = `${t.name}$${kind}`;
  if (schema !== undefined) return engine.registerRows(name, rows, schema);
  if (t.bare) await engine.registerRows(name, rows);
  if (t.namespace !== undefined) await engine.registerRows(name, rows, t.namespace);
}
