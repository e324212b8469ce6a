/**
 * What the Lambda handlers run on (DESIGN §2 "Handlers"): the AWS adapters, built once per
 * container from the validated environment, outside the handler, so SDK clients, their keep-alive
 * connections, the table cache and the schema cache survive across invocations.
 *
 * With maintenance configured (`MAINTENANCE`, maintenance-env.ts) the committer's catalog also
 * sets up each new table's managed maintenance (Glue optimizers, S3 Tables), and `maintenance`
 * says what the maintenance function runs (`scheduledOptions`).
 *
 * The handlers only see {@link HandlerRuntime} (how to make the apps' deps), so tests run them on
 * local parts (dynalite, a local-disk warehouse) with no AWS adapter at all. Also the handlers'
 * small shared helpers: the Lambda context they read, error summaries for logs and EMF metric
 * groups.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { DynamoChangeVersions } from '../adapters/aws/dynamodb-change-versions.ts';
import { DynamoLedger } from '../adapters/aws/dynamodb-ledger.ts';
import { DynamoLock } from '../adapters/aws/dynamodb-lock.ts';
import { DynamoMaintenanceLog } from '../adapters/aws/dynamodb-maintenance-log.ts';
import { GlueCatalog } from '../adapters/aws/glue-catalog.ts';
import {
  createDynamoClient,
  createGlueClient,
  createS3TablesClient,
  GlueSchemaRegistry,
} from '../adapters/aws/glue-schema-registry.ts';
import { GlueTableOptimizers } from '../adapters/aws/glue-table-optimizers.ts';
import {
  createLambdaClient,
  LambdaFanout,
  LambdaMaintenanceRequests,
} from '../adapters/aws/lambda-invoke.ts';
import { createS3Client, S3ObjectStore } from '../adapters/aws/s3-object-store.ts';
import { S3TablesCatalog } from '../adapters/aws/s3tables-catalog.ts';
import { S3TablesTableMaintenance } from '../adapters/aws/s3tables-maintenance.ts';
import { CatalogAwareStore } from '../adapters/catalog-aware-store.ts';
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import { ObjectStoreDeadLetterStore } from '../adapters/object-dead-letter-store.ts';
import type { CompactionTrigger } from '../app/commit-compaction.ts';
import type { SlicePlanOptions } from '../app/commit-slices.ts';
import { type CommitterDeps, DEFAULT_MAX_PENDING_RECORDS } from '../app/committer.ts';
import type { IngestDeps } from '../app/ingest.ts';
import { withManagedSetUp } from '../app/maintain/managed-setup.ts';
import type { ScheduledDeps, ScheduledOptions } from '../app/maintain/scheduled.ts';
import { CachedSchemaRegistry } from '../engine/cached-registry.ts';
import { TableCache } from '../engine/table-cache.ts';
import { isFloeError } from '../errors.ts';
import type { Catalog } from '../ports/catalog.ts';
import type { Clock, Ids } from '../ports/clock.ts';
import type { CommitFanout } from '../ports/commit-fanout.ts';
import type { DeadLetterStore } from '../ports/dead-letters.ts';
import type { Ledger } from '../ports/ledger.ts';
import type { Lock } from '../ports/lock.ts';
import type { MaintenanceRequests } from '../ports/maintenance-requests.ts';
import {
  DEFAULT_EXPIRE_OLDER_THAN_MS,
  DEFAULT_RETAIN_LAST,
  type ManagedMaintenance,
} from '../ports/managed-maintenance.ts';
import type { ObjectStore } from '../ports/object-store.ts';
import type { SchemaRegistry } from '../ports/schema-registry.ts';
import type { HandlerSettings } from './env.ts';
import type { MaintenanceSettings } from './maintenance-env.ts';

/** What a handler needs: the apps' deps, made per invocation from long-lived parts. */
export interface HandlerRuntime {
  ingestDeps(): IngestDeps;
  /** `owner` holds the commit leases (the invocation's request id). */
  committerDeps(owner: string): CommitterDeps;
  /** Tables committed at once (default `DEFAULT_RUN_CONCURRENCY`, 4; the AWS runtime sets 8). */
  readonly commitConcurrency?: number;
  /** How often and how wide scheduled committer runs commit (default: one pass a minute, no fan-out). */
  readonly commitSchedule?: CommitScheduleSettings;
  /** Where a scheduled run hands slices of its tables (absent: it commits every table itself). */
  readonly fanout?: CommitFanout;
  /** Where the committer asks for the maintenance of tables whose files piled up (absent: never). */
  readonly maintenanceRequests?: MaintenanceRequests;
  /** When a committed table is due for that (commit-compaction.ts). */
  readonly compaction?: CompactionTrigger;
}

/** A committer's cadence and fan-out (issue 19): commit-loop.ts, commit-slices.ts. */
export interface CommitScheduleSettings extends SlicePlanOptions {
  /** The schedule's period (default 60 s): one scheduled run per period. */
  readonly scheduleMs?: number;
  /** Time between two commits of a table (default the period); below it, runs loop inside the period. */
  readonly intervalMs?: number;
}

/** What a scheduled maintenance run does (undefined: `MAINTENANCE` is off for this catalog). */
export interface MaintenanceSetup {
  readonly deps: ScheduledDeps;
  readonly options: Omit<ScheduledOptions, 'startDeadlineMs' | 'onTable'>;
}

export interface MaintenanceRuntime {
  /** `owner` holds the table leases (the invocation's request id). */
  maintenance(owner: string): MaintenanceSetup | undefined;
}

export interface AwsRuntime extends HandlerRuntime, MaintenanceRuntime {
  readonly settings: HandlerSettings;
  readonly store: ObjectStore;
  readonly catalog: Catalog;
  readonly ledger: Ledger;
  readonly lock: Lock;
  readonly deadLetters: DeadLetterStore;
  readonly tables: TableCache;
  readonly registry?: SchemaRegistry;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly commitConcurrency: number;
  /** The catalog service's own maintenance, when this stack configures it (committer + sweep). */
  readonly managed?: ManagedMaintenance;
  /** Releases the SDK clients' sockets (tests; a Lambda container just freezes). */
  destroy(): void;
}

/** The AWS adapters for `settings`: S3, Glue or S3 Tables, DynamoDB ledger + lock, Glue Schema Registry. */
export function awsRuntime(settings: HandlerSettings): AwsRuntime {
  const region = settings.region;
  const clock = systemClock;
  const ids = randomIds;
  const s3 = createS3Client({ region });
  const dynamo = createDynamoClient({ region });
  // On S3 Tables no delete is sent to table storage, which refuses it (catalog-aware-store.ts).
  const store = new CatalogAwareStore(new S3ObjectStore(s3), {
    catalogType: settings.catalog.type,
    deletablePrefixes: [settings.stagingUri, settings.deadLetterUri],
    onDeleteSkipped: (uri) =>
      storeLogger().debug('not deleted: S3 Tables removes unreferenced files itself', { uri }),
    onDeleteFailed: (uri, error) =>
      storeLogger().warn('delete failed; the file is left for cleanup', { uri, error: errorSummary(error) }),
  });
  const destroyers: (() => void)[] = [() => s3.destroy(), () => dynamo.destroy()];
  let catalog: Catalog;
  let managed: ManagedMaintenance | undefined;
  const m = settings.maintenance;
  const managedSettings = {
    retainLast: m.retainLast ?? DEFAULT_RETAIN_LAST,
    expireOlderThanMs: m.expireOlderThanMs ?? DEFAULT_EXPIRE_OLDER_THAN_MS,
    ...(m.orphansOlderThanMs === undefined ? {} : { orphansOlderThanMs: m.orphansOlderThanMs }),
    targetFileSizeBytes: m.targetFileSizeBytes ?? settings.config.targetFileSizeBytes,
  };
  if (settings.catalog.type === 'glue') {
    const glue = createGlueClient({ region });
    destroyers.push(() => glue.destroy());
    catalog = new GlueCatalog({ glue, store, ids, warehouse: settings.catalog.warehouseUri });
    if (m.glueOptimizers !== undefined)
      managed = new GlueTableOptimizers({ glue, ...m.glueOptimizers, settings: managedSettings });
  } else {
    const client = createS3TablesClient({ region });
    destroyers.push(() => client.destroy());
    const tableBucketARN = settings.catalog.tableBucketArn;
    catalog = new S3TablesCatalog({ client, store, ids, tableBucketARN });
    // S3 Tables always maintains its tables; a stack that says how (any MAINTENANCE) gets its values.
    if (m.configured)
      managed = new S3TablesTableMaintenance({ client, tableBucketARN, settings: managedSettings });
  }
  // The committer sets a new table's managed maintenance up as it creates the table.
  const committerCatalog =
    managed === undefined
      ? catalog
      : withManagedSetUp(catalog, managed, (r) => {
          if (r.error !== undefined)
            setUpLogger().warn('managed maintenance setup failed; the maintenance schedule retries it', {
              table: `${r.table.namespace}.${r.table.name}`,
              error: errorSummary(r.error),
            });
        });
  let registry: SchemaRegistry | undefined;
  if (settings.config.format === 'avro-gsr') {
    const glue = createGlueClient({ region });
    destroyers.push(() => glue.destroy());
    const inner = new GlueSchemaRegistry({
      glue,
      ...(settings.schemaRegistryName === undefined ? {} : { registryName: settings.schemaRegistryName }),
    });
    registry = new CachedSchemaRegistry(inner, { clock });
  }
  const ledger = new DynamoLedger(dynamo, { tableName: settings.ledgerTable, clock });
  // One Lambda client, made only where something may be invoked: slices go to the committer
  // itself (or COMMIT_FANOUT_FUNCTION), and tables whose files piled up to the maintenance
  // function (Floe's own compaction, where the stack names it).
  type LambdaClient = ReturnType<typeof createLambdaClient>;
  let lambda: LambdaClient | undefined;
  const lambdaClient = (): LambdaClient => {
    if (lambda === undefined) {
      const made = createLambdaClient({ region });
      destroyers.push(() => made.destroy());
      lambda = made;
    }
    return lambda;
  };
  const fanout: CommitFanout | undefined =
    settings.fanoutFunction !== undefined && settings.commitSchedule.maxSlices > 1
      ? new LambdaFanout(lambdaClient(), settings.fanoutFunction)
      : undefined;
  const c = settings.compaction;
  const compaction: Pick<HandlerRuntime, 'maintenanceRequests' | 'compaction'> =
    c === undefined
      ? {}
      : {
          maintenanceRequests: new LambdaMaintenanceRequests(
            lambdaClient(),
            c.functionName,
            settings.fanoutFunction ?? 'committer',
          ),
          compaction: {
            atFiles: c.atFiles,
            cooldownMs: c.cooldownMs,
            targetFileSizeBytes: m.targetFileSizeBytes ?? settings.config.targetFileSizeBytes,
          },
        };
  const lock = new DynamoLock(dynamo, { tableName: settings.ledgerTable, clock });
  const log = new DynamoMaintenanceLog(dynamo, { tableName: settings.ledgerTable, clock });
  const changeVersions = new DynamoChangeVersions(dynamo, { tableName: settings.ledgerTable });
  const deadLetters = new ObjectStoreDeadLetterStore(store, settings.deadLetterUri);
  const tables = new TableCache(catalog, clock, { refreshMs: settings.tableCacheRefreshMs });
  const withRegistry = registry === undefined ? {} : { registry };
  return {
    settings,
    store,
    catalog,
    ledger,
    lock,
    deadLetters,
    tables,
    ...withRegistry,
    clock,
    ids,
    commitConcurrency: settings.commitConcurrency,
    commitSchedule: settings.commitSchedule,
    ...(fanout === undefined ? {} : { fanout }),
    ...compaction,
    ...(managed === undefined ? {} : { managed }),
    ingestDeps: () => ({
      config: settings.config,
      catalog,
      store,
      ledger,
      deadLetters,
      clock,
      ids,
      tables,
      stagingUri: settings.stagingUri,
      ...withRegistry,
    }),
    committerDeps: (owner) => ({
      config: settings.config,
      catalog: committerCatalog,
      store,
      ledger,
      lock,
      deadLetters,
      clock,
      ids,
      owner,
      leaseMs: settings.leaseMs,
      changeVersions,
      // The pending records rewritten at once stay about what 4 commits of 500,000 take.
      maxPendingRecordsPerCommit: pendingPerCommit(settings.commitConcurrency),
      route: { tables, stagingUri: settings.stagingUri },
      ...withRegistry,
    }),
    maintenance: (owner) => {
      const options = scheduledOptions(settings.catalog.type, m, managed);
      if (options === undefined) return undefined;
      const deps: ScheduledDeps = {
        config: settings.config,
        catalog,
        store,
        clock,
        ids,
        ledger,
        lock,
        log,
        owner,
        leaseMs: settings.leaseMs,
      };
      return { deps, options };
    },
    destroy: () => {
      for (const d of destroyers) d();
    },
  };
}

/** Pending records one commit may rewrite when `concurrency` commits run at once. */
export function pendingPerCommit(concurrency: number): number {
  return Math.max(
    10_000,
    Math.min(DEFAULT_MAX_PENDING_RECORDS, Math.floor(2_000_000 / Math.max(1, concurrency))),
  );
}

let setUpLog: Logger | undefined;
/** Made on first use: importing a handler module creates no logger. */
const setUpLogger = (): Logger => (setUpLog ??= new Logger({ serviceName: 'floe-committer' }));
let storeLog: Logger | undefined;
/** The object store's log (the function's service name from the environment, else `floe`). */
const storeLogger = (): Logger =>
  (storeLog ??= new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'floe' }));

/**
 * What the maintenance function runs for a catalog and `MAINTENANCE`: Floe's own maintenance of
 * Glue tables (`floe`), or metrics plus the service's maintenance made to match (`glue` on Glue,
 * `floe` on S3 Tables, whose storage refuses Floe's deletes); nothing for `off`. Each visits the
 * namespaces of `MAINTENANCE_NAMESPACES` besides the config's.
 */
export function scheduledOptions(
  catalogType: 'glue' | 's3tables',
  m: MaintenanceSettings,
  managed: ManagedMaintenance | undefined,
): MaintenanceSetup['options'] | undefined {
  const thresholds = {
    ...(m.retainLast === undefined ? {} : { retainLast: m.retainLast }),
    ...(m.expireOlderThanMs === undefined ? {} : { expireOlderThanMs: m.expireOlderThanMs }),
    ...(m.orphansOlderThanMs === undefined ? {} : { orphansOlderThanMs: m.orphansOlderThanMs }),
    ...(m.targetFileSizeBytes === undefined ? {} : { targetFileSizeBytes: m.targetFileSizeBytes }),
    ...(m.maxBinBytes === undefined ? {} : { maxBinBytes: m.maxBinBytes }),
    ...(m.maxInputFileBytes === undefined ? {} : { maxInputFileBytes: m.maxInputFileBytes }),
  };
  // Every namespace the configuration reaches (MAINTENANCE_NAMESPACES), in every mode.
  const namespaces = m.namespaces === undefined ? {} : { namespaces: m.namespaces };
  if (catalogType === 'glue' && m.mode === 'floe') {
    const steps = {
      compact: true,
      rewriteManifests: true,
      expire: true,
      orphans: m.orphansOlderThanMs !== undefined,
    };
    return { mode: 'floe', maintenance: { steps, ...thresholds }, ...namespaces };
  }
  const none = { compact: false, rewriteManifests: false, expire: false, orphans: false };
  const metrics = { mode: 'metrics' as const, maintenance: { steps: none, ...thresholds }, ...namespaces };
  if (catalogType === 'glue' && m.mode === 'glue') return { ...metrics, ...(managed ? { managed } : {}) };
  if (catalogType === 's3tables' && m.mode === 'floe')
    return { ...metrics, managedStorage: true, ...(managed ? { managed } : {}) };
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Shared by the handlers

/** The parts of the Lambda context object the handlers read. */
export interface LambdaContext {
  readonly awsRequestId?: string;
  readonly functionName?: string;
  getRemainingTimeInMillis?(): number;
}

/**
 * The time a scheduled run keeps in reserve at the end of its invocation (the larger of a fraction
 * of what is left and a minimum), and the moment after which it starts no new table.
 */
export function runReserve(
  nowMs: number,
  remainingMs: number,
  reserveFraction: number,
  minReserveMs: number,
): { readonly reserveMs: number; readonly startDeadlineMs: number } {
  const reserveMs = Math.max(minReserveMs, remainingMs * reserveFraction);
  return { reserveMs, startDeadlineMs: nowMs + Math.max(0, remainingMs - reserveMs) };
}

/** A runtime factory, called per invocation; cache inside it (see `lazyRuntime`). */
export type GetRuntime = () => HandlerRuntime | Promise<HandlerRuntime>;

/** Builds the runtime on first use and keeps it; a failed build is retried on the next call. */
export function lazyRuntime<R = HandlerRuntime>(build: () => R | Promise<R>): () => Promise<R> {
  let runtime: Promise<R> | undefined;
  return () => {
    if (!runtime) {
      runtime = Promise.resolve()
        .then(build)
        .catch((e: unknown) => {
          runtime = undefined;
          throw e;
        });
    }
    return runtime;
  };
}

/** An error as a log attribute: name, message, and kind / retryable for FloeErrors. */
export function errorSummary(e: unknown): Record<string, unknown> {
  if (isFloeError(e)) return { name: e.name, kind: e.kind, retryable: e.retryable, message: e.message };
  if (e instanceof Error) return { name: e.name, message: e.message };
  return { message: String(e) };
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Metrics sharing one dimension set (none: the default dimensions only). */
export interface MetricGroup {
  readonly dimensions?: Readonly<Record<string, string>>;
  readonly metrics: readonly (readonly [name: string, unit: MetricUnitName, value: number])[];
}

export type MetricUnitName = 'Count' | 'Milliseconds' | 'Bytes';

/**
 * Where a handler's metrics go: Powertools `Metrics` in Lambda (EMF lines on stdout, which
 * CloudWatch turns into metrics); the local stack passes one that drops them (local/stack.ts).
 */
export interface MetricsSink {
  addDimension(name: string, value: string): void;
  addMetric(name: string, unit: MetricUnitName, value: number): void;
  publishStoredMetrics(): void;
}

/**
 * Publishes each group as its own EMF record. Powertools keeps one value per metric name and one
 * set of dimension values per flush, so metrics of different tables (or reasons) must never share
 * a flush: each group is added and flushed on its own.
 */
export function publishGroups(metrics: MetricsSink, groups: readonly MetricGroup[]): void {
  for (const g of groups) {
    if (g.metrics.length === 0) continue;
    for (const [name, value] of Object.entries(g.dimensions ?? {})) metrics.addDimension(name, value);
    for (const [name, unit, value] of g.metrics) metrics.addMetric(name, unit, value);
    metrics.publishStoredMetrics();
  }
}
