/**
 * Row lineage (format v3; spec §Row Lineage, §Reserved Field IDs): every row of a v3 table has a
 * `_row_id` and a `_last_updated_sequence_number`, either written in its data file (non-null
 * values of the reserved columns) or inherited — `first_row_id` of the data file + the row's
 * position in it, and the data file's data sequence number. A data file with a null
 * `first_row_id` (written before the table was upgraded to v3, and not yet assigned ids) reads
 * null for both (spec §Row Lineage for Upgraded Tables; Appendix E, "Version 3").
 *
 * A rewrite that moves rows to new files (compaction) must keep them: "The row's existing non-null
 * `_row_id` must be copied into the new data file" and, the row being unmodified, "the existing
 * non-null `_last_updated_sequence_number` value must be copied" (§Row lineage assignment). Rows
 * still without ids are written with nulls, so they take the new file's inherited values.
 */
import type { Schema } from './schema.ts';
import type { TableMetadata } from './table-metadata.ts';
import { field, type NestedField, T } from './types.ts';
import type { Row } from './values.ts';

/** Spec §Reserved Field IDs. */
export const ROW_ID_FIELD_ID = 2147483540;
export const LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID = 2147483539;
export const ROW_ID = '_row_id';
export const LAST_UPDATED_SEQUENCE_NUMBER = '_last_updated_sequence_number';

/**
 * The two metadata columns as written to data files: optional longs (Java's
 * `MetadataColumns.ROW_ID` / `LAST_UPDATED_SEQUENCE_NUMBER`), after the table's columns (Java's
 * `MetadataColumns.schemaWithRowLineage`).
 */
export const ROW_LINEAGE_FIELDS: readonly NestedField[] = [
  field(ROW_ID_FIELD_ID, ROW_ID, T.long, false),
  field(LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID, LAST_UPDATED_SEQUENCE_NUMBER, T.long, false),
];

/** Whether the table tracks row lineage (format v3 and later). */
export function tracksRowLineage(meta: Pick<TableMetadata, 'format-version'>): boolean {
  return meta['format-version'] >= 3;
}

/**
 * Why rows of `schema` cannot carry the lineage columns by name, if they cannot: a top-level
 * column of the table already has one of the names (rows are keyed by field name).
 */
export function rowLineageNameClash(schema: Schema): string | undefined {
  const clash = schema.fields.find((f) => f.name === ROW_ID || f.name === LAST_UPDATED_SEQUENCE_NUMBER);
  return clash
    ? `the table has a column named ${clash.name}, the name of a row lineage metadata column`
    : undefined;
}

/** `schema` with the two lineage columns appended (for reading and writing data files). */
export function withRowLineage(schema: Schema): Schema {
  return { ...schema, fields: [...schema.fields, ...ROW_LINEAGE_FIELDS] };
}

/** What a data file's rows inherit (spec §First Row ID Inheritance, §Sequence Number Inheritance). */
export interface LineageSource {
  /** The data file's `first_row_id` after inheritance; undefined when none was assigned. */
  readonly firstRowId: bigint | undefined;
  readonly dataSequenceNumber: bigint;
}

/**
 * Replaces null lineage values of `rows` (every row of one data file, in file order, read with
 * `withRowLineage`) by the inherited ones, in place: `_row_id` = `first_row_id` + position,
 * `_last_updated_sequence_number` = the file's data sequence number; both null when the file has
 * no `first_row_id` (as Java's `ParquetValueReaders.rowIds` / `lastUpdated`).
 */
export function inheritRowLineage(rows: Row[], source: LineageSource): Row[] {
  const first = source.firstRowId;
  for (let pos = 0; pos < rows.length; pos++) {
    const row = rows[pos]!;
    if (first === undefined) {
      row[ROW_ID] = null;
      row[LAST_UPDATED_SEQUENCE_NUMBER] = null;
      continue;
    }
    row[ROW_ID] = asLong(row[ROW_ID]) ?? first + BigInt(pos);
    row[LAST_UPDATED_SEQUENCE_NUMBER] =
      asLong(row[LAST_UPDATED_SEQUENCE_NUMBER]) ?? source.dataSequenceNumber;
  }
  return rows;
}

function asLong(v: unknown): bigint | undefined {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  return undefined;
}
