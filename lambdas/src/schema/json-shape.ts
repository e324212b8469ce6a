/** Small predicates on parsed JSON values shared by inference and conversion. */
import { JsonNumberText } from '../records/json-line.ts';

/** A JSON object (not an array, not a kept number text). */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumberText);
}

/**
 * True for values that need a column: anything but null, and arrays/objects holding at least one
 * such value. `null`, `[]`, `{}`, `[null]`, `{"a": []}` carry no type yet (DESIGN §3).
 */
export function hasTypedValue(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (Array.isArray(v)) return v.some(hasTypedValue);
  if (isJsonObject(v) && !(v instanceof Uint8Array)) {
    for (const k of Object.keys(v)) if (hasTypedValue(v[k])) return true;
    return false;
  }
  return true;
}
