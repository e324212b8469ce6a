/**
 * Manifest files (spec: "Manifests"; facts §2.5–2.8): Avro files of `manifest_entry` records, one
 * partition spec each, holding either data files or delete files.
 */
import { type AvroWriteCodec, decodeAvroContainer, encodeAvroContainer } from '../../avro/index.ts';
import { ErrorKind, FloeError } from '../../errors.ts';
import {
  avroToIcebergType,
  fromAvroDatum,
  icebergToAvroSchema,
  normalizeAvroFieldNames,
  toAvroDatum,
} from '../avro-schema.ts';
import type { PartitionField, PartitionSpec } from '../partition-spec.ts';
import { type Schema, schemaToJson } from '../schema.ts';
import type { IcebergType, StructType } from '../types.ts';
import {
  DATA_FILE_FIELDS,
  type FormatVersion,
  fieldAccessor,
  inVersion,
  MANIFEST_ENTRY_FIELDS,
  manifestEntryType,
  V1_DEFAULT_BLOCK_SIZE,
} from './fields.ts';
import {
  type DataFile,
  DataFileContent,
  ManifestContent,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestFile,
} from './types.ts';

function invalid(msg: string): never {
  throw new FloeError(ErrorKind.DataInvalid, msg);
}

/** Drops undefined-valued keys so optional fields are absent rather than `undefined`. */
export function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

// ---- writing ----

export interface EncodeManifestOptions {
  readonly formatVersion: FormatVersion;
  /** Table schema at write time (header `schema`, `schema-id`). */
  readonly schema: Schema;
  readonly spec: PartitionSpec;
  /** Result types of the spec's fields: field ids = partition field ids, names = partition field names. */
  readonly partitionType: StructType;
  readonly content: ManifestContent;
  readonly entries: readonly ManifestEntry[];
  /** 16 random bytes, injected for deterministic output. */
  readonly syncMarker: Uint8Array;
  /** Defaults to `deflate`, as Java (`write.manifest.compression-codec` = gzip). */
  readonly codec?: AvroWriteCodec;
}

/** `partition-spec` header value: the spec's fields only, in Java's key order. */
function partitionSpecFieldsJson(spec: PartitionSpec): string {
  return JSON.stringify(
    spec.fields.map((f) => ({
      name: f.name,
      transform: f.transform,
      'source-id': f['source-id'],
      'field-id': f['field-id'],
    })),
  );
}

function checkSpecMatchesType(spec: PartitionSpec, partitionType: StructType): void {
  const same =
    spec.fields.length === partitionType.fields.length &&
    spec.fields.every((f, i) => {
      const t = partitionType.fields[i]!;
      return t.id === f['field-id'] && t.name === f.name;
    });
  if (!same)
    invalid(`partition type does not match partition spec ${spec['spec-id']} (ids and names, in order)`);
}

function checkEntry(e: ManifestEntry, v: FormatVersion, content: ManifestContent, arity: number): void {
  const df = e.data_file;
  const where = `manifest entry for ${df.file_path}`;
  if (!Object.values(ManifestEntryStatus).includes(e.status)) invalid(`${where}: bad status ${e.status}`);
  const isData = df.content === DataFileContent.DATA;
  if (!Object.values(DataFileContent).includes(df.content)) invalid(`${where}: bad content ${df.content}`);
  if (isData !== (content === ManifestContent.DATA)) {
    invalid(`${where}: content ${df.content} cannot go in a ${content === 0 ? 'data' : 'delete'} manifest`);
  }
  if (df.partition.length !== arity)
    invalid(`${where}: ${df.partition.length} partition values, spec has ${arity}`);
  for (const [name, value] of Object.entries(df)) {
    const writable = DATA_FILE_FIELDS.some((f) => f.name === name && inVersion(f, v));
    if (!writable && value !== undefined && value !== null && !(name === 'content' && isData)) {
      invalid(`${where}: field '${name}' cannot be written in format version ${v}`);
    }
  }
  if (df.content === DataFileContent.EQUALITY_DELETES && !df.equality_ids?.length) {
    invalid(`${where}: equality delete files need equality_ids`);
  }
  if (df.content !== DataFileContent.EQUALITY_DELETES && df.equality_ids !== undefined) {
    invalid(`${where}: only equality delete files carry equality_ids`);
  }
  if (!isData && df.first_row_id !== undefined) invalid(`${where}: delete files have no first_row_id`);
  if ((df.content_offset === undefined) !== (df.content_size_in_bytes === undefined)) {
    invalid(`${where}: content_offset and content_size_in_bytes go together`);
  }
  if (v === 1) {
    if ((e.sequence_number ?? 0n) !== 0n || (e.file_sequence_number ?? 0n) !== 0n) {
      invalid(`${where}: v1 manifests cannot store sequence numbers`);
    }
    return;
  }
  // Only ADDED entries may inherit; rewritten EXISTING/DELETED entries keep their original values (§2.8).
  if (e.status !== ManifestEntryStatus.ADDED) {
    if (e.sequence_number === undefined || e.file_sequence_number === undefined) {
      invalid(`${where}: EXISTING/DELETED entries need explicit sequence_number and file_sequence_number`);
    }
    if (e.status === ManifestEntryStatus.EXISTING && e.snapshot_id === undefined) {
      invalid(`${where}: EXISTING entries need an explicit snapshot_id`);
    }
  }
}

function entryValue(e: ManifestEntry, partitionType: StructType): Record<string, unknown> {
  const df = e.data_file;
  const partition: Record<string, unknown> = {};
  partitionType.fields.forEach((f, i) => {
    partition[f.name] = df.partition[i];
  });
  return {
    status: e.status,
    snapshot_id: e.snapshot_id,
    sequence_number: e.sequence_number,
    file_sequence_number: e.file_sequence_number,
    data_file: { ...df, partition, block_size_in_bytes: V1_DEFAULT_BLOCK_SIZE },
  };
}

/**
 * Writes a manifest (spec "Manifests"). Header: `schema`, `schema-id`, `partition-spec`,
 * `partition-spec-id`, `format-version`, `content` (v2+), and Java's `iceberg.schema`.
 * ADDED entries may leave sequence numbers null (inherited); EXISTING/DELETED must carry them.
 */
export function encodeManifest(opts: EncodeManifestOptions): Uint8Array {
  const { formatVersion: v, spec, partitionType, content, entries } = opts;
  if (v !== 1 && v !== 2 && v !== 3) {
    throw new FloeError(ErrorKind.FeatureUnsupported, `manifest format version ${String(v)}`);
  }
  if (content !== ManifestContent.DATA && content !== ManifestContent.DELETES)
    invalid(`bad content ${content}`);
  if (v === 1 && content !== ManifestContent.DATA) invalid('v1 manifests hold data files only');
  checkSpecMatchesType(spec, partitionType);
  for (const e of entries) checkEntry(e, v, content, partitionType.fields.length);

  const entryType = manifestEntryType(v, partitionType);
  const metadata: Record<string, string> = {
    schema: JSON.stringify(schemaToJson(opts.schema)),
    'schema-id': String(opts.schema.schemaId),
    'partition-spec': partitionSpecFieldsJson(spec),
    'partition-spec-id': String(spec['spec-id']),
    'format-version': String(v),
  };
  if (v >= 2) metadata.content = content === ManifestContent.DATA ? 'data' : 'deletes';
  metadata['iceberg.schema'] = JSON.stringify(schemaToJson({ schemaId: 0, fields: entryType.fields }));
  return encodeAvroContainer({
    schemaJson: icebergToAvroSchema(entryType, 'manifest_entry'),
    records: entries.map((e) => toAvroDatum(entryType, entryValue(e, partitionType))),
    metadata,
    codec: opts.codec ?? 'deflate',
    syncMarker: opts.syncMarker,
  });
}

// ---- reading ----

export interface DecodedManifest {
  readonly formatVersion: FormatVersion;
  /** The table schema JSON from the `schema` header, when present. */
  readonly schemaJson?: Record<string, unknown>;
  readonly specId: number;
  /** Partition fields in spec order (the order of `DataFile.partition`). */
  readonly partitionFields: readonly { readonly fieldId: number; readonly name: string }[];
  /** Result types of the partition fields, as read from the writer's Avro schema. */
  readonly partitionType: StructType;
  /** The full `partition-spec` header, when present. */
  readonly partitionSpecFields?: readonly PartitionField[];
  readonly content: ManifestContent;
  readonly entries: ManifestEntry[];
}

function parseJsonHeader(meta: Record<string, string>, key: string): unknown {
  const raw = meta[key];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch (e) {
    throw new FloeError(ErrorKind.DataInvalid, `manifest header '${key}' is not JSON`, { cause: e });
  }
}

/** Format version from the header, else inferred from the writer schema (v1 writers omitted it). */
export function formatVersionOf(
  meta: Record<string, string>,
  hasField: (id: number) => boolean,
): FormatVersion {
  const fv = meta['format-version'];
  if (fv !== undefined) {
    const n = Number(fv);
    if (n === 1 || n === 2 || n === 3) return n;
    throw new FloeError(ErrorKind.FeatureUnsupported, `unsupported format-version '${fv}'`);
  }
  return hasField(142) || hasField(144) || hasField(520) ? 3 : hasField(134) || hasField(517) ? 2 : 1;
}

function asStruct(t: IcebergType | undefined, what: string): StructType {
  if (t?.kind !== 'struct') invalid(`manifest schema has no ${what} struct`);
  return t;
}

function readDataFile(type: StructType, value: unknown, partitionType: StructType): DataFile {
  const a = fieldAccessor(type, value, DATA_FILE_FIELDS);
  const part = (a.get(102) ?? {}) as Record<string, unknown>;
  const o = <T>(id: number) => (a.get(id) ?? undefined) as T | undefined;
  const r = <T>(id: number, name: string): T => {
    const v = a.get(id);
    if (v === null) invalid(`data_file has no ${name}`);
    return v as T;
  };
  return compact<DataFile>({
    content: (o<number>(134) ?? 0) as DataFileContent,
    file_path: r<string>(100, 'file_path'),
    file_format: r<string>(101, 'file_format'),
    partition: partitionType.fields.map((f) => part[f.name] ?? null),
    record_count: r<bigint>(103, 'record_count'),
    file_size_in_bytes: r<bigint>(104, 'file_size_in_bytes'),
    column_sizes: o(108),
    value_counts: o(109),
    null_value_counts: o(110),
    nan_value_counts: o(137),
    lower_bounds: o(125),
    upper_bounds: o(128),
    key_metadata: o(131),
    split_offsets: o(132),
    equality_ids: o(135),
    sort_order_id: o(140),
    first_row_id: o(142),
    referenced_data_file: o(143),
    content_offset: o(144),
    content_size_in_bytes: o(145),
  });
}

/**
 * Reads a manifest written by any engine (v1–v3). Fields are matched by field id; partition values
 * come back in the internal representation of their result type (decimal → unscaled bigint,
 * uuid → string, date → days, timestamps → bigint); metric maps as `Map<fieldId, …>`.
 * Entries are returned as stored: apply `inheritManifestEntries` with the manifest-list record.
 */
export function decodeManifest(bytes: Uint8Array): DecodedManifest {
  const file = decodeAvroContainer(bytes, { mapSchema: normalizeAvroFieldNames });
  const meta = file.metadata;
  const entryType = asStruct(avroToIcebergType(file.schemaJson), 'manifest_entry');
  const dfField = entryType.fields.find((f) => f.id === 2 || (f.id < 0 && f.name === 'data_file'));
  const dfType = asStruct(dfField?.type, 'data_file');
  const partitionType = asStruct(
    dfType.fields.find((f) => f.id === 102 || f.name === 'partition')?.type,
    'partition',
  );
  const ids = new Set(dfType.fields.map((f) => f.id));
  const formatVersion = formatVersionOf(meta, (id) => ids.has(id));

  const specFields = parseJsonHeader(meta, 'partition-spec') as PartitionField[] | undefined;
  const partitionFields = partitionType.fields.map((f, i) => ({
    fieldId: f.id >= 0 ? f.id : (specFields?.[i]?.['field-id'] ?? 1000 + i),
    name: f.name,
  }));
  const schemaJson = parseJsonHeader(meta, 'schema') as Record<string, unknown> | undefined;
  const entries = file.records.map((rec) => {
    const value = fromAvroDatum(entryType, rec);
    const a = fieldAccessor(entryType, value, MANIFEST_ENTRY_FIELDS);
    const status = a.get(0);
    if (status !== 0 && status !== 1 && status !== 2)
      invalid(`manifest entry has bad status ${String(status)}`);
    return compact<ManifestEntry>({
      status: status as ManifestEntryStatus,
      snapshot_id: (a.get(1) ?? undefined) as bigint | undefined,
      sequence_number: (a.get(3) ?? undefined) as bigint | undefined,
      file_sequence_number: (a.get(4) ?? undefined) as bigint | undefined,
      data_file: readDataFile(dfType, a.get(2), partitionType),
    });
  });
  return compact<DecodedManifest>({
    formatVersion,
    schemaJson,
    specId: Number(meta['partition-spec-id'] ?? 0),
    partitionFields,
    partitionType,
    partitionSpecFields: specFields,
    content: meta.content === 'deletes' ? ManifestContent.DELETES : ManifestContent.DATA,
    entries,
  });
}

// ---- inheritance ----

/** The manifest-list fields an entry inherits from. */
export type InheritFrom = Pick<ManifestFile, 'added_snapshot_id' | 'sequence_number'> &
  Partial<Pick<ManifestFile, 'first_row_id' | 'content'>>;

/**
 * Applies the spec's inheritance to one entry (spec "Sequence Number Inheritance", Java
 * `InheritableMetadataFactory`): a null `snapshot_id` becomes the manifest's `added_snapshot_id`;
 * null sequence numbers become the manifest's `sequence_number` for ADDED entries, or for any
 * entry when that is 0 (v1 tables).
 */
export function inheritManifestEntry(entry: ManifestEntry, manifest: InheritFrom): ManifestEntry {
  const seq = manifest.sequence_number;
  const inherits = seq === 0n || entry.status === ManifestEntryStatus.ADDED;
  return compact<ManifestEntry>({
    ...entry,
    snapshot_id: entry.snapshot_id ?? manifest.added_snapshot_id,
    sequence_number: entry.sequence_number ?? (inherits ? seq : undefined),
    file_sequence_number: entry.file_sequence_number ?? (inherits ? seq : undefined),
  });
}

/**
 * Applies `inheritManifestEntry` to every entry and, when the manifest has a `first_row_id` (v3),
 * assigns `first_row_id` to live data files that lack one: the manifest's value plus the record
 * counts of the preceding such files (spec "First Row ID Inheritance").
 */
export function inheritManifestEntries(
  entries: readonly ManifestEntry[],
  manifest: InheritFrom,
): ManifestEntry[] {
  let next = manifest.first_row_id;
  return entries.map((e0) => {
    const e = inheritManifestEntry(e0, manifest);
    const df = e.data_file;
    if (
      next === undefined ||
      e.status === ManifestEntryStatus.DELETED ||
      df.content !== DataFileContent.DATA ||
      df.first_row_id !== undefined
    ) {
      return e;
    }
    const assigned = next;
    next += df.record_count;
    return { ...e, data_file: { ...df, first_row_id: assigned } };
  });
}
