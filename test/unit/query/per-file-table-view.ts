/**
 * The per-file table view of lambdas/src/query/table-view.ts before data files were grouped (kept
 * verbatim as a test oracle): one SELECT per data file with deletes, one `NOT EXISTS` per applicable
 * delete file. table-view-deletes.test.ts checks the grouped view returns exactly its rows.
 *
 * Columns are read by Parquet field id (`read_parquet(..., schema=map{id: {name, type, default_value}})`),
 * so renames, reorders, added columns and sanitised Parquet names resolve as the spec requires. A field id
 * missing from a file takes its identity-partition value, else its `initial-default`, else NULL (name
 * mapping for id-less files is not supported).
 */
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';
import { DataFileContent } from '../../../lambdas/src/iceberg/manifest/types.ts';
import type { PartitionSpec } from '../../../lambdas/src/iceberg/partition-spec.ts';
import type { DeleteFileRef, FileScanTask, ScanPlan } from '../../../lambdas/src/iceberg/scan.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import type { IcebergType, NestedField } from '../../../lambdas/src/iceberg/types.ts';
import {
  duckdbType,
  quoteIdent,
  quoteString,
  valueToText,
  varcharLiteral,
} from '../../../lambdas/src/query/sql.ts';

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

/**
 * A SELECT producing the rows of `plan` with the plan schema's top-level columns (current names and
 * Iceberg → DuckDB types), after applying position and equality deletes.
 */
export function perFileTableViewSql(plan: ScanPlan, resolvePath: ResolvePath): string {
  const fields = plan.schema.fields;
  if (fields.length === 0)
    throw new FloeError(ErrorKind.FeatureUnsupported, 'cannot query a table with no columns');
  const projection = fields.map((f) => quoteIdent(f.name)).join(', ');
  if (plan.tasks.length === 0) {
    return `SELECT ${fields.map((f) => `CAST(NULL AS ${duckdbType(f.type)}) AS ${quoteIdent(f.name)}`).join(', ')} LIMIT 0`;
  }

  const ctes = new DeleteCtes(plan, resolvePath);
  const grouped = new Map<string, string[]>(); // read_parquet schema map → files without deletes
  const selects: string[] = [];
  for (const task of plan.tasks) {
    checkFormat(task.file.file_path, task.file.file_format);
    const eqDeletes = task.deletes.filter((d) => d.file.content === DataFileContent.EQUALITY_DELETES);
    const posDeletes = task.deletes.filter((d) => d.file.content === DataFileContent.POSITION_DELETES);
    const hidden = eqDeletes
      .flatMap((d) => d.file.equality_ids ?? [])
      .filter((id) => fieldPath(fields, id) === undefined);
    const columns = [...taskColumns(plan, task), ...hiddenColumns(plan, [...new Set(hidden)])];
    const schemaMap = schemaMapSql(columns);
    if (task.deletes.length === 0) {
      const files = grouped.get(schemaMap);
      if (files) files.push(resolvePath(task.file.file_path));
      else grouped.set(schemaMap, [resolvePath(task.file.file_path)]);
      continue;
    }
    const conditions = [
      ...posDeletes.map(
        (d) =>
          `NOT EXISTS (SELECT 1 FROM ${ctes.name(d)} AS d WHERE d.file_path = ${quoteString(task.file.file_path)} AND d.pos = t.file_row_number)`,
      ),
      ...eqDeletes.map((d) => {
        const ids = d.file.equality_ids ?? [];
        const on = ids
          .map((id) => `d.${eqColumn(id)} IS NOT DISTINCT FROM t.${dataColumn(fields, id)}`)
          .join(' AND ');
        return `NOT EXISTS (SELECT 1 FROM ${ctes.name(d)} AS d WHERE ${on})`;
      }),
    ];
    const rowNumber = posDeletes.length > 0 ? ', file_row_number=true' : '';
    selects.push(
      `SELECT ${projection} FROM ${readParquet([resolvePath(task.file.file_path)], schemaMap)}${rowNumber}) AS t WHERE ${conditions.join(' AND ')}`,
    );
  }
  for (const [schemaMap, files] of grouped) {
    selects.unshift(`SELECT ${projection} FROM ${readParquet(files, schemaMap)})`);
  }
  const withClause = ctes.sql();
  return `${withClause ? `WITH ${withClause} ` : ''}${selects.join(' UNION ALL ')}`;
}

/** `read_parquet([...], schema=..., hive_partitioning=false` — callers append options and `)`. */
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
    name: f.name,
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

/** Equality-delete columns dropped from the plan schema still apply: read them under reserved names. */
function hiddenColumns(plan: ScanPlan, ids: readonly number[]): Column[] {
  return ids.map((id) => ({ id, name: hiddenName(id), type: fieldType(plan, id), defaultText: undefined }));
}

function hiddenName(id: number): string {
  return `__floe_eq_${id}`;
}

function eqColumn(id: number): string {
  return quoteIdent(`f${id}`);
}

/** The data side of an equality column: `"customer"."id"` for a field nested in structs. */
function dataColumn(fields: readonly NestedField[], id: number): string {
  const path = fieldPath(fields, id);
  return path ? path.map((f) => quoteIdent(f.name)).join('.') : quoteIdent(hiddenName(id));
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
  if (ids.has(f.id) || f.type.kind !== 'struct') return f.type;
  const kept = f.type.fields.filter((c) => ids.has(c.id) || fieldPathIds(c).some((x) => ids.has(x)));
  return { kind: 'struct', fields: kept.map((c) => ({ ...c, type: pruned(c, ids) })) };
}

function fieldPathIds(f: NestedField): number[] {
  return f.type.kind === 'struct' ? f.type.fields.flatMap((c) => [c.id, ...fieldPathIds(c)]) : [];
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

/** One CTE per delete file, shared by every data file it applies to. */
class DeleteCtes {
  private readonly names = new Map<string, string>();
  private readonly bodies: string[] = [];

  constructor(
    private readonly plan: ScanPlan,
    private readonly resolvePath: ResolvePath,
  ) {}

  name(d: DeleteFileRef): string {
    const existing = this.names.get(d.file.file_path);
    if (existing) return existing;
    const name = `__floe_del_${this.names.size}`;
    this.names.set(d.file.file_path, name);
    this.bodies.push(`${name} AS (${this.body(d)})`);
    return name;
  }

  sql(): string {
    return this.bodies.join(', ');
  }

  private body(d: DeleteFileRef): string {
    const path = d.file.file_path;
    if (d.file.file_format.toLowerCase() === 'puffin') {
      throw new FloeError(ErrorKind.FeatureUnsupported, `deletion vector ${path} cannot be queried yet`);
    }
    checkFormat(path, d.file.file_format);
    const file = [this.resolvePath(path)];
    if (d.file.content === DataFileContent.POSITION_DELETES) {
      const columns: Column[] = [
        { id: POS_FILE_PATH_ID, name: 'file_path', type: { kind: 'string' }, defaultText: undefined },
        { id: POS_POS_ID, name: 'pos', type: { kind: 'long' }, defaultText: undefined },
      ];
      return `SELECT file_path, pos FROM ${readParquet(file, schemaMapSql(columns))})`;
    }
    const ids = d.file.equality_ids ?? [];
    if (ids.length === 0) {
      throw new FloeError(ErrorKind.DataInvalid, `equality delete file ${path} has no equality_ids`);
    }
    // Read each equality column's top-level column (a struct pruned to the key fields in it), then
    // project the key fields flat, as `f<id>`.
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
    return `SELECT ${select.join(', ')} FROM ${readParquet(file, schemaMapSql(columns))})`;
  }
}
