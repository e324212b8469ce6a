/**
 * Scan planning (spec: "Scan Planning"): snapshot → manifest list → manifests → live data files,
 * each paired with the delete files that apply to it.
 *
 * Pure: every byte comes through the injected `read(uri)`.
 */
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import { fromBinary } from './conversions.ts';
import { decodeManifest, decodeManifestList, inheritManifestEntries } from './manifest/index.ts';
import {
  type DataFile,
  DataFileContent,
  type FieldSummary,
  ManifestContent,
  ManifestEntryStatus,
  type ManifestFile,
} from './manifest/types.ts';
import { isUnpartitioned, type PartitionSpec } from './partition-spec.ts';
import { indexById, type Schema } from './schema.ts';
import type { Snapshot } from './snapshot.ts';
import type { TableMetadata } from './table-metadata.ts';
import { currentSchema, schemaById, snapshotById, specById } from './table-metadata.ts';
import { type IcebergType, isPrimitive } from './types.ts';

/** Reads the whole object at a table file URI. */
export type ReadFile = (uri: string) => Promise<Uint8Array>;

/** A live content file of the scanned snapshot, after inheritance. */
export interface PlannedFile {
  readonly file: DataFile;
  /** Data sequence number (0 for v1 tables). */
  readonly dataSequenceNumber: bigint;
  /** Partition spec the file was written with (its manifest's spec). */
  readonly specId: number;
}

/** A delete file that applies to a task's data file. */
export type DeleteFileRef = PlannedFile;

/** One data file to read, with the delete files that apply to it. */
export interface FileScanTask extends PlannedFile {
  readonly deletes: readonly DeleteFileRef[];
}

export interface ScanPlan {
  /** Undefined for a table without snapshots (then `tasks` is empty). */
  readonly snapshot?: Snapshot;
  /** The schema to read with: the current schema, or the snapshot's schema when time travelling. */
  readonly schema: Schema;
  readonly tasks: readonly FileScanTask[];
  /** Every live delete file (also those that apply to no data file the scan selected). */
  readonly deleteFiles?: readonly PlannedFile[];
  /** Every partition spec of the table (tasks refer to them by `specId`). */
  readonly specs: readonly PartitionSpec[];
  /** Every schema of the table (equality deletes may name columns dropped since). */
  readonly schemas: readonly Schema[];
}

/** Comparison of a column (top-level name or dotted path) with a value in Floe's in-memory form (values.ts). */
export interface ScanPredicate {
  readonly column: string;
  readonly op: '=' | '<' | '<=' | '>' | '>=';
  /** Internal representation: number for int/date, bigint for long/timestamps/unscaled decimals, string … */
  readonly value: unknown;
}

export interface ScanOptions {
  /** Time travel: plan this snapshot instead of the current one. */
  readonly snapshotId?: bigint;
  /** Conjunction of predicates used only to skip files (rows are not filtered). */
  readonly filter?: readonly ScanPredicate[];
}

/** Field id of `file_path` in position delete files. */
const POS_DELETE_FILE_PATH_ID = 2147483546;

/**
 * Plans a scan of `metadata`'s current snapshot (or `opts.snapshotId`): reads the manifest list (or the
 * v1 inline `manifests`), every data and delete manifest, applies inheritance (snapshot ids, sequence
 * numbers, v3 `first_row_id`s), drops DELETED entries,
 * matches delete files to data files and optionally prunes files with `opts.filter`.
 */
export async function planScan(
  metadata: TableMetadata,
  read: ReadFile,
  opts: ScanOptions = {},
): Promise<ScanPlan> {
  const table = metadata.location;
  const snapshotId = opts.snapshotId ?? metadata['current-snapshot-id'];
  const snapshot = snapshotId === undefined ? undefined : snapshotById(metadata, snapshotId);
  if (snapshotId !== undefined && snapshot === undefined) {
    throw new FloeError(ErrorKind.NotFound, `table ${table}: snapshot ${snapshotId} not found`);
  }
  const schema = scanSchema(metadata, snapshot, opts.snapshotId !== undefined);
  const base = { schema, specs: metadata['partition-specs'], schemas: metadata.schemas };
  if (snapshot === undefined) return { ...base, tasks: [] };

  const predicates = resolvePredicates(schema, opts.filter ?? [], table);
  const manifests = await snapshotManifests(snapshot, read, table);
  const data: PlannedFile[] = [];
  const deletes: PlannedFile[] = [];
  for (const mf of manifests) {
    const spec = specOrThrow(metadata, mf.partition_spec_id, mf.manifest_path);
    // Delete manifests are never pruned by the data filter: a skipped delete would resurrect rows.
    if (mf.content === ManifestContent.DATA && !manifestMayMatch(mf.partitions, spec, predicates)) continue;
    const decoded = decodeManifest(await readOrThrow(read, mf.manifest_path, `manifest of table ${table}`));
    // Inheritance walks every entry in order: v3 `first_row_id`s follow the preceding files'.
    for (const entry of inheritManifestEntries(decoded.entries, mf)) {
      if (entry.status === ManifestEntryStatus.DELETED) continue;
      const planned: PlannedFile = {
        file: entry.data_file,
        dataSequenceNumber: entry.sequence_number ?? 0n,
        specId: mf.partition_spec_id,
      };
      if (entry.data_file.content === DataFileContent.DATA) {
        if (fileMayMatch(entry.data_file, spec, predicates)) data.push(planned);
      } else {
        deletes.push(planned);
      }
    }
  }
  return {
    ...base,
    snapshot,
    tasks: assignDeletes(data, deletes, metadata['partition-specs']),
    deleteFiles: deletes,
  };
}

function scanSchema(metadata: TableMetadata, snapshot: Snapshot | undefined, timeTravel: boolean): Schema {
  const sid = snapshot?.['schema-id'];
  if (timeTravel && sid !== undefined) {
    const s = schemaById(metadata, sid);
    if (s) return s;
  }
  return currentSchema(metadata);
}

function specOrThrow(metadata: TableMetadata, specId: number, where: string): PartitionSpec {
  const spec = specById(metadata, specId);
  if (!spec) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `table ${metadata.location}: ${where} uses partition spec ${specId}, which the metadata does not define`,
    );
  }
  return spec;
}

/**
 * Manifest-list entries of a snapshot; v1 snapshots may list manifest paths inline instead (each
 * then gets a synthesised entry with unknown counts, 0, as Java reports them).
 */
export async function snapshotManifests(
  snapshot: Snapshot,
  read: ReadFile,
  table: string,
): Promise<ManifestFile[]> {
  const id = snapshot['snapshot-id'];
  const list = snapshot['manifest-list'];
  if (list !== undefined) {
    return decodeManifestList(
      await readOrThrow(read, list, `manifest list of snapshot ${id} of table ${table}`),
    );
  }
  if (snapshot.manifests === undefined) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `table ${table}: snapshot ${id} has neither manifest-list nor manifests`,
    );
  }
  // v1 inline manifests: synthesise the manifest-list record from each manifest's own header.
  const out: ManifestFile[] = [];
  for (const path of snapshot.manifests) {
    const bytes = await readOrThrow(read, path, `manifest of snapshot ${id} of table ${table}`);
    const m = decodeManifest(bytes);
    out.push({
      manifest_path: path,
      manifest_length: BigInt(bytes.length),
      partition_spec_id: m.specId,
      content: ManifestContent.DATA,
      sequence_number: 0n,
      min_sequence_number: 0n,
      added_snapshot_id: id,
      added_files_count: 0,
      existing_files_count: 0,
      deleted_files_count: 0,
      added_rows_count: 0n,
      existing_rows_count: 0n,
      deleted_rows_count: 0n,
    });
  }
  return out;
}

/** Reads `uri`, or throws a FloeError naming `what` (NotFound when missing, else retryable). */
export async function readOrThrow(read: ReadFile, uri: string, what: string): Promise<Uint8Array> {
  try {
    return await read(uri);
  } catch (e) {
    if (isFloeError(e)) throw e;
    const missing = isNotFound(e);
    throw new FloeError(missing ? ErrorKind.NotFound : ErrorKind.Unexpected, `cannot read ${what}: ${uri}`, {
      cause: e,
      retryable: !missing,
      context: { uri },
    });
  }
}

function isNotFound(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const o = e as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: unknown } };
  return (
    o.code === 'ENOENT' ||
    o.name === 'NoSuchKey' ||
    o.name === 'NotFound' ||
    o.$metadata?.httpStatusCode === 404
  );
}

// ---- delete matching (spec §Scan Planning) ----

/**
 * Pairs each data file with the delete files that apply to it:
 * - position deletes and DVs: `seq(data) <= seq(delete)`, same spec and partition, `referenced_data_file`
 *   (when set) equal to the data file's path and the data path inside the delete's `file_path` bounds;
 *   when a DV applies, position delete files are ignored for that data file;
 * - equality deletes: `seq(data) < seq(delete)` (strict), same spec and partition, or any data file
 *   when the delete file's spec is unpartitioned (a global delete).
 */
export function assignDeletes(
  data: readonly PlannedFile[],
  deletes: readonly PlannedFile[],
  specs: readonly PartitionSpec[],
): FileScanTask[] {
  const unpartitioned = new Set(specs.filter(isUnpartitioned).map((s) => s['spec-id']));
  const byPartition = new Map<string, PlannedFile[]>();
  const globalEq: PlannedFile[] = [];
  const sorted = [...deletes].sort((a, b) => cmpBig(a.dataSequenceNumber, b.dataSequenceNumber));
  for (const d of sorted) {
    if (d.file.content === DataFileContent.EQUALITY_DELETES && unpartitioned.has(d.specId)) {
      globalEq.push(d);
      continue;
    }
    const key = partitionKey(d.specId, d.file.partition);
    const list = byPartition.get(key);
    if (list) list.push(d);
    else byPartition.set(key, [d]);
  }
  return data.map((task) => {
    const candidates = [
      ...(byPartition.get(partitionKey(task.specId, task.file.partition)) ?? []),
      ...globalEq,
    ];
    const applicable = candidates.filter((d) => deleteApplies(task, d));
    const hasDv = applicable.some(isDeletionVector);
    const kept = hasDv
      ? applicable.filter((d) => d.file.content !== DataFileContent.POSITION_DELETES || isDeletionVector(d))
      : applicable;
    return { ...task, deletes: kept.sort((a, b) => cmpBig(a.dataSequenceNumber, b.dataSequenceNumber)) };
  });
}

function deleteApplies(data: PlannedFile, del: PlannedFile): boolean {
  if (del.file.content === DataFileContent.EQUALITY_DELETES) {
    return data.dataSequenceNumber < del.dataSequenceNumber;
  }
  if (data.dataSequenceNumber > del.dataSequenceNumber) return false;
  const ref = del.file.referenced_data_file;
  if (ref !== undefined && ref !== null) return ref === data.file.file_path;
  return pathWithinBounds(data.file.file_path, del.file);
}

function isDeletionVector(d: PlannedFile): boolean {
  return isDeletionVectorFile(d.file);
}

/** A position delete file stored as a deletion vector (Puffin; format v3). */
export function isDeletionVectorFile(f: Pick<DataFile, 'content' | 'file_format'>): boolean {
  return f.content === DataFileContent.POSITION_DELETES && f.file_format.toLowerCase() === 'puffin';
}

/** A position delete file's `file_path` bounds (possibly truncated) still bracket every path it targets. */
function pathWithinBounds(path: string, del: DataFile): boolean {
  const bytes = utf8.encode(path);
  const lower = del.lower_bounds?.get(POS_DELETE_FILE_PATH_ID);
  const upper = del.upper_bounds?.get(POS_DELETE_FILE_PATH_ID);
  if (lower !== undefined && compareBytes(bytes, lower) < 0) return false;
  if (upper !== undefined && compareBytes(bytes, upper) > 0) return false;
  return true;
}

const utf8 = new TextEncoder();

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

function cmpBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Stable key of a spec id + partition tuple (bigints and bytes made JSON-safe). */
function partitionKey(specId: number, partition: readonly unknown[]): string {
  return `${specId}|${JSON.stringify(partition.map(keyPart))}`;
}

function keyPart(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `0x${[...v].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
  if (v instanceof Date) return `D${v.toISOString()}`;
  if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));
}

// ---- pruning ----

interface ResolvedPredicate extends ScanPredicate {
  readonly fieldId: number;
  readonly type: IcebergType;
}

function resolvePredicates(
  schema: Schema,
  filter: readonly ScanPredicate[],
  table: string,
): ResolvedPredicate[] {
  if (filter.length === 0) return [];
  const byPath = new Map<string, { id: number; type: IcebergType; inCollection: boolean }>();
  for (const [id, f] of indexById(schema)) {
    byPath.set(f.path.join('.'), { id, type: f.field.type, inCollection: f.inCollection });
  }
  return filter.map((p) => {
    const f = byPath.get(p.column);
    if (!f || f.inCollection || !isPrimitive(f.type)) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `table ${table}: filter column '${p.column}' is not a primitive column`,
      );
    }
    return { ...p, fieldId: f.id, type: f.type };
  });
}

/** Whether a value satisfying `p` could exist in [lower, upper]; true when unknown. */
function rangeMayMatch(p: ScanPredicate, lower: unknown, upper: unknown): boolean {
  const lo = lower === undefined ? undefined : compareValues(p.value, lower);
  const hi = upper === undefined ? undefined : compareValues(p.value, upper);
  switch (p.op) {
    case '=':
      return !(lo !== undefined && lo < 0) && !(hi !== undefined && hi > 0);
    case '<':
      return !(lo !== undefined && lo <= 0);
    case '<=':
      return !(lo !== undefined && lo < 0);
    case '>':
      return !(hi !== undefined && hi >= 0);
    case '>=':
      return !(hi !== undefined && hi > 0);
  }
}

/** Orders two in-memory values of one type; undefined when they are not comparable (NaN, bytes …). */
function compareValues(a: unknown, b: unknown): number | undefined {
  const numeric = (x: unknown) => typeof x === 'number' || typeof x === 'bigint';
  if (numeric(a) && numeric(b)) {
    if (Number.isNaN(a) || Number.isNaN(b)) return undefined;
    return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  }
  // Iceberg orders strings by their UTF-8 bytes, which differs from JS's UTF-16 order.
  if (typeof a === 'string' && typeof b === 'string')
    return Math.sign(compareBytes(utf8.encode(a), utf8.encode(b)));
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return undefined;
}

function decodeBound(type: IcebergType, bytes: Uint8Array | undefined): unknown {
  if (bytes === undefined || !isPrimitive(type)) return undefined;
  try {
    return fromBinary(type, bytes);
  } catch {
    return undefined; // an undecodable bound only loses pruning, never rows
  }
}

function identityIndex(spec: PartitionSpec, fieldId: number): number {
  return spec.fields.findIndex((f) => f['source-id'] === fieldId && f.transform === 'identity');
}

function manifestMayMatch(
  summaries: readonly FieldSummary[] | undefined,
  spec: PartitionSpec,
  predicates: readonly ResolvedPredicate[],
): boolean {
  if (!summaries) return true;
  return predicates.every((p) => {
    const i = identityIndex(spec, p.fieldId);
    const s = i < 0 ? undefined : summaries[i];
    if (!s) return true;
    // No bounds (all null or NaN): NaN may still match a range, so keep the manifest.
    if (s.lower_bound === undefined && s.upper_bound === undefined) return true;
    return rangeMayMatch(p, decodeBound(p.type, s.lower_bound), decodeBound(p.type, s.upper_bound));
  });
}

function fileMayMatch(
  file: DataFile,
  spec: PartitionSpec,
  predicates: readonly ResolvedPredicate[],
): boolean {
  return predicates.every((p) => {
    const i = identityIndex(spec, p.fieldId);
    if (i >= 0) {
      const v = file.partition[i];
      // Comparisons never match null, and an identity partition holds every row's value.
      if (v === null || v === undefined) return false;
      const c = compareValues(p.value, v);
      if (c !== undefined) return rangeMayMatch(p, v, v);
    }
    const values = file.value_counts?.get(p.fieldId);
    const nulls = file.null_value_counts?.get(p.fieldId);
    if (values !== undefined && nulls !== undefined && values > 0n && values === nulls) return false;
    return rangeMayMatch(
      p,
      decodeBound(p.type, file.lower_bounds?.get(p.fieldId)),
      decodeBound(p.type, file.upper_bounds?.get(p.fieldId)),
    );
  });
}
