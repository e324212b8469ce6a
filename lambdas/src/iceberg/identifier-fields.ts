/**
 * Identifier fields (spec: "Identifier Field IDs"): the columns that identify a row. They must be
 * required primitives other than float and double, nested only in required structs (never in a
 * list or map).
 */
import { fieldsAlong, type Schema } from './schema.ts';
import { isPrimitive, type NestedField, type StructType } from './types.ts';

/** `type` with every field along each path (dotted names) required. */
export function requirePaths(type: StructType, paths: readonly string[]): StructType {
  let out = type;
  for (const p of paths) out = requirePath(out, p.split('.'));
  return out;
}

function requirePath(type: StructType, path: readonly string[]): StructType {
  const [head, ...rest] = path;
  let changed = false;
  const fields = type.fields.map((f): NestedField => {
    if (f.name !== head) return f;
    let t = f.type;
    if (rest.length > 0 && t.kind === 'struct') t = requirePath(t, rest);
    if (f.required && t === f.type) return f;
    changed = true;
    return { ...f, required: true, type: t };
  });
  return changed ? { ...type, fields } : type;
}

/** The ids of the fields at `paths`, or undefined when one of them cannot be an identifier field. */
export function identifierIdsOf(schema: Schema, paths: readonly string[]): number[] | undefined {
  const ids: number[] = [];
  for (const dotted of paths) {
    const along = fieldsAlong(schema.fields, dotted.split('.'));
    if (!along?.every((f) => f.required)) return undefined;
    const field = along.at(-1);
    if (!field || !isPrimitive(field.type) || field.type.kind === 'float' || field.type.kind === 'double')
      return undefined;
    ids.push(field.id);
  }
  return ids;
}
