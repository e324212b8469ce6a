/**
 * Fitting an incoming type to a table's existing columns.
 *
 * Inferred types (JSON): JSON has no decimals, no 32-bit ints, no float32 and no zone-less
 * timestamps, so inference alone would call a decimal column "double" and a string column holding
 * ISO dates "timestamptz" and then fail to evolve the table. Where the converter can fill the
 * existing column from the inferred kind of JSON value, the existing type wins and each value is
 * checked on conversion instead — unless the batch's values (or a hint) need a wider type that the
 * spec lets the column be promoted to (`int → long`, `float → double`, `decimal(P,S) →
 * decimal(P',S)`): `needs` names it (see promote.ts), and the column is promoted.
 *
 * Declared types (Avro writer schemas) are exact: the row values already have the writer's types,
 * so only a type whose values need no conversion is fitted; a wider declared type promotes the
 * column (unionByName decides) and a narrower one is held by the wider column.
 */
import { canPromote } from '../iceberg/schema-evolution.ts';
import {
  type IcebergType,
  type NestedField,
  type PrimitiveType,
  primitiveToString,
  type StructType,
} from '../iceberg/types.ts';

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

/** Existing column kind → declared kinds whose row values it holds as they are (µs stay µs). */
const DECLARED_FILLABLE: Readonly<Record<string, ReadonlySet<string>>> = {
  timestamp: new Set(['timestamptz']),
};

/** Existing column kinds whose width the values decide (the promotable ones). */
const VALUE_DECIDED: ReadonlySet<string> = new Set(['int', 'float', 'decimal']);

/** By dotted column path (`amount`, `payload.qty`, `items.element`): the wider type a column must become. */
export type ColumnNeeds = ReadonlyMap<string, PrimitiveType>;

export interface FitOptions {
  /** Promotions the batch's values (or hints) need, from {@link columnNeeds}. */
  readonly needs?: ColumnNeeds;
  /** The incoming types are declared by a writer schema (Avro), not inferred from JSON values. */
  readonly declared?: boolean;
}

const NO_NEEDS: ColumnNeeds = new Map();

/** True when `to` is a different type that a `from` column may be promoted to. */
export function isWiderPromotion(from: PrimitiveType, to: PrimitiveType): boolean {
  // Format version 2: data drives only v1 promotions; v3-only ones (date → timestamp) come from
  // hints, which are not fitted (unionByName judges them against the table's version).
  return primitiveToString(from) !== primitiveToString(to) && canPromote(from, to, 2);
}

/** `incoming` with each type replaced by the existing column's type where that one can hold it. */
export function fitToExisting(
  existing: StructType,
  incoming: StructType,
  options: FitOptions = {},
): StructType {
  const ctx: FitCtx = { needs: options.needs ?? NO_NEEDS, declared: options.declared === true };
  return fitStruct(existing, incoming, '', ctx);
}

interface FitCtx {
  readonly needs: ColumnNeeds;
  readonly declared: boolean;
}

function fitStruct(existing: StructType, incoming: StructType, path: string, ctx: FitCtx): StructType {
  let changed = false;
  const byName = new Map(existing.fields.map((f) => [f.name, f]));
  const fields = incoming.fields.map((f): NestedField => {
    const e = byName.get(f.name);
    if (!e) return f;
    const t = fitType(e.type, f.type, join(path, f.name), ctx);
    if (t === f.type) return f;
    changed = true;
    return { ...f, type: t };
  });
  return changed ? { kind: 'struct', fields } : incoming;
}

function fitType(existing: IcebergType, incoming: IcebergType, path: string, ctx: FitCtx): IcebergType {
  if (existing.kind === 'struct' && incoming.kind === 'struct')
    return fitStruct(existing, incoming, path, ctx);
  if (existing.kind === 'list' && incoming.kind === 'list') {
    const element = fitType(existing.element, incoming.element, `${path}.element`, ctx);
    return element === incoming.element ? incoming : { ...incoming, element };
  }
  if (existing.kind === 'map' && incoming.kind === 'map') {
    const value = fitType(existing.value, incoming.value, `${path}.value`, ctx);
    return value === incoming.value ? incoming : { ...incoming, value };
  }
  if (ctx.declared) return DECLARED_FILLABLE[existing.kind]?.has(incoming.kind) ? existing : incoming;
  if (!FILLABLE[existing.kind]?.has(incoming.kind)) return incoming;
  const need = ctx.needs.get(path);
  // `existing` is primitive here: FILLABLE has entries for primitive kinds only.
  return need !== undefined && isWiderPromotion(existing as PrimitiveType, need) ? need : existing;
}

/**
 * Columns whose width the batch's values decide: by dotted path, the existing `int`, `float` or
 * `decimal` type of each column the inferred type fills (a JSON integer for an `int` column, a
 * number for a `float` or `decimal` one). Only these can need a promotion driven by data.
 */
export function valueDecidedColumns(existing: StructType, incoming: StructType): Map<string, PrimitiveType> {
  const out = new Map<string, PrimitiveType>();
  collectDecided(existing, incoming, '', out);
  return out;
}

function collectDecided(
  existing: IcebergType,
  incoming: IcebergType,
  path: string,
  out: Map<string, PrimitiveType>,
): void {
  if (existing.kind === 'struct' && incoming.kind === 'struct') {
    const byName = new Map(existing.fields.map((f) => [f.name, f]));
    for (const f of incoming.fields) {
      const e = byName.get(f.name);
      if (e) collectDecided(e.type, f.type, join(path, f.name), out);
    }
  } else if (existing.kind === 'list' && incoming.kind === 'list') {
    collectDecided(existing.element, incoming.element, `${path}.element`, out);
  } else if (existing.kind === 'map' && incoming.kind === 'map') {
    collectDecided(existing.value, incoming.value, `${path}.value`, out);
  } else if (VALUE_DECIDED.has(existing.kind) && FILLABLE[existing.kind]?.has(incoming.kind)) {
    out.set(path, existing as PrimitiveType);
  }
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}
