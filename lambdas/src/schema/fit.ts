/**
 * Fitting an inferred type to a table's existing columns. JSON has no decimals, no 32-bit ints and
 * no zone-less timestamps, so inference alone would call a decimal column "double" and a string
 * column holding ISO dates "timestamptz" and then fail to evolve the table. Where the converter
 * can fill the existing column from the inferred kind of JSON value, the existing type wins and
 * each value is checked on conversion instead (a value that does not fit is dead-lettered then).
 */
import type { IcebergType, NestedField, StructType } from '../iceberg/types.ts';

/** Existing column kind → inferred kinds whose JSON values the converter can turn into it. */
const FILLABLE: Readonly<Record<string, ReadonlySet<string>>> = {
  int: new Set(['long']),
  long: new Set([]),
  float: new Set(['double', 'long']),
  double: new Set(['long']),
  decimal: new Set(['long', 'double']),
  string: new Set(['timestamptz', 'date', 'timestamp']),
  timestamp: new Set(['timestamptz']),
  timestamp_ns: new Set(['timestamptz', 'timestamp']),
  timestamptz_ns: new Set(['timestamptz']),
};

/** `incoming` with each type replaced by the existing column's type where that one can hold it. */
export function fitToExisting(existing: StructType, incoming: StructType): StructType {
  let changed = false;
  const byName = new Map(existing.fields.map((f) => [f.name, f]));
  const fields = incoming.fields.map((f): NestedField => {
    const e = byName.get(f.name);
    if (!e) return f;
    const t = fitType(e.type, f.type);
    if (t === f.type) return f;
    changed = true;
    return { ...f, type: t };
  });
  return changed ? { kind: 'struct', fields } : incoming;
}

function fitType(existing: IcebergType, incoming: IcebergType): IcebergType {
  if (existing.kind === 'struct' && incoming.kind === 'struct') return fitToExisting(existing, incoming);
  if (existing.kind === 'list' && incoming.kind === 'list') {
    const element = fitType(existing.element, incoming.element);
    return element === incoming.element ? incoming : { ...incoming, element };
  }
  if (existing.kind === 'map' && incoming.kind === 'map') {
    const value = fitType(existing.value, incoming.value);
    return value === incoming.value ? incoming : { ...incoming, value };
  }
  return FILLABLE[existing.kind]?.has(incoming.kind) ? existing : incoming;
}
