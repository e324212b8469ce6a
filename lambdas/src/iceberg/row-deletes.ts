/**
 * Row-level deletes (spec §Row-level Deletes, §Scan Planning) applied to the rows of one data file,
 * for rewriting it (compaction). Pure: rows and deletes come already decoded.
 *
 * Which delete files apply is decided by sequence numbers here (the spec's rule) and by partition
 * by the caller (scan planning's `assignDeletes` pairs files of the same partition, plus global
 * equality deletes):
 * - a position delete applies when its data sequence number is ≥ the data file's (it may target
 *   rows added in the same commit);
 * - an equality delete applies when its data sequence number is > the data file's (strictly).
 * Equality compares the listed columns by value with null equal to null (`IS NULL`).
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { bytesToHex } from './conversions.ts';
import { indexById, type Schema } from './schema.ts';
import { isPrimitive } from './types.ts';
import type { IcebergValue, Row } from './values.ts';

/** One row of a position delete file. */
export interface PositionDelete {
  readonly filePath: string;
  /** 0-based position of the deleted row in that data file. */
  readonly pos: bigint;
}

export interface PositionDeleteFile {
  readonly dataSequenceNumber: bigint;
  readonly deletes: readonly PositionDelete[];
}

export interface EqualityDeleteFile {
  readonly dataSequenceNumber: bigint;
  readonly equalityIds: readonly number[];
  /** The delete file's rows, read with the same schema as the data rows (only equality columns needed). */
  readonly rows: readonly Row[];
}

export interface DataFileRows {
  /** The data file's path exactly as the manifest (and position deletes) spell it. */
  readonly filePath: string;
  readonly dataSequenceNumber: bigint;
  /** Every row of the file in file order: the row at index i has position i. */
  readonly rows: readonly Row[];
}

export interface RowDeletes {
  readonly position?: readonly PositionDeleteFile[];
  readonly equality?: readonly EqualityDeleteFile[];
}

/**
 * The rows of `data` that no applicable delete removes, in file order. `schema` is the one both
 * the data rows and the equality delete rows were read with; it must contain every equality id.
 * @throws FloeError `SchemaIncompatible` for an equality id that is not a primitive field of
 *   `schema` outside lists and maps.
 */
export function liveRows(schema: Schema, data: DataFileRows, deletes: RowDeletes): Row[] {
  const deleted = deletedPositions(data, deletes.position ?? []);
  const equality = (deletes.equality ?? []).filter((d) => d.dataSequenceNumber > data.dataSequenceNumber);
  const matchers = equality.map((d) => equalityMatcher(schema, d));
  const out: Row[] = [];
  data.rows.forEach((row, i) => {
    if (deleted.has(i)) return;
    for (const m of matchers) if (m(row)) return;
    out.push(row);
  });
  return out;
}

/** Positions in `data` removed by the applicable position delete files. */
export function deletedPositions(data: DataFileRows, files: readonly PositionDeleteFile[]): Set<number> {
  const out = new Set<number>();
  for (const f of files) {
    if (f.dataSequenceNumber < data.dataSequenceNumber) continue;
    for (const d of f.deletes) {
      if (d.filePath === data.filePath && d.pos >= 0n && d.pos < BigInt(data.rows.length))
        out.add(Number(d.pos));
    }
  }
  return out;
}

/** A predicate true for rows whose equality columns equal those of some row of the delete file. */
function equalityMatcher(schema: Schema, file: EqualityDeleteFile): (row: Row) => boolean {
  const paths = file.equalityIds.map((id) => columnPath(schema, id));
  const keyOf = (row: Row) => JSON.stringify(paths.map((p) => valueKey(valueAt(row, p))));
  const keys = new Set(file.rows.map(keyOf));
  return (row) => keys.has(keyOf(row));
}

function columnPath(schema: Schema, id: number): readonly string[] {
  const hit = indexById(schema).get(id);
  if (hit === undefined || hit.inCollection || !isPrimitive(hit.field.type)) {
    throw new FloeError(
      ErrorKind.SchemaIncompatible,
      `equality field id ${id} is not a primitive column of schema ${schema.schemaId} outside lists and maps`,
      { context: { fieldId: id, schemaId: schema.schemaId } },
    );
  }
  return hit.path;
}

/** The value at a path of field names; null when a struct on the way is null. */
function valueAt(row: Row, path: readonly string[]): IcebergValue {
  let v: IcebergValue = row;
  for (const name of path) {
    if (v === null || v === undefined || typeof v !== 'object') return null;
    v = Object.hasOwn(v, name) ? (v as Row)[name] : null;
  }
  return v;
}

/**
 * A string equal for equal values of one column: integers compare by value whether held as
 * number or bigint; floats as Java's `Double.equals` (NaN equals NaN, -0 differs from 0).
 */
function valueKey(v: IcebergValue): string {
  if (v === null || v === undefined) return 'n';
  switch (typeof v) {
    case 'boolean':
      return v ? 'T' : 'F';
    case 'bigint':
      return `i${v}`;
    case 'number':
      if (Object.is(v, -0)) return 'f-0';
      return Number.isInteger(v) ? `i${v}` : `f${v}`;
    case 'string':
      return `s${v}`;
    default:
      if (v instanceof Uint8Array) return `x${bytesToHex(v)}`;
      throw new FloeError(ErrorKind.DataInvalid, 'equality delete columns must be primitive values');
  }
}
