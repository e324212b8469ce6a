/**
 * Typed field readers for metadata JSON parsed by `parseJson` (spec Appendix C). Integers arrive
 * as `number` or, beyond 2^53, `bigint`; these helpers normalise Iceberg `int` to number and
 * `long` to bigint and fail with FloeError DataInvalid naming the object and key.
 */
import { ErrorKind, FloeError } from '../../errors.ts';

export type JsonObject = Record<string, unknown>;

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;

/** The DataInvalid error every reader here throws: `<what>: <msg>`. */
export function invalid(what: string, msg: string): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `${what}: ${msg}`);
}

function show(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** A JSON object, or DataInvalid naming `what`. */
export function asObject(v: unknown, what: string): JsonObject {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw invalid(what, `expected an object, got ${show(v)}`);
  return v as JsonObject;
}

/** A JSON array, or DataInvalid naming `what`. */
export function asArray(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw invalid(what, `expected an array, got ${show(v)}`);
  return v;
}

/** True when the key is absent or JSON null (Java's `getXOrNull` treats both alike). */
export function isMissing(o: JsonObject, key: string): boolean {
  return o[key] === undefined || o[key] === null;
}

/** A required string field. */
export function reqString(o: JsonObject, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw invalid(what, `'${key}' must be a string, got ${show(v)}`);
  return v;
}

/** An optional string field (absent or null ⇒ undefined). */
export function optString(o: JsonObject, key: string, what: string): string | undefined {
  return isMissing(o, key) ? undefined : reqString(o, key, what);
}

/** An Iceberg `int` (32-bit). */
export function toInt(v: unknown, what: string): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < INT_MIN || n > INT_MAX) {
    throw invalid(what, `expected an int, got ${show(v)}`);
  }
  return n;
}

/** An Iceberg `long`, always as bigint. */
export function toLong(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw invalid(what, `expected a long, got ${show(v)}`);
}

/** A required `int` field. */
export function reqInt(o: JsonObject, key: string, what: string): number {
  if (isMissing(o, key)) throw invalid(what, `missing required field '${key}'`);
  return toInt(o[key], `${what} '${key}'`);
}

/** An optional `int` field (absent or null ⇒ undefined). */
export function optInt(o: JsonObject, key: string, what: string): number | undefined {
  return isMissing(o, key) ? undefined : toInt(o[key], `${what} '${key}'`);
}

/** A required `long` field. */
export function reqLong(o: JsonObject, key: string, what: string): bigint {
  if (isMissing(o, key)) throw invalid(what, `missing required field '${key}'`);
  return toLong(o[key], `${what} '${key}'`);
}

/** An optional `long` field (absent or null ⇒ undefined). */
export function optLong(o: JsonObject, key: string, what: string): bigint | undefined {
  return isMissing(o, key) ? undefined : toLong(o[key], `${what} '${key}'`);
}

/**
 * A string→string map (properties, summaries). Non-string scalars written by lenient writers are
 * kept as their decimal/text form rather than rejected.
 */
export function stringMap(v: unknown, what: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  const o = asObject(v, what);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(o)) {
    if (typeof x === 'string') out[k] = x;
    else if (typeof x === 'number' || typeof x === 'bigint' || typeof x === 'boolean') out[k] = String(x);
    else if (x !== null) throw invalid(what, `value of '${k}' must be a string, got ${show(x)}`);
  }
  return out;
}
