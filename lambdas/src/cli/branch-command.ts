/**
 * `floe branch publish TABLE [--from BRANCH]`: write-audit-publish's last step on a local
 * warehouse. `floe load --branch BRANCH` commits to a branch that readers of `main` (Athena, Spark,
 * `floe query`) do not see; `floe query --snapshot TABLE=BRANCH` reads it; this fast-forwards
 * `main` to it, or explains why it cannot.
 */
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import { type PublishResult, publishBranch } from '../app/publish-branch.ts';
import { auditsFor } from '../config.ts';
import type { TableIdentifier } from '../ports/catalog.ts';
import { readConfigFile } from './config-file.ts';
import { branchName } from './load-command.ts';
import { warehouseSession } from './query-command.ts';
import { requireWarehouse, resolveTable, type Warehouse } from './warehouse.ts';

export interface PublishFlags {
  readonly warehouse?: string;
  /** floe.config.json: its `audits` are checked before publishing. */
  readonly config?: string;
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
  const config = await readConfigFile(flags.config);
  const audits = auditsFor(config, id.name);
  const r = await publishBranch(
    { catalog: wh.catalog, store: wh.store, clock: systemClock, ids: randomIds },
    id,
    branch,
    audits.length === 0 ? undefined : (plan) => runAudits(wh, id, plan, audits),
  );
  out(
    r.status === 'already'
      ? `${r.table}: main is already at branch '${r.branch}' (snapshot ${r.to}); nothing to publish`
      : `${r.table}: main fast-forwarded to branch '${r.branch}': snapshot ${r.from ?? 'none'} → ${r.to}`,
  );
}

/**
 * Each audit over the rows the branch adds (its snapshot's rows less main's, as multisets), in
 * DuckDB: a predicate that is false or null for any of them fails, with how many and one example.
 */
async function runAudits(
  wh: Warehouse,
  id: TableIdentifier,
  plan: PublishResult,
  audits: readonly string[],
): Promise<string[]> {
  const t = `${id.namespace}.${id.name}`;
  const added =
    plan.from === undefined
      ? `SELECT * FROM ${t} FOR VERSION AS OF ${plan.to}`
      : `SELECT * FROM ${t} FOR VERSION AS OF ${plan.to} EXCEPT ALL SELECT * FROM ${t} FOR VERSION AS OF ${plan.from}`;
  const session = await warehouseSession(wh, [id]);
  const failed: string[] = [];
  try {
    for (const predicate of audits) {
      const rows = await session.rows(
        `SELECT count(*) OVER () AS floe_failed, to_json(added)::VARCHAR AS floe_row FROM (${added}) AS added WHERE (${predicate}) IS NOT TRUE LIMIT 1`,
      );
      if (rows.length > 0)
        failed.push(
          `'${predicate}' fails for ${String(rows[0]!.floe_failed)} new row(s), e.g. ${String(rows[0]!.floe_row)}`,
        );
    }
  } finally {
    session.close();
  }
  return failed;
}
