/**
 * The maintenance variables of the committer's and the maintenance function's environments
 * (read back by `lambdas/src/handlers/maintenance-env.ts`), from the validated settings. Pure
 * (no constructs), so `lib/config.ts` can count their bytes against Lambda's 4 KB before anything
 * is built. Each function gets only what it uses:
 *
 * | catalog × maintenance | committer (at table creation) | maintenance function |
 * |---|---|---|
 * | glue × floe | `MAINTENANCE` | + Floe's thresholds |
 * | glue × glue | optimizer role, account, retention and orphan values | the same (its sweep) |
 * | glue × off | `MAINTENANCE` | — |
 * | s3tables × floe / off | S3 Tables' values (snapshots, target) | the same (its sweep, floe only) |
 *
 * The maintenance function also gets `MAINTENANCE_NAMESPACES`: the namespaces it visits, exactly
 * the ones IAM grants (lib/namespaces.ts `namespacePatterns`: names and `prefix*` patterns).
 */
import type { CatalogType, MaintenanceContextSettings } from './config.ts';

const DAY_MS = 86_400_000;

export interface MaintenanceEnvRefs {
  /** `glue` only: the role Glue's optimizers assume. */
  readonly optimizerRoleArn?: string;
  /** `glue` only: the account (Glue's CatalogId). */
  readonly account?: string;
  /** The maintenance function: the namespaces it visits (`namespacePatterns` of the granted scope). */
  readonly namespaces?: readonly string[];
}

export function maintenanceEnvironment(
  m: MaintenanceContextSettings,
  catalogType: CatalogType,
  forFunction: 'committer' | 'maintenance',
  refs: MaintenanceEnvRefs = {},
): Record<string, string> {
  const env = settingsEnvironment(m, catalogType, forFunction, refs);
  if (forFunction === 'maintenance' && refs.namespaces !== undefined)
    env.MAINTENANCE_NAMESPACES = refs.namespaces.join(',');
  return env;
}

function settingsEnvironment(
  m: MaintenanceContextSettings,
  catalogType: CatalogType,
  forFunction: 'committer' | 'maintenance',
  refs: MaintenanceEnvRefs,
): Record<string, string> {
  const env: Record<string, string> = { MAINTENANCE: m.mode };
  const retention = () => {
    if (m.retainLast !== undefined) env.MAINTENANCE_RETAIN_LAST = String(m.retainLast);
    if (m.expireOlderThanMs !== undefined) env.MAINTENANCE_EXPIRE_OLDER_THAN_MS = String(m.expireOlderThanMs);
  };
  if (catalogType === 's3tables') {
    retention();
    if (m.targetFileSizeBytes !== undefined)
      env.MAINTENANCE_TARGET_FILE_SIZE_BYTES = String(m.targetFileSizeBytes);
    return env;
  }
  if (m.mode === 'glue') {
    env.GLUE_OPTIMIZER_ROLE_ARN = refs.optimizerRoleArn ?? '';
    env.GLUE_CATALOG_ID = refs.account ?? '';
    retention();
    env.MAINTENANCE_ORPHANS_OLDER_THAN_MS =
      m.unreferencedDays === undefined ? 'never' : String(m.unreferencedDays * DAY_MS);
    return env;
  }
  if (m.mode === 'floe' && forFunction === 'maintenance') {
    retention();
    env.MAINTENANCE_ORPHANS_OLDER_THAN_MS = String(m.orphansOlderThanMs);
    if (m.targetFileSizeBytes !== undefined)
      env.MAINTENANCE_TARGET_FILE_SIZE_BYTES = String(m.targetFileSizeBytes);
  }
  return env;
}

/**
 * Bytes the maintenance variables take at most in either function that carries FLOE_CONFIG with
 * them (tokens counted at their longest).
 */
export function maintenanceEnvBytes(
  m: MaintenanceContextSettings,
  catalogType: CatalogType,
  namespaces: readonly string[] = [],
): number {
  const refs = {
    optimizerRoleArn: `arn:aws-us-gov:iam::123456789012:role/${'x'.repeat(64)}`,
    account: '123456789012',
    namespaces,
  };
  const bytes = (env: Record<string, string>) =>
    Object.entries(env).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  return Math.max(
    bytes(maintenanceEnvironment(m, catalogType, 'committer', refs)),
    m.deployFunction ? bytes(maintenanceEnvironment(m, catalogType, 'maintenance', refs)) : 0,
  );
}
