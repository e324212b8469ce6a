/**
 * Parquet data files for Iceberg: Arrow schema mapping, row → column conversion, the writer and
 * the metrics a manifest `DataFile` needs; the reader of data and delete files (by field id).
 */
export { arrowField, arrowType, FIELD_ID_KEY, hasColumns, icebergToArrowSchema } from './arrow-schema.ts';
export { type BuiltColumns, buildColumns } from './column-builder.ts';
export { planFor, type WritePlan } from './column-plan.ts';
export {
  type ColumnarBatch,
  type ColumnarLeaf,
  type ColumnValues,
  sliceColumnar,
  supportsColumnar,
  writeColumnarDataFile,
  writesNatively,
} from './columnar.ts';
export { type FooterMetrics, type FooterPatch, patchFooter, readFooter } from './footer.ts';
export type { DataFileMetrics, LeafStats } from './metrics.ts';
export {
  POSITION_DELETE_FILE_PATH_ID,
  POSITION_DELETE_POS_ID,
  type ReadOptions,
  readDataFile,
  readEqualityDeletes,
  readPositionDeletes,
} from './reader.ts';
export { StreamingDataFileWriter } from './streaming-writer.ts';
export {
  type DataFileResult,
  type ParquetCompression,
  RowBatchBuilder,
  type WriteOptions,
  warmUp,
  writeDataFile,
} from './writer.ts';
