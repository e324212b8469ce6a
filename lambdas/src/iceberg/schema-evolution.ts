/**
 * Schema evolution (spec: "Schema Evolution", "Column Projection"): type promotion, fresh field
 * ids, and the additive by-name union Floe applies when events carry new fields.
 *
 * Rules (facts doc §3.2–3.3, Java `UnionByNameVisitor` / `TypeUtil`):
 * - new fields get fresh ids above `last-column-id`, nested children included, and are optional;
 * - existing fields are never dropped, renamed or moved; a required field that incoming data lacks
 *   (or carries as optional) becomes optional;
 * - allowed promotions are applied; incoming values of a narrower type that the existing column
 *   can hold (int data for a long column) leave the column unchanged, as Java's union does;
 * - a promotion is refused for a partition source whose transform would give other results for
 *   the same values (spec: only `date → timestamp` can, under `identity` or `bucket`);
 * - anything else (string vs long, struct vs primitive, decimal scale change) is rejected.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import type { PartitionSpec } from './partition-spec.ts';
import { highestFieldId, type Schema, schemaStruct } from './schema.ts';
import {
  type IcebergType,
  isPrimitive,
  type NestedField,
  type PrimitiveType,
  primitiveToString,
  type StructType,
  typeEquals,
  typeToString,
} from './types.ts';

// ---- promotion ----

/**
 * Whether a column of type `from` may be changed to `to` (spec "Schema Evolution" promotion
 * table). Identical types count as allowed. `date → timestamp(_ns)` and `unknown → any` are v3.
 */
export function canPromote(from: PrimitiveType, to: PrimitiveType, formatVersion: number): boolean {
  if (primitiveToString(from) === primitiveToString(to)) return true;
  switch (from.kind) {
    case 'int':
      return to.kind === 'long';
    case 'float':
      return to.kind === 'double';
    case 'decimal':
      // Scale is fixed; precision may only widen.
      return to.kind === 'decimal' && to.scale === from.scale && to.precision >= from.precision;
    case 'date':
      // Not to timestamptz*: a date has no zone to adjust from.
      return formatVersion >= 3 && (to.kind === 'timestamp' || to.kind === 'timestamp_ns');
    case 'unknown':
      return formatVersion >= 3;
    default:
      return false;
  }
}

/**
 * Whether promoting a partition source column `from → to` changes what `transform` gives for the
 * same value, which the spec forbids (old partition values would no longer match their rows).
 * `int → long`, `float → double` and decimal precision never do: identity keeps the value, bucket
 * hashes ints as longs and decimals by their unscaled bytes, truncate works on the same integer or
 * unscaled value. `date → timestamp(_ns)` keeps year / month / day, but not identity or bucket.
 */
export function promotionChangesTransform(
  from: PrimitiveType,
  to: PrimitiveType,
  transform: string,
): boolean {
  if (from.kind !== 'date' || to.kind === 'date') return false;
  return !['year', 'month', 'day', 'void'].includes(transform);
}

/** Partition source field id → the transforms applied to it, across all of a table's specs. */
export function partitionSourceTransforms(specs: readonly PartitionSpec[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const spec of specs) {
    for (const f of spec.fields) {
      const list = out.get(f['source-id']);
      if (list === undefined) out.set(f['source-id'], [f.transform]);
      else if (!list.includes(f.transform)) list.push(f.transform);
    }
  }
  return out;
}

const V3_ONLY: ReadonlySet<string> = new Set(['timestamp_ns', 'timestamptz_ns', 'unknown']);

/** Dotted path of the first field whose type needs format v3 (spec "Schemas and Data Types"). */
export function findV3OnlyType(t: IcebergType, path: readonly string[] = []): string | undefined {
  switch (t.kind) {
    case 'struct':
      for (const f of t.fields) {
        const found = findV3OnlyType(f.type, [...path, f.name]);
        if (found !== undefined) return found;
      }
      return undefined;
    case 'list':
      return findV3OnlyType(t.element, [...path, 'element']);
    case 'map':
      return findV3OnlyType(t.key, [...path, 'key']) ?? findV3OnlyType(t.value, [...path, 'value']);
    default:
      return V3_ONLY.has(t.kind) ? `${path.join('.')} (${t.kind})` : undefined;
  }
}

// ---- fresh ids ----

/**
 * Re-numbers every field id (struct fields, list elements, map keys and values) with `nextId`,
 * in Java `AssignFreshIds` order: a struct's own fields first, then each field's nested type in
 * turn; a list's element id before its element type; a map's key and value ids before theirs.
 */
export function assignFreshIds(struct: StructType, nextId: () => number): StructType {
  return freshType(struct, nextId) as StructType;
}

function freshType(t: IcebergType, nextId: () => number): IcebergType {
  switch (t.kind) {
    case 'struct': {
      const ids = t.fields.map(() => nextId());
      return {
        kind: 'struct',
        fields: t.fields.map((f, i) => ({ ...f, id: ids[i]!, type: freshType(f.type, nextId) })),
      };
    }
    case 'list': {
      const elementId = nextId();
      return { ...t, elementId, element: freshType(t.element, nextId) };
    }
    case 'map': {
      const keyId = nextId();
      const valueId = nextId();
      return { ...t, keyId, valueId, key: freshType(t.key, nextId), value: freshType(t.value, nextId) };
    }
    default:
      return t;
  }
}

// ---- union by name ----

export interface UnionByNameResult {
  /** The evolved schema, or undefined when the incoming struct needs no change. */
  readonly schema: Schema | undefined;
  /** Never lower than the `lastColumnId` passed in. */
  readonly lastColumnId: number;
  /** Human-readable, e.g. `added column order_events.user_agent string`. */
  readonly changes: string[];
}

export interface UnionByNameOptions {
  /** Prefixes paths in changes and errors (`order_events.user_agent`). */
  readonly tableName?: string;
  /** Highest schema id in the table; the new schema gets this + 1 (default: current's id). */
  readonly maxSchemaId?: number;
  /** Partition source field id → transforms ({@link partitionSourceTransforms}), to refuse promotions that change them. */
  readonly partitionTransforms?: ReadonlyMap<number, readonly string[]>;
}

interface Ctx {
  readonly formatVersion: number;
  readonly prefix: string;
  readonly identifierIds: ReadonlySet<number>;
  readonly partitionTransforms: ReadonlyMap<number, readonly string[]>;
  readonly changes: string[];
  nextId(): number;
}

/**
 * Merges `incoming` (e.g. a struct inferred from events; its field ids are ignored) into
 * `current` by field name. See the module comment for the rules. Throws FloeError
 * SchemaIncompatible naming the field path and both types when the data cannot fit.
 */
export function unionByName(
  current: Schema,
  incoming: StructType,
  lastColumnId: number,
  formatVersion: number,
  options: UnionByNameOptions = {},
): UnionByNameResult {
  // Guard against metadata whose last-column-id lags its schemas: ids must never be reused.
  let last = Math.max(lastColumnId, highestFieldId(current));
  const ctx: Ctx = {
    formatVersion,
    prefix: options.tableName ? `${options.tableName}.` : '',
    identifierIds: new Set(current.identifierFieldIds ?? []),
    partitionTransforms: options.partitionTransforms ?? new Map(),
    changes: [],
    nextId: () => ++last,
  };
  const base = schemaStruct(current);
  const merged = mergeStruct(base, incoming, [], ctx);
  if (merged === base) return { schema: undefined, lastColumnId: last, changes: [] };
  const schemaId = Math.max(options.maxSchemaId ?? current.schemaId, current.schemaId) + 1;
  const schema: Schema = {
    schemaId,
    ...(current.identifierFieldIds ? { identifierFieldIds: current.identifierFieldIds } : {}),
    fields: merged.fields,
  };
  return { schema, lastColumnId: last, changes: ctx.changes };
}

function mergeStruct(existing: StructType, incoming: StructType, path: string[], ctx: Ctx): StructType {
  const byName = new Map<string, NestedField>();
  for (const f of incoming.fields) {
    if (byName.has(f.name)) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `incoming schema has duplicate field ${show(ctx, [...path, f.name])}`,
      );
    }
    byName.set(f.name, f);
  }
  let changed = false;
  const fields: NestedField[] = existing.fields.map((e) => {
    const p = [...path, e.name];
    const i = byName.get(e.name);
    let f = e;
    if (i !== undefined) {
      const t = mergeType(e.type, i.type, p, ctx, e.id);
      if (t !== e.type) f = { ...f, type: t };
    }
    // An identifier field stays required (the spec forbids optional ones): a record without it is
    // refused on its own when it is converted, instead of the whole batch failing here.
    if (e.required && !ctx.identifierIds.has(e.id) && (i === undefined || !i.required)) {
      relax(ctx, p, i === undefined ? 'absent from incoming data' : 'optional in incoming data');
      f = { ...f, required: false };
    }
    if (f !== e) changed = true;
    return f;
  });
  const existingNames = new Set(existing.fields.map((f) => f.name));
  for (const i of incoming.fields) {
    if (existingNames.has(i.name)) continue;
    const added = newField(i, [...path, i.name], ctx);
    if (added) {
      fields.push(added);
      changed = true;
    }
  }
  return changed ? { kind: 'struct', fields } : existing;
}

function mergeType(e: IcebergType, i: IcebergType, path: string[], ctx: Ctx, fieldId?: number): IcebergType {
  // All-null data (v3 `unknown`) fits any column.
  if (i.kind === 'unknown' && e.kind !== 'unknown') return e;
  switch (e.kind) {
    case 'struct':
      if (i.kind !== 'struct') throw incompatible(ctx, path, e, i);
      return mergeStruct(e, i, path, ctx);
    case 'list': {
      if (i.kind !== 'list') throw incompatible(ctx, path, e, i);
      const p = [...path, 'element'];
      const element = mergeType(e.element, i.element, p, ctx);
      const relaxed = e.elementRequired && !i.elementRequired;
      if (relaxed) relax(ctx, p, 'optional in incoming data');
      return element === e.element && !relaxed
        ? e
        : { ...e, element, elementRequired: e.elementRequired && !relaxed };
    }
    case 'map': {
      if (i.kind !== 'map') throw incompatible(ctx, path, e, i);
      // Map keys identify entries: they may not change type or gain fields.
      if (
        !typeEquals(e.key, i.key) &&
        !(isPrimitive(e.key) && isPrimitive(i.key) && canPromote(i.key, e.key, ctx.formatVersion))
      ) {
        throw incompatible(ctx, [...path, 'key'], e.key, i.key);
      }
      const p = [...path, 'value'];
      const value = mergeType(e.value, i.value, p, ctx);
      const relaxed = e.valueRequired && !i.valueRequired;
      if (relaxed) relax(ctx, p, 'optional in incoming data');
      return value === e.value && !relaxed ? e : { ...e, value, valueRequired: e.valueRequired && !relaxed };
    }
    default: {
      if (!isPrimitive(i)) throw incompatible(ctx, path, e, i);
      if (typeEquals(e, i)) return e;
      if (canPromote(e, i, ctx.formatVersion)) {
        checkPartitionSource(ctx, fieldId, path, e, i);
        ctx.changes.push(`promoted column ${show(ctx, path)} from ${typeToString(e)} to ${typeToString(i)}`);
        return i;
      }
      // Narrower incoming values (int into long, decimal(9,2) into decimal(12,2)) fit as they are.
      if (canPromote(i, e, ctx.formatVersion)) return e;
      throw incompatible(ctx, path, e, i);
    }
  }
}

function checkPartitionSource(
  ctx: Ctx,
  fieldId: number | undefined,
  path: string[],
  from: PrimitiveType,
  to: PrimitiveType,
): void {
  const transforms = fieldId === undefined ? undefined : ctx.partitionTransforms.get(fieldId);
  const changed = transforms?.find((t) => promotionChangesTransform(from, to, t));
  if (changed === undefined) return;
  const field = `${ctx.prefix}${path.join('.')}`;
  throw new FloeError(
    ErrorKind.SchemaIncompatible,
    `cannot promote column ${field} from ${typeToString(from)} to ${typeToString(to)}: it is the source of partition transform ${changed}, whose values would change`,
    { context: { field, existing: typeToString(from), incoming: typeToString(to), transform: changed } },
  );
}

function newField(i: NestedField, path: string[], ctx: Ctx): NestedField | undefined {
  // v1/v2 have no `unknown` type: a field seen only as null is added once a value shows its type.
  const type = ctx.formatVersion >= 3 ? i.type : dropUnknown(i.type);
  if (type === undefined) return undefined;
  if (ctx.formatVersion < 3) {
    const v3 = findV3OnlyType(type, path);
    if (v3 !== undefined) {
      throw new FloeError(
        ErrorKind.SchemaIncompatible,
        `cannot add column ${ctx.prefix}${v3}: type requires format version 3, table is v${ctx.formatVersion}`,
        { context: { field: `${ctx.prefix}${path.join('.')}`, incoming: typeToString(type) } },
      );
    }
  }
  const id = ctx.nextId();
  const fresh = freshType(optionalTree(type), () => ctx.nextId());
  ctx.changes.push(`added column ${show(ctx, path)} ${typeToString(fresh)}`);
  const out: NestedField = { id, name: i.name, required: false, type: fresh };
  return i.doc === undefined ? out : { ...out, doc: i.doc };
}

/** Everything Floe adds is optional, at every depth: later events may omit any of it. */
export function optionalTree<T extends IcebergType>(t: T): T;
export function optionalTree(t: IcebergType): IcebergType {
  switch (t.kind) {
    case 'struct':
      return {
        kind: 'struct',
        fields: t.fields.map((f) => ({
          id: f.id,
          name: f.name,
          required: false,
          type: optionalTree(f.type),
          ...(f.doc ? { doc: f.doc } : {}),
        })),
      };
    case 'list':
      return { ...t, elementRequired: false, element: optionalTree(t.element) };
    case 'map':
      return { ...t, valueRequired: false, value: optionalTree(t.value) };
    default:
      return t;
  }
}

function dropUnknown(t: IcebergType): IcebergType | undefined {
  switch (t.kind) {
    case 'unknown':
      return undefined;
    case 'struct': {
      const fields: NestedField[] = [];
      for (const f of t.fields) {
        const ft = dropUnknown(f.type);
        if (ft !== undefined) fields.push(ft === f.type ? f : { ...f, type: ft });
      }
      return fields.length === 0 && t.fields.length > 0 ? undefined : { kind: 'struct', fields };
    }
    case 'list': {
      const element = dropUnknown(t.element);
      return element === undefined ? undefined : { ...t, element };
    }
    case 'map': {
      const key = dropUnknown(t.key);
      const value = dropUnknown(t.value);
      return key === undefined || value === undefined ? undefined : { ...t, key, value };
    }
    default:
      return t;
  }
}

function relax(ctx: Ctx, path: string[], why: string): void {
  ctx.changes.push(`made column ${show(ctx, path)} optional (${why})`);
}

function incompatible(ctx: Ctx, path: string[], existing: IcebergType, incoming: IcebergType): FloeError {
  const field = `${ctx.prefix}${path.join('.')}`;
  return new FloeError(
    ErrorKind.SchemaIncompatible,
    `cannot evolve column ${field}: existing type ${typeToString(existing)} cannot hold incoming type ${typeToString(incoming)}`,
    { context: { field, existing: typeToString(existing), incoming: typeToString(incoming) } },
  );
}

function show(ctx: Ctx, path: readonly string[]): string {
  return `${ctx.prefix}${path.join('.')}`;
}
