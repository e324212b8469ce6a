/**
 * The shape fuzzer's grammar: sequences of JSON records drawn so that the same field turns up in
 * every order — first empty or null and later populated, populated and later empty, changing type,
 * in another letter case — with the scalars, keys and nestings real producers send.
 *
 * A record is a tree (`J`) that knows each literal as written; `render` turns it into the NDJSON
 * line, so the model (model.ts) reasons about the exact source text, as Floe must.
 */
import fc from 'fast-check';

export type J =
  | { readonly k: 'null' }
  | { readonly k: 'bool'; readonly v: boolean }
  /** An integer literal (no fraction, no exponent), exactly as written. */
  | { readonly k: 'int'; readonly text: string }
  /** A number literal with a fraction or an exponent, exactly as written. */
  | { readonly k: 'frac'; readonly text: string }
  /** A string; `escaped` writes every non-ASCII character (and `/`) as a `\u` escape. */
  | { readonly k: 'str'; readonly v: string; readonly escaped: boolean }
  | { readonly k: 'arr'; readonly items: readonly J[] }
  | { readonly k: 'obj'; readonly entries: readonly (readonly [string, J])[] };

/** One line of a sequence: a record (with its id `fid` and route) or a line that is not JSON. */
export type FuzzLine =
  | { readonly kind: 'record'; readonly fid: number; readonly record: J; readonly text: string }
  | { readonly kind: 'garbage'; readonly fid: number; readonly text: string };

// ---------------------------------------------------------------------------------------------
// Scalars

const boundaryInts = [
  '0',
  '-0',
  '1',
  '-1',
  '42',
  '2147483647',
  '2147483648',
  '-2147483648',
  '-2147483649',
  '9007199254740991',
  '9007199254740993',
  '-9007199254740993',
  '9223372036854775807',
  '-9223372036854775808',
  '9223372036854775808',
  '123456789012345678901234567890',
];

const intText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: -1000, max: 1000 }).map(String) },
  { weight: 2, arbitrary: fc.constantFrom(...boundaryInts) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String) },
);

const boundaryFracs = [
  '1.0',
  '0.5',
  '-2.25',
  '0.1',
  '100.000',
  '1e3',
  '1E-5',
  '-3.14159e+10',
  '2.5e0',
  '-0.0',
  '1.7976931348623157e308',
  '5e-324',
  '1e400',
  '123456789.123456789123',
];

const fracText: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(...boundaryFracs) },
  {
    weight: 2,
    arbitrary: fc
      .double({ noNaN: true, noDefaultInfinity: true })
      .map((d) => {
        const s = String(d);
        return /[.eE]/.test(s) ? s : `${s}.0`;
      })
      .filter((s) => !s.includes('Infinity')),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: -99999, max: 99999 }), fc.integer({ min: 0, max: 9999 }))
      .map(([a, b]) => `${a}.${String(b).padStart(4, '0')}`),
  },
);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** ISO-8601 instants with a zone (what Floe infers as timestamptz), in the forms producers write. */
const instantText: fc.Arbitrary<string> = fc
  .record({
    y: fc.integer({ min: 1970, max: 2099 }),
    mo: fc.integer({ min: 1, max: 12 }),
    d: fc.integer({ min: 1, max: 28 }),
    h: fc.integer({ min: 0, max: 23 }),
    mi: fc.integer({ min: 0, max: 59 }),
    s: fc.integer({ min: 0, max: 59 }),
    frac: fc.constantFrom('', '.1', '.123', '.123456', '.000001', '.5'),
    zone: fc.constantFrom('Z', '+00:00', '+05:30', '-08:00', '+14:00'),
  })
  .map((t) => `${t.y}-${pad(t.mo)}-${pad(t.d)}T${pad(t.h)}:${pad(t.mi)}:${pad(t.s)}${t.frac}${t.zone}`);

const dateText: fc.Arbitrary<string> = fc
  .record({
    y: fc.integer({ min: 1900, max: 2099 }),
    mo: fc.integer({ min: 1, max: 12 }),
    d: fc.integer({ min: 1, max: 28 }),
  })
  .map((t) => `${t.y}-${pad(t.mo)}-${pad(t.d)}`);

/** Strings that look like instants or dates but are not valid ones (they must stay strings). */
const almostTemporal = [
  '2025-13-01',
  '2025-02-30',
  '2025-03-14T25:00:00Z',
  '2025-03-14 15:00:00',
  '2025-03-14T15:00:00',
  '20250314',
  '2025-3-4',
  'T',
];

const oddStrings = [
  '',
  ' ',
  'eu/west',
  'a%2Fb',
  'x=y&z',
  '?#',
  'null',
  'true',
  '42',
  '1.5',
  '__proto__',
  'üñíçødé',
  '日本語',
  '😀🚀',
  'line\nbreak',
  'tab\there',
  'quote"back\\slash',
  '\u0000nul',
  '\u2028',
  '\ud800lone',
  'x'.repeat(1000),
];

const stringValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 2, arbitrary: fc.constantFrom(...oddStrings) },
  { weight: 2, arbitrary: instantText },
  { weight: 2, arbitrary: dateText },
  { weight: 1, arbitrary: fc.constantFrom(...almostTemporal) },
);

const scalar: fc.Arbitrary<J> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<J>({ k: 'null' }) },
  { weight: 1, arbitrary: fc.boolean().map((v): J => ({ k: 'bool', v })) },
  { weight: 3, arbitrary: intText.map((text): J => ({ k: 'int', text })) },
  { weight: 2, arbitrary: fracText.map((text): J => ({ k: 'frac', text })) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(stringValue, fc.boolean())
      .map(([v, esc]): J => ({ k: 'str', v, escaped: esc && Math.abs(hash(v)) % 3 === 0 })),
  },
);

// ---------------------------------------------------------------------------------------------
// Keys

const plainKeys = ['a', 'b', 'c', 'val', 'x1', 'id2', 'items', 'meta', 'tags'];
/** Keys that collide with another one after lower-casing / sanitising, or need sanitising. */
const caseKeys = ['A', 'Val', 'B', 'META'];
const oddKeys = [
  'a-b',
  'a_b',
  'a b',
  'a.b',
  '$x',
  '_x',
  '9lives',
  'é',
  'ü',
  'naïve',
  '日本',
  '😀',
  '',
  ' ',
  '__proto__',
  'constructor',
  'toString',
  'k'.repeat(300),
];
/** Keys the default partition candidates pick up (identity / day partitions). */
const partitionKeys = ['region', 'date', 'event_date'];

const keyArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...plainKeys) },
  { weight: 2, arbitrary: fc.constantFrom(...caseKeys) },
  { weight: 2, arbitrary: fc.constantFrom(...oddKeys) },
  { weight: 2, arbitrary: fc.constantFrom(...partitionKeys) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 6 }) },
);

// ---------------------------------------------------------------------------------------------
// Values and records

/** A JSON value of at most `depth` further levels of arrays / objects. */
export function valueArb(depth: number): fc.Arbitrary<J> {
  if (depth <= 0) return scalar;
  const inner = valueArb(depth - 1);
  return fc.oneof(
    { weight: 6, arbitrary: scalar },
    { weight: 1, arbitrary: fc.constant<J>({ k: 'arr', items: [] }) },
    { weight: 1, arbitrary: fc.constant<J>({ k: 'obj', entries: [] }) },
    {
      weight: 2,
      arbitrary: fc.array(inner, { minLength: 1, maxLength: 4 }).map((items): J => ({ k: 'arr', items })),
    },
    {
      weight: 1,
      // Lists of objects: the same keys in every element, sometimes with holes.
      arbitrary: fc
        .array(objectArb(depth - 1, 3), { minLength: 1, maxLength: 3 })
        .map((items): J => ({ k: 'arr', items })),
    },
    { weight: 2, arbitrary: objectArb(depth - 1, 4) },
  );
}

function objectArb(depth: number, maxKeys: number): fc.Arbitrary<J> {
  return fc
    .uniqueArray(fc.tuple(keyArb, valueArb(depth)), { maxLength: maxKeys, selector: ([k]) => k })
    .map((entries): J => ({ k: 'obj', entries }));
}

const routes = ['hb', 'Ord', 'ord', 'wide'];

export interface SequenceOptions {
  readonly maxRecords?: number;
  readonly maxDepth?: number;
  /** Chance (0–1) that a record is wide (hundreds of keys). */
  readonly wideChance?: number;
}

/**
 * A sequence of NDJSON lines: records with `event_type` (sometimes missing) and a unique `fid`.
 * Most records are variants of one template event (same keys, same kinds of values, some keys
 * left out or null), as a real stream is; the rest are drawn freely, so fields also change type,
 * case and emptiness from record to record.
 */
export function sequenceArb(opts: SequenceOptions = {}): fc.Arbitrary<FuzzLine[]> {
  const maxRecords = opts.maxRecords ?? 8;
  const depth = opts.maxDepth ?? 3;
  // Weights are per mille: wideChance 0.03 → 30 of 1000 records are wide.
  const wide = Math.round((opts.wideChance ?? 0.03) * 1000);
  const free =
    wide > 0
      ? fc.oneof(
          { weight: 1000 - wide, arbitrary: objectArb(depth, 6) },
          { weight: wide, arbitrary: wideObjectArb() },
        )
      : objectArb(depth, 6);
  return objectArb(depth, 8).chain((template) => {
    const line = fc.record({
      route: fc.option(fc.constantFrom(...routes), { freq: 12, nil: undefined }),
      body: fc.oneof({ weight: 3, arbitrary: sameKind(template) }, { weight: 2, arbitrary: free }),
      garbage: fc.integer({ min: 0, max: 40 }),
      pretty: fc.boolean(),
    });
    return fc.array(line, { minLength: 1, maxLength: maxRecords }).map((ls) => ls.map(toLine));
  });
}

function toLine(
  l: { route: string | undefined; body: J; garbage: number; pretty: boolean },
  i: number,
): FuzzLine {
  const fid = i + 1;
  const entries: (readonly [string, J])[] = [];
  if (l.route !== undefined) entries.push(['event_type', { k: 'str', v: l.route, escaped: false }]);
  entries.push(['fid', { k: 'int', text: String(fid) }]);
  const reserved = (k: string) => ['fid', 'event_type'].includes(k.toLowerCase());
  const own = l.body.k === 'obj' ? l.body.entries.filter(([k]) => !reserved(k)) : [];
  const record: J = { k: 'obj', entries: [...entries, ...own] };
  const text = render(record, l.pretty);
  if (l.garbage === 0) return { kind: 'garbage', fid, text: text.slice(0, Math.max(1, text.length - 1)) };
  return { kind: 'record', fid, record, text };
}

/** A value of the same shape as `j`: same keys and kinds, fresh scalars, sometimes null or left out. */
function sameKind(j: J): fc.Arbitrary<J> {
  switch (j.k) {
    case 'null':
      return fc.constant(j);
    case 'bool':
      return fc.boolean().map((v): J => ({ k: 'bool', v }));
    case 'int':
      return fc.integer({ min: -100_000, max: 100_000 }).map((n): J => ({ k: 'int', text: String(n) }));
    case 'frac':
      return fracText.filter((t) => t !== '1e400').map((text): J => ({ k: 'frac', text }));
    case 'str': {
      const like = INSTANT_LIKE.test(j.v)
        ? instantText
        : DATE_LIKE.test(j.v)
          ? dateText
          : fc.string({ maxLength: 10 });
      return like.map((v): J => ({ k: 'str', v, escaped: false }));
    }
    case 'arr': {
      const first = j.items[0];
      return first === undefined
        ? fc.constant(j)
        : fc.array(sameKind(first), { maxLength: 3 }).map((items): J => ({ k: 'arr', items }));
    }
    case 'obj':
      return fc
        .tuple(
          ...j.entries.map(([k, v]) =>
            fc.oneof(
              { weight: 6, arbitrary: sameKind(v).map((x) => [k, x] as const) },
              { weight: 1, arbitrary: fc.constant([k, { k: 'null' } as J] as const) },
              { weight: 1, arbitrary: fc.constant(undefined) },
            ),
          ),
        )
        .map((es): J => ({ k: 'obj', entries: es.filter((e) => e !== undefined) }));
  }
}

const INSTANT_LIKE = /^\d{4}-\d{2}-\d{2}T/;
const DATE_LIKE = /^\d{4}-\d{2}-\d{2}$/;

/** An object with hundreds of keys, some nested. */
function wideObjectArb(): fc.Arbitrary<J> {
  return fc.tuple(fc.integer({ min: 100, max: 400 }), fc.array(scalar, { minLength: 1, maxLength: 8 })).map(
    ([n, vals]): J => ({
      k: 'obj',
      entries: Array.from({ length: n }, (_, i) => [`w${i}`, vals[i % vals.length]!] as const),
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Rendering

export function render(j: J, pretty = false): string {
  const sep = pretty ? ', ' : ',';
  const colon = pretty ? ' : ' : ':';
  switch (j.k) {
    case 'null':
      return 'null';
    case 'bool':
      return j.v ? 'true' : 'false';
    case 'int':
    case 'frac':
      return j.text;
    case 'str':
      return quote(j.v, j.escaped);
    case 'arr':
      return `[${j.items.map((x) => render(x, pretty)).join(sep)}]`;
    case 'obj':
      return `{${j.entries.map(([k, v]) => `${quote(k, false)}${colon}${render(v, pretty)}`).join(sep)}}`;
  }
}

/** A JSON string literal; `escaped` also escapes `/` and every non-ASCII UTF-16 unit. */
export function quote(s: string, escaped: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 10) out += '\\n';
    else if (c === 9) out += '\\t';
    else if (c < 0x20) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else if (escaped && (ch === '/' || c > 0x7e)) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else if (c >= 0xd800 && c <= 0xdfff && !isPaired(s, i)) out += `\\u${c.toString(16)}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Whether the surrogate at `i` is half of a well-formed pair (a lone one can only be escaped). */
function isPaired(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c <= 0xdbff) {
    const n = s.charCodeAt(i + 1);
    return n >= 0xdc00 && n <= 0xdfff;
  }
  const p = s.charCodeAt(i - 1);
  return p >= 0xd800 && p <= 0xdbff;
}

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return h;
}
