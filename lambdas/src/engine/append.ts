/**
 * Append commit for one table (spec: "Snapshots", "Manifest Lists"; Java `MergeAppend`).
 *
 * Stage once, commit per attempt: data files are written by the caller's `prepare`, the manifest
 * for them is written once per prepared set (its ADDED entries inherit sequence numbers), and only
 * the manifest list and metadata.json are rebuilt when the catalog reports a conflict.
 */
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import { type DataFile, ManifestContent, type ManifestFile } from '../iceberg/manifest/types.ts';
import type { TableUpdate } from '../iceberg/metadata/index.ts';
import { applyUpdates } from '../iceberg/metadata/index.ts';
import { MAIN_BRANCH, type Snapshot } from '../iceberg/snapshot.ts';
import { summarize } from '../iceberg/snapshot-summary.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { branchHead } from '../iceberg/table-metadata.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../ports/catalog.ts';
import { tableIdToString } from '../ports/catalog.ts';
import type { Clock, Ids } from '../ports/clock.ts';
import { deleteQuietly, type ObjectStore } from '../ports/object-store.ts';
import {
  type ManifestIo,
  mergeManifests,
  readManifestList,
  writeDataManifest,
  writeManifestList,
} from './manifest-io.ts';

export interface CommitDeps {
  readonly catalog: Catalog;
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly ids: Ids;
  /** Waits between attempts; injectable so tests run instantly. */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * The branch commits go to (default `main`). A branch that does not exist yet starts at main's
   * current snapshot; main does not move (`floe branch publish` moves it).
   */
  readonly branch?: string;
}

/** `deps` committing to `branch` (themselves when it is main: commits go there by default). */
export function committingTo<D extends CommitDeps>(deps: D, branch: string): D {
  return branch === MAIN_BRANCH ? deps : { ...deps, branch };
}

/** What the caller staged against one loaded base. */
export interface PreparedAppend {
  /** Schema / spec evolution applied before the snapshot (metadata-only changes). */
  readonly updates: readonly TableUpdate[];
  /** Data files written with the evolved schema's field ids and the spec below. */
  readonly dataFiles: readonly DataFile[];
  readonly specId: number;
  /**
   * Files written earlier under other (older) specs of the table, by spec id: e.g. files an ingest
   * staged before the committer evolved the spec. Each spec gets its own manifest.
   */
  readonly otherSpecFiles?: ReadonlyMap<number, readonly DataFile[]>;
  /** Snapshot summary properties of this attempt (e.g. the commit watermark's location). */
  readonly summary?: Readonly<Record<string, string>>;
  /** Delete files (upsert tables' equality deletes) committed with the data files, by spec id. */
  readonly deleteFiles?: ReadonlyMap<number, readonly DataFile[]>;
}

/** Every delete file of a prepared commit. */
function allDeletes(p: PreparedAppend): DataFile[] {
  return [...(p.deleteFiles?.values() ?? [])].flat();
}

/** Every data file of a prepared append, by partition spec id. */
export function filesBySpec(p: PreparedAppend): Map<number, readonly DataFile[]> {
  const out = new Map<number, DataFile[]>();
  const add = (specId: number, files: readonly DataFile[]) => {
    if (files.length === 0) return;
    const list = out.get(specId) ?? [];
    list.push(...files);
    out.set(specId, list);
  };
  add(p.specId, p.dataFiles);
  for (const [specId, files] of p.otherSpecFiles ?? []) add(specId, files);
  return out;
}

function allFiles(p: PreparedAppend): DataFile[] {
  return [...filesBySpec(p).values()].flat();
}

export interface AppendRequest {
  readonly table: TableIdentifier;
  /**
   * Called with the freshly loaded table on every attempt. Return the same object (or one with the
   * same files) when the base's schema and spec did not change, so nothing is written twice.
   */
  prepare(base: LoadedTable): Promise<PreparedAppend>;
  /** Extra snapshot summary properties (e.g. a load id or a commit watermark reference). */
  readonly summary?: Readonly<Record<string, string>>;
  readonly maxAttempts?: number;
}

export interface AppendResult {
  readonly table: LoadedTable;
  /** Undefined when there was nothing to commit. */
  readonly snapshot?: Snapshot;
  readonly attempts: number;
}

const DEFAULT_ATTEMPTS = 8;

export async function commitAppend(deps: CommitDeps, req: AppendRequest): Promise<AppendResult> {
  const maxAttempts = req.maxAttempts ?? DEFAULT_ATTEMPTS;
  const io: ManifestIo = { store: deps.store, ids: deps.ids };
  let stagedFor: PreparedAppend | undefined;
  let stagedManifests: ManifestFile[] = [];
  // One snapshot id for every attempt (as Java's SnapshotProducer): retries replace, never add.
  const snapshotId = deps.ids.snapshotId();
  for (let attempt = 1; ; attempt++) {
    const base = await deps.catalog.loadTable(req.table);
    const prepared = await req.prepare(base);
    const added = allFiles(prepared);
    const addedDeletes = allDeletes(prepared);
    if (added.length === 0 && addedDeletes.length === 0 && prepared.updates.length === 0) {
      return { table: base, attempts: attempt };
    }
    const evolved = applyUpdates(base.metadata, [...prepared.updates], { nowMs: deps.clock.nowMs() });
    if (stagedFor !== prepared) {
      stagedFor = prepared;
      stagedManifests = [];
      for (const [specId, files] of filesBySpec(prepared)) {
        stagedManifests.push(await writeDataManifest(io, evolved, specId, files, snapshotId));
      }
      for (const [specId, files] of prepared.deleteFiles ?? []) {
        if (files.length === 0) continue;
        stagedManifests.push(
          await writeDataManifest(io, evolved, specId, files, snapshotId, ManifestContent.DELETES),
        );
      }
    }
    const attemptFiles: string[] = [];
    try {
      const snapshot =
        stagedManifests.length === 0
          ? undefined
          : await buildSnapshot(
              io,
              evolved,
              stagedManifests,
              added,
              addedDeletes,
              snapshotId,
              deps.clock.nowMs(),
              attempt,
              req,
              prepared.summary,
              attemptFiles,
              branchHead(evolved, deps.branch ?? MAIN_BRANCH),
            );
      const updates: TableUpdate[] = [...prepared.updates];
      if (snapshot) {
        updates.push({ action: 'add-snapshot', snapshot });
        updates.push({
          action: 'set-snapshot-ref',
          'ref-name': deps.branch ?? MAIN_BRANCH,
          type: 'branch',
          'snapshot-id': snapshot['snapshot-id'],
        });
      }
      const next = applyUpdates(base.metadata, updates, {
        nowMs: deps.clock.nowMs(),
        metadataLocation: base.metadataLocation,
      });
      const committed = await deps.catalog.commitTable(base, next);
      await cleanUpOldMetadata(deps.store, base, committed);
      return { table: committed, attempts: attempt, ...(snapshot ? { snapshot } : {}) };
    } catch (e) {
      // Only a conflict says for sure that the swap did not happen; after any other failure the new
      // metadata may be live and reference these files, so they stay (an orphan is harmless).
      if (isFloeError(e, ErrorKind.CommitConflict)) {
        await deleteQuietly(deps.store, attemptFiles);
      }
      if (!isFloeError(e, ErrorKind.CommitConflict) || attempt >= maxAttempts) {
        if (isFloeError(e, ErrorKind.CommitConflict)) {
          throw new FloeError(
            ErrorKind.CommitConflict,
            `gave up committing to ${tableIdToString(req.table)} after ${attempt} attempts: ${e.message}`,
            { cause: e, retryable: true, context: { table: tableIdToString(req.table) } },
          );
        }
        throw e;
      }
      await (deps.sleep ?? defaultSleep)(backoffMs(attempt));
    }
  }
}

/**
 * Creates a new table with its first snapshot in one metadata file (Java's create transaction):
 * the manifests and the manifest list of `prepared`'s files, then `metadata` with that snapshot,
 * registered by `createTable`. `'unsupported'` when the catalog cannot (`createsWithData`);
 * `'exists'` when another writer created the table first (the files written for it are deleted:
 * nothing references them).
 */
export async function createWithAppend(
  deps: CommitDeps,
  id: TableIdentifier,
  metadata: TableMetadata,
  prepared: PreparedAppend,
  summary?: Readonly<Record<string, string>>,
): Promise<AppendResult | 'unsupported' | 'exists'> {
  if (deps.catalog.createsWithData !== true) return 'unsupported';
  const io: ManifestIo = { store: deps.store, ids: deps.ids };
  const snapshotId = deps.ids.snapshotId();
  const evolved = applyUpdates(metadata, [...prepared.updates], { nowMs: deps.clock.nowMs() });
  const written: string[] = [];
  const manifests: ManifestFile[] = [];
  for (const [specId, files] of filesBySpec(prepared)) {
    const m = await writeDataManifest(io, evolved, specId, files, snapshotId);
    written.push(m.manifest_path);
    manifests.push(m);
  }
  for (const [specId, files] of prepared.deleteFiles ?? []) {
    if (files.length === 0) continue;
    const m = await writeDataManifest(io, evolved, specId, files, snapshotId, ManifestContent.DELETES);
    written.push(m.manifest_path);
    manifests.push(m);
  }
  const req: AppendRequest = { table: id, prepare: async () => prepared, ...(summary ? { summary } : {}) };
  const snapshot = await buildSnapshot(
    io,
    evolved,
    manifests,
    allFiles(prepared),
    allDeletes(prepared),
    snapshotId,
    deps.clock.nowMs(),
    1,
    req,
    prepared.summary,
    written,
    undefined,
  );
  const next = applyUpdates(
    evolved,
    [
      { action: 'add-snapshot', snapshot },
      {
        action: 'set-snapshot-ref',
        'ref-name': deps.branch ?? MAIN_BRANCH,
        type: 'branch',
        'snapshot-id': snapshot['snapshot-id'],
      },
    ],
    { nowMs: deps.clock.nowMs() },
  );
  await deps.catalog.createNamespace(id.namespace);
  try {
    const table = await deps.catalog.createTable(id, next);
    return { table, attempts: 1, snapshot };
  } catch (e) {
    if (!isFloeError(e, ErrorKind.AlreadyExists)) throw e;
    await deleteQuietly(deps.store, written);
    return 'exists';
  }
}

async function buildSnapshot(
  io: ManifestIo,
  meta: TableMetadata,
  newManifests: readonly ManifestFile[],
  added: readonly DataFile[],
  addedDeletes: readonly DataFile[],
  snapshotId: bigint,
  nowMs: number,
  attempt: number,
  req: AppendRequest,
  summaryExtra: Readonly<Record<string, string>> | undefined,
  attemptFiles: string[],
  /** The head of the branch the snapshot goes to. */
  parent: Snapshot | undefined,
): Promise<Snapshot> {
  const sequenceNumber = meta['last-sequence-number'] + 1n;
  const existing = parent ? await readManifestList(io, meta, parent) : [];
  const merged = await mergeManifests(io, meta, existing, snapshotId, sequenceNumber);
  attemptFiles.push(...merged.written);
  // The new manifests were written before the sequence number was known: stamp them now.
  const stamped = newManifests.map(
    (m): ManifestFile => ({
      ...m,
      sequence_number: sequenceNumber,
      min_sequence_number: sequenceNumber,
      added_snapshot_id: snapshotId,
    }),
  );
  const manifests = [...stamped, ...merged.manifests];
  const v3 = meta['format-version'] >= 3;
  const firstRowId = v3 ? (meta['next-row-id'] ?? 0n) : undefined;
  const list = await writeManifestList(io, meta, {
    snapshotId,
    ...(parent ? { parentSnapshotId: parent['snapshot-id'] } : {}),
    sequenceNumber,
    ...(firstRowId !== undefined ? { firstRowId } : {}),
    manifests,
    attempt,
  });
  attemptFiles.push(list.location);
  // Java's RowDelta: data and deletes together are an `overwrite`, deletes alone a `delete`.
  const operation = addedDeletes.length === 0 ? 'append' : added.length === 0 ? 'delete' : 'overwrite';
  const changes = { added: [...added], removed: [], addedDeletes: [...addedDeletes] };
  const summary = summarize(operation, changes, parent?.summary, {
    ...(req.summary ?? {}),
    ...(summaryExtra ?? {}),
    'manifests-created': String(stamped.length + merged.created),
    'manifests-kept': String(merged.kept),
    'manifests-replaced': String(merged.replaced),
  });
  const addedRows = added.reduce((n, f) => n + f.record_count, 0n);
  return {
    'snapshot-id': snapshotId,
    ...(parent ? { 'parent-snapshot-id': parent['snapshot-id'] } : {}),
    'sequence-number': sequenceNumber,
    'timestamp-ms': BigInt(nowMs),
    'manifest-list': list.location,
    summary: summary as Snapshot['summary'],
    'schema-id': meta['current-schema-id'],
    ...(firstRowId !== undefined
      ? { 'first-row-id': firstRowId, 'added-rows': list.addedRows ?? addedRows }
      : {}),
  };
}

/**
 * `write.metadata.delete-after-commit.enabled`: metadata files that fell out of the metadata log
 * (trimmed to `write.metadata.previous-versions-max`) are deleted, best effort, as Java does.
 */
export async function cleanUpOldMetadata(
  store: ObjectStore,
  base: LoadedTable,
  committed: LoadedTable,
): Promise<void> {
  const m = committed.metadata;
  if ((m.properties['write.metadata.delete-after-commit.enabled'] ?? 'false') !== 'true') return;
  const kept = new Set([committed.metadataLocation, ...m['metadata-log'].map((e) => e['metadata-file'])]);
  const before = [base.metadataLocation, ...base.metadata['metadata-log'].map((e) => e['metadata-file'])];
  await deleteQuietly(
    store,
    before.filter((f) => !kept.has(f)),
  );
}

export function backoffMs(attempt: number): number {
  return Math.min(2000, 25 * 2 ** (attempt - 1));
}

export function defaultSleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
