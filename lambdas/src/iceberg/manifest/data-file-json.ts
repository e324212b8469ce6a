/**
 * A lossless, compact JSON codec for `DataFile` descriptors: the ingest hands the descriptors of the
 * files it staged (metrics included) to the committer through a DynamoDB item.
 *
 * Shape: one JSON object with the spec's snake_case field names, in `DataFile` order, absent
 * optional fields omitted.
 * - longs (`record_count`, metric counts, `split_offsets`, …) are decimal strings;
 * - metric maps are arrays of `[fieldId, value]` pairs in the map's iteration order (counts as
 *   decimal strings, bounds as base64);
 * - `key_metadata` is base64;
 * - `partition` is an array whose JSON-safe values (null, booleans, strings, finite numbers other
 *   than -0) stay plain, while the others are tagged one-key objects: `{"b":"<decimal>"}` for a
 *   bigint, `{"x":"<base64>"}` for bytes, `{"n":"NaN"|"Infinity"|"-Infinity"|"-0"}` for numbers
 *   JSON cannot hold. `undefined` is written as null.
 *
 * `dataFileFromJson` is the exact inverse and rejects anything else with DataInvalid.
 */
import { ErrorKind, FloeError } from '../../errors.ts';
import type { DataFile, DataFileContent } from './types.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const COUNT_MAPS = ['column_sizes', 'value_counts', 'null_value_counts', 'nan_value_counts'] as const;
const BOUND_MAPS = ['lower_bounds', 'upper_bounds'] as const;
const KNOWN_KEYS: ReadonlySet<string> = new Set([
  'content',
  'file_path',
  'file_format',
  'partition',
  'record_count',
  'file_size_in_bytes',
  ...COUNT_MAPS,
  ...BOUND_MAPS,
  'key_metadata',
  'split_offsets',
  'equality_ids',
  'sort_order_id',
  'first_row_id',
  'referenced_data_file',
  'content_offset',
  'content_size_in_bytes',
]);

// ---------------------------------------------------------------------------------------------
// Encoding

/** `f` as compact JSON (no whitespace), lossless; see the module comment for the shape. */
export function dataFileToJson(f: DataFile): string {
  const out: Record<string, Json> = {
    content: f.content,
    file_path: f.file_path,
    file_format: f.file_format,
    partition: f.partition.map((v, i) => encodePartitionValue(v, i, f.file_path)),
    record_count: f.record_count.toString(),
    file_size_in_bytes: f.file_size_in_bytes.toString(),
  };
  for (const name of COUNT_MAPS) {
    const m = f[name];
    if (m !== undefined) out[name] = [...m].map(([id, v]): Json => [id, v.toString()]);
  }
  for (const name of BOUND_MAPS) {
    const m = f[name];
    if (m !== undefined) out[name] = [...m].map(([id, v]): Json => [id, toBase64(v)]);
  }
  if (f.key_metadata !== undefined) out.key_metadata = toBase64(f.key_metadata);
  if (f.split_offsets !== undefined) out.split_offsets = f.split_offsets.map((o) => o.toString());
  if (f.equality_ids !== undefined) out.equality_ids = [...f.equality_ids];
  if (f.sort_order_id !== undefined) out.sort_order_id = f.sort_order_id;
  if (f.first_row_id !== undefined) out.first_row_id = f.first_row_id.toString();
  if (f.referenced_data_file !== undefined) out.referenced_data_file = f.referenced_data_file;
  if (f.content_offset !== undefined) out.content_offset = f.content_offset.toString();
  if (f.content_size_in_bytes !== undefined) out.content_size_in_bytes = f.content_size_in_bytes.toString();
  return JSON.stringify(out);
}

function encodePartitionValue(v: unknown, index: number, path: string): Json {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'boolean':
    case 'string':
      return v;
    case 'number':
      if (Number.isNaN(v)) return { n: 'NaN' };
      if (v === Number.POSITIVE_INFINITY) return { n: 'Infinity' };
      if (v === Number.NEGATIVE_INFINITY) return { n: '-Infinity' };
      if (Object.is(v, -0)) return { n: '-0' };
      return v;
    case 'bigint':
      return { b: v.toString() };
  }
  if (v instanceof Uint8Array) return { x: toBase64(v) };
  throw new FloeError(
    ErrorKind.DataInvalid,
    `data file ${path}: partition value ${index} is not a scalar (${Object.prototype.toString.call(v)})`,
    { context: { filePath: path, index } },
  );
}

// ---------------------------------------------------------------------------------------------
// Decoding

/** The inverse of `dataFileToJson`. Throws DataInvalid naming what is wrong. */
export function dataFileFromJson(text: string): DataFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw invalid(`is not JSON (${e instanceof Error ? e.message : String(e)})`, { cause: e });
  }
  if (!isObject(raw)) throw invalid('is not a JSON object');
  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.has(key)) throw invalid(`has unknown field ${JSON.stringify(key)}`);
  }
  const filePath = raw.file_path;
  if (typeof filePath !== 'string' || filePath === '') throw invalid('file_path must be a non-empty string');
  const bad = (why: string): never => {
    throw invalid(`${filePath}: ${why}`, { filePath });
  };

  const content = raw.content;
  if (content !== 0 && content !== 1 && content !== 2) bad(`content must be 0, 1 or 2, got ${show(content)}`);
  if (typeof raw.file_format !== 'string') bad('file_format must be a string');
  if (!Array.isArray(raw.partition)) bad('partition must be an array');
  const partition = (raw.partition as unknown[]).map((v, i) => decodePartitionValue(v, i, bad));

  const f: Mutable<DataFile> = {
    content: content as DataFileContent,
    file_path: filePath,
    file_format: raw.file_format as string,
    partition,
    record_count: requiredLong(raw, 'record_count', bad),
    file_size_in_bytes: requiredLong(raw, 'file_size_in_bytes', bad),
  };
  for (const name of COUNT_MAPS) {
    if (raw[name] !== undefined) f[name] = decodeMap(raw[name], name, bad, (v) => parseLong(v));
  }
  for (const name of BOUND_MAPS) {
    if (raw[name] !== undefined) f[name] = decodeMap(raw[name], name, bad, (v) => fromBase64(v));
  }
  if (raw.key_metadata !== undefined) {
    const bytes = fromBase64(raw.key_metadata);
    if (bytes === undefined) bad('key_metadata must be a base64 string');
    f.key_metadata = bytes;
  }
  if (raw.split_offsets !== undefined) {
    if (!Array.isArray(raw.split_offsets)) bad('split_offsets must be an array');
    f.split_offsets = (raw.split_offsets as unknown[]).map((v, i) => {
      const o = parseLong(v);
      return o === undefined ? bad(`split_offsets[${i}] must be a decimal string, got ${show(v)}`) : o;
    });
  }
  if (raw.equality_ids !== undefined) {
    if (!Array.isArray(raw.equality_ids)) bad('equality_ids must be an array');
    f.equality_ids = (raw.equality_ids as unknown[]).map((v, i) =>
      isInt(v) ? v : bad(`equality_ids[${i}] must be an integer, got ${show(v)}`),
    );
  }
  if (raw.sort_order_id !== undefined) {
    if (!isInt(raw.sort_order_id)) bad(`sort_order_id must be an integer, got ${show(raw.sort_order_id)}`);
    f.sort_order_id = raw.sort_order_id as number;
  }
  if (raw.first_row_id !== undefined) f.first_row_id = requiredLong(raw, 'first_row_id', bad);
  if (raw.referenced_data_file !== undefined) {
    if (typeof raw.referenced_data_file !== 'string') bad('referenced_data_file must be a string');
    f.referenced_data_file = raw.referenced_data_file as string;
  }
  if (raw.content_offset !== undefined) f.content_offset = requiredLong(raw, 'content_offset', bad);
  if (raw.content_size_in_bytes !== undefined) {
    f.content_size_in_bytes = requiredLong(raw, 'content_size_in_bytes', bad);
  }
  return f;
}

function decodePartitionValue(v: unknown, index: number, bad: (why: string) => never): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return v;
  if (isObject(v)) {
    const keys = Object.keys(v);
    const tag = keys[0];
    const body = tag === undefined ? undefined : v[tag];
    if (keys.length === 1 && typeof body === 'string') {
      if (tag === 'b') {
        const n = parseLong(body);
        if (n !== undefined) return n;
      } else if (tag === 'x') {
        const bytes = fromBase64(body);
        if (bytes !== undefined) return bytes;
      } else if (tag === 'n') {
        const n = SPECIAL_NUMBERS.get(body);
        if (n !== undefined) return n;
      }
    }
  }
  return bad(`partition[${index}] has a bad value or tag ${show(v)}`);
}

const SPECIAL_NUMBERS: ReadonlyMap<string, number> = new Map([
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
  ['-0', -0],
]);

function decodeMap<V>(
  raw: unknown,
  name: string,
  bad: (why: string) => never,
  value: (v: unknown) => V | undefined,
): Map<number, V> {
  if (!Array.isArray(raw)) return bad(`${name} must be an array of [id, value] pairs`);
  const out = new Map<number, V>();
  raw.forEach((pair: unknown, i) => {
    if (!Array.isArray(pair) || pair.length !== 2 || !isInt(pair[0])) {
      bad(`${name}[${i}] must be an [id, value] pair, got ${show(pair)}`);
    }
    const [id, encoded] = pair as [number, unknown];
    const v = value(encoded);
    if (v === undefined) bad(`${name}[${i}] has a bad value ${show(encoded)}`);
    if (out.has(id)) bad(`${name} has field id ${id} twice`);
    out.set(id, v as V);
  });
  return out;
}

function requiredLong(raw: Record<string, unknown>, name: string, bad: (why: string) => never): bigint {
  const v = parseLong(raw[name]);
  return v === undefined ? bad(`${name} must be a decimal string, got ${show(raw[name])}`) : v;
}

const LONG = /^-?(0|[1-9]\d*)$/;

function parseLong(v: unknown): bigint | undefined {
  return typeof v === 'string' && LONG.test(v) && v !== '-0' ? BigInt(v) : undefined;
}

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function show(v: unknown): string {
  const s = v === undefined ? 'nothing' : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function invalid(why: string, options: { cause?: unknown; filePath?: string } = {}): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `data file descriptor ${why}`, {
    cause: options.cause,
    context: options.filePath === undefined ? {} : { filePath: options.filePath },
  });
}

// ---------------------------------------------------------------------------------------------
// Base64

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function toBase64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

/** Strict standard base64 (padding required) → a plain Uint8Array, or undefined. */
function fromBase64(v: unknown): Uint8Array | undefined {
  if (typeof v !== 'string' || !BASE64.test(v)) return undefined;
  const buf = Buffer.from(v, 'base64');
  // Non-canonical trailing bits would decode to the same bytes as another string: reject them.
  if (buf.toString('base64') !== v) return undefined;
  return new Uint8Array(buf);
}

// ---------------------------------------------------------------------------------------------

/** `f` without its optional per-column metric maps (for descriptors too large to store whole). */
export function withoutColumnMetrics(f: DataFile): DataFile {
  const {
    column_sizes: _columnSizes,
    value_counts: _valueCounts,
    null_value_counts: _nullValueCounts,
    nan_value_counts: _nanValueCounts,
    lower_bounds: _lowerBounds,
    upper_bounds: _upperBounds,
    ...rest
  } = f;
  return rest;
}
