/**
 * The embedded local stack (DESIGN §1, §7): kinesalite and dynalite in-process, a local-disk
 * warehouse with the file catalog, a local schema registry, the event-source poller invoking the
 * ingest handler with genuine Lambda Kinesis events, and the committer on an interval: the same
 * apps that run in Lambda, on one laptop, without Docker.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createLedgerTable, DynamoLedger } from '../adapters/aws/dynamodb-ledger.ts';
import { DynamoLock } from '../adapters/aws/dynamodb-lock.ts';
import { createStream } from '../adapters/aws/kinesis-producer.ts';
import {
  type DynamoEmulator,
  type KinesisEmulator,
  startDynalite,
  startKinesalite,
} from '../adapters/local/emulators.ts';
import { FileCatalog } from '../adapters/local/file-catalog.ts';
import { KinesisPoller, type KinesisPollerOptions } from '../adapters/local/kinesis-poller.ts';
import { fileUri, LocalObjectStore } from '../adapters/local/local-object-store.ts';
import { LocalSchemaRegistry } from '../adapters/local/local-schema-registry.ts';
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import { ObjectStoreDeadLetterStore } from '../adapters/object-dead-letter-store.ts';
import { type CommitterDeps, type CommitterRun, runCommitter } from '../app/committer.ts';
import type { IngestDeps } from '../app/ingest.ts';
import type { FloeConfig } from '../config.ts';
import { CachedSchemaRegistry } from '../engine/cached-registry.ts';
import { TableCache } from '../engine/table-cache.ts';
import { type CommitterHandler, makeCommitterHandler } from '../handlers/committer.ts';
import { METRICS_NAMESPACE, makeIngestHandler } from '../handlers/ingest.ts';
import type { CommitScheduleSettings, MetricsSink } from '../handlers/runtime.ts';
import type { Clock, Ids } from '../ports/clock.ts';
import type { KinesisBatchResponse, KinesisEvent } from '../records/kinesis-event.ts';

export interface LocalStackOptions {
  /** Warehouse folder (tables, dead letters, staging, registry). */
  readonly warehouseDir: string;
  readonly config: FloeConfig;
  readonly streamName?: string;
  readonly shards?: number;
  readonly clock?: Clock;
  readonly ids?: Ids;
  /** Fixed ports (`floe local up`); default: any free port. */
  readonly kinesisPort?: number;
  readonly dynamoPort?: number;
  /**
   * Address the warehouse by this URL prefix instead of `file://` (files still live in
   * `warehouseDir`): for readers that only take HTTP, with the folder served at that prefix.
   */
  readonly warehouseUrl?: string;
}

export type IngestHandler = (event: KinesisEvent) => Promise<KinesisBatchResponse>;

/** The local handlers' metrics when not debugging: dropped. */
const noMetrics: MetricsSink = {
  addDimension: () => undefined,
  addMetric: () => undefined,
  publishStoredMetrics: () => undefined,
};

/**
 * A local handler's logger and metrics: structured logs to stderr at `$FLOE_LOG_LEVEL` (default
 * silent). Powertools writes EMF straight to stdout whatever its options say, so unless the level
 * is DEBUG the metrics go to a sink that drops them: the demo's and `floe local up`'s own lines
 * stay readable.
 */
function handlerTools(serviceName: string): { logger: Logger; metrics: MetricsSink } {
  const level = (process.env.FLOE_LOG_LEVEL ?? 'SILENT').toUpperCase();
  return {
    logger: new Logger({ serviceName, logLevel: level as 'SILENT' }),
    metrics: level === 'DEBUG' ? new Metrics({ namespace: METRICS_NAMESPACE, serviceName }) : noMetrics,
  };
}

export class LocalStack {
  readonly store: LocalObjectStore;
  readonly warehouseUri: string;
  readonly catalog: FileCatalog;
  readonly ledger: DynamoLedger;
  readonly lock: DynamoLock;
  readonly deadLetters: ObjectStoreDeadLetterStore;
  readonly registry: LocalSchemaRegistry;
  readonly tables: TableCache;
  readonly streamName: string;
  private poller: KinesisPoller | undefined;

  private constructor(
    readonly options: LocalStackOptions,
    readonly kinesis: KinesisEmulator,
    readonly dynamo: DynamoEmulator,
    readonly ledgerTable: string,
  ) {
    const dir = resolve(options.warehouseDir);
    mkdirSync(join(dir, '_floe'), { recursive: true });
    const url = options.warehouseUrl?.replace(/\/+$/, '');
    this.store = new LocalObjectStore(url ? [{ prefix: url, dir }] : []);
    this.warehouseUri = url ?? fileUri(dir);
    this.catalog = new FileCatalog(this.store, this.warehouseUri);
    const clock = options.clock ?? systemClock;
    this.ledger = new DynamoLedger(dynamo.client, { tableName: ledgerTable, clock });
    this.lock = new DynamoLock(dynamo.client, { tableName: ledgerTable, clock });
    this.deadLetters = new ObjectStoreDeadLetterStore(this.store, `${this.warehouseUri}/_floe/dead-letters`);
    this.registry = new LocalSchemaRegistry({
      ids: options.ids ?? randomIds,
      file: join(dir, '_floe', 'registry.json'),
    });
    this.tables = new TableCache(this.catalog, clock, { refreshMs: 1000 });
    this.streamName = options.streamName ?? 'floe-events';
  }

  static async start(options: LocalStackOptions): Promise<LocalStack> {
    const kinesis = await startKinesalite(
      options.kinesisPort === undefined ? {} : { port: options.kinesisPort },
    );
    const dynamo = await startDynalite(options.dynamoPort === undefined ? {} : { port: options.dynamoPort });
    try {
      const ledgerTable = 'floe-ledger';
      await createLedgerTable(dynamo.client, ledgerTable);
      const stack = new LocalStack(options, kinesis, dynamo, ledgerTable);
      await createStream(kinesis.client, stack.streamName, options.shards ?? 2);
      return stack;
    } catch (e) {
      await kinesis.close();
      await dynamo.close();
      throw e;
    }
  }

  get clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  get ids(): Ids {
    return this.options.ids ?? randomIds;
  }

  ingestDeps(over: Partial<IngestDeps> = {}): IngestDeps {
    return {
      config: this.options.config,
      catalog: this.catalog,
      store: this.store,
      ledger: this.ledger,
      deadLetters: this.deadLetters,
      clock: this.clock,
      ids: this.ids,
      tables: this.tables,
      registry: new CachedSchemaRegistry(this.registry),
      stagingUri: `${this.warehouseUri}/_floe/staging`,
      ...over,
    };
  }

  committerDeps(over: Partial<CommitterDeps> = {}): CommitterDeps {
    return {
      config: this.options.config,
      catalog: this.catalog,
      store: this.store,
      ledger: this.ledger,
      lock: this.lock,
      deadLetters: this.deadLetters,
      clock: this.clock,
      ids: this.ids,
      registry: new CachedSchemaRegistry(this.registry),
      owner: `local-${process.pid}`,
      route: { tables: this.tables, stagingUri: `${this.warehouseUri}/_floe/staging` },
      ...over,
    };
  }

  /**
   * The Lambda ingest handler itself (`handlers/ingest.ts`) on this stack's parts: a genuine Kinesis
   * event in, batch item failures out. Its structured logs go to stderr at `$FLOE_LOG_LEVEL`
   * (default: silent); its EMF metrics are dropped unless `$FLOE_LOG_LEVEL` is DEBUG.
   */
  ingestHandler(deps: IngestDeps = this.ingestDeps()): IngestHandler {
    return makeIngestHandler(
      () => ({ ingestDeps: () => deps, committerDeps: (owner: string) => this.committerDeps({ owner }) }),
      handlerTools('floe-ingest'),
    );
  }

  /**
   * The Lambda committer handler itself (`handlers/committer.ts`) on this stack's parts, with the
   * cadence `schedule` (as a deployed committer's COMMIT_* variables set it) and no fan-out (one
   * machine: every slice would share its cores). Invoke it with a schedule event, as EventBridge
   * does; logs and metrics as for `ingestHandler`.
   */
  committerHandler(schedule: CommitScheduleSettings = {}): CommitterHandler {
    return makeCommitterHandler(
      () => ({
        ingestDeps: () => this.ingestDeps(),
        committerDeps: (owner: string) => this.committerDeps({ owner }),
        commitSchedule: schedule,
      }),
      handlerTools('floe-committer'),
    );
  }

  /** Starts the event-source poller on the stream (Lambda's event source mapping, locally). */
  async startPoller(
    handler: IngestHandler = this.ingestHandler(),
    opts: Partial<Omit<KinesisPollerOptions, 'client' | 'streamName' | 'handler'>> = {},
  ): Promise<KinesisPoller> {
    if (this.poller) throw new Error('poller already running');
    this.poller = new KinesisPoller({
      client: this.kinesis.client,
      streamName: this.streamName,
      handler,
      batchSize: 500,
      batchWindowMs: 100,
      pollIntervalMs: 50,
      ...opts,
    });
    await this.poller.start();
    return this.poller;
  }

  /** Waits until every record put so far has been handled by the ingest. */
  async drain(): Promise<void> {
    if (!this.poller) throw new Error('poller not running');
    await this.poller.drain();
  }

  /** One committer run over every table with staged work. */
  commit(deps: CommitterDeps = this.committerDeps()): Promise<CommitterRun> {
    return runCommitter(deps);
  }

  async stop(): Promise<void> {
    await this.poller?.stop();
    this.poller = undefined;
    await this.kinesis.close();
    await this.dynamo.close();
  }
}
