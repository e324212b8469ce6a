/**
 * JSON record → table row in the representation of `iceberg/values.ts`, for a table's current
 * schema (real field ids). A converter is compiled once per schema into a tree of closures, so
 * the per-value work is one call with no type dispatch.
 *
 * - A value that does not fit its column fails the whole record with the column path, the value
 *   and the reason (the caller dead-letters it or evolves first); nothing is dropped silently.
 * - Keys are matched to columns exactly first, then by the inference name rule (`User-Agent` →
 *   `user_agent`), so records convert into the columns inference made for them.
 * - Record fields with no column fail the record (option `unknownFields: 'ignore'` drops them);
 *   null, `[]` and `{}` never need a column. {@link unknownFields} lists them up front.
 * - Missing and null values become null; a required column that gets none fails the record.
 * - Rows have every top-level column, in schema order (null when absent).
 */
import type { Schema } from '../iceberg/schema.ts';
import type { IcebergType, StructType } from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import { JsonNumberText } from '../records/json-line.ts';
import { columnNameOf } from './column-name.ts';
import {
  ConvertFailure,
  type ConvertOptions,
  jsonKind,
  primitiveConverter,
  type ValueConverter,
} from './convert-primitive.ts';
import { hasTypedValue, isJsonObject } from './json-shape.ts';

export type { ConvertOptions } from './convert-primitive.ts';
export { hasTypedValue } from './json-shape.ts';

/** Outcome of converting one record. */
export type ConvertResult =
  | { readonly ok: true; readonly row: Row }
  | {
      readonly ok: false;
      /** Column path, e.g. `amount`, `metadata.version`, `items[2].sku`. */
      readonly field: string;
      /** The offending value, JSON-ish and shortened. */
      readonly value: string;
      readonly reason: string;
    };

/** A compiled record → row converter for one schema. */
export type RowConverter = (record: object) => ConvertResult;

type Obj = Record<string, unknown>;
type StructConverter = (obj: Obj) => Record<string, IcebergValue>;

function asStruct(s: StructType | Schema): StructType {
  return 'kind' in s ? s : { kind: 'struct', fields: s.fields };
}

/** Compiles the converter for `schema` (a table schema or its struct). */
export function compileRowConverter(schema: StructType | Schema, options: ConvertOptions = {}): RowConverter {
  const root = compileStruct(asStruct(schema), options);
  return (record) => {
    if (!isPlainObject(record)) {
      return {
        ok: false,
        field: '',
        value: excerpt(record),
        reason: `expected a JSON object record, got ${jsonKind(record)}`,
      };
    }
    try {
      return { ok: true, row: root(record as Obj) };
    } catch (e) {
      if (!(e instanceof ConvertFailure)) throw e;
      return { ok: false, field: joinPath(e.path), value: excerpt(e.value), reason: e.reason };
    }
  };
}

const cache = new WeakMap<object, RowConverter>();

/**
 * Converts one record for `schema`. Converters for default options are cached per schema object,
 * so calling this in a loop compiles once; use {@link compileRowConverter} to hold one yourself.
 */
export function toRow(schema: StructType | Schema, record: object, options?: ConvertOptions): ConvertResult {
  if (options !== undefined) return compileRowConverter(schema, options)(record);
  let c = cache.get(schema);
  if (c === undefined) {
    c = compileRowConverter(schema);
    cache.set(schema, c);
  }
  return c(record);
}

/** A one-line description of a failed conversion, naming the table, field, value and reason. */
export function describeConvertFailure(
  table: string,
  r: { field: string; value: string; reason: string },
): string {
  return `table '${table}', field '${r.field}': value ${r.value} ${r.reason}`;
}

function compileType(t: IcebergType, options: ConvertOptions): ValueConverter {
  switch (t.kind) {
    case 'struct': {
      const s = compileStruct(t, options);
      return (v) => (isPlainObject(v) ? s(v as Obj) : valueless(v) ? null : failExpected('an object', v));
    }
    case 'list': {
      const l = compileList(compileType(t.element, options), t.elementRequired);
      return (v) => (Array.isArray(v) || !valueless(v) ? l(v) : null);
    }
    case 'map': {
      const m = compileMap(compileMapKey(t.key, options), compileType(t.value, options), t.valueRequired);
      return (v) => (isPlainObject(v) || !valueless(v) ? m(v) : null);
    }
    default: {
      const p = primitiveConverter(t, options);
      return (v) => (typeof v === 'object' && valueless(v) ? null : p(v));
    }
  }
}

/**
 * `[]`, `{}` (and containers of only those and null) in a column that cannot hold that shape:
 * they carry no value — inference gives them no column (DESIGN §3) — so they read as null,
 * as they would had their column been added after the record. A placeholder `"tags": []` must
 * not turn a record into a dead letter because `tags` is a string elsewhere.
 */
function requiredValue(x: IcebergValue, required: boolean): IcebergValue {
  if (x === null && required) throw new ConvertFailure('is required but has no value', null);
  return x;
}

function valueless(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !(v instanceof JsonNumberText) && !hasTypedValue(v);
}

function failExpected(what: string, v: unknown): never {
  throw new ConvertFailure(`expected ${what}, got ${jsonKind(v)}`, v);
}

function compileList(element: ValueConverter, elementRequired: boolean): ValueConverter {
  return (v) => {
    if (!Array.isArray(v)) return failExpected('an array', v);
    const out: IcebergValue[] = new Array(v.length);
    let i = 0;
    try {
      for (; i < v.length; i++) {
        const e = v[i];
        if (e === null || e === undefined) {
          if (elementRequired) throw new ConvertFailure('list element is required but null', null);
          out[i] = null;
        } else out[i] = element(e);
      }
    } catch (e) {
      if (e instanceof ConvertFailure) e.path.unshift(`[${i}]`);
      throw e;
    }
    return out;
  };
}

function compileMapKey(t: IcebergType, options: ConvertOptions): (key: string) => IcebergValue {
  // JSON object keys are strings; numeric key types read them as integers.
  if (t.kind === 'int' || t.kind === 'long') {
    const conv = primitiveConverter(t, options);
    return (k) =>
      /^-?(0|[1-9]\d*)$/.test(k) ? conv(BigInt(k)) : failExpected(`an integer key for ${t.kind}`, k);
  }
  if (t.kind === 'struct' || t.kind === 'list' || t.kind === 'map') {
    return (k) => failExpected(`a ${t.kind} map key (not representable in JSON)`, k);
  }
  return primitiveConverter(t, options) as (key: string) => IcebergValue;
}

function compileMap(
  key: (k: string) => IcebergValue,
  value: ValueConverter,
  valueRequired: boolean,
): ValueConverter {
  return (v) => {
    if (!isPlainObject(v)) return failExpected('an object (map)', v);
    const out = new Map<IcebergValue, IcebergValue>();
    let k = '';
    try {
      for (k of Object.keys(v as Obj)) {
        const e = (v as Obj)[k];
        if (e === null || e === undefined) {
          if (valueRequired) throw new ConvertFailure('map value is required but null', null);
          out.set(key(k), null);
        } else out.set(key(k), value(e));
      }
    } catch (e) {
      if (e instanceof ConvertFailure) e.path.unshift(`[${JSON.stringify(k)}]`);
      throw e;
    }
    return out;
  };
}

function compileStruct(t: StructType, options: ConvertOptions): StructConverter {
  const n = t.fields.length;
  const names = t.fields.map((f) => f.name);
  const convs = t.fields.map((f) => compileType(f.type, options));
  const required = t.fields.map((f) => f.required);
  const anyRequired = required.some(Boolean);
  const isString = t.fields.map((f) => f.type.kind === 'string');
  // `obj.constructor`, `obj.toString` … would find Object.prototype's members: read those
  // columns as own properties only. Decided per column at compile time, so it costs nothing.
  const ownOnly = names.map((name) => name in Object.prototype);
  const anyOwnOnly = ownOnly.some(Boolean);
  // Rows are copied from a template made by JSON.parse: V8 gives it in-object fields, and a spread
  // copy keeps them (3-4x faster than adding fields one by one). JSON.parse and spread both
  // define a `__proto__` key as an own property, so even that column name is safe.
  const template = JSON.parse(
    JSON.stringify(Object.fromEntries(names.map((name) => [name, null]))),
  ) as Record<string, IcebergValue>;
  const exact = new Set(names);
  const indexByName = new Map(names.map((name, i) => [name, i]));
  const failUnknown = options.unknownFields !== 'ignore';

  const convertField = (row: Record<string, IcebergValue>, i: number, v: unknown): void => {
    if (v === null) {
      if (required[i]) throw new ConvertFailure('is required but null', null);
      row[names[i]!] = null;
    } else row[names[i]!] = requiredValue(convs[i]!(v), required[i]!);
  };

  /** Keys that are not exact column names: matched by the name rule, else unknown. */
  const slowKeys = (obj: Obj, row: Record<string, IcebergValue>): void => {
    let claimed: Set<string> | undefined;
    for (const key of Object.keys(obj)) {
      if (exact.has(key)) continue;
      const v = obj[key];
      if (v === undefined) continue;
      const col = columnNameOf(key);
      const i = col === undefined ? undefined : indexByName.get(col);
      if (i === undefined) {
        if (failUnknown && hasTypedValue(v)) {
          const f = new ConvertFailure('is not a column of the table (evolve the schema first)', v);
          f.path.push(key);
          throw f;
        }
        continue;
      }
      const name = col as string;
      if (Object.hasOwn(obj, name) || claimed?.has(name)) {
        const f = new ConvertFailure(`collides with another key that maps to column '${name}'`, v);
        f.path.push(key);
        throw f;
      }
      if (claimed === undefined) claimed = new Set();
      claimed.add(name);
      try {
        convertField(row, i, v);
      } catch (e) {
        if (e instanceof ConvertFailure) e.path.unshift(name);
        throw e;
      }
    }
  };

  return (obj) => {
    const row: Record<string, IcebergValue> = { ...template };
    let matched = 0;
    let i = 0;
    try {
      for (; i < n; i++) {
        const name = names[i]!;
        const v = anyOwnOnly && ownOnly[i] ? (Object.hasOwn(obj, name) ? obj[name] : undefined) : obj[name];
        // Absent: the template's null stays (a required column may still come from a
        // differently spelt key, checked below).
        if (v === undefined) continue;
        matched++;
        // Inlined common cases: null, and string columns (most of a typical event).
        if (v === null) {
          if (required[i]) throw new ConvertFailure('is required but null', null);
          row[name] = null;
        } else if (isString[i] && typeof v === 'string') row[name] = v;
        else row[name] = requiredValue(convs[i]!(v), required[i]!);
      }
    } catch (e) {
      if (e instanceof ConvertFailure) e.path.unshift(names[i]!);
      throw e;
    }
    // Counting keys is cheaper than listing them; only records with extra keys go the slow way.
    let count = 0;
    for (const _ in obj) count++;
    if (count !== matched) slowKeys(obj, row);
    if (anyRequired) {
      for (let j = 0; j < n; j++) {
        if (required[j] && row[names[j]!] === null) {
          const f = new ConvertFailure('is required but missing', undefined);
          f.path.push(names[j]!);
          throw f;
        }
      }
    }
    return row;
  };
}

function isPlainObject(v: unknown): boolean {
  return isJsonObject(v);
}

/**
 * Dotted paths of record fields that carry a typed value but have no column in `schema`, looking
 * into structs, lists (`items.element.x`) and maps (`attrs.value.x`). Names follow the inference
 * rule, so the caller can infer and evolve exactly these before converting.
 */
export function unknownFields(schema: StructType | Schema, record: object): string[] {
  const out = new Set<string>();
  if (isPlainObject(record)) walkStruct(asStruct(schema), record as Obj, '', out);
  return [...out];
}

function walkStruct(t: StructType, obj: Obj, path: string, out: Set<string>): void {
  for (const key of Object.keys(obj)) {
    const v = obj[key];
    if (v === null || v === undefined) continue;
    const col = columnNameOf(key);
    const f = t.fields.find((x) => x.name === key) ?? t.fields.find((x) => x.name === col);
    const p = path === '' ? (col ?? key) : `${path}.${col ?? key}`;
    if (f === undefined) {
      if (hasTypedValue(v)) out.add(p);
    } else walkValue(f.type, v, p, out);
  }
}

function walkValue(t: IcebergType, v: unknown, path: string, out: Set<string>): void {
  if (t.kind === 'struct' && isPlainObject(v)) walkStruct(t, v as Obj, path, out);
  else if (t.kind === 'list' && Array.isArray(v))
    for (const e of v) walkValue(t.element, e, `${path}.element`, out);
  else if (t.kind === 'map' && isPlainObject(v)) {
    for (const e of Object.values(v as Obj)) walkValue(t.value, e, `${path}.value`, out);
  }
}

function joinPath(segments: readonly string[]): string {
  let out = '';
  for (const s of segments) out = s.startsWith('[') || out === '' ? out + s : `${out}.${s}`;
  return out;
}

const EXCERPT_LENGTH = 100;

/** A short printable form of a JSON value for failure reports (bigints as plain digits). */
function excerpt(v: unknown): string {
  if (v === undefined) return '(missing)';
  const s = jsonText(v, EXCERPT_LENGTH + 1);
  return s.length > EXCERPT_LENGTH ? `${s.slice(0, EXCERPT_LENGTH - 3)}...` : s;
}

/** JSON text of a parsed value, stopping once `budget` characters are produced. */
function jsonText(v: unknown, budget: number): string {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof JsonNumberText) return v.text;
  if (v instanceof Uint8Array) return `<${v.length} bytes>`;
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length && out.length < budget; i++)
      out += (i > 0 ? ',' : '') + jsonText(v[i], budget - out.length);
    return `${out}]`;
  }
  if (isJsonObject(v)) {
    let out = '{';
    let first = true;
    for (const k of Object.keys(v)) {
      if (out.length >= budget) break;
      out += `${first ? '' : ','}${JSON.stringify(k)}:${jsonText(v[k], budget - out.length)}`;
      first = false;
    }
    return `${out}}`;
  }
  if (typeof v === 'string') return JSON.stringify(v.length > budget ? v.slice(0, budget) : v);
  return String(v);
}
