/**
 * Two readers we did not write, brought to the model's canonical values (model.ts):
 *
 * - DuckDB `read_parquet` with a field-id schema map (columns found by Parquet field id, as an
 *   Iceberg reader must), the row turned into JSON inside DuckDB with timestamps as epoch micros;
 * - hyparquet, top-level columns matched by the field ids in each file's footer.
 *
 * Both read exactly the live data files of the table's current snapshot (an independent manifest
 * walk, test/helpers/e2e.ts) — no Floe query planning in between.
 */
import { readFileSync } from 'node:fs';
import { parquetMetadata, parquetRead } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import type { Duck } from '../helpers/e2e.ts';
import { sqlString } from '../helpers/e2e.ts';
import { bare, type Canon, type FieldJson, type TypeJson } from './model.ts';

// ---------------------------------------------------------------------------------------------
// DuckDB

function duckType(t: TypeJson): string {
  if (typeof t === 'string') {
    const simple: Record<string, string> = {
      boolean: 'BOOLEAN',
      int: 'INTEGER',
      long: 'BIGINT',
      float: 'FLOAT',
      double: 'DOUBLE',
      date: 'DATE',
      timestamptz: 'TIMESTAMPTZ',
      timestamp: 'TIMESTAMP',
      string: 'VARCHAR',
      binary: 'BLOB',
    };
    const d = simple[t] ?? (/^decimal\((\d+),\s*(\d+)\)$/.test(t) ? t.toUpperCase() : undefined);
    if (d === undefined) throw new Error(`reader: no DuckDB type for ${t}`);
    return d;
  }
  if (t.type === 'struct')
    return `STRUCT(${t.fields.map((f) => `${ident(f.name)} ${duckType(f.type)}`).join(', ')})`;
  if (t.type === 'list') return `${duckType(t.element)}[]`;
  return `MAP(${duckType(t.key)}, ${duckType(t.value)})`;
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A DuckDB expression turning `ref` (of type `t`) into what to_json writes canonically. */
function canonExpr(ref: string, t: TypeJson, depth: number): string {
  if (typeof t === 'string') {
    if (t === 'timestamptz' || t === 'timestamp') return `epoch_us(${ref})`;
    if (t === 'date') return `CAST(${ref} AS VARCHAR)`;
    return ref;
  }
  if (t.type === 'struct') {
    const fields = t.fields.map(
      (f) => `${ident(f.name)} := ${canonExpr(`${ref}.${ident(f.name)}`, f.type, depth)}`,
    );
    return `CASE WHEN ${ref} IS NULL THEN NULL ELSE struct_pack(${fields.join(', ')}) END`;
  }
  if (t.type === 'list') {
    const x = `x${depth}`;
    return `list_transform(${ref}, lambda ${x}: ${canonExpr(x, t.element, depth + 1)})`;
  }
  return ref;
}

/** Rows of the files (by Parquet field id) as canonical values keyed by column name. */
export async function readWithDuckDB(
  duck: Duck,
  paths: readonly string[],
  fields: readonly FieldJson[],
): Promise<{ [k: string]: Canon }[]> {
  if (paths.length === 0) return [];
  const map = fields.map(
    (f) => `${f.id}: {name: 'f${f.id}', type: ${sqlString(duckType(f.type))}, default_value: NULL}`,
  );
  const row = fields.map((f) => `${ident(f.name)} := ${canonExpr(`f${f.id}`, f.type, 0)}`);
  const sql = `SELECT to_json(struct_pack(${row.join(', ')}))::VARCHAR AS j FROM read_parquet([${paths
    .map(sqlString)
    .join(', ')}], schema=map{${map.join(', ')}}, hive_partitioning=false)`;
  const rows = await duck.rows(sql);
  return rows.map((r) => fromJsonText(String(r.j), fields));
}

function fromJsonText(text: string, fields: readonly FieldJson[]): { [k: string]: Canon } {
  const v = parseLossless(text) as Record<string, unknown>;
  return structCanon(v, fields);
}

function structCanon(v: Record<string, unknown>, fields: readonly FieldJson[]): { [k: string]: Canon } {
  const out = bare<Canon>();
  for (const f of fields) out[f.name] = canon(Object.hasOwn(v, f.name) ? v[f.name] : null, f.type);
  return out;
}

/** A parsed JSON (or hyparquet) value as the model's canonical value for type `t`. */
function canon(v: unknown, t: TypeJson): Canon {
  if (v === null || v === undefined) return null;
  if (typeof t !== 'string') {
    if (t.type === 'struct') return structCanon(v as Record<string, unknown>, t.fields);
    if (t.type === 'list') return (v as unknown[]).map((e) => canon(e, t.element));
    throw new Error('reader: maps are not compared');
  }
  switch (t) {
    case 'long':
    case 'int':
    case 'timestamptz':
    case 'timestamp':
      return isLosslessNumber(v) ? BigInt(v.value) : BigInt(v as bigint | number);
    case 'double':
    case 'float':
      return isLosslessNumber(v) ? Number(v.value) : (v as number); // -0 stays -0
    default:
      return v as Canon;
  }
}

// ---------------------------------------------------------------------------------------------
// hyparquet

/**
 * Rows of the files, top-level columns matched by field id, as canonical values keyed by column
 * name. hyparquet assembles nested structs into plain objects, where a field named `__proto__`
 * is lost; `nestedProtoField` tells callers to skip the comparison for such schemas.
 */
export async function readWithHyparquet(
  paths: readonly string[],
  fields: readonly FieldJson[],
): Promise<{ [k: string]: Canon }[]> {
  const out: { [k: string]: Canon }[] = [];
  for (const p of paths) {
    const bytes = readFileSync(p);
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const meta = parquetMetadata(file);
    // Top-level schema elements (direct children of the root) with their field ids.
    const names: string[] = [];
    const indexById = new Map<number, number>();
    let i = 1;
    const skip = (): void => {
      const el = meta.schema[i++]!;
      for (let c = 0; c < (el.num_children ?? 0); c++) skip();
    };
    const rootChildren = meta.schema[0]!.num_children ?? 0;
    for (let c = 0; c < rootChildren; c++) {
      const el = meta.schema[i]!;
      if (el.field_id !== undefined) indexById.set(el.field_id, names.length);
      names.push(el.name);
      skip();
    }
    // Rows as arrays: a top-level column named `__proto__` must stay data.
    let rows: unknown[][] = [];
    await parquetRead({
      file,
      metadata: meta,
      columns: names,
      compressors,
      parsers: {
        timestampFromMicroseconds: (us: bigint) => us,
        dateFromDays: (d: number) => isoDate(d),
      },
      onComplete: (r: unknown[][]) => {
        rows = r;
      },
    });
    for (const r of rows) {
      const row = bare<Canon>();
      for (const f of fields) {
        const at = indexById.get(f.id);
        row[f.name] = at === undefined ? null : canon(r[at], f.type);
      }
      out.push(row);
    }
  }
  return out;
}

function isoDate(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

/** Whether a struct below the top level has a field named `__proto__` (hyparquet cannot keep it). */
export function nestedProtoField(fields: readonly FieldJson[]): boolean {
  const inType = (t: TypeJson): boolean =>
    typeof t !== 'string' &&
    (t.type === 'struct'
      ? t.fields.some((f) => f.name === '__proto__' || inType(f.type))
      : t.type === 'list'
        ? inType(t.element)
        : inType(t.key) || inType(t.value));
  return fields.some((f) => inType(f.type));
}
