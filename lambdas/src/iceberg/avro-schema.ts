/**
 * Iceberg ⇄ Avro schema mapping (spec Appendix A "Format-specific Requirements: Avro"; facts §2.9),
 * generated in the same JSON shape and attribute order as Java's `TypeToSchema`, plus converters
 * between Floe's in-memory values (`values.ts`) and the datum values avsc reads and writes.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import {
  decimal,
  fixed,
  type IcebergType,
  list,
  map,
  type NestedField,
  type PrimitiveType,
  type StructType,
  T,
  typeToString,
} from './types.ts';

export type AvroSchemaJson = string | readonly unknown[] | Record<string, unknown>;

// ---- names ----

const VALID_AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function sanitizeChar(c: string): string {
  return c >= '0' && c <= '9' ? `_${c}` : `_x${c.charCodeAt(0).toString(16).toUpperCase()}`;
}

/**
 * The Avro field name for an Iceberg field name, as Java's `AvroSchemaUtil.sanitize`: an invalid
 * first char becomes `_<digit>` or `_x<HEX>`, later invalid chars `_x<HEX>` (per UTF-16 unit).
 * Unlike Java, non-ASCII letters are also escaped, because strict Avro readers (and avsc) reject them.
 */
export function avroFieldName(name: string): string {
  if (VALID_AVRO_NAME.test(name)) return name;
  if (name.length === 0) throw new FloeError(ErrorKind.DataInvalid, 'empty field name');
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    const ok = i === 0 ? /[A-Za-z_]/.test(c) : /[A-Za-z0-9_]/.test(c);
    out += ok ? c : sanitizeChar(c);
  }
  return out;
}

/** Bytes of the fixed holding decimal(P, S): the least n with 2^(8n-1) ≥ 10^P (Java `decimalRequiredBytes`). */
export function decimalRequiredBytes(precision: number): number {
  const limit = 10n ** BigInt(precision);
  let n = 1;
  while (1n << BigInt(8 * n - 1) < limit) n++;
  return n;
}

// ---- Iceberg → Avro ----

function optionOf(schema: AvroSchemaJson): AvroSchemaJson {
  return schema === 'null' ? schema : ['null', schema];
}

/**
 * Converts an Iceberg struct to an Avro record schema (spec Appendix A): fields carry `field-id`,
 * optional ⇒ `["null", T]` with default null, lists carry `element-id`, string-keyed maps are Avro maps
 * with `key-id`/`value-id`, other maps are arrays of `k<K>_v<V>` records with `logicalType: map`.
 * Nested records are named `r<fieldId>` as Java does; named fixed types are emitted once and then
 * referenced by name (Avro forbids redefining a name).
 */
export function icebergToAvroSchema(struct: StructType, recordName: string): Record<string, unknown> {
  const defined = new Set<string>();

  const named = (name: string, build: () => Record<string, unknown>): AvroSchemaJson => {
    if (defined.has(name)) return name;
    defined.add(name);
    return build();
  };

  const record = (s: StructType, name: string): AvroSchemaJson =>
    named(name, () => ({
      type: 'record',
      name,
      fields: s.fields.map((f) => {
        const avroName = avroFieldName(f.name);
        const out: Record<string, unknown> = { name: avroName };
        const t = convert(f.type, f.id);
        out.type = f.required ? t : optionOf(t);
        if (f.doc !== undefined) out.doc = f.doc;
        if (!f.required) out.default = null;
        if (avroName !== f.name) out['iceberg-field-name'] = f.name;
        out['field-id'] = f.id;
        return out;
      }),
    }));

  const primitive = (t: PrimitiveType): AvroSchemaJson => {
    switch (t.kind) {
      case 'unknown':
        return 'null';
      case 'boolean':
      case 'int':
      case 'long':
      case 'float':
      case 'double':
      case 'string':
        return t.kind;
      case 'binary':
        return 'bytes';
      case 'date':
        return { type: 'int', logicalType: 'date' };
      case 'time':
        return { type: 'long', logicalType: 'time-micros' };
      case 'timestamp':
      case 'timestamptz':
        return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': t.kind === 'timestamptz' };
      case 'timestamp_ns':
      case 'timestamptz_ns':
        return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': t.kind === 'timestamptz_ns' };
      case 'uuid':
        return named('uuid_fixed', () => ({
          type: 'fixed',
          name: 'uuid_fixed',
          size: 16,
          logicalType: 'uuid',
        }));
      case 'fixed':
        return named(`fixed_${t.length}`, () => ({
          type: 'fixed',
          name: `fixed_${t.length}`,
          size: t.length,
        }));
      case 'decimal': {
        const name = `decimal_${t.precision}_${t.scale}`;
        return named(name, () => ({
          type: 'fixed',
          name,
          size: decimalRequiredBytes(t.precision),
          logicalType: 'decimal',
          precision: t.precision,
          scale: t.scale,
        }));
      }
    }
  };

  // `id` is the id of the enclosing field / element / key / value, used to name nested records.
  const convert = (t: IcebergType, id: number): AvroSchemaJson => {
    switch (t.kind) {
      case 'struct':
        return record(t, `r${id}`);
      case 'list': {
        const items = convert(t.element, t.elementId);
        return {
          type: 'array',
          items: t.elementRequired ? items : optionOf(items),
          'element-id': t.elementId,
        };
      }
      case 'map': {
        const k = convert(t.key, t.keyId);
        const v0 = convert(t.value, t.valueId);
        const v = t.valueRequired ? v0 : optionOf(v0);
        if (t.key.kind === 'string') {
          return { type: 'map', values: v, 'key-id': t.keyId, 'value-id': t.valueId };
        }
        const valueField: Record<string, unknown> = { name: 'value', type: v };
        if (!t.valueRequired) valueField.default = null;
        valueField['field-id'] = t.valueId;
        return {
          type: 'array',
          items: named(`k${t.keyId}_v${t.valueId}`, () => ({
            type: 'record',
            name: `k${t.keyId}_v${t.valueId}`,
            fields: [{ name: 'key', type: k, 'field-id': t.keyId }, valueField],
          })),
          logicalType: 'map',
        };
      }
      default:
        return primitive(t);
    }
  };

  return record(struct, recordName) as Record<string, unknown>;
}

// ---- Avro → Iceberg (reading files written by other engines) ----

const PRIMITIVE_NAMES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

function asObject(s: unknown): Record<string, unknown> {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) {
    throw new FloeError(ErrorKind.DataInvalid, `unexpected Avro schema node: ${JSON.stringify(s)}`);
  }
  return s as Record<string, unknown>;
}

function optionalInner(s: unknown): { inner: unknown; optional: boolean } {
  if (!Array.isArray(s)) return { inner: s, optional: s === 'null' };
  const rest = s.filter((b) => b !== 'null');
  if (rest.length !== 1 || s.length !== 2) {
    throw new FloeError(
      ErrorKind.FeatureUnsupported,
      `Avro union ${JSON.stringify(s)} is not an Iceberg option`,
    );
  }
  return { inner: rest[0], optional: true };
}

function idOf(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  return -1;
}

/**
 * Converts a writer's Avro schema back to an Iceberg type, reading `field-id`, `element-id`,
 * `key-id`/`value-id` and `iceberg-field-name`. Ids a writer omitted come back as -1.
 * Logical types map back as Java's `SchemaToType` does (a timestamp without `adjust-to-utc` is tz).
 */
export function avroToIcebergType(schema: unknown): IcebergType {
  const named = new Map<string, IcebergType>();

  const convert = (s: unknown): IcebergType => {
    if (typeof s === 'string') {
      if (PRIMITIVE_NAMES.has(s)) return primitiveOf(s, {});
      const t = named.get(s);
      if (!t) throw new FloeError(ErrorKind.DataInvalid, `undefined Avro type name '${s}'`);
      return t;
    }
    if (Array.isArray(s)) {
      const { inner } = optionalInner(s);
      return convert(inner);
    }
    const o = asObject(s);
    const type = o.type;
    let out: IcebergType;
    if (type === 'record' || type === 'error') {
      out = {
        kind: 'struct',
        fields: ((o.fields as unknown[]) ?? []).map((f0) => {
          const f = asObject(f0);
          const { inner, optional } = optionalInner(f.type);
          const name = typeof f['iceberg-field-name'] === 'string' ? f['iceberg-field-name'] : String(f.name);
          const field: NestedField = {
            id: idOf(f['field-id']),
            name,
            required: !optional,
            type: convert(inner),
          };
          return typeof f.doc === 'string' ? { ...field, doc: f.doc } : field;
        }),
      };
    } else if (type === 'array') {
      const items = o.items;
      const itemObj =
        typeof items === 'object' && items !== null && !Array.isArray(items) ? asObject(items) : null;
      const kv = itemObj?.type === 'record' ? (itemObj.fields as Record<string, unknown>[]) : null;
      if (o.logicalType === 'map' && kv && kv.length === 2) {
        const keyF = kv.find((f) => f.name === 'key') ?? kv[0]!;
        const valF = kv.find((f) => f.name === 'value') ?? kv[1]!;
        const key = convert(optionalInner(keyF.type).inner);
        const v = optionalInner(valF.type);
        const value = convert(v.inner);
        out = map(idOf(keyF['field-id']), key, idOf(valF['field-id']), value, !v.optional);
        // The k/v record is a named type too; register it in case a later field references it by name.
        if (itemObj?.name) {
          named.set(String(itemObj.name), {
            kind: 'struct',
            fields: [
              { id: out.keyId, name: 'key', required: true, type: key },
              { id: out.valueId, name: 'value', required: out.valueRequired, type: value },
            ],
          });
        }
      } else {
        const { inner, optional } = optionalInner(items);
        out = list(idOf(o['element-id']), convert(inner), !optional);
      }
    } else if (type === 'map') {
      const v = optionalInner(o.values);
      out = map(idOf(o['key-id']), T.string, idOf(o['value-id']), convert(v.inner), !v.optional);
    } else if (type === 'enum') {
      out = T.string;
    } else if (type === 'fixed') {
      out = primitiveOf('fixed', o);
    } else if (typeof type === 'string' && PRIMITIVE_NAMES.has(type)) {
      out = primitiveOf(type, o);
    } else {
      return convert(type);
    }
    if (typeof o.name === 'string' && !named.has(o.name)) named.set(o.name, out);
    return out;
  };
  return convert(schema);
}

function primitiveOf(avroType: string, o: Record<string, unknown>): PrimitiveType {
  const lt = o.logicalType;
  switch (avroType) {
    case 'null':
      return T.unknown;
    case 'boolean':
      return T.boolean;
    case 'int':
      return lt === 'date' ? T.date : T.int;
    case 'long': {
      const utc = o['adjust-to-utc'];
      const tz = utc === undefined ? true : utc === true || utc === 'true';
      if (lt === 'time-micros') return T.time;
      if (lt === 'timestamp-micros') return tz ? T.timestamptz : T.timestamp;
      if (lt === 'timestamp-nanos') return tz ? T.timestamptz_ns : T.timestamp_ns;
      if (lt === 'local-timestamp-micros') return T.timestamp;
      if (lt === 'local-timestamp-nanos') return T.timestamp_ns;
      return T.long;
    }
    case 'float':
      return T.float;
    case 'double':
      return T.double;
    case 'string':
      return lt === 'uuid' ? T.uuid : T.string;
    case 'bytes':
      return lt === 'decimal' ? decimal(Number(o.precision), Number(o.scale ?? 0)) : T.binary;
    case 'fixed':
      if (lt === 'decimal') return decimal(Number(o.precision), Number(o.scale ?? 0));
      if (lt === 'uuid' && o.size === 16) return T.uuid;
      return fixed(Number(o.size));
    default:
      throw new FloeError(ErrorKind.FeatureUnsupported, `unsupported Avro type '${avroType}'`);
  }
}

/**
 * Rewrites a writer schema so every record field is named `avroFieldName(icebergName)` (keeping the
 * original in `iceberg-field-name`). Field names do not affect the binary layout, so the result
 * decodes the same bytes, and avsc accepts names Java allows but strict Avro does not.
 */
export function normalizeAvroFieldNames<S>(schema: S): S {
  const walk = (s: unknown): unknown => {
    if (Array.isArray(s)) return s.map(walk);
    if (typeof s !== 'object' || s === null) return s;
    const o = { ...(s as Record<string, unknown>) };
    if ((o.type === 'record' || o.type === 'error') && Array.isArray(o.fields)) {
      o.fields = o.fields.map((f0) => {
        const f = { ...(f0 as Record<string, unknown>) };
        const orig = typeof f['iceberg-field-name'] === 'string' ? f['iceberg-field-name'] : String(f.name);
        f.name = avroFieldName(orig);
        if (f.name !== orig) f['iceberg-field-name'] = orig;
        f.type = walk(f.type);
        return f;
      });
    }
    if (o.items !== undefined) o.items = walk(o.items);
    if (o.values !== undefined) o.values = walk(o.values);
    if (typeof o.type === 'object') o.type = walk(o.type);
    return o;
  };
  return walk(schema) as S;
}

// ---- value converters ----

function invalid(t: IcebergType, v: unknown, why = ''): never {
  const shown = typeof v === 'bigint' ? `${v}n` : (JSON.stringify(v) ?? String(v));
  throw new FloeError(
    ErrorKind.DataInvalid,
    `invalid ${typeToString(t)} value ${shown}${why ? `: ${why}` : ''}`,
  );
}

function buf(b: Uint8Array): Buffer {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** Big-endian two's complement of `v` in exactly `size` bytes. */
export function bigintToTwosComplement(v: bigint, size: number): Uint8Array {
  const bits = BigInt(size * 8);
  const min = -(1n << (bits - 1n));
  const max = (1n << (bits - 1n)) - 1n;
  if (v < min || v > max) {
    throw new FloeError(ErrorKind.DataInvalid, `value ${v} does not fit ${size} bytes`);
  }
  let u = v < 0n ? (1n << bits) + v : v;
  const out = new Uint8Array(size);
  for (let i = size - 1; i >= 0; i--) {
    out[i] = Number(u & 0xffn);
    u >>= 8n;
  }
  return out;
}

/** Reads a big-endian two's complement integer of any length. */
export function twosComplementToBigint(b: Uint8Array): bigint {
  if (b.length === 0) return 0n;
  let u = 0n;
  for (const x of b) u = (u << 8n) | BigInt(x);
  return b[0]! & 0x80 ? u - (1n << BigInt(b.length * 8)) : u;
}

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export function uuidToBytes(s: string): Uint8Array {
  if (!UUID_RE.test(s)) throw new FloeError(ErrorKind.DataInvalid, `invalid uuid '${s}'`);
  const hex = s.replace(/-/g, '');
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function bytesToUuid(b: Uint8Array): string {
  if (b.length !== 16) throw new FloeError(ErrorKind.DataInvalid, `uuid must be 16 bytes, got ${b.length}`);
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function entriesOf(t: IcebergType, v: unknown): [unknown, unknown][] {
  if (v instanceof Map) return [...v.entries()];
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return Object.entries(v);
  return invalid(t, v, 'expected a Map');
}

/**
 * Converts a Floe value (see `values.ts`) to the datum avsc writes for `icebergToAvroSchema(t)`:
 * decimal bigint → fixed bytes, uuid string → 16 bytes, longs → bigint, structs keyed by Avro name,
 * non-string-keyed maps → arrays of `{key, value}`. Null stays null (the caller checks optionality).
 */
export function toAvroDatum(t: IcebergType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (t.kind) {
    case 'boolean':
      return typeof v === 'boolean' ? v : invalid(t, v);
    case 'int':
    case 'date':
      if (typeof v === 'bigint') return Number(v);
      return typeof v === 'number' && Number.isInteger(v) ? v : invalid(t, v);
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
      return typeof v === 'bigint' ? v : invalid(t, v);
    case 'float':
    case 'double':
      return typeof v === 'number' ? v : invalid(t, v);
    case 'string':
      return typeof v === 'string' ? v : invalid(t, v);
    case 'unknown':
      return null;
    case 'uuid':
      if (typeof v === 'string') return buf(uuidToBytes(v));
      return v instanceof Uint8Array && v.length === 16 ? buf(v) : invalid(t, v);
    case 'binary':
      return v instanceof Uint8Array ? buf(v) : invalid(t, v);
    case 'fixed':
      return v instanceof Uint8Array && v.length === t.length
        ? buf(v)
        : invalid(t, v, `need ${t.length} bytes`);
    case 'decimal':
      if (typeof v !== 'bigint') return invalid(t, v, 'expected the unscaled bigint');
      if ((v < 0n ? -v : v) >= 10n ** BigInt(t.precision)) return invalid(t, v, 'exceeds precision');
      return buf(bigintToTwosComplement(v, decimalRequiredBytes(t.precision)));
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array || v instanceof Map) {
        return invalid(t, v, 'expected an object');
      }
      const o = v as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const f of t.fields) {
        const d = toAvroDatum(f.type, o[f.name]);
        if (d === null && f.required && f.type.kind !== 'unknown') {
          throw new FloeError(ErrorKind.DataInvalid, `required field '${f.name}' (id ${f.id}) is null`);
        }
        out[avroFieldName(f.name)] = d;
      }
      return out;
    }
    case 'list': {
      if (!Array.isArray(v)) return invalid(t, v, 'expected an array');
      return v.map((e) => {
        const d = toAvroDatum(t.element, e);
        if (d === null && t.elementRequired) throw new FloeError(ErrorKind.DataInvalid, 'null list element');
        return d;
      });
    }
    case 'map': {
      const pairs = entriesOf(t, v).map(([k, val]) => {
        const dk = toAvroDatum(t.key, k);
        const dv = toAvroDatum(t.value, val);
        if (dk === null) throw new FloeError(ErrorKind.DataInvalid, 'null map key');
        if (dv === null && t.valueRequired) throw new FloeError(ErrorKind.DataInvalid, 'null map value');
        return [dk, dv] as const;
      });
      if (t.key.kind === 'string') {
        const out: Record<string, unknown> = {};
        for (const [k, val] of pairs) out[k as string] = val;
        return out;
      }
      return pairs.map(([key, value]) => ({ key, value }));
    }
  }
}

function bytesOf(t: IcebergType, d: unknown): Uint8Array {
  if (d instanceof Uint8Array) return new Uint8Array(d);
  return invalid(t, d, 'expected bytes');
}

/**
 * Converts a datum avsc decoded (with a writer schema whose fields were normalised by
 * `normalizeAvroFieldNames`) to Floe's in-memory value for `t` (the type from `avroToIcebergType`).
 */
export function fromAvroDatum(t: IcebergType, d: unknown): unknown {
  if (d === null || d === undefined) return null;
  switch (t.kind) {
    case 'int':
    case 'date':
      return typeof d === 'bigint' ? Number(d) : d;
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return typeof d === 'number' ? BigInt(d) : d;
    case 'uuid':
      return typeof d === 'string' ? d.toLowerCase() : bytesToUuid(bytesOf(t, d));
    case 'binary':
    case 'fixed':
      return bytesOf(t, d);
    case 'decimal':
      return twosComplementToBigint(bytesOf(t, d));
    case 'struct': {
      const o = d as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const f of t.fields) out[f.name] = fromAvroDatum(f.type, o[avroFieldName(f.name)]);
      return out;
    }
    case 'list':
      return (d as unknown[]).map((e) => fromAvroDatum(t.element, e));
    case 'map': {
      const out = new Map<unknown, unknown>();
      if (Array.isArray(d)) {
        for (const kv of d as { key: unknown; value: unknown }[]) {
          out.set(fromAvroDatum(t.key, kv.key), fromAvroDatum(t.value, kv.value));
        }
      } else {
        for (const [k, v] of Object.entries(d as Record<string, unknown>))
          out.set(k, fromAvroDatum(t.value, v));
      }
      return out;
    }
    default:
      return d;
  }
}
