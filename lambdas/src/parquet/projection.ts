/**
 * Column projection (spec §Column Projection): an Iceberg schema matched against a file's columns
 * by field id, recursively through structs, list elements and map keys/values, compiled into
 * binders that turn Arrow record batches into Floe rows.
 *
 * A field the file lacks takes, in order: the caller's constant for its id (identity partition
 * values of files written without those columns), its `initial-default`, null. A required field
 * with none of these cannot be read and is refused.
 */
import * as arrow from 'apache-arrow';
import { ErrorKind, FloeError } from '../errors.ts';
import { fromJsonSingleValue } from '../iceberg/conversions.ts';
import { type IcebergType, isPrimitive, type NestedField, typeToString } from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import { type Getter, offsetAt, withNulls } from './arrow-buffers.ts';
import type { FileColumn } from './file-columns.ts';
import { type Binder, leafDecoder } from './leaf-decoders.ts';

export interface ProjectionContext {
  /** The file, for error messages. */
  readonly file: string;
  readonly constants: ReadonlyMap<number, IcebergValue>;
  /** Whether the file's leaf at a depth-first ordinal is INT96. */
  readonly isInt96: (leafOrdinal: number) => boolean;
  /** Collects the ids of the schema fields found in the file. */
  readonly found: Set<number>;
}

/** Compiles the top-level `fields` against the file's top-level `columns`: binds a batch to a row getter. */
export function compileRows(
  fields: readonly NestedField[],
  columns: readonly FileColumn[],
  ctx: ProjectionContext,
): (batch: arrow.Data) => (i: number) => Row {
  const bind = structBinder(fields, columns, '', ctx);
  return (batch) => bind(batch) as (i: number) => Row;
}

interface FieldPlan {
  readonly name: string;
  /** Index of the matching child column in the file, or -1 when the file lacks the field. */
  readonly index: number;
  readonly bind?: Binder;
  /** The value when the file lacks the field. */
  readonly missing: IcebergValue;
}

/** Binder of a struct: one plain object per slot, keyed by field name, every field present. */
function structBinder(
  fields: readonly NestedField[],
  columns: readonly FileColumn[],
  parent: string,
  ctx: ProjectionContext,
): Binder {
  const byId = columnsById(columns, ctx.file);
  const plans: FieldPlan[] = fields.map((f) => {
    const path = parent === '' ? f.name : `${parent}.${f.name}`;
    const index = byId.get(f.id) ?? -1;
    if (index < 0) return { name: f.name, index, missing: missingValue(f, path, ctx) };
    ctx.found.add(f.id);
    return { name: f.name, index, bind: typeBinder(f.type, columns[index]!, f.id, path, ctx), missing: null };
  });
  const names = plans.map((p) => p.name);
  return (data) => {
    const getters = plans.map((p) => (p.bind ? p.bind(data.children[p.index]!) : constant(p.missing)));
    return withNulls(data, objectBuilder(names, getters));
  };
}

/** Builds `{ [names[k]]: getters[k](i) }`, with a fast path when no field is named `__proto__`. */
function objectBuilder(names: readonly string[], getters: readonly Getter[]): Getter {
  const n = names.length;
  const plain = !names.includes('__proto__');
  return (i) => {
    const o: Row = {};
    if (plain) for (let k = 0; k < n; k++) o[names[k]!] = getters[k]!(i);
    else for (let k = 0; k < n; k++) setOwn(o, names[k]!, getters[k]!(i));
    return o;
  };
}

/** `o[name] = value` as an own data property, also for a field named `__proto__` (which `=` would not create). */
function setOwn(o: Row, name: string, value: IcebergValue): void {
  if (name === '__proto__')
    Object.defineProperty(o, name, { value, enumerable: true, writable: true, configurable: true });
  else o[name] = value;
}

/** The same value for every slot (a struct default or byte-array constant is shared between rows). */
function constant(v: IcebergValue): Getter {
  return () => v;
}

function typeBinder(
  t: IcebergType,
  col: FileColumn,
  id: number,
  path: string,
  ctx: ProjectionContext,
): Binder {
  if (arrow.DataType.isNull(col.type)) return () => constant(null);
  const where = `${ctx.file}: column ${col.path} (id ${id})`;
  const mismatch = () =>
    new FloeError(
      ErrorKind.SchemaIncompatible,
      `${where} holds ${String(col.type)}, which cannot be read as Iceberg ${typeToString(t)} (${path})`,
      { context: { file: ctx.file, column: path, fieldId: id } },
    );
  switch (t.kind) {
    case 'struct':
      if (!arrow.DataType.isStruct(col.type)) throw mismatch();
      return structBinder(t.fields, col.children, path, ctx);
    case 'list': {
      if (!isListType(col.type)) throw mismatch();
      const element = nestedChild(col.children[0]!, t.elementId, where, ctx);
      const bindElement = typeBinder(t.element, element, t.elementId, `${path}.element`, ctx);
      return (data) => withNulls(data, listGetter(data, bindElement(data.children[0]!)));
    }
    case 'map': {
      if (!arrow.DataType.isMap(col.type)) throw mismatch();
      const key = nestedChild(col.children[0]!, t.keyId, where, ctx);
      const value = nestedChild(col.children[1]!, t.valueId, where, ctx);
      const bindKey = typeBinder(t.key, key, t.keyId, `${path}.key`, ctx);
      const bindValue = typeBinder(t.value, value, t.valueId, `${path}.value`, ctx);
      return (data) => {
        const entries = data.children[0]!;
        return withNulls(
          data,
          mapGetter(data, bindKey(entries.children[0]!), bindValue(entries.children[1]!)),
        );
      };
    }
    default:
      if (!isPrimitive(t) || col.children.length > 0) throw mismatch();
      return leafDecoder(col.type, t, { where, isInt96: () => ctx.isInt96(col.leafOrdinal) });
  }
}

/**
 * A list element or map key/value: the one child the file has. Its id, when the file gives one,
 * must be the schema's (these ids never change, so a different one means a different column).
 */
function nestedChild(col: FileColumn, id: number, where: string, ctx: ProjectionContext): FileColumn {
  if (col.id !== undefined && col.id !== id) {
    throw new FloeError(
      ErrorKind.SchemaIncompatible,
      `${where}: nested column ${col.path} has field id ${col.id}, the schema expects ${id}`,
      { context: { file: ctx.file, column: col.path, fieldId: id } },
    );
  }
  ctx.found.add(id);
  return col;
}

function listGetter(data: arrow.Data, element: Getter): Getter {
  const at = offsetAt(data.valueOffsets as Int32Array | BigInt64Array);
  return (i) => {
    const start = at(i);
    const out = new Array<IcebergValue>(at(i + 1) - start);
    for (let j = 0; j < out.length; j++) out[j] = element(start + j);
    return out;
  };
}

function mapGetter(data: arrow.Data, key: Getter, value: Getter): Getter {
  const at = offsetAt(data.valueOffsets as Int32Array | BigInt64Array);
  return (i) => {
    const out = new Map<IcebergValue, IcebergValue>();
    for (let j = at(i), end = at(i + 1); j < end; j++) out.set(key(j), value(j));
    return out;
  };
}

function isListType(t: arrow.DataType): boolean {
  return arrow.DataType.isList(t) || t.typeId === arrow.Type.LargeList;
}

function columnsById(columns: readonly FileColumn[], file: string): Map<number, number> {
  const out = new Map<number, number>();
  columns.forEach((c, i) => {
    if (c.id === undefined) return;
    if (out.has(c.id)) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `${file}: field id ${c.id} appears twice (column ${c.path})`,
        {
          context: { file, column: c.path, fieldId: c.id },
        },
      );
    }
    out.set(c.id, i);
  });
  return out;
}

/** Spec §Column Projection for a field the file lacks: constant, then `initial-default`, then null. */
function missingValue(f: NestedField, path: string, ctx: ProjectionContext): IcebergValue {
  if (ctx.constants.has(f.id)) return ctx.constants.get(f.id);
  const value = initialDefault(f, path, ctx);
  if ((value === null || value === undefined) && f.required && f.type.kind !== 'unknown') {
    throw new FloeError(
      ErrorKind.SchemaIncompatible,
      `${ctx.file} has no column for required field ${path} (id ${f.id}) and the field has no default`,
      { context: { file: ctx.file, column: path, fieldId: f.id } },
    );
  }
  return value ?? null;
}

function initialDefault(f: NestedField, path: string, ctx: ProjectionContext): IcebergValue {
  const d = f.initialDefault;
  if (d === undefined || d === null) return null;
  const t = f.type;
  if (isPrimitive(t)) return fromJsonSingleValue(t, d);
  if (t.kind === 'struct') {
    // A struct defaults to `{}` at most; its fields carry their own defaults.
    const o: Row = {};
    for (const c of t.fields) setOwn(o, c.name, missingValue(c, `${path}.${c.name}`, ctx));
    return o;
  }
  throw new FloeError(
    ErrorKind.FeatureUnsupported,
    `field ${path} (id ${f.id}) has a ${t.kind} initial-default, which Floe cannot apply`,
    { context: { file: ctx.file, column: path, fieldId: f.id } },
  );
}
