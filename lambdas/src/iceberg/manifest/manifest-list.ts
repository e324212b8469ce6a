/**
 * Manifest lists (spec: "Manifest Lists"; facts §2.2–2.4): one `manifest_file` record per manifest
 * of a snapshot, with Java's header keys `snapshot-id`, `parent-snapshot-id`, `sequence-number`,
 * `first-row-id` (v3) and `format-version`.
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
import { schemaToJson } from '../schema.ts';
import type { ListType, StructType } from '../types.ts';
import { FIELD_SUMMARY_FIELDS, fieldAccessor, MANIFEST_FILE_FIELDS, manifestFileType } from './fields.ts';
import { compact, formatVersionOf } from './manifest.ts';
import { type FieldSummary, ManifestContent, type ManifestFile } from './types.ts';

function invalid(msg: string): never {
  throw new FloeError(ErrorKind.DataInvalid, msg);
}

// ---- writing ----

export interface EncodeManifestListOptions {
  readonly formatVersion: 2 | 3;
  readonly snapshotId: bigint;
  readonly parentSnapshotId?: bigint;
  readonly sequenceNumber: bigint;
  /** v3: the snapshot's `first-row-id`; new data manifests get row-id ranges from here. */
  readonly firstRowId?: bigint;
  readonly manifests: readonly ManifestFile[];
  /** 16 random bytes, injected for deterministic output. */
  readonly syncMarker: Uint8Array;
  /** Defaults to `deflate`, as Java. */
  readonly codec?: AvroWriteCodec;
}

/**
 * Assigns `first_row_id` to data manifests that lack one, as Java's v3 `ManifestListWriter`: each
 * gets the running id, which then advances by `existing_rows_count + added_rows_count`.
 * Returns the manifests and the next unassigned row id (the snapshot's `added-rows` is the difference).
 */
export function assignManifestFirstRowIds(
  manifests: readonly ManifestFile[],
  firstRowId: bigint,
): { manifests: ManifestFile[]; nextRowId: bigint } {
  let next = firstRowId;
  const out = manifests.map((m) => {
    if (m.content !== ManifestContent.DATA || m.first_row_id !== undefined) return m;
    const assigned = next;
    next += m.existing_rows_count + m.added_rows_count;
    return { ...m, first_row_id: assigned };
  });
  return { manifests: out, nextRowId: next };
}

/** Writes a v2 or v3 manifest list (spec "Manifest Lists"). */
export function encodeManifestList(opts: EncodeManifestListOptions): Uint8Array {
  const v = opts.formatVersion;
  if (v !== 2 && v !== 3)
    throw new FloeError(ErrorKind.FeatureUnsupported, `manifest list format version ${v}`);
  let manifests = [...opts.manifests];
  for (const m of manifests) {
    if (m.content !== ManifestContent.DATA && m.content !== ManifestContent.DELETES) {
      invalid(`manifest ${m.manifest_path}: bad content ${m.content}`);
    }
    if (m.content === ManifestContent.DELETES && m.first_row_id !== undefined) {
      invalid(`manifest ${m.manifest_path}: delete manifests have no first_row_id`);
    }
    if (v === 2 && m.first_row_id !== undefined)
      invalid(`manifest ${m.manifest_path}: first_row_id needs v3`);
  }
  const metadata: Record<string, string> = {
    'snapshot-id': String(opts.snapshotId),
    // Java writes String.valueOf(null) when there is no parent.
    'parent-snapshot-id': opts.parentSnapshotId === undefined ? 'null' : String(opts.parentSnapshotId),
    'sequence-number': String(opts.sequenceNumber),
  };
  if (v === 3) {
    if (opts.firstRowId === undefined) invalid('v3 manifest lists need firstRowId');
    metadata['first-row-id'] = String(opts.firstRowId);
    manifests = assignManifestFirstRowIds(manifests, opts.firstRowId).manifests;
  } else if (opts.firstRowId !== undefined) {
    invalid('firstRowId needs format version 3');
  }
  metadata['format-version'] = String(v);
  const type = manifestFileType(v);
  metadata['iceberg.schema'] = JSON.stringify(schemaToJson({ schemaId: 0, fields: type.fields }));
  return encodeAvroContainer({
    schemaJson: icebergToAvroSchema(type, 'manifest_file'),
    records: manifests.map((m) => toAvroDatum(type, m)),
    metadata,
    codec: opts.codec ?? 'deflate',
    syncMarker: opts.syncMarker,
  });
}

// ---- reading ----

export interface DecodedManifestList {
  readonly formatVersion: 1 | 2 | 3;
  readonly snapshotId?: bigint;
  readonly parentSnapshotId?: bigint;
  readonly sequenceNumber?: bigint;
  readonly firstRowId?: bigint;
  readonly manifests: ManifestFile[];
}

function headerLong(meta: Record<string, string>, key: string): bigint | undefined {
  const raw = meta[key];
  if (raw === undefined || raw === 'null' || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw)) invalid(`manifest list header '${key}' is not a long: ${raw}`);
  return BigInt(raw);
}

function readSummaries(t: ListType | undefined, value: unknown): FieldSummary[] | undefined {
  if (value === null || t === undefined) return undefined;
  return (value as unknown[]).map((s) => {
    const a = fieldAccessor(t.element as StructType, s, FIELD_SUMMARY_FIELDS);
    const containsNull = a.get(509);
    if (typeof containsNull !== 'boolean') invalid('field_summary has no contains_null');
    return compact<FieldSummary>({
      contains_null: containsNull,
      contains_nan: (a.get(518) ?? undefined) as boolean | undefined,
      lower_bound: (a.get(510) ?? undefined) as Uint8Array | undefined,
      upper_bound: (a.get(511) ?? undefined) as Uint8Array | undefined,
    });
  });
}

/**
 * Reads a manifest list of any version with its header. v1 records get content DATA and sequence
 * numbers 0; v1 file/row counts that are null (unknown, Java's `hasAddedFiles()` answers true) read as 0.
 */
export function readManifestList(bytes: Uint8Array): DecodedManifestList {
  const file = decodeAvroContainer(bytes, { mapSchema: normalizeAvroFieldNames });
  const type = avroToIcebergType(file.schemaJson);
  if (type.kind !== 'struct') invalid('manifest list schema is not a record');
  const ids = new Set(type.fields.map((f) => f.id));
  const formatVersion = formatVersionOf(file.metadata, (id) => ids.has(id));
  const manifests = file.records.map((rec) => {
    const a = fieldAccessor(type, fromAvroDatum(type, rec), MANIFEST_FILE_FIELDS);
    const req = <T>(id: number, name: string): T => {
      const v = a.get(id);
      if (v === null) invalid(`manifest_file has no ${name}`);
      return v as T;
    };
    const o = <T>(id: number) => (a.get(id) ?? undefined) as T | undefined;
    // v1 lists may leave counts null (unknown); they read as 0, so never prune manifests by count for v1.
    return compact<ManifestFile>({
      manifest_path: req<string>(500, 'manifest_path'),
      manifest_length: req<bigint>(501, 'manifest_length'),
      partition_spec_id: req<number>(502, 'partition_spec_id'),
      content: (o<number>(517) ?? ManifestContent.DATA) as ManifestContent,
      sequence_number: o<bigint>(515) ?? 0n,
      min_sequence_number: o<bigint>(516) ?? 0n,
      added_snapshot_id: req<bigint>(503, 'added_snapshot_id'),
      added_files_count: o<number>(504) ?? 0,
      existing_files_count: o<number>(505) ?? 0,
      deleted_files_count: o<number>(506) ?? 0,
      added_rows_count: o<bigint>(512) ?? 0n,
      existing_rows_count: o<bigint>(513) ?? 0n,
      deleted_rows_count: o<bigint>(514) ?? 0n,
      partitions: readSummaries(a.type(507) as ListType | undefined, a.get(507)),
      key_metadata: o(519),
      first_row_id: o(520),
    });
  });
  return compact<DecodedManifestList>({
    formatVersion,
    snapshotId: headerLong(file.metadata, 'snapshot-id'),
    parentSnapshotId: headerLong(file.metadata, 'parent-snapshot-id'),
    sequenceNumber: headerLong(file.metadata, 'sequence-number'),
    firstRowId: headerLong(file.metadata, 'first-row-id'),
    manifests,
  });
}

/** Reads the manifests of a manifest list (v1–v3); see `readManifestList` for the header. */
export function decodeManifestList(bytes: Uint8Array): ManifestFile[] {
  return readManifestList(bytes).manifests;
}
