/**
 * Compaction (Java `RewriteDataFiles`, bin-pack): per partition, the data files below ~75 % of the
 * target size — and any data file with deletes to apply — are rewritten into files near the target,
 * in one `replace` snapshot.
 *
 * - Rows come back exactly (the Parquet reader and writer round-trip every value; field ids and
 *   metrics are those of the current schema), minus the rows the table's deletes remove.
 * - The new files take the **starting snapshot's sequence number** as their data sequence number
 *   (Java: `use-starting-sequence-number`): equality deletes committed while the rewrite ran (newer
 *   sequence numbers) still apply to the rewritten rows, and the deletes already applied (older
 *   ones) cannot apply twice.
 * - Delete files whose every target was rewritten are removed in the same snapshot (they would
 *   only dangle).
 * - Optimistic: the commit is rebuilt from whatever the table holds at each attempt, so an append
 *   that landed meanwhile is kept. If an input file is gone, or a delete file appeared for one,
 *   the rewrite is abandoned (its files deleted) and reported; the next run plans again.
 * - Format v3 (row lineage, spec §Row Lineage): every row keeps its `_row_id` and
 *   `_last_updated_sequence_number`. The reader hands them over (written or inherited) and the new
 *   files hold them as the reserved columns (optional longs, field ids 2147483540 / 2147483539),
 *   so the ids the new files inherit (their `first_row_id`, assigned in the manifest list) apply
 *   to no row that had one. Files kept in rewritten manifests keep their `first_row_id`, written
 *   out. The snapshot's `first-row-id` / `added-rows` cover the ranges the manifest list assigns
 *   (snapshot-commit.ts). Data files with a deletion vector (Puffin) are left as they are: Floe
 *   does not read those yet.
 */

import type { CommitDeps } from '../../engine/append.ts';
import { settleAll } from '../../engine/bounded.ts';
import { groupByPartition } from '../../engine/generic-stage.ts';
import { type ManifestIo, readManifestList, writeEntriesManifest } from '../../engine/manifest-io.ts';
import {
  errorText,
  type ParquetEncoder,
  parquetEncoder,
  type RowFileWriter,
  rowFileWriter,
} from '../../engine/row-files.ts';
import { codecOf, putDataFile } from '../../engine/table-staging.ts';
import { decodeManifest, inheritManifestEntries } from '../../iceberg/manifest/index.ts';
import {
  type DataFile,
  DataFileContent,
  ManifestContent,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestFile,
} from '../../iceberg/manifest/types.ts';
import { partitionKey } from '../../iceberg/partitioning.ts';
import { rowLineageNameClash, tracksRowLineage, withRowLineage } from '../../iceberg/row-lineage.ts';
import { type FileScanTask, isDeletionVectorFile, planScan, type ScanPlan } from '../../iceberg/scan.ts';
import type { Schema } from '../../iceberg/schema.ts';
import {
  currentSchema,
  currentSnapshot,
  specById,
  type TableMetadata,
} from '../../iceberg/table-metadata.ts';
import type { IcebergValue, Row } from '../../iceberg/values.ts';
import type { LoadedTable } from '../../ports/catalog.ts';
import { deleteQuietly } from '../../ports/object-store.ts';
import { carriedSummary } from './carried-summary.ts';
import type { Thresholds } from './options.ts';
import { commitSnapshot } from './snapshot-commit.ts';

export interface CompactionDeps extends CommitDeps {
  readonly encoder?: ParquetEncoder;
}

/**
 * Reads a data file's rows in the table's current schema, with the task's deletes applied; in a
 * format v3 table each row also holds its `_row_id` and `_last_updated_sequence_number`
 * (row-lineage.ts).
 */
export type LiveRows = (meta: TableMetadata, task: FileScanTask) => Promise<Row[]>;

/** One output file's worth of input: files of one spec and partition. */
export interface Bin {
  readonly specId: number;
  readonly tuple: readonly IcebergValue[];
  readonly tasks: readonly FileScanTask[];
  readonly bytes: number;
}

export interface CompactionReport {
  readonly filesRewritten: number;
  readonly filesWritten: number;
  readonly deleteFilesRemoved: number;
  readonly rowsBefore: bigint;
  readonly rowsAfter: bigint;
  readonly bytesBefore: bigint;
  readonly bytesAfter: bigint;
  readonly snapshotId?: bigint;
  /** Why nothing was committed, when nothing was (and something was planned). */
  readonly skipped?: string;
  /** Groups left as they were (a file that could not be read or rows that could not be written). */
  readonly notes?: readonly string[];
}

const NOTHING: CompactionReport = {
  filesRewritten: 0,
  filesWritten: 0,
  deleteFilesRemoved: 0,
  rowsBefore: 0n,
  rowsAfter: 0n,
  bytesBefore: 0n,
  bytesAfter: 0n,
};

/** The bins worth rewriting in the table's current snapshot. */
export function planBins(plan: ScanPlan, th: Thresholds): Bin[] {
  const groups = new Map<string, { specId: number; tuple: readonly IcebergValue[]; tasks: FileScanTask[] }>();
  for (const t of plan.tasks) {
    if (hasDeletionVector(t)) continue; // not readable yet: the file and its vector stay as they are
    const small = Number(t.file.file_size_in_bytes) < th.smallFileBytes;
    const forced = th.rewrite?.(t.file) === true;
    if (!small && !forced && t.deletes.length === 0) continue;
    const tuple = t.file.partition as readonly IcebergValue[];
    const key = `${t.specId}|${partitionKey(tuple)}`;
    const g = groups.get(key) ?? { specId: t.specId, tuple, tasks: [] };
    groups.set(key, g);
    g.tasks.push(t);
  }
  const bins: Bin[] = [];
  for (const g of groups.values()) {
    for (const tasks of binPack(g.tasks, th.binBytes, th.maxInputFileBytes)) {
      // One file alone gains nothing — unless it has deletes to apply, or must be rewritten.
      if (tasks.length === 1 && tasks[0]!.deletes.length === 0 && th.rewrite?.(tasks[0]!.file) !== true)
        continue;
      bins.push({ specId: g.specId, tuple: g.tuple, tasks, bytes: sizeOf(tasks) });
    }
  }
  return bins;
}

function hasDeletionVector(t: FileScanTask): boolean {
  return t.deletes.some((d) => isDeletionVectorFile(d.file));
}

/** Why compaction cannot rewrite this table's files at all, if it cannot. */
export function cannotCompact(meta: TableMetadata): string | undefined {
  if (!tracksRowLineage(meta)) return undefined;
  const clash = rowLineageNameClash(currentSchema(meta));
  return clash ? `format v3 row lineage cannot be written: ${clash}` : undefined;
}

/**
 * First-fit decreasing into bins of at most `target` bytes; a file above `maxFileBytes` gets a bin
 * of its own (its rows are decoded at once: it is rewritten only when it has deletes to apply).
 */
function binPack(tasks: readonly FileScanTask[], target: number, maxFileBytes: number): FileScanTask[][] {
  const bins: { tasks: FileScanTask[]; bytes: number; alone: boolean }[] = [];
  const bySize = [...tasks].sort((a, b) => Number(b.file.file_size_in_bytes - a.file.file_size_in_bytes));
  for (const t of bySize) {
    const size = Number(t.file.file_size_in_bytes);
    const alone = size > maxFileBytes;
    const bin = alone ? undefined : bins.find((b) => !b.alone && b.bytes + size <= target);
    if (bin) {
      bin.tasks.push(t);
      bin.bytes += size;
    } else bins.push({ tasks: [t], bytes: size, alone });
  }
  return bins.map((b) => b.tasks);
}

function sizeOf(tasks: readonly FileScanTask[]): number {
  return tasks.reduce((n, t) => n + Number(t.file.file_size_in_bytes), 0);
}

/** What compaction would rewrite, without doing it. */
export async function planCompaction(
  deps: Pick<CommitDeps, 'store'>,
  base: LoadedTable,
  th: Thresholds,
): Promise<Bin[]> {
  if (!currentSnapshot(base.metadata)) return [];
  return planBins(await planScan(base.metadata, (u) => deps.store.get(u)), th);
}

export async function compact(
  deps: CompactionDeps,
  base: LoadedTable,
  th: Thresholds,
  liveRows: LiveRows,
  opts: { readonly workUntilMs?: number } = {},
): Promise<CompactionReport> {
  const meta = base.metadata;
  const start = currentSnapshot(meta);
  if (!start) return NOTHING;
  const refused = cannotCompact(meta);
  if (refused) return { ...NOTHING, skipped: refused };
  const plan = await planScan(meta, (u) => deps.store.get(u));
  const bins = planBins(plan, th);
  const notes: string[] = [];
  const withDv = plan.tasks.filter(hasDeletionVector).length;
  if (withDv > 0)
    notes.push(`${withDv} files with deletion vectors left as they are (Floe does not read them yet)`);
  if (bins.length === 0) return notes.length > 0 ? { ...NOTHING, notes } : NOTHING;
  const startSequence = start['sequence-number'] ?? 0n;
  const schema = currentSchema(meta);
  // v3: the new files also hold each row's lineage (the reader put it in the rows).
  const fileSchema = tracksRowLineage(meta) ? withRowLineage(schema) : schema;
  const written: string[] = [];
  const added: { specId: number; file: DataFile }[] = [];
  const rewritten = new Map<string, DataFile>();
  let rowsAfter = 0n;
  try {
    for (const [i, bin] of bins.entries()) {
      if (i > 0 && opts.workUntilMs !== undefined && deps.clock.nowMs() >= opts.workUntilMs) {
        notes.push(`time is up: ${bins.length - i} of ${bins.length} groups left for the next run`);
        break;
      }
      const files = await rewriteBin(deps, meta, fileSchema, bin, th, liveRows, written, notes);
      if (!files) continue;
      for (const f of files) {
        added.push({ specId: bin.specId, file: f });
        rowsAfter += f.record_count;
      }
      for (const t of bin.tasks) rewritten.set(t.file.file_path, t.file);
    }
    if (rewritten.size === 0) return { ...NOTHING, skipped: 'no file could be rewritten', notes };
    const dangling = danglingDeletes(plan, rewritten);
    const io: ManifestIo = { store: deps.store, ids: deps.ids };
    let skipped: string | undefined;
    const result = await commitSnapshot(deps, base.id, async (now, snapshotId, sequenceNumber) => {
      skipped = await inputsChanged(deps, now.metadata, plan, rewritten);
      if (skipped) return undefined;
      const manifests = await rewriteManifests(
        io,
        now.metadata,
        rewritten,
        dangling,
        snapshotId,
        sequenceNumber,
      );
      for (const [specId, files] of bySpec(added)) {
        const entries: ManifestEntry[] = files.map((f) => ({
          status: ManifestEntryStatus.ADDED,
          sequence_number: startSequence,
          data_file: f,
        }));
        const m = await writeEntriesManifest(
          io,
          now.metadata,
          specId,
          ManifestContent.DATA,
          entries,
          snapshotId,
          sequenceNumber,
        );
        manifests.manifests.unshift(m);
        manifests.written.push(m.manifest_path);
      }
      return {
        operation: 'replace',
        manifests: manifests.manifests,
        written: manifests.written,
        changes: {
          added: added.map((a) => a.file),
          removed: [...rewritten.values()],
          removedDeletes: [...dangling.values()],
        },
        summary: carriedSummary(now.metadata),
      };
    });
    if (!result.snapshot) {
      await deleteQuietly(deps.store, written);
      return { ...NOTHING, skipped: skipped ?? 'nothing to commit', notes };
    }
    return {
      filesRewritten: rewritten.size,
      filesWritten: added.length,
      deleteFilesRemoved: dangling.size,
      rowsBefore: sum([...rewritten.values()], (f) => f.record_count),
      rowsAfter,
      bytesBefore: sum([...rewritten.values()], (f) => f.file_size_in_bytes),
      bytesAfter: sum(
        added.map((a) => a.file),
        (f) => f.file_size_in_bytes,
      ),
      snapshotId: result.snapshot['snapshot-id'],
      ...(notes.length > 0 ? { notes } : {}),
    };
  } catch (e) {
    await deleteQuietly(deps.store, written);
    throw e;
  }
}

/**
 * Rewrites one bin: reads its files one at a time (live rows, deletes applied) and streams each
 * file's rows into the output file of their partition, which is finished and stored once it
 * reaches the target size — so memory holds one input file's rows, not the bin's. Returns the new
 * files, or undefined (noted, the files written deleted) when a file cannot be read or its rows
 * cannot be written: the bin stays as it is, for rows that were in the table must stay there.
 */
async function rewriteBin(
  deps: CompactionDeps,
  meta: TableMetadata,
  fileSchema: Schema,
  bin: Bin,
  th: Thresholds,
  liveRows: LiveRows,
  written: string[],
  notes: string[],
): Promise<DataFile[] | undefined> {
  const schema = currentSchema(meta);
  const spec = specById(meta, bin.specId);
  const encoder = deps.encoder ?? parquetEncoder;
  const compression = codecOf(meta);
  const puts: Promise<DataFile>[] = [];
  const open = new Map<string, OpenFile>();
  const store = async (key: string): Promise<void> => {
    const o = open.get(key)!;
    open.delete(key);
    const file = await o.writer.finish();
    const put = putDataFile(deps, meta, schema, spec, o.tuple, file, puts.length, written);
    put.catch(() => undefined);
    puts.push(put);
  };
  const giveUp = async (note: string): Promise<undefined> => {
    for (const o of open.values()) await o.writer.abort();
    open.clear();
    const settled = await Promise.allSettled(puts);
    await deleteQuietly(
      deps.store,
      settled.flatMap((p) => (p.status === 'fulfilled' ? [p.value.file_path] : [])),
    );
    notes.push(`${bin.tasks.length} files kept: ${note}`);
    return undefined;
  };
  for (const task of bin.tasks) {
    let rows: Row[];
    try {
      rows = await liveRows(meta, task);
    } catch (e) {
      return giveUp(`${task.file.file_path} could not be read (${errorText(e)})`);
    }
    try {
      for (const [key, g] of groupByPartition(spec, fileSchema, rows)) {
        let o = open.get(key);
        if (!o) {
          o = { tuple: g.tuple, writer: rowFileWriter(encoder, fileSchema, { compression }), inputBytes: 0 };
          open.set(key, o);
        }
        await o.writer.add(g.rows);
        // The file's share of the input stands in for the row group being encoded, not yet counted.
        o.inputBytes += Number(task.file.file_size_in_bytes) * (g.rows.length / rows.length);
        if (Math.max(o.writer.bytesWritten, o.inputBytes) >= th.targetFileSizeBytes) await store(key);
      }
    } catch (e) {
      return giveUp(`their rows could not be written (${errorText(e)})`);
    }
  }
  try {
    for (const key of [...open.keys()]) await store(key);
  } catch (e) {
    return giveUp(`their rows could not be written (${errorText(e)})`);
  }
  return settleAll(puts);
}

interface OpenFile {
  readonly tuple: IcebergValue[];
  readonly writer: RowFileWriter;
  /** Input bytes whose rows went into the file. */
  inputBytes: number;
}

/** Delete files whose every data file (in the planned snapshot) is being rewritten. */
function danglingDeletes(plan: ScanPlan, rewritten: ReadonlyMap<string, DataFile>): Map<string, DataFile> {
  const targets = new Map<string, { file: DataFile; all: boolean }>();
  for (const t of plan.tasks) {
    for (const d of t.deletes) {
      const seen = targets.get(d.file.file_path) ?? { file: d.file, all: true };
      if (!rewritten.has(t.file.file_path)) seen.all = false;
      targets.set(d.file.file_path, seen);
    }
  }
  const out = new Map<string, DataFile>();
  for (const [path, t] of targets) if (t.all) out.set(path, t.file);
  // A delete file that applies to no live data file at all (an upsert's delete of keys that were
  // new) never will: later data files have larger sequence numbers and other paths.
  for (const d of plan.deleteFiles ?? [])
    if (!targets.has(d.file.file_path)) out.set(d.file.file_path, d.file);
  return out;
}

/**
 * Why the rewrite no longer applies to `meta`, if it does not: an input file is no longer live, got
 * a `first_row_id` (v3: the rows read had none, so the new files would not keep the ids a commit
 * meanwhile gave them), or a position delete arrived for one (it names the old file, so its rows
 * would come back). A new
 * equality delete is fine, as in Java: the rewritten files carry the starting sequence number, so
 * a delete committed after it still applies to them.
 */
async function inputsChanged(
  deps: Pick<CommitDeps, 'store'>,
  meta: TableMetadata,
  planned: ScanPlan,
  rewritten: ReadonlyMap<string, DataFile>,
): Promise<string | undefined> {
  if (currentSnapshot(meta)?.['snapshot-id'] === planned.snapshot?.['snapshot-id']) return undefined;
  const now = await planScan(meta, (u) => deps.store.get(u));
  const before = new Map(planned.tasks.map((t) => [t.file.file_path, t]));
  const live = new Map(now.tasks.map((t) => [t.file.file_path, t]));
  for (const path of rewritten.keys()) {
    const t = live.get(path);
    if (!t) return `input ${path} was removed while compacting`;
    // v3, upgraded table: a commit meanwhile assigned row ids to a file read without any.
    if (t.file.first_row_id !== before.get(path)?.file.first_row_id)
      return `input ${path} was assigned row ids while compacting`;
    const had = new Set(before.get(path)?.deletes.map((d) => d.file.file_path));
    const fresh = t.deletes.find(
      (d) => !had.has(d.file.file_path) && d.file.content !== DataFileContent.EQUALITY_DELETES,
    );
    if (fresh) return `position delete file ${fresh.file.file_path} arrived for ${path} while compacting`;
  }
  return undefined;
}

/**
 * The current snapshot's manifests, with the rewritten data files and the dangling delete files
 * marked DELETED (their manifests written anew; untouched manifests kept as they are).
 */
async function rewriteManifests(
  io: ManifestIo,
  meta: TableMetadata,
  rewritten: ReadonlyMap<string, DataFile>,
  dangling: ReadonlyMap<string, DataFile>,
  snapshotId: bigint,
  sequenceNumber: bigint,
): Promise<{ manifests: ManifestFile[]; written: string[] }> {
  const current = currentSnapshot(meta);
  const existing = current ? await readManifestList(io, meta, current) : [];
  const manifests: ManifestFile[] = [];
  const written: string[] = [];
  for (const m of existing) {
    // v3: kept and removed data files get their inherited `first_row_id` written out (spec
    // §First Row ID Inheritance), so the rows they hold keep their ids.
    const entries = inheritManifestEntries(decodeManifest(await io.store.get(m.manifest_path)).entries, m);
    const removes = (e: ManifestEntry) =>
      rewritten.has(e.data_file.file_path) || dangling.has(e.data_file.file_path);
    if (!entries.some((e) => e.status !== ManifestEntryStatus.DELETED && removes(e))) {
      manifests.push(m);
      continue;
    }
    const next: ManifestEntry[] = [];
    for (const e of entries) {
      if (e.status === ManifestEntryStatus.DELETED) continue; // an earlier removal: done with
      next.push(
        removes(e)
          ? { ...e, status: ManifestEntryStatus.DELETED, snapshot_id: snapshotId }
          : { ...e, status: ManifestEntryStatus.EXISTING },
      );
    }
    const out = await writeEntriesManifest(
      io,
      meta,
      m.partition_spec_id,
      m.content,
      next,
      snapshotId,
      sequenceNumber,
    );
    manifests.push(out);
    written.push(out.manifest_path);
  }
  return { manifests, written };
}

function bySpec(files: readonly { specId: number; file: DataFile }[]): Map<number, DataFile[]> {
  const out = new Map<number, DataFile[]>();
  for (const { specId, file } of files) out.set(specId, [...(out.get(specId) ?? []), file]);
  return out;
}

function sum<T>(xs: readonly T[], f: (x: T) => bigint): bigint {
  return xs.reduce((n, x) => n + f(x), 0n);
}
