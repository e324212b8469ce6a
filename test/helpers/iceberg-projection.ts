/**
 * Column projection for the independent row reader (iceberg-rows.ts), from format/spec.md
 * "Column Projection" and "Default values": Parquet columns found by field id (files without any:
 * by `schema.name-mapping.default`, else, as a fallback, by the read schema's names); a field absent
 * from a file reads as its identity-partition value, else its `initial-default`, else null.
 *
 * Canonical values: long / time / timestamps → bigint (micro- or nanoseconds as the type says),
 * int / float / double → number, date → `yyyy-MM-dd`, decimal → number (hyparquet's conversion,
 * inexact beyond 2^53), string / uuid → string, binary / fixed → Uint8Array, struct → object keyed
 * by the schema's names, list → array, map → object keyed by the key's text.
 */
import { parquetMetadata, parquetRead, parquetSchema } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { decimalBytesToBigInt, int, isObj, str } from './iceberg-validator.ts';

// ---------------------------------------------------------------------------------------------
// Schema

export type IType =
  | string
  | { type: 'struct'; fields: IField[] }
  | { type: 'list'; elementId: number; element: IType }
  | { type: 'map'; keyId: number; key: IType; valueId: number; value: IType };

export interface IField {
  readonly id: number;
  readonly name: string;
  readonly type: IType;
  readonly initialDefault?: unknown;
}

function parseType(t: unknown): IType {
  if (typeof t === 'string') return t;
  if (!isObj(t)) throw new Error(`bad schema type ${String(t)}`);
  if (t.type === 'struct') return { type: 'struct', fields: parseFields(t.fields) };
  if (t.type === 'list')
    return { type: 'list', elementId: int(t['element-id']) ?? -1, element: parseType(t.element) };
  if (t.type === 'map')
    return {
      type: 'map',
      keyId: int(t['key-id']) ?? -1,
      key: parseType(t.key),
      valueId: int(t['value-id']) ?? -1,
      value: parseType(t.value),
    };
  throw new Error(`unknown schema type ${String(t.type)}`);
}

function parseFields(fields: unknown): IField[] {
  if (!Array.isArray(fields)) throw new Error('struct without fields');
  return fields.filter(isObj).map((f) => ({
    id: int(f.id) ?? -1,
    name: String(f.name),
    type: parseType(f.type),
    ...(Object.hasOwn(f, 'initial-default') ? { initialDefault: f['initial-default'] } : {}),
  }));
}

/** The top-level fields of schema `id` (v1: the single `schema`). */
export function schemaFields(meta: Record<string, unknown>, id: number | undefined): IField[] {
  const list = Array.isArray(meta.schemas) ? meta.schemas.filter(isObj) : [];
  const s = list.find((x) => int(x['schema-id']) === id) ?? (isObj(meta.schema) ? meta.schema : undefined);
  if (!s) throw new Error(`schema ${String(id)} is not in the metadata`);
  return parseFields(s.fields);
}

/** Field id → type over every schema (deletes on dropped columns still apply). */
export function allFieldTypes(meta: Record<string, unknown>): Map<number, IType> {
  const out = new Map<number, IType>();
  const visit = (t: IType): void => {
    if (typeof t === 'string') return;
    if (t.type === 'struct') {
      for (const f of t.fields) {
        if (!out.has(f.id)) out.set(f.id, f.type);
        visit(f.type);
      }
    } else if (t.type === 'list') {
      out.set(t.elementId, t.element);
      visit(t.element);
    } else {
      out.set(t.keyId, t.key);
      out.set(t.valueId, t.value);
      visit(t.key);
      visit(t.value);
    }
  };
  const schemas = [...(Array.isArray(meta.schemas) ? meta.schemas : []), meta.schema].filter(isObj);
  // Newest schema first, so a promoted type (int → long) wins.
  for (const s of schemas.reverse()) visit({ type: 'struct', fields: parseFields(s.fields) });
  return out;
}

// Column Projection: name mapping entries; without a configured one, the read schema's names.
export interface Mapping {
  readonly names: string[];
  readonly id: number | undefined;
  readonly fields: Mapping[];
}

export function nameMappingOf(meta: Record<string, unknown>, schema: IField[]): Mapping[] {
  const props = isObj(meta.properties) ? meta.properties : {};
  const text = str(props['schema.name-mapping.default']);
  const parse = (xs: unknown): Mapping[] =>
    (Array.isArray(xs) ? xs : []).filter(isObj).map((m) => ({
      names: Array.isArray(m.names) ? m.names.map(String) : [],
      id: int(m['field-id']),
      fields: parse(m.fields),
    }));
  if (text !== undefined) return parse(JSON.parse(text));
  const fromType = (t: IType): Mapping[] =>
    typeof t === 'string'
      ? []
      : t.type === 'struct'
        ? t.fields.map((f) => ({ names: [f.name], id: f.id, fields: fromType(f.type) }))
        : t.type === 'list'
          ? [{ names: ['element'], id: t.elementId, fields: fromType(t.element) }]
          : [
              { names: ['key'], id: t.keyId, fields: fromType(t.key) },
              { names: ['value'], id: t.valueId, fields: fromType(t.value) },
            ];
  return fromType({ type: 'struct', fields: schema });
}

// ---------------------------------------------------------------------------------------------
// Parquet

type Node = ReturnType<typeof parquetSchema>;

/** Where a file is read from and how its columns map to field ids. */
export interface ProjectionCtx {
  readonly read: (uri: string) => Promise<Uint8Array>;
  /** Field id → type over every schema of the table. */
  readonly types: Map<number, IType>;
  readonly nameMapping: Mapping[];
}

export interface ParquetFile {
  /** Rows as objects keyed by the file's top-level column names (null prototype). */
  readonly rows: Record<string, unknown>[];
  /** Field id → schema node (with its path of file names from the top level). */
  readonly byId: Map<number, Node>;
  readonly idOf: Map<Node, number>;
}

/** hyparquet's nanosecond values (INT96, TIMESTAMP(NANOS)), scaled once the Iceberg type is known. */
class Nanos {
  constructor(readonly v: bigint) {}
}

const PARSERS = {
  timestampFromMilliseconds: (ms: bigint) => BigInt(ms) * 1000n,
  timestampFromMicroseconds: (us: bigint) => BigInt(us),
  timestampFromNanoseconds: (ns: bigint) => new Nanos(BigInt(ns)),
  dateFromDays: (days: number) => isoDate(days),
};

/** A Parquet file's rows (only the top-level columns holding `onlyIds`, when given). */
export async function readParquet(ctx: ProjectionCtx, uri: string, onlyIds?: number[]): Promise<ParquetFile> {
  const bytes = await ctx.read(uri);
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const metadata = parquetMetadata(buf);
  const root = parquetSchema(metadata);
  const idOf = assignIds(root, ctx.nameMapping);
  const byId = new Map<number, Node>();
  for (const [node, id] of idOf) if (!byId.has(id)) byId.set(id, node);
  let top = root.children;
  if (onlyIds) {
    const wanted = new Set(onlyIds.map((id) => byId.get(id)?.path[0]));
    top = top.filter((c) => wanted.has(c.element.name));
  }
  const names = top.map((c) => c.element.name);
  let arrays: unknown[][] = [];
  if (names.length > 0) {
    await parquetRead({
      file: buf,
      metadata,
      columns: names,
      compressors,
      utf8: false, // Iceberg binary columns are unannotated BYTE_ARRAY
      parsers: PARSERS,
      onComplete: (r: unknown[][]) => {
        arrays = r;
      },
    });
  } else arrays = Array.from({ length: Number(metadata.num_rows) }, () => []);
  const rows = arrays.map((a) => {
    const o: Record<string, unknown> = Object.create(null);
    names.forEach((n, i) => {
      o[n] = a[i];
    });
    return o;
  });
  return { rows, byId, idOf };
}

/** Field ids of a file's schema nodes: its own, or, when it has none at all, by name mapping. */
function assignIds(root: Node, mapping: Mapping[]): Map<Node, number> {
  const out = new Map<Node, number>();
  const all: Node[] = [];
  const collect = (n: Node): void => {
    for (const c of n.children) {
      all.push(c);
      collect(c);
    }
  };
  collect(root);
  if (all.some((n) => n.element.field_id !== undefined && n.element.field_id !== null)) {
    for (const n of all) if (typeof n.element.field_id === 'number') out.set(n, n.element.field_id);
    return out;
  }
  const walk = (n: Node, entries: Mapping[]): void => {
    for (const c of logicalChildren(n)) {
      const name = c.role ?? c.node.element.name;
      const m = entries.find((e) => e.names.includes(name));
      if (!m) continue;
      if (m.id !== undefined) out.set(c.node, m.id);
      walk(c.node, m.fields);
    }
  };
  walk(root, mapping);
  return out;
}

/** A node's children as the Iceberg type sees them: list element, map key/value, struct fields. */
function logicalChildren(n: Node): { node: Node; role?: string }[] {
  const kind = n.element.logical_type?.type ?? n.element.converted_type;
  const middle = n.children[0];
  if ((kind === 'LIST' || kind === 'MAP' || kind === 'MAP_KEY_VALUE') && n.children.length === 1 && middle) {
    if (middle.element.repetition_type === 'REPEATED' && middle.children.length > 0) {
      if (kind === 'LIST') {
        const el = middle.children.length === 1 ? middle.children[0] : middle;
        return el ? [{ node: el, role: 'element' }] : [];
      }
      const [k, v] = middle.children;
      return [...(k ? [{ node: k, role: 'key' }] : []), ...(v ? [{ node: v, role: 'value' }] : [])];
    }
  }
  return n.children.map((node) => ({ node }));
}

// ---------------------------------------------------------------------------------------------
// Values

function isoDate(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

/** A Parquet (or partition) value as the canonical value of Iceberg primitive type `t`. */
export function toCanon(v: unknown, t: string): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Nanos) return /_ns$/.test(t) ? v.v : v.v / 1000n;
  switch (t) {
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return typeof v === 'bigint' ? v : BigInt(v as number);
    case 'int':
    case 'float':
    case 'double':
      return Number(v);
    case 'string':
      return v instanceof Uint8Array ? new TextDecoder().decode(v) : v;
    default:
      return v;
  }
}

/** A value of a field absent from the file: identity partition value, initial-default, or null. */
export function missingValue(id: number, constants: Map<number, unknown>, field?: IField): unknown {
  if (constants.has(id)) return constants.get(id);
  if (field && field.initialDefault !== undefined && typeof field.type === 'string')
    return toCanon(field.initialDefault, field.type);
  return null;
}

/** Column Projection: identity partition values of a data file, by source field id. */
/** An avsc-decoded partition value (Avro encoding of the type, spec Appendix A) as canonical. */
export function partitionValue(v: unknown, t: string): unknown {
  if (v === null || v === undefined) return null;
  if (t === 'date') return isoDate(Number(v));
  const dec = /^decimal\(\s*\d+\s*,\s*(\d+)\s*\)$/.exec(t);
  if (dec && v instanceof Uint8Array) return Number(decimalBytesToBigInt(v)) / 10 ** Number(dec[1]);
  if (t === 'uuid' && v instanceof Uint8Array) {
    const h = Buffer.from(v).toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  if (Buffer.isBuffer(v)) return new Uint8Array(v);
  return toCanon(v, t);
}

function project(v: unknown, t: IType, node: Node, file: ParquetFile): unknown {
  if (v === null || v === undefined) return null;
  if (typeof t === 'string') return toCanon(v, t);
  const kids = logicalChildren(node);
  if (t.type === 'struct') {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const f of t.fields) {
      const child = kids.find((k) => file.idOf.get(k.node) === f.id)?.node;
      out[f.name] = child
        ? project(o[child.element.name], f.type, child, file)
        : missingValue(f.id, new Map(), f);
    }
    return out;
  }
  if (t.type === 'list') {
    const el = kids[0]?.node;
    return (v as unknown[]).map((e) => (el ? project(e, t.element, el, file) : null));
  }
  const valueNode = kids.find((k) => k.role === 'value')?.node;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>))
    out[k] = valueNode ? project(x, t.value, valueNode, file) : null;
  return out;
}

export function projectRow(
  file: ParquetFile,
  raw: Record<string, unknown>,
  schema: IField[],
  constants: Map<number, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of schema) {
    const node = file.byId.get(f.id);
    // Only a top-level node is this column (ids are unique, but be strict about where it sits).
    out[f.name] =
      node && node.path.length === 1
        ? project(raw[node.element.name], f.type, node, file)
        : missingValue(f.id, constants, f);
  }
  return out;
}

/** The value of field `id` (top-level or nested in structs) in a raw row, by projection rules. */
export function valueById(
  ctx: ProjectionCtx,
  file: ParquetFile,
  raw: Record<string, unknown>,
  id: number,
  constants: Map<number, unknown>,
): unknown {
  const t = ctx.types.get(id);
  const node = file.byId.get(id);
  if (!node) return missingValue(id, constants);
  let v: unknown = raw;
  for (const name of node.path) {
    // Equality Delete Files: "if a parent struct column is null it implies the leaf column is null".
    if (v === null || v === undefined || typeof v !== 'object') return null;
    v = (v as Record<string, unknown>)[name];
  }
  return typeof t === 'string' ? toCanon(v, t) : (v ?? null);
}

/** A value as a string that is equal exactly when the values are (int and long alike). */
export function valueKey(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return `i${v}`;
  if (typeof v === 'number') {
    if (Number.isInteger(v) && !Object.is(v, -0)) return `i${v}`;
    return Number.isNaN(v) ? 'fNaN' : `f${Object.is(v, -0) ? '-0' : String(v)}`;
  }
  if (typeof v === 'string') return `s${JSON.stringify(v)}`;
  if (typeof v === 'boolean') return `b${v}`;
  if (v instanceof Uint8Array) return `x${Buffer.from(v).toString('hex')}`;
  if (v instanceof Nanos) return `n${v.v}`;
  return `j${JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x))}`;
}

export function tupleKey(values: unknown[]): string {
  return values.map(valueKey).join('\u0000');
}
