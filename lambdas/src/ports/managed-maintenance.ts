/**
 * A catalog service's own table maintenance, set up per table from Floe's maintenance settings:
 * the Glue Data Catalog's table optimizers (`-c maintenance=glue`) or S3 Tables' table maintenance
 * (always, on S3 Tables). Floe creates its tables at run time, so the committer sets it up when it
 * creates a table (`setUp`), and the scheduled maintenance function makes every table match
 * (`ensure`: tables created before, whose setup failed, or whose settings changed since).
 *
 * Pure: the settings and the port; the adapters (`adapters/aws/glue-table-optimizers.ts`,
 * `adapters/aws/s3tables-maintenance.ts`) speak to the services.
 */
import type { TableIdentifier } from './catalog.ts';

export interface ManagedMaintenanceSettings {
  /** Newest snapshots every table keeps (Glue `numberOfSnapshotsToRetain`, S3 Tables `minSnapshotsToKeep`). */
  readonly retainLast: number;
  /** Older snapshots expire (ms; Glue counts whole days, S3 Tables whole hours: rounded up). */
  readonly expireOlderThanMs: number;
  /**
   * Unreferenced files younger than this are never deleted (Glue orphan file deletion, whole days
   * rounded up); undefined: no orphan file deletion. Must outlast any wait of staged work (the
   * service cannot see Floe's ledger), which is why the CDK app never sets it below the staging
   * expiry.
   */
  readonly orphansOlderThanMs?: number;
  /** Compaction's target file size (S3 Tables; Glue's compaction reads the table's own property). */
  readonly targetFileSizeBytes: number;
}

/** Java's, Glue's and S3 Tables' defaults. */
export const DEFAULT_RETAIN_LAST = 1;
export const DEFAULT_EXPIRE_OLDER_THAN_MS = 5 * 86_400_000;

/** What one call changed, by maintenance kind (`compaction`, `retention`, `icebergCompaction` …). */
export interface ManagedOutcome {
  readonly created: readonly string[];
  readonly updated: readonly string[];
}

export interface ManagedMaintenance {
  /** For a table just created: configures every kind without reading first. */
  setUp(id: TableIdentifier): Promise<ManagedOutcome>;
  /** Reads the table's configuration and creates or updates what differs (idempotent). */
  ensure(id: TableIdentifier): Promise<ManagedOutcome>;
}

/** True when every value `want` sets is the same in `have` (the service adds defaults of its own). */
export function coveredBy(want: unknown, have: unknown): boolean {
  if (want === undefined) return true;
  if (want === null || typeof want !== 'object') return want === have;
  if (have === null || typeof have !== 'object') return false;
  return Object.entries(want as Record<string, unknown>).every(([k, v]) =>
    coveredBy(v, (have as Record<string, unknown>)[k]),
  );
}
