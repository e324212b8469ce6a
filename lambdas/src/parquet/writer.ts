/**
 * Writes Iceberg rows to a Parquet data file (bytes in, bytes out): columns are built in JS,
 * handed to the Rust Parquet writer (parquet-wasm) as an Arrow IPC stream, and the footer is
 * patched for what Arrow cannot express. Returns the file and the metrics a manifest needs.
 */
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import { type Schema, schemaToJson } from '../iceberg/schema.ts';
import { field, list, struct, T } from '../iceberg/types.ts';
import type { Row } from '../iceberg/values.ts';
import { type BuiltColumns, buildColumns } from './column-builder.ts';
import { planFor, type WritePlan } from './column-plan.ts';
import { patchFooter } from './footer.ts';
import { recordBatchToIpcStream } from './ipc.ts';
import { type Allocator, Arena } from './memory.ts';
import { type DataFileMetrics, finishMetrics, type LeafStats } from './metrics.ts';

export type ParquetCompression = 'zstd' | 'snappy' | 'gzip' | 'uncompressed';

export interface WriteOptions {
  /** Default `zstd` (what Java Iceberg ≥ 1.4 uses; Athena and S3 Tables read it). */
  readonly compression?: ParquetCompression;
  /** Maximum rows per row group (default 1,048,576). */
  readonly rowGroupRows?: number;
  /** Truncation length for string/binary bounds (default 16, Java's `truncate(16)`). */
  readonly metricsTruncateLength?: number;
  /**
   * Field ids of string columns to dictionary-encode (RLE_DICTIONARY, which every reader reads):
   * for columns of few distinct values it makes the file smaller and the write faster (less for
   * zstd to compress); for unique values it costs time, so the caller picks (see columnar.ts).
   */
  readonly dictionaryColumns?: ReadonlySet<number>;
}

export interface DataFileResult {
  /** The complete Parquet file. */
  readonly bytes: Uint8Array;
  readonly recordCount: number;
  readonly metrics: DataFileMetrics;
}

const CODECS: Record<ParquetCompression, pw.Compression> = {
  zstd: pw.Compression.ZSTD,
  snappy: pw.Compression.SNAPPY,
  gzip: pw.Compression.GZIP,
  uncompressed: pw.Compression.UNCOMPRESSED,
};

const DEFAULT_ROW_GROUP_ROWS = 1024 * 1024;

/** Column buffers for `writeDataFile`, reused across calls (they die right after IPC). */
const arena = new Arena();

export interface WriterSettings {
  readonly codec: pw.Compression;
  readonly rowGroupRows: number;
  readonly dictionaryColumns: ReadonlySet<number> | undefined;
}

/** Checked writer options. Internal to `parquet/`. */
export function settings(opts: WriteOptions): WriterSettings {
  const compression = opts.compression ?? 'zstd';
  const codec = CODECS[compression];
  if (codec === undefined)
    throw new FloeError(ErrorKind.ConfigInvalid, `unsupported Parquet compression '${compression}'`);
  const rowGroupRows = opts.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
  if (!Number.isInteger(rowGroupRows) || rowGroupRows < 1) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `rowGroupRows must be a positive integer, got ${rowGroupRows}`,
    );
  }
  const width = opts.metricsTruncateLength ?? 16;
  if (!Number.isInteger(width) || width < 1) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `metricsTruncateLength must be a positive integer, got ${width}`,
    );
  }
  return { codec, rowGroupRows, dictionaryColumns: opts.dictionaryColumns };
}

/**
 * Above this many leaf columns a zstd file is written with snappy instead. parquet-rs keeps one
 * zstd context per column chunk, and growing the wasm memory for thousands of them is
 * super-linear (measured, one row: 2,000 columns 0.7 s, 4,000 2.6 s, 8,000 5.4 s; snappy 0.05,
 * 0.05, 0.1 s). A file's codec is the writer's choice (readers take it from each column chunk),
 * so the table stays readable everywhere; compaction rewrites such files with the table's codec.
 */
export const WIDE_FILE_LEAF_COLUMNS = 1000;

/** The codec for a file of `leafColumns` columns: the table's, except zstd for very wide files. */
export function codecForWidth(codec: pw.Compression, leafColumns: number): pw.Compression {
  return codec === pw.Compression.ZSTD && leafColumns > WIDE_FILE_LEAF_COLUMNS
    ? pw.Compression.SNAPPY
    : codec;
}

/** parquet-wasm's properties for a file of `schema`. Internal to `parquet/`. */
export function writerProperties(
  schema: Schema,
  s: WriterSettings,
  leafColumns: number,
  plan?: WritePlan,
): pw.WriterProperties {
  let b = new pw.WriterPropertiesBuilder()
    .setCompression(codecForWidth(s.codec, leafColumns))
    .setMaxRowGroupSize(s.rowGroupRows)
    // Dictionary encoding made writes ~10% (strings of unique values) to ~50% (numbers) slower
    // and, with zstd, files slightly larger in our measurements, so it is off but for the string
    // columns the caller names (few distinct values: ~20% faster, files ~15% smaller, measured).
    .setDictionaryEnabled(false);
  if (s.dictionaryColumns && plan) {
    // parquet-wasm takes a column's path as one name (no nesting), so only top-level columns.
    for (const f of schema.fields) {
      if (s.dictionaryColumns.has(f.id) && f.type.kind === 'string')
        b = b.setColumnDictionaryEnabled(f.name, true);
    }
  }
  return b
    .setCreatedBy('floe (parquet-rs via parquet-wasm)')
    .setKeyValueMetadata(new Map([['iceberg.schema', icebergSchemaJson(schema)]]))
    .build();
}

/** The `iceberg.schema` key-value of a data file's footer (Java's form: ids as JSON numbers). */
export function icebergSchemaJson(schema: Schema): string {
  return JSON.stringify(schemaToJson(schema), (_k, v) =>
    typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v,
  );
}

/** Iceberg field ids whose footer schema element needs fixing (see `FooterPatch`). */
function footerFixIds(plan: WritePlan): { uuidIds: Set<number>; dropConvertedTypeIds: Set<number> } {
  const uuidIds = new Set<number>();
  const dropConvertedTypeIds = new Set<number>();
  for (const l of plan.leaves) {
    if (l.type.kind === 'uuid') uuidIds.add(l.id);
    if (l.type.kind === 'timestamp' || l.type.kind === 'time' || l.type.kind === 'timestamp_ns') {
      dropConvertedTypeIds.add(l.id);
    }
  }
  return { uuidIds, dropConvertedTypeIds };
}

/**
 * Writes `rows` (objects keyed by top-level column name, values as in `values.ts`; a missing key
 * is null) as one Parquet data file for `schema`.
 *
 * The file has a field id on every column (incl. list elements and map keys/values), 3-level
 * lists and maps, MICROS timestamps (UTC-adjusted only for `timestamptz`), decimals by precision,
 * UUID as FIXED_LEN_BYTE_ARRAY(16) + UUID; Iceberg `unknown` columns are omitted.
 *
 * @throws FloeError `DataInvalid` naming the column for a value of the wrong type or a null in a
 *   required column; `ConfigInvalid` for bad options.
 */
export function writeDataFile(schema: Schema, rows: readonly Row[], opts: WriteOptions = {}): DataFileResult {
  return writeBuiltColumns(schema, (plan, alloc) => buildColumns(plan, rows, alloc), opts);
}

/**
 * The shared tail of the writers: plans `schema`, lets `build` produce the Arrow columns (taking
 * scratch buffers from `alloc`, which is reused once the columns are serialized), writes them
 * with parquet-wasm, patches the footer and finishes the metrics. Internal to `parquet/`.
 */
export function writeBuiltColumns(
  schema: Schema,
  build: (plan: WritePlan, alloc: Allocator) => BuiltColumns,
  opts: WriteOptions,
): DataFileResult {
  const plan = writablePlan(schema);
  const config = settings(opts);
  let built: BuiltColumns;
  let raw: Uint8Array;
  try {
    const wasm = toWasmTable(plan, build);
    built = wasm.built;
    raw = pw.writeParquet(wasm.table, writerProperties(schema, config, plan.leaves.length, plan));
  } catch (cause) {
    if (isFloeError(cause)) throw cause;
    throw new FloeError(ErrorKind.Unexpected, `Parquet writer failed: ${String(cause)}`, { cause });
  }
  return finishFile(plan, raw, built.length, built.stats, opts);
}

/** `schema`'s write plan; throws when nothing of it can be written. Internal to `parquet/`. */
export function writablePlan(schema: Schema): WritePlan {
  const plan = planFor(schema);
  if (plan.columns.length === 0) {
    throw new FloeError(
      ErrorKind.FeatureUnsupported,
      'schema has no columns to write (all fields are of type unknown)',
    );
  }
  return plan;
}

/**
 * Lets `build` produce the Arrow columns (in the shared arena) and copies them into wasm memory as
 * a parquet-wasm table; the arena is free again on return. Internal to `parquet/`.
 */
export function toWasmTable(
  plan: WritePlan,
  build: (plan: WritePlan, alloc: Allocator) => BuiltColumns,
): { built: BuiltColumns; table: pw.Table } {
  try {
    const built = build(plan, arena);
    const struct = new arrow.Struct(plan.arrowSchema.fields);
    const batch = recordBatchOf(
      plan.arrowSchema,
      arrow.makeData({ type: struct, length: built.length, nullCount: 0, children: built.columns }),
    );
    const ipc = recordBatchToIpcStream(batch, arena);
    // fromIPCStream copies into wasm memory, so the arena is free again once it returns.
    return { built, table: pw.Table.fromIPCStream(ipc) };
  } finally {
    arena.reset();
  }
}

/**
 * The file parquet-wasm wrote (`raw`, `rows` rows) with its footer patched, and its metrics from
 * the leaf stats and the footer. Internal to `parquet/`.
 */
export function finishFile(
  plan: WritePlan,
  raw: Uint8Array,
  rows: number,
  stats: LeafStats[],
  opts: WriteOptions,
): DataFileResult {
  const { bytes, metrics: footer } = patchFooter(raw, {
    ...footerFixIds(plan),
    dropKeys: ['ARROW:schema'],
    rootName: 'table',
  });
  return {
    bytes,
    recordCount: rows,
    metrics: finishMetrics(stats, footer, opts.metricsTruncateLength ?? 16),
  };
}

/**
 * `new RecordBatch(schema, data)` without its `ensureSameLengthData`, whose `schema.assign` is
 * quadratic in the column count (16,000 columns: ~150 ms for nothing). Every column built here
 * already has the batch's length, which is all that check repairs.
 */
function recordBatchOf(schema: arrow.Schema, data: arrow.Data<arrow.Struct>): arrow.RecordBatch {
  const empty = new arrow.Schema([]);
  const batch = new arrow.RecordBatch(
    empty,
    arrow.makeData({ type: new arrow.Struct([]), length: data.length, nullCount: 0, children: [] }),
  );
  Object.assign(batch, { schema, data });
  return batch;
}

/**
 * Accumulates rows for one data file; `finish()` writes them. Useful when rows arrive one at a
 * time and the caller rolls files by row count.
 */
export class RowBatchBuilder {
  private rows: Row[] = [];
  constructor(
    private readonly schema: Schema,
    private readonly opts: WriteOptions = {},
  ) {}

  add(row: Row): void {
    this.rows.push(row);
  }

  get rowCount(): number {
    return this.rows.length;
  }

  /** Writes the accumulated rows and resets the builder. */
  finish(): DataFileResult {
    const rows = this.rows;
    this.rows = [];
    return writeDataFile(this.schema, rows, this.opts);
  }
}

/**
 * Writes and discards a small file covering the common column types, so the first real write does
 * not pay for JIT warm-up and lazily compiled wasm (measured: first 200k-row write ~1.0 s cold,
 * ~0.55 s after `warmUp()`, ~0.25 s steady state). Optional; call once at startup.
 */
export function warmUp(rowCount = 2000): void {
  const schema: Schema = {
    schemaId: 0,
    fields: [
      field(1, 'l', T.long, true),
      field(2, 'i', T.int),
      field(3, 'd', T.double),
      field(4, 's', T.string),
      field(5, 'ts', T.timestamptz),
      field(6, 'b', T.boolean),
      field(7, 'st', struct([field(8, 'x', T.string), field(9, 'y', T.long)])),
      field(10, 'xs', list(11, T.string)),
    ],
  };
  const rows: Row[] = [];
  for (let k = 0; k < rowCount; k++) {
    rows.push({
      l: BigInt(k),
      i: k % 7 === 0 ? null : k,
      d: k * 0.5,
      s: `s${k % 50}`,
      ts: 1_700_000_000_000_000n + BigInt(k),
      b: k % 2 === 0,
      st: k % 5 === 0 ? null : { x: 'x', y: BigInt(k) },
      xs: k % 3 === 0 ? [] : ['a', 'b'],
    });
  }
  writeDataFile(schema, rows);
}
