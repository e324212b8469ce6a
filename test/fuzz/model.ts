/**
 * An independent model of what Floe must do with a record, written from the documented rules
 * (README "Configuration", DESIGN §3) and not from Floe's code:
 *
 * - a key's column is its NFKD form without combining marks, lower-cased, every other character
 *   than `[a-z0-9_]` replaced by `_`; an empty or over-255-character name cannot be a column;
 * - `null`, `[]`, `{}` (and containers of only those) carry no value and need no column;
 * - a landed record reads back with exactly its values, converted to its table's column types
 *   (an integer literal into `long` (int64) or exactly into `double`; a number into `double`
 *   when finite; a string into `string` when it is valid Unicode, into `timestamptz` when it is an
 *   ISO-8601 instant with a zone (truncated to microseconds, as Java and Spark do), into `date`
 *   when it is a real `yyyy-MM-dd` day; objects into structs (absent fields null), arrays into lists);
 * - a record whose value cannot be so converted, or whose keys cannot all be columns, is a dead
 *   letter, never a changed row.
 *
 * Canonical values (what both readers are compared in): long and timestamps → bigint (micros),
 * double → number, date → `yyyy-MM-dd`, string, boolean, struct → object, list → array, null.
 */
import type { J } from './json-shapes.ts';

export type Canon = null | boolean | bigint | number | string | Canon[] | { [k: string]: Canon } | NullOr;

/**
 * In an expected row: a value-less input (`[]`, `{}`, containers of those) that may also read
 * back as null — its column may have been added after the row was written, and rows written
 * before a column existed read null there (Iceberg's rule for added columns).
 */
export class NullOr {
  constructor(readonly value: Canon) {}
}

/** An Iceberg type as table metadata JSON writes it. */
export type TypeJson =
  | string
  | { type: 'struct'; fields: FieldJson[] }
  | { type: 'list'; 'element-id': number; element: TypeJson; 'element-required': boolean }
  | { type: 'map'; 'key-id': number; key: TypeJson; 'value-id': number; value: TypeJson };
export interface FieldJson {
  id: number;
  name: string;
  required: boolean;
  type: TypeJson;
}

// ---------------------------------------------------------------------------------------------
// Names and emptiness

export function columnName(key: string): string | undefined {
  const name = key
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]/gu, '_');
  return name.length === 0 || name.length > 255 ? undefined : name;
}

/** No value: null, and arrays / objects holding only such. */
export function isEmpty(j: J): boolean {
  if (j.k === 'null') return true;
  if (j.k === 'arr') return j.items.every(isEmpty);
  if (j.k === 'obj') return j.entries.every(([, v]) => isEmpty(v));
  return false;
}

// ---------------------------------------------------------------------------------------------
// Conversion to a table's types

export class NoFit {
  constructor(readonly why: string) {}
}

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** The record as a row of `fields`, or why it cannot land with exactly its values. */
export function rowOf(
  record: J,
  fields: readonly FieldJson[],
  strict = false,
): { [k: string]: Canon } | NoFit {
  if (record.k !== 'obj') return new NoFit('not an object');
  return structOf(record, fields, '', strict);
}

function structOf(
  o: Extract<J, { k: 'obj' }>,
  fields: readonly FieldJson[],
  path: string,
  strict: boolean,
): { [k: string]: Canon } | NoFit {
  const byName = new Map<string, J[]>();
  for (const [key, v] of o.entries) {
    const name = columnName(key);
    if (name === undefined) {
      if (!isEmpty(v)) return new NoFit(`${path}${key}: no legal column name`);
      continue;
    }
    const list = byName.get(name);
    if (list) list.push(v);
    else byName.set(name, [v]);
  }
  const out = bare<Canon>();
  const known = new Set<string>();
  for (const f of fields) {
    known.add(f.name);
    const vs = (byName.get(f.name) ?? []).filter((v) => !isEmpty(v));
    if (vs.length > 1) return new NoFit(`${path}${f.name}: two keys map to this column`);
    const given = vs[0] ?? byName.get(f.name)?.[0];
    const v = given === undefined ? null : convertValue(given, f.type, `${path}${f.name}`, strict);
    if (given !== undefined && isEmpty(given) && !strict) {
      // Written before its column existed (reads null), or after (reads its value, if any).
      out[f.name] = v instanceof NoFit ? null : v === null ? null : new NullOr(v);
      continue;
    }
    if (v instanceof NoFit) return v;
    out[f.name] = v;
  }
  for (const [name, vs] of byName) {
    if (!known.has(name) && vs.some((v) => !isEmpty(v)))
      return new NoFit(`${path}${name}: no column holds it`);
  }
  return out;
}

function convertValue(j: J, t: TypeJson, path: string, strict: boolean): Canon | NoFit {
  if (j.k === 'null') return null;
  if (!strict && isEmpty(j)) {
    // A value-less `[]` / `{}` in a column of another shape reads null (README: they carry no value).
    const v = convertShape(j, t, path, false);
    return v instanceof NoFit ? null : v;
  }
  return convertShape(j, t, path, strict);
}

function convertShape(j: J, t: TypeJson, path: string, strict: boolean): Canon | NoFit {
  if (j.k === 'null') return null;
  if (typeof t !== 'string') {
    if (t.type === 'struct')
      return j.k === 'obj' ? structOf(j, t.fields, `${path}.`, strict) : new NoFit(`${path}: not an object`);
    if (t.type === 'list') {
      if (j.k !== 'arr') return new NoFit(`${path}: not an array`);
      const out: Canon[] = [];
      for (const e of j.items) {
        const v = convertValue(e, t.element, `${path}[]`, strict);
        if (v instanceof NoFit) return v;
        out.push(v);
      }
      return out;
    }
    return new NoFit(`${path}: maps are not inferred from JSON`);
  }
  const bad = (what: string) => new NoFit(`${path}: ${what} into ${t}`);
  switch (t) {
    case 'long':
    case 'int': {
      if (j.k !== 'int') return bad(j.k);
      const v = BigInt(j.text);
      const [lo, hi] = t === 'int' ? [-(2n ** 31n), 2n ** 31n - 1n] : [LONG_MIN, LONG_MAX];
      return v < lo || v > hi ? bad(`out-of-range ${j.text}`) : v;
    }
    case 'double': {
      if (j.k === 'int') {
        const v = BigInt(j.text);
        const d = Number(v);
        return Number.isFinite(d) && BigInt(d) === v ? d : bad(`inexact integer ${j.text}`);
      }
      if (j.k !== 'frac') return bad(j.k);
      const d = Number(j.text);
      return Number.isFinite(d) ? d : bad(`non-finite ${j.text}`);
    }
    case 'boolean':
      return j.k === 'bool' ? j.v : bad(j.k);
    case 'string':
      if (j.k !== 'str') return bad(j.k);
      return isWellFormed(j.v) ? j.v : bad('a lone surrogate');
    case 'timestamptz': {
      if (j.k !== 'str') return bad(j.k);
      const us = instantMicros(j.v);
      return us === undefined ? bad(`'${j.v}'`) : us;
    }
    case 'date': {
      if (j.k !== 'str') return bad(j.k);
      return isRealDate(j.v) ? j.v : bad(`'${j.v}'`);
    }
    default:
      return bad(`(no JSON value converts to ${t})`);
  }
}

// ---------------------------------------------------------------------------------------------
// Temporal values (written again here, not imported)

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Microseconds since the epoch of an ISO-8601 instant with a zone (fraction truncated), or undefined. */
export function instantMicros(s: string): bigint | undefined {
  const m = INSTANT.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (!isRealDate(`${m[1]}-${m[2]}-${m[3]}`) || h > 23 || mi > 59 || sec > 59) return undefined;
  let offset = 0;
  if (m[9] !== undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 18 || om > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const days = BigInt(daysOf(y, mo, d));
  const seconds = days * 86400n + BigInt(h * 3600 + mi * 60 + sec - offset);
  const micros = BigInt((m[7] ?? '').padEnd(6, '0').slice(0, 6) || '0');
  return seconds * 1_000_000n + micros;
}

export function isRealDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]!;
  return d <= days;
}

/** Days since 1970-01-01 (proleptic Gregorian), by counting: slow and obviously right. */
function daysOf(y: number, mo: number, d: number): number {
  const leap = (yy: number) => (yy % 4 === 0 && yy % 100 !== 0) || yy % 400 === 0;
  let days = 0;
  if (y >= 1970) for (let yy = 1970; yy < y; yy++) days += leap(yy) ? 366 : 365;
  else for (let yy = y; yy < 1970; yy++) days -= leap(yy) ? 366 : 365;
  const month = [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  for (let m = 1; m < mo; m++) days += month[m - 1]!;
  return days + d - 1;
}

// ---------------------------------------------------------------------------------------------
// Reasons a record cannot land whatever its table looks like

/**
 * Why the record may be refused whatever its table looks like, if so: an illegal or colliding key
 * (with or without a value: refusing a record over a value-less key loses nothing), a
 * value no column type holds exactly, or two values at one column path whose kinds no column
 * unifies (documented unification: long+double → double, date/instant/string → string,
 * struct+struct, list+list). Used to accept a dead letter whose table never came to exist.
 */
export function selfConflict(record: J): string | undefined {
  const kinds = new Map<string, string>();
  /** Integer literals per path: where the path unifies to double, each must be exact there. */
  const ints = new Map<string, bigint[]>();
  let why: string | undefined;
  const see = (path: string, kind: string) => {
    const had = kinds.get(path);
    if (had === undefined || had === kind) {
      kinds.set(path, kind);
      return;
    }
    const merged = unify(had, kind);
    if (merged === undefined) why ??= `${path}: ${had} vs ${kind}`;
    else kinds.set(path, merged);
  };
  const walk = (j: J, path: string) => {
    // An empty object or array still needs its kind where it sits (`[{}, 0]` has no element
    // type); only null is nothing at all.
    if (j.k === 'null') return;
    switch (j.k) {
      case 'int': {
        const v = BigInt(j.text);
        if (v < LONG_MIN || v > LONG_MAX) why ??= `${path}: ${j.text} beyond long`;
        ints.set(path, [...(ints.get(path) ?? []), v]);
        return see(path, 'long');
      }
      case 'frac':
        if (!Number.isFinite(Number(j.text))) why ??= `${path}: ${j.text} beyond double`;
        return see(path, 'double');
      case 'bool':
        return see(path, 'boolean');
      case 'str':
        if (!isWellFormed(j.v)) why ??= `${path}: lone surrogate`;
        return see(
          path,
          instantMicros(j.v) !== undefined ? 'timestamptz' : isRealDate(j.v) ? 'date' : 'string',
        );
      case 'arr':
        see(path, 'list');
        for (const e of j.items) walk(e, `${path}[]`);
        return;
      case 'obj': {
        see(path, 'struct');
        const names = new Set<string>();
        for (const [k, v] of j.entries) {
          // Key trouble counts even for a value-less key: Floe may dead-letter it or not.
          const name = columnName(k);
          if (name === undefined) why ??= `${path}.${k}: illegal column name`;
          else if (names.has(name)) why ??= `${path}.${name}: two keys`;
          else {
            names.add(name);
            walk(v, `${path}.${name}`);
          }
        }
        return;
      }
      default:
        return;
    }
  };
  walk(record, '');
  for (const [path, vs] of ints) {
    if (kinds.get(path) !== 'double') continue;
    const inexact = vs.find((v) => BigInt(Number(v)) !== v);
    if (inexact !== undefined) why ??= `${path}: ${inexact} has no exact double`;
  }
  return why;
}

function unify(a: string, b: string): string | undefined {
  const pair = new Set([a, b]);
  if (pair.has('long') && pair.has('double')) return 'double';
  const text = ['string', 'date', 'timestamptz'];
  if (text.includes(a) && text.includes(b)) return 'string';
  return undefined;
}

/** Whether a key or string of the record holds a lone surrogate (JSON text Floe refuses to read). */
export function hasLoneSurrogate(j: J): boolean {
  if (j.k === 'str') return !isWellFormed(j.v);
  if (j.k === 'arr') return j.items.some(hasLoneSurrogate);
  if (j.k === 'obj') return j.entries.some(([k, v]) => !isWellFormed(k) || hasLoneSurrogate(v));
  return false;
}

// ---------------------------------------------------------------------------------------------
// Routing (the default rule: `event_type` lower-cased + `_events`, else `unknown_events`)

export function tableOf(record: J): string {
  if (record.k !== 'obj') return 'unknown_events';
  const et = record.entries.find(([k]) => k === 'event_type')?.[1];
  if (et === undefined || et.k !== 'str') return 'unknown_events';
  return `${et.v.toLowerCase()}_events`;
}

// ---------------------------------------------------------------------------------------------
// Equality of canonical values (bigint vs number kept apart; -0 and 0 apart)

export function canonEqual(a: Canon, b: Canon): boolean {
  if (a instanceof NullOr) return b === null || canonEqual(a.value, b);
  if (b instanceof NullOr) return a === null || canonEqual(b.value, a);
  if (a === null || b === null) return a === b;
  if (typeof a === 'number' || typeof b === 'number') return typeof a === typeof b && Object.is(a, b);
  if (typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => canonEqual(x, b[i]!))
    );
  }
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && canonEqual(a[k]!, b[k]!));
}

/** Whether `s` has no lone surrogate (valid Unicode, so it has a UTF-8 form). */
export function isWellFormed(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const n = s.charCodeAt(i + 1);
      if (n >= 0xdc00 && n <= 0xdfff) i++;
      else return false;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

/** An object without a prototype: `__proto__` is an ordinary key there, as in a row. */
export function bare<V>(): { [k: string]: V } {
  return Object.create(null) as { [k: string]: V };
}

export function showCanon(v: Canon): string {
  return JSON.stringify(v, (_k, x) =>
    typeof x === 'bigint' ? `${x}n` : Object.is(x, -0) ? '-0' : x instanceof NullOr ? { nullOr: x.value } : x,
  );
}
