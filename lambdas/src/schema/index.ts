/** JSON schema inference and record → row conversion. */

export {
  avroDatumToRow,
  avroToIcebergStruct,
  type CompiledAvroSchema,
  compileAvroRowConverter,
  compileAvroSchema,
} from './avro-to-iceberg.ts';
export { columnNameOf, isLegalColumnName, MAX_COLUMN_NAME_LENGTH } from './column-name.ts';
export {
  type ConvertOptions,
  type ConvertResult,
  compileRowConverter,
  describeConvertFailure,
  hasTypedValue,
  type RowConverter,
  toRow,
  unknownFields,
} from './convert.ts';
export { type ColumnNeeds, type FitOptions, fitToExisting, valueDecidedColumns } from './fit.ts';
export {
  assignIds,
  conflictFromError,
  type InferOptions,
  type InferResult,
  inferStruct,
  inferType,
  StructInferrer,
  type TypeConflict,
  tryInferStruct,
  unifyPrimitive,
  unifyStructs,
  unifyTypes,
} from './infer.ts';
export { columnNeeds, measureRecords, promotionFor } from './promote.ts';
export { daysFromCivil, isInstantString, parseDate, parseTime, parseTimestamp } from './temporal.ts';
