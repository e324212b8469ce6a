/**
 * Turns a scan plan into one DuckDB SELECT over the table's data files.
 *
 * Columns are read by Parquet field id (`read_parquet(..., schema=map{id: {name, type, default_value}})`),
 * so renames, reorders, added columns and sanitised Parquet names resolve as the spec requires. A field id
 * missing from a file takes its identity-partition value, else its `initial-default`, else NULL (name
 * mapping for id-less files is not supported).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { DataFileContent } from '../iceberg/manifest/types.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import type { DeleteFileRef, FileScanTask, ScanPlan } from '../iceberg/scan.ts';
import { pruneToIds, type Schema } from '../iceberg/schema.ts';
import type { IcebergType, NestedField } from '../iceberg/types.ts';
import { duckdbType, quoteIdent, quoteString, valueToText, varcharLiteral } from './sql.ts';

/** Maps a table file URI (as written in the metadata) to a path or URL DuckDB can open. */
export type ResolvePath = (uri: string) => string;

const POS_FILE_PATH_ID = 2147483546;
const POS_POS_ID = 2147483545;

interface Column {
  readonly id: number;
  readonly name: string;
  readonly type: IcebergType;
  readonly defaultText: string | undefined;
}

/** Data files under exactly the same delete files. */
interface Group {
  readonly deletes: readonly DeleteFileRef[];
  /** Columns read (internal names): the plan's top-level columns, then hidden equality columns. */
  readonly columns: readonly string[];
  /** Schema map → table URIs read with it by one `read_parquet` call (in `file_index` order). */
  readonly reads: Map<string, string[]>;
}

/**
 * A SELECT producing the rows of `plan` with the plan schema's top-level columns (current names and
 * Iceberg → DuckDB types), after applying position and equality deletes.
 *
 * Data files are grouped by their exact set of applicable delete files (the files of one commit
 * usually share it); within a group, files with the same `read_parquet` schema map share one
 * `read_parquet` call (the map's identity-partition defaults differ between partitions).
 *
 * Equality delete files are unioned into one CTE per equality-id set, each row tagged with its
 * file's index (`__del`): a group needs one `NOT EXISTS` per id set, restricted to the group's
 * delete files, however many data and delete files it has (not one per data file × delete file).
 * Position delete files are unioned into one CTE too, keeping only rows of files that apply to the
 * data file they name; the rows of every group with position deletes then go through a single
 * `NOT EXISTS` on (data file URI, row position).
 *
 * Data columns are read under internal names (`c<field id>`, aliased to the schema's names), so no
 * table column can shadow DuckDB's `file_index` / `file_row_number` virtual columns.
 */
export function tableViewSql(plan: ScanPlan, resolvePath: ResolvePath): string {
  const fields = plan.schema.fields;
  if (fields.length === 0)
    throw new FloeError(ErrorKind.FeatureUnsupported, 'cannot query a table with no columns');
  if (plan.tasks.length === 0) {
    return `SELECT ${fields.map((f) => `CAST(NULL AS ${duckdbType(f.type)}) AS ${quoteIdent(f.name)}`).join(', ')} LIMIT 0`;
  }

  const ctes = new DeleteCtes(plan, resolvePath);
  const groups = new Map<string, Group>(); // sorted delete file URIs → group
  for (const task of plan.tasks) {
    checkFormat(task.file.file_path, task.file.file_format);
    const deletes = uniqueByPath(task.deletes);
    for (const d of deletes) ctes.add(d, task.file.file_path);
    const hidden = deletes
      .filter((d) => d.file.content === DataFileContent.EQUALITY_DELETES)
      .flatMap((d) => d.file.equality_ids ?? [])
      .filter((id) => fieldPath(fields, id) === undefined);
    const columns = [
      ...taskColumns(plan, task),
      ...hiddenColumns(
        plan,
        [...new Set(hidden)].sort((x, y) => x - y),
      ),
    ];
    const schemaMap = schemaMapSql(columns);
    const key = deletes
      .map((d) => d.file.file_path)
      .sort()
      .join('\n');
    let group = groups.get(key);
    if (!group) {
      group = { deletes, columns: columns.map((c) => quoteIdent(c.name)), reads: new Map() };
      groups.set(key, group);
    }
    const files = group.reads.get(schemaMap);
    if (files) files.push(task.file.file_path);
    else group.reads.set(schemaMap, [task.file.file_path]);
  }

  const projection = fields.map((f) => `t.${dataColumnName(f.id)} AS ${quoteIdent(f.name)}`).join(', ');
  const selects: string[] = [];
  // Rows of groups with position deletes: the plan's columns, their data file URI and position.
  const positioned: string[] = [];
  for (const g of groups.values()) {
    const reads = [...g.reads].map(([schemaMap, files]) => ({
      from: `${readParquet(files.map(resolvePath), schemaMap)})`,
      files,
    }));
    const conditions = ctes.equalityConditions(g.deletes, fields);
    const positions = g.deletes.some((d) => d.file.content === DataFileContent.POSITION_DELETES);
    if (conditions.length === 0 && !positions) {
      for (const r of reads) selects.push(`SELECT ${projection} FROM ${r.from} AS t`);
      continue;
    }
    const extra = positions
      ? (files: readonly string[]) => `, ${fileUri(files)} AS __file, file_row_number AS __pos`
      : () => '';
    const sources = reads.map((r) => `SELECT ${g.columns.join(', ')}${extra(r.files)} FROM ${r.from}`);
    if (conditions.length === 0) {
      // No hidden columns without equality deletes: these are the plan's columns, __file, __pos.
      positioned.push(...sources);
      continue;
    }
    const from = reads.length === 1 && !positions ? reads[0]!.from : `(${sources.join(' UNION ALL ')})`;
    const where = `WHERE ${conditions.join(' AND ')}`;
    if (!positions) selects.push(`SELECT ${projection} FROM ${from} AS t ${where}`);
    else {
      const kept = [...fields.map((f) => `t.${dataColumnName(f.id)}`), 't.__file', 't.__pos'];
      positioned.push(`SELECT ${kept.join(', ')} FROM ${from} AS t ${where}`);
    }
  }
  if (positioned.length > 0) {
    selects.push(
      `SELECT ${projection} FROM (${positioned.join(' UNION ALL ')}) AS t WHERE NOT EXISTS (SELECT 1 FROM ${POSITIONS} AS d WHERE d.file_path = t.__file AND d.pos = t.__pos)`,
    );
  }
  const withClause = ctes.sql();
  return `${withClause ? `WITH ${withClause} ` : ''}${selects.join(' UNION ALL ')}`;
}

function uniqueByPath(deletes: readonly DeleteFileRef[]): DeleteFileRef[] {
  const seen = new Set<string>();
  return deletes.filter((d) => !seen.has(d.file.file_path) && seen.add(d.file.file_path));
}

/** `read_parquet([...], schema=..., hive_partitioning=false` — callers append `)`. */
function readParquet(files: readonly string[], schemaMap: string): string {
  // Hive-style directories (`date=2024-01-01/`) must not add columns: partition values come from manifests.
  return `read_parquet([${files.map(quoteString).join(', ')}], schema=${schemaMap}, hive_partitioning=false`;
}

function schemaMapSql(columns: readonly Column[]): string {
  const entries = columns.map(
    (c) =>
      `${c.id}: {name: ${quoteString(c.name)}, type: ${quoteString(duckdbType(c.type))}, default_value: ${varcharLiteral(c.defaultText)}}`,
  );
  return `map{${entries.join(', ')}}`;
}

function checkFormat(path: string, format: string): void {
  if (format.toLowerCase() !== 'parquet') {
    throw new FloeError(
      ErrorKind.FeatureUnsupported,
      `file ${path}: ${format} files cannot be queried (Parquet only)`,
    );
  }
}

/** The plan's top-level columns for one data file, with defaults for ids the file may lack. */
function taskColumns(plan: ScanPlan, task: FileScanTask): Column[] {
  const spec = plan.specs.find((s) => s['spec-id'] === task.specId);
  return plan.schema.fields.map((f) => ({
    id: f.id,
    name: columnName(f.id),
    type: f.type,
    defaultText: missingValueText(f, spec, task.file.partition),
  }));
}

/** Spec §Column projection: identity partition value, then `initial-default`, then null. */
function missingValueText(
  f: NestedField,
  spec: PartitionSpec | undefined,
  partition: readonly unknown[],
): string | undefined {
  const i = spec?.fields.findIndex((p) => p['source-id'] === f.id && p.transform === 'identity') ?? -1;
  if (i >= 0) return valueToText(f.type, partition[i]);
  return f.initialDefault === undefined ? undefined : valueToText(f.type, f.initialDefault);
}

/**
 * Equality-delete columns dropped from the plan schema still apply: read them too (they are not
 * projected). Their ids are in no column of the plan schema, so their names cannot clash.
 */
function hiddenColumns(plan: ScanPlan, ids: readonly number[]): Column[] {
  return ids.map((id) => ({ id, name: columnName(id), type: fieldType(plan, id), defaultText: undefined }));
}

/** The internal name a data file's top-level column is read under. */
function columnName(id: number): string {
  return `c${id}`;
}

function dataColumnName(id: number): string {
  return quoteIdent(columnName(id));
}

function eqColumn(id: number): string {
  return quoteIdent(`f${id}`);
}

/** The data side of an equality column: `t."c3"."id"` for a field nested in structs. */
function dataColumn(fields: readonly NestedField[], id: number): string {
  const path = fieldPath(fields, id);
  if (!path) return `t.${dataColumnName(id)}`;
  return [`t.${dataColumnName(path[0]!.id)}`, ...path.slice(1).map((f) => quoteIdent(f.name))].join('.');
}

/** The fields from a top-level column down to field `id` through structs, if `fields` has it. */
function fieldPath(fields: readonly NestedField[], id: number): NestedField[] | undefined {
  for (const f of fields) {
    if (f.id === id) return [f];
    if (f.type.kind === 'struct') {
      const inner = fieldPath(f.type.fields, id);
      if (inner) return [f, ...inner];
    }
  }
  return undefined;
}

/** `f` with only the fields on the way to `ids` (an equality delete file holds just those). */
function pruned(f: NestedField, ids: ReadonlySet<number>): IcebergType {
  return pruneToIds([f], ids)[0]?.type ?? f.type;
}

/** Type of a top-level field id, from the plan schema first, then the newest other schema defining it. */
function fieldType(plan: ScanPlan, id: number): IcebergType {
  const schemas: Schema[] = [plan.schema, ...[...plan.schemas].sort((a, b) => b.schemaId - a.schemaId)];
  for (const s of schemas) {
    const f = s.fields.find((x) => x.id === id);
    if (f) return f.type;
  }
  throw new FloeError(
    ErrorKind.FeatureUnsupported,
    `equality delete on field id ${id}, which is not a top-level column of any schema`,
  );
}

/** The path of a field nested in structs (plan schema first, then newer schemas); undefined for top-level ones. */
function nestedPath(plan: ScanPlan, id: number): NestedField[] | undefined {
  const schemas: Schema[] = [plan.schema, ...[...plan.schemas].sort((a, b) => b.schemaId - a.schemaId)];
  for (const s of schemas) {
    const path = fieldPath(s.fields, id);
    if (path) return path.length > 1 ? path : undefined;
  }
  return undefined;
}

/** The CTE of every position delete row that applies to the data file it names. */
const POSITIONS = '__floe_pos';

/** Equality delete files on one id set, read by one CTE. */
interface DeleteSet {
  readonly name: string;
  /** Sorted, distinct equality ids. */
  readonly ids: readonly number[];
  /** Table URIs, in `read_parquet` order: a file's index is its `__del` value. */
  readonly files: string[];
}

/**
 * The delete CTEs: one per equality-id set, each row tagged with its file's index (`__del`), and
 * the `NOT EXISTS` conditions of a group of data files, restricted to the group's delete files;
 * one for position deletes, keeping the rows of a file only for the data files it applies to.
 */
class DeleteCtes {
  private readonly sets = new Map<string, DeleteSet>(); // sorted ids → set
  private readonly setOf = new Map<string, { set: DeleteSet; index: number }>(); // file URI → its set
  private readonly positionFiles = new Map<string, number>(); // position delete file URI → index
  /** (data file URI, index of a position delete file that applies to it). */
  private readonly positionPairs: [string, number][] = [];

  constructor(
    private readonly plan: ScanPlan,
    private readonly resolvePath: ResolvePath,
  ) {}

  /** Registers `d`, which applies to the data file `dataFile`. */
  add(d: DeleteFileRef, dataFile: string): void {
    const path = d.file.file_path;
    if (d.file.content === DataFileContent.POSITION_DELETES) {
      let index = this.positionFiles.get(path);
      if (index === undefined) {
        this.check(d);
        index = this.positionFiles.size;
        this.positionFiles.set(path, index);
      }
      this.positionPairs.push([dataFile, index]);
      return;
    }
    if (this.setOf.has(path)) return;
    this.check(d);
    if (d.file.content !== DataFileContent.EQUALITY_DELETES) {
      throw new FloeError(ErrorKind.DataInvalid, `file ${path} is listed as a delete file but holds data`);
    }
    const ids = [...new Set(d.file.equality_ids ?? [])].sort((a, b) => a - b);
    if (ids.length === 0) {
      throw new FloeError(ErrorKind.DataInvalid, `equality delete file ${path} has no equality_ids`);
    }
    const key = ids.join(',');
    let set = this.sets.get(key);
    if (!set) {
      set = { name: `__floe_eq_${this.sets.size}`, ids, files: [] };
      this.sets.set(key, set);
    }
    this.setOf.set(path, { set, index: set.files.length });
    set.files.push(path);
  }

  /** `NOT EXISTS` conditions applying the equality deletes among `deletes` (each `add`ed) to rows `t`. */
  equalityConditions(deletes: readonly DeleteFileRef[], fields: readonly NestedField[]): string[] {
    const bySet = new Map<DeleteSet, number[]>();
    for (const d of deletes) {
      const entry = this.setOf.get(d.file.file_path);
      if (!entry) continue; // a position delete file
      const indexes = bySet.get(entry.set);
      if (indexes) indexes.push(entry.index);
      else bySet.set(entry.set, [entry.index]);
    }
    return [...bySet].map(([set, indexes]) => {
      const on = set.ids.map((id) => `d.${eqColumn(id)} IS NOT DISTINCT FROM ${dataColumn(fields, id)}`);
      // Restricted to these delete files unless they are all of the set's.
      if (indexes.length < set.files.length) {
        on.unshift(`d.__del IN (${indexes.sort((x, y) => x - y).join(', ')})`);
      }
      return `NOT EXISTS (SELECT 1 FROM ${set.name} AS d WHERE ${on.join(' AND ')})`;
    });
  }

  sql(): string {
    const ctes = [...this.sets.values()].map((s) => `${s.name} AS (${this.equalityBody(s)})`);
    if (this.positionFiles.size > 0) ctes.push(`${POSITIONS} AS (${this.positionBody()})`);
    return ctes.join(', ');
  }

  private check(d: DeleteFileRef): void {
    const path = d.file.file_path;
    if (d.file.file_format.toLowerCase() === 'puffin') {
      throw new FloeError(ErrorKind.FeatureUnsupported, `deletion vector ${path} cannot be queried yet`);
    }
    checkFormat(path, d.file.file_format);
  }

  /**
   * The rows of every position delete file, each kept only when its file applies to the data file
   * it names (a position delete file may name files of another partition or newer ones: scan
   * planning decides which data files it applies to).
   */
  private positionBody(): string {
    const files = [...this.positionFiles.keys()].map(this.resolvePath);
    const columns: Column[] = [
      { id: POS_FILE_PATH_ID, name: 'file_path', type: { kind: 'string' }, defaultText: undefined },
      { id: POS_POS_ID, name: 'pos', type: { kind: 'long' }, defaultText: undefined },
    ];
    const read = `SELECT file_index AS __del, file_path, pos FROM ${readParquet(files, schemaMapSql(columns))})`;
    const pairs = this.positionPairs.map(([uri, index]) => `(${quoteString(uri)}, ${index})`);
    return (
      `SELECT d.file_path, d.pos FROM (${read}) AS d JOIN (VALUES ${pairs.join(', ')}) AS a(file_path, __del) ` +
      'ON d.file_path = a.file_path AND d.__del = a.__del'
    );
  }

  private equalityBody(set: DeleteSet): string {
    const files = set.files.map(this.resolvePath);
    // Read each equality column's top-level column (a struct pruned to the key fields in it), then
    // project the key fields flat, as `f<id>`.
    const ids = set.ids;
    const wanted = new Set(ids);
    const tops = new Map<number, Column>();
    const select = ids.map((id) => {
      const path = nestedPath(this.plan, id);
      if (!path) return `${eqColumn(id)}`;
      const top = path[0]!;
      tops.set(top.id, { id: top.id, name: `f${top.id}`, type: pruned(top, wanted), defaultText: undefined });
      const rest = path.slice(1).map((x) => `.${quoteIdent(x.name)}`);
      return `${quoteIdent(`f${top.id}`)}${rest.join('')} AS ${eqColumn(id)}`;
    });
    const columns: Column[] = ids
      .filter((id) => !nestedPath(this.plan, id))
      .map((id) => ({ id, name: `f${id}`, type: fieldType(this.plan, id), defaultText: undefined }));
    columns.push(...tops.values());
    return `SELECT file_index AS __del, ${select.join(', ')} FROM ${readParquet(files, schemaMapSql(columns))})`;
  }
}

/** The table URI of a row's data file among `files` (read in this order by one `read_parquet`). */
function fileUri(files: readonly string[]): string {
  if (files.length === 1) return quoteString(files[0]!);
  return `[${files.map(quoteString).join(', ')}][file_index::BIGINT + 1]`;
}
