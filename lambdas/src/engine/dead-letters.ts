/** Rejected input: every record Floe cannot land is kept with a reason, never dropped silently. */
export const DeadLetterReason = {
  MalformedJson: 'malformed-json',
  NotAnObject: 'not-an-object',
  NoRoute: 'no-route',
  IllegalTableName: 'illegal-table-name',
  TableNotAllowed: 'table-not-allowed',
  TypeConflict: 'type-conflict',
  InvalidValue: 'invalid-value',
  NoTypedValues: 'no-typed-values',
  NotGsrFramed: 'not-gsr-framed',
  BadGsrFrame: 'bad-gsr-frame',
  UnknownSchemaVersion: 'unknown-schema-version',
  UnsupportedSchema: 'unsupported-schema',
  AvroDecodeFailed: 'avro-decode-failed',
  /** `fields.keep`: a kept (required) field is absent or null. */
  MissingKeptField: 'missing-kept-field',
  /** `guards.allowTables`: the table name does not match the regex. */
  GuardAllowTables: 'guard-allow-tables',
  /** `guards.maxTables`: the record would create a table beyond the limit. */
  GuardMaxTables: 'guard-max-tables',
  /** `guards.maxColumnsPerTable`: the record would push the table's columns beyond the limit. */
  GuardMaxColumns: 'guard-max-columns',
  /** `guards.maxNestingDepth`: the record nests deeper than the limit. */
  GuardMaxDepth: 'guard-max-depth',
  /** `guards.maxRecordBytes`: the record is larger than the limit (refused before parsing). */
  GuardMaxRecordBytes: 'guard-max-record-bytes',
  /** A `consolidate` rule took the record but could not shape it (a discriminator is missing). */
  ConsolidationFailed: 'consolidation-failed',
  /** An upsert table's record whose key is missing, null, or not a single value. */
  MissingKey: 'missing-key',
  /** An upsert table's record whose operation is missing or unknown (or a Debezium truncate). */
  BadOperation: 'bad-operation',
  /**
   * The record could not be written for a reason nobody foresaw (the Parquet encoder, a partition
   * transform, a bug): isolated to this record so the rest of its batch landed. The detail has the
   * error; please report it.
   */
  WriteFailed: 'write-failed',
  /** A KPL aggregate whose MD5 or protobuf is corrupt: the whole Kinesis record, none of its user records. */
  CorruptAggregate: 'corrupt-aggregate',
  /** A gzip or zstd payload that does not decompress. */
  CorruptCompression: 'corrupt-compression',
  /** A compressed payload that inflates past `source.maxDecompressedBytes`. */
  DecompressedTooLarge: 'decompressed-too-large',
  /** A CloudWatch Logs subscription batch that is not one (no logGroup, an event without a message …). */
  InvalidLogBatch: 'invalid-log-batch',
} as const;
export type DeadLetterReason = (typeof DeadLetterReason)[keyof typeof DeadLetterReason];

export interface DeadLetter {
  /** Input name (file path, or shard id). */
  readonly source: string;
  /** 1-based line number within the source (or record ordinal). */
  readonly line: number;
  readonly reason: DeadLetterReason;
  /** Human-readable: names the table, field and value. */
  readonly detail: string;
  readonly table?: string;
  /** The original input text, byte for byte. */
  readonly raw: string;
}
