/**
 * The Iceberg type system (spec: "Schemas and Data Types").
 * Types are plain tagged objects so `switch (t.kind)` is exhaustive.
 */
import { ErrorKind, FloeError } from '../errors.ts';

export const SIMPLE_PRIMITIVES = [
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
  'string',
  'uuid',
  'binary',
  'unknown',
] as const;
export type SimplePrimitiveName = (typeof SIMPLE_PRIMITIVES)[number];

export interface SimplePrimitiveType {
  readonly kind: SimplePrimitiveName;
}
export interface DecimalType {
  readonly kind: 'decimal';
  readonly precision: number;
  readonly scale: number;
}
export interface FixedType {
  readonly kind: 'fixed';
  readonly length: number;
}
export type PrimitiveType = SimplePrimitiveType | DecimalType | FixedType;

export interface NestedField {
  readonly id: number;
  readonly name: string;
  readonly required: boolean;
  readonly type: IcebergType;
  readonly doc?: string;
  /** v3 defaults, kept as their JSON single-value form. */
  readonly initialDefault?: unknown;
  readonly writeDefault?: unknown;
}
export interface StructType {
  readonly kind: 'struct';
  readonly fields: readonly NestedField[];
}
export interface ListType {
  readonly kind: 'list';
  readonly elementId: number;
  readonly elementRequired: boolean;
  readonly element: IcebergType;
}
export interface MapType {
  readonly kind: 'map';
  readonly keyId: number;
  readonly key: IcebergType;
  readonly valueId: number;
  readonly valueRequired: boolean;
  readonly value: IcebergType;
}
export type NestedType = StructType | ListType | MapType;
export type IcebergType = PrimitiveType | NestedType;

const simple = Object.fromEntries(SIMPLE_PRIMITIVES.map((k) => [k, Object.freeze({ kind: k })])) as {
  readonly [K in SimplePrimitiveName]: SimplePrimitiveType & { readonly kind: K };
};
/** Shared singletons for the parameterless primitives: `T.long`, `T.string` … */
export const T = simple;

export function decimal(precision: number, scale: number): DecimalType {
  if (!Number.isInteger(precision) || precision < 1 || precision > 38) {
    throw new FloeError(ErrorKind.DataInvalid, `decimal precision must be 1..38, got ${precision}`);
  }
  if (!Number.isInteger(scale) || scale < 0 || scale > precision) {
    throw new FloeError(ErrorKind.DataInvalid, `decimal scale must be 0..${precision}, got ${scale}`);
  }
  return { kind: 'decimal', precision, scale };
}
export function fixed(length: number): FixedType {
  return { kind: 'fixed', length };
}
export function field(
  id: number,
  name: string,
  type: IcebergType,
  required = false,
  doc?: string,
): NestedField {
  return doc === undefined ? { id, name, required, type } : { id, name, required, type, doc };
}
export function struct(fields: readonly NestedField[]): StructType {
  return { kind: 'struct', fields };
}
export function list(elementId: number, element: IcebergType, elementRequired = false): ListType {
  return { kind: 'list', elementId, element, elementRequired };
}
export function map(
  keyId: number,
  key: IcebergType,
  valueId: number,
  value: IcebergType,
  valueRequired = false,
): MapType {
  return { kind: 'map', keyId, key, valueId, value, valueRequired };
}

export function isPrimitive(t: IcebergType): t is PrimitiveType {
  return t.kind !== 'struct' && t.kind !== 'list' && t.kind !== 'map';
}

/** The spec's string form of a primitive: `long`, `decimal(9,2)`, `fixed[16]`. */
export function primitiveToString(t: PrimitiveType): string {
  switch (t.kind) {
    case 'decimal':
      return `decimal(${t.precision},${t.scale})`;
    case 'fixed':
      return `fixed[${t.length}]`;
    default:
      return t.kind;
  }
}

const DECIMAL_RE = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/;
const FIXED_RE = /^fixed\[\s*(\d+)\s*\]$/;

/** Parses a primitive's string form (readers accept spaces, e.g. `decimal(9, 2)`). */
export function parsePrimitive(s: string): PrimitiveType {
  const lower = s.trim().toLowerCase();
  if ((SIMPLE_PRIMITIVES as readonly string[]).includes(lower)) return T[lower as SimplePrimitiveName];
  const d = DECIMAL_RE.exec(lower);
  if (d) return decimal(Number(d[1]), Number(d[2]));
  const f = FIXED_RE.exec(lower);
  if (f) return fixed(Number(f[1]));
  throw new FloeError(ErrorKind.FeatureUnsupported, `unsupported Iceberg type '${s}'`);
}

export function typeEquals(a: IcebergType, b: IcebergType): boolean {
  return JSON.stringify(typeToJson(a)) === JSON.stringify(typeToJson(b));
}

/** Human-readable form for CLI output and error messages. */
export function typeToString(t: IcebergType): string {
  switch (t.kind) {
    case 'struct':
      return `struct<${t.fields.map((f) => `${f.name}: ${typeToString(f.type)}`).join(', ')}>`;
    case 'list':
      return `list<${typeToString(t.element)}>`;
    case 'map':
      return `map<${typeToString(t.key)}, ${typeToString(t.value)}>`;
    default:
      return primitiveToString(t);
  }
}

// ---- JSON serialization (spec Appendix C) ----

export type TypeJson = string | Record<string, unknown>;

export function fieldToJson(f: NestedField): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: f.id,
    name: f.name,
    required: f.required,
    type: typeToJson(f.type),
  };
  if (f.doc !== undefined) out.doc = f.doc;
  if (f.initialDefault !== undefined) out['initial-default'] = f.initialDefault;
  if (f.writeDefault !== undefined) out['write-default'] = f.writeDefault;
  return out;
}

export function typeToJson(t: IcebergType): TypeJson {
  switch (t.kind) {
    case 'struct':
      return { type: 'struct', fields: t.fields.map(fieldToJson) };
    case 'list':
      return {
        type: 'list',
        'element-id': t.elementId,
        element: typeToJson(t.element),
        'element-required': t.elementRequired,
      };
    case 'map':
      return {
        type: 'map',
        'key-id': t.keyId,
        key: typeToJson(t.key),
        'value-id': t.valueId,
        value: typeToJson(t.value),
        'value-required': t.valueRequired,
      };
    default:
      return primitiveToString(t);
  }
}

function num(v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  throw new FloeError(ErrorKind.DataInvalid, `invalid ${what}: ${JSON.stringify(v)}`);
}

export function fieldFromJson(j: Record<string, unknown>): NestedField {
  const f: {
    -readonly [K in keyof NestedField]: NestedField[K];
  } = {
    id: num(j.id, 'field id'),
    name: String(j.name),
    required: j.required === true,
    type: typeFromJson(j.type as TypeJson),
  };
  if (typeof j.doc === 'string') f.doc = j.doc;
  if (j['initial-default'] !== undefined) f.initialDefault = j['initial-default'];
  if (j['write-default'] !== undefined) f.writeDefault = j['write-default'];
  return f;
}

export function typeFromJson(j: TypeJson): IcebergType {
  if (typeof j === 'string') return parsePrimitive(j);
  if (j === null || typeof j !== 'object') {
    throw new FloeError(ErrorKind.DataInvalid, `invalid Iceberg type JSON: ${String(j)}`);
  }
  switch (j.type) {
    case 'struct':
      return struct((j.fields as Record<string, unknown>[]).map(fieldFromJson));
    case 'list':
      return list(
        num(j['element-id'], 'element-id'),
        typeFromJson(j.element as TypeJson),
        j['element-required'] === true,
      );
    case 'map':
      return map(
        num(j['key-id'], 'key-id'),
        typeFromJson(j.key as TypeJson),
        num(j['value-id'], 'value-id'),
        typeFromJson(j.value as TypeJson),
        j['value-required'] === true,
      );
    default:
      throw new FloeError(ErrorKind.DataInvalid, `invalid Iceberg type JSON: ${JSON.stringify(j)}`);
  }
}
