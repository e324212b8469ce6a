/**
 * Reading and writing manifests and manifest lists through the object store, and the
 * small-manifest merge that keeps metadata flat as history grows (Java `ManifestMergeManager`:
 * `commit.manifest-merge.enabled`, `commit.manifest.min-count-to-merge`, `commit.manifest.target-size-bytes`).
 */

import { ErrorKind, FloeError } from '../errors.ts';
import {
  decodeManifest,
  decodeManifestList,
  encodeManifest,
  encodeManifestList,
  inheritManifestEntries,
} from '../iceberg/manifest/index.ts';
import type { DataFile, ManifestEntry, ManifestFile } from '../iceberg/manifest/types.ts';
import { DataFileContent, ManifestContent, ManifestEntryStatus } from '../iceberg/manifest/types.ts';
import { fieldSummaries, partitionType } from '../iceberg/partitioning.ts';
import type { Snapshot } from '../iceberg/snapshot.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { currentSchema, specById } from '../iceberg/table-metadata.ts';
import type { IcebergValue } from '../iceberg/values.ts';
import type { Ids } from '../ports/clock.ts';
import type { ObjectStore } from '../ports/object-store.ts';

export interface ManifestIo {
  readonly store: ObjectStore;
  readonly ids: Ids;
}

function metadataDir(meta: TableMetadata): string {
  return meta.properties['write.metadata.path'] ?? `${meta.location}/metadata`;
}

function intProp(meta: TableMetadata, key: string, dflt: number): number {
  const v = Number(meta.properties[key]);
  return Number.isFinite(v) && v > 0 ? v : dflt;
}

export async function readManifestList(
  io: ManifestIo,
  meta: TableMetadata,
  snapshot: Snapshot,
): Promise<ManifestFile[]> {
  const uri = snapshot['manifest-list'];
  if (uri === undefined) {
    throw new FloeError(
      ErrorKind.FeatureUnsupported,
      `snapshot ${snapshot['snapshot-id']} of ${meta.location} lists manifests inline (format v1); upgrade the table to v2 first`,
    );
  }
  return decodeManifestList(await io.store.get(uri));
}

async function writeManifest(
  io: ManifestIo,
  meta: TableMetadata,
  specId: number,
  content: ManifestContent,
  entries: ManifestEntry[],
): Promise<{ location: string; length: number }> {
  const spec = specById(meta, specId);
  const schema = currentSchema(meta);
  const bytes = encodeManifest({
    formatVersion: meta['format-version'] === 1 ? 2 : meta['format-version'],
    schema,
    spec,
    partitionType: partitionType(spec, schema),
    content,
    entries,
    syncMarker: io.ids.bytes16(),
    // Uncompressed: icebird (an independent reader we test with) cannot read small deflate blocks.
    codec: 'null',
  });
  const location = `${metadataDir(meta)}/${io.ids.uuid()}-m0.avro`;
  await io.store.put(location, bytes);
  return { location, length: bytes.length };
}

/**
 * Writes a manifest of ADDED entries whose snapshot id and sequence numbers are left null, so the
 * same manifest serves every commit attempt (they inherit from the manifest list entry).
 */
export async function writeDataManifest(
  io: ManifestIo,
  meta: TableMetadata,
  specId: number,
  files: readonly DataFile[],
  snapshotId: bigint,
  /** DELETES for a manifest of delete files (equality or position). */
  content: ManifestContent = ManifestContent.DATA,
): Promise<ManifestFile> {
  const entries: ManifestEntry[] = files.map((f) => ({ status: ManifestEntryStatus.ADDED, data_file: f }));
  const { location, length } = await writeManifest(io, meta, specId, content, entries);
  const spec = specById(meta, specId);
  const schema = currentSchema(meta);
  return {
    manifest_path: location,
    manifest_length: BigInt(length),
    partition_spec_id: specId,
    content,
    sequence_number: 0n, // stamped per attempt
    min_sequence_number: 0n,
    added_snapshot_id: snapshotId,
    added_files_count: files.length,
    existing_files_count: 0,
    deleted_files_count: 0,
    added_rows_count: files.reduce((n, f) => n + f.record_count, 0n),
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions: fieldSummaries(
      spec,
      schema,
      files.map((f) => [...f.partition] as IcebergValue[]),
    ),
  };
}

/**
 * Writes a manifest of `entries` as they are (any status; explicit snapshot ids and sequence
 * numbers where set, inherited where not) for a snapshot with `snapshotId` and `sequenceNumber`,
 * and describes it for the manifest list. Used by commits that rewrite history (compaction).
 */
export async function writeEntriesManifest(
  io: ManifestIo,
  meta: TableMetadata,
  specId: number,
  content: ManifestContent,
  entries: readonly ManifestEntry[],
  snapshotId: bigint,
  sequenceNumber: bigint,
): Promise<ManifestFile> {
  const { location, length } = await writeManifest(io, meta, specId, content, [...entries]);
  const spec = specById(meta, specId);
  const schema = currentSchema(meta);
  const count = (status: ManifestEntryStatus) => entries.filter((e) => e.status === status);
  const rows = (es: readonly ManifestEntry[]) => es.reduce((n, e) => n + e.data_file.record_count, 0n);
  let minSeq = sequenceNumber;
  for (const e of entries) {
    if (
      e.status !== ManifestEntryStatus.DELETED &&
      e.sequence_number !== undefined &&
      e.sequence_number < minSeq
    )
      minSeq = e.sequence_number;
  }
  return {
    manifest_path: location,
    manifest_length: BigInt(length),
    partition_spec_id: specId,
    content,
    sequence_number: sequenceNumber,
    min_sequence_number: minSeq,
    added_snapshot_id: snapshotId,
    added_files_count: count(ManifestEntryStatus.ADDED).length,
    existing_files_count: count(ManifestEntryStatus.EXISTING).length,
    deleted_files_count: count(ManifestEntryStatus.DELETED).length,
    added_rows_count: rows(count(ManifestEntryStatus.ADDED)),
    existing_rows_count: rows(count(ManifestEntryStatus.EXISTING)),
    deleted_rows_count: rows(count(ManifestEntryStatus.DELETED)),
    // Over every entry, DELETED ones too, as Java's ManifestWriter (`stats.update` in `addEntry`).
    partitions: fieldSummaries(
      spec,
      schema,
      entries.map((e) => [...e.data_file.partition] as IcebergValue[]),
    ),
  };
}

export interface MergeResult {
  readonly manifests: ManifestFile[];
  readonly written: string[];
  readonly created: number;
  readonly kept: number;
  readonly replaced: number;
}

/**
 * Carries the parent's manifests into the new snapshot, merging small data manifests of one spec
 * into bins of the target size once there are at least `min-count-to-merge` of them. Merged
 * entries become EXISTING with explicit sequence numbers and, in v3, their inherited
 * `first_row_id` written out (spec §First Row ID Inheritance: rows keep their ids); DELETED
 * entries are dropped.
 */
export async function mergeManifests(
  io: ManifestIo,
  meta: TableMetadata,
  existing: readonly ManifestFile[],
  snapshotId: bigint,
  sequenceNumber: bigint,
  /** `rewrite`: merge any two or more small manifests of a spec, whatever the table's settings (RewriteManifests). */
  mode: 'append' | 'rewrite' = 'append',
): Promise<MergeResult> {
  const plan = planManifestMerge(meta, existing, mode);
  const out: ManifestFile[] = [];
  const written: string[] = [];
  let replaced = 0;
  for (const { specId, manifests } of plan.merges) {
    const merged = await mergeBin(io, meta, specId, manifests, snapshotId, sequenceNumber);
    out.push(merged);
    written.push(merged.manifest_path);
    replaced += manifests.length;
  }
  return {
    manifests: [...out, ...plan.kept],
    written,
    created: out.length,
    kept: plan.kept.length,
    replaced,
  };
}

export interface ManifestMergePlan {
  /** Groups of manifests (of one spec) each merged into one. */
  readonly merges: readonly { readonly specId: number; readonly manifests: readonly ManifestFile[] }[];
  /** Carried as they are, in the parent's order (manifests with no live entry are dropped). */
  readonly kept: readonly ManifestFile[];
}

/** Which manifests `mergeManifests` merges (and a dry run reports). */
export function planManifestMerge(
  meta: TableMetadata,
  existing: readonly ManifestFile[],
  mode: 'append' | 'rewrite',
): ManifestMergePlan {
  const rewrite = mode === 'rewrite';
  const enabled = rewrite || (meta.properties['commit.manifest-merge.enabled'] ?? 'true') !== 'false';
  const minCount = rewrite ? 3 : intProp(meta, 'commit.manifest.min-count-to-merge', 100);
  const target = intProp(meta, 'commit.manifest.target-size-bytes', 8 * 1024 * 1024);
  const keep = new Set<ManifestFile>();
  const small = new Map<number, ManifestFile[]>();
  for (const m of existing) {
    // Java drops a parent's manifest that holds only DELETED entries: the removal it records
    // belongs to the parent snapshot. v1 counts may be unknown (read as 0), so only from v2 on.
    if (meta['format-version'] >= 2 && m.added_files_count === 0 && m.existing_files_count === 0) continue;
    if (!enabled || m.content !== ManifestContent.DATA || Number(m.manifest_length) >= target) keep.add(m);
    else small.set(m.partition_spec_id, [...(small.get(m.partition_spec_id) ?? []), m]);
  }
  const merges: { specId: number; manifests: ManifestFile[] }[] = [];
  for (const [specId, group] of small) {
    // +1: the new manifest of this commit counts towards the threshold, as in Java.
    if (group.length + 1 < minCount) {
      for (const m of group) keep.add(m);
      continue;
    }
    for (const bin of binBySize(group, target)) {
      if (bin.length === 1) keep.add(bin[0]!);
      else merges.push({ specId, manifests: bin });
    }
  }
  // Keep the parent's order for untouched manifests after the merged ones (newest first overall).
  return { merges, kept: existing.filter((m) => keep.has(m)) };
}

function binBySize(group: readonly ManifestFile[], target: number): ManifestFile[][] {
  const bins: ManifestFile[][] = [];
  let cur: ManifestFile[] = [];
  let size = 0;
  for (const m of group) {
    if (cur.length > 0 && size + Number(m.manifest_length) > target) {
      bins.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(m);
    size += Number(m.manifest_length);
  }
  if (cur.length > 0) bins.push(cur);
  return bins;
}

async function mergeBin(
  io: ManifestIo,
  meta: TableMetadata,
  specId: number,
  bin: readonly ManifestFile[],
  snapshotId: bigint,
  sequenceNumber: bigint,
): Promise<ManifestFile> {
  const entries: ManifestEntry[] = [];
  for (const m of bin) {
    const decoded = decodeManifest(await io.store.get(m.manifest_path));
    for (const e of inheritManifestEntries(decoded.entries, m)) {
      if (e.status === ManifestEntryStatus.DELETED) continue;
      // Carried entries keep their original snapshot and sequence numbers, explicitly.
      entries.push({ ...e, status: ManifestEntryStatus.EXISTING });
    }
  }
  const { location, length } = await writeManifest(io, meta, specId, ManifestContent.DATA, entries);
  const spec = specById(meta, specId);
  const schema = currentSchema(meta);
  const dataFiles = entries.map((e) => e.data_file).filter((f) => f.content === DataFileContent.DATA);
  let minSeq = sequenceNumber;
  for (const e of entries)
    if (e.sequence_number !== undefined && e.sequence_number < minSeq) minSeq = e.sequence_number;
  return {
    manifest_path: location,
    manifest_length: BigInt(length),
    partition_spec_id: specId,
    content: ManifestContent.DATA,
    sequence_number: sequenceNumber,
    min_sequence_number: minSeq,
    added_snapshot_id: snapshotId,
    added_files_count: 0,
    existing_files_count: entries.length,
    deleted_files_count: 0,
    added_rows_count: 0n,
    existing_rows_count: dataFiles.reduce((n, f) => n + f.record_count, 0n),
    deleted_rows_count: 0n,
    partitions: fieldSummaries(
      spec,
      schema,
      dataFiles.map((f) => [...f.partition] as IcebergValue[]),
    ),
  };
}

export interface WrittenManifestList {
  readonly location: string;
  /** v3: rows assigned ids by this list (sum of new data manifests' added + existing rows). */
  readonly addedRows?: bigint;
}

export async function writeManifestList(
  io: ManifestIo,
  meta: TableMetadata,
  opts: {
    snapshotId: bigint;
    parentSnapshotId?: bigint;
    sequenceNumber: bigint;
    firstRowId?: bigint;
    manifests: ManifestFile[];
    attempt: number;
  },
): Promise<WrittenManifestList> {
  let manifests = opts.manifests;
  let addedRows: bigint | undefined;
  if (opts.firstRowId !== undefined) {
    // v3 row lineage: new data manifests without first_row_id get consecutive ranges.
    let next = opts.firstRowId;
    manifests = manifests.map((m) => {
      if (m.content !== ManifestContent.DATA || m.first_row_id !== undefined) return m;
      const assigned = { ...m, first_row_id: next };
      next += m.added_rows_count + m.existing_rows_count;
      return assigned;
    });
    addedRows = next - opts.firstRowId;
  }
  const formatVersion = meta['format-version'] >= 3 ? 3 : 2;
  const bytes = encodeManifestList({
    formatVersion,
    snapshotId: opts.snapshotId,
    ...(opts.parentSnapshotId !== undefined ? { parentSnapshotId: opts.parentSnapshotId } : {}),
    sequenceNumber: opts.sequenceNumber,
    ...(opts.firstRowId !== undefined ? { firstRowId: opts.firstRowId } : {}),
    manifests,
    syncMarker: io.ids.bytes16(),
    codec: 'null',
  });
  const location = `${metadataDir(meta)}/snap-${opts.snapshotId}-${opts.attempt}-${io.ids.uuid()}.avro`;
  await io.store.put(location, bytes);
  return { location, ...(addedRows !== undefined ? { addedRows } : {}) };
}
