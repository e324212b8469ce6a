/**
 * The maintenance Lambda handler on real local parts, as the committer's handler tests run theirs:
 * the ledger, the commit lock and the maintenance log on dynalite, a local-disk warehouse with the
 * file catalog, tables built by the real ingest and committer handlers from genuine Kinesis events,
 * real Powertools Logger and Metrics whose output (logs, EMF) is captured. Time is a manual clock
 * (the lease, the deadline and file ages all run on it), never the wall clock.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLedgerTable } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { DynamoMaintenanceLog } from '../../lambdas/src/adapters/aws/dynamodb-maintenance-log.ts';
import { GlueTableOptimizers } from '../../lambdas/src/adapters/aws/glue-table-optimizers.ts';
import { S3TablesTableMaintenance } from '../../lambdas/src/adapters/aws/s3tables-maintenance.ts';
import { lockName } from '../../lambdas/src/app/committer.ts';
import type { ScheduledDeps } from '../../lambdas/src/app/maintain/scheduled.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { makeCommitterHandler } from '../../lambdas/src/handlers/committer.ts';
import { readSettings } from '../../lambdas/src/handlers/env.ts';
import { makeIngestHandler } from '../../lambdas/src/handlers/ingest.ts';
import {
  handler as maintenanceEntry,
  makeMaintenanceHandler,
} from '../../lambdas/src/handlers/maintenance.ts';
import type { MaintenanceSettings } from '../../lambdas/src/handlers/maintenance-env.ts';
import {
  awsRuntime,
  type HandlerRuntime,
  type LambdaContext,
  type MaintenanceRuntime,
  scheduledOptions,
} from '../../lambdas/src/handlers/runtime.ts';
import type { TableIdentifier } from '../../lambdas/src/ports/catalog.ts';
import type { MaintenanceLog } from '../../lambdas/src/ports/maintenance-log.ts';
import type { ManagedMaintenance, ManagedOutcome } from '../../lambdas/src/ports/managed-maintenance.ts';
import { buildKinesisEvent, type KinesisEvent } from '../../lambdas/src/records/kinesis-event.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { generate, groupByTable, type Json, sorted, tempDir } from '../helpers/e2e.ts';
import { ManualClock } from '../helpers/faults.ts';
import { committedIds, committedIdsOf, type Pipeline, records, startPipeline } from '../helpers/pipeline.ts';

const SHARD = 'shardId-000000000007';
const STREAM_ARN = 'arn:aws:kinesis:us-east-1:000000000000:stream/floe-test';
const SCHEDULED = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };
const DAY = 86_400_000;
const TABLES = ['click_events', 'order_events', 'user_events'];

let dynamo: LocalDynamo;
const dirs: (() => void)[] = [];
let logTables = 0;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  for (const d of dirs) d();
});

// ---- captured output (Powertools writes JSON lines: info and EMF to stdout, warn and error to stderr)

type Line = Record<string, unknown>;
let lines: string[] = [];
beforeEach(() => {
  vi.stubEnv('POWERTOOLS_DEV', '');
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
  lines = [];
  const grab = (chunk: unknown): boolean => {
    for (const l of String(chunk).split('\n')) if (l.trim() !== '') lines.push(l);
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(grab as typeof process.stdout.write);
  vi.spyOn(process.stderr, 'write').mockImplementation(grab as typeof process.stderr.write);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const output = (): Line[] => lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);
const logs = (message: string | RegExp): Line[] =>
  output().filter(
    (l) =>
      !('_aws' in l) &&
      (typeof message === 'string' ? l.message === message : message.test(String(l.message))),
  );
interface Emf {
  readonly record: Line;
  readonly dimensions: string[][];
  readonly metrics: string[];
}
function emf(): Emf[] {
  return output()
    .filter((l) => '_aws' in l)
    .map((record) => {
      const cw = (
        record._aws as { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string }[] }[] }
      ).CloudWatchMetrics[0]!;
      return { record, dimensions: cw.Dimensions, metrics: cw.Metrics.map((m) => m.Name) };
    });
}
/** The EMF record of `table` (dimension `table`) carrying `name`. */
function tableEmf(name: string, table: string): Emf | undefined {
  const found = emf().filter(
    (e) => e.metrics.includes(name) && e.dimensions[0]!.includes('table') && e.record.table === table,
  );
  expect(found.length).toBeLessThanOrEqual(1);
  return found[0];
}
const tableMetric = (name: string, table: string): Line | undefined => tableEmf(name, table)?.record;
const runMetric = (name: string): Line | undefined =>
  emf().find((e) => e.metrics.includes(name) && !e.dimensions[0]!.includes('table'))?.record;

// ---- wiring

function tools() {
  return {
    logger: new Logger({ serviceName: 'floe-test' }),
    metrics: new Metrics({ namespace: 'Floe', serviceName: 'floe-test' }),
  };
}

function context(requestId: string, remainingMs: number): LambdaContext {
  return {
    awsRequestId: requestId,
    functionName: 'floe-maintenance',
    getRemainingTimeInMillis: () => remainingMs,
  };
}

function kinesisEvent(payloads: readonly string[], startIndex: number): KinesisEvent {
  return buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', records(payloads, startIndex));
}

function expectedIds(events: readonly Json[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [t, evs] of groupByTable(events)) out.set(t, sorted(evs.map((e) => String(e.event_id))));
  return out;
}

interface Lake {
  readonly p: Pipeline;
  readonly clock: ManualClock;
  readonly log: MaintenanceLog;
  readonly events: Json[];
  ingest(from: number, to: number): Promise<void>;
  commit(): Promise<void>;
}

/**
 * The three sample tables, built by `commits` ingest + commit rounds of 120 events; or, given
 * `lines` and a `config`, the tables those route to, in rounds of `batch` lines.
 */
async function lake(
  commits: number,
  seed: number,
  opts: { config?: unknown; lines?: readonly string[]; batch?: number } = {},
): Promise<Lake> {
  const t = tempDir('floe-maintenance-');
  dirs.push(t.cleanup);
  const clock = new ManualClock(Date.now());
  const p = await startPipeline(dynamo, t.dir, {
    clock,
    seed,
    ...(opts.config === undefined ? {} : { config: opts.config }),
  });
  const logTable = `floe-maintenance-log-${process.pid}-${++logTables}`;
  await createLedgerTable(dynamo.client, logTable);
  const log = new DynamoMaintenanceLog(dynamo.client, { tableName: logTable, clock });
  const runtime: HandlerRuntime = {
    ingestDeps: () => p.ingestDeps(),
    committerDeps: (owner) => p.committerDeps({ owner }),
  };
  const quiet = {
    logger: new Logger({ serviceName: 'floe-test', logLevel: 'SILENT' }),
    metrics: quietMetrics,
  };
  const ingestHandler = makeIngestHandler(() => runtime, quiet);
  const commitHandler = makeCommitterHandler(() => runtime, quiet);
  const batch = opts.batch ?? 120;
  const gen =
    opts.lines === undefined
      ? generate(commits * batch + batch, 'v1', seed)
      : { lines: [...opts.lines], events: opts.lines.map((l) => JSON.parse(l) as Json) };
  let requests = 0;
  const l: Lake = {
    p,
    clock,
    log,
    events: gen.events,
    ingest: async (from, to) => {
      const res = await ingestHandler(
        kinesisEvent(gen.lines.slice(from, to), from),
        context(`i-${++requests}`, 60_000),
      );
      expect(res).toEqual({ batchItemFailures: [] });
    },
    commit: async () => {
      clock.advance(60_000);
      const s = await commitHandler(SCHEDULED, context(`c-${++requests}`, 300_000));
      expect(s.failed).toEqual([]);
    },
  };
  for (let i = 0; i < commits; i++) {
    await l.ingest(i * batch, (i + 1) * batch);
    await l.commit();
  }
  return l;
}

const quietMetrics = {
  addDimension: () => undefined,
  addMetric: () => undefined,
  publishStoredMetrics: () => undefined,
};

const FLOE: MaintenanceSettings = { mode: 'floe', configured: true, orphansOlderThanMs: 3 * DAY };

/** The maintenance runtime the AWS one would be, on the lake's local parts. */
function maintenanceRuntime(
  l: Lake,
  over: { settings?: MaintenanceSettings; managed?: ManagedMaintenance; log?: MaintenanceLog } = {},
): MaintenanceRuntime {
  return {
    maintenance: (owner) => {
      const options = scheduledOptions('glue', over.settings ?? FLOE, over.managed);
      if (options === undefined) return undefined;
      const deps: ScheduledDeps = {
        config: l.p.config,
        catalog: l.p.wh.catalog,
        store: l.p.wh.store,
        clock: l.clock,
        ids: l.p.ids,
        ledger: l.p.ledger,
        lock: l.p.lock,
        log: over.log ?? l.log,
        owner,
        leaseMs: 120_000,
        heartbeatMs: 0,
        sleep: async () => undefined,
      };
      return { deps, options };
    },
  };
}

const table = (name: string): TableIdentifier => ({ namespace: 'default', name });

async function metadataLocations(l: Lake): Promise<string[]> {
  return Promise.all(TABLES.map(async (t) => (await l.p.wh.catalog.loadTable(table(t))).metadataLocation));
}

/** URIs of the data files the ledger names for `t` that no commit took yet. */
async function stagedDataFiles(l: Lake, t: string): Promise<string[]> {
  const out: string[] = [];
  for (const shard of await l.p.ledger.shardsWithStagedWork(t)) {
    for (const e of await l.p.ledger.entriesAfter(t, shard, null, 1000)) {
      if (e.status === 'staged') for (const f of e.files) if (f.kind === 'data') out.push(f.uri);
    }
  }
  return out;
}

// ---- tests

describe('maintenance handler, Floe maintains Glue tables (maintenance=floe)', () => {
  it('compacts, expires and deletes orphans, sparing staged files the committer then commits; metrics per table', async () => {
    const l = await lake(3, 101);
    // A fourth batch is staged (data files in the tables' folders) but not committed.
    await l.ingest(360, 480);
    const staged = new Map<string, string[]>();
    for (const t of TABLES) staged.set(t, await stagedDataFiles(l, t));
    expect([...staged.values()].flat().length).toBeGreaterThan(0);
    // A leftover of a failed attempt: referenced by nothing, not in the ledger.
    const orders = await l.p.wh.catalog.loadTable(table('order_events'));
    const orphan = `${orders.metadata.location}/data/00000-0-leftover-of-a-failed-attempt.parquet`;
    await l.p.wh.store.put(orphan, new Uint8Array([80, 65, 82, 49]));
    // Ten days later: every file on disk is older than the 3-day orphan age, every snapshot but
    // the newest is older than the 5-day expiry.
    l.clock.advance(10 * DAY);

    const { logger, metrics } = tools();
    const maintain = makeMaintenanceHandler(() => maintenanceRuntime(l), { logger, metrics });
    const s = await maintain(SCHEDULED, context('m-1', 600_000));
    expect(s).toMatchObject({
      owner: 'm-1',
      mode: 'floe',
      maintained: TABLES,
      locked: [],
      failed: [],
      deferred: [],
    });

    // The orphan is gone; every staged file is still there.
    expect(await l.p.wh.store.exists(orphan)).toBe(false);
    for (const uri of [...staged.values()].flat()) expect(await l.p.wh.store.exists(uri), uri).toBe(true);

    // Metrics per table (dimension `table`), and what maintenance did.
    let compacted = 0;
    for (const t of TABLES) {
      const e = tableEmf('DataFiles', t)!;
      expect(e.dimensions).toEqual([['service', 'table']]);
      const m = e.record;
      // Only the snapshots maintenance itself just made (compaction, manifest rewrite) are left.
      expect(m.Snapshots).toBeLessThanOrEqual(2);
      expect(m).toMatchObject({
        table: t,
        DeleteFiles: 0,
        SmallFiles: 0,
        MaintenanceFailures: 0,
      });
      expect(m.DataFiles).toBeGreaterThan(0);
      expect(m.AverageFileBytes).toBeGreaterThan(0);
      expect(m.SnapshotsExpired).toBeGreaterThan(0);
      compacted += m.FilesCompacted as number;
      expect(logs(`table ${t}: maintained`)[0]).toMatchObject({ level: 'INFO', owner: 'm-1', table: t });
    }
    expect(compacted).toBeGreaterThan(0);
    expect(tableMetric('OrphansDeleted', 'order_events')!.OrphansDeleted).toBeGreaterThanOrEqual(1);
    expect(runMetric('TablesMaintained')).toMatchObject({
      TablesMaintained: 3,
      MaintenanceLocked: 0,
      MaintenanceDeferred: 0,
      MaintenanceFailedTables: 0,
    });
    expect(await committedIds(l.p)).toEqual(expectedIds(l.events.slice(0, 360)));

    // The committer commits the staged batch onto the maintained tables: every row, exactly once.
    await l.commit();
    expect(await committedIds(l.p)).toEqual(expectedIds(l.events.slice(0, 480)));
  });

  it("honours the committer's lease: a table whose lease is held is skipped, untouched, and comes first next run", async () => {
    const l = await lake(2, 202);
    l.clock.advance(10 * DAY);
    // The committer holds order_events (same lock name, same lock table).
    const lease = await l.p.lock.acquire(lockName(l.p.config, 'order_events'), 'committer-run', 600_000);
    expect(lease).toBeDefined();
    const before = await metadataLocations(l);
    const { logger, metrics } = tools();
    const maintain = makeMaintenanceHandler(() => maintenanceRuntime(l), { logger, metrics });
    const s = await maintain(SCHEDULED, context('m-locked', 600_000));
    expect(s).toMatchObject({
      maintained: ['click_events', 'user_events'],
      locked: ['order_events'],
      failed: [],
    });
    const after = await metadataLocations(l);
    expect(after[1]).toBe(before[1]); // order_events: no commit
    expect(after[0]).not.toBe(before[0]);
    expect(tableMetric('DataFiles', 'order_events')).toBeUndefined();
    expect(runMetric('MaintenanceLocked')?.MaintenanceLocked).toBe(1);
    // The committer's lease is still the committer's: maintenance never released or took it.
    await expect(l.p.lock.renew(lease!)).resolves.toMatchObject({ owner: 'committer-run' });

    await l.p.lock.release(lease!);
    lines = [];
    l.clock.advance(60_000);
    const again = await maintain(SCHEDULED, context('m-free', 600_000));
    expect(again.maintained[0]).toBe('order_events');
    expect(again.locked).toEqual([]);
    expect((await metadataLocations(l))[1]).not.toBe(before[1]);
  });

  it("a table whose lease acquire fails is that table's failure: the run maintains the others", async () => {
    const l = await lake(2, 204);
    l.clock.advance(10 * DAY);
    const before = await metadataLocations(l);
    const base = maintenanceRuntime(l);
    const orderLock = lockName(l.p.config, 'order_events');
    const runtime: MaintenanceRuntime = {
      maintenance: (owner) => {
        const m = base.maintenance(owner);
        if (!m) return m;
        const inner = m.deps.lock;
        const lock: typeof inner = {
          acquire: async (name, who, ms) => {
            if (name === orderLock) throw new Error('socket hang up');
            return inner.acquire(name, who, ms);
          },
          renew: (lease, ms) => inner.renew(lease, ms),
          release: (lease) => inner.release(lease),
        };
        return { ...m, deps: { ...m.deps, lock } };
      },
    };
    const { logger, metrics } = tools();
    const maintain = makeMaintenanceHandler(() => runtime, { logger, metrics });
    const s = await maintain(SCHEDULED, context('m-acquire-fails', 600_000));
    expect(s).toMatchObject({
      maintained: ['click_events', 'user_events'],
      locked: [],
      failed: ['order_events'],
    });
    const after = await metadataLocations(l);
    expect(after[1]).toBe(before[1]);
    expect(after[0]).not.toBe(before[0]);
  });

  it('stops starting tables when the time left falls into the reserve; the next run resumes with them', async () => {
    const l = await lake(1, 303);
    // Each table takes 50 s of the 100 s left; the reserve is 30 s: two tables start, one waits.
    const slow: MaintenanceLog = {
      visits: (ns) => l.log.visits(ns),
      recordVisit: async (ns, t, at) => {
        await l.log.recordVisit(ns, t, at);
        l.clock.advance(50_000);
      },
    };
    const { logger, metrics } = tools();
    const maintain = makeMaintenanceHandler(() => maintenanceRuntime(l, { log: slow }), {
      logger,
      metrics,
      minReserveMs: 10_000,
    });
    const first = await maintain(SCHEDULED, context('m-short', 100_000));
    expect(first.maintained).toHaveLength(2);
    expect(first.deferred).toHaveLength(1);
    expect(runMetric('MaintenanceDeferred')?.MaintenanceDeferred).toBe(1);
    const [left] = first.deferred;
    expect(TABLES.filter((t) => !first.maintained.includes(t))).toEqual([left]);

    lines = [];
    const second = await maintain(SCHEDULED, context('m-next', 100_000));
    expect(second.maintained[0]).toBe(left);
    expect(second.deferred).toHaveLength(1);
    // The least recently visited go first: three runs visit every table.
    const third = await maintain(SCHEDULED, context('m-third', 100_000));
    expect(new Set([...first.maintained, ...second.maintained, ...third.maintained])).toEqual(
      new Set(TABLES),
    );
    expect(third.maintained[0]).not.toBe(left);

    // Too little time for anything: every table deferred, nothing visited.
    lines = [];
    const none = await maintain(SCHEDULED, context('m-none', 5_000));
    expect(none).toMatchObject({ maintained: [], deferred: expect.arrayContaining(TABLES) });
  });
});

describe('compaction asked for by file count (a seconds-fresh committer)', () => {
  it('the committer asks once per cooldown for tables whose small files piled up; the requested run maintains only them', async () => {
    const l = await lake(0, 131, {
      lines: generate(720, 'v1', 131).lines,
      config: { partitioning: { candidates: [] } },
    });
    const asked: string[][] = [];
    const runtime: HandlerRuntime = {
      ingestDeps: () => l.p.ingestDeps(),
      committerDeps: (owner) => l.p.committerDeps({ owner }),
      maintenanceRequests: { request: async (tables) => void asked.push([...tables]) },
      compaction: { atFiles: 3, targetFileSizeBytes: 128 * 1024 * 1024, cooldownMs: 10 * 60_000 },
    };
    const quiet = {
      logger: new Logger({ serviceName: 'floe-test', logLevel: 'SILENT' }),
      metrics: quietMetrics,
    };
    const commit = makeCommitterHandler(() => runtime, quiet);
    const filesOf = async (t: string) =>
      Number(
        (await l.p.wh.catalog.loadTable(table(t))).metadata.snapshots!.at(-1)!.summary['total-data-files'],
      );
    // One data file per table per round (the first round's are pending rewrites: one file too).
    for (let round = 0; round < 5; round++) {
      await l.ingest(round * 120, (round + 1) * 120);
      l.clock.advance(5_000);
      const s = await commit(SCHEDULED, context(`c-${round}`, 300_000));
      expect(s.failed).toEqual([]);
      const files = await Promise.all(TABLES.map(filesOf));
      // Asked exactly when a table reached 3 files, and not again within the cooldown.
      if (round < 2) expect(asked).toEqual([]);
      else expect(asked).toEqual([TABLES]);
      expect(files.every((n) => n === round + 1)).toBe(true);
    }
    // The requested run: only order_events, compacted; the others keep their files.
    const maintain = makeMaintenanceHandler(() => maintenanceRuntime(l), quiet);
    const request = { floeMaintainTables: { tables: ['order_events'], requestedBy: 'committer' } };
    const m = await maintain(request, context('m-1', 600_000));
    expect(m).toMatchObject({ mode: 'floe', maintained: ['order_events'], failed: [] });
    expect(await filesOf('order_events')).toBe(1);
    expect(await filesOf('user_events')).toBe(5);
    // Asked again within the cooldown (a duplicate delivery): visited already, skipped.
    const again = await maintain(request, context('m-2', 600_000));
    expect(again.maintained).toEqual([]);
    // After the cooldown the committer asks again for what is still piled up.
    await l.ingest(600, 720);
    l.clock.advance(11 * 60_000);
    await commit(SCHEDULED, context('c-5', 300_000));
    expect(asked).toEqual([TABLES, ['click_events', 'user_events']]);
    // Every row is there exactly once.
    expect(await committedIds(l.p)).toEqual(expectedIds(l.events.slice(0, 720)));
  });
});

describe('maintenance handler, tables in every namespace the configuration reaches', () => {
  // `{tenant}.{event_type}_events`: a record with a tenant goes to that namespace, one without to
  // `click_events` in the stack's (`default`). Tenant `default` names the stack's namespace
  // explicitly, so its records are staged as `default.audit_events`.
  const CONFIG = { routing: { template: '{tenant}.{event_type}_events' } };
  const SOURCES = [
    [undefined, 'click'],
    ['default', 'audit'],
    ['analytics', 'order'],
    ['tenant_a', 'order'],
    ['other', 'order'],
  ] as const;
  const PER_SOURCE = 8;
  const BATCH = SOURCES.length * PER_SOURCE;
  /** What the CDK app would set for `-c allowedNamespaces=analytics,tenant_*` (stack `default`). */
  const ENV = {
    WAREHOUSE_URI: 's3://lake/warehouse',
    STAGING_URI: 's3://staging/staging',
    DEAD_LETTER_URI: 's3://staging/dead-letters',
    LEDGER_TABLE: 'floe-ledger',
    AWS_REGION: 'eu-west-1',
    MAINTENANCE: 'floe',
    MAINTENANCE_NAMESPACES: 'default,analytics,tenant_*',
  };
  const settings = (): MaintenanceSettings => readSettings(ENV).maintenance;
  /** Routing keys of the tables maintenance visits (the `other` namespace is not granted). */
  const VISITED = ['analytics.order_events', 'audit_events', 'click_events', 'tenant_a.order_events'];
  const ids: Record<string, TableIdentifier> = {
    click_events: { namespace: 'default', name: 'click_events' },
    audit_events: { namespace: 'default', name: 'audit_events' },
    'analytics.order_events': { namespace: 'analytics', name: 'order_events' },
    'tenant_a.order_events': { namespace: 'tenant_a', name: 'order_events' },
    'other.order_events': { namespace: 'other', name: 'order_events' },
  };
  /** The ledger key each table's records are staged under (what the router produced). */
  const LEDGER_KEYS = [
    'click_events',
    'default.audit_events',
    'analytics.order_events',
    'tenant_a.order_events',
    'other.order_events',
  ];

  function lines(rounds: number): string[] {
    const out: string[] = [];
    let n = 0;
    for (let r = 0; r < rounds; r++)
      for (const [tenant, type] of SOURCES)
        for (let i = 0; i < PER_SOURCE; i++)
          out.push(
            JSON.stringify({
              event_id: `e-${++n}`,
              event_type: type,
              ...(tenant === undefined ? {} : { tenant }),
              event_date: '2025-03-14',
              amount: n,
            }),
          );
    return out;
  }
  const nsLake = (commits: number, seed: number) =>
    lake(commits, seed, { config: CONFIG, lines: lines(commits + 1), batch: BATCH });
  const location = async (l: Lake, key: string) =>
    (await l.p.wh.catalog.loadTable(ids[key]!)).metadataLocation;
  /** Event ids of every table of every namespace, by routing key. */
  async function allCommitted(l: Lake): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const ns of ['default', 'analytics', 'tenant_a', 'other'])
      for (const [name, evs] of await committedIdsOf(l.p.wh.catalog, l.p.wh.store, ns))
        out.set(ns === 'default' ? name : `${ns}.${name}`, evs);
    return out;
  }
  function expectedOf(events: readonly Json[]): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const e of events) {
      const key =
        e.tenant === undefined
          ? 'click_events'
          : e.tenant === 'default'
            ? 'audit_events'
            : `${String(e.tenant)}.order_events`;
      out.set(key, [...(out.get(key) ?? []), String(e.event_id)]);
    }
    for (const [k, v] of out) out.set(k, sorted(v));
    return out;
  }

  it('maintains the stack’s, a named and a prefix-matched namespace’s tables, sparing their staged files; not an ungranted one', async () => {
    const l = await nsLake(3, 606);
    expect(new Set(await l.p.wh.catalog.listNamespaces())).toEqual(
      new Set(['default', 'analytics', 'tenant_a', 'other']),
    );
    // A fourth batch is staged, not committed: data files in every table's folder.
    await l.ingest(3 * BATCH, 4 * BATCH);
    const staged = new Map<string, string[]>();
    for (const k of LEDGER_KEYS) staged.set(k, await stagedDataFiles(l, k));
    for (const [k, files] of staged) expect(files.length, k).toBeGreaterThan(0);
    // Leftovers of failed attempts in a per-namespace table, and in the ungranted one.
    const orphanIn = async (key: string) => {
      const t = await l.p.wh.catalog.loadTable(ids[key]!);
      const uri = `${t.metadata.location}/data/00000-0-leftover-of-a-failed-attempt.parquet`;
      await l.p.wh.store.put(uri, new Uint8Array([80, 65, 82, 49]));
      return uri;
    };
    const analyticsOrphan = await orphanIn('analytics.order_events');
    const otherOrphan = await orphanIn('other.order_events');
    const otherBefore = await location(l, 'other.order_events');
    l.clock.advance(10 * DAY);

    const { logger, metrics } = tools();
    const maintain = makeMaintenanceHandler(() => maintenanceRuntime(l, { settings: settings() }), {
      logger,
      metrics,
    });
    const s = await maintain(SCHEDULED, context('m-ns', 600_000));
    expect(s).toMatchObject({ mode: 'floe', locked: [], failed: [], deferred: [] });
    expect([...s.maintained].sort()).toEqual(VISITED);

    // The table of the namespace outside the set: not visited, not touched.
    expect(await location(l, 'other.order_events')).toBe(otherBefore);
    expect(await l.p.wh.store.exists(otherOrphan)).toBe(true);
    expect(tableEmf('DataFiles', 'other.order_events')).toBeUndefined();
    expect(logs(/other/)).toEqual([]);

    // Orphans of a visited table are gone; every staged file of every table is still there,
    // `default.audit_events`' (the stack's namespace, named by the template) included.
    expect(await l.p.wh.store.exists(analyticsOrphan)).toBe(false);
    for (const [k, files] of staged)
      for (const uri of files) expect(await l.p.wh.store.exists(uri), `${k}: ${uri}`).toBe(true);

    // Each visited table was maintained, and is reported by routing key.
    for (const key of VISITED) {
      const m = tableMetric('DataFiles', key)!;
      expect(m, key).toMatchObject({ table: key, SmallFiles: 0, MaintenanceFailures: 0 });
      expect(m.SnapshotsExpired, key).toBeGreaterThan(0);
      expect(m.FilesCompacted, key).toBeGreaterThan(0);
      expect(logs(`table ${key}: maintained`)[0], key).toMatchObject({ level: 'INFO', table: key });
    }
    expect(tableMetric('OrphansDeleted', 'analytics.order_events')!.OrphansDeleted).toBeGreaterThanOrEqual(1);
    expect(runMetric('TablesMaintained')?.TablesMaintained).toBe(VISITED.length);
    // One maintenance log per namespace.
    expect([...(await l.log.visits('analytics')).keys()]).toEqual(['order_events']);
    expect([...(await l.log.visits('tenant_a')).keys()]).toEqual(['order_events']);
    expect([...(await l.log.visits('default')).keys()].sort()).toEqual(['audit_events', 'click_events']);
    expect((await l.log.visits('other')).size).toBe(0);

    // The committer commits the staged batch onto the maintained tables: every row, exactly once.
    const all = lines(4);
    expect(await allCommitted(l)).toEqual(
      expectedOf(all.slice(0, 3 * BATCH).map((x) => JSON.parse(x) as Json)),
    );
    await l.commit();
    expect(await allCommitted(l)).toEqual(expectedOf(all.map((x) => JSON.parse(x) as Json)));
  });

  it('takes the committer’s lease of a per-namespace table: held, it is reported locked and left alone', async () => {
    const l = await nsLake(2, 707);
    l.clock.advance(10 * DAY);
    // The committer's lock name for routing key `analytics.order_events`.
    const lease = await l.p.lock.acquire(
      lockName(l.p.config, 'analytics.order_events'),
      'committer-run',
      600_000,
    );
    expect(lease?.name).toBe('commit/analytics.order_events');
    const before = await location(l, 'analytics.order_events');
    const { logger, metrics } = tools();
    const maintain = makeMaintenanceHandler(() => maintenanceRuntime(l, { settings: settings() }), {
      logger,
      metrics,
    });
    const s = await maintain(SCHEDULED, context('m-ns-locked', 600_000));
    expect(s.locked).toEqual(['analytics.order_events']);
    expect([...s.maintained].sort()).toEqual(VISITED.filter((k) => k !== 'analytics.order_events'));
    expect(await location(l, 'analytics.order_events')).toBe(before);
    await expect(l.p.lock.renew(lease!)).resolves.toMatchObject({ owner: 'committer-run' });
    await l.p.lock.release(lease!);
    l.clock.advance(60_000);
    const again = await maintain(SCHEDULED, context('m-ns-free', 600_000));
    expect(again.maintained[0]).toBe('analytics.order_events');
  });

  it('one least-recently-visited order across namespaces: what a run defers, the next takes first', async () => {
    const l = await nsLake(1, 808);
    // Each table takes 50 s of the 100 s left; the reserve is 30 s: two tables per run.
    const slow: MaintenanceLog = {
      visits: (ns) => l.log.visits(ns),
      recordVisit: async (ns, t, at) => {
        await l.log.recordVisit(ns, t, at);
        l.clock.advance(50_000);
      },
    };
    const { logger, metrics } = tools();
    const maintain = makeMaintenanceHandler(
      () => maintenanceRuntime(l, { settings: settings(), log: slow }),
      { logger, metrics, minReserveMs: 10_000 },
    );
    const first = await maintain(SCHEDULED, context('m-1', 100_000));
    expect(first.maintained).toHaveLength(2);
    expect([...first.maintained, ...first.deferred].sort()).toEqual(VISITED);
    const second = await maintain(SCHEDULED, context('m-2', 100_000));
    expect(second.maintained).toEqual(first.deferred);
    const third = await maintain(SCHEDULED, context('m-3', 100_000));
    expect(third.maintained).toEqual(first.maintained);
  });
});

describe('maintenance handler, the service maintains the tables (maintenance=glue, S3 Tables)', () => {
  it('sets up every table’s managed maintenance, publishes metrics, commits nothing; a failure is counted', async () => {
    const l = await lake(2, 404);
    const seen: string[] = [];
    const managed: ManagedMaintenance = {
      setUp: async () => ({ created: [], updated: [] }),
      ensure: async (id): Promise<ManagedOutcome> => {
        seen.push(id.name);
        if (id.name === 'user_events') throw new FloeError(ErrorKind.Unexpected, 'AccessDeniedException');
        return { created: id.name === 'click_events' ? ['compaction', 'retention'] : [], updated: [] };
      },
    };
    const before = await metadataLocations(l);
    l.clock.advance(10 * DAY);
    const { logger, metrics } = tools();
    const settings: MaintenanceSettings = { ...FLOE, mode: 'glue' };
    const maintain = makeMaintenanceHandler(() => maintenanceRuntime(l, { settings, managed }), {
      logger,
      metrics,
    });
    const s = await maintain(SCHEDULED, context('m-glue', 600_000));
    expect(s).toMatchObject({
      mode: 'metrics',
      maintained: [],
      checked: ['click_events', 'order_events'],
      failed: ['user_events'],
      configured: ['click_events'],
    });
    expect(seen.sort()).toEqual(TABLES);
    expect(await metadataLocations(l)).toEqual(before);
    for (const t of TABLES) {
      const m = tableMetric('DataFiles', t)!;
      expect(m.Snapshots).toBe(2);
      expect(m.SmallFiles).toBeGreaterThan(0); // nothing compacted them
      expect(m.FilesCompacted).toBeUndefined();
      expect(m.MaintenanceFailures).toBe(t === 'user_events' ? 1 : 0);
    }
    expect(logs(/^maintenance of user_events failed/)[0]).toMatchObject({
      level: 'ERROR',
      errorMessage: 'AccessDeniedException',
    });
  });

  it('maintenance off: nothing to do', async () => {
    const l = await lake(0, 505);
    const { logger, metrics } = tools();
    const settings: MaintenanceSettings = { mode: 'off', configured: true };
    const s = await makeMaintenanceHandler(() => maintenanceRuntime(l, { settings }), { logger, metrics })(
      SCHEDULED,
      context('m-off', 600_000),
    );
    expect(s).toMatchObject({ mode: 'off', maintained: [], checked: [] });
  });
});

describe('the Lambda entry point', () => {
  it('reads the environment on the first invocation and names what is wrong', async () => {
    for (const v of ['STAGING_URI', 'DEAD_LETTER_URI', 'LEDGER_TABLE', 'WAREHOUSE_URI', 'CATALOG_TYPE'])
      vi.stubEnv(v, '');
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('MAINTENANCE', 'sometimes');
    const e = await maintenanceEntry(SCHEDULED).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(FloeError);
    expect((e as FloeError).kind).toBe(ErrorKind.ConfigInvalid);
    expect((e as FloeError).message).toContain('MAINTENANCE="sometimes" is not one of floe, glue, off');
    expect(logs('maintenance run failed')[0]).toMatchObject({ level: 'ERROR', service: 'floe-maintenance' });
  });

  it('awsRuntime wires managed maintenance into the committer and the maintenance run the settings name', () => {
    const base = {
      STAGING_URI: 's3://staging/floe',
      DEAD_LETTER_URI: 's3://lake/dead',
      LEDGER_TABLE: 'floe-ledger',
      AWS_REGION: 'eu-west-1',
    };
    const floe = awsRuntime(readSettings({ ...base, WAREHOUSE_URI: 's3://lake/wh', MAINTENANCE: 'floe' }));
    try {
      expect(floe.managed).toBeUndefined();
      expect(floe.committerDeps('c').catalog).toBe(floe.catalog);
      const run = floe.maintenance('req-1')!;
      expect(run.options.mode).toBe('floe');
      expect(run.deps).toMatchObject({
        owner: 'req-1',
        leaseMs: 120_000,
        catalog: floe.catalog,
        lock: floe.lock,
      });
    } finally {
      floe.destroy();
    }
    const glue = awsRuntime(
      readSettings({
        ...base,
        WAREHOUSE_URI: 's3://lake/wh',
        MAINTENANCE: 'glue',
        GLUE_OPTIMIZER_ROLE_ARN: 'arn:aws:iam::123456789012:role/optimizers',
        GLUE_CATALOG_ID: '123456789012',
      }),
    );
    try {
      expect(glue.managed).toBeInstanceOf(GlueTableOptimizers);
      expect(glue.committerDeps('c').catalog).not.toBe(glue.catalog);
      expect(glue.maintenance('r')!.options).toMatchObject({ mode: 'metrics', managed: glue.managed });
    } finally {
      glue.destroy();
    }
    const tables = awsRuntime(
      readSettings({
        ...base,
        CATALOG_TYPE: 's3tables',
        TABLE_BUCKET_ARN: 'arn:aws:s3tables:eu-west-1:123456789012:bucket/floe',
        MAINTENANCE: 'off',
      }),
    );
    try {
      // S3 Tables: the committer configures the service's maintenance even with maintenance=off.
      expect(tables.managed).toBeInstanceOf(S3TablesTableMaintenance);
      expect(tables.committerDeps('c').catalog).not.toBe(tables.catalog);
      expect(tables.maintenance('r')).toBeUndefined();
    } finally {
      tables.destroy();
    }
    // A stack deployed before maintenance existed: nothing new happens.
    const legacy = awsRuntime(readSettings({ ...base, WAREHOUSE_URI: 's3://lake/wh' }));
    try {
      expect(legacy.managed).toBeUndefined();
      expect(legacy.maintenance('r')).toBeUndefined();
    } finally {
      legacy.destroy();
    }
  });
});
