/**
 * The `coerce` type-conflict policy (DESIGN §3): a value whose JSON type does not match its
 * column's type is converted to the column's type when that loses nothing — `"123"` into a `long`
 * column, `42` into a `string` column, `"12.50"` into a `decimal` or `double` column, `"true"` into
 * a `boolean` one — and each conversion is reported as `path: from→to` so the reason is recorded.
 * Anything that would lose information (a fraction into a long, `"abc"` into a number, an integer
 * beyond 2^53 into a double) is left as it is, and the record is judged (dead-lettered) as before.
 *
 * Pure: parsed JSON values in, parsed JSON values out.
 */
import type { IcebergType, StructType } from '../iceberg/types.ts';
import { JsonNumberText, type JsonObject, type JsonValue } from '../records/json-line.ts';
import { columnNameOf } from './column-name.ts';

export interface Coerced {
  readonly value: JsonObject;
  /** One `path: from→to` per converted value (empty: the record was left as it was). */
  readonly notes: readonly string[];
}

const INTEGER = /^-?(0|[1-9]\d*)$/;
const DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;
const SAFE = 2n ** 53n;

export function coerceToSchema(value: JsonObject, schema: StructType): Coerced {
  const notes: string[] = [];
  const out = coerceStruct(value, schema, '', notes);
  return { value: notes.length === 0 ? value : out, notes };
}

function kindOf(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof JsonNumberText) return 'number';
  if (typeof v === 'bigint') return 'integer';
  if (typeof v === 'number') return Number.isInteger(v) ? 'number' : 'number';
  return typeof v;
}

function coerceStruct(v: JsonObject, t: StructType, path: string, notes: string[]): JsonObject {
  const byName = new Map(t.fields.map((f) => [f.name, f]));
  const out: JsonObject = {};
  for (const [key, x] of Object.entries(v)) {
    const name = columnNameOf(key);
    const field = name === undefined ? undefined : byName.get(name);
    out[key] =
      field === undefined ? x : coerceValue(x, field.type, path === '' ? key : `${path}.${key}`, notes);
  }
  return out;
}

function coerceValue(v: JsonValue, t: IcebergType, path: string, notes: string[]): JsonValue {
  if (v === null) return v;
  const note = (to: JsonValue): JsonValue => {
    notes.push(
      `${path}: ${kindOf(v)}→${t.kind === 'decimal' ? `decimal(${t.precision},${t.scale})` : t.kind}`,
    );
    return to;
  };
  switch (t.kind) {
    case 'struct':
      return typeof v === 'object' && !Array.isArray(v) && !(v instanceof JsonNumberText)
        ? coerceStruct(v as JsonObject, t, path, notes)
        : v;
    case 'list':
      return Array.isArray(v) ? v.map((x, i) => coerceValue(x, t.element, `${path}[${i}]`, notes)) : v;
    case 'long':
    case 'int': {
      const [lo, hi] = t.kind === 'long' ? [LONG_MIN, LONG_MAX] : [INT_MIN, INT_MAX];
      let n: bigint | undefined;
      if (typeof v === 'string' && INTEGER.test(v.trim())) n = BigInt(v.trim());
      else if (typeof v === 'number' && Number.isSafeInteger(v)) n = BigInt(v);
      else if (v instanceof JsonNumberText && Number.isSafeInteger(v.value)) n = BigInt(v.value);
      return n !== undefined && n >= lo && n <= hi ? note(n) : v;
    }
    case 'double':
    case 'float':
    case 'decimal': {
      if (typeof v === 'string' && DECIMAL.test(v.trim())) {
        const text = v.trim();
        const num = Number(text);
        if (Number.isFinite(num)) return note(new JsonNumberText(text, num));
      }
      if (typeof v === 'bigint' && t.kind !== 'decimal' && v <= SAFE && v >= -SAFE)
        return note(new JsonNumberText(`${v}.0`, Number(v)));
      return v;
    }
    case 'string':
      if (typeof v === 'bigint' || typeof v === 'boolean') return note(String(v));
      if (typeof v === 'number') return note(String(v));
      if (v instanceof JsonNumberText) return note(v.text);
      return v;
    case 'boolean':
      if (v === 'true' || v === 'false') return note(v === 'true');
      return v;
    default:
      return v;
  }
}
