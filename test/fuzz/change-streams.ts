/**
 * Change streams for upsert tables (issue 13), and an independent model of what the table must
 * show afterwards, written from the documented semantics, not from lambdas/src:
 *
 * - a record's operation: no `operationField` → every record upserts; with it, `c` `r` `u`
 *   `insert` `update` `upsert` insert-or-replace and `d` `delete` delete by key (case-insensitive),
 *   anything else is a dead letter `bad-operation`; with `"envelope": "debezium"` the operation is
 *   the envelope's `op` in Debezium's own words (`c` `r` `u` upsert, `d` delete; `m` and
 *   anything else are `bad-operation`; a truncate `t` is never generated here: it changes no rows) and the row is `after` (`before` for a delete), the
 *   envelope possibly wrapped as `{"schema": …, "payload": {…}}`;
 * - a row whose key (every listed path, dotted for nested fields) is missing, null, or not a single
 *   value (an object or a list) is a dead letter `missing-key`;
 * - the table shows, per key, the last state in stream order; a delete removes the key until it is
 *   inserted again.
 *
 * Streams draw keys from a small pool so keys are updated several times, deleted and re-inserted;
 * `region` (a default partition candidate) and `event_time` change between versions of a key, a
 * few extra fields come and go, and a few records are bad.
 */
import fc from 'fast-check';
import { parse as parseLossless } from 'lossless-json';

// ---------------------------------------------------------------------------------------------
// Configuration

/** The `upsert` entry of one table, as floe.config.json spells it. */
export interface UpsertSpecJson {
  readonly key: readonly string[];
  readonly operationField?: string;
  readonly envelope?: 'debezium';
}

export type KeyStyle = 'single' | 'composite' | 'nested';
export type OpStyle = 'upsert-only' | 'op-field' | 'debezium';

export interface ChangeStream {
  readonly table: string;
  readonly keyStyle: KeyStyle;
  readonly opStyle: OpStyle;
  readonly spec: UpsertSpecJson;
  /**
   * The config fragment: every record goes to `table` (no record has the routing field, so
   * `defaultTable` takes it; README "Routing"), which is an upsert table.
   */
  readonly config: {
    readonly routing: { readonly routingField: string; readonly defaultTable: string };
    readonly upsert: Readonly<Record<string, UpsertSpecJson>>;
  };
  /** NDJSON lines, in stream order. */
  readonly lines: string[];
}

const TABLES: Record<KeyStyle, string> = {
  single: 'customer_events',
  composite: 'orders',
  nested: 'accounts',
};
const KEYS: Record<KeyStyle, string[]> = {
  single: ['customer_id'],
  composite: ['tenant', 'order_id'],
  nested: ['customer.id'],
};
/** Never present in a record: routing falls through to `defaultTable`. */
export const ROUTING_FIELD = 'fuzz_route';

export function specFor(keyStyle: KeyStyle, opStyle: OpStyle): UpsertSpecJson {
  const key = KEYS[keyStyle];
  if (opStyle === 'op-field') return { key, operationField: 'op' };
  if (opStyle === 'debezium') return { key, envelope: 'debezium' };
  return { key };
}

// ---------------------------------------------------------------------------------------------
// Model

export type DeadReason = 'missing-key' | 'bad-operation';

export interface ExpectedState {
  /**
   * keyString(key values) → the row the table shows for it: the record as written (its operation
   * field included), or Debezium's `after`.
   */
  readonly rows: Map<string, Record<string, unknown>>;
  /** Line index → why that record is a dead letter. */
  readonly deadLetters: Map<number, DeadReason>;
}

const UPSERT_OPS = new Set(['c', 'r', 'u', 'insert', 'update', 'upsert']);
const DELETE_OPS = new Set(['d', 'delete']);
/** Debezium's `op` vocabulary (its docs: create, read/snapshot, update, delete; truncate `t` and message `m` carry no row). */
const DEBEZIUM_OPS: Record<string, 'upsert' | 'delete'> = {
  c: 'upsert',
  r: 'upsert',
  u: 'upsert',
  d: 'delete',
};

/** What one line does to the table, by the model. */
export type ModelChange =
  | { readonly op: 'upsert'; readonly key: string; readonly row: Record<string, unknown> }
  | { readonly op: 'delete'; readonly key: string }
  | { readonly op: 'dead'; readonly reason: DeadReason };

/**
 * One line's change. Integer literals parse as bigint (as long columns read back), other numbers
 * as number; `event_time` stays the ISO text.
 */
export function modelChange(line: string, spec: UpsertSpecJson): ModelChange {
  const record = parseJson(line);
  if (!isObj(record)) throw new Error('model: the line is not a JSON object');
  let op: 'upsert' | 'delete' | undefined;
  let row: unknown;
  if (spec.envelope === 'debezium') {
    const env = isObj(record.payload) && Object.hasOwn(record, 'schema') ? record.payload : record;
    const dbzOp = typeof env.op === 'string' ? env.op.toLowerCase() : '';
    op = Object.hasOwn(DEBEZIUM_OPS, dbzOp) ? DEBEZIUM_OPS[dbzOp] : undefined;
    row = op === 'delete' ? env.before : env.after;
  } else if (spec.operationField !== undefined) {
    op = operation(valueAt(record, spec.operationField));
    row = record;
  } else {
    op = 'upsert';
    row = record;
  }
  if (op === undefined) return { op: 'dead', reason: 'bad-operation' };
  const key = isObj(row) ? keyOfRow(row, spec.key) : undefined;
  if (key === undefined) return { op: 'dead', reason: 'missing-key' };
  return op === 'delete' ? { op, key } : { op, key, row: row as Record<string, unknown> };
}

/** The final state per key after `lines` in stream order. */
export function expectedState(lines: readonly string[], spec: UpsertSpecJson): ExpectedState {
  const rows = new Map<string, Record<string, unknown>>();
  const deadLetters = new Map<number, DeadReason>();
  lines.forEach((line, i) => {
    const c = modelChange(line, spec);
    if (c.op === 'dead') deadLetters.set(i, c.reason);
    else if (c.op === 'delete') rows.delete(c.key);
    else rows.set(c.key, c.row);
  });
  return { rows, deadLetters };
}

function operation(v: unknown): 'upsert' | 'delete' | undefined {
  if (typeof v !== 'string') return undefined;
  const op = v.toLowerCase();
  return UPSERT_OPS.has(op) ? 'upsert' : DELETE_OPS.has(op) ? 'delete' : undefined;
}

/** The value at a dotted path, or undefined when a step is missing or not an object. */
export function valueAt(o: unknown, path: string): unknown {
  let v = o;
  for (const step of path.split('.')) {
    if (!isObj(v) || !Object.hasOwn(v, step)) return undefined;
    v = v[step];
  }
  return v;
}

/**
 * The key of a row (a parsed record, or a row read back from the table) as text equal for equal
 * keys (integers alike whether number or bigint), or undefined when a key value is missing or null.
 */
export function keyOfRow(row: Record<string, unknown>, key: readonly string[]): string | undefined {
  const values = key.map((p) => valueAt(row, p));
  if (values.some((v) => v === undefined || v === null || typeof v === 'object')) return undefined;
  return keyString(values);
}

export function keyString(values: readonly unknown[]): string {
  const parts = values.map((v) =>
    typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))
      ? String(v)
      : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)),
  );
  return `[${parts.join(',')}]`;
}

function parseJson(text: string): unknown {
  return parseLossless(text, null, (s: string) => (/^-?\d+$/.test(s) ? BigInt(s) : Number(s)));
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// Batches (streaming: keys change within a batch and across batches)

/** `items` cut before each index of `cuts` (ascending, within 1..n-1; others ignored). */
export function splitBatches<T>(items: readonly T[], cuts: readonly number[]): T[][] {
  const bounds = [0, ...[...new Set(cuts)].filter((c) => c > 0 && c < items.length).sort((a, b) => a - b)];
  return bounds.map((b, i) => items.slice(b, bounds[i + 1] ?? items.length));
}

/** Up to four cut points for a stream of `n` lines. */
export function batchCutsArb(n: number): fc.Arbitrary<number[]> {
  if (n < 2) return fc.constant([]);
  return fc
    .uniqueArray(fc.integer({ min: 1, max: n - 1 }), { maxLength: Math.min(4, n - 1) })
    .map((c) => c.sort((a, b) => a - b));
}

// ---------------------------------------------------------------------------------------------
// Generator

export interface ChangeStreamOptions {
  readonly keyStyles?: readonly KeyStyle[];
  readonly opStyles?: readonly OpStyle[];
  readonly minEvents?: number;
  readonly maxEvents?: number;
  /** How many distinct keys the stream draws from (default 2..5). */
  readonly maxKeys?: number;
}

type Action = 'upsert' | 'delete' | 'bad';
type Bad = 'key-missing' | 'key-null' | 'op-unknown' | 'before-null';

interface Step {
  readonly key: number;
  readonly action: Action;
  readonly bad: Bad;
  readonly region: string;
  readonly minutes: number;
  readonly millis: number | null;
  /** Which extra fields the version carries (bitmask over EXTRAS). */
  readonly extras: number;
  readonly spelling: number;
  readonly caseMask: number;
  readonly wrap: boolean;
  readonly beforeFull: boolean;
}

const REGIONS = ['eu', 'us', 'ap'];
const TENANTS = ['acme', 'globex'];
const BASE_MS = Date.UTC(2025, 2, 14, 15, 0, 0);

const stepArb = (maxKeys: number): fc.Arbitrary<Step> =>
  fc.record({
    key: fc.nat({ max: maxKeys - 1 }),
    action: fc
      .integer({ min: 0, max: 99 })
      .map((n): Action => (n < 60 ? 'upsert' : n < 88 ? 'delete' : 'bad')),
    bad: fc.constantFrom<Bad>('key-missing', 'key-null', 'op-unknown', 'before-null'),
    region: fc.constantFrom(...REGIONS),
    minutes: fc.nat({ max: 100_000 }),
    millis: fc.option(fc.nat({ max: 999 }), { nil: null }),
    extras: fc.nat({ max: 15 }),
    spelling: fc.nat({ max: 11 }),
    caseMask: fc.nat({ max: 63 }),
    wrap: fc.boolean(),
    beforeFull: fc.boolean(),
  });

/** Change streams of one upsert table: key style, operation style and events all drawn. */
export function changeStreamArb(opts: ChangeStreamOptions = {}): fc.Arbitrary<ChangeStream> {
  const keyStyles = opts.keyStyles ?? ['single', 'composite', 'nested'];
  const opStyles = opts.opStyles ?? ['upsert-only', 'op-field', 'debezium'];
  const maxKeys = opts.maxKeys ?? 5;
  return fc
    .record({
      keyStyle: fc.constantFrom(...keyStyles),
      opStyle: fc.constantFrom(...opStyles),
      pool: fc.integer({ min: Math.min(2, maxKeys), max: maxKeys }),
    })
    .chain(({ keyStyle, opStyle, pool }) =>
      fc
        .array(stepArb(pool), { minLength: opts.minEvents ?? 1, maxLength: opts.maxEvents ?? 30 })
        .map((steps) => buildStream(keyStyle, opStyle, steps)),
    );
}

/** A change stream with cut points for streaming batches. */
export function changeStreamBatchesArb(
  opts: ChangeStreamOptions = {},
): fc.Arbitrary<{ stream: ChangeStream; cuts: number[] }> {
  return changeStreamArb(opts).chain((stream) =>
    batchCutsArb(stream.lines.length).map((cuts) => ({ stream, cuts })),
  );
}

function buildStream(keyStyle: KeyStyle, opStyle: OpStyle, steps: readonly Step[]): ChangeStream {
  const table = TABLES[keyStyle];
  const spec = specFor(keyStyle, opStyle);
  const lines = steps.map((s, i) => JSON.stringify(eventFor(keyStyle, opStyle, table, s, i)));
  return {
    table,
    keyStyle,
    opStyle,
    spec,
    config: { routing: { routingField: ROUTING_FIELD, defaultTable: table }, upsert: { [table]: spec } },
    lines,
  };
}

/** The key fields of key number `k` (composite: tenant × order id; nested: a `customer` struct). */
function keyFields(style: KeyStyle, k: number): Record<string, unknown> {
  if (style === 'single') return { customer_id: k + 1 };
  if (style === 'composite') return { tenant: TENANTS[k % 2], order_id: Math.floor(k / 2) + 1 };
  return { customer: { id: `c${k + 1}`, ...(k % 2 ? { tier: 'gold' } : {}) } };
}

const EXTRAS: [string, (s: Step) => unknown][] = [
  ['note', (s) => `v${s.minutes % 97}`],
  // Never integral, so always a double literal (an integer would infer long).
  ['amount', (s) => (s.minutes % 1000) + 0.25],
  ['vip', (s) => s.minutes % 2 === 0],
  ['tags', (s) => ['a', 'b', 'c'].slice(0, 1 + (s.minutes % 3))],
];

function fullRow(style: KeyStyle, s: Step): Record<string, unknown> {
  const ms = BASE_MS + s.minutes * 60_000 + (s.millis ?? 0);
  const iso = new Date(ms).toISOString();
  const row: Record<string, unknown> = {
    ...keyFields(style, s.key),
    region: s.region,
    event_time: s.millis === null ? iso.replace('.000Z', 'Z') : iso,
  };
  EXTRAS.forEach(([name, value], bit) => {
    if (s.extras & (1 << bit)) row[name] = value(s);
  });
  return row;
}

/** The row with its key broken: a key field (or the nested key's parent) missing or null. */
function breakKey(style: KeyStyle, row: Record<string, unknown>, how: 'missing' | 'null', pick: number) {
  const out = { ...row };
  const field =
    style === 'single'
      ? 'customer_id'
      : style === 'composite'
        ? pick % 2
          ? 'order_id'
          : 'tenant'
        : 'customer';
  if (style === 'nested' && pick % 2) {
    const c = { ...(out.customer as Record<string, unknown>) };
    if (how === 'missing') delete c.id;
    else c.id = null;
    out.customer = c;
  } else if (how === 'missing') delete out[field];
  else out[field] = null;
  return out;
}

function spell(word: string, mask: number): string {
  return [...word].map((ch, i) => (mask & (1 << i) ? ch.toUpperCase() : ch)).join('');
}

function eventFor(style: KeyStyle, opStyle: OpStyle, table: string, s: Step, i: number): unknown {
  const row = fullRow(style, s);
  const keyOnly = keyFields(style, s.key);
  // Bad kinds that fit the style (upsert-only has no operation to get wrong).
  const bad: Bad =
    opStyle === 'upsert-only' && (s.bad === 'op-unknown' || s.bad === 'before-null')
      ? 'key-null'
      : opStyle === 'op-field' && s.bad === 'before-null'
        ? 'key-missing'
        : s.bad;
  const action: Action = opStyle === 'upsert-only' && s.action === 'delete' ? 'upsert' : s.action;

  if (opStyle !== 'debezium') {
    const withOp = (r: Record<string, unknown>, op: string) => (opStyle === 'op-field' ? { ...r, op } : r);
    const upsertOp = spell(['c', 'r', 'u', 'insert', 'update', 'upsert'][s.spelling % 6] ?? 'u', s.caseMask);
    if (action === 'upsert') return withOp(row, upsertOp);
    if (action === 'delete')
      return withOp(s.beforeFull ? row : keyOnly, spell(s.spelling % 2 ? 'delete' : 'd', s.caseMask));
    if (bad === 'op-unknown') return withOp(row, spell(s.spelling % 2 ? 'truncate' : 'x', s.caseMask));
    return withOp(breakKey(style, row, bad === 'key-missing' ? 'missing' : 'null', s.spelling), upsertOp);
  }

  const before = s.beforeFull ? { ...row, region: REGIONS[(REGIONS.indexOf(s.region) + 1) % 3] } : keyOnly;
  let env: Record<string, unknown>;
  if (action === 'upsert') {
    const op = ['c', 'r', 'u'][s.spelling % 3] ?? 'u';
    env = { before: op === 'u' ? before : null, after: row, op };
  } else if (action === 'delete') env = { before, after: null, op: 'd' };
  // (A truncate `t` changes no rows and is no dead letter: test/fuzz/debezium-typed.ts has them.)
  else if (bad === 'op-unknown') env = { before: null, after: row, op: s.spelling % 2 ? 'm' : 'x' };
  else if (bad === 'before-null') env = { before: null, after: null, op: 'd' };
  else
    env = {
      before: null,
      after: breakKey(style, row, bad === 'key-missing' ? 'missing' : 'null', s.spelling),
      op: 'c',
    };
  env.ts_ms = BASE_MS + i * 1000;
  env.source = { connector: 'postgresql', db: 'shop', schema: 'public', table };
  return s.wrap ? { schema: debeziumSchema(table), payload: env } : env;
}

/** The Kafka Connect schema a `schemas.enable=true` converter puts beside the payload (abridged). */
function debeziumSchema(table: string): unknown {
  const value = { type: 'struct', optional: true, name: `shop.public.${table}.Value`, fields: [] };
  return {
    type: 'struct',
    optional: false,
    name: `shop.public.${table}.Envelope`,
    fields: [
      { ...value, field: 'before' },
      { ...value, field: 'after' },
      { type: 'string', optional: false, field: 'op' },
      { type: 'int64', optional: true, field: 'ts_ms' },
    ],
  };
}
