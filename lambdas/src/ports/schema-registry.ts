/**
 * Schema registry port: the writer schemas behind GSR-framed records (facts §12.2). Adapters: the
 * AWS Glue Schema Registry, and a local in-memory / file-backed registry for the embedded stack.
 * Versions are immutable, so callers may cache them by id forever (see `engine/cached-registry.ts`).
 */

/** `DataFormat` of a Glue schema. */
export type SchemaDataFormat = 'AVRO' | 'JSON' | 'PROTOBUF';

/** One registered, immutable schema version. */
export interface SchemaVersion {
  /** Schema version id: canonical lower-case UUID. */
  readonly id: string;
  /** Name of the schema this is a version of (e.g. `OrderEvent`). */
  readonly schemaName: string;
  /** The schema definition as registered: Avro schema JSON for `AVRO`. */
  readonly definition: string;
  readonly dataFormat: SchemaDataFormat;
  /** 1-based version number within the schema. */
  readonly versionNumber: number;
}

export interface SchemaRegistry {
  /**
   * The version with this id. Rejects with `FloeError(NotFound)` when no such version exists
   * (the record that named it is bad data); any other rejection is an infrastructure failure
   * (throttling, network) and must be retried, never treated as bad data.
   */
  getSchemaVersion(id: string): Promise<SchemaVersion>;
  /**
   * Registers `definition` under `schemaName` (creating the schema when new) and returns its
   * version; an identical definition already registered under that name returns the existing
   * version. Optional: read-only registries (ingest) need not implement it.
   */
  register?(schemaName: string, definition: string, dataFormat?: SchemaDataFormat): Promise<SchemaVersion>;
}
