/**
 * `floe branch publish TABLE [--from BRANCH]`: write-audit-publish's last step on a local
 * warehouse. `floe load --branch BRANCH` commits to a branch that readers of `main` (Athena, Spark,
 * `floe query`) do not see; `floe query --snapshot TABLE=BRANCH` reads it; this fast-forwards
 * `main` to it, or explains why it cannot.
 */
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import { publishBranch } from '../app/publish-branch.ts';
import { branchName } from './load-command.ts';
import { requireWarehouse, resolveTable } from './warehouse.ts';

export interface PublishFlags {
  readonly warehouse?: string;
  /** The branch to publish (default `audit`, what `floe load --branch` is most often given). */
  readonly from?: string;
}

export async function publishCommand(
  table: string,
  flags: PublishFlags,
  out: (s: string) => void,
): Promise<void> {
  const wh = await requireWarehouse(flags.warehouse);
  const id = await resolveTable(wh, table);
  const branch = branchName(flags.from ?? 'audit');
  const r = await publishBranch(
    { catalog: wh.catalog, store: wh.store, clock: systemClock, ids: randomIds },
    id,
    branch,
  );
  out(
    r.status === 'already'
      ? `${r.table}: main is already at branch '${r.branch}' (snapshot ${r.to}); nothing to publish`
      : `${r.table}: main fast-forwarded to branch '${r.branch}': snapshot ${r.from ?? 'none'} → ${r.to}`,
  );
}
