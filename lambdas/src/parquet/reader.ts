/**
 * Reads Iceberg data and delete files (Parquet, bytes in) back into Floe rows, exactly: the file is
 * decoded by the Rust Parquet reader (parquet-wasm) to Arrow, and each column is projected onto
 * the Iceberg schema by field id (projection.ts) and converted from the Arrow buffers
 * (leaf-decoders.ts). Used by table maintenance to rewrite files.
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import type { NameMapping } from '../iceberg/name-mapping.ts';
import type { PositionDelete } from '../iceberg/row-deletes.ts';
import { indexById, type Schema } from '../iceberg/schema.ts';
import { field, type NestedField, struct, T } from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import { fileColumns } from './file-columns.ts';
import { int96LeafOrdinals } from './int96.ts';
import { compileRows } from './projection.ts';

export interface ReadOptions {
  /**
   * The table's name mapping (`schema.name-mapping.default`, parsed with `parseNameMapping`):
   * used only for files without field ids. Without it such files read as all nulls (spec).
   */
  readonly nameMapping?: NameMapping;
  /** Values for field ids the file lacks, e.g. identity partition values from the manifest. */
  readonly constants?: ReadonlyMap<number, IcebergValue>;
  /** The file's path, named in error messages. */
  readonly filePath?: string;
}

/** Field ids of the position delete columns (spec: reserved field ids). */
export const POSITION_DELETE_FILE_PATH_ID = 2147483546;
export const POSITION_DELETE_POS_ID = 2147483545;

/** Rows per Arrow record batch: fewer, larger batches cost less per row. */
const BATCH_ROWS = 64 * 1024;

/**
 * Reads every row of a Parquet data file as `schema` (usually the table's current schema): rows
 * in file order, keyed by field name, every top-level field present.
 *
 * @throws FloeError `DataInvalid` for a file that is not valid Parquet, repeats a field id or holds
 *   invalid UTF-8 in a string column; `SchemaIncompatible` naming the file and column when the
 *   file's type cannot be read as the schema's (not an exact mapping or an allowed promotion) or
 *   a required field is missing (no constant, no default); `FeatureUnsupported` for a list or map
 *   `initial-default`.
 */
export function readDataFile(bytes: Uint8Array, schema: Schema, opts: ReadOptions = {}): Row[] {
  return readProjected(bytes, schema.fields, opts).rows;
}

/**
 * Reads a position delete file: `(file_path, pos)` of each deleted row, in file order.
 * @throws FloeError `DataInvalid` when the file lacks either column or holds a null in one.
 */
export function readPositionDeletes(
  bytes: Uint8Array,
  opts: Pick<ReadOptions, 'filePath'> = {},
): PositionDelete[] {
  const file = opts.filePath ?? 'position delete file';
  const { rows, found } = readProjected(bytes, POSITION_DELETE_FIELDS, { filePath: file });
  for (const id of [POSITION_DELETE_FILE_PATH_ID, POSITION_DELETE_POS_ID]) {
    if (!found.has(id)) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `${file} is not a position delete file: no column with field id ${id}`,
        {
          context: { file, fieldId: id },
        },
      );
    }
  }
  return rows.map((r, i) => {
    const filePath = r.file_path;
    const pos = r.pos;
    if (typeof filePath !== 'string' || typeof pos !== 'bigint') {
      throw new FloeError(ErrorKind.DataInvalid, `${file}: row ${i} has a null file_path or pos`, {
        context: { file, row: i },
      });
    }
    return { filePath, pos };
  });
}

/**
 * Reads the equality columns of an equality delete file, by field id, as rows of `schema`
 * restricted to those columns (nested ones keep their parent structs). The delete file may have
 * been written with an older schema; `schema` must still contain every equality id.
 * @throws FloeError `SchemaIncompatible` for an id not in `schema` or not a primitive outside lists
 *   and maps; `DataInvalid` when the file lacks an equality column.
 */
export function readEqualityDeletes(
  bytes: Uint8Array,
  schema: Schema,
  equalityIds: readonly number[],
  opts: ReadOptions = {},
): Row[] {
  const file = opts.filePath ?? 'equality delete file';
  const fields = equalityFields(schema, equalityIds);
  const { rows, found } = readProjected(bytes, fields, { ...opts, constants: new Map(), filePath: file });
  for (const id of equalityIds) {
    if (!found.has(id)) {
      throw new FloeError(ErrorKind.DataInvalid, `${file} has no column for equality field id ${id}`, {
        context: { file, fieldId: id },
      });
    }
  }
  return rows;
}

const POSITION_DELETE_FIELDS: readonly NestedField[] = [
  field(POSITION_DELETE_FILE_PATH_ID, 'file_path', T.string),
  field(POSITION_DELETE_POS_ID, 'pos', T.long),
];

/** The top-level fields of `schema` pruned to the equality ids (and the structs holding them). */
function equalityFields(schema: Schema, ids: readonly number[]): NestedField[] {
  const index = indexById(schema);
  for (const id of ids) {
    const hit = index.get(id);
    const why =
      hit === undefined
        ? 'is not in the schema'
        : hit.inCollection
          ? 'is inside a list or map'
          : hit.field.type.kind === 'struct' ||
              hit.field.type.kind === 'list' ||
              hit.field.type.kind === 'map'
            ? 'is not a primitive column'
            : undefined;
    if (why !== undefined) {
      throw new FloeError(ErrorKind.SchemaIncompatible, `equality field id ${id} ${why}`, {
        context: { fieldId: id },
      });
    }
  }
  const wanted = new Set(ids);
  const prune = (fields: readonly NestedField[]): NestedField[] =>
    fields.flatMap((f) => {
      if (wanted.has(f.id)) return [{ ...f, required: false }];
      if (f.type.kind !== 'struct') return [];
      const kept = prune(f.type.fields);
      return kept.length === 0 ? [] : [{ ...f, required: false, type: struct(kept) }];
    });
  return prune(schema.fields);
}

/** Decodes the file and projects it onto `fields`; also returns the ids found in the file. */
function readProjected(
  bytes: Uint8Array,
  fields: readonly NestedField[],
  opts: ReadOptions,
): { rows: Row[]; found: Set<number> } {
  const file = opts.filePath ?? 'Parquet file';
  const table = decode(bytes, file);
  let int96: Set<number> | undefined;
  const found = new Set<number>();
  const rowsOf = compileRows(fields, fileColumns(table.schema, file, opts.nameMapping), {
    file,
    constants: opts.constants ?? new Map(),
    isInt96: (leaf) => {
      int96 ??= int96LeafOrdinals(bytes);
      return int96.has(leaf);
    },
    found,
  });
  const rows = new Array<Row>(table.numRows);
  let n = 0;
  for (const batch of table.batches) {
    // An empty file may come as an empty batch without column data.
    if (batch.numRows === 0) continue;
    const row = rowsOf(batch.data);
    for (let i = 0; i < batch.numRows; i++) rows[n++] = row(i);
  }
  return { rows, found };
}

function decode(bytes: Uint8Array, file: string): arrow.Table {
  try {
    const ipc = pw.readParquet(bytes, { batchSize: BATCH_ROWS }).intoIPCStream();
    return arrow.tableFromIPC(ipc);
  } catch (cause) {
    if (isFloeError(cause)) throw cause;
    throw new FloeError(ErrorKind.DataInvalid, `cannot read ${file} as Parquet: ${String(cause)}`, {
      cause,
      context: { file },
    });
  }
}
