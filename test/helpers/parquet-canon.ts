/**
 * Comparing Floe rows with DuckDB reading the same Parquet file by field id: both sides are brought
 * to one canonical, JSON-safe form, keyed by field id (`f<id>`) so odd column names do not matter:
 * integers, decimals, times and timestamps as exact decimal strings, dates as `YYYY-MM-DD`,
 * floating point as numbers (NaN, ±0 kept), bytes as lower-case hex, maps as `{k, v}` lists.
 */
import { formatDate, formatDecimal } from '../../lambdas/src/iceberg/conversions.ts';
import type { IcebergType, NestedField } from '../../lambdas/src/iceberg/types.ts';
import type { IcebergValue, Row } from '../../lambdas/src/iceberg/values.ts';

type Canon = null | boolean | number | string | Canon[] | { [k: string]: Canon };

/** DuckDB's type for an Iceberg type (for `read_parquet(..., schema = map{...})`). */
export function duckType(t: IcebergType): string {
  switch (t.kind) {
    case 'struct':
      return `STRUCT(${t.fields.map((f) => `${ident(f.name)} ${duckType(f.type)}`).join(', ')})`;
    case 'list':
      return `${duckType(t.element)}[]`;
    case 'map':
      return `MAP(${duckType(t.key)}, ${duckType(t.value)})`;
    case 'decimal':
      return `DECIMAL(${t.precision},${t.scale})`;
    default: {
      const d = DUCK_PRIMITIVES[t.kind];
      if (d === undefined) throw new Error(`parquet-canon: no DuckDB type for ${t.kind}`);
      return d;
    }
  }
}

const DUCK_PRIMITIVES: Record<string, string> = {
  boolean: 'BOOLEAN',
  int: 'INTEGER',
  long: 'BIGINT',
  float: 'FLOAT',
  double: 'DOUBLE',
  date: 'DATE',
  time: 'TIME',
  timestamp: 'TIMESTAMP',
  timestamptz: 'TIMESTAMPTZ',
  timestamp_ns: 'TIMESTAMP_NS',
  timestamptz_ns: 'TIMESTAMP_NS',
  string: 'VARCHAR',
  uuid: 'UUID',
  fixed: 'BLOB',
  binary: 'BLOB',
};

function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/**
 * SQL literal for a constant (identity partition value), as VARCHAR: every `default_value` in one
 * schema map must have the same type, and DuckDB casts the text to the column's type.
 */
export function sqlLiteral(v: IcebergValue, t: IcebergType): string {
  if (v === null || v === undefined) return 'NULL';
  switch (t.kind) {
    case 'date':
      return `${sqlString(formatDate(v as number))}::VARCHAR`;
    case 'string':
      return `${sqlString(v as string)}::VARCHAR`;
    case 'int':
    case 'long':
      return `${sqlString(String(v))}::VARCHAR`;
    default:
      throw new Error(`parquet-canon: no SQL literal for ${t.kind}`);
  }
}

/** A DuckDB expression turning `ref` (of Iceberg type `t`) into its canonical JSON value. */
function canonSql(ref: string, t: IcebergType, depth: number): string {
  switch (t.kind) {
    case 'struct': {
      const fields = t.fields.map((f) => `f${f.id} := ${canonSql(`${ref}.${ident(f.name)}`, f.type, depth)}`);
      return `CASE WHEN ${ref} IS NULL THEN NULL ELSE struct_pack(${fields.join(', ')}) END`;
    }
    case 'list': {
      const x = `x${depth}`;
      return `list_transform(${ref}, lambda ${x}: ${canonSql(x, t.element, depth + 1)})`;
    }
    case 'map': {
      const e = `e${depth}`;
      const k = canonSql(`${e}.key`, t.key, depth + 1);
      const v = canonSql(`${e}.value`, t.value, depth + 1);
      return `CASE WHEN ${ref} IS NULL THEN NULL ELSE list_transform(map_entries(${ref}), lambda ${e}: struct_pack(k := ${k}, v := ${v})) END`;
    }
    case 'boolean':
    case 'string':
      return ref;
    case 'float':
    case 'double':
      return `${ref}::DOUBLE::VARCHAR`;
    case 'date':
    case 'int':
    case 'long':
    case 'decimal':
    case 'uuid':
      return `${ref}::VARCHAR`;
    case 'time':
      return `epoch_us(DATE '1970-01-01' + ${ref})::VARCHAR`;
    case 'timestamp':
    case 'timestamptz':
      return `epoch_us(${ref})::VARCHAR`;
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return `epoch_ns(${ref})::VARCHAR`;
    case 'fixed':
    case 'binary':
      return `lower(hex(${ref}))`;
    case 'unknown':
      return 'NULL';
  }
}

/**
 * SQL reading `path` with DuckDB by field id (top-level columns) as canonical rows, one JSON text
 * per row in column `j`; `constants` become the default values of columns the file lacks.
 */
export function duckCanonicalSql(
  path: string,
  fields: readonly NestedField[],
  constants: ReadonlyMap<number, IcebergValue> = new Map(),
): string {
  const map = fields.map(
    (f) =>
      `${f.id}: {name: 'c${f.id}', type: ${sqlString(duckType(f.type))}, default_value: ${sqlLiteral(constants.get(f.id) ?? null, f.type)}}`,
  );
  const row = fields.map((f) => `f${f.id} := ${canonSql(`c${f.id}`, f.type, 0)}`);
  return `SELECT to_json(struct_pack(${row.join(', ')}))::VARCHAR AS j FROM read_parquet(${sqlString(path)}, schema = map{${map.join(', ')}}, hive_partitioning = false)`;
}

/** DuckDB's canonical JSON text of a row, with floating-point text turned into numbers. */
export function fromDuckJson(text: string, fields: readonly NestedField[]): Canon {
  return structFromDuck(JSON.parse(text) as Record<string, unknown>, fields);
}

function structFromDuck(o: Record<string, unknown>, fields: readonly NestedField[]): Canon {
  const out: { [k: string]: Canon } = {};
  for (const f of fields) out[`f${f.id}`] = fromDuck(o[`f${f.id}`], f.type);
  return out;
}

function fromDuck(v: unknown, t: IcebergType): Canon {
  if (v === null || v === undefined) return null;
  switch (t.kind) {
    case 'struct':
      return structFromDuck(v as Record<string, unknown>, t.fields);
    case 'list':
      return (v as unknown[]).map((e) => fromDuck(e, t.element));
    case 'map':
      return (v as { k: unknown; v: unknown }[]).map((e) => ({
        k: fromDuck(e.k, t.key),
        v: fromDuck(e.v, t.value),
      }));
    case 'float':
    case 'double': {
      const s = v as string;
      if (s === 'inf') return Number.POSITIVE_INFINITY;
      if (s === '-inf') return Number.NEGATIVE_INFINITY;
      return s === 'nan' ? Number.NaN : Number(s);
    }
    default:
      return v as Canon;
  }
}

/** The canonical form of a Floe row read with `fields`. */
export function canonicalRow(row: Row, fields: readonly NestedField[]): Canon {
  const out: { [k: string]: Canon } = {};
  for (const f of fields)
    out[`f${f.id}`] = canonical(Object.hasOwn(row, f.name) ? row[f.name] : null, f.type);
  return out;
}

function canonical(v: IcebergValue, t: IcebergType): Canon {
  if (v === null || v === undefined) return null;
  switch (t.kind) {
    case 'struct':
      return canonicalRow(v as Row, t.fields);
    case 'list':
      return (v as readonly IcebergValue[]).map((e) => canonical(e, t.element));
    case 'map':
      return [...(v as ReadonlyMap<IcebergValue, IcebergValue>)].map(([k, x]) => ({
        k: canonical(k, t.key),
        v: canonical(x, t.value),
      }));
    case 'boolean':
    case 'string':
    case 'uuid':
    case 'float':
    case 'double':
      return v as Canon;
    case 'decimal':
      return formatDecimal(v as bigint, t.scale);
    case 'date':
      return formatDate(v as number);
    case 'fixed':
    case 'binary':
      return Buffer.from(v as Uint8Array).toString('hex');
    default:
      return String(v);
  }
}
