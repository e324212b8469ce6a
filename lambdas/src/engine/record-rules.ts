/**
 * Field lists (keep / drop / only) and the table guards (allow-list regex, maxTables), applied to
 * each routed record before it is grouped by table (DESIGN §3).
 *
 * Checks run in this order, the first failure dead-letters the record: `guard-allow-tables`,
 * field projection (drop / only), `missing-kept-field`, `guard-max-tables`. A table counts against
 * `maxTables` only once a record for it passed every other check. The limits (record size,
 * nesting depth, columns per table) hold on every path, configured or not, and are enforced where
 * records are read (size, depth) and where a table's schema is decided (`screen`: columns).
 *
 * A table's field lists are the global ones composed with its own (`composeFieldRules` in
 * config.ts); every caller (load, ingest, committer; JSON and Avro) gets them from `fieldsFor`.
 */

import { anchoredRegExp, type FieldRules, type FloeConfig, fieldRulesFor } from '../config.ts';
import { ErrorKind, isFloeError } from '../errors.ts';
import type { Schema } from '../iceberg/schema.ts';
import type { IcebergType, NestedField, StructType } from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import type { Catalog } from '../ports/catalog.ts';
import { JsonNumberText, type JsonObject, type JsonValue } from '../records/json-line.ts';
import type { Shape } from '../records/shape-scanner.ts';
import { columnNameOf } from '../schema/column-name.ts';
import { DeadLetterReason } from './dead-letters.ts';

export type RuleResult =
  | { readonly ok: true; readonly value: Record<string, JsonValue> }
  | { readonly ok: false; readonly reason: DeadLetterReason; readonly detail: string };

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumberText);
}

/** Dotted paths as a trie: `true` marks the end of a listed path. */
type Trie = Map<string, Trie | true>;

function trieOf(paths: readonly string[]): Trie {
  const root: Trie = new Map();
  for (const p of paths) {
    let node = root;
    const parts = p.split('.');
    for (let i = 0; i < parts.length; i++) {
      const k = parts[i]!;
      const at = node.get(k);
      if (at === true) break; // a parent is already listed whole
      if (i === parts.length - 1) {
        node.set(k, true);
        break;
      }
      const next: Trie = at ?? new Map();
      node.set(k, next);
      node = next;
    }
  }
  return root;
}

/** `v` with the paths in `trie` removed (drop) or kept alone (only); arrays are transparent. */
function project(v: JsonValue, trie: Trie, only: boolean): JsonValue {
  if (Array.isArray(v)) return v.map((e) => project(e, trie, only));
  if (!isObject(v)) return only ? null : v; // `only` below a scalar: nothing listed is there
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(v)) {
    const name = columnNameOf(key);
    const rule = name === undefined ? undefined : trie.get(name);
    const x = v[key]!;
    if (rule === true) {
      if (only) put(out, key, x);
    } else if (rule === undefined) {
      if (!only) put(out, key, x);
    } else {
      put(out, key, project(x, rule, only));
    }
  }
  return out;
}

/** `o[key] = v`, but an own `__proto__` key stays data (as the JSON parser stores it). */
function put(o: Record<string, JsonValue>, key: string, v: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(o, key, { value: v, enumerable: true, writable: true, configurable: true });
  } else o[key] = v;
}

/** Whether `v` has a typed (non-null) value at `parts` (through arrays: any element). */
function hasValueAt(v: JsonValue | undefined, parts: readonly string[], i: number): boolean {
  if (v === undefined || v === null) return false;
  if (i === parts.length) return !(Array.isArray(v) && v.length === 0);
  if (Array.isArray(v)) return v.some((e) => hasValueAt(e, parts, i));
  if (!isObject(v)) return false;
  for (const key of Object.keys(v)) {
    if (columnNameOf(key) === parts[i] && hasValueAt(v[key], parts, i + 1)) return true;
  }
  return false;
}

/** Deepest nesting of objects and arrays: `{}` and `{a: 1}` are 1, `{a: {b: 1}}` and `{a: [1]}` 2. */
export function nestingDepth(v: JsonValue): number {
  if (Array.isArray(v)) {
    let d = 0;
    for (const e of v) d = Math.max(d, nestingDepth(e));
    return 1 + d;
  }
  if (!isObject(v)) return 0;
  let d = 0;
  for (const key of Object.keys(v)) d = Math.max(d, nestingDepth(v[key]!));
  return 1 + d;
}

/** Adds to `out` the column paths a record would give (nested fields included). Returns whether any. */
export function columnPathsOf(v: JsonValue, prefix: string, out: Set<string>): boolean {
  if (Array.isArray(v)) {
    let any = false;
    for (const e of v) if (columnPathsOf(e, prefix, out)) any = true;
    return any;
  }
  if (v === null) return false;
  if (!isObject(v)) return true;
  let any = false;
  for (const key of Object.keys(v)) {
    const name = columnNameOf(key);
    if (name === undefined) continue;
    const path = prefix === '' ? name : `${prefix}.${name}`;
    if (columnPathsOf(v[key]!, path, out)) {
      out.add(path);
      any = true;
    }
  }
  return any;
}

/** Every field path of an Iceberg schema (lists and maps transparent). */
export function schemaColumnPaths(schema: Schema): Set<string> {
  const out = new Set<string>();
  const walk = (t: IcebergType, prefix: string) => {
    if (t.kind === 'struct') {
      for (const f of t.fields) {
        const path = prefix === '' ? f.name : `${prefix}.${f.name}`;
        out.add(path);
        walk(f.type, path);
      }
    } else if (t.kind === 'list') walk(t.element, prefix);
    else if (t.kind === 'map') {
      walk(t.key, prefix);
      walk(t.value, prefix);
    }
  };
  walk({ kind: 'struct', fields: schema.fields } as IcebergType, '');
  return out;
}

/** `t` with the paths in `trie` removed (drop) or kept alone (only); lists are transparent. */
function projectType(t: IcebergType, trie: Trie, only: boolean): IcebergType | undefined {
  if (t.kind === 'list') {
    const element = projectType(t.element, trie, only);
    return element === undefined ? undefined : { ...t, element };
  }
  if (t.kind !== 'struct') return only ? undefined : t;
  const fields: NestedField[] = [];
  for (const f of t.fields) {
    const rule = trie.get(f.name);
    if (rule === true) {
      if (only) fields.push(f);
    } else if (rule === undefined) {
      if (!only) fields.push(f);
    } else {
      const type = projectType(f.type, rule, only);
      if (type !== undefined) fields.push({ ...f, type });
    }
  }
  return { kind: 'struct', fields };
}

/** A typed value reshaped to `t` (a projection of its own type): fields not in `t` go. */
function projectTypedValue(v: IcebergValue, t: IcebergType): IcebergValue {
  if (v === null || v === undefined) return v;
  if (t.kind === 'list' && Array.isArray(v)) return v.map((e) => projectTypedValue(e, t.element));
  if (t.kind === 'struct' && typeof v === 'object' && !(v instanceof Uint8Array) && !(v instanceof Map)) {
    const o = v as Record<string, IcebergValue>;
    const out: Record<string, IcebergValue> = {};
    for (const f of t.fields)
      if (Object.hasOwn(o, f.name)) out[f.name] = projectTypedValue(o[f.name], f.type);
    return out;
  }
  return v;
}

/** Whether a typed row has a non-null value at `parts` (through lists: any element). */
function hasTypedValueAt(v: IcebergValue, parts: readonly string[], i: number): boolean {
  if (v === null || v === undefined) return false;
  if (i === parts.length) return !(Array.isArray(v) && v.length === 0);
  if (Array.isArray(v)) return v.some((e) => hasTypedValueAt(e, parts, i));
  if (typeof v !== 'object' || v instanceof Uint8Array || v instanceof Map) return false;
  return hasTypedValueAt((v as Record<string, IcebergValue>)[parts[i]!], parts, i + 1);
}

export type TypedRuleResult =
  | { readonly ok: true; readonly struct: StructType; readonly row: Row }
  | { readonly ok: false; readonly reason: DeadLetterReason; readonly detail: string };

interface CompiledFields {
  readonly keep?: readonly string[][];
  readonly drop?: Trie;
  readonly only?: Trie;
}

function compileFields(r: FieldRules): CompiledFields {
  return {
    ...(r.keep ? { keep: r.keep.map((p) => p.split('.')) } : {}),
    ...(r.drop ? { drop: trieOf(r.drop) } : {}),
    ...(r.only ? { only: trieOf(r.only) } : {}),
  };
}

/**
 * What a table's field lists make of one record layout of the fast path (a scanner `Shape`):
 * the same decisions `RecordRules.check` takes for each record, taken once per layout.
 */
export interface ShapeRules {
  /** Per scanner slot: its column path, or undefined when a field list drops it. */
  readonly slots: readonly (readonly string[] | undefined)[];
  /** 1 where a slot is kept but stored as null (`only` listing paths below a scalar). */
  readonly nulls: Uint8Array | undefined;
  /** The nested objects that remain (column paths). */
  readonly structs: readonly (readonly string[])[];
  /**
   * The kept fields (`keep`), in the list's order: the slot that must hold a value (a record where
   * it is null or `[]` lacks it), or `ABSENT_FIELD` (no record of the layout has it), or
   * `OBJECT_FIELD` (every record has it: an object).
   */
  readonly keep: readonly { readonly slot: number; readonly path: string }[];
  /**
   * The depth guard (with field lists only; else the reader enforces it): the layout's depth
   * without its empty lists, and the slots whose `[]` would nest deeper (each `[]` is a level).
   */
  readonly depth: number;
  readonly lists: readonly number[];
  /** A remaining object holds nothing: the generic path knows what `{}` means. */
  readonly needsGeneric?: true;
}

/** `ShapeRules.keep` slots of fields the layout does not have / has as an object. */
export const ABSENT_FIELD = -1;
export const OBJECT_FIELD = -2;

/** Identity rules for a layout: every slot to its column path, nothing checked. */
export function shapeAsIs(shape: Shape): ShapeRules {
  return {
    slots: shape.slots.map((s) => s.segments),
    nulls: undefined,
    structs: shape.structNodes.map((s) => s.segments),
    keep: [],
    depth: 0,
    lists: [],
  };
}

/** The depth guard's dead-letter detail. */
export function depthGuardDetail(table: string, depth: number, limit: number): string {
  return `guard maxNestingDepth: table '${table}': record nests ${depth} levels, limit ${limit}`;
}

type Walk = 'keep' | 'drop' | 'null';

/** Where `segments` ends under a drop (`only` false) or only (`only` true) trie. */
function walkTrie(trie: Trie, segments: readonly string[], only: boolean, scalar: boolean): Walk {
  let node: Trie = trie;
  for (const seg of segments) {
    const rule = node.get(seg);
    if (rule === true) return only ? 'keep' : 'drop';
    if (rule === undefined) return only ? 'drop' : 'keep';
    node = rule;
  }
  // The path ends above listed ones: a drop list keeps it; an only list keeps an object (its
  // listed children decide) and makes a scalar null.
  return only && scalar ? 'null' : 'keep';
}

/** Field lists and guards for one load; create with {@link RecordRules.create}. */
export class RecordRules {
  private readonly allow: RegExp | undefined;
  private readonly fields = new Map<string, CompiledFields>();
  /** Tables the namespace holds or this load will create (only tracked with maxTables). */
  private readonly tables: Set<string>;

  private constructor(
    private readonly cfg: FloeConfig,
    existing: readonly string[],
  ) {
    const g = cfg.guards;
    this.allow = g?.allowTables === undefined ? undefined : anchoredRegExp(g.allowTables);
    this.tables = new Set(existing);
  }

  static async create(cfg: FloeConfig, catalog: Catalog): Promise<RecordRules> {
    let existing: string[] = [];
    if (cfg.guards?.maxTables !== undefined) {
      try {
        existing = await catalog.listTables(cfg.namespace);
      } catch (e) {
        if (!isFloeError(e, ErrorKind.NotFound)) throw e; // no namespace yet: no tables
      }
    }
    return new RecordRules(cfg, existing);
  }

  /** The table's composed field rules (global plus its own), compiled once per table. */
  private fieldsFor(table: string): CompiledFields {
    let f = this.fields.get(table);
    if (f === undefined) {
      f = compileFields(fieldRulesFor(this.cfg, table));
      this.fields.set(table, f);
    }
    return f;
  }

  /** `guards.allowTables`' verdict on a table (undefined: allowed). */
  tableRefusal(table: string): { readonly reason: DeadLetterReason; readonly detail: string } | undefined {
    if (this.allow === undefined || this.allow.test(table)) return undefined;
    return {
      reason: DeadLetterReason.GuardAllowTables,
      detail: `guard allowTables: table '${table}' does not match /^(?:${this.cfg.guards?.allowTables})$/`,
    };
  }

  /**
   * `guards.maxTables` for a record that passed every other rule: undefined when its table is
   * known or still fits (it then counts), else the refusal.
   */
  admitTable(table: string): { readonly reason: DeadLetterReason; readonly detail: string } | undefined {
    const g = this.cfg.guards;
    if (g?.maxTables === undefined || this.tables.has(table)) return undefined;
    if (this.tables.size >= g.maxTables) {
      return {
        reason: DeadLetterReason.GuardMaxTables,
        detail: `guard maxTables: table '${table}' would be table ${this.tables.size + 1} in namespace '${this.cfg.namespace}', limit ${g.maxTables}`,
      };
    }
    this.tables.add(table);
    return undefined;
  }

  /**
   * The table's field lists and the depth guard applied to a record layout, as `check` applies
   * them to each record of it: which slots and objects remain, which must hold a value.
   */
  bindShape(shape: Shape, table: string): ShapeRules {
    const f = this.fieldsFor(table);
    const n = shape.slots.length;
    const slots: (readonly string[] | undefined)[] = new Array(n);
    let nulls: Uint8Array | undefined;
    for (let i = 0; i < n; i++) {
      const segs = shape.slots[i]!.segments;
      let w: Walk = 'keep';
      if (f.drop) w = walkTrie(f.drop, segs, false, true);
      if (w === 'keep' && f.only) w = walkTrie(f.only, segs, true, true);
      slots[i] = w === 'drop' ? undefined : segs;
      if (w === 'null') {
        nulls ??= new Uint8Array(n);
        nulls[i] = 1;
      }
    }
    const structs: (readonly string[])[] = [];
    for (const st of shape.structNodes) {
      let w: Walk = 'keep';
      if (f.drop) w = walkTrie(f.drop, st.segments, false, false);
      if (w === 'keep' && f.only) w = walkTrie(f.only, st.segments, true, false);
      if (w === 'keep') structs.push(st.segments);
    }
    // An object left with nothing in it (its members all dropped): `{}`'s rules are the generic path's.
    const holds = new Set<string>();
    for (let i = 0; i < n; i++) {
      const segs = slots[i];
      if (segs === undefined) continue;
      for (let k = 1; k < segs.length; k++) holds.add(segs.slice(0, k).join('.'));
    }
    for (const st of structs) {
      for (let k = 1; k < st.length; k++) holds.add(st.slice(0, k).join('.'));
    }
    const needsGeneric = structs.some((st) => !holds.has(st.join('.'))) ? (true as const) : undefined;
    // `keep`: a listed path is a remaining slot (checked per record), a remaining object (always
    // there), or missing from every record of the layout.
    const keep: { slot: number; path: string }[] = [];
    for (const parts of f.keep ?? []) {
      const path = parts.join('.');
      const slot = slots.findIndex(
        (segs, i) => segs !== undefined && nulls?.[i] !== 1 && segs.join('.') === path,
      );
      keep.push({
        slot: slot >= 0 ? slot : structs.some((st) => st.join('.') === path) ? OBJECT_FIELD : ABSENT_FIELD,
        path,
      });
    }
    // With field lists the depth guard judges what remains (readerDepthLimit): objects count one
    // level each, and so does an empty list (also one left where `only` makes a scalar null).
    let depth = 0;
    const lists: number[] = [];
    if (this.cfg.fields !== undefined) {
      depth = 1;
      for (let i = 0; i < n; i++) {
        const segs = slots[i];
        if (segs === undefined) continue;
        if (nulls?.[i] !== 1) depth = Math.max(depth, segs.length);
      }
      for (const st of structs) depth = Math.max(depth, st.length + 1);
      for (let i = 0; i < n; i++) {
        const segs = slots[i];
        if (segs !== undefined && segs.length + 1 > depth) lists.push(i);
      }
    }
    return { slots, nulls, structs, keep, depth, lists, ...(needsGeneric ? { needsGeneric } : {}) };
  }

  /**
   * Only the field lists of `check` (drop, then only): a record the fast path admitted, read
   * back as a generic record, gets the shape `check` would have given it.
   */
  project(record: Record<string, JsonValue>, table: string): Record<string, JsonValue> {
    const f = this.fieldsFor(table);
    let value = record;
    if (f.drop) value = project(value, f.drop, false) as Record<string, JsonValue>;
    if (f.only) value = project(value, f.only, true) as Record<string, JsonValue>;
    return value;
  }

  /** Applies every rule to a record routed to `table`. */
  async check(record: Record<string, JsonValue>, table: string): Promise<RuleResult> {
    const g = this.cfg.guards;
    if (this.allow !== undefined && !this.allow.test(table)) {
      return fail(
        DeadLetterReason.GuardAllowTables,
        `guard allowTables: table '${table}' does not match /^(?:${g?.allowTables})$/`,
      );
    }
    const f = this.fieldsFor(table);
    let value = record;
    if (f.drop) value = project(value, f.drop, false) as Record<string, JsonValue>;
    if (f.only) value = project(value, f.only, true) as Record<string, JsonValue>;
    if (this.cfg.fields !== undefined) {
      // With field lists the reader only enforced a ceiling (readerDepthLimit): the depth guard
      // judges what remains after them.
      const depth = nestingDepth(value);
      const limit = this.cfg.limits.maxNestingDepth;
      if (depth > limit) return fail(DeadLetterReason.GuardMaxDepth, depthGuardDetail(table, depth, limit));
    }
    if (f.keep) {
      const missing = f.keep.filter((p) => !hasValueAt(value, p, 0));
      if (missing.length > 0) {
        return fail(
          DeadLetterReason.MissingKeptField,
          `table '${table}': kept field ${missing.map((p) => p.join('.')).join(', ')} missing or null (fields keep)`,
        );
      }
    }
    const newTable = g?.maxTables !== undefined && !this.tables.has(table);
    if (newTable && this.tables.size >= g.maxTables!) {
      return fail(
        DeadLetterReason.GuardMaxTables,
        `guard maxTables: table '${table}' would be table ${this.tables.size + 1} in namespace '${this.cfg.namespace}', limit ${g.maxTables}`,
      );
    }
    if (newTable) this.tables.add(table);
    return { ok: true, value };
  }

  /**
   * The same rules for a typed record (an Avro row and its writer schema as a struct): field lists
   * reshape the struct and the row alike (the struct once per writer schema and table), `keep`
   * checks the row, and the guards judge the reshaped struct.
   */
  async checkTyped(row: Row, struct: StructType, table: string): Promise<TypedRuleResult> {
    const g = this.cfg.guards;
    if (this.allow !== undefined && !this.allow.test(table)) {
      return fail(
        DeadLetterReason.GuardAllowTables,
        `guard allowTables: table '${table}' does not match /^(?:${g?.allowTables})$/`,
      ) as TypedRuleResult;
    }
    const shaped = this.shapedStruct(struct, table);
    const shapedRow = shaped === struct ? row : (projectTypedValue(row, shaped) as Row);
    const f = this.fieldsFor(table);
    if (f.keep) {
      // Judged on the reshaped row, as for JSON: a kept field must be there after drop / only.
      const missing = f.keep.filter((p) => !hasTypedValueAt(shapedRow, p, 0));
      if (missing.length > 0) {
        return fail(
          DeadLetterReason.MissingKeptField,
          `table '${table}': kept field ${missing.map((p) => p.join('.')).join(', ')} missing or null (fields keep)`,
        ) as TypedRuleResult;
      }
    }
    const newTable = g?.maxTables !== undefined && !this.tables.has(table);
    if (newTable && this.tables.size >= g.maxTables!) {
      return fail(
        DeadLetterReason.GuardMaxTables,
        `guard maxTables: table '${table}' would be table ${this.tables.size + 1} in namespace '${this.cfg.namespace}', limit ${g.maxTables}`,
      ) as TypedRuleResult;
    }
    if (newTable) this.tables.add(table);
    return { ok: true, struct: shaped, row: shapedRow };
  }

  /** Only the field lists of `checkTyped` (the committer reshapes pending rows the ingest admitted). */
  shapeTyped(row: Row, struct: StructType, table: string): { struct: StructType; row: Row } {
    const shaped = this.shapedStruct(struct, table);
    return { struct: shaped, row: shaped === struct ? row : (projectTypedValue(row, shaped) as Row) };
  }

  private readonly shaped = new WeakMap<StructType, Map<string, StructType>>();

  /** `struct` under the table's field lists (cached per struct object and table). */
  shapedStruct(struct: StructType, table: string): StructType {
    let byTable = this.shaped.get(struct);
    if (!byTable) {
      byTable = new Map();
      this.shaped.set(struct, byTable);
    }
    let out = byTable.get(table);
    if (out === undefined) {
      const f = this.fieldsFor(table);
      let t: StructType = struct;
      if (f.drop) t = projectType(t, f.drop, false) as StructType;
      if (f.only) t = projectType(t, f.only, true) as StructType;
      out = t;
      byTable.set(table, out);
    }
    return out;
  }
}

function fail(reason: DeadLetterReason, detail: string): RuleResult {
  return { ok: false, reason, detail };
}
