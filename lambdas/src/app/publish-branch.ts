/**
 * Publishing a branch (write-audit-publish): `main` fast-forwards to the branch's head when main's
 * head is in the branch's history (or main has none), in one commit that moves main's ref and
 * gives main the branch's streaming watermark (`mainWatermark`); otherwise main moved since the
 * branch left it and publishing would drop main's newer snapshots, which is refused with the
 * snapshots that are in the way.
 */
import type { CommitDeps } from '../engine/append.ts';
import {
  encodeWatermark,
  furthest,
  loadWatermark,
  type ShardMark,
  WATERMARK_KEY,
} from '../engine/watermark.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import type { TableUpdate } from '../iceberg/metadata/index.ts';
import { MAIN_BRANCH } from '../iceberg/snapshot.ts';
import { snapshotAncestors, type TableMetadata } from '../iceberg/table-metadata.ts';
import { type TableIdentifier, tableIdToString } from '../ports/catalog.ts';
import type { ObjectStore } from '../ports/object-store.ts';
import { commitOptimistically } from './maintain/optimistic.ts';

export interface PublishResult {
  readonly table: string;
  readonly branch: string;
  /** main's head before (undefined: main had no snapshot). */
  readonly from?: bigint;
  readonly to: bigint;
  /** `already`: main was at the branch's head. */
  readonly status: 'published' | 'already';
}

export async function publishBranch(
  deps: CommitDeps,
  id: TableIdentifier,
  branch: string,
  /**
   * The audits (write-audit-publish): what the branch's new rows break, one message per failed
   * check; publishing goes on only when there is none. They run on the snapshot the plan names.
   */
  audit?: (plan: PublishResult) => Promise<readonly string[]>,
): Promise<PublishResult> {
  const name = tableIdToString(id);
  if (branch === MAIN_BRANCH)
    throw new FloeError(ErrorKind.ConfigInvalid, `table ${name}: publish a branch other than main onto main`);
  const planned = fastForward((await deps.catalog.loadTable(id)).metadata, name, branch);
  if (planned.status === 'already') return planned;
  const failed = audit ? await audit(planned) : [];
  if (failed.length > 0) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `table ${name}: branch '${branch}' not published, its audits failed:\n  ${failed.join('\n  ')}`,
      { context: { table: name, branch } },
    );
  }
  let outcome: PublishResult = planned;
  await commitOptimistically(deps, id, async (base) => {
    const plan = fastForward(base.metadata, name, branch);
    if (plan.to !== planned.to) {
      // What was audited is no longer what would be published.
      throw new FloeError(
        ErrorKind.ConfigInvalid,
        `table ${name}: branch '${branch}' moved while it was audited (snapshot ${planned.to} → ${plan.to}); publish again`,
        { context: { table: name, branch } },
      );
    }
    outcome = plan;
    if (plan.status === 'already') return undefined;
    return {
      updates: [
        { action: 'set-snapshot-ref', 'ref-name': MAIN_BRANCH, type: 'branch', 'snapshot-id': plan.to },
        ...(await mainWatermark(deps.store, base.metadata, branch)),
      ],
      written: [],
      result: plan,
    };
  });
  return outcome;
}

/**
 * The streaming committer's watermark for main once main holds the branch's commits: per shard,
 * the further of main's and the branch's (engine/watermark.ts), so a committer that commits this
 * table to main later takes up exactly where the branch left off. Main's own may be unreadable (a
 * legacy side file gone): the branch's was read from main's when it started, and holds it.
 */
async function mainWatermark(store: ObjectStore, m: TableMetadata, branch: string): Promise<TableUpdate[]> {
  const ofBranch = await loadWatermark(store, m, branch);
  if (ofBranch.size === 0) return [];
  const ofMain = await loadWatermark(store, m).catch(() => new Map<string, ShardMark>());
  const text = encodeWatermark(furthest(ofMain, ofBranch));
  if (m.properties[WATERMARK_KEY] === text) return [];
  return [{ action: 'set-properties', updates: { [WATERMARK_KEY]: text } }];
}

/** What publishing `branch` of `m` would do; throws when main cannot fast-forward to it. */
export function fastForward(m: TableMetadata, table: string, branch: string): PublishResult {
  const ref = m.refs[branch];
  if (ref === undefined) {
    throw new FloeError(
      ErrorKind.NotFound,
      `table ${table} has no branch '${branch}' (its refs: ${Object.keys(m.refs).sort().join(', ') || 'none'})`,
      { context: { table, branch } },
    );
  }
  if (ref.type !== 'branch')
    throw new FloeError(ErrorKind.ConfigInvalid, `table ${table}: '${branch}' is a tag, not a branch`, {
      context: { table, branch },
    });
  const to = ref['snapshot-id'];
  const from = m['current-snapshot-id']; // main's head (the metadata reader keeps the two equal)
  const base = { table, branch, to, ...(from === undefined ? {} : { from }) };
  if (from === to) return { ...base, status: 'already' };
  const history = snapshotAncestors(m, to).map((s) => s['snapshot-id']);
  if (from !== undefined && !history.includes(from)) {
    const mainOnly = snapshotAncestors(m, from)
      .map((s) => s['snapshot-id'])
      .filter((s) => !history.includes(s));
    // Not a conflict to retry: only a merge could publish this, and Floe publishes by fast-forward.
    throw new FloeError(
      ErrorKind.FeatureUnsupported,
      `table ${table}: main cannot fast-forward to branch '${branch}': main moved since the branch left it (main's snapshot(s) ${mainOnly.slice(0, 5).join(', ')}${mainOnly.length > 5 ? ' …' : ''} are not in the branch); load those rows into the branch too, or publish from a branch made after them`,
      { context: { table, branch } },
    );
  }
  return { ...base, status: 'published' };
}
