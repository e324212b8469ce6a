/**
 * The columns of a Parquet file as decoded to Arrow, each with the Iceberg field id it carries:
 * the Parquet `field_id` (Arrow field metadata `PARQUET:field_id`), or, for files written without
 * ids, the id the table's name mapping gives its name (spec Appendix C).
 */
import * as arrow from 'apache-arrow';
import { ErrorKind, FloeError } from '../errors.ts';
import { findMapped, type NameMapping } from '../iceberg/name-mapping.ts';
import { FIELD_ID_KEY } from './arrow-schema.ts';

export interface FileColumn {
  /** Dotted path of names in the file, for error messages. */
  readonly path: string;
  /** Undefined when the file has no id for the column (and no mapping gave one). */
  readonly id: number | undefined;
  readonly type: arrow.DataType;
  /** Struct fields; `[element]` for a list; `[key, value]` for a map. */
  readonly children: readonly FileColumn[];
  /** Depth-first position among the file's primitive columns (Parquet leaves); -1 for groups. */
  readonly leafOrdinal: number;
}

/**
 * The file's top-level columns (in file order, matching the record batch children). Ids come from
 * the file when any column has one; otherwise from `mapping`, else the columns have no ids.
 */
export function fileColumns(schema: arrow.Schema, file: string, mapping?: NameMapping): FileColumn[] {
  const useIds = schema.fields.some(hasFieldId);
  let leaves = 0;
  const visit = (
    f: arrow.Field,
    parent: string,
    mapped: NameMapping | undefined,
    aliases: readonly string[],
  ): FileColumn => {
    const path = parent === '' ? f.name : `${parent}.${f.name}`;
    const entry = useIds ? undefined : findByNames(mapped, [f.name, ...aliases]);
    const id = useIds ? fieldIdOf(f, path, file) : entry?.fieldId;
    const below = entry?.fields;
    const t = f.type;
    let children: FileColumn[] = [];
    if (arrow.DataType.isStruct(t)) {
      children = t.children.map((c) => visit(c, path, below, []));
    } else if (arrow.DataType.isList(t) || isLargeList(t)) {
      children = [visit(t.children[0]!, path, below, ['element'])];
    } else if (arrow.DataType.isMap(t)) {
      // Arrow nests key and value in an `entries` struct; Iceberg (and name mappings) do not.
      const [key, value] = (t.children[0]!.type as arrow.Struct).children;
      children = [visit(key!, path, below, ['key']), visit(value!, path, below, ['value'])];
    }
    const leafOrdinal = children.length === 0 ? leaves++ : -1;
    return { path, id, type: t, children, leafOrdinal };
  };
  return schema.fields.map((f) => visit(f, '', mapping, []));
}

function hasFieldId(f: arrow.Field): boolean {
  return f.metadata.has(FIELD_ID_KEY) || f.type.children?.some(hasFieldId) === true;
}

function fieldIdOf(f: arrow.Field, path: string, file: string): number | undefined {
  const raw = f.metadata.get(FIELD_ID_KEY);
  if (raw === undefined) return undefined;
  const id = Number(raw);
  if (!Number.isSafeInteger(id)) {
    throw new FloeError(ErrorKind.DataInvalid, `${file}: column ${path} has an invalid field id '${raw}'`, {
      context: { file, column: path },
    });
  }
  return id;
}

function findByNames(mapping: NameMapping | undefined, names: readonly string[]) {
  for (const n of names) {
    const hit = findMapped(mapping, n);
    if (hit) return hit;
  }
  return undefined;
}

function isLargeList(t: arrow.DataType): boolean {
  return t.typeId === arrow.Type.LargeList;
}
