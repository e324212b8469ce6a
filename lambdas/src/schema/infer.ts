/**
 * JSON → Iceberg schema inference (DESIGN §3), conservative and stable:
 *
 * | JSON value                                   | Iceberg type                          |
 * |----------------------------------------------|---------------------------------------|
 * | integer literal (`bigint` from the parser)   | long                                  |
 * | number with fraction or exponent             | double (`1.0` too)                    |
 * | string: ISO-8601 instant with zone           | timestamptz                           |
 * | string: `yyyy-MM-dd`, a real date            | date                                  |
 * | other string                                 | string                                |
 * | boolean                                      | boolean                               |
 * | object                                       | struct (recursive)                    |
 * | array                                        | list of the unified element type      |
 * | null, `[]`, `{}`                             | no column until a typed value arrives |
 *
 * All fields are optional. Keys become lower-case `[a-z0-9_]` column names (facts §3.5); two keys
 * of one object that map to the same column are a conflict. Within a record and across a batch
 * types unify: long+double → double; date/timestamptz + string (or each other) → string;
 * struct+struct → union of fields; list+list → list of the unified element; int+long → long,
 * float+double → double, decimal(P,S)+decimal(Q,S) → decimal(max,S) (for hinted/foreign types);
 * anything else is a {@link TypeConflict}, which the caller dead-letters.
 *
 * Field ids in results are placeholders (1, 2, … in a deterministic order); the table's real ids
 * are assigned by schema evolution (`unionByName`).
 */
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import {
  type IcebergType,
  isPrimitive,
  type ListType,
  type NestedField,
  type PrimitiveType,
  parsePrimitive,
  type StructType,
  T,
  typeToString,
} from '../iceberg/types.ts';
import { JsonNumberText, type JsonValue } from '../records/json-line.ts';
import { columnNameOf } from './column-name.ts';
import { hasTypedValue } from './json-shape.ts';
import { isInstantString, parseDate } from './temporal.ts';

/** The type a JSON string infers as: `date` (`yyyy-MM-dd`), `timestamptz` (ISO instant with zone) or `string`. */
export function classifyString(s: string, detectTimestamps = true): PrimitiveType {
  if (!detectTimestamps) return T.string;
  const n = s.length;
  if (n === 10) return parseDate(s) === undefined ? T.string : T.date;
  return n >= 20 && isInstantString(s) ? T.timestamptz : T.string;
}

/** Options for inference. */
export interface InferOptions {
  /**
   * Type overrides by dotted column path (`amount`, `metadata.version`, `items.element`), as
   * Iceberg primitive type strings (`timestamptz`, `decimal(12,2)`). A hinted field takes the
   * hinted type whatever its values look like; conversion then checks each value.
   */
  readonly hints?: Readonly<Record<string, string>>;
  /** Recognise ISO-8601 instants and dates in strings. Default true. */
  readonly detectTimestamps?: boolean;
  /**
   * Dotted column paths the records' own schema declares required (a Kafka Connect field with
   * `optional: false`). Inference leaves every field optional; a batch's type makes these
   * required where its rows keep to it (schema/nullability.ts).
   */
  readonly required?: readonly string[];
}

/** Why two observations of one field cannot share a column. */
export interface TypeConflict {
  /**
   * `type`: incompatible types; `name-collision`: two keys map to one column; `illegal-name`;
   * `value`: a number no inferred column holds (an integer beyond long, a number beyond double).
   */
  readonly kind: 'type' | 'name-collision' | 'illegal-name' | 'value';
  /** Dotted column path (`metadata.version`; `items.element` inside lists). */
  readonly path: string;
  /** The type (or key) seen first. */
  readonly existing: string;
  /** The type (or key) that does not fit. */
  readonly incoming: string;
  readonly message: string;
}

/** Result of non-throwing inference and unification. */
export type InferResult<Ty> =
  | { readonly ok: true; readonly type: Ty }
  | { readonly ok: false; readonly conflict: TypeConflict };

// ---------------------------------------------------------------------------------------------
// Accumulated shapes: mutable while a batch is inferred; only new or widened fields allocate.

interface FieldSlot {
  readonly name: string;
  /** The JSON key that last set the slot (for collision messages: the key of this object). */
  key: string;
  readonly path: string;
  readonly hint: PrimitiveType | undefined;
  node: Node | undefined;
  /** Visit stamp of the object that last set this slot (detects key collisions). */
  stamp: number;
}
interface StructNode {
  readonly kind: 'struct';
  /** Dotted column path of the struct ('' for the record). */
  readonly path: string;
  readonly slots: Map<string, FieldSlot>;
}
interface ListNode {
  readonly kind: 'list';
  readonly elementPath: string;
  readonly elementHint: PrimitiveType | undefined;
  element: Node | undefined;
}
type Node = PrimitiveType | StructNode | ListNode;

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

class Conflict {
  constructor(readonly conflict: TypeConflict) {}
}

function conflictOf(kind: TypeConflict['kind'], path: string, existing: string, incoming: string): Conflict {
  const where = path === '' ? 'the record' : `field '${path}'`;
  const message =
    kind === 'type'
      ? `type conflict at ${where}: ${existing} vs ${incoming}`
      : kind === 'value'
        ? `${incoming} at ${where} is beyond the range of ${existing} (a hint such as decimal(38,0) or string keeps it)`
        : kind === 'name-collision'
          ? `keys '${existing}' and '${incoming}' both map to column '${path}'`
          : `key '${incoming}' at ${where} cannot be made a legal column name`;
  return new Conflict({ kind, path, existing, incoming, message });
}

function nodeName(n: Node): string {
  return n.kind === 'struct' ? 'struct' : n.kind === 'list' ? 'list' : typeToString(n);
}

/**
 * Infers and unifies the schema of many records. Add records one by one; a record that conflicts
 * with what was seen is rolled back (the accumulated schema is unchanged) and its conflict
 * returned, so a batch can dead-letter it and go on.
 */
export class StructInferrer {
  private readonly root: StructNode = { kind: 'struct', path: '', slots: new Map() };
  /** Hinted types by dotted column path: they declare a column's type (and may promote it). */
  readonly hints: ReadonlyMap<string, PrimitiveType>;
  /** Column paths declared required ({@link InferOptions.required}). */
  readonly required: ReadonlySet<string>;
  private readonly detect: boolean;
  private stamp = 0;
  /** Undo actions for the record being added; allocated only when something changes. */
  private undo: (() => void)[] = [];

  constructor(options: InferOptions = {}) {
    this.hints = parseHints(options.hints);
    this.required = new Set(options.required);
    this.detect = options.detectTimestamps !== false;
  }

  /** Adds one record; returns the conflict (and leaves the schema as it was) or undefined. */
  add(record: object): TypeConflict | undefined {
    this.undo = [];
    if (Array.isArray(record) || record instanceof JsonNumberText) {
      return conflictOf('type', '', 'struct', 'list').conflict; // a record must be an object
    }
    try {
      this.mergeObject(this.root, record as Record<string, JsonValue>);
      return undefined;
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
      for (let i = this.undo.length - 1; i >= 0; i--) this.undo[i]!();
      return e.conflict;
    }
  }

  /** The unified struct so far, with placeholder field ids 1, 2, …. */
  result(): StructType {
    return assignIds(buildStruct(this.root) ?? { kind: 'struct', fields: [] });
  }

  /** Infers one value on its own (used by {@link inferType}). */
  inferValue(value: JsonValue, path: string): IcebergType | undefined {
    this.undo = [];
    const node = this.merge(undefined, value, path, this.hints.get(path));
    const t = node === undefined ? undefined : buildType(node);
    return t === undefined ? undefined : assignIdsInType(t, { next: 1 });
  }

  private merge(
    node: Node | undefined,
    v: JsonValue,
    path: string,
    hint: PrimitiveType | undefined,
  ): Node | undefined {
    if (v === null) return node;
    if (hint !== undefined) {
      // A hint fixes the type; values are checked on conversion. A value-less `[]` or `{}` is no
      // value, hinted or not: it adds no column.
      if (typeof v === 'object' && !(v instanceof JsonNumberText) && !hasTypedValue(v)) return node;
      return hint;
    }
    if (typeof v === 'object' && node !== undefined && !(v instanceof JsonNumberText)) {
      const kind = Array.isArray(v) ? 'list' : 'struct';
      if (node.kind !== kind) {
        // `[]` / `{}` carry no type: they neither conflict with a typed field nor fix one.
        if (!hasTypedValue(v)) return node;
        if (isEmptyNode(node)) node = undefined;
      }
    }
    switch (typeof v) {
      // A value no inferred column can hold is refused here, before it can type its column
      // and turn the good records of the batch into conflicts.
      case 'bigint':
        if (v < LONG_MIN || v > LONG_MAX) throw conflictOf('value', path, 'long', `integer ${v}`);
        return mergePrimitive(node, T.long, path);
      case 'number':
        if (!Number.isFinite(v)) throw conflictOf('value', path, 'double', 'a number');
        return mergePrimitive(node, T.double, path);
      case 'string':
        // A string column stays string whatever the text looks like: skip the timestamp scan.
        return node === T.string ? node : mergePrimitive(node, this.classify(v), path);
      case 'boolean':
        return mergePrimitive(node, T.boolean, path);
      default:
        if (Array.isArray(v)) return this.mergeList(node, v, path);
        if (v instanceof JsonNumberText) {
          if (!Number.isFinite(v.value)) throw conflictOf('value', path, 'double', `number ${v.text}`);
          return mergePrimitive(node, T.double, path);
        }
        return this.mergeStruct(node, v, path);
    }
  }

  private classify(s: string): PrimitiveType {
    return classifyString(s, this.detect);
  }

  private mergeStruct(node: Node | undefined, v: Record<string, JsonValue>, path: string): Node {
    if (node === undefined) {
      node = { kind: 'struct', path, slots: new Map() };
    } else if (node.kind !== 'struct') {
      throw conflictOf('type', path, nodeName(node), 'struct');
    }
    this.mergeObject(node, v);
    return node;
  }

  private mergeObject(node: StructNode, v: Record<string, JsonValue>): void {
    const stamp = ++this.stamp;
    const slots = node.slots;
    for (const key in v) {
      // Column names are always legal, so a legal key that misses is simply new.
      let slot = slots.get(key);
      if (slot === undefined) slot = this.slotFor(node, key);
      if (slot.stamp === stamp) throw conflictOf('name-collision', slot.path, slot.key, key);
      slot.stamp = stamp;
      slot.key = key; // the key that set it in this object, for a collision later in it
      const before = slot.node;
      const after = this.merge(before, v[key]!, slot.path, slot.hint);
      if (after !== before) {
        const s = slot;
        s.node = after;
        this.undo.push(() => {
          s.node = before;
        });
      }
    }
  }

  private slotFor(node: StructNode, key: string): FieldSlot {
    const name = columnNameOf(key);
    const parent = node.path;
    if (name === undefined) throw conflictOf('illegal-name', parent, '', key);
    const existing = node.slots.get(name);
    if (existing !== undefined) return existing;
    const path = parent === '' ? name : `${parent}.${name}`;
    const slot: FieldSlot = { name, key, path, hint: this.hints.get(path), node: undefined, stamp: 0 };
    node.slots.set(name, slot);
    this.undo.push(() => node.slots.delete(name));
    return slot;
  }

  private mergeList(node: Node | undefined, v: JsonValue[], path: string): Node {
    let list: ListNode;
    if (node === undefined) {
      const elementPath = `${path}.element`;
      list = { kind: 'list', elementPath, elementHint: this.hints.get(elementPath), element: undefined };
    } else if (node.kind !== 'list') {
      throw conflictOf('type', path, nodeName(node), 'list');
    } else {
      list = node;
    }
    for (let i = 0; i < v.length; i++) {
      const before = list.element;
      const after = this.merge(before, v[i]!, list.elementPath, list.elementHint);
      if (after !== before) {
        list.element = after;
        if (list === node) {
          const l = list;
          this.undo.push(() => {
            l.element = before;
          });
        }
      }
    }
    return list;
  }
}

function mergePrimitive(node: Node | undefined, t: PrimitiveType, path: string): Node {
  if (node === t || node === undefined) return t; // singletons: the common case is one compare
  if (node.kind === 'struct' || node.kind === 'list') {
    if (isEmptyNode(node)) return t; // only `[]` / `{}` seen so far: no type to conflict with
    throw conflictOf('type', path, nodeName(node), typeToString(t));
  }
  const u = unifyPrimitive(node, t);
  if (u === undefined) throw conflictOf('type', path, typeToString(node), typeToString(t));
  return u;
}

/** A struct or list that has seen no typed value yet (so it has no column). */
function isEmptyNode(n: Node | undefined): boolean {
  if (n === undefined) return true;
  if (n.kind === 'list') return isEmptyNode(n.element);
  if (n.kind === 'struct') {
    for (const slot of n.slots.values()) if (!isEmptyNode(slot.node)) return false;
    return true;
  }
  return false;
}

const TEXTUAL = new Set(['string', 'date', 'timestamptz']);

/** The common type of two primitives under the rules in the module doc, or undefined. */
export function unifyPrimitive(a: PrimitiveType, b: PrimitiveType): PrimitiveType | undefined {
  if (a.kind === b.kind) {
    if (a.kind === 'decimal' && b.kind === 'decimal') {
      return a.scale === b.scale ? (a.precision >= b.precision ? a : b) : undefined;
    }
    if (a.kind === 'fixed' && b.kind === 'fixed') return a.length === b.length ? a : undefined;
    return a;
  }
  const pair = (x: string, y: string) => (a.kind === x && b.kind === y) || (a.kind === y && b.kind === x);
  if (pair('long', 'double')) return T.double;
  if (pair('int', 'long')) return T.long;
  if (pair('float', 'double')) return T.double;
  // Dates and instants were strings in the JSON; when they mix, string holds every value.
  if (TEXTUAL.has(a.kind) && TEXTUAL.has(b.kind)) return T.string;
  return undefined;
}

function parseHints(hints: Readonly<Record<string, string>> | undefined): ReadonlyMap<string, PrimitiveType> {
  const out = new Map<string, PrimitiveType>();
  if (hints === undefined) return out;
  for (const [path, type] of Object.entries(hints)) {
    try {
      out.set(path, parsePrimitive(type));
    } catch (e) {
      throw new FloeError(
        ErrorKind.ConfigInvalid,
        `inference hint for '${path}' has invalid type '${type}'`,
        {
          cause: e,
          context: { field: path, value: type },
        },
      );
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shapes → Iceberg types. Empty structs and element-less lists are dropped (no column yet).

function buildType(n: Node): IcebergType | undefined {
  if (n.kind === 'struct') return buildStruct(n);
  if (n.kind === 'list') {
    const element = n.element === undefined ? undefined : buildType(n.element);
    return element === undefined
      ? undefined
      : { kind: 'list', elementId: 0, elementRequired: false, element };
  }
  return n;
}

function buildStruct(n: StructNode): StructType | undefined {
  const fields: NestedField[] = [];
  for (const slot of n.slots.values()) {
    const type = slot.node === undefined ? undefined : buildType(slot.node);
    if (type !== undefined) fields.push({ id: 0, name: slot.name, required: false, type });
  }
  return fields.length === 0 ? undefined : { kind: 'struct', fields };
}

/**
 * Renumbers a struct's field ids 1, 2, … the way Iceberg's Java `TypeUtil.assignFreshIds` does:
 * all fields of a struct first, then each field's nested children.
 */
export function assignIds(s: StructType): StructType {
  return assignIdsInType(s, { next: 1 }) as StructType;
}

function assignIdsInType(t: IcebergType, counter: { next: number }): IcebergType {
  switch (t.kind) {
    case 'struct': {
      const ids = t.fields.map(() => counter.next++);
      return {
        kind: 'struct',
        fields: t.fields.map((f, i) => ({ ...f, id: ids[i]!, type: assignIdsInType(f.type, counter) })),
      };
    }
    case 'list': {
      const elementId = counter.next++;
      return { ...t, elementId, element: assignIdsInType(t.element, counter) };
    }
    case 'map': {
      const keyId = counter.next++;
      const valueId = counter.next++;
      return {
        ...t,
        keyId,
        valueId,
        key: assignIdsInType(t.key, counter),
        value: assignIdsInType(t.value, counter),
      };
    }
    default:
      return t;
  }
}

// ---------------------------------------------------------------------------------------------
// Public entry points.

/**
 * The Iceberg type of one JSON value, or `undefined` when it carries no type yet (null, `[]`,
 * `{}`, or only such values inside). `path` is the value's dotted column path, used for hints
 * and in conflict messages. Throws `FloeError(SchemaIncompatible)` with the
 * {@link TypeConflict} in `context.conflict` when the value conflicts with itself (`[1, "a"]`).
 */
export function inferType(
  value: JsonValue,
  path: string,
  options: InferOptions = {},
): IcebergType | undefined {
  const inferrer = new StructInferrer(options);
  try {
    return inferrer.inferValue(value, path);
  } catch (e) {
    if (e instanceof Conflict) throw conflictError(e.conflict);
    throw e;
  }
}

/**
 * The struct of one record (an object from {@link parseJsonRecord}). Throws
 * `FloeError(SchemaIncompatible)` carrying the {@link TypeConflict} in `context.conflict`;
 * use {@link tryInferStruct} or {@link StructInferrer} to get it as a value.
 */
export function inferStruct(record: object, options: InferOptions = {}): StructType {
  const r = tryInferStruct(record, options);
  if (!r.ok) throw conflictError(r.conflict);
  return r.type;
}

/** Like {@link inferStruct}, returning the conflict instead of throwing. */
export function tryInferStruct(record: object, options: InferOptions = {}): InferResult<StructType> {
  const inferrer = new StructInferrer(options);
  const conflict = inferrer.add(record);
  return conflict === undefined ? { ok: true, type: inferrer.result() } : { ok: false, conflict };
}

function conflictError(conflict: TypeConflict): FloeError {
  return new FloeError(ErrorKind.SchemaIncompatible, conflict.message, {
    context: { conflict, field: conflict.path, value: conflict.incoming },
  });
}

/** The {@link TypeConflict} carried by an error from {@link inferStruct} / {@link inferType}. */
export function conflictFromError(e: unknown): TypeConflict | undefined {
  return isFloeError(e, ErrorKind.SchemaIncompatible)
    ? (e.context.conflict as TypeConflict | undefined)
    : undefined;
}

/**
 * Unifies two inferred structs (e.g. of two batches): fields matched by name, `a`'s order first,
 * then `b`'s new fields; types unified by the rules above. Ids are renumbered 1, 2, ….
 */
export function unifyStructs(a: StructType, b: StructType): InferResult<StructType> {
  try {
    return { ok: true, type: assignIds(unifyStructAt(a, b, '')) };
  } catch (e) {
    if (e instanceof Conflict) return { ok: false, conflict: e.conflict };
    throw e;
  }
}

/** Unifies two inferred types at `path` (ids of the result are not renumbered). */
export function unifyTypes(a: IcebergType, b: IcebergType, path = ''): InferResult<IcebergType> {
  try {
    return { ok: true, type: unifyAt(a, b, path) };
  } catch (e) {
    if (e instanceof Conflict) return { ok: false, conflict: e.conflict };
    throw e;
  }
}

function unifyAt(a: IcebergType, b: IcebergType, path: string): IcebergType {
  if (a.kind === 'struct' && b.kind === 'struct') return unifyStructAt(a, b, path);
  if (a.kind === 'list' && b.kind === 'list') {
    const element = unifyAt(a.element, b.element, `${path}.element`);
    const l: ListType = { ...a, element, elementRequired: a.elementRequired && b.elementRequired };
    return l;
  }
  if (a.kind === 'map' && b.kind === 'map') {
    const key = unifyAt(a.key, b.key, `${path}.key`);
    const value = unifyAt(a.value, b.value, `${path}.value`);
    return { ...a, key, value, valueRequired: a.valueRequired && b.valueRequired };
  }
  if (isPrimitive(a) && isPrimitive(b)) {
    const u = unifyPrimitive(a, b);
    if (u !== undefined) return u;
  }
  throw conflictOf('type', path, typeToString(a), typeToString(b));
}

function unifyStructAt(a: StructType, b: StructType, path: string): StructType {
  const byName = new Map(b.fields.map((f) => [f.name, f]));
  const fields: NestedField[] = a.fields.map((fa) => {
    const fb = byName.get(fa.name);
    if (fb === undefined) return fa.required ? { ...fa, required: false } : fa;
    byName.delete(fa.name);
    const p = path === '' ? fa.name : `${path}.${fa.name}`;
    return { ...fa, required: fa.required && fb.required, type: unifyAt(fa.type, fb.type, p) };
  });
  // A field only one side has was missing in the other's records: optional.
  for (const fb of byName.values()) fields.push(fb.required ? { ...fb, required: false } : fb);
  return { kind: 'struct', fields };
}
