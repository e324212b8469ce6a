/**
 * Rows built in JS (metadata tables) as DuckDB SQL literals. Each cell is already SQL text; the
 * table's declared column types make DuckDB cast `MAP {}`, `[]` and NULL. 64-bit values are written
 * as decimal text, so they stay exact.
 */
import { type IcebergType, isPrimitive } from '../iceberg/types.ts';
import { duckdbType, epochToIso, quoteIdent, quoteString, valueToText } from './sql.ts';

/** A column of an in-memory table: its name and DuckDB type. */
export interface SqlColumn {
  readonly name: string;
  readonly type: string;
}

/** Rows of SQL literals, one per column. */
export interface RowSet {
  readonly columns: readonly SqlColumn[];
  readonly rows: readonly (readonly string[])[];
}

export const NULL = 'NULL';

export function sqlBigint(v: bigint | number | undefined | null): string {
  return v === undefined || v === null ? NULL : BigInt(v).toString();
}

export function sqlText(v: string | undefined | null): string {
  return v === undefined || v === null ? NULL : quoteString(v);
}

export function sqlBool(v: boolean | undefined | null): string {
  return v === undefined || v === null ? NULL : v ? 'TRUE' : 'FALSE';
}

/** Epoch milliseconds as a TIMESTAMPTZ with an explicit UTC offset (whatever DuckDB's TimeZone). */
export function sqlTimestampMs(ms: bigint | undefined): string {
  return ms === undefined ? NULL : `TIMESTAMPTZ ${quoteString(`${epochToIso(ms * 1000n)}+00`)}`;
}

export function sqlBlob(b: Uint8Array | undefined): string {
  if (b === undefined) return NULL;
  const hex = [...b].map((x) => `\\x${x.toString(16).padStart(2, '0').toUpperCase()}`).join('');
  return `${quoteString(hex)}::BLOB`;
}

export function sqlList(items: readonly string[] | undefined): string {
  return items === undefined ? NULL : `[${items.join(', ')}]`;
}

/** `MAP {k: v, …}` from already-rendered keys and values. */
export function sqlMap(entries: Iterable<readonly [string, string]> | undefined): string {
  if (entries === undefined) return NULL;
  return `MAP {${[...entries].map(([k, v]) => `${k}: ${v}`).join(', ')}}`;
}

/** `{'name': value, …}`; callers never build an empty struct (DuckDB has none). */
export function sqlStruct(fields: readonly (readonly [string, string])[]): string {
  return `{${fields.map(([k, v]) => `${quoteString(k)}: ${v}`).join(', ')}}`;
}

/** `STRUCT("name" TYPE, …)` type text. */
export function structType(fields: readonly SqlColumn[]): string {
  return `STRUCT(${fields.map((f) => `${quoteIdent(f.name)} ${f.type}`).join(', ')})`;
}

/** An Iceberg value (values.ts form) of primitive type `t` as a typed DuckDB literal. */
export function sqlValue(t: IcebergType, v: unknown): string {
  if (!isPrimitive(t)) return NULL;
  const text = valueToText(t, v);
  return text === undefined ? NULL : `CAST(${quoteString(text)} AS ${duckdbType(t)})`;
}
