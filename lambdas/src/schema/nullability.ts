/**
 * Nullability the records' own schema declares (a Kafka Connect field with `optional: false`,
 * records/connect-schema.ts). Inference leaves every field optional, since any later event may
 * omit it. A declared-required column is made required in a batch's type when the batch keeps to
 * the declaration: every row that writes data has a value for it (a struct's child: every row
 * whose struct is non-null). Data that breaks its own declaration relaxes the column instead of
 * failing (the evolution rules then make it optional), so no record is refused for it.
 *
 * Rows that only delete (upsert tables: the key alone) judge nothing. A batch with no row to
 * judge a column by (only deletes, or its struct always null) keeps it as the table has it:
 * required stays required, and a new table has it optional. Only struct fields: list elements
 * and map values stay optional. Pure.
 */
import type { NestedField, StructType } from '../iceberg/types.ts';
import type { JsonObject, JsonValue } from '../records/json-line.ts';
import { isJsonObject } from '../records/json-line.ts';
import { columnNameOf } from './column-name.ts';

/**
 * `type` (the batch's inferred type, fitted to `table` when the table exists) with the columns
 * `declared` (dotted column paths) made required where `rows` (the rows that write data, as the
 * records hold them) keep to it.
 */
export function declaredNullability(
  type: StructType,
  table: StructType | undefined,
  rows: readonly JsonObject[],
  declared: ReadonlySet<string>,
): StructType {
  if (declared.size === 0) return type;
  const parents = new Set<string>();
  for (const p of declared) {
    for (let i = p.indexOf('.'); i >= 0; i = p.indexOf('.', i + 1)) parents.add(p.slice(0, i));
  }
  return requireAt(type, table, rows, '', declared, parents);
}

function requireAt(
  type: StructType,
  table: StructType | undefined,
  values: readonly JsonObject[],
  prefix: string,
  declared: ReadonlySet<string>,
  parents: ReadonlySet<string>,
): StructType {
  // Each object's values by column name (a key such as `UserId` is the column `userid`).
  const columns = values.map(columnsOf);
  let changed = false;
  const pathOf = (name: string) => (prefix === '' ? name : `${prefix}.${name}`);
  const fields: NestedField[] = type.fields.map((f) => {
    const p = pathOf(f.name);
    const nested = f.type.kind === 'struct' && parents.has(p);
    if (!nested && !declared.has(p)) return f;
    let present = 0;
    const children: JsonObject[] = [];
    for (const c of columns) {
      const v = c.get(f.name);
      if (v === undefined || v === null) continue;
      present++;
      if (nested && isJsonObject(v)) children.push(v);
    }
    const existing = table?.fields.find((t) => t.name === f.name);
    let t = f.type;
    if (nested && t.kind === 'struct') {
      t = requireAt(
        t,
        existing?.type.kind === 'struct' ? existing.type : undefined,
        children,
        p,
        declared,
        parents,
      );
    }
    const required =
      declared.has(p) && (values.length > 0 ? present === values.length : existing?.required === true);
    if (t === f.type && required === f.required) return f;
    changed = true;
    return { ...f, required, type: t };
  });
  if (values.length === 0 && table) {
    // No row to judge by: a required column the batch does not name stays as the table has it.
    const named = new Set(type.fields.map((f) => f.name));
    for (const e of table.fields) {
      if (e.required && !named.has(e.name) && declared.has(pathOf(e.name))) {
        fields.push(e);
        changed = true;
      }
    }
  }
  return changed ? { ...type, fields } : type;
}

function columnsOf(o: JsonObject): Map<string, JsonValue> {
  const m = new Map<string, JsonValue>();
  for (const k of Object.keys(o)) {
    const c = columnNameOf(k);
    if (c !== undefined && !m.has(c)) m.set(c, o[k]!);
  }
  return m;
}
