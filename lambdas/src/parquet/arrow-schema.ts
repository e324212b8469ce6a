/**
 * Iceberg schema → Arrow schema for the Parquet writer. Every Arrow field carries
 * `PARQUET:field_id`, which the Rust Parquet writer turns into the Parquet `field_id`
 * (top-level columns, struct children, list `element`, map `key` and `value`).
 */
import * as arrow from 'apache-arrow';
import { ErrorKind, FloeError } from '../errors.ts';
import type { Schema } from '../iceberg/schema.ts';
import type { IcebergType, NestedField, PrimitiveType, StructType } from '../iceberg/types.ts';

/** Arrow field metadata key the Parquet writer reads field ids from. */
export const FIELD_ID_KEY = 'PARQUET:field_id';
/**
 * Name of the Arrow Map entries struct. Arrow JS forces `entries`; the footer patch renames the
 * Parquet group to the spec's `key_value`.
 */
const MAP_ENTRIES_NAME = 'entries';

function idMeta(id: number): Map<string, string> {
  return new Map([[FIELD_ID_KEY, String(id)]]);
}

/**
 * True when a type has at least one column to write. Iceberg `unknown` is omitted from data files
 * (it is always null), and so is any struct/list/map built only from it — Parquet has no empty groups.
 */
export function hasColumns(t: IcebergType): boolean {
  switch (t.kind) {
    case 'unknown':
      return false;
    case 'struct':
      return t.fields.some((f) => hasColumns(f.type));
    case 'list':
      return hasColumns(t.element);
    case 'map':
      return hasColumns(t.key) && hasColumns(t.value);
    default:
      return true;
  }
}

/** Arrow type for an Iceberg primitive (never called for `unknown`). */
export function arrowPrimitiveType(t: PrimitiveType): arrow.DataType {
  switch (t.kind) {
    case 'boolean':
      return new arrow.Bool();
    case 'int':
      return new arrow.Int32();
    case 'long':
      return new arrow.Int64();
    case 'float':
      return new arrow.Float32();
    case 'double':
      return new arrow.Float64();
    case 'decimal':
      // The Rust writer picks INT32/INT64/FIXED_LEN_BYTE_ARRAY(minimum bytes) by precision.
      return new arrow.Decimal(t.scale, t.precision, 128);
    case 'date':
      return new arrow.DateDay();
    case 'time':
      return new arrow.TimeMicrosecond();
    case 'timestamp':
      return new arrow.TimestampMicrosecond();
    case 'timestamptz':
      return new arrow.TimestampMicrosecond('UTC');
    case 'timestamp_ns':
      return new arrow.TimestampNanosecond();
    case 'timestamptz_ns':
      return new arrow.TimestampNanosecond('UTC');
    case 'string':
      return new arrow.Utf8();
    case 'uuid':
      // The UUID logical type is added when the footer is patched.
      return new arrow.FixedSizeBinary(16);
    case 'fixed':
      return new arrow.FixedSizeBinary(t.length);
    case 'binary':
      return new arrow.Binary();
    case 'unknown':
      throw new FloeError(ErrorKind.FeatureUnsupported, 'Iceberg unknown type has no Parquet column');
  }
}

/** Arrow type for any Iceberg type; nested fields that have no columns are dropped. */
export function arrowType(t: IcebergType): arrow.DataType {
  switch (t.kind) {
    case 'struct':
      return new arrow.Struct(t.fields.filter((f) => hasColumns(f.type)).map(arrowField));
    case 'list':
      return new arrow.List(
        new arrow.Field('element', arrowType(t.element), !t.elementRequired, idMeta(t.elementId)),
      );
    case 'map': {
      const key = new arrow.Field('key', arrowType(t.key), false, idMeta(t.keyId));
      const value = new arrow.Field('value', arrowType(t.value), !t.valueRequired, idMeta(t.valueId));
      const entries = new arrow.Struct<{ key: arrow.DataType; value: arrow.DataType }>([key, value]);
      return new arrow.Map_(new arrow.Field(MAP_ENTRIES_NAME, entries, false), false);
    }
    default:
      return arrowPrimitiveType(t);
  }
}

/** Arrow field for an Iceberg field: required ⇒ non-nullable, id in the field metadata. */
export function arrowField(f: NestedField): arrow.Field {
  return new arrow.Field(f.name, arrowType(f.type), !f.required, idMeta(f.id));
}

/**
 * The Arrow schema Floe writes for an Iceberg schema (or struct). Columns without data
 * (`unknown`) are omitted, as the Iceberg spec requires for Parquet.
 */
export function icebergToArrowSchema(schema: Schema | StructType): arrow.Schema {
  return new arrow.Schema(schema.fields.filter((f) => hasColumns(f.type)).map(arrowField));
}
