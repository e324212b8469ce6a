/**
 * Parquet data files for Iceberg: Arrow schema mapping, row → column conversion, the writer and
 * the metrics a manifest `DataFile` needs.
 */
export { arrowField, arrowType, FIELD_ID_KEY, hasColumns, icebergToArrowSchema } from './arrow-schema.ts';
export { type BuiltColumns, buildColumns } from './column-builder.ts';
export { planFor, type WritePlan } from './column-plan.ts';
export {
  type ColumnarBatch,
  type ColumnarLeaf,
  type ColumnValues,
  supportsColumnar,
  writeColumnarDataFile,
} from './columnar.ts';
export { type FooterMetrics, type FooterPatch, patchFooter, readFooter } from './footer.ts';
export type { DataFileMetrics, LeafStats } from './metrics.ts';
export {
  type DataFileResult,
  type ParquetCompression,
  RowBatchBuilder,
  type WriteOptions,
  warmUp,
  writeDataFile,
} from './writer.ts';
