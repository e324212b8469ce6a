/**
 * Iceberg schemas (spec: "Schemas"): a struct with a schema id and optional identifier fields.
 * Columns are identified by field id, never by name.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import {
  fieldFromJson,
  fieldToJson,
  type IcebergType,
  isPrimitive,
  type NestedField,
  type StructType,
} from './types.ts';

export interface Schema {
  readonly schemaId: number;
  readonly identifierFieldIds?: readonly number[];
  readonly fields: readonly NestedField[];
}

export function schemaStruct(s: Schema): StructType {
  return { kind: 'struct', fields: s.fields };
}

export function schemaToJson(s: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = { type: 'struct', 'schema-id': s.schemaId };
  if (s.identifierFieldIds && s.identifierFieldIds.length > 0)
    out['identifier-field-ids'] = [...s.identifierFieldIds];
  out.fields = s.fields.map(fieldToJson);
  return out;
}

export function schemaFromJson(j: Record<string, unknown>, fallbackId = 0): Schema {
  if (j.type !== undefined && j.type !== 'struct') {
    throw new FloeError(ErrorKind.DataInvalid, `schema must be a struct, got ${JSON.stringify(j.type)}`);
  }
  if (!Array.isArray(j.fields)) throw new FloeError(ErrorKind.DataInvalid, 'schema has no fields array');
  const ids = j['identifier-field-ids'];
  const sid = j['schema-id'];
  return {
    schemaId: sid === undefined || sid === null ? fallbackId : Number(sid),
    ...(Array.isArray(ids) && ids.length > 0 ? { identifierFieldIds: ids.map(Number) } : {}),
    fields: (j.fields as Record<string, unknown>[]).map(fieldFromJson),
  };
}

/** A field reached from the schema root, with its dotted path of names. */
export interface IndexedField {
  readonly field: NestedField;
  readonly path: readonly string[];
  /** True when the field sits (at any depth) inside a list or map. */
  readonly inCollection: boolean;
}

/**
 * Every field id in the schema (struct fields, list elements, map keys and values) mapped to the
 * field. List elements and map keys/values are synthesised as fields named `element`, `key`, `value`.
 */
export function indexById(s: Schema | StructType): Map<number, IndexedField> {
  const out = new Map<number, IndexedField>();
  const visit = (t: IcebergType, path: string[], inCollection: boolean) => {
    switch (t.kind) {
      case 'struct':
        for (const f of t.fields) {
          const p = [...path, f.name];
          out.set(f.id, { field: f, path: p, inCollection });
          visit(f.type, p, inCollection);
        }
        return;
      case 'list': {
        const p = [...path, 'element'];
        const f: NestedField = {
          id: t.elementId,
          name: 'element',
          required: t.elementRequired,
          type: t.element,
        };
        out.set(f.id, { field: f, path: p, inCollection: true });
        visit(t.element, p, true);
        return;
      }
      case 'map': {
        const kp = [...path, 'key'];
        const vp = [...path, 'value'];
        out.set(t.keyId, {
          field: { id: t.keyId, name: 'key', required: true, type: t.key },
          path: kp,
          inCollection: true,
        });
        out.set(t.valueId, {
          field: { id: t.valueId, name: 'value', required: t.valueRequired, type: t.value },
          path: vp,
          inCollection: true,
        });
        visit(t.key, kp, true);
        visit(t.value, vp, true);
        return;
      }
      default:
        return;
    }
  };
  visit('kind' in s ? s : { kind: 'struct', fields: s.fields }, [], false);
  return out;
}

/** Highest field id used anywhere in the schema (0 for an empty schema). */
export function highestFieldId(s: Schema | StructType): number {
  let max = 0;
  for (const id of indexById(s).keys()) if (id > max) max = id;
  return max;
}

/** Primitive leaf fields in depth-first order (the columns of a Parquet file). */
export function leafFields(s: Schema | StructType): IndexedField[] {
  return [...indexById(s).values()].filter((f) => isPrimitive(f.field.type));
}

export function findFieldByName(s: Schema, name: string): NestedField | undefined {
  return s.fields.find((f) => f.name === name);
}

/** The fields along a path of names through structs (`['customer', 'id']`), or undefined. */
export function fieldsAlong(
  fields: readonly NestedField[],
  path: readonly string[],
): NestedField[] | undefined {
  const out: NestedField[] = [];
  let level = fields;
  for (const name of path) {
    const f = level.find((x) => x.name === name);
    if (!f) return undefined;
    out.push(f);
    level = f.type.kind === 'struct' ? f.type.fields : [];
  }
  return out;
}

/** `fields` with only the fields `ids` name and the structs on the way to them (pruned alike). */
export function pruneToIds(fields: readonly NestedField[], ids: ReadonlySet<number>): NestedField[] {
  return fields.flatMap((f): NestedField[] => {
    if (ids.has(f.id)) return [f];
    if (f.type.kind !== 'struct') return [];
    const inner = pruneToIds(f.type.fields, ids);
    return inner.length === 0 ? [] : [{ ...f, type: { kind: 'struct', fields: inner } }];
  });
}
