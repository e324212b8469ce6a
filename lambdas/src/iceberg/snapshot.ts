/**
 * Snapshots, refs and logs (spec: "Snapshots", "Snapshot References").
 * Every Iceberg `long` is a bigint: snapshot ids exceed 2^53.
 */
import {
  asArray,
  asObject,
  invalid,
  isMissing,
  type JsonObject,
  optInt,
  optLong,
  optString,
  reqLong,
  reqString,
  stringMap,
} from './metadata/json-fields.ts';
export type SnapshotOperation = 'append' | 'replace' | 'overwrite' | 'delete';

export interface Snapshot {
  readonly 'snapshot-id': bigint;
  readonly 'parent-snapshot-id'?: bigint;
  /** Absent (0) for v1 snapshots. */
  readonly 'sequence-number'?: bigint;
  readonly 'timestamp-ms': bigint;
  readonly 'manifest-list'?: string;
  /** v1 only: manifests listed inline instead of a manifest list. */
  readonly manifests?: readonly string[];
  /** String→string; `operation` is required. */
  readonly summary: Readonly<Record<string, string>> & { readonly operation: SnapshotOperation };
  readonly 'schema-id'?: number;
  /** v3 row lineage. */
  readonly 'first-row-id'?: bigint;
  readonly 'added-rows'?: bigint;
  /** v3: id of the encryption key protecting the manifest list. */
  readonly 'key-id'?: string;
}

export interface SnapshotRef {
  readonly 'snapshot-id': bigint;
  readonly type: 'branch' | 'tag';
  readonly 'min-snapshots-to-keep'?: number;
  readonly 'max-snapshot-age-ms'?: bigint;
  readonly 'max-ref-age-ms'?: bigint;
}

export interface SnapshotLogEntry {
  readonly 'timestamp-ms': bigint;
  readonly 'snapshot-id': bigint;
}

export interface MetadataLogEntry {
  readonly 'timestamp-ms': bigint;
  readonly 'metadata-file': string;
}

export const MAIN_BRANCH = 'main';

/**
 * Whether `text` is a branch name Floe writes to: letters, digits, `_`, `-`, `.`, `/`, at most
 * 128, not starting with `.`, `/` or `-` (every catalog's property keys and S3 keys hold it).
 */
export function isBranchName(text: string): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9_./-]{0,127}$/.test(text);
}

// ---- JSON (spec Appendix C; key order as Java's SnapshotParser / SnapshotRefParser) ----

/** Parses one snapshot object; v1 snapshots may list `manifests` inline and lack a summary. */
export function snapshotFromJson(v: unknown, what = 'snapshot'): Snapshot {
  const j = asObject(v, what);
  const id = reqLong(j, 'snapshot-id', what);
  const w = `snapshot ${id}`;
  const summary = stringMap(j.summary, `${w} summary`);
  // Java treats a missing summary/operation as unknown; the only pre-summary writers were appends.
  const operation = (summary.operation ?? 'append') as SnapshotOperation;
  const out: { -readonly [K in keyof Snapshot]: Snapshot[K] } = {
    'snapshot-id': id,
    'timestamp-ms': reqLong(j, 'timestamp-ms', w),
    summary: { ...summary, operation },
  };
  const parent = optLong(j, 'parent-snapshot-id', w);
  if (parent !== undefined) out['parent-snapshot-id'] = parent;
  const seq = optLong(j, 'sequence-number', w);
  if (seq !== undefined) out['sequence-number'] = seq;
  const list = optString(j, 'manifest-list', w);
  if (list !== undefined) out['manifest-list'] = list;
  else if (!isMissing(j, 'manifests')) {
    out.manifests = asArray(j.manifests, `${w} manifests`).map((m) => {
      if (typeof m !== 'string') throw invalid(w, `'manifests' entries must be strings, got ${typeof m}`);
      return m;
    });
  }
  const schemaId = optInt(j, 'schema-id', w);
  if (schemaId !== undefined) out['schema-id'] = schemaId;
  const firstRowId = optLong(j, 'first-row-id', w);
  if (firstRowId !== undefined) out['first-row-id'] = firstRowId;
  const addedRows = optLong(j, 'added-rows', w);
  if (addedRows !== undefined) out['added-rows'] = addedRows;
  const keyId = optString(j, 'key-id', w);
  if (keyId !== undefined) out['key-id'] = keyId;
  return out;
}

/** Java's key order: sequence-number, snapshot-id, parent, timestamp, summary, manifest list, schema, lineage. */
export function snapshotToJson(s: Snapshot): JsonObject {
  const out: JsonObject = {};
  if (s['sequence-number'] !== undefined) out['sequence-number'] = s['sequence-number'];
  out['snapshot-id'] = s['snapshot-id'];
  if (s['parent-snapshot-id'] !== undefined) out['parent-snapshot-id'] = s['parent-snapshot-id'];
  out['timestamp-ms'] = s['timestamp-ms'];
  // `operation` first, as Java writes it.
  const { operation, ...rest } = s.summary;
  out.summary = { operation, ...rest };
  if (s['manifest-list'] !== undefined) out['manifest-list'] = s['manifest-list'];
  else if (s.manifests !== undefined) out.manifests = [...s.manifests];
  if (s['schema-id'] !== undefined) out['schema-id'] = s['schema-id'];
  if (s['first-row-id'] !== undefined) out['first-row-id'] = s['first-row-id'];
  if (s['added-rows'] !== undefined) out['added-rows'] = s['added-rows'];
  if (s['key-id'] !== undefined) out['key-id'] = s['key-id'];
  return out;
}

/** Parses one entry of `refs` (spec "Snapshot References"); `type` is read case-insensitively. */
export function refFromJson(v: unknown, name: string): SnapshotRef {
  const what = `ref '${name}'`;
  const j = asObject(v, what);
  const type = reqString(j, 'type', what).toLowerCase();
  if (type !== 'branch' && type !== 'tag') {
    throw invalid(what, `'type' must be "branch" or "tag", got ${JSON.stringify(type)}`);
  }
  const out: { -readonly [K in keyof SnapshotRef]: SnapshotRef[K] } = {
    'snapshot-id': reqLong(j, 'snapshot-id', what),
    type,
  };
  const minKeep = optInt(j, 'min-snapshots-to-keep', what);
  if (minKeep !== undefined) out['min-snapshots-to-keep'] = minKeep;
  const maxSnapAge = optLong(j, 'max-snapshot-age-ms', what);
  if (maxSnapAge !== undefined) out['max-snapshot-age-ms'] = maxSnapAge;
  const maxRefAge = optLong(j, 'max-ref-age-ms', what);
  if (maxRefAge !== undefined) out['max-ref-age-ms'] = maxRefAge;
  return out;
}

/** Java `SnapshotRefParser` key order; retention fields only when set. */
export function refToJson(r: SnapshotRef): JsonObject {
  const out: JsonObject = { 'snapshot-id': r['snapshot-id'], type: r.type };
  if (r['min-snapshots-to-keep'] !== undefined) out['min-snapshots-to-keep'] = r['min-snapshots-to-keep'];
  if (r['max-snapshot-age-ms'] !== undefined) out['max-snapshot-age-ms'] = r['max-snapshot-age-ms'];
  if (r['max-ref-age-ms'] !== undefined) out['max-ref-age-ms'] = r['max-ref-age-ms'];
  return out;
}
