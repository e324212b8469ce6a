/**
 * Just enough of npm's semver ranges to compare `engines.node` fields (no pre-releases): `||`,
 * space-separated comparators (`>=`, `>`, `<=`, `<`, `=`), `^`, `~`, `*`, `x` and partial
 * versions (`20`, `0.6.x`). The root package has no `semver` dependency to borrow.
 */
type Version = readonly [number, number, number];
/** `[from, to)`; `to` undefined: unbounded. */
type Interval = readonly [from: Version, to: Version | undefined];

const ZERO: Version = [0, 0, 0];

export function parseVersion(text: string): Version {
  const [a = 0, b = 0, c = 0] = text.replace(/^v/, '').split('.').map(Number);
  return [a, b, c];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** The parts given before any `x` / `*`: `0.6.x` → [0, 6]. */
function partial(text: string): number[] {
  const parts: number[] = [];
  for (const p of text.split('.')) {
    if (p === '' || p === 'x' || p === 'X' || p === '*') break;
    const n = Number(p);
    if (!Number.isInteger(n) || n < 0) throw new Error(`unsupported version '${text}'`);
    parts.push(n);
  }
  return parts;
}

const full = (parts: readonly number[]): Version => [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0];
/** The first version after every version matching `parts`: `20` → 21.0.0, `0.6` → 0.7.0. */
const after = (parts: readonly number[]): Version | undefined =>
  parts.length === 0 ? undefined : full([...parts.slice(0, -1), parts.at(-1)! + 1]);

function comparator(text: string): Interval {
  const m = /^(>=|<=|>|<|=|\^|~)?v?(.*)$/.exec(text)!;
  const op = m[1] ?? '=';
  const p = partial(m[2]!);
  const exact = p.length === 3;
  switch (op) {
    case '>=':
      return [full(p), undefined];
    case '>':
      return [exact ? [p[0]!, p[1]!, p[2]! + 1] : (after(p) ?? [Infinity, 0, 0]), undefined];
    case '<':
      return [ZERO, full(p)];
    case '<=':
      return [ZERO, exact ? [p[0]!, p[1]!, p[2]! + 1] : after(p)];
    case '^': {
      const first = p.findIndex((n) => n !== 0);
      const upTo = first === -1 ? p.length : first + 1;
      return [full(p), after(p.slice(0, upTo))];
    }
    case '~':
      return [full(p), after(p.slice(0, Math.min(p.length, 2)))];
    default:
      return [full(p), exact ? [p[0]!, p[1]!, p[2]! + 1] : after(p)];
  }
}

/** A range as a union of intersections of intervals. */
function parseRange(range: string): Interval[][] {
  return range.split('||').map((alt) =>
    alt
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .filter((c) => c !== '')
      .map(comparator),
  );
}

export function satisfies(version: string | Version, range: string): boolean {
  const v = typeof version === 'string' ? parseVersion(version) : version;
  const inside = ([from, to]: Interval) => compare(v, from) >= 0 && (to === undefined || compare(v, to) < 0);
  return parseRange(range).some((alt) => alt.every(inside));
}

/**
 * True when every version in `inner` is in `outer`. Both are unions of intervals whose ends come
 * from the ranges' own versions, so membership only changes at those versions: testing each of
 * them (and 0.0.0) decides it exactly.
 */
export function isSubset(inner: string, outer: string): boolean {
  const probes = [ZERO, ...[inner, outer].flatMap((r) => parseRange(r).flat().flat())].filter(
    (v): v is Version => v !== undefined,
  );
  return probes.every((v) => !satisfies(v, inner) || satisfies(v, outer));
}
