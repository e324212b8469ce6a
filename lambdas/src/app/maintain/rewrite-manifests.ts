/**
 * Manifest rewrite (Java `RewriteManifests`): the current snapshot's small data manifests of each
 * partition spec are merged into manifests near `commit.manifest.target-size-bytes`, in one
 * `replace` snapshot that changes no data (entries carried as EXISTING with their original
 * snapshot ids and sequence numbers). Appends already merge once 100 manifests pile up; this
 * step merges whatever is there, so a planner opens a handful of manifests instead of dozens.
 */

import type { CommitDeps } from '../../engine/append.ts';
import {
  type ManifestIo,
  mergeManifests,
  planManifestMerge,
  readManifestList,
} from '../../engine/manifest-io.ts';
import { currentSnapshot } from '../../iceberg/table-metadata.ts';
import type { LoadedTable } from '../../ports/catalog.ts';
import { carriedSummary } from './carried-summary.ts';
import { commitSnapshot } from './snapshot-commit.ts';

export interface ManifestRewriteReport {
  readonly manifestsBefore: number;
  readonly manifestsAfter: number;
  readonly snapshotId?: bigint;
}

export async function rewriteManifests(
  deps: CommitDeps,
  base: LoadedTable,
  opts: { dryRun?: boolean } = {},
): Promise<ManifestRewriteReport> {
  const io: ManifestIo = { store: deps.store, ids: deps.ids };
  const current = currentSnapshot(base.metadata);
  if (!current) return { manifestsBefore: 0, manifestsAfter: 0 };
  const listed = await readManifestList(io, base.metadata, current);
  const before = listed.length;
  if (opts.dryRun) {
    const plan = planManifestMerge(base.metadata, listed, 'rewrite');
    return { manifestsBefore: before, manifestsAfter: plan.merges.length + plan.kept.length };
  }
  let report: ManifestRewriteReport = { manifestsBefore: before, manifestsAfter: before };
  const out = await commitSnapshot(deps, base.id, async (now, snapshotId, sequenceNumber) => {
    const parent = currentSnapshot(now.metadata);
    if (!parent) return undefined;
    const existing = await readManifestList(io, now.metadata, parent);
    const merged = await mergeManifests(io, now.metadata, existing, snapshotId, sequenceNumber, 'rewrite');
    report = { manifestsBefore: existing.length, manifestsAfter: merged.manifests.length };
    // Nothing merged and nothing dropped (a manifest left with no live entry): nothing to commit.
    if (merged.manifests.length === existing.length) return undefined;
    return {
      operation: 'replace',
      manifests: merged.manifests,
      written: merged.written,
      changes: { added: [], removed: [] },
      summary: {
        ...carriedSummary(now.metadata),
        'manifests-created': String(merged.created),
        'manifests-kept': String(merged.kept),
        'manifests-replaced': String(merged.replaced),
      },
    };
  });
  return out.snapshot ? { ...report, snapshotId: out.snapshot['snapshot-id'] } : report;
}
