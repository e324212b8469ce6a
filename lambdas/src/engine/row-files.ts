/**
 * Rows → Parquet data files, with a safety net. Conversion has already checked every value, so
 * a partition transform or the encoder throwing is something nobody foresaw (a bug, an edge of
 * Arrow or parquet-wasm). Such a failure must not cost the batch: a failing group of rows is
 * bisected down to the rows that really cannot be written; everything else is encoded (in more,
 * smaller files) and the caller dead-letters only those rows (`write-failed`).
 */
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { partitionKey, partitionTuple } from '../iceberg/partitioning.ts';
import type { Schema } from '../iceberg/schema.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import {
  type ColumnarBatch,
  type DataFileResult,
  type ParquetCompression,
  writeColumnarDataFile,
  writeDataFile,
} from '../parquet/index.ts';
import { StreamingDataFileWriter } from '../parquet/streaming-writer.ts';

/**
 * The Parquet encoders the apps use. Injectable (as a decorator of the real ones) so tests can
 * make chosen rows fail and prove the safety net; production code never passes one.
 */
export interface ParquetEncoder {
  readonly rows: (
    schema: Schema,
    rows: readonly Row[],
    opts: { compression: ParquetCompression },
  ) => DataFileResult;
  readonly columns: (
    schema: Schema,
    batch: ColumnarBatch,
    opts: { compression: ParquetCompression },
  ) => DataFileResult;
  /** One file from rows added in batches (compaction); without it, `rows` encodes them at the end. */
  readonly stream?: (schema: Schema, opts: { compression: ParquetCompression }) => RowFileWriter;
}

/** One data file written from batches of rows (`StreamingDataFileWriter`'s shape). */
export interface RowFileWriter {
  add(rows: readonly Row[]): Promise<void>;
  finish(): Promise<DataFileResult>;
  abort(): Promise<void>;
  /** Bytes of the file written so far (0 for a writer that encodes at the end). */
  readonly bytesWritten: number;
}

export const parquetEncoder: ParquetEncoder = {
  rows: writeDataFile,
  columns: writeColumnarDataFile,
  stream: (schema, opts) => new StreamingDataFileWriter(schema, opts),
};

/** `encoder`'s streaming writer, or one that gathers the rows and hands them to `encoder.rows`. */
export function rowFileWriter(
  encoder: ParquetEncoder,
  schema: Schema,
  opts: { compression: ParquetCompression },
): RowFileWriter {
  if (encoder.stream) return encoder.stream(schema, opts);
  let rows: Row[] = [];
  return {
    bytesWritten: 0,
    add: async (more) => {
      for (const r of more) rows.push(r);
    },
    finish: async () => {
      const all = rows;
      rows = [];
      return encoder.rows(schema, all, opts);
    },
    abort: async () => {
      rows = [];
    },
  };
}

export interface EncodedFile {
  readonly tuple: IcebergValue[];
  readonly file: DataFileResult;
}

export interface EncodedRows {
  readonly files: EncodedFile[];
  /** Index into the input rows → why that row cannot be written. Empty when all were. */
  readonly failed: Map<number, string>;
}

export interface EncodeOptions {
  readonly compression: ParquetCompression;
  /** Rows per file within one partition. */
  readonly maxRows: number;
  readonly encoder?: ParquetEncoder;
  /** Called with each file as soon as it is encoded (so storing overlaps encoding). */
  readonly onFile?: (f: EncodedFile, ordinal: number) => void;
}

/** Groups `rows` by partition (first-seen order) and encodes each group, isolating failures. */
export function encodeRows(
  schema: Schema,
  spec: PartitionSpec,
  rows: readonly Row[],
  opts: EncodeOptions,
): EncodedRows {
  const failed = new Map<number, string>();
  const groups = new Map<string, { tuple: IcebergValue[]; indexes: number[] }>();
  for (let i = 0; i < rows.length; i++) {
    let tuple: IcebergValue[];
    try {
      tuple = partitionTuple(spec, schema, rows[i]!);
    } catch (e) {
      failed.set(i, `partition value: ${errorText(e)}`);
      continue;
    }
    const key = partitionKey(tuple);
    let g = groups.get(key);
    if (!g) {
      g = { tuple, indexes: [] };
      groups.set(key, g);
    }
    g.indexes.push(i);
  }
  const files: EncodedFile[] = [];
  const encode = opts.encoder?.rows ?? writeDataFile;
  const emit = (tuple: IcebergValue[], file: DataFileResult) => {
    const f = { tuple, file };
    opts.onFile?.(f, files.length);
    files.push(f);
  };
  /** Encodes `indexes` as one file, or bisects them until each part encodes or is one bad row. */
  const encodeIsolating = (tuple: IcebergValue[], indexes: readonly number[]): void => {
    let file: DataFileResult;
    try {
      file = encode(
        schema,
        indexes.map((i) => rows[i]!),
        { compression: opts.compression },
      );
    } catch (e) {
      if (indexes.length === 1) {
        failed.set(indexes[0]!, `Parquet writer: ${errorText(e)}`);
        return;
      }
      const half = indexes.length >> 1;
      encodeIsolating(tuple, indexes.slice(0, half));
      encodeIsolating(tuple, indexes.slice(half));
      return;
    }
    emit(tuple, file);
  };
  for (const g of groups.values()) {
    for (let i = 0; i < g.indexes.length; i += opts.maxRows) {
      encodeIsolating(g.tuple, g.indexes.slice(i, i + opts.maxRows));
    }
  }
  return { files, failed };
}

export function errorText(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}
