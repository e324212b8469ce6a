/**
 * Snapshot expiry (Java `ExpireSnapshots`, reachable-file cleanup). A snapshot is retained when it
 * is a ref's head, one of a branch's newest `min-snapshots-to-keep` ancestors, or younger than the
 * cutoff (a ref's own `min-snapshots-to-keep` / `max-snapshot-age-ms` win over the table's, and a
 * non-main ref older than its `max-ref-age-ms` is dropped, as in Java). The rest are removed in one
 * metadata commit; then the manifest lists, manifests, data, delete and statistics files that only
 * removed snapshots reached are deleted — files are only ever deleted after the commit succeeded,
 * and reachability is computed from the metadata that commit produced, so a snapshot that landed
 * meanwhile keeps everything it needs.
 */

import type { CommitDeps } from '../../engine/append.ts';
import { DataFileContent } from '../../iceberg/manifest/types.ts';
import type { TableUpdate } from '../../iceberg/metadata/index.ts';
import { MAIN_BRANCH, type Snapshot } from '../../iceberg/snapshot.ts';
import type { TableMetadata } from '../../iceberg/table-metadata.ts';
import type { LoadedTable } from '../../ports/catalog.ts';
import { deleteQuietly } from '../../ports/object-store.ts';
import { commitOptimistically } from './optimistic.ts';
import type { Thresholds } from './options.ts';
import { ManifestReader, reachedBy } from './reachable.ts';

export interface ExpiryPlan {
  readonly expire: readonly Snapshot[];
  /** Non-main refs past their `max-ref-age-ms`. */
  readonly refs: readonly string[];
  /** Statistics files (table and partition) of the expired snapshots. */
  readonly statistics: readonly string[];
}

export interface FilesFreed {
  readonly manifestLists: number;
  readonly manifests: number;
  readonly dataFiles: number;
  readonly deleteFiles: number;
  readonly statisticsFiles: number;
  /** Bytes of the manifests, data and delete files (manifest lists are not sized in metadata). */
  readonly bytes: bigint;
}

export interface ExpiryReport {
  readonly snapshotsExpired: number;
  readonly refsRemoved: readonly string[];
  readonly snapshotsRetained: number;
  /** Deleted, or that would be (dry run); zero when file deletion is off (S3 Tables). */
  readonly freed: FilesFreed;
}

const NONE: FilesFreed = {
  manifestLists: 0,
  manifests: 0,
  dataFiles: 0,
  deleteFiles: 0,
  statisticsFiles: 0,
  bytes: 0n,
};

/** Which snapshots and refs expire at `nowMs`. Pure. */
export function planExpiry(meta: TableMetadata, th: Thresholds, nowMs: number): ExpiryPlan {
  const byId = new Map(meta.snapshots.map((s) => [s['snapshot-id'], s]));
  const defaultCutoff = BigInt(nowMs - th.expireOlderThanMs);
  const refsGone: string[] = [];
  const retained = new Set<bigint>();
  const referenced = new Set<bigint>();
  for (const [name, ref] of Object.entries(meta.refs)) {
    const head = byId.get(ref['snapshot-id']);
    if (!head) continue;
    const maxRefAge = ref['max-ref-age-ms'] ?? positiveLong(meta.properties['history.expire.max-ref-age-ms']);
    if (name !== MAIN_BRANCH && maxRefAge !== undefined && head['timestamp-ms'] < BigInt(nowMs) - maxRefAge) {
      refsGone.push(name);
      continue;
    }
    retained.add(head['snapshot-id']);
    if (ref.type !== 'branch') continue;
    const minKeep = ref['min-snapshots-to-keep'] ?? th.retainLast;
    const maxAge = ref['max-snapshot-age-ms'];
    const cutoff = maxAge !== undefined ? BigInt(nowMs) - maxAge : defaultCutoff;
    let kept = 0;
    for (const s of ancestors(head, byId)) {
      referenced.add(s['snapshot-id']);
      if (kept < minKeep || s['timestamp-ms'] >= cutoff) {
        retained.add(s['snapshot-id']);
        kept++;
      }
    }
  }
  // Snapshots no ref reaches (an abandoned commit's, a dropped ref's) live until the default cutoff.
  for (const s of meta.snapshots) {
    if (!referenced.has(s['snapshot-id']) && s['timestamp-ms'] >= defaultCutoff)
      retained.add(s['snapshot-id']);
  }
  const expire = meta.snapshots.filter((s) => !retained.has(s['snapshot-id']));
  const gone = new Set(expire.map((s) => s['snapshot-id']));
  const statistics = statisticsFiles(meta)
    .filter((s) => s.snapshotId !== undefined && gone.has(s.snapshotId))
    .map((s) => s.path);
  return { expire, refs: refsGone, statistics };
}

function statisticsFiles(meta: TableMetadata): { path: string; snapshotId?: bigint }[] {
  const out: { path: string; snapshotId?: bigint }[] = [];
  for (const e of [...meta.statistics, ...meta['partition-statistics']] as Record<string, unknown>[]) {
    const path = e['statistics-path'];
    const id = e['snapshot-id'];
    if (typeof path !== 'string') continue;
    out.push({
      path,
      ...(typeof id === 'bigint'
        ? { snapshotId: id }
        : typeof id === 'number'
          ? { snapshotId: BigInt(id) }
          : {}),
    });
  }
  return out;
}

/** `head` and its ancestors, newest first (cycle-safe). */
function* ancestors(head: Snapshot, byId: ReadonlyMap<bigint, Snapshot>): Generator<Snapshot> {
  const seen = new Set<bigint>();
  for (let s: Snapshot | undefined = head; s && !seen.has(s['snapshot-id']); ) {
    seen.add(s['snapshot-id']);
    yield s;
    const parent: bigint | undefined = s['parent-snapshot-id'];
    s = parent === undefined ? undefined : byId.get(parent);
  }
}

export interface ExpiryOptions {
  readonly dryRun?: boolean;
  /** False where the storage refuses deletes or another service cleans it (S3 Tables). */
  readonly deleteFiles: boolean;
}

export async function expireSnapshots(
  deps: CommitDeps,
  base: LoadedTable,
  th: Thresholds,
  opts: ExpiryOptions,
): Promise<ExpiryReport> {
  const nowMs = deps.clock.nowMs();
  if (opts.dryRun) {
    const plan = planExpiry(base.metadata, th, nowMs);
    const freed = opts.deleteFiles ? await unreachedAfter(deps, base.metadata, plan, false) : NONE;
    return report(plan, base.metadata.snapshots.length - plan.expire.length, freed);
  }
  const out = await commitOptimistically(deps, base.id, async (now) => {
    const plan = planExpiry(now.metadata, th, nowMs);
    if (plan.expire.length === 0 && plan.refs.length === 0) return undefined;
    const updates: TableUpdate[] = plan.refs.map((r) => ({ action: 'remove-snapshot-ref', 'ref-name': r }));
    if (plan.expire.length > 0) {
      updates.push({ action: 'remove-snapshots', 'snapshot-ids': plan.expire.map((s) => s['snapshot-id']) });
    }
    return { updates, written: [], result: plan };
  });
  if (!out.result)
    return report({ expire: [], refs: [], statistics: [] }, out.table.metadata.snapshots.length, NONE);
  const freed = opts.deleteFiles ? await unreachedAfter(deps, out.table.metadata, out.result, true) : NONE;
  return report(out.result, out.table.metadata.snapshots.length, freed);
}

function report(plan: ExpiryPlan, retained: number, freed: FilesFreed): ExpiryReport {
  return {
    snapshotsExpired: plan.expire.length,
    refsRemoved: plan.refs,
    snapshotsRetained: retained,
    freed,
  };
}

/**
 * Files the `expired` snapshots reach that no snapshot left in `meta` (minus `expired`, for a dry
 * run) reaches; deleted when `remove`.
 */
async function unreachedAfter(
  deps: Pick<CommitDeps, 'store'>,
  meta: TableMetadata,
  plan: ExpiryPlan,
  remove: boolean,
): Promise<FilesFreed> {
  const expired = plan.expire;
  if (expired.length === 0) return NONE;
  const gone = new Set(expired.map((s) => s['snapshot-id']));
  const reader = new ManifestReader(deps.store);
  const kept = await reachedBy(
    reader,
    meta.snapshots.filter((s) => !gone.has(s['snapshot-id'])),
  );
  const lost = await reachedBy(reader, expired, { missingOk: true });
  const lists = [...lost.manifestLists].filter((p) => !kept.manifestLists.has(p));
  const manifests = [...lost.manifests].filter((p) => !kept.manifests.has(p));
  const files = [...lost.contentFiles.values()].filter((f) => !kept.contentFiles.has(f.file_path));
  const stillNamed = new Set(
    statisticsFiles(meta)
      .filter((s) => s.snapshotId === undefined || !gone.has(s.snapshotId))
      .map((s) => s.path),
  );
  const statistics = plan.statistics.filter((p) => !stillNamed.has(p));
  let bytes = files.reduce((n, f) => n + f.file_size_in_bytes, 0n);
  for (const p of manifests) bytes += reader.lengthOf(p) ?? 0n;
  if (remove) {
    // Content first, then manifests, then lists: an interrupted run leaves metadata that names
    // missing files only among snapshots already gone from the table.
    await deleteQuietly(
      deps.store,
      files.map((f) => f.file_path),
    );
    await deleteQuietly(deps.store, manifests);
    await deleteQuietly(deps.store, [...lists, ...statistics]);
  }
  return {
    manifestLists: lists.length,
    manifests: manifests.length,
    dataFiles: files.filter((f) => f.content === DataFileContent.DATA).length,
    deleteFiles: files.filter((f) => f.content !== DataFileContent.DATA).length,
    statisticsFiles: statistics.length,
    bytes,
  };
}

function positiveLong(v: string | undefined): bigint | undefined {
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  const n = BigInt(v);
  return n > 0n ? n : undefined;
}
