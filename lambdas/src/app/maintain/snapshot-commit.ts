/**
 * An optimistic commit of one snapshot built from whatever the table holds when the attempt
 * starts: `build` sees the freshly loaded base on every attempt (so an append that landed
 * meanwhile is carried into the new snapshot) and may return undefined to give up (its inputs
 * changed).
 *
 * Format v3: the snapshot's `first-row-id` is the table's `next-row-id` at this attempt, data
 * manifests without a `first_row_id` get ranges from there, and `added-rows` is the size of the
 * ranges handed out (spec §Snapshot Row IDs, §First Row ID Assignment): the table's `next-row-id`
 * moves past them when the commit applies.
 */

import type { CommitDeps } from '../../engine/append.ts';
import { type ManifestIo, writeManifestList } from '../../engine/manifest-io.ts';
import type { ManifestFile } from '../../iceberg/manifest/types.ts';
import type { Snapshot, SnapshotOperation } from '../../iceberg/snapshot.ts';
import { MAIN_BRANCH } from '../../iceberg/snapshot.ts';
import { type SummaryChanges, summarize } from '../../iceberg/snapshot-summary.ts';
import { asSeenFromBranch, currentSnapshot } from '../../iceberg/table-metadata.ts';
import type { LoadedTable, TableIdentifier } from '../../ports/catalog.ts';
import { commitOptimistically } from './optimistic.ts';

/** What one attempt commits. */
export interface SnapshotPlan {
  readonly operation: SnapshotOperation;
  /** Every manifest of the new snapshot. */
  readonly manifests: readonly ManifestFile[];
  readonly changes: SummaryChanges;
  readonly summary?: Readonly<Record<string, string>>;
  /** Files this attempt wrote (manifests): deleted if the attempt loses. */
  readonly written: readonly string[];
}

export interface SnapshotCommit {
  readonly table: LoadedTable;
  readonly snapshot?: Snapshot;
  readonly attempts: number;
}

export async function commitSnapshot(
  deps: CommitDeps,
  id: TableIdentifier,
  build: (base: LoadedTable, snapshotId: bigint, sequenceNumber: bigint) => Promise<SnapshotPlan | undefined>,
): Promise<SnapshotCommit> {
  const io: ManifestIo = { store: deps.store, ids: deps.ids };
  const snapshotId = deps.ids.snapshotId();
  // A rewrite of a branch (the one a table's writers commit to) is built from, and goes to, its head.
  const branch = deps.branch ?? MAIN_BRANCH;
  const out = await commitOptimistically(deps, id, async (real, attempt) => {
    const base = { ...real, metadata: asSeenFromBranch(real.metadata, branch) };
    const m = base.metadata;
    const sequenceNumber = m['last-sequence-number'] + 1n;
    const plan = await build(base, snapshotId, sequenceNumber);
    if (plan === undefined) return undefined;
    const written = [...plan.written];
    const parent = currentSnapshot(m);
    const firstRowId = m['format-version'] >= 3 ? (m['next-row-id'] ?? 0n) : undefined;
    let addedRows: bigint | undefined;
    try {
      const list = await writeManifestList(io, m, {
        snapshotId,
        ...(parent ? { parentSnapshotId: parent['snapshot-id'] } : {}),
        sequenceNumber,
        ...(firstRowId !== undefined ? { firstRowId } : {}),
        manifests: [...plan.manifests],
        attempt,
      });
      written.push(list.location);
      addedRows = list.addedRows;
    } catch (e) {
      await Promise.all(written.map((u) => deps.store.delete(u).catch(() => undefined)));
      throw e;
    }
    const snapshot: Snapshot = {
      'snapshot-id': snapshotId,
      ...(parent ? { 'parent-snapshot-id': parent['snapshot-id'] } : {}),
      'sequence-number': sequenceNumber,
      'timestamp-ms': BigInt(deps.clock.nowMs()),
      'manifest-list': written[written.length - 1]!,
      summary: summarize(plan.operation, plan.changes, parent?.summary, plan.summary) as Snapshot['summary'],
      'schema-id': m['current-schema-id'],
      ...(firstRowId !== undefined ? { 'first-row-id': firstRowId, 'added-rows': addedRows ?? 0n } : {}),
    };
    return {
      updates: [
        { action: 'add-snapshot', snapshot },
        { action: 'set-snapshot-ref', 'ref-name': branch, type: 'branch', 'snapshot-id': snapshotId },
      ],
      written,
      result: snapshot,
    };
  });
  return { table: out.table, attempts: out.attempts, ...(out.result ? { snapshot: out.result } : {}) };
}
