/**
 * The Glue Data Catalog's managed table optimizers for Floe's tables (`-c maintenance=glue`):
 * compaction (bin-pack), snapshot retention and orphan file deletion, run by Glue with the role
 * the stack creates for them.
 *
 * - `setUp(table)` (the committer, right after it created the table): `CreateTableOptimizer` for
 *   each type; an `AlreadyExistsException` (a retried creation) becomes `UpdateTableOptimizer`.
 * - `ensure(table)` (the scheduled sweep): one `BatchGetTableOptimizer` for the three types; a type
 *   it does not return is created, one whose configuration differs from Floe's settings (in a value
 *   Floe sets; Glue's own defaults are left alone) is updated.
 *
 * Values: retention keeps `numberOfSnapshotsToRetain` = retainLast and
 * `snapshotRetentionPeriodInDays` = the expiry age in whole days (rounded up), deleting expired
 * files; orphan deletion keeps files younger than `orphanFileRetentionPeriodInDays` (rounded up)
 * under the table location, and is not set up at all without a value. `CatalogId` (the account) is
 * required by these calls.
 */
import {
  BatchGetTableOptimizerCommand,
  type BatchGetTableOptimizerResponse,
  CreateTableOptimizerCommand,
  type GlueClient,
  type TableOptimizerConfiguration,
  type TableOptimizerType,
  UpdateTableOptimizerCommand,
} from '@aws-sdk/client-glue';
import { ErrorKind, FloeError } from '../../errors.ts';
import { type TableIdentifier, tableIdToString } from '../../ports/catalog.ts';
import {
  coveredBy,
  type ManagedMaintenance,
  type ManagedMaintenanceSettings,
  type ManagedOutcome,
} from '../../ports/managed-maintenance.ts';
import { isRetryable, messageOf, nameOf } from './sdk-errors.ts';

export interface GlueTableOptimizersOptions {
  readonly glue: GlueClient;
  /** The account id of the Data Catalog. */
  readonly catalogId: string;
  /** The role Glue assumes to run the optimizers (trusts glue.amazonaws.com). */
  readonly roleArn: string;
  readonly settings: ManagedMaintenanceSettings;
}

const DAY_MS = 86_400_000;

export class GlueTableOptimizers implements ManagedMaintenance {
  private readonly glue: GlueClient;
  private readonly catalogId: string;
  private readonly desired: ReadonlyMap<TableOptimizerType, TableOptimizerConfiguration>;

  constructor(options: GlueTableOptimizersOptions) {
    this.glue = options.glue;
    this.catalogId = options.catalogId;
    this.desired = optimizerConfigurations(options.roleArn, options.settings);
  }

  async setUp(id: TableIdentifier): Promise<ManagedOutcome> {
    const created: string[] = [];
    const updated: string[] = [];
    for (const type of this.desired.keys()) {
      if (await this.create(id, type)) created.push(type);
      else updated.push(type);
    }
    return { created, updated };
  }

  async ensure(id: TableIdentifier): Promise<ManagedOutcome> {
    const have = await this.current(id);
    const created: string[] = [];
    const updated: string[] = [];
    for (const [type, want] of this.desired) {
      const config = have.get(type);
      if (config === undefined) {
        if (await this.create(id, type)) created.push(type);
        else updated.push(type);
      } else if (!coveredBy(want, config)) {
        await this.update(id, type);
        updated.push(type);
      }
    }
    return { created, updated };
  }

  /** The configurations the table has now, by type (absent: no optimizer of that type). */
  private async current(id: TableIdentifier): Promise<Map<TableOptimizerType, TableOptimizerConfiguration>> {
    let res: BatchGetTableOptimizerResponse;
    try {
      res = await this.glue.send(
        new BatchGetTableOptimizerCommand({
          Entries: [...this.desired.keys()].map((type) => ({
            catalogId: this.catalogId,
            databaseName: id.namespace,
            tableName: id.name,
            type,
          })),
        }),
      );
    } catch (e) {
      throw glueOptimizerError(e, 'BatchGetTableOptimizer', id);
    }
    const out = new Map<TableOptimizerType, TableOptimizerConfiguration>();
    for (const o of res.TableOptimizers ?? []) {
      const t = o.tableOptimizer;
      if (t?.type !== undefined && t.configuration !== undefined) out.set(t.type, t.configuration);
    }
    return out;
  }

  /** True when created; false when it existed already (then it was updated). */
  private async create(id: TableIdentifier, type: TableOptimizerType): Promise<boolean> {
    try {
      await this.glue.send(
        new CreateTableOptimizerCommand({
          CatalogId: this.catalogId,
          DatabaseName: id.namespace,
          TableName: id.name,
          Type: type,
          TableOptimizerConfiguration: this.desired.get(type)!,
        }),
      );
      return true;
    } catch (e) {
      if (nameOf(e) !== 'AlreadyExistsException') throw glueOptimizerError(e, 'CreateTableOptimizer', id);
    }
    await this.update(id, type);
    return false;
  }

  private async update(id: TableIdentifier, type: TableOptimizerType): Promise<void> {
    try {
      await this.glue.send(
        new UpdateTableOptimizerCommand({
          CatalogId: this.catalogId,
          DatabaseName: id.namespace,
          TableName: id.name,
          Type: type,
          TableOptimizerConfiguration: this.desired.get(type)!,
        }),
      );
    } catch (e) {
      throw glueOptimizerError(e, 'UpdateTableOptimizer', id);
    }
  }
}

/** Floe's optimizer configurations by type, in the order they are created. */
export function optimizerConfigurations(
  roleArn: string,
  s: ManagedMaintenanceSettings,
): Map<TableOptimizerType, TableOptimizerConfiguration> {
  const base = { roleArn, enabled: true };
  const out = new Map<TableOptimizerType, TableOptimizerConfiguration>([
    ['compaction', { ...base, compactionConfiguration: { icebergConfiguration: { strategy: 'binpack' } } }],
    [
      'retention',
      {
        ...base,
        retentionConfiguration: {
          icebergConfiguration: {
            snapshotRetentionPeriodInDays: wholeDays(s.expireOlderThanMs),
            numberOfSnapshotsToRetain: s.retainLast,
            cleanExpiredFiles: true,
          },
        },
      },
    ],
  ]);
  if (s.orphansOlderThanMs !== undefined) {
    out.set('orphan_file_deletion', {
      ...base,
      orphanFileDeletionConfiguration: {
        icebergConfiguration: { orphanFileRetentionPeriodInDays: wholeDays(s.orphansOlderThanMs) },
      },
    });
  }
  return out;
}

function wholeDays(ms: number): number {
  return Math.max(1, Math.ceil(ms / DAY_MS));
}

function glueOptimizerError(e: unknown, op: string, id: TableIdentifier): FloeError {
  if (e instanceof FloeError) return e;
  const table = tableIdToString(id);
  const name = nameOf(e) || 'Error';
  const context = { operation: op, table, awsError: name };
  if (name === 'EntityNotFoundException') {
    return new FloeError(ErrorKind.NotFound, `Glue ${op}: table ${table} not found (${messageOf(e)})`, {
      cause: e,
      context,
    });
  }
  return new FloeError(
    ErrorKind.Unexpected,
    `Glue ${op} failed for table ${table}: ${name}: ${messageOf(e)}`,
    {
      cause: e,
      context,
      retryable: isRetryable(e),
    },
  );
}
