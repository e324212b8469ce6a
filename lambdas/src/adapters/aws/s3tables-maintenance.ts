/**
 * S3 Tables' own table maintenance for Floe's tables: compaction (`icebergCompaction`, target file
 * size) and snapshot management (`icebergSnapshotManagement`, snapshots kept and their age), both
 * enabled, from Floe's maintenance settings. Unreferenced-file removal is the table bucket's
 * (`AWS::S3Tables::TableBucket` `UnreferencedFileRemoval`, lib/storage.ts).
 *
 * - `setUp(table)` (the committer, right after it created the table): one
 *   `PutTableMaintenanceConfiguration` per type (a put replaces, so a retry is harmless).
 * - `ensure(table)` (the scheduled sweep): `GetTableMaintenanceConfiguration`, then a put for each
 *   type whose values differ from Floe's (or that is missing).
 *
 * S3 Tables takes target sizes of 64–512 MB and whole hours of snapshot age: the target is clamped
 * into that range and the age rounded up.
 */
import {
  GetTableMaintenanceConfigurationCommand,
  type GetTableMaintenanceConfigurationCommandOutput,
  PutTableMaintenanceConfigurationCommand,
  type S3TablesClient,
  type TableMaintenanceConfigurationValue,
  type TableMaintenanceType,
} from '@aws-sdk/client-s3tables';
import type { TableIdentifier } from '../../ports/catalog.ts';
import {
  coveredBy,
  type ManagedMaintenance,
  type ManagedMaintenanceSettings,
  type ManagedOutcome,
} from '../../ports/managed-maintenance.ts';
import { translateS3TablesError } from './s3tables-catalog.ts';

export interface S3TablesMaintenanceOptions {
  readonly client: S3TablesClient;
  readonly tableBucketARN: string;
  readonly settings: ManagedMaintenanceSettings;
}

const MIB = 1024 * 1024;
const HOUR_MS = 3_600_000;
/** The target file sizes S3 Tables accepts (MB). */
export const S3TABLES_MIN_TARGET_MB = 64;
export const S3TABLES_MAX_TARGET_MB = 512;

export class S3TablesTableMaintenance implements ManagedMaintenance {
  private readonly client: S3TablesClient;
  private readonly bucket: string;
  private readonly desired: ReadonlyMap<TableMaintenanceType, TableMaintenanceConfigurationValue>;

  constructor(options: S3TablesMaintenanceOptions) {
    this.client = options.client;
    this.bucket = options.tableBucketARN;
    this.desired = tableMaintenanceValues(options.settings);
  }

  async setUp(id: TableIdentifier): Promise<ManagedOutcome> {
    for (const type of this.desired.keys()) await this.put(id, type);
    return { created: [...this.desired.keys()], updated: [] };
  }

  async ensure(id: TableIdentifier): Promise<ManagedOutcome> {
    let res: GetTableMaintenanceConfigurationCommandOutput;
    try {
      res = await this.client.send(
        new GetTableMaintenanceConfigurationCommand({
          tableBucketARN: this.bucket,
          namespace: id.namespace,
          name: id.name,
        }),
      );
    } catch (e) {
      throw translateS3TablesError(e, 'GetTableMaintenanceConfiguration', `table ${id.namespace}.${id.name}`);
    }
    const have = res.configuration ?? {};
    const created: string[] = [];
    const updated: string[] = [];
    for (const [type, want] of this.desired) {
      if (coveredBy(want, have[type])) continue;
      await this.put(id, type);
      (have[type] === undefined ? created : updated).push(type);
    }
    return { created, updated };
  }

  private async put(id: TableIdentifier, type: TableMaintenanceType): Promise<void> {
    try {
      await this.client.send(
        new PutTableMaintenanceConfigurationCommand({
          tableBucketARN: this.bucket,
          namespace: id.namespace,
          name: id.name,
          type,
          value: this.desired.get(type)!,
        }),
      );
    } catch (e) {
      throw translateS3TablesError(e, 'PutTableMaintenanceConfiguration', `table ${id.namespace}.${id.name}`);
    }
  }
}

/** Floe's table maintenance values by type. */
export function tableMaintenanceValues(
  s: ManagedMaintenanceSettings,
): Map<TableMaintenanceType, TableMaintenanceConfigurationValue> {
  const targetMb = Math.min(
    S3TABLES_MAX_TARGET_MB,
    Math.max(S3TABLES_MIN_TARGET_MB, Math.round(s.targetFileSizeBytes / MIB)),
  );
  return new Map<TableMaintenanceType, TableMaintenanceConfigurationValue>([
    [
      'icebergCompaction',
      { status: 'enabled', settings: { icebergCompaction: { targetFileSizeMB: targetMb } } },
    ],
    [
      'icebergSnapshotManagement',
      {
        status: 'enabled',
        settings: {
          icebergSnapshotManagement: {
            minSnapshotsToKeep: s.retainLast,
            maxSnapshotAgeHours: Math.max(1, Math.ceil(s.expireOlderThanMs / HOUR_MS)),
          },
        },
      },
    ],
  ]);
}
