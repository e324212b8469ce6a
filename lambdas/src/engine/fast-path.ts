/**
 * The columnar fast path's front end, for every routing rule and configuration: a record scanned
 * from its bytes (records/shape-scanner.ts) is routed, checked against its table's field lists
 * and guards, and appended to its table's columns — no object per record.
 *
 * - **Routing.** The values the router reads (`tableField`, the template's placeholders, the
 *   routing field, consolidation fields; dotted paths too) are found by slot per record layout and
 *   written, as the record's bytes hold them, into one key; a hash lookup on the key's bytes
 *   (`BytesMap`) gives the route, so the router (and sanitising) runs once per distinct value.
 * - **Field lists and guards** (`RecordRules`): decided once per layout and table (which slots and
 *   objects remain, which must hold a value); per record only the kept fields' nulls are checked.
 * - **What it hands to the generic path** (answer `undefined`): records the scanner does not take,
 *   records a consolidation rule takes and upsert tables' records (both reshape records), and
 *   layouts whose field lists leave an empty object.
 */
import { type FloeConfig, upsertFor } from '../config.ts';
import { isTombstoneBytes, type UpsertSpec } from '../records/change-event.ts';
import type { JsonObject } from '../records/json-line.ts';
import { type Shape, ShapeScanner, SlotKind } from '../records/shape-scanner.ts';
import { compileConsolidation } from '../routing/consolidate.ts';
import {
  ENVELOPE_PAYLOAD,
  parseTemplate,
  type RouteResult,
  type Router,
  splitNamespace,
} from '../routing/route.ts';
import { BytesMap } from './bytes-map.ts';
import { type Binding, type ColumnarTableBatch, RowOp } from './columnar-batch.ts';
import { DeadLetterReason } from './dead-letters.ts';
import {
  ABSENT_FIELD,
  depthGuardDetail,
  OBJECT_FIELD,
  type RecordRules,
  type ShapeRules,
  shapeAsIs,
} from './record-rules.ts';

/** A record the fast path refused: its dead letter's reason and detail (and table, if routed). */
export interface FastRefusal {
  readonly reason: DeadLetterReason;
  readonly detail: string;
  readonly table?: string;
}

/** `true`: taken; a refusal: dead-letter it; `undefined`: the generic path decides. */
export type FastOutcome = true | FastRefusal | undefined;

/** Where a record sits: its place in the input and where its bytes are. */
export interface RecordPlace {
  readonly seq: number;
  /** Index of the source (`sources` of the batches). */
  readonly source: number;
  readonly line: number;
  /** Offset of the record's first byte in its source (the load reads its bytes back from there). */
  readonly position: number;
}

const ABSENT = -1;
const STRUCT = -2;

/** Per table: its columns, and what its rules make of each layout. */
interface TableTarget {
  readonly table: string;
  readonly batch: ColumnarTableBatch;
  /** An upsert table's key and operation field (plain records: no envelope). */
  readonly upsert: UpsertSpec | undefined;
  /** By shape id. */
  readonly bindings: Map<number, LayoutBinding>;
  /** Counted against `guards.maxTables` (by a record that passed every other rule). */
  admitted: boolean;
  /** The source `takes` was last asked about, and its answer. */
  source: number;
  takes: boolean;
}

interface LayoutBinding {
  readonly binding: Binding | undefined;
  readonly rules: ShapeRules;
  /** An upsert table's layout: where its key and operation are, and what a delete keeps. */
  readonly change?: ChangeLayout;
}

/** Where an upsert table's key parts and operation are in a layout, and a delete's binding. */
interface ChangeLayout {
  /** Per key part (config order): its slot, or < 0 when the layout lacks it or holds an object. */
  readonly keySlots: Int32Array;
  /** The operation field's slot (< 0: absent); undefined without an operation field. */
  readonly opSlot: number | undefined;
  /** A delete's row is its key alone: the key's slots (in key order), with the rules on that. */
  readonly deleteBinding: Binding | undefined;
  readonly deleteRules: ShapeRules;
}

/** What a routing key maps to. */
type RouteEntry =
  | { readonly kind: 'table'; readonly target: TableTarget }
  | { readonly kind: 'refused'; readonly refusal: FastRefusal }
  | { readonly kind: 'generic' };

export interface FastPathOptions {
  readonly config: FloeConfig;
  readonly router: Router;
  /** Field lists and guards, when the configuration has any. */
  readonly rules?: RecordRules;
  /** The batch a table's records go to (created on the table's first record). */
  readonly batchFor: (table: string) => ColumnarTableBatch;
  /**
   * Whether the table takes records of `source` (asked once per table and source): false drops
   * them, as taken (the load history: the table holds that file already).
   */
  readonly takes?: (table: string, source: number) => boolean;
  /**
   * Take upsert tables' plain records too (their operation kept per row); else they go to the
   * generic path (the streaming ingest stages them as they came, for the committer to order).
   */
  readonly upserts?: boolean;
  /**
   * Hand Debezium tombstones to the generic path, which counts them (`floe load`, when an upsert
   * table reads Debezium envelopes); the streaming ingest counts them before the fast path.
   */
  readonly tombstones?: boolean;
}

export class FastPath {
  /** Tables that received records, with their batches. */
  readonly tables = new Map<string, ColumnarTableBatch>();
  private readonly scanner: ShapeScanner;
  /** Whether DynamoDB change records are read as changes (`source.framings`). */
  private readonly dynamodb: boolean;
  /** Whether Debezium tombstones are handed to the generic path (`FastPathOptions.tombstones`). */
  private readonly tombstones: boolean;
  private readonly cfg: FloeConfig;
  private readonly router: Router;
  private readonly rules: RecordRules | undefined;
  private readonly batchFor: (table: string) => ColumnarTableBatch;
  private readonly takes: ((table: string, source: number) => boolean) | undefined;
  private readonly upserts: boolean;
  private readonly consolidator: ReturnType<typeof compileConsolidation>;
  /** The JSON key paths the routing (and consolidation) reads. */
  private readonly refPaths: readonly (readonly string[])[];
  /** By shape id: the slot of each ref path (or ABSENT / STRUCT). */
  private readonly refSlots = new Map<number, Int32Array>();
  private readonly routes = new BytesMap<RouteEntry>(256);
  private readonly targets = new Map<string, TableTarget>();
  private key = new Uint8Array(256);

  constructor(options: FastPathOptions) {
    this.cfg = options.config;
    this.router = options.router;
    this.rules = options.rules;
    this.batchFor = options.batchFor;
    this.takes = options.takes;
    this.upserts = options.upserts === true;
    this.consolidator = compileConsolidation(this.cfg.consolidate ?? []);
    this.refPaths = routingPaths(this.cfg);
    this.scanner = new ShapeScanner({ maxDepth: readerDepth(this.cfg) });
    this.dynamodb = this.cfg.source.framings.has('dynamodb');
    this.tombstones = options.tombstones === true;
  }

  /** As `takeBytes`, for a record given as text (encoded to UTF-8 first). */
  take(raw: string, place: RecordPlace): FastOutcome {
    const bytes = encoder.encode(raw);
    return this.takeBytes(bytes, 0, bytes.length, place);
  }

  /**
   * Takes the record at `buf[start..end)` if it can: scans it, routes it, applies its table's
   * rules and appends it to the table's batch. Never throws for a record: a scan or a rule that
   * throws for a reason nobody foresaw hands the record to the generic path, which isolates it.
   */
  takeBytes(buf: Uint8Array, start: number, end: number, place: RecordPlace): FastOutcome {
    // A Debezium tombstone is the generic path's to count (it changes no rows).
    if (this.tombstones && isTombstoneBytes(buf, start, end)) return undefined;
    let shape: Shape | undefined;
    try {
      shape = this.scanner.scanBytes(buf, start, end);
      if (shape === undefined) return undefined;
      return this.place(shape, buf, start, end, place);
    } catch {
      return undefined;
    }
  }

  private place(shape: Shape, buf: Uint8Array, start: number, end: number, at: RecordPlace): FastOutcome {
    const entry = this.route(shape);
    if (entry.kind !== 'table') return entry.kind === 'refused' ? entry.refusal : undefined;
    const target = entry.target;
    let lb = target.bindings.get(shape.id);
    if (lb === undefined) {
      lb = this.layout(shape, target);
      target.bindings.set(shape.id, lb);
    }
    let r = lb.rules;
    let binding = lb.binding;
    if (lb.change) {
      // An upsert table's record: a whole key and a known operation, else the generic path
      // refuses it (naming the field and value). A delete's row is its key alone.
      const op = this.changeOf(lb.change);
      if (op === undefined) return undefined;
      if (op === RowOp.Delete) {
        r = lb.change.deleteRules;
        binding = lb.change.deleteBinding;
      }
    }
    if (binding === undefined) return undefined;
    const kinds = this.scanner.kinds;
    if (r.depth > 0) {
      // The depth guard first (as `RecordRules.check`): objects, and each `[]` a level.
      let depth = r.depth;
      for (const i of r.lists) {
        if (kinds[i] === SlotKind.EmptyList) depth = Math.max(depth, r.slots[i]!.length + 1);
      }
      const limit = this.cfg.limits.maxNestingDepth;
      if (depth > limit) {
        return {
          reason: DeadLetterReason.GuardMaxDepth,
          detail: depthGuardDetail(target.table, depth, limit),
          table: target.table,
        };
      }
    }
    if (r.keep.length > 0) {
      const missing: string[] = [];
      for (const k of r.keep) {
        if (k.slot === OBJECT_FIELD) continue;
        const kind = k.slot === ABSENT_FIELD ? SlotKind.Null : kinds[k.slot];
        if (kind === SlotKind.Null || kind === SlotKind.EmptyList) missing.push(k.path);
      }
      if (missing.length > 0) {
        return {
          reason: DeadLetterReason.MissingKeptField,
          detail: `table '${target.table}': kept field ${missing.join(', ')} missing or null (fields keep)`,
          table: target.table,
        };
      }
    }
    if (!target.admitted && this.rules) {
      const refused = this.rules.admitTable(target.table);
      if (refused) return { ...refused, table: target.table };
      target.admitted = true;
    }
    if (target.source !== at.source) {
      target.source = at.source;
      target.takes = this.takes?.(target.table, at.source) ?? true;
    }
    if (!target.takes) return true;
    target.batch.append(this.scanner, binding, at.seq, at.source, at.line, buf, start, end, at.position);
    return true;
  }

  /** What a layout's records are, for a table: the rules' binding (and an upsert table's change layout). */
  private layout(shape: Shape, target: TableTarget): LayoutBinding {
    const rulesOf = (s: Shape) => (this.rules ? this.rules.bindShape(s, target.table) : shapeAsIs(s));
    const rules = rulesOf(shape);
    const upsert = target.upsert;
    const op = upsert ? RowOp.Upsert : RowOp.Append;
    const binding = rules.needsGeneric
      ? undefined
      : target.batch.bind(rules.slots, rules.structs, rules.nulls, { op });
    if (!upsert) return { binding, rules };
    const same = (keys: readonly string[], path: readonly string[]) =>
      keys.length === path.length && keys.every((k, i) => k === path[i]);
    const keyPaths = upsert.key.map((k) => k.split('.'));
    const keySlots = Int32Array.from(keyPaths, (p) => shape.slots.findIndex((s) => same(s.keys, p)));
    const opField = upsert.operationField;
    const opSlot = opField === undefined ? undefined : shape.slots.findIndex((s) => same(s.keys, [opField]));
    // The key-only view of the layout: the key's slots in key order, and the objects around them.
    const keyShape: Shape = {
      id: -1,
      slots: [...keySlots].filter((i) => i >= 0).map((i) => shape.slots[i]!),
      structs: [],
      structNodes: shape.structNodes.filter((st) =>
        keyPaths.some((p) => p.length > st.keys.length && same(st.keys, p.slice(0, st.keys.length))),
      ),
    };
    const keyRules = rulesOf(keyShape);
    // Back to the layout's slots: key part k's rules apply to its slot.
    const n = shape.slots.length;
    const slots: (readonly string[] | undefined)[] = new Array(n).fill(undefined);
    const order = new Int32Array(n);
    let nulls: Uint8Array | undefined;
    const scannerSlot: number[] = [];
    let k = 0;
    for (let part = 0; part < keySlots.length; part++) {
      const i = keySlots[part]!;
      if (i < 0) continue;
      slots[i] = keyRules.slots[k];
      order[i] = part;
      if (keyRules.nulls?.[k] === 1) {
        nulls ??= new Uint8Array(n);
        nulls[i] = 1;
      }
      scannerSlot[k] = i;
      k++;
    }
    const remap = (slot: number) => (slot >= 0 ? scannerSlot[slot]! : slot);
    const deleteRules: ShapeRules = {
      ...keyRules,
      slots,
      nulls,
      keep: keyRules.keep.map((x) => ({ ...x, slot: remap(x.slot) })),
      lists: keyRules.lists.map(remap),
    };
    const deleteBinding = keyRules.needsGeneric
      ? undefined
      : target.batch.bind(slots, keyRules.structs, nulls, { order, op: RowOp.Delete });
    return { binding, rules, change: { keySlots, opSlot, deleteBinding, deleteRules } };
  }

  /**
   * The operation of the record just scanned (`RowOp`), or undefined when the generic path must
   * judge it: a key part missing, null, a list, an object or a fraction; an operation missing,
   * not text or unknown.
   */
  private changeOf(c: ChangeLayout): number | undefined {
    const sc = this.scanner;
    for (let k = 0; k < c.keySlots.length; k++) {
      const slot = c.keySlots[k]!;
      if (slot < 0) return undefined;
      const kind = sc.kinds[slot];
      if (kind !== SlotKind.String && kind !== SlotKind.Int && kind !== SlotKind.Bool) return undefined;
    }
    if (c.opSlot === undefined) return RowOp.Upsert;
    if (c.opSlot < 0 || sc.kinds[c.opSlot] !== SlotKind.String) return undefined;
    return operationOf(sc.bytesOf(c.opSlot), sc.byteStart[c.opSlot]!, sc.byteEnd[c.opSlot]!);
  }

  /** The route of the record just scanned: by the bytes of the values the router reads. */
  private route(shape: Shape): RouteEntry {
    let refs = this.refSlots.get(shape.id);
    if (refs === undefined) {
      // A DynamoDB change record's shape: the generic path routes and reads it (its row is its
      // unmarshalled image, records/dynamodb-change.ts). Decided once per shape.
      refs = this.dynamodb && isDynamoDbShape(shape) ? CHANGE_RECORD : refSlotsOf(shape, this.refPaths);
      this.refSlots.set(shape.id, refs);
    }
    if (refs === CHANGE_RECORD) return GENERIC;
    const len = this.routingKey(refs);
    let entry = this.routes.get(this.key, 0, len);
    if (entry === undefined) {
      entry = this.resolve(refs);
      this.routes.set(this.key, 0, len, entry);
    }
    return entry;
  }

  /** Writes the routing key of the record just scanned into `this.key`; returns its length. */
  private routingKey(refs: Int32Array): number {
    const sc = this.scanner;
    let n = 0;
    for (let r = 0; r < refs.length; r++) {
      const slot = refs[r]!;
      if (slot < 0) {
        this.ensureKey(n + 1);
        this.key[n++] = slot === ABSENT ? 0 : 1;
        continue;
      }
      const kind = sc.kinds[slot]!;
      const from = sc.byteStart[slot]!;
      const to = sc.byteEnd[slot]!;
      const bytes = sc.bytesOf(slot);
      const len = to - from;
      this.ensureKey(n + 5 + len);
      const key = this.key;
      key[n++] = 2 + kind;
      key[n++] = len & 0xff;
      key[n++] = (len >>> 8) & 0xff;
      key[n++] = (len >>> 16) & 0xff;
      key[n++] = len >>> 24;
      for (let j = from; j < to; j++) key[n++] = bytes[j]!;
    }
    return n;
  }

  private ensureKey(need: number): void {
    if (need <= this.key.length) return;
    const grown = new Uint8Array(Math.max(need, this.key.length * 2));
    grown.set(this.key);
    this.key = grown;
  }

  /** The route of a routing key not seen before: the router over the values it reads. */
  private resolve(refs: Int32Array): RouteEntry {
    const record = this.routingView(refs);
    if (this.consolidator?.(record as JsonObject) !== undefined) return { kind: 'generic' };
    const route: RouteResult = this.router(record);
    if (!route.ok)
      return { kind: 'refused', refusal: { reason: routeReason(route.reason), detail: route.detail } };
    const upsert = upsertFor(this.cfg, route.table);
    if (upsert && (!this.upserts || upsert.envelope !== undefined)) return { kind: 'generic' };
    const refusal = this.rules?.tableRefusal(route.table);
    if (refusal) return { kind: 'refused', refusal: { ...refusal, table: route.table } };
    return { kind: 'table', target: this.target(route.table, upsert) };
  }

  /** The record as the router sees it: the values at the paths it reads, nothing else. */
  private routingView(refs: Int32Array): Record<string, unknown> {
    const sc = this.scanner;
    const out: Record<string, unknown> = {};
    for (let r = 0; r < refs.length; r++) {
      const slot = refs[r]!;
      if (slot === ABSENT) continue;
      let value: unknown;
      if (slot === STRUCT) value = {};
      else {
        const kind = sc.kinds[slot];
        value =
          kind === SlotKind.Int
            ? BigInt(sc.nums[slot]!)
            : kind === SlotKind.EmptyList
              ? []
              : sc.valueAt(slot);
      }
      putAt(out, this.refPaths[r]!, value);
    }
    return out;
  }

  private target(table: string, upsert: UpsertSpec | undefined): TableTarget {
    let t = this.targets.get(table);
    if (t === undefined) {
      const batch = this.batchFor(table);
      t = { table, batch, upsert, bindings: new Map(), admitted: false, source: -1, takes: true };
      this.targets.set(table, t);
      this.tables.set(table, batch);
    }
    return t;
  }
}

const encoder = new TextEncoder();

const GENERIC: RouteEntry = Object.freeze({ kind: 'generic' });
/** The routing slots of a DynamoDB change record's shape: none, it takes the generic path. */
const CHANGE_RECORD = new Int32Array(0);

/** A DynamoDB change record's top level: `eventSource` and a `dynamodb` object (records/dynamodb-change.ts). */
function isDynamoDbShape(shape: Shape): boolean {
  return (
    shape.structNodes.some((n) => n.keys.length === 1 && n.keys[0] === 'dynamodb') &&
    shape.slots.some((s) => s.keys.length === 1 && s.keys[0] === 'eventSource')
  );
}

/** The scanner's depth ceiling: the guard, or (with field lists, judged after them) the reader's. */
function readerDepth(cfg: FloeConfig): number {
  return cfg.fields === undefined ? cfg.limits.maxNestingDepth : Math.max(cfg.limits.maxNestingDepth, 512);
}

/** The JSON key paths the router and the consolidation rules read, each once. */
export function routingPaths(cfg: FloeConfig): string[][] {
  const paths = new Map<string, string[]>();
  const add = (dotted: string) => {
    if (!paths.has(dotted)) paths.set(dotted, dotted.split('.'));
  };
  const r = cfg.routing;
  if (r.tableField !== undefined) add(r.tableField);
  if (r.template !== undefined) {
    const t = splitNamespace(parseTemplate(r.template));
    for (const part of [...(t.namespace ?? []), ...t.table])
      if (typeof part !== 'string') add(part.path.join('.'));
  }
  add(r.routingField);
  // The router also looks a path up inside a wrapped envelope's `payload` (routing/route.ts).
  for (const dotted of [...paths.keys()])
    if (!dotted.startsWith(`${ENVELOPE_PAYLOAD}.`) && dotted !== ENVELOPE_PAYLOAD)
      add(`${ENVELOPE_PAYLOAD}.${dotted}`);
  for (const c of cfg.consolidate ?? []) {
    for (const p of Object.keys(c.when ?? {})) add(p);
    for (const d of c.discriminators) add(d);
    for (const m of (c.variantColumn ?? '').matchAll(/\{([^{}]+)\}/g)) add(m[1]!);
  }
  return [...paths.values()];
}

/** For each path, the slot whose JSON keys are exactly it, STRUCT for an object there, else ABSENT. */
function refSlotsOf(shape: Shape, paths: readonly (readonly string[])[]): Int32Array {
  const out = new Int32Array(paths.length);
  for (let r = 0; r < paths.length; r++) {
    const p = paths[r]!;
    const same = (keys: readonly string[]) => keys.length === p.length && keys.every((k, i) => k === p[i]);
    const slot = shape.slots.findIndex((s) => same(s.keys));
    out[r] = slot >= 0 ? slot : shape.structNodes.some((s) => same(s.keys)) ? STRUCT : ABSENT;
  }
  return out;
}

/** `o[path] = value`, creating objects on the way; keys stay own data properties (`__proto__`). */
function putAt(o: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let at = o;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    if (!Object.hasOwn(at, k) || typeof at[k] !== 'object' || at[k] === null) define(at, k, {});
    at = at[k] as Record<string, unknown>;
  }
  define(at, path[path.length - 1]!, value);
}

function define(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** `c`, `r`, `u`, `insert`, `update`, `upsert` → upsert; `d`, `delete` → delete (any case); else undefined. */
function operationOf(b: Uint8Array, from: number, to: number): number | undefined {
  const n = to - from;
  if (n === 0 || n > 6) return undefined;
  let text = '';
  for (let i = from; i < to; i++) {
    const c = b[i]!;
    if (c >= 0x80) return undefined;
    text += String.fromCharCode(c >= 65 && c <= 90 ? c + 32 : c);
  }
  if (text === 'd' || text === 'delete') return RowOp.Delete;
  if (
    text === 'c' ||
    text === 'r' ||
    text === 'u' ||
    text === 'insert' ||
    text === 'update' ||
    text === 'upsert'
  )
    return RowOp.Upsert;
  return undefined;
}

export function routeReason(reason: 'no-route' | 'illegal-name' | 'not-allowed'): DeadLetterReason {
  if (reason === 'illegal-name') return DeadLetterReason.IllegalTableName;
  if (reason === 'not-allowed') return DeadLetterReason.TableNotAllowed;
  return DeadLetterReason.NoRoute;
}
