/**
 * Typed rows (Avro records decoded to `iceberg/values.ts` form) moved into a table's schema: the
 * table may hold wider types than the record's writer schema (int → long, float → double, a
 * decimal of more precision: the unscaled value is unchanged) and columns the record lacks (null).
 * A value that cannot take its column's type, or a missing required one, is a `ProjectFailure`.
 */
import type { IcebergType, StructType } from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';

export class ProjectFailure {
  constructor(
    readonly path: string,
    readonly why: string,
  ) {}
}

export function projectRow(row: Row, target: StructType): Row | ProjectFailure {
  try {
    return projectStruct(row, target, '') as Row;
  } catch (e) {
    if (e instanceof ProjectFailure) return e;
    throw e;
  }
}

function projectStruct(v: { readonly [k: string]: IcebergValue }, t: StructType, path: string): Row {
  const out: Row = {};
  for (const f of t.fields) {
    const p = path === '' ? f.name : `${path}.${f.name}`;
    const x = v[f.name];
    if (x === null || x === undefined) {
      if (f.required) throw new ProjectFailure(p, 'required column has no value');
      continue;
    }
    out[f.name] = projectValue(x, f.type, p);
  }
  return out;
}

function projectValue(v: IcebergValue, t: IcebergType, path: string): IcebergValue {
  if (v === null || v === undefined) return null;
  switch (t.kind) {
    case 'struct':
      if (typeof v !== 'object' || v instanceof Uint8Array || Array.isArray(v) || v instanceof Map)
        throw new ProjectFailure(path, 'expected a record');
      return projectStruct(v as { readonly [k: string]: IcebergValue }, t, path);
    case 'list':
      if (!Array.isArray(v)) throw new ProjectFailure(path, 'expected an array');
      return (v as readonly IcebergValue[]).map((x, i) => projectValue(x, t.element, `${path}[${i}]`));
    case 'map': {
      if (!(v instanceof Map)) throw new ProjectFailure(path, 'expected a map');
      const m = new Map<IcebergValue, IcebergValue>();
      for (const [k, x] of v as ReadonlyMap<IcebergValue, IcebergValue>)
        m.set(projectValue(k, t.key, `${path}.key`), projectValue(x, t.value, `${path}.value`));
      return m;
    }
    case 'long':
      if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
      if (typeof v === 'bigint') return v;
      throw new ProjectFailure(path, `expected an integer for long, got ${typeof v}`);
    case 'double':
    case 'float':
      if (typeof v === 'number') return v;
      throw new ProjectFailure(path, `expected a number for ${t.kind}, got ${typeof v}`);
    default:
      return v;
  }
}
