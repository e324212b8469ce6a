/**
 * A table's columns may be held in several places at once: a load's worker threads each hold
 * the records of the chunks they scanned. A `ColumnarPart` is one such holder, seen from where
 * the table is decided: what its columns hold (a summary, for inference), what its numbers need
 * of existing columns (promotions), its records encoded as Parquet for a schema and spec, or its
 * records read back as text (for the generic path). Inference over the parts' merged summaries
 * gives the type the union of their records gives, so the table is decided once, in one place,
 * whoever holds the records.
 *
 * `LocalPart` holds a `ColumnarTableBatch` in this thread; a worker's part answers by message
 * (engine/load-workers.ts).
 */
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { indexById, type Schema, schemaStruct } from '../iceberg/schema.ts';
import { parseTransform } from '../iceberg/transform.ts';
import { isPrimitive, type PrimitiveType, parsePrimitive, type StructType } from '../iceberg/types.ts';
import type { IcebergValue } from '../iceberg/values.ts';
import {
  type ColumnarBatch,
  type DataFileResult,
  StreamingDataFileWriter,
  sliceColumnar,
  supportsColumnar,
  writeColumnarDataFile,
  writesNatively,
} from '../parquet/index.ts';
import type { ParquetCompression } from '../parquet/writer.ts';
import type { ColumnNeeds, FitOptions } from '../schema/fit.ts';
import { columnNeeds, widerOf } from '../schema/promote.ts';
import {
  type BatchSummary,
  type ColumnarTableBatch,
  gatherRows,
  inferSummaries,
  type Provenance,
  partitionGroups,
} from './columnar-batch.ts';
import type { ParquetEncoder } from './row-files.ts';

/** One Parquet file of a part, not stored yet: its partition and its bytes and metrics. */
export interface EncodedFile {
  readonly tuple: IcebergValue[];
  readonly file: DataFileResult;
}

export interface EncodeOptions {
  readonly compression: ParquetCompression;
  /** Rows per file within one partition. */
  readonly maxRows: number;
}

/** Records of one table held somewhere (see the module doc). */
export interface ColumnarPart {
  readonly rowCount: number;
  /** What the columns hold (string classes decided with `detectTimestamps`). */
  summary(detectTimestamps: boolean): Promise<BatchSummary>;
  /** The promotions the numbers in `columns` (path → the table's int / float / decimal type) need. */
  measureNeeds(columns: ReadonlyMap<string, PrimitiveType>): Promise<ColumnNeeds>;
  /**
   * The records as Parquet files for `schema` (the table's, real field ids) and `spec`, one per
   * partition (and `maxRows`); undefined when a value does not convert or the encoder fails on
   * them: the generic path then takes the records (and isolates what cannot be written).
   */
  encode(schema: Schema, spec: PartitionSpec, options: EncodeOptions): Promise<EncodedFile[] | undefined>;
  /** The records with their text, in input order (for the generic path). */
  readBack(): Promise<Provenance[]>;
}

/** A part held in this thread. */
export class LocalPart implements ColumnarPart {
  constructor(
    readonly batch: ColumnarTableBatch,
    private readonly encoder?: ParquetEncoder,
  ) {}

  get rowCount(): number {
    return this.batch.rowCount;
  }

  async summary(detectTimestamps: boolean): Promise<BatchSummary> {
    return this.batch.summary(detectTimestamps);
  }

  async measureNeeds(columns: ReadonlyMap<string, PrimitiveType>): Promise<ColumnNeeds> {
    return this.batch.measureNeeds(columns);
  }

  async encode(
    schema: Schema,
    spec: PartitionSpec,
    options: EncodeOptions,
  ): Promise<EncodedFile[] | undefined> {
    return encodeBatch(this.batch, schema, spec, options, this.encoder);
  }

  readBack(): Promise<Provenance[]> {
    return this.batch.provenance();
  }
}

/**
 * A batch's records as Parquet files for `schema` and `spec` (see `ColumnarPart.encode`): values
 * converted column by column, rows grouped by partition, one file per group (and `maxRows`).
 */
export async function encodeBatch(
  batch: ColumnarTableBatch,
  schema: Schema,
  spec: PartitionSpec,
  options: EncodeOptions,
  encoder?: ParquetEncoder,
): Promise<EncodedFile[] | undefined> {
  if (!supportsColumnar(schema)) return undefined;
  const columns = batch.toColumnar(schema);
  if (!columns) return undefined;
  return encodeColumns(columns, schema, spec, options, encoder);
}

/** Converted columns as Parquet files for `spec`: one per partition (and `maxRows`); see `encodeBatch`. */
export async function encodeColumns(
  columns: ColumnarBatch,
  schema: Schema,
  spec: PartitionSpec,
  options: EncodeOptions,
  encoder?: ParquetEncoder,
): Promise<EncodedFile[] | undefined> {
  const n = columns.rowCount;
  const byId = indexById(schema);
  const fields = [];
  for (const f of spec.fields) {
    const source = byId.get(f['source-id'])?.field;
    if (!source || !isPrimitive(source.type)) return undefined;
    fields.push({
      transform: parseTransform(f.transform),
      type: source.type,
      leaf: columns.leaves.get(f['source-id']),
    });
  }
  const out: EncodedFile[] = [];
  const write = encoder?.columns ?? writeColumnarDataFile;
  for (const g of partitionGroups(fields, n)) {
    // One group of every row (unpartitioned, or one partition): files are slices, not gathers.
    const rows = g.rows;
    const all = rows === undefined || rows.length === n;
    const count = rows === undefined ? n : rows.length;
    for (let i = 0; i < count; i += options.maxRows) {
      const to = Math.min(count, i + options.maxRows);
      const part =
        to - i === n
          ? columns
          : all
            ? sliceColumnar(columns, i, to)
            : gatherRows(columns, rows!.length <= options.maxRows ? rows! : rows!.slice(i, to));
      try {
        const opts = { compression: options.compression };
        // A large file is written a slice of rows at a time: the Arrow and wasm memory of one
        // slice, not of the whole file (parquet-wasm's memory never shrinks once grown).
        const file =
          encoder === undefined && part.rowCount > STREAM_ROWS && !writesNatively(schema, part, opts)
            ? await streamColumns(schema, part, opts)
            : write(schema, part, opts);
        out.push({ tuple: g.tuple, file });
      } catch {
        // Nobody foresaw this (the values converted): the generic path isolates the records.
        return undefined;
      }
    }
  }
  return out;
}

/** Files of more rows than this are written in slices (`StreamingDataFileWriter.addColumns`). */
const STREAM_ROWS = 128 * 1024;

async function streamColumns(
  schema: Schema,
  batch: ColumnarBatch,
  opts: { compression: ParquetCompression },
): Promise<DataFileResult> {
  const writer = new StreamingDataFileWriter(
    schema,
    batch.dictionary ? { ...opts, dictionaryColumns: batch.dictionary } : opts,
  );
  try {
    await writer.addColumns(batch);
    return await writer.finish();
  } catch (e) {
    await writer.abort();
    throw e;
  }
}

/** The type of every part's records together (placeholder ids), or undefined on a conflict. */
export async function inferParts(
  parts: readonly ColumnarPart[],
  hints: Readonly<Record<string, string>>,
  detectTimestamps: boolean,
): Promise<StructType | undefined> {
  const summaries = await Promise.all(parts.map((p) => p.summary(detectTimestamps)));
  return inferSummaries(summaries, hints);
}

/**
 * What the parts' values (or hints) need of the table's existing columns: the promotions the
 * generic path would make (see promote.ts), so both paths give the same table.
 */
export async function fitParts(
  current: Schema,
  parts: readonly ColumnarPart[],
  batchType: StructType,
  hints: Readonly<Record<string, string>>,
): Promise<FitOptions> {
  const existing = schemaStruct(current);
  const hinted = new Map(Object.entries(hints).map(([path, type]) => [path, parsePrimitive(type)]));
  // columnNeeds asks for what it must measure; the parts measure it (perhaps elsewhere).
  let asked: ReadonlyMap<string, PrimitiveType> | undefined;
  columnNeeds(existing, batchType, hinted, (columns) => {
    asked = columns;
    return new Map();
  });
  const measured = new Map<string, PrimitiveType>();
  if (asked !== undefined) {
    for (const needs of await Promise.all(parts.map((p) => p.measureNeeds(asked!)))) {
      for (const [path, t] of needs) measured.set(path, widerOf(measured.get(path), t)!);
    }
  }
  const needs = columnNeeds(existing, batchType, hinted, () => measured);
  return needs.size === 0 ? {} : { needs };
}

/** Every part's records with their text, in input order. */
export async function readBackParts(parts: readonly ColumnarPart[]): Promise<Provenance[]> {
  const all = (await Promise.all(parts.map((p) => p.readBack()))).flat();
  return parts.length === 1 ? all : all.sort((a, b) => a.seq - b.seq);
}
