/**
 * The one fast record path against the generic one, over generated configurations, and a table
 * written in many parts against the same table written in one — property tests (fast-check, fixed
 * seeds) through `loadSources`, as `floe load` runs it:
 *
 * 1. **Fast vs generic.** A configuration drawn from a small grammar (every routing rule:
 *    `routingField` plain and dotted, `tableField`, templates with one or two placeholders, dotted
 *    ones, a literal namespace `ns.{x}_t` and one per tenant `{tenant}.orders`; field lists global
 *    and per table; the table guards and the limits; hints; partition candidates; type-conflict
 *    policies) and NDJSON lines drawn from a grammar of event-like records (keys as producers
 *    write them — `FL_DATE`, `userId`, `café`, hostile ones —, escaped strings, values the scanner
 *    hands to the generic parser, malformed lines, records missing their routing fields) are loaded
 *    with `fastPath: true` and `fastPath: false` into two fresh warehouses. Both must give the same
 *    dead letters (source, line, reason, table, detail, raw), the same tables (namespaces
 *    included), current schemas, partition specs, rows (read back by the independent reader
 *    test/helpers/iceberg-rows.ts, not by Floe's query engine) and row counts.
 * 2. **Parts vs one part.** Lines whose JSON type is fixed per key (so no type changes late) loaded
 *    with the fast path on, with a budget of a few KB (most tables written in several parts) and
 *    with the default one: every line is exactly one row or one dead letter in both, the rows and
 *    the dead letters are the same, the schemas have the same columns and types, every table has
 *    exactly one snapshot however many parts it was written in, and every data file its snapshot
 *    references exists (none is left unreferenced). Then the documented rule for a type that does
 *    change late (engine/table-load.ts): "a column's type is decided by the part that first writes
 *    it: a later record that does not fit it is judged against the table as it then is (a type
 *    conflict), exactly as in a later load".
 * 3. **Valid Iceberg.** The independent validator (test/helpers/warehouse-validation.ts, every
 *    snapshot walked) passes on the warehouses of (1) (one case in `VALIDATE_EVERY`) and of (2).
 *
 * Nothing here is an output recorded from a run: (1) and (2) compare two runs of Floe, the
 * deterministic example asserts the documented rule, and the non-vacuity counters only require that
 * the generated cases reach the paths, rules and dead-letter reasons they are meant to exercise.
 *
 * The differences the properties once found (findings 1–9, all fixed) are at the end, each as a
 * minimal regression test of the reference behaviour; the properties tolerate none of them.
 *
 * `FLOE_FAST_CONFIGS_SEED` / `FLOE_FAST_CONFIGS_RUNS` run the properties with another seed / longer.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { fixedClock, seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { type LoadReport, type LoadSource, loadSources } from '../../lambdas/src/app/load.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import type { DeadLetter } from '../../lambdas/src/engine/dead-letters.ts';
import { fileWarehouse, type TestWarehouse, tempDir } from '../helpers/e2e.ts';
import { readTableRows } from '../helpers/iceberg-rows.ts';
import { reachableFiles } from '../helpers/unreferenced-files.ts';
import { validateWarehouse, warehouseIo } from '../helpers/warehouse-validation.ts';

const tmp = tempDir('floe-e2e-fast-configs-');
afterAll(() => tmp.cleanup());
let whCounter = 0;
function freshWarehouse(): TestWarehouse {
  return fileWarehouse(join(tmp.dir, `wh${whCounter++}`));
}
/** A property's warehouses go as soon as its case is checked (hundreds of cases per run). */
function dispose(...whs: TestWarehouse[]): void {
  for (const wh of whs) rmSync(wh.dir, { recursive: true, force: true });
}

/** Test-side approximation of table-name sanitising, only to pick table keys for per-table config. */
function likelyName(raw: string): string {
  return raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

// =============================================================================================
// Values: JSON text as producers write it

/** A JSON value class; the parts property gives each key one class so no type changes late. */
type Kind =
  | 'str'
  | 'int'
  | 'frac'
  | 'bool'
  | 'null'
  | 'emptyList'
  | 'strList'
  | 'itemList'
  | 'ts'
  | 'date'
  | 'payload'
  | 'meta'
  | 'deep';

/** Plain strings: never temporal-looking, so their column is a string in any part. */
const PLAIN_STRINGS = [
  '"a"',
  '"hello world"',
  '"line\\nbreak"',
  '"quote\\"d"',
  '"caf\\u00e9"',
  '"café"',
  '"tab\\tand\\\\slash"',
  '"\\ud83d\\ude00 pair"',
  '"😀"',
  '"\\/solidus"',
  '""',
  '" "',
  '"\\u0001ctl"',
  '"ZÜRICH"',
  '"12"',
  '"true"',
  '"x\\u2028y"',
];
/** Strings that look temporal, or almost, and one the readers refuse (a lone surrogate). */
const ODD_STRINGS = [
  '"2026-01-02"',
  '"2026-01-01T10:00:00Z"',
  '"2026-13-01"',
  '"2026-01-01T25:00:00Z"',
  '"\\ud800"',
];
const INTS = ['0', '1', '-1', '42', '-7', '1000', '2147483647', '2147483648', '9007199254740993', '-0'];
/** Integers the scanner gives up on (beyond 15 digits) — the generic parser takes the line. */
const LONG_INTS = ['1234567890123456', '12345678901234567', '-12345678901234567', '9223372036854775807'];
const FRACS = ['1.5', '1.0', '2.50', '-0.0', '0.1', '12.25', '1e3', '1E-2', '99999.99', '-3.75'];
const ODD_FRACS = ['12.345', '1e400', '123456789012.5'];
const TIMESTAMPS = [
  '"2026-01-01T10:00:00Z"',
  '"2026-01-02T23:59:59.999999+02:00"',
  '"2026-01-03T00:00:00.5Z"',
  '"2025-12-31T23:00:00-05:00"',
];
const DATES = ['"2026-01-01"', '"2026-01-02"', '"2025-06-30"', '"1999-12-31"'];

interface Gen {
  /** Property 2: only the key's own kind, and only values that keep its inferred type. */
  readonly fixed: boolean;
  /**
   * Also what the scanner hands to the generic parser (long integers, lists with elements, keys
   * with escapes, without a column name or sharing one, lone surrogates): a table with any such
   * record is staged by the generic path, so half the cases leave them out.
   */
  readonly hostile: boolean;
}

function scalarText(kind: Kind, g: Gen): fc.Arbitrary<string> {
  switch (kind) {
    case 'str':
      if (g.fixed) return fc.constantFrom(...PLAIN_STRINGS);
      return fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...PLAIN_STRINGS) },
        fc.constantFrom(...(g.hostile ? ODD_STRINGS : ODD_STRINGS.slice(0, -1))),
      );
    case 'int':
      if (!g.hostile) return fc.constantFrom(...INTS);
      return g.fixed
        ? fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...INTS) }, fc.constantFrom(...LONG_INTS))
        : fc.oneof(
            { weight: 5, arbitrary: fc.constantFrom(...INTS) },
            { weight: 2, arbitrary: fc.constantFrom(...LONG_INTS) },
            fc.constant('123456789012345678901234567890'),
          );
    case 'frac':
      if (g.fixed) return fc.constantFrom(...FRACS);
      return fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...FRACS) },
        fc.constantFrom(...(g.hostile ? ODD_FRACS : ODD_FRACS.slice(0, 1))),
      );
    case 'bool':
      return fc.constantFrom('true', 'false');
    case 'null':
      return fc.constant('null');
    case 'emptyList':
      return fc.constantFrom('[]', '[ ]');
    case 'strList':
      return g.hostile
        ? fc.constantFrom('[]', '["a"]', '["a","b"]', '["caf\\u00e9", "x"]')
        : fc.constant('[]');
    case 'itemList':
      return g.hostile
        ? fc.constantFrom('[]', '[{"sku":"a","cost":1.5}]', '[{"sku":"b","cost":2.0},{"sku":"c","cost":0.5}]')
        : fc.constant('[]');
    case 'ts':
      return fc.constantFrom(...TIMESTAMPS);
    case 'date':
      return fc.constantFrom(...DATES);
    default:
      throw new Error(`not a scalar kind: ${kind}`);
  }
}

// =============================================================================================
// Records: trees of entries, rendered to NDJSON text

type Node = { readonly t: 'leaf'; readonly text: string } | { readonly t: 'obj'; readonly entries: Entry[] };
interface Entry {
  readonly key: string;
  /** Render the key with a `\u` escape (the scanner gives up on escapes in keys). */
  readonly escKey: boolean;
  node: Node;
}

interface KeyDef {
  readonly key: string;
  readonly kind: Kind;
  /** Only in hostile cases: the scanner gives up on the record (see `Gen.hostile`). */
  readonly hostile?: true;
}

/** Top-level keys: column names of every spelling, and hostile ones. */
const TOP_KEYS: readonly KeyDef[] = [
  { key: 'id', kind: 'int' },
  { key: 'ID', kind: 'int', hostile: true }, // the column `id` twice with `id`
  { key: 'amount', kind: 'frac' },
  { key: 'price', kind: 'frac' },
  { key: 'qty', kind: 'int' },
  { key: 'FL_DATE', kind: 'date' },
  { key: 'event_date', kind: 'date' },
  { key: 'region', kind: 'str' },
  { key: 'userId', kind: 'str' },
  { key: 'UserID', kind: 'str', hostile: true },
  { key: 'café', kind: 'str' },
  { key: 'Naïve_Key', kind: 'bool' },
  { key: 'ok', kind: 'bool' },
  { key: 'ts', kind: 'ts' },
  { key: 'code', kind: 'str' },
  { key: 'note', kind: 'str' },
  { key: 'secret', kind: 'str' },
  { key: 'score', kind: 'frac' },
  { key: 'n', kind: 'int' },
  { key: 'big', kind: 'int' },
  { key: 'nothing', kind: 'null' },
  { key: 'empty', kind: 'emptyList' },
  { key: 'tags', kind: 'strList' },
  { key: 'items', kind: 'itemList' },
  { key: 'payload', kind: 'payload' },
  { key: 'meta', kind: 'meta' },
  { key: '__proto__', kind: 'deep' },
  { key: 'constructor', kind: 'str' },
  { key: 'x y', kind: 'str' },
  { key: 'a.b', kind: 'int' },
  { key: 'Ωmega', kind: 'str' },
  { key: '', kind: 'str', hostile: true }, // no column name
  { key: 'k'.repeat(300), kind: 'int', hostile: true },
];
const PAYLOAD_KEYS: readonly KeyDef[] = [
  { key: 'token', kind: 'str' },
  { key: 'amount', kind: 'frac' },
  { key: 'Count', kind: 'int' },
  { key: 'deep', kind: 'deep' },
  { key: 'when', kind: 'ts' },
];
const META_KEYS: readonly KeyDef[] = [
  { key: 'v', kind: 'int' },
  { key: 'Source_System', kind: 'str' },
  { key: 'flag', kind: 'bool' },
];
const DEEP_KEYS: readonly KeyDef[] = [
  { key: 'x', kind: 'int' },
  { key: 'y', kind: 'str' },
  { key: 'z', kind: 'null' },
];
const ALL_KINDS: readonly Kind[] = [
  'str',
  'int',
  'frac',
  'bool',
  'null',
  'emptyList',
  'strList',
  'ts',
  'date',
];

function entriesArb(
  keys: readonly KeyDef[],
  g: Gen,
  depth: number,
  max: number,
  prefix = '',
): fc.Arbitrary<Entry[]> {
  const pool = g.hostile ? keys : keys.filter((k) => !k.hostile);
  return fc
    .uniqueArray(fc.constantFrom(...pool), { maxLength: max, selector: (k) => k.key })
    .chain((defs) =>
      defs.length === 0
        ? fc.constant([] as Entry[])
        : fc.tuple(...defs.map((d) => entryArb(d, g, depth, prefix))).map((es) => es as Entry[]),
    );
}

function entryArb(d: KeyDef, g: Gen, depth: number, prefix: string): fc.Arbitrary<Entry> {
  const path = `${prefix}${d.key.toLowerCase()}`;
  const own = nodeArb(d.kind, g, depth, path);
  // Sometimes null (no column yet); in property 1 sometimes a value of another kind.
  const any: fc.Arbitrary<Node> = g.fixed
    ? fc.oneof({ weight: 8, arbitrary: own }, { weight: 1, arbitrary: fc.constant(leaf('null')) })
    : fc.oneof(
        { weight: 12, arbitrary: own },
        { weight: 1, arbitrary: fc.constant(leaf('null')) },
        { weight: 3, arbitrary: fc.constantFrom(...ALL_KINDS).chain((k) => nodeArb(k, g, depth, path)) },
      );
  // An escaped key is rare (1 in 20).
  const escKey = g.hostile ? fc.integer({ min: 0, max: 19 }).map((r) => r === 0) : fc.constant(false);
  return fc
    .record({ node: any, escKey })
    .map(({ node: n, escKey: e }) => ({ key: d.key, escKey: e, node: n }));
}

function leaf(text: string): Node {
  return { t: 'leaf', text };
}

function nodeArb(kind: Kind, g: Gen, depth: number, path: string): fc.Arbitrary<Node> {
  const obj = (keys: readonly KeyDef[], max: number): fc.Arbitrary<Node> =>
    depth >= 3
      ? fc.constant(leaf('{}'))
      : entriesArb(keys, g, depth + 1, max, `${path}.`).map((entries): Node => ({ t: 'obj', entries }));
  switch (kind) {
    case 'payload':
      return obj(PAYLOAD_KEYS, 3);
    case 'meta':
      return obj(META_KEYS, 2);
    case 'deep':
      return obj(DEEP_KEYS, 2);
    default:
      return scalarText(kind, g).map(leaf);
  }
}

function render(n: Node, spaced: boolean): string {
  if (n.t === 'leaf') return n.text;
  const colon = spaced ? ' : ' : ':';
  const comma = spaced ? ', ' : ',';
  const parts = n.entries.map((e) => `${keyText(e)}${colon}${render(e.node, spaced)}`);
  return spaced ? `{ ${parts.join(comma)} }` : `{${parts.join(comma)}}`;
}

function keyText(e: Entry): string {
  if (!e.escKey || e.key.length === 0) return JSON.stringify(e.key);
  const c = e.key.charCodeAt(0);
  return `"\\u${c.toString(16).padStart(4, '0')}${JSON.stringify(e.key).slice(2)}`;
}

/** Puts `text` at the dotted key path, creating (or replacing a scalar by) objects on the way. */
function putAt(entries: Entry[], path: readonly string[], text: string): void {
  let at = entries;
  for (let i = 0; i < path.length; i++) {
    const k = path[i]!;
    let e = at.find((x) => x.key === k);
    if (i === path.length - 1) {
      if (e) e.node = leaf(text);
      else at.push({ key: k, escKey: false, node: leaf(text) });
      return;
    }
    if (!e) {
      e = { key: k, escKey: false, node: { t: 'obj', entries: [] } };
      at.push(e);
    } else if (e.node.t !== 'obj') e.node = { t: 'obj', entries: [] };
    at = (e.node as { entries: Entry[] }).entries;
  }
}

function cloneEntries(es: readonly Entry[]): Entry[] {
  return es.map((e) => ({
    ...e,
    node: e.node.t === 'obj' ? { t: 'obj', entries: cloneEntries(e.node.entries) } : e.node,
  }));
}

// =============================================================================================
// Routing: the rules, the fields they read, and the values records carry there

interface RoutingDef {
  readonly name: string;
  readonly routing: Record<string, unknown>;
  /** Key paths (as written) the rule reads. */
  readonly reads: readonly (readonly string[])[];
  /** Bare table names the rule probably gives (for per-table configuration keys). */
  readonly tables: readonly string[];
}

/** Routing values: text that names a table, text that cannot, and values that are not text. */
const ROUTE_VALUES = [
  '"ORDER"',
  '"order"',
  '"Click"',
  '"user.signup"',
  '"Café"',
  '"../x"',
  '"JFK"',
  '"Zürich"',
  '""',
  '"  "',
  '"💥"',
  '"AWS_tenant"',
  '"a\\"b"',
];
const ODD_ROUTE_VALUES = [
  '5',
  '2.0',
  '1.5',
  'true',
  'null',
  '{}',
  '[]',
  '{"x":1}',
  '["A"]',
  '12345678901234567',
];
const NAMES = ['order', 'click', 'user_signup', 'cafe', 'x', 'jfk', 'zurich', 'aws_tenant', 'a_b'];

function routingDefs(): fc.Arbitrary<RoutingDef> {
  const defaultTable = fc.constantFrom<(string | null | undefined)[]>(undefined, 'misc', null);
  const withDefault = (r: Record<string, unknown>, d: string | null | undefined) =>
    d === undefined ? r : { ...r, defaultTable: d };
  const fallbackTables = (suffix: string, d: string | null | undefined) => [
    ...NAMES.map((n) => n + suffix),
    ...(d === undefined ? ['unknown_events'] : d === null ? [] : [d]),
  ];
  return fc.oneof(
    fc
      .record({ suffix: fc.constantFrom<(string | undefined)[]>(undefined, '_t', ''), d: defaultTable })
      .map(({ suffix, d }) => ({
        name: 'routingField',
        routing: withDefault(suffix === undefined ? {} : { suffix }, d),
        reads: [['event_type']],
        tables: fallbackTables(suffix ?? '_events', d),
      })),
    fc
      .record({ field: fc.constantFrom('payload.kind', 'meta.Type'), d: defaultTable })
      .map(({ field, d }) => ({
        name: 'dotted routingField',
        routing: withDefault({ routingField: field, suffix: '_k' }, d),
        reads: [field.split('.')],
        tables: fallbackTables('_k', d),
      })),
    fc.record({ field: fc.constantFrom('table', 'meta.table'), d: defaultTable }).map(({ field, d }) => ({
      name: 'tableField',
      routing: withDefault({ tableField: field }, d),
      reads: [field.split('.'), ['event_type']],
      tables: [...NAMES, ...fallbackTables('_events', d)],
    })),
    fc
      .record({
        template: fc.constantFrom(
          'flights_{origin}',
          '{source}_{payload.kind}_events',
          '{meta.source}_x_{event_type}',
          'ns.{origin}_t',
          '{tenant}.orders',
          'ns2.{source}_{origin}',
        ),
        d: defaultTable,
      })
      .map(({ template, d }) => {
        const placeholders = [...template.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!.split('.'));
        // The table part (after a namespace's dot) with names in its placeholders.
        const values =
          placeholders.length === 1
            ? NAMES.map((n) => [n])
            : NAMES.slice(0, 4).flatMap((x) => NAMES.slice(0, 4).map((y) => [x, y]));
        const tables = values.map((v) => {
          let i = 0;
          const t = template.replace(/\{[^{}]+\}/g, () => v[i++]!);
          return t.slice(t.indexOf('.') + 1);
        });
        return {
          name: `template ${template}`,
          routing: withDefault({ template }, d),
          reads: [...placeholders, ['event_type']],
          tables: [...new Set([...tables, ...fallbackTables('_events', d)])].map(likelyName),
        };
      }),
  );
}

function routeValueArb(g: Gen): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...ROUTE_VALUES.slice(0, 8)) },
    { weight: g.fixed ? 1 : 3, arbitrary: fc.constantFrom(...ROUTE_VALUES.slice(8)) },
    {
      weight: g.fixed ? 0 : 3,
      arbitrary: fc.constantFrom(...(g.hostile ? ODD_ROUTE_VALUES : ODD_ROUTE_VALUES.slice(0, -3))),
    },
    { weight: 2, arbitrary: fc.constant(undefined) },
  );
}

// =============================================================================================
// Lines

const MALFORMED = [
  '{"event_type":"ORDER","id":1',
  'not json',
  '[1,2,3]',
  '"just a string"',
  '42',
  'null',
  '{"event_type":"ORDER"}}',
  '{"event_type":"ORDER",}',
  "{'event_type':'ORDER'}",
  '{"id":01}',
  '{"id":NaN}',
  '{"event_type":"ORDER" "id":1}',
  '{"a":"\\x"}',
  '{"ok":tru}',
  '',
  '   ',
];

function recordLineArb(r: RoutingDef, g: Gen): fc.Arbitrary<string> {
  return fc
    .record({
      body: entriesArb(TOP_KEYS, g, 1, g.fixed ? 5 : 6),
      route: fc.tuple(...r.reads.map(() => routeValueArb(g))),
      routeFirst: fc.boolean(),
      spaced: fc.integer({ min: 0, max: 5 }).map((x) => x === 0),
    })
    .map(({ body, route, routeFirst, spaced }) => {
      const entries: Entry[] = [];
      const routed: Entry[] = [];
      r.reads.forEach((path, i) => {
        const v = route[i];
        if (v !== undefined) putAt(routed, path, v);
      });
      if (routeFirst) entries.push(...routed, ...cloneEntries(body));
      else entries.push(...cloneEntries(body), ...routed);
      // A routing path under a key the body also has (`payload`): keep the first, merge the rest.
      const merged: Entry[] = [];
      for (const e of entries) {
        const prior = merged.find((m) => m.key === e.key);
        if (!prior) merged.push(e);
        else if (prior.node.t === 'obj' && e.node.t === 'obj') {
          for (const sub of e.node.entries)
            if (!prior.node.entries.some((p) => p.key === sub.key)) prior.node.entries.push(sub);
        }
      }
      return render({ t: 'obj', entries: merged }, spaced);
    });
}

interface Line {
  readonly text: string;
  /** A record (else a malformed or blank line). */
  readonly record: boolean;
}

function linesArb(r: RoutingDef, g: Gen, min: number, max: number): fc.Arbitrary<Line[]> {
  return fc.array(
    fc.oneof(
      { weight: g.hostile ? 10 : 30, arbitrary: recordLineArb(r, g).map((text) => ({ text, record: true })) },
      { weight: 1, arbitrary: fc.constantFrom(...MALFORMED).map((text) => ({ text, record: false })) },
      // Valid JSON the scanner refuses: duplicate keys.
      {
        weight: g.hostile ? 1 : 0,
        arbitrary: fc
          .constantFrom('{"event_type":"ORDER","id":1,"id":2}', '{"event_type":"ORDER","event_type":"Click"}')
          .map((text) => ({ text, record: true })),
      },
    ),
    { minLength: min, maxLength: max },
  );
}

/** The record with `"fid": fid` as its first key (property 2 follows each line to its row). */
function withFid(text: string, fid: number): string {
  const rest = text.slice(1).trimStart();
  return rest.startsWith('}') ? `{"fid":${fid}${rest}` : `{"fid":${fid},${rest}`;
}

// =============================================================================================
// Configurations

const FIELD_PATHS = [
  'secret',
  'payload.token',
  'payload',
  'amount',
  'fl_date',
  'userid',
  'meta.v',
  'meta',
  'cafe',
  'event_type',
  'id',
  'items.sku',
  'tags',
  'payload.deep.x',
  'x_y',
  '__proto__.y',
  'region',
];

const fieldRuleArb: fc.Arbitrary<Record<string, string[]>> = fc
  .record({
    list: fc.constantFrom('drop', 'only', 'keep'),
    paths: fc.uniqueArray(fc.constantFrom(...FIELD_PATHS), { minLength: 1, maxLength: 3 }),
  })
  .map(({ list, paths }) => ({ [list]: paths }));

const HINTS: readonly (readonly [string, string])[] = [
  ['amount', 'decimal(10,2)'],
  ['price', 'double'],
  ['qty', 'int'],
  ['ts', 'timestamptz'],
  ['code', 'string'],
  ['payload.amount', 'decimal(12,3)'],
  ['id', 'long'],
  ['fl_date', 'date'],
  ['n', 'float'],
  ['score', 'decimal(6,1)'],
  ['big', 'decimal(38,0)'],
  ['ok', 'boolean'],
  ['event_date', 'string'],
];

const CANDIDATES = [
  'event_date',
  'region',
  'date',
  'fl_date',
  'day(ts)',
  'hour(ts)',
  'month(fl_date)',
  'year(event_date)',
  'bucket[4](id)',
  'bucket[2](userid)',
  'truncate[2](code)',
  'truncate[3](region)',
  'identity(origin)',
  'event_type',
  'qty',
  'ok',
  'amount',
  'payload',
];

interface ConfigCase {
  readonly routing: string;
  readonly config: Record<string, unknown>;
}

function configArb(r: RoutingDef, g: Gen): fc.Arbitrary<ConfigCase> {
  const table = fc.constantFrom(...r.tables);
  /** `a` in one case of `oneIn`, else undefined. */
  const some = <T>(a: fc.Arbitrary<T>, oneIn = 3): fc.Arbitrary<T | undefined> =>
    fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: a });
  return fc
    .record({
      namespace: some(fc.constant('analytics'), 6),
      fieldsGlobal: some(fieldRuleArb, 3),
      fieldsTables: some(
        fc.array(fc.tuple(table, fc.oneof(fieldRuleArb, fc.constant({}))), { minLength: 1, maxLength: 2 }),
        3,
      ).map((x) => x ?? []),
      allowTables: some(
        fc.oneof(
          fc.uniqueArray(table, { minLength: 1, maxLength: 3 }).map((ts) => ts.join('|')),
          fc.constantFrom('[a-z_]+', '.*_events', 'flights_.*|orders', '(?!order).*'),
        ),
        5,
      ),
      maxTables: some(fc.integer({ min: 1, max: 4 }), 5),
      maxColumnsPerTable: some(fc.integer({ min: 2, max: 14 }), 4),
      maxNestingDepth: some(fc.integer({ min: 1, max: 4 }), 4),
      hints: some(
        fc.array(fc.tuple(fc.oneof(table, fc.constant('*')), fc.constantFrom(...HINTS)), {
          minLength: 1,
          maxLength: 3,
        }),
        2,
      ),
      candidates: some(fc.uniqueArray(fc.constantFrom(...CANDIDATES), { maxLength: 3 }), 2),
      tableCandidates: some(
        fc.tuple(table, fc.uniqueArray(fc.constantFrom(...CANDIDATES), { minLength: 1, maxLength: 2 })),
        3,
      ).map((x) => (x ? [x] : [])),
      typeConflict: g.fixed ? fc.constant(undefined) : some(fc.oneof(fc.constant('coerce'), table), 5),
      detectTimestamps: g.fixed ? fc.constant(undefined) : some(fc.constant(false), 8),
      formatVersion: some(fc.constant(3), 6),
    })
    .map((c) => {
      const config: Record<string, unknown> = { routing: r.routing };
      if (c.namespace) config.namespace = c.namespace;
      if (c.fieldsGlobal || c.fieldsTables.length > 0) {
        config.fields = {
          ...(c.fieldsGlobal ?? {}),
          ...(c.fieldsTables.length > 0
            ? { tables: Object.fromEntries(c.fieldsTables.map(([t, rule]) => [t, { ...rule }])) }
            : {}),
        };
      }
      const guards: Record<string, unknown> = {};
      if (c.allowTables !== undefined) guards.allowTables = c.allowTables;
      if (c.maxTables !== undefined) guards.maxTables = c.maxTables;
      if (c.maxColumnsPerTable !== undefined) guards.maxColumnsPerTable = c.maxColumnsPerTable;
      if (c.maxNestingDepth !== undefined) guards.maxNestingDepth = c.maxNestingDepth;
      if (Object.keys(guards).length > 0) config.guards = guards;
      const inference: Record<string, unknown> = {};
      if (c.hints) {
        const hints: Record<string, Record<string, string>> = {};
        for (const [t, [path, type]] of c.hints) hints[t] = { ...(hints[t] ?? {}), [path]: type };
        inference.hints = hints;
      }
      if (c.detectTimestamps !== undefined) inference.detectTimestamps = c.detectTimestamps;
      if (Object.keys(inference).length > 0) config.inference = inference;
      if (c.candidates || c.tableCandidates.length > 0) {
        config.partitioning = {
          ...(c.candidates ? { candidates: c.candidates } : {}),
          ...(c.tableCandidates.length > 0 ? { tables: Object.fromEntries(c.tableCandidates) } : {}),
        };
      }
      if (c.typeConflict === 'coerce') config.typeConflict = 'coerce';
      else if (c.typeConflict !== undefined)
        config.typeConflict = { default: 'dead-letter', tables: { [c.typeConflict]: 'coerce' } };
      if (c.formatVersion !== undefined) config.formatVersion = c.formatVersion;
      // Property 2's `fid` (see withFid) stays in every table.
      if (g.fixed && config.fields) {
        const f = config.fields as { only?: string[]; tables?: Record<string, { only?: string[] }> };
        if (f.only) f.only = [...f.only, 'fid'];
        for (const t of Object.values(f.tables ?? {})) if (t.only) t.only = [...t.only, 'fid'];
      }
      return { routing: r.name, config: accepted(config) };
    });
}

/**
 * The configuration, or the nearest one `parseConfig` accepts: field lists that contradict each
 * other are config errors (README: "Field lists"), so per-table lists, then all lists, go first.
 */
function accepted(config: Record<string, unknown>): Record<string, unknown> {
  const ok = (c: Record<string, unknown>) => {
    try {
      parseConfig(c);
      return true;
    } catch {
      return false;
    }
  };
  if (ok(config)) return config;
  const fields = config.fields as Record<string, unknown> | undefined;
  if (fields?.tables) {
    const { tables: _, ...global } = fields;
    const c = { ...config, fields: global };
    if (ok(c)) return c;
  }
  const { fields: _f, ...rest } = config;
  if (ok(rest)) return rest;
  throw new Error(`generated an invalid configuration: ${JSON.stringify(config)}`);
}

// =============================================================================================
// Cases and loads

type InputMode = 'text' | 'chunks' | 'chunks-ranged';

interface Case {
  readonly routing: string;
  readonly config: Record<string, unknown>;
  /** Sources, each its lines. */
  readonly sources: readonly (readonly string[])[];
  readonly mode: InputMode;
  /** Lines per chunk (or per batch of text): the load may write parts between chunks. */
  readonly chunk: number;
  /** Property 1: both runs write every table holding records as a part at each chunk boundary. */
  readonly parts: boolean;
  /** Per source and line: the record's `fid` (property 2), undefined for other lines. */
  readonly fids: readonly (readonly (number | undefined)[])[];
}

function caseArb(fixed: boolean, lines: { min: number; max: number }): fc.Arbitrary<Case> {
  return fc.tuple(routingDefs(), fc.boolean()).chain(([r, hostile]) => {
    const g: Gen = { fixed, hostile };
    return configArb(r, g).chain((cfg) =>
      fc
        .record({
          all: linesArb(r, g, lines.min, lines.max),
          split: fc.nat({ max: 4 }),
          mode: fc.constantFrom<InputMode[]>('text', 'chunks', 'chunks-ranged'),
          chunk: fc.integer({ min: 1, max: 6 }),
          parts: fc.nat({ max: 3 }).map((p) => p === 0),
        })
        .map(({ all, split, mode, chunk, parts }) => {
          // Property 2: every record carries its own id (its line's index, from 1).
          const fids = all.map((l, i) => (fixed && l.record ? i + 1 : undefined));
          const texts = all.map((l, i) => (fids[i] === undefined ? l.text : withFid(l.text, fids[i]!)));
          // One source, or two (line numbers are per source).
          const cut = split === 0 && all.length > 1 ? Math.floor(all.length / 2) : all.length;
          const sources = cut < all.length ? [texts.slice(0, cut), texts.slice(cut)] : [texts];
          return {
            routing: `${cfg.routing}${hostile ? ' (hostile)' : ''}`,
            config: cfg.config,
            sources,
            fids: cut < all.length ? [fids.slice(0, cut), fids.slice(cut)] : [fids],
            mode,
            chunk,
            parts,
          };
        }),
    );
  });
}

const encoder = new TextEncoder();

function sourceOf(name: string, lines: readonly string[], mode: InputMode, chunk: number): LoadSource {
  if (mode === 'text') {
    return {
      name,
      lines: (async function* () {
        for (let i = 0; i < lines.length; i += chunk) yield lines.slice(i, i + chunk);
      })(),
    };
  }
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < lines.length; i += chunk)
    chunks.push(
      encoder.encode(
        lines
          .slice(i, i + chunk)
          .map((l) => `${l}\n`)
          .join(''),
      ),
    );
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return {
    name,
    chunks: (async function* () {
      for (const c of chunks) yield c;
    })(),
    ...(mode === 'chunks-ranged' ? { readRange: async (s: number, e: number) => all.slice(s, e) } : {}),
  };
}

interface Budget {
  readonly memoryBudgetBytes?: number;
  readonly partBytes?: number;
}

interface Loaded {
  readonly wh: TestWarehouse;
  readonly report: LoadReport;
  readonly dead: DeadLetter[];
}

async function runLoad(c: Case, fastPath: boolean, budget: Budget = {}): Promise<Loaded> {
  const wh = freshWarehouse();
  const dead: DeadLetter[] = [];
  const report = await loadSources(
    {
      catalog: wh.catalog,
      store: wh.store,
      clock: fixedClock(Date.UTC(2026, 0, 5)),
      ids: seededIds(7),
      config: parseConfig(c.config),
      fastPath,
      onDeadLetter: (d) => {
        dead.push(d);
      },
      sleep: async () => undefined,
      ...budget,
    },
    c.sources.map((lines, i) => sourceOf(`in-${i}.ndjson`, lines, c.mode, c.chunk)),
  );
  return { wh, report, dead };
}

// =============================================================================================
// Reading a warehouse back, independently of Floe's reader

interface TableView {
  /** The current schema's fields as the metadata file holds them (names, types, ids, required). */
  readonly fields: unknown;
  readonly identifierFieldIds: unknown;
  /** The default partition spec's fields. */
  readonly spec: SpecFieldJson[];
  readonly snapshots: number;
  readonly summaryRecords: string | undefined;
  /** Rows of the current snapshot, canonical JSON, sorted. */
  readonly rows: string[];
  /**
   * The same with value-less `{}` / `[]` (objects holding only nulls, empty lists) as null: what a
   * row written before its column existed reads (README: they "read null in a column of another
   * shape ... as if their column had been added after them"), for parts vs one part.
   */
  readonly rowsValueless: string[];
  /** Data files the current snapshot references, and whether each exists. */
  readonly dataFiles: { readonly uri: string; readonly exists: boolean }[];
  /** Parquet files under the table's location no snapshot reaches. */
  readonly unreferenced: string[];
}

interface SpecFieldJson {
  readonly 'source-id': number;
  readonly 'field-id': number;
  readonly name: string;
  readonly transform: string;
}

interface FieldJson {
  readonly id: number;
  readonly name: string;
  readonly required: boolean;
  readonly type: unknown;
}

interface MetadataJson {
  readonly 'current-schema-id': number;
  readonly schemas: {
    readonly 'schema-id': number;
    readonly fields: FieldJson[];
    readonly 'identifier-field-ids'?: number[];
  }[];
  readonly 'default-spec-id': number;
  readonly 'partition-specs': { readonly 'spec-id': number; readonly fields: SpecFieldJson[] }[];
  readonly snapshots?: { readonly summary?: Record<string, string> }[];
  readonly location: string;
}

/**
 * A value as canonical JSON: bigints, bytes and -0 kept apart from their look-alikes; `sortKeys`:
 * object keys sorted (a row's content, whatever its schema's column order).
 */
function canon(v: unknown, sortKeys = false): string {
  return JSON.stringify(v, (_k, x: unknown) => {
    if (typeof x === 'bigint') return `${x}n`;
    if (typeof x === 'number') return Object.is(x, -0) ? '-0' : Number.isFinite(x) ? x : String(x);
    if (x instanceof Uint8Array) return `0x${Buffer.from(x).toString('hex')}`;
    if (x instanceof Map) return Object.fromEntries([...x].map(([k, y]) => [String(k), y]));
    if (sortKeys && typeof x === 'object' && x !== null && !Array.isArray(x))
      return Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return x;
  });
}

async function readWarehouse(wh: TestWarehouse): Promise<Map<string, TableView>> {
  const out = new Map<string, TableView>();
  const io = warehouseIo(wh.store);
  for (const namespace of (await wh.catalog.listNamespaces()).sort()) {
    for (const name of (await wh.catalog.listTables(namespace)).sort()) {
      const loaded = await wh.catalog.loadTable({ namespace, name });
      const metadataJson = await io.read(loaded.metadataLocation);
      const meta = JSON.parse(new TextDecoder().decode(metadataJson)) as MetadataJson;
      const schema = meta.schemas.find((s) => s['schema-id'] === meta['current-schema-id'])!;
      const spec = meta['partition-specs'].find((s) => s['spec-id'] === meta['default-spec-id'])!;
      const { rows } = await readTableRows({ metadataJson, read: io.read });
      const reachable = await reachableFiles(wh.store, loaded);
      const dataFiles: { uri: string; exists: boolean }[] = [];
      for (const uri of reachable)
        if (uri.endsWith('.parquet')) dataFiles.push({ uri, exists: (await io.exists?.(uri)) === true });
      const unreferenced = parquetUnder(wh.store.pathOf(meta.location)).filter(
        (p) => ![...reachable].some((u) => wh.store.pathOf(u) === p),
      );
      const snaps = meta.snapshots ?? [];
      out.set(`${namespace}.${name}`, {
        fields: schema.fields,
        identifierFieldIds: schema['identifier-field-ids'] ?? [],
        spec: spec.fields,
        snapshots: snaps.length,
        summaryRecords: snaps[snaps.length - 1]?.summary?.['total-records'],
        rows: rows.map((r) => canon(r, true)).sort(),
        rowsValueless: rows.map((r) => canon(valuelessAsNull(r), true)).sort(),
        dataFiles,
        unreferenced,
      });
    }
  }
  return out;
}

function valuelessAsNull(v: unknown): unknown {
  const valueless = (x: unknown): boolean =>
    x === null ||
    x === undefined ||
    (Array.isArray(x) && x.length === 0) ||
    (isPlainObject(x) && Object.values(x).every(valueless));
  if (valueless(v)) return null;
  if (Array.isArray(v)) return v.map(valuelessAsNull);
  if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, valuelessAsNull(x)]));
  return v;
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return (
    typeof x === 'object' &&
    x !== null &&
    !Array.isArray(x) &&
    !(x instanceof Uint8Array) &&
    !(x instanceof Map)
  );
}

function parquetUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      if (n.endsWith('.parquet')) out.push(p);
      else walk(p);
    }
  };
  walk(dir);
  return out;
}

// =============================================================================================
// Comparing two runs

interface DeadView {
  readonly source: string;
  readonly line: number;
  readonly reason: string;
  readonly table: string | undefined;
  readonly detail: string;
  readonly raw: string;
}

function deadViews(dead: readonly DeadLetter[]): DeadView[] {
  return dead
    .map((d) => ({
      source: d.source,
      line: d.line,
      reason: d.reason,
      table: d.table,
      detail: d.detail,
      raw: d.raw,
    }))
    .sort((a, b) => (a.source === b.source ? a.line - b.line : a.source < b.source ? -1 : 1));
}

function short(s: string, n = 400): string {
  return s.length <= n ? s : `${s.slice(0, n)}…`;
}

/** Every difference between two lists of strings, as readable lines. */
function listDiff(what: string, a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  const count = (xs: readonly string[]) => {
    const m = new Map<string, number>();
    for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
    return m;
  };
  const ca = count(a);
  const cb = count(b);
  for (const [x, n] of ca) if ((cb.get(x) ?? 0) < n) out.push(`${what}: only in the first: ${short(x)}`);
  for (const [x, n] of cb) if ((ca.get(x) ?? 0) < n) out.push(`${what}: only in the second: ${short(x)}`);
  return out.slice(0, 12);
}

function sortedEntries(o: Readonly<Record<string, number>>): [string, number][] {
  return Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function reportSummary(r: LoadReport): string {
  return canon({
    lines: r.lines,
    rows: r.rows,
    tables: r.tables
      .map((t) => canon({ table: t.table, rows: t.rows, deadLetters: t.deadLetters, created: t.created }))
      // Sorted by bare name, tables of two namespaces (`{tenant}.orders`) may come in any order.
      .sort(),
  });
}

interface Compare {
  /** Compare schemas by field ids too (not for parts vs one part: later columns get later ids). */
  readonly ids: boolean;
}

/** `[]` when the two runs agree on everything a reader or an operator can see. */
function differences(
  a: { loaded: Loaded; tables: Map<string, TableView> },
  b: { loaded: Loaded; tables: Map<string, TableView> },
  how: Compare,
): string[] {
  const out: string[] = [];
  for (const [x, l] of [
    ['first', a],
    ['second', b],
  ] as const) {
    for (const f of l.loaded.report.failures)
      out.push(`${x} run: table ${f.table} failed: ${String(f.error)}`);
  }
  const da = deadViews(a.loaded.dead);
  const db = deadViews(b.loaded.dead);
  if (canon(da) !== canon(db))
    out.push(
      ...listDiff(
        'dead letter',
        da.map((d) => canon(d)),
        db.map((d) => canon(d)),
      ),
    );
  for (const [x, l] of [
    ['first', a],
    ['second', b],
  ] as const) {
    const counts: Record<string, number> = {};
    for (const d of l.loaded.dead) counts[d.reason] = (counts[d.reason] ?? 0) + 1;
    if (canon(sortedEntries(counts)) !== canon(sortedEntries(l.loaded.report.deadLetters)))
      out.push(
        `${x} run: report counts ${canon(l.loaded.report.deadLetters)}, dead letters ${canon(counts)}`,
      );
  }
  const ta = [...a.tables.keys()];
  const tb = [...b.tables.keys()];
  if (canon(ta) !== canon(tb)) out.push(`tables: ${canon(ta)} vs ${canon(tb)}`);
  for (const [name, x] of a.tables) {
    const y = b.tables.get(name);
    if (!y) continue;
    const loose = (t: TableView) =>
      canon({
        columns: columnTypes(t.fields as FieldJson[]),
        spec: specBySource(t.spec, t.fields as FieldJson[]),
      });
    const strict = (t: TableView) =>
      canon({ fields: t.fields, spec: t.spec, identifierFieldIds: t.identifierFieldIds });
    if (how.ids && strict(x) !== strict(y)) out.push(`${name}: schema and spec ${strict(x)} vs ${strict(y)}`);
    else if (!how.ids && loose(x) !== loose(y))
      out.push(`${name}: columns and spec ${loose(x)} vs ${loose(y)}`);
    if (how.ids) out.push(...listDiff(`${name} row`, x.rows, y.rows));
    else out.push(...listDiff(`${name} row`, x.rowsValueless, y.rowsValueless));
    if (x.summaryRecords !== y.summaryRecords)
      out.push(`${name}: total-records ${x.summaryRecords} vs ${y.summaryRecords}`);
  }
  const ra = reportSummary(a.loaded.report);
  const rb = reportSummary(b.loaded.report);
  if (ra !== rb) out.push(`report: ${ra} vs ${rb}`);
  return out;
}

/** Column path → type string (or the nested type's JSON with ids left out). */
function columnTypes(fields: readonly FieldJson[], prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  const typeText = (t: unknown, path: string): string => {
    if (typeof t === 'string') return t;
    const o = t as { type: string; fields?: FieldJson[]; element?: unknown; 'element-required'?: boolean };
    if (o.type === 'struct') {
      Object.assign(out, columnTypes(o.fields ?? [], `${path}.`));
      return 'struct';
    }
    if (o.type === 'list') return `list<${typeText(o.element, `${path}[]`)}>`;
    return o.type;
  };
  for (const f of fields)
    out[`${prefix}${f.name}`] = `${typeText(f.type, `${prefix}${f.name}`)}${f.required ? ' required' : ''}`;
  return Object.fromEntries(Object.entries(out).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0)));
}

/** A spec's fields by source column name and transform, as a set (ids and order left out). */
function specBySource(spec: readonly SpecFieldJson[], fields: readonly FieldJson[]): string[] {
  return spec
    .map(
      (s) =>
        `${fields.find((f) => f.id === s['source-id'])?.name ?? `#${s['source-id']}`}:${s.transform}:${s.name}`,
    )
    .sort();
}

// =============================================================================================
// Non-vacuity

class Stats {
  cases = 0;
  withDead = 0;
  withTables = 0;
  tables = 0;
  columnar = 0;
  generic = 0;
  multiPart = 0;
  validated = 0;
  readonly reasons = new Map<string, number>();
  readonly routings = new Map<string, number>();
  readonly features = new Map<string, number>();

  add(c: Case, fast: Loaded, tables: Map<string, TableView>): void {
    this.cases++;
    this.routings.set(c.routing.split(' ')[0]!, (this.routings.get(c.routing.split(' ')[0]!) ?? 0) + 1);
    for (const k of ['fields', 'guards', 'inference', 'partitioning', 'typeConflict', 'namespace'])
      if (c.config[k] !== undefined) this.features.set(k, (this.features.get(k) ?? 0) + 1);
    if (fast.dead.length > 0) this.withDead++;
    if (tables.size > 0) this.withTables++;
    this.tables += tables.size;
    for (const d of fast.dead) this.reasons.set(d.reason, (this.reasons.get(d.reason) ?? 0) + 1);
    for (const t of fast.report.tables) {
      if (t.rows === 0) continue;
      if (t.path === 'columnar') this.columnar++;
      else this.generic++;
    }
    for (const t of tables.values()) if (t.dataFiles.length > 1) this.multiPart++;
  }

  toString(): string {
    const m = (x: Map<string, number>) => [...x].map(([k, v]) => `${k} ${v}`).join(', ');
    return `${this.cases} cases (${this.withTables} with tables, ${this.withDead} with dead letters), ${this.tables} tables (fast run: ${this.columnar} columnar, ${this.generic} generic; ${this.multiPart} with several data files), ${this.validated} validated; dead letters: ${m(this.reasons)}; routing: ${m(this.routings)}; config: ${m(this.features)}`;
  }
}

/** Problems the independent Iceberg validator finds in a warehouse (every snapshot walked). */
async function invalid(wh: TestWarehouse): Promise<string[]> {
  return (await validateWarehouse(wh, { snapshots: 'all' })).problems;
}

function caseText(c: Case): string {
  return [
    `routing: ${c.routing}; input: ${c.mode}, ${c.chunk} lines per chunk${c.parts ? ', a part at every chunk' : ''}`,
    `config: ${JSON.stringify(c.config)}`,
    ...c.sources.flatMap((lines, i) => [`--- in-${i}.ndjson ---`, ...lines]),
  ].join('\n');
}

async function assertProperty(
  arb: fc.Arbitrary<Case>,
  check: (c: Case) => Promise<string[]>,
  seed: number,
  numRuns: number,
) {
  const details = await fc.check(
    fc.asyncProperty(arb, async (c) => {
      const problems = await check(c);
      if (problems.length > 0) throw new Error(problems.join('\n'));
    }),
    { seed, numRuns },
  );
  if (!details.failed) return;
  const c = details.counterexample?.[0];
  const why =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(
    `property failed after ${details.numRuns} runs (seed ${seed}, path ${details.counterexamplePath}):\n${why}\n--- shrunk case ---\n${c ? caseText(c) : '?'}`,
  );
}

// =============================================================================================
// The properties

const SEED_FAST = Number(process.env.FLOE_FAST_CONFIGS_SEED ?? 42);
const SEED_PARTS = Number(process.env.FLOE_FAST_CONFIGS_SEED ?? 4242);
const RUNS_FAST = Number(process.env.FLOE_FAST_CONFIGS_RUNS ?? 150);
const RUNS_PARTS = Number(process.env.FLOE_FAST_CONFIGS_RUNS ?? 40);
/** One case of property 1 in this many is validated (both warehouses); every case of property 2. */
const VALIDATE_EVERY = 3;
/** A budget of a few KB: most tables are written in several parts. */
const TINY: Budget = { memoryBudgetBytes: 4096, partBytes: 2048 };
/** One byte: every table holding anything is written as a part at every chunk boundary, on both paths. */
const EVERY_CHUNK: Budget = { memoryBudgetBytes: 1, partBytes: 1 };

describe('fast path vs generic path over generated configurations', () => {
  it('give the same dead letters, tables, schemas, specs and rows', { timeout: 900_000 }, async () => {
    const stats = new Stats();
    let n = 0;
    await assertProperty(
      caseArb(false, { min: 1, max: 30 }),
      async (c) => {
        const budget = c.parts ? EVERY_CHUNK : {};
        const fast = await runLoad(c, true, budget);
        const slow = await runLoad(c, false, budget);
        const ft = await readWarehouse(fast.wh);
        const st = await readWarehouse(slow.wh);
        const problems = differences(
          { loaded: fast, tables: ft },
          { loaded: slow, tables: st },
          { ids: true },
        );
        // Every non-blank line is one row or one dead letter (counted: these lines carry no id).
        const nonBlank = c.sources.flat().filter((l) => l.trim() !== '').length;
        for (const [x, l, t] of [
          ['fast', fast, ft],
          ['generic', slow, st],
        ] as const) {
          const rows = [...t.values()].reduce((n, v) => n + v.rows.length, 0);
          if (rows + l.dead.length !== nonBlank)
            problems.push(`${x} run: ${rows} rows + ${l.dead.length} dead letters for ${nonBlank} lines`);
        }
        if (slow.report.tables.some((t) => t.path !== 'generic'))
          problems.push('fastPath false used the columnar path');
        // The generic path's count (the bench's share): every line parsed, but those too large to.
        const tooLarge = slow.dead.filter((d) => d.reason === 'guard-max-record-bytes').length;
        if (slow.report.genericRecords !== nonBlank - tooLarge)
          problems.push(
            `fastPath false: ${slow.report.genericRecords} generic records of ${nonBlank - tooLarge}`,
          );
        if (fast.report.genericRecords > slow.report.genericRecords)
          problems.push(`fast run: ${fast.report.genericRecords} generic records, more than every line`);
        if (n++ % VALIDATE_EVERY === 0) {
          stats.validated++;
          for (const [x, wh] of [
            ['fast', fast.wh],
            ['generic', slow.wh],
          ] as const)
            for (const p of await invalid(wh)) problems.push(`${x} warehouse invalid: ${p}`);
        }
        if (problems.length === 0) stats.add(c, fast, ft);
        dispose(fast.wh, slow.wh);
        return problems;
      },
      SEED_FAST,
      RUNS_FAST,
    );
    // Not vacuous: tables were written by the fast path itself, dead letters of many kinds.
    expect(stats.columnar, String(stats)).toBeGreaterThan(0);
    expect(stats.generic, String(stats)).toBeGreaterThan(0);
    expect(stats.withTables, String(stats)).toBeGreaterThan(stats.cases / 2);
    expect(stats.withDead, String(stats)).toBeGreaterThan(stats.cases / 4);
    expect(stats.reasons.size, String(stats)).toBeGreaterThanOrEqual(6);
    expect(stats.routings.size, String(stats)).toBe(4);
    console.log(`fast vs generic: ${stats}`);
  });
});

/**
 * Every line is exactly one row or one dead letter: each record by its `fid` (a row of that fid
 * in any table, or a dead letter of its line), every other non-blank line a dead letter.
 */
function lineAccounting(c: Case, l: Loaded, tables: Map<string, TableView>, what: string): string[] {
  const out: string[] = [];
  const rowsByFid = new Map<string, number>();
  for (const t of tables.values()) {
    for (const r of t.rows) {
      const fid = (JSON.parse(r) as { fid?: string }).fid;
      if (fid !== undefined) rowsByFid.set(fid, (rowsByFid.get(fid) ?? 0) + 1);
    }
  }
  const deadAt = new Map<string, number>();
  for (const d of l.dead) deadAt.set(`${d.source}:${d.line}`, (deadAt.get(`${d.source}:${d.line}`) ?? 0) + 1);
  c.sources.forEach((lines, s) => {
    lines.forEach((text, i) => {
      const fid = c.fids[s]![i];
      const dead = deadAt.get(`in-${s}.ndjson:${i + 1}`) ?? 0;
      const rows = fid === undefined ? 0 : (rowsByFid.get(`${fid}n`) ?? 0);
      const want = text.trim() === '' ? 0 : 1;
      if (rows + dead !== want)
        out.push(
          `${what}: line ${i + 1} of in-${s}: ${rows} rows and ${dead} dead letters, want ${want}: ${short(text)}`,
        );
    });
  });
  const fids = new Set(
    c.fids
      .flat()
      .filter((f) => f !== undefined)
      .map((f) => `${f}n`),
  );
  for (const fid of rowsByFid.keys())
    if (!fids.has(fid)) out.push(`${what}: a row with fid ${fid} nobody sent`);
  return out;
}

/** Each table committed once; every data file its metadata reaches exists; none is left over. */
function tableFiles(tables: Map<string, TableView>, what: string): string[] {
  const out: string[] = [];
  for (const [name, t] of tables) {
    if (t.snapshots !== 1)
      out.push(`${what}: ${name} has ${t.snapshots} snapshots, want one commit per table`);
    for (const f of t.dataFiles) if (!f.exists) out.push(`${what}: ${name} references missing ${f.uri}`);
    for (const p of t.unreferenced) out.push(`${what}: ${name} has an unreferenced data file ${p}`);
  }
  return out;
}

describe('a table written in parts vs in one part', () => {
  it('gives the same rows, dead letters and columns, one commit per table, every file in place', {
    timeout: 900_000,
  }, async () => {
    const stats = new Stats();
    let severalParts = 0;
    await assertProperty(
      caseArb(true, { min: 10, max: 60 }),
      async (c) => {
        const parts = await runLoad(c, true, TINY);
        const whole = await runLoad(c, true);
        const pt = await readWarehouse(parts.wh);
        const wt = await readWarehouse(whole.wh);
        const problems = [
          ...differences({ loaded: parts, tables: pt }, { loaded: whole, tables: wt }, { ids: false }),
          ...lineAccounting(c, parts, pt, 'parts'),
          ...lineAccounting(c, whole, wt, 'one part'),
          ...tableFiles(pt, 'parts'),
          ...tableFiles(wt, 'one part'),
        ];
        stats.validated++;
        for (const [x, wh] of [
          ['parts', parts.wh],
          ['one part', whole.wh],
        ] as const)
          for (const p of await invalid(wh)) problems.push(`${x} warehouse invalid: ${p}`);
        if (problems.length === 0) {
          stats.add(c, parts, pt);
          for (const [name, t] of pt)
            if (t.dataFiles.length > (wt.get(name)?.dataFiles.length ?? 0)) severalParts++;
        }
        dispose(parts.wh, whole.wh);
        return problems;
      },
      SEED_PARTS,
      RUNS_PARTS,
    );
    // Not vacuous: many tables were written in several parts (more data files than in one part).
    expect(severalParts, String(stats)).toBeGreaterThan(stats.tables / 4);
    expect(stats.columnar, String(stats)).toBeGreaterThan(0);
    expect(stats.withDead, String(stats)).toBeGreaterThan(stats.cases / 4);
    console.log(`parts vs one part: ${stats}; ${severalParts} tables in several parts`);
  });

  it('reports the records the generic path took: lines the scanner gives up on, parts read again', async () => {
    const load = async (lines: string[]) => {
      const wh = freshWarehouse();
      const report = await loadSources(
        {
          catalog: wh.catalog,
          store: wh.store,
          clock: fixedClock(Date.UTC(2026, 0, 5)),
          ids: seededIds(whCounter),
          config: parseConfig({}),
          onDeadLetter: () => undefined,
        },
        [sourceOf('in.ndjson', lines, 'chunks', 64)],
      );
      dispose(wh);
      return report;
    };
    const plain = Array.from({ length: 40 }, (_, i) => `{"event_type":"a","id":${i},"s":"v${i % 3}"}`);
    // Plain records: none. Lists with elements (the scanner hands them over): each one.
    expect((await load(plain)).genericRecords).toBe(0);
    const withLists = [...plain, '{"event_type":"b","xs":[1,2]}', '{"event_type":"b","xs":[3]}'];
    expect((await load(withLists)).genericRecords).toBe(2);
    // A table whose columns conflict (a string and a number in one column) is read again in full.
    const conflicting = [...plain, '{"event_type":"a","id":"forty"}'];
    const report = await load(conflicting);
    expect(report.genericRecords).toBe(plain.length + 1);
    expect(report.tables.find((t) => t.table === 'a_events')?.reparsed).toBe(plain.length + 1);
  });

  it('a column an earlier part wrote as long: later fractions are type conflicts, exactly as in a later load', async () => {
    // table-load.ts: "A column's type is decided by the part that first writes it: a later record
    // that does not fit it is judged against the table as it then is (a type conflict), exactly as
    // in a later load." infer.ts: within one batch long + double unify to double.
    const first = Array.from({ length: 12 }, (_, i) => `{"event_type":"m","id":${i},"x":${i}}`);
    const later = [
      '{"event_type":"m","id":100,"x":0.5}',
      '{"event_type":"m","id":101,"x":7}',
      '{"event_type":"m","id":102,"x":-2.25}',
      '{"event_type":"m","id":103,"x":1e3}',
      '{"event_type":"m","id":104,"x":8}',
    ];
    const chunked = (chunks: string[][]): LoadSource => ({
      name: 'in.ndjson',
      chunks: (async function* () {
        for (const c of chunks) yield encoder.encode(c.map((l) => `${l}\n`).join(''));
      })(),
    });
    const load = async (wh: TestWarehouse, source: LoadSource, budget: Budget) => {
      const dead: DeadLetter[] = [];
      const report = await loadSources(
        {
          catalog: wh.catalog,
          store: wh.store,
          clock: fixedClock(Date.UTC(2026, 0, 5)),
          ids: seededIds(whCounter),
          config: parseConfig({}),
          onDeadLetter: (d) => {
            dead.push(d);
          },
          ...budget,
        },
        [source],
      );
      return { wh, report, dead };
    };
    const xType = (t: TableView | undefined) =>
      (t?.fields as FieldJson[] | undefined)?.find((f) => f.name === 'x')?.type;
    const ids = (t: TableView | undefined) =>
      (t?.rows ?? []).map((r) => (JSON.parse(r) as { id: string }).id).sort();

    // In parts: the first chunk is written (x long) before the second is read.
    const parts = await load(freshWarehouse(), chunked([first, later]), {
      memoryBudgetBytes: 1024,
      partBytes: 1024,
    });
    const pt = (await readWarehouse(parts.wh)).get('default.m_events');
    expect(parts.report.failures).toEqual([]);
    expect(xType(pt)).toBe('long');
    expect(pt?.dataFiles.length, 'the table was written in two parts').toBe(2);
    expect(pt?.snapshots, 'and committed once').toBe(1);
    expect(parts.dead.map((d) => [d.line, d.reason, d.table])).toEqual([
      [13, 'type-conflict', 'm_events'],
      [15, 'type-conflict', 'm_events'],
      [16, 'type-conflict', 'm_events'],
    ]);
    const fits = [...first, later[1]!, later[4]!]
      .map((l) => `${(JSON.parse(l) as { id: number }).id}n`)
      .sort();
    expect(ids(pt)).toEqual(fits);

    // Exactly as in a later load: the same lines refused for the same reason, the same rows.
    const twice = freshWarehouse();
    await load(twice, chunked([first]), {});
    const second = await load(twice, chunked([later]), {});
    const tt = (await readWarehouse(twice)).get('default.m_events');
    expect(second.dead.map((d) => [d.raw, d.reason, d.detail])).toEqual(
      parts.dead.map((d) => [d.raw, d.reason, d.detail]),
    );
    expect(tt?.rows).toEqual(pt?.rows);
    expect(tt?.fields).toEqual(pt?.fields);

    // In one part the batch decides: long + double → double, every record lands.
    const whole = await load(freshWarehouse(), chunked([first, later]), {});
    const wt = (await readWarehouse(whole.wh)).get('default.m_events');
    expect(whole.dead).toEqual([]);
    expect(xType(wt)).toBe('double');
    expect(ids(wt)).toHaveLength(first.length + later.length);
    for (const wh of [parts.wh, twice, whole.wh]) expect(await invalid(wh)).toEqual([]);
  });
});

// =============================================================================================
// Regression tests of fixed differences: each minimal counterexample the properties found, as a
// test of the reference behaviour — the generic path's, or the README's where the generic path
// was wrong too. The comments say what the differing path used to give.

/** A case of the given lines, one batch each (so a load with a small budget may write parts between them). */
function linesCase(config: Record<string, unknown>, lines: readonly string[]): Case {
  return { routing: 'given', config, sources: [lines], mode: 'text', chunk: 1, parts: false, fids: [[]] };
}

async function both(c: Case, budget: Budget = {}) {
  const fast = await runLoad(c, true, budget);
  const slow = await runLoad(c, false, budget);
  return { fast, slow, ft: await readWarehouse(fast.wh), st: await readWarehouse(slow.wh) };
}

const deadOf = (l: Loaded) => l.dead.map((d) => [d.line, d.reason, d.table, d.detail]);
const fieldsOf = (t: TableView | undefined) =>
  (t?.fields as FieldJson[] | undefined)?.map((f) => [f.id, f.name]);

describe('fixed differences between the paths (regression tests of minimal counterexamples)', () => {
  it('10: a name collision names the two keys of the record, whatever an earlier record called the column', async () => {
    const c = linesCase({}, ['{"UserID":1}', '{"userId":2,"UserID":3}']);
    const want = [
      [
        2,
        'type-conflict',
        'unknown_events',
        "table 'unknown_events': keys 'userId' and 'UserID' both map to column 'userid'",
      ],
    ];
    for (const budget of [{}, EVERY_CHUNK]) {
      const { fast, slow } = await both(c, budget);
      // Was, in one part: "keys 'UserID' and 'UserID'" (the key that first made the column).
      expect(deadOf(slow)).toEqual(want);
      expect(deadOf(fast)).toEqual(want);
    }
  });

  it('1a: a table whose every record a rule refused is in no report, written in parts or not', async () => {
    const c = linesCase({ fields: { drop: ['x'] }, guards: { maxNestingDepth: 1 } }, [
      '{"event_type":"A","p":{"k":1}}',
    ]);
    const { fast, slow } = await both(c, EVERY_CHUNK);
    expect(slow.report.tables).toEqual([]);
    expect(fast.dead).toEqual(slow.dead);
    expect(fast.report.tables).toEqual([]); // was, fast: [{ table: 'a_events', rows: 0, path: 'generic', … }]
  });

  it('1b: a table the fast path wrote in one part is reported as columnar, whatever the budget', async () => {
    const c = linesCase({}, [
      '{"event_type":"A","id":1}',
      '{"event_type":"B","id":2}',
      '{"event_type":"B","id":3}',
    ]);
    const whole = await runLoad(c, true);
    expect(whole.report.tables.map((t) => t.path)).toEqual(['columnar', 'columnar']);
    const parts = await runLoad(c, true, TINY);
    // Was: the empty batch left after a_events' part written again as an (empty, "generic") part.
    expect(parts.report.tables.map((t) => [t.table, t.path, t.files])).toEqual([
      ['a_events', 'columnar', 1],
      ['b_events', 'columnar', 2],
    ]);
  });

  it('2: missing-kept-field names every kept field missing or null, on both paths', async () => {
    const { fast, slow } = await both(
      linesCase({ fields: { keep: ['secret', 'id'] } }, ['{"event_type":"A","id":null}']),
    );
    expect(deadOf(slow)).toEqual([
      [
        1,
        'missing-kept-field',
        'a_events',
        "table 'a_events': kept field secret, id missing or null (fields keep)",
      ],
    ]);
    expect(deadOf(fast)).toEqual(deadOf(slow)); // was, fast: "kept field secret missing or null"
  });

  it('3: a record dead-lettered in an earlier part does not order the columns of a later part', async () => {
    const c = linesCase({ guards: { maxColumnsPerTable: 2 } }, [
      '{"x":1,"y":1,"event_type":"A"}',
      '{"w":1,"event_type":"A"}',
    ]);
    const { fast, slow, ft, st } = await both(c, EVERY_CHUNK);
    const whole = await readWarehouse((await runLoad(c, true)).wh);
    expect(deadOf(fast)).toEqual(deadOf(slow));
    expect(fieldsOf(st.get('default.a_events'))).toEqual(fieldsOf(whole.get('default.a_events')));
    // Was, fast in parts: [[1, 'event_type'], [2, 'w']], the refused record's order; else w first.
    expect(fieldsOf(ft.get('default.a_events'))).toEqual(fieldsOf(st.get('default.a_events')));
  });

  it('4: a record refused by guard-max-columns decides no other record (README: "a dead letter decides nothing")', async () => {
    const c = linesCase({ guards: { maxColumnsPerTable: 2 } }, [
      '{"x":"s","y":1,"event_type":"A"}', // 3 columns: guard-max-columns
      '{"x":1,"event_type":"A"}', // fits alone: lands, as it does when the load writes parts
    ]);
    for (const budget of [{}, EVERY_CHUNK]) {
      for (const fastPath of [true, false]) {
        const l = await runLoad(c, fastPath, budget);
        // Was, in one part (either path): line 2 a type-conflict "string vs long", and no table made.
        expect(l.dead.map((d) => [d.line, d.reason])).toEqual([[1, 'guard-max-columns']]);
        const t = (await readWarehouse(l.wh)).get('default.a_events');
        expect((t?.fields as FieldJson[] | undefined)?.find((f) => f.name === 'x')?.type).toBe('long');
      }
    }
  });

  it('5: the depth guard counts empty lists in its detail on both paths (README: `[]` is a level)', async () => {
    const c = linesCase({ fields: { drop: ['secret'] }, guards: { maxNestingDepth: 1 } }, [
      '{"event_type":"A","m":{"t":[]}}',
    ]);
    const { fast, slow } = await both(c);
    expect(slow.dead.map((d) => d.detail)).toEqual([
      "guard maxNestingDepth: table 'a_events': record nests 3 levels, limit 1",
    ]);
    expect(deadOf(fast)).toEqual(deadOf(slow)); // was, fast: "nests 2 levels"
  });

  it('6: the depth guard is judged before keep on both paths (record-rules.ts), empty lists counted', async () => {
    const c = linesCase({ fields: { keep: ['secret'] }, guards: { maxNestingDepth: 2 } }, [
      '{"event_type":"A","m":{"t":[]}}',
    ]);
    const { fast, slow } = await both(c);
    expect(slow.dead.map((d) => d.reason)).toEqual(['guard-max-depth']);
    expect(deadOf(fast)).toEqual(deadOf(slow)); // was, fast: missing-kept-field
  });

  it('7: a hinted column gets no column from `[]`, and maxColumnsPerTable holds (README: "[] add no column")', async () => {
    const c = linesCase(
      { inference: { hints: { '*': { amount: 'long' } } }, guards: { maxColumnsPerTable: 2 } },
      ['{"event_type":"A","id":0,"amount":[]}'],
    );
    const { fast, slow, ft, st } = await both(c);
    expect(fieldsOf(ft.get('default.a_events'))).toEqual([
      [1, 'event_type'],
      [2, 'id'],
    ]);
    expect(fast.dead).toEqual([]);
    // Was, generic: a third column `amount long`, beyond the limit of 2, and no dead letter.
    expect(fieldsOf(st.get('default.a_events'))).toEqual(fieldsOf(ft.get('default.a_events')));
    expect(slow.dead).toEqual([]);
  });

  it('8: a column first seen as null, later as an object, takes the same place on both paths', async () => {
    const { ft, st } = await both(linesCase({}, ['{"a":null}', '{"b":1,"a":{"x":1}}']));
    expect(fieldsOf(st.get('default.unknown_events'))).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
    expect(fieldsOf(ft.get('default.unknown_events'))).toEqual(fieldsOf(st.get('default.unknown_events'))); // was, fast: b, a
  });

  it('9: with `only`, an empty list above the listed paths stays a level the depth guard counts', async () => {
    // README: maxNestingDepth counts "levels of objects and arrays" and "with field lists, it
    // judges the record after them"; `only` keeps a listed path's parents: {"id":1,"items":[]}.
    const c = linesCase({ fields: { only: ['items.sku', 'id'] }, guards: { maxNestingDepth: 1 } }, [
      '{"event_type":"A","id":1,"items":[]}',
    ]);
    const { fast, slow, ft } = await both(c);
    expect(deadOf(slow)).toEqual([
      [
        1,
        'guard-max-depth',
        'a_events',
        "guard maxNestingDepth: table 'a_events': record nests 2 levels, limit 1",
      ],
    ]);
    expect(deadOf(fast)).toEqual(deadOf(slow)); // was, fast: no dead letter, the record landed
    expect(ft.size).toBe(0);
  });
});
