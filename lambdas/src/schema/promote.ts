/**
 * Type promotion driven by data (spec "Schema Evolution": `int → long`, `float → double`,
 * `decimal(P,S) → decimal(P',S)` with P' > P). A JSON value infers as `long` or `double`, but an
 * existing `int`, `float` or `decimal` column holds most such values as it is; only a value that
 * does not fit — and that the promoted type would hold — asks for the wider type:
 *
 * | column         | value                                               | needs           |
 * |----------------|-----------------------------------------------------|-----------------|
 * | int            | integer outside int32, inside int64                 | long            |
 * | float          | finite number outside float32's normal range        | double          |
 * | decimal(P,S)   | number with more than P−S integer digits (S kept)   | decimal(P',S)   |
 *
 * Anything else needs nothing: it fits, or no promotion would help (a fraction for an int column,
 * more fractional digits than S, more than 38 digits) and conversion dead-letters it.
 *
 * Why float is promoted on range only: a JSON fraction such as `0.1` is exact in neither float32
 * nor float64, so "not exactly representable as float32" would promote nearly every float column
 * on its first fractional value, which is not what its writer chose. Rounding to float32's 24-bit
 * significand is what a float column means. A magnitude beyond float32's range, however, would
 * turn into ±infinity (above ~3.4e38) or lose its significant digits, down to zero (below the
 * smallest normal float32, ~1.18e-38): that is loss of the value itself, so it promotes. A hint or
 * an Avro writer schema that says `double` promotes too (they declare the type).
 */
import { decimal, type PrimitiveType, type StructType, T } from '../iceberg/types.ts';
import { JsonNumberText } from '../records/json-line.ts';
import { columnNameOf } from './column-name.ts';
import { decimalFromText } from './decimal-text.ts';
import { type ColumnNeeds, isWiderPromotion, valueDecidedColumns } from './fit.ts';

const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const FLOAT_MAX = 3.4028234663852886e38;
/** The smallest normal float32 (2^-126): below it a float32 keeps fewer and fewer digits. */
const FLOAT_MIN_NORMAL = 1.1754943508222875e-38;
const MAX_DECIMAL_PRECISION = 38;

/**
 * The wider type a `column` must be promoted to for it to hold the JSON value `v` (as the parser
 * or the columnar scanner gives it), or undefined when it fits or no promotion would help.
 */
export function promotionFor(column: PrimitiveType, v: unknown): PrimitiveType | undefined {
  switch (column.kind) {
    case 'int': {
      const i = integerOf(v);
      return i !== undefined && (i < INT_MIN || i > INT_MAX) && i >= LONG_MIN && i <= LONG_MAX
        ? T.long
        : undefined;
    }
    case 'float': {
      const d = numberOf(v);
      if (d === undefined || d === 0 || !Number.isFinite(d)) return undefined;
      const abs = Math.abs(d);
      return abs > FLOAT_MAX || abs < FLOAT_MIN_NORMAL ? T.double : undefined;
    }
    case 'decimal': {
      const digits = decimalDigits(v, column.scale);
      return digits !== undefined && digits > column.precision && digits <= MAX_DECIMAL_PRECISION
        ? decimal(digits, column.scale)
        : undefined;
    }
    default:
      return undefined;
  }
}

/** The wider of two promotions of one column (same kind; decimals by precision). */
export function widerOf(a: PrimitiveType | undefined, b: PrimitiveType): PrimitiveType {
  if (a === undefined) return b;
  if (a.kind === 'decimal' && b.kind === 'decimal') return a.precision >= b.precision ? a : b;
  return a;
}

/**
 * What a batch needs of the table's columns (for {@link fitToExisting}): for each column whose
 * width the values decide, a hinted type when it is a promotion of the column (a hint declares
 * the type), else what `measure` finds the values need.
 */
export function columnNeeds(
  existing: StructType,
  incoming: StructType,
  hints: ReadonlyMap<string, PrimitiveType>,
  measure: (columns: ReadonlyMap<string, PrimitiveType>) => ColumnNeeds,
): ColumnNeeds {
  const decided = valueDecidedColumns(existing, incoming);
  if (decided.size === 0) return decided;
  const needs = new Map<string, PrimitiveType>();
  const byValues = new Map<string, PrimitiveType>();
  for (const [path, column] of decided) {
    const hint = hints.get(path);
    if (hint === undefined) byValues.set(path, column);
    else if (isWiderPromotion(column, hint)) needs.set(path, hint);
  }
  if (byValues.size > 0) for (const [path, t] of measure(byValues)) needs.set(path, t);
  return needs;
}

// ---------------------------------------------------------------------------------------------
// Measuring parsed JSON records.

interface LeafNode {
  readonly kind: 'leaf';
  readonly path: string;
  readonly column: PrimitiveType;
}
interface StructNode {
  readonly kind: 'struct';
  readonly fields: Map<string, Node>;
}
interface ElementsNode {
  /** A list's elements (JSON arrays) or a map's values (JSON objects). */
  readonly kind: 'elements';
  readonly list: boolean;
  child: Node | undefined;
}
type Node = LeafNode | StructNode | ElementsNode;

/**
 * What the values of parsed JSON `records` need of `columns` (paths as {@link valueDecidedColumns}
 * gives them, resolved against `table`, the table's current struct). Keys are matched to columns
 * by the inference name rule, as conversion does.
 */
export function measureRecords(
  table: StructType,
  columns: ReadonlyMap<string, PrimitiveType>,
  records: Iterable<object>,
): ColumnNeeds {
  const root: StructNode = { kind: 'struct', fields: new Map() };
  for (const [path, column] of columns) place(root, table, path.split('.'), path, column);
  const needs = new Map<string, PrimitiveType>();
  const see = (node: Node, v: unknown): void => {
    if (v === null || v === undefined) return;
    if (node.kind === 'leaf') {
      const p = promotionFor(node.column, v);
      if (p !== undefined) needs.set(node.path, widerOf(needs.get(node.path), p));
    } else if (node.kind === 'elements') {
      if (node.child === undefined) return;
      if (node.list ? Array.isArray(v) : isObject(v))
        for (const x of Object.values(v as object)) see(node.child, x);
    } else if (isObject(v)) {
      for (const key of Object.keys(v)) {
        const child = node.fields.get(columnNameOf(key) ?? '');
        if (child !== undefined) see(child, (v as Record<string, unknown>)[key]);
      }
    }
  };
  for (const r of records) see(root, r);
  return needs;
}

/** Adds the leaf at `segments` (walked along `type`, so `element` is told from a field so named). */
function place(
  node: StructNode,
  type: StructType,
  segments: readonly string[],
  path: string,
  column: PrimitiveType,
): void {
  const [name, ...rest] = segments;
  const field = type.fields.find((f) => f.name === name);
  if (name === undefined || field === undefined) return;
  let t = field.type;
  let at: Node | undefined = node.fields.get(name);
  let put = (n: Node): void => {
    node.fields.set(name, n);
  };
  let i = 0;
  // Lists and maps: descend through their `element` / `value` segments.
  while ((t.kind === 'list' || t.kind === 'map') && i < rest.length) {
    const elements: ElementsNode =
      at?.kind === 'elements' ? at : { kind: 'elements', list: t.kind === 'list', child: undefined };
    put(elements);
    t = t.kind === 'list' ? t.element : t.value;
    i++;
    at = elements.child;
    put = (n) => {
      elements.child = n;
    };
  }
  if (i === rest.length) {
    put({ kind: 'leaf', path, column });
    return;
  }
  if (t.kind !== 'struct') return;
  const struct: StructNode = at?.kind === 'struct' ? at : { kind: 'struct', fields: new Map() };
  put(struct);
  place(struct, t, rest.slice(i), path, column);
}

function isObject(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumberText);
}

// ---------------------------------------------------------------------------------------------
// JSON values as numbers.

/** An exact integer value, or undefined (fractions, non-numbers). */
function integerOf(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : undefined;
  if (v instanceof JsonNumberText) {
    const r = decimalFromText(v.text, MAX_DECIMAL_PRECISION, 0);
    return r.ok ? r.unscaled : undefined;
  }
  return undefined;
}

function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof JsonNumberText) return v.value;
  return undefined;
}

/** Digits of the unscaled value of `v` at `scale`, or undefined when it has more fractional digits. */
function decimalDigits(v: unknown, scale: number): number | undefined {
  let text: string;
  if (typeof v === 'bigint') text = v.toString();
  else if (typeof v === 'number') {
    if (!Number.isFinite(v)) return undefined;
    text = String(v);
  } else if (v instanceof JsonNumberText) text = v.text;
  else if (typeof v === 'string') text = v.trim();
  else return undefined;
  const r = decimalFromText(text, MAX_DECIMAL_PRECISION + 1, scale);
  if (!r.ok) return undefined;
  const abs = r.unscaled < 0n ? -r.unscaled : r.unscaled;
  return abs.toString().length;
}
