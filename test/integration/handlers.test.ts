/**
 * The Lambda handlers on a runtime of real local parts: the DynamoDB ledger and lock on dynalite,
 * a local-disk warehouse with the file catalog, genuine Lambda Kinesis events (base64 data), real
 * Powertools Logger and Metrics whose JSON output (logs, EMF) is captured from stdout / stderr.
 * Faults are injected with a ledger decorator, never by mocking the apps.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { GlueCatalog } from '../../lambdas/src/adapters/aws/glue-catalog.ts';
import { S3TablesCatalog } from '../../lambdas/src/adapters/aws/s3tables-catalog.ts';
import type { CommitterDeps } from '../../lambdas/src/app/committer.ts';
import type { IngestDeps } from '../../lambdas/src/app/ingest.ts';
import { openQueryEngine } from '../../lambdas/src/cli/query-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { CachedSchemaRegistry } from '../../lambdas/src/engine/cached-registry.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { handler as committerEntry, makeCommitterHandler } from '../../lambdas/src/handlers/committer.ts';
import { readSettings } from '../../lambdas/src/handlers/env.ts';
import { handler as ingestEntry, makeIngestHandler } from '../../lambdas/src/handlers/ingest.ts';
import { awsRuntime, type HandlerRuntime, type LambdaContext } from '../../lambdas/src/handlers/runtime.ts';
import type { AppendOutcome, Ledger, LedgerEntry, StagedRange } from '../../lambdas/src/ports/ledger.ts';
import { buildKinesisEvent, type KinesisEvent } from '../../lambdas/src/records/kinesis-event.ts';
import { DEBEZIUM_CONFIG, decimalText, typedDebeziumArb } from '../fuzz/debezium-typed.ts';
import {
  changeRecord,
  dynamoDbStreamArb,
  finalState,
  itemKey,
  itemState,
  rowState,
} from '../fuzz/dynamodb-streams.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { generate, groupByTable, type Json, sorted, tableOf, tempDir } from '../helpers/e2e.ts';
import { awslabsAggregate } from '../helpers/kpl.ts';
import { committedIds, type Pipeline, records, startPipeline } from '../helpers/pipeline.ts';

const SHARD = 'shardId-000000000003';
const STREAM_ARN = 'arn:aws:kinesis:us-east-1:000000000000:stream/floe-test';
const SCHEDULED = {
  version: '0',
  id: 'c9f3b2a4-0000-4000-8000-000000000001',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  time: '2025-03-14T15:01:00Z',
  detail: {},
};

let dynamo: LocalDynamo;
const dirs: (() => void)[] = [];
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  for (const d of dirs) d();
});

// ---- captured output: Powertools writes JSON lines to stdout (info, EMF) and stderr (warn, error) ----

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

function output(): Line[] {
  return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);
}
function logs(message?: string | RegExp): Line[] {
  return output().filter(
    (l) =>
      !('_aws' in l) &&
      (message === undefined ||
        (typeof message === 'string' ? l.message === message : message.test(String(l.message)))),
  );
}
interface Emf {
  readonly record: Line;
  readonly namespace: string;
  readonly dimensions: string[][];
  readonly metrics: string[];
}
function emf(): Emf[] {
  return output()
    .filter((l) => '_aws' in l)
    .map((record) => {
      const cw = (
        record._aws as {
          CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
        }
      ).CloudWatchMetrics[0]!;
      return {
        record,
        namespace: cw.Namespace,
        dimensions: cw.Dimensions,
        metrics: cw.Metrics.map((m) => m.Name),
      };
    });
}
/** The EMF records carrying `metric` (optionally with dimension `dim` = `value`). */
function metric(name: string, dim?: string, value?: string): Emf[] {
  return emf().filter(
    (e) =>
      e.metrics.includes(name) &&
      (dim === undefined || (e.dimensions[0]!.includes(dim) && e.record[dim] === value)),
  );
}

// ---- wiring ----

function dir(): string {
  const t = tempDir('floe-handlers-');
  dirs.push(t.cleanup);
  return t.dir;
}

function runtimeOf(
  p: Pipeline,
  ingest: Partial<IngestDeps> = {},
  commit: Partial<CommitterDeps> = {},
): HandlerRuntime {
  return {
    ingestDeps: () => p.ingestDeps(ingest),
    committerDeps: (owner) => p.committerDeps({ owner, ...commit }),
    commitConcurrency: 2,
  };
}

function tools() {
  return {
    logger: new Logger({ serviceName: 'floe-test' }),
    metrics: new Metrics({ namespace: 'Floe', serviceName: 'floe-test' }),
  };
}

function context(requestId: string, remainingMs?: number): LambdaContext {
  return {
    awsRequestId: requestId,
    functionName: 'floe-test',
    ...(remainingMs === undefined ? {} : { getRemainingTimeInMillis: () => remainingMs }),
  };
}

function kinesisEvent(payloads: readonly string[], startIndex = 0): KinesisEvent {
  return buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', records(payloads, startIndex));
}

function expectedIds(events: readonly Json[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [t, evs] of groupByTable(events)) out.set(t, sorted(evs.map((e) => String(e.event_id))));
  return out;
}

function count<T>(xs: readonly T[], pred: (x: T) => boolean): number {
  return xs.reduce((n, x) => n + (pred(x) ? 1 : 0), 0);
}

/** A ledger whose chosen operation fails for one table (a fault decorator around the real ledger). */
class FaultyLedger implements Ledger {
  calls = 0;
  constructor(
    private readonly inner: Ledger,
    private readonly fault: { table: string; op: 'appendEntry' | 'entriesAfter' },
  ) {}
  private boom(table: string): never {
    this.calls++;
    throw new FloeError(ErrorKind.Unexpected, `injected ${this.fault.op} failure for ${table}`, {
      retryable: true,
    });
  }
  appendEntry(entry: LedgerEntry): Promise<AppendOutcome> {
    if (this.fault.op === 'appendEntry' && entry.table === this.fault.table) this.boom(entry.table);
    return this.inner.appendEntry(entry);
  }
  entriesAfter(table: string, shardId: string, after: string | null, limit: number): Promise<LedgerEntry[]> {
    if (this.fault.op === 'entriesAfter' && table === this.fault.table) this.boom(table);
    return this.inner.entriesAfter(table, shardId, after, limit);
  }
  tablesWithStagedWork(): Promise<string[]> {
    return this.inner.tablesWithStagedWork();
  }
  shardsWithStagedWork(table: string): Promise<string[]> {
    return this.inner.shardsWithStagedWork(table);
  }
  markCommitted(table: string, shardId: string, upTo: string): Promise<number> {
    return this.inner.markCommitted(table, shardId, upTo);
  }
  stagedRanges(shardId: string, from: string, to: string): Promise<StagedRange[]> {
    return this.inner.stagedRanges(shardId, from, to);
  }
  shardTails(shardId: string): Promise<Map<string, string>> {
    return this.inner.shardTails(shardId);
  }
}

// ---- tests ----

describe('ingest + committer handlers', () => {
  it('Kinesis events land as rows after the committer handler runs; logs and EMF metrics describe it', async () => {
    const p = await startPipeline(dynamo, dir());
    const { logger, metrics } = tools();
    const ingest = makeIngestHandler(() => runtimeOf(p), { logger, metrics });
    const commit = makeCommitterHandler(() => runtimeOf(p), { logger, metrics });
    const v1 = generate(400, 'v1', 11);
    const first = v1.lines.slice(0, 250);
    const firstByTable = groupByTable(v1.events.slice(0, 250));

    expect(await ingest(kinesisEvent(first), context('req-ingest-1'))).toEqual({ batchItemFailures: [] });

    // One structured log line for the batch: shard, request, counts, per-table results.
    const [batchLog] = logs('ingest batch');
    expect(batchLog).toMatchObject({
      level: 'INFO',
      service: 'floe-test',
      shardId: SHARD,
      requestId: 'req-ingest-1',
      streamArn: STREAM_ARN,
      records: 250,
      skipped: 0,
      failures: [],
    });
    const tableLogs = batchLog!.tables as { table: string; records: number; pending: number; path: string }[];
    expect(tableLogs.map((t) => [t.table, t.records, t.pending, t.path])).toEqual(
      [...firstByTable]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([t, evs]) => [t, evs.length, evs.length, 'pending']),
    );
    // EMF: batch counts without dimensions (but the service), per-table counts with the table dimension.
    const recordsIn = metric('RecordsIn');
    expect(recordsIn).toHaveLength(1);
    expect(recordsIn[0]!.namespace).toBe('Floe');
    expect(recordsIn[0]!.record.RecordsIn).toBe(250);
    expect(recordsIn[0]!.record.RecordsSkipped).toBe(0);
    expect(recordsIn[0]!.dimensions).toEqual([['service']]);
    for (const [table, evs] of firstByTable) {
      const [m] = metric('PendingRecords', 'table', table);
      expect(m?.dimensions).toEqual([['service', 'table']]);
      expect(m?.record).toMatchObject({ table, PendingRecords: evs.length, RowsStaged: 0 });
      expect(m?.record.StagedBytes).toBeGreaterThan(0);
    }
    expect(metric('DeadLetters')).toEqual([]);

    const s1 = await commit(SCHEDULED, context('req-commit-1', 60_000));
    expect(s1).toMatchObject({
      owner: 'req-commit-1',
      committed: ['click_events', 'order_events', 'user_events'],
      failed: [],
      locked: [],
      deferred: [],
      rows: 250,
    });
    expect(await committedIds(p)).toEqual(expectedIds(v1.events.slice(0, 250)));
    for (const [table, evs] of firstByTable) {
      const [log] = logs(`table ${table}: committed`);
      expect(log).toMatchObject({
        level: 'INFO',
        owner: 'req-commit-1',
        table,
        status: 'committed',
        rows: evs.length,
      });
      expect(log!.attempts).toBeGreaterThanOrEqual(1);
      const [m] = metric('RowsCommitted', 'table', table);
      expect(m?.record.RowsCommitted).toBe(evs.length);
      expect(m?.record.CommitLatency).toBeGreaterThanOrEqual(0);
      // The records arrived on 2025-03-14 (records()): freshness is how long ago that was.
      expect(m?.record.Freshness).toBeGreaterThan(Date.now() - Date.UTC(2025, 2, 14, 16));
    }
    const [run] = metric('TablesCommitted');
    expect(run?.record).toMatchObject({
      TablesCommitted: 3,
      CommitFailures: 0,
      TablesLocked: 0,
      DeferredTables: 0,
    });

    // The tables now exist: the next batch is written as data files, then committed.
    lines = [];
    expect(await ingest(kinesisEvent(v1.lines.slice(250), 250), context('req-ingest-2'))).toEqual({
      batchItemFailures: [],
    });
    for (const [table, evs] of groupByTable(v1.events.slice(250))) {
      const [m] = metric('RowsStaged', 'table', table);
      expect(m?.record).toMatchObject({ RowsStaged: evs.length, PendingRecords: 0 });
    }
    const s2 = await commit(SCHEDULED, context('req-commit-2', 60_000));
    expect(s2.rows).toBe(150);
    expect(await committedIds(p)).toEqual(expectedIds(v1.events));
  });

  it("a ledger fault for one table: the batch item failure is that table's first sequence; a redelivery lands all exactly once", async () => {
    const p = await startPipeline(dynamo, dir());
    const { logger, metrics } = tools();
    const v1 = generate(200, 'v1', 21);
    // The failing table: the one that shows up last, so records of other tables precede its first.
    const firstOf = new Map<string, number>();
    v1.events.forEach((e, i) => {
      if (!firstOf.has(tableOf(e))) firstOf.set(tableOf(e), i);
    });
    const [failing, k] = [...firstOf].reduce((a, b) => (b[1] > a[1] ? b : a));
    expect(k).toBeGreaterThan(0);
    const faulty = new FaultyLedger(p.ledger, { table: failing, op: 'appendEntry' });
    const broken = makeIngestHandler(() => runtimeOf(p, { ledger: faulty }), { logger, metrics });
    const healthy = makeIngestHandler(() => runtimeOf(p), { logger, metrics });
    const commit = makeCommitterHandler(() => runtimeOf(p), { logger, metrics });
    const recs = records(v1.lines, 0);

    const res = await broken(kinesisEvent(v1.lines), context('req-1'));
    expect(faulty.calls).toBe(1);
    expect(res).toEqual({ batchItemFailures: [{ itemIdentifier: recs[k]!.sequenceNumber }] });
    const [warn] = logs(/^ingest batch: some tables failed/);
    expect(warn).toMatchObject({ level: 'WARN', shardId: SHARD, failedSequence: recs[k]!.sequenceNumber });
    expect(warn!.failures).toEqual([
      {
        table: failing,
        firstSequence: recs[k]!.sequenceNumber,
        error: {
          name: 'FloeError',
          kind: 'Unexpected',
          retryable: true,
          message: `injected appendEntry failure for ${failing}`,
        },
      },
    ]);
    expect(metric('StagingFailures')[0]?.record.StagingFailures).toBe(1);

    // Lambda re-delivers from the reported record on: the other tables skip what they staged.
    lines = [];
    const again = await healthy(kinesisEvent(v1.lines.slice(k), k), context('req-2'));
    expect(again).toEqual({ batchItemFailures: [] });
    const staged = count(v1.events.slice(k), (e) => tableOf(e) !== failing);
    expect(logs('ingest batch')[0]).toMatchObject({ records: 200 - k, skipped: staged, failures: [] });
    expect(metric('RecordsSkipped')[0]?.record.RecordsSkipped).toBe(staged);

    await commit(SCHEDULED, context('req-3', 60_000));
    const ids = await committedIds(p);
    expect(ids).toEqual(expectedIds(v1.events));
    // Exactly once: as many rows as records sent (duplicates in the sample are distinct records).
    expect([...ids.values()].reduce((n, x) => n + x.length, 0)).toBe(200);
  });

  it('KPL aggregates: a failure inside an aggregate names its Kinesis record; the redelivery lands every user record once', async () => {
    const p = await startPipeline(dynamo, dir());
    const { logger, metrics } = tools();
    const v1 = generate(200, 'v1', 22);
    // 10 aggregates of 20 user records each, written by the awslabs module.
    const aggregates = Array.from({ length: 10 }, (_, a) =>
      awslabsAggregate(
        v1.lines
          .slice(a * 20, a * 20 + 20)
          .map((l, i) => ({ partitionKey: `u-${a}-${i}`, data: Buffer.from(l) })),
      ),
    );
    const recs = records(aggregates, 0);
    // The failing table: its first user record is not the first of its aggregate.
    const firstOf = new Map<string, number>();
    v1.events.forEach((e, i) => {
      if (!firstOf.has(tableOf(e))) firstOf.set(tableOf(e), i);
    });
    const [failing, k] = [...firstOf].find(([, i]) => i % 20 !== 0) ?? [...firstOf][1]!;
    const owner = Math.floor(k / 20);
    const faulty = new FaultyLedger(p.ledger, { table: failing, op: 'appendEntry' });
    const broken = makeIngestHandler(() => runtimeOf(p, { ledger: faulty }), { logger, metrics });
    const healthy = makeIngestHandler(() => runtimeOf(p), { logger, metrics });
    const commit = makeCommitterHandler(() => runtimeOf(p), { logger, metrics });
    const event = (from: number) => buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', recs.slice(from));

    const res = await broken(event(0), context('kpl-1'));
    expect(res).toEqual({ batchItemFailures: [{ itemIdentifier: recs[owner]!.sequenceNumber }] });
    const [warn] = logs(/^ingest batch: some tables failed/);
    // The failure itself is at the user record's position inside the aggregate.
    const sub = k % 20;
    const position = sub === 0 ? recs[owner]!.sequenceNumber : `${recs[owner]!.sequenceNumber}.${sub}`;
    expect(warn!.failures).toMatchObject([{ table: failing, firstSequence: position }]);
    expect(warn!.framing).toMatchObject({ aggregates: 10, aggregatedRecords: 200, records: 200 });
    expect(metric('UserRecords')[0]?.record.UserRecords).toBe(200);
    expect(metric('KplAggregates')[0]?.record.KplAggregates).toBe(10);

    // Lambda re-delivers from that Kinesis record: its user records staged before are skipped.
    lines = [];
    expect(await healthy(event(owner), context('kpl-2'))).toEqual({ batchItemFailures: [] });
    const staged = count(v1.events.slice(owner * 20), (e) => tableOf(e) !== failing);
    expect(logs('ingest batch')[0]).toMatchObject({ records: 10 - owner, skipped: staged, failures: [] });

    await commit(SCHEDULED, context('kpl-3', 60_000));
    const ids = await committedIds(p);
    expect(ids).toEqual(expectedIds(v1.events));
    expect([...ids.values()].reduce((n, x) => n + x.length, 0)).toBe(200);
  });

  it('DynamoDB change records and typed Debezium events: versioned and typed tables, truncates and tombstones counted', async () => {
    const p = await startPipeline(dynamo, dir(), { config: DEBEZIUM_CONFIG });
    const { logger, metrics } = tools();
    const ingest = makeIngestHandler(() => runtimeOf(p), { logger, metrics });
    const commit = makeCommitterHandler(() => runtimeOf(p), { logger, metrics });
    const [ddb] = fc.sample(dynamoDbStreamArb({ maxKeys: 6, minHistories: 20, maxHistories: 30 }), {
      seed: 9,
      numRuns: 1,
    });
    const [dbz] = fc.sample(typedDebeziumArb({ snapshot: 6, changes: 20 }), { seed: 9, numRuns: 1 });
    // One stream: the Debezium events in order, the DynamoDB changes shuffled among them.
    const mixed: string[] = [];
    const a = [...dbz!.lines];
    const b = [...ddb!.lines];
    while (a.length > 0 || b.length > 0) {
      if (a.length > 0 && (b.length === 0 || mixed.length % 2 === 0)) mixed.push(a.shift()!);
      else mixed.push(b.shift()!);
    }
    for (let i = 0; i < mixed.length; i += 100)
      expect(await ingest(kinesisEvent(mixed.slice(i, i + 100), i), context(`req-i-${i}`))).toEqual({
        batchItemFailures: [],
      });
    expect(metric('DeadLetters')).toEqual([]);
    const withoutRows = metric('ChangesWithoutRows').reduce(
      (n, m) => n + Number(m.record.ChangesWithoutRows),
      0,
    );
    expect(withoutRows).toBe(dbz!.noRow);
    const run = await commit(SCHEDULED, context('req-c-1', 60_000));
    expect(run.failed).toEqual([]);
    // Every change but the newest of its key again, later on the stream: all superseded by now.
    const newest = new Map<string, bigint>();
    for (const c of ddb!.changes) {
      const k = itemKey(c.item.artist, c.item.song);
      if ((newest.get(k) ?? -1n) < c.time) newest.set(k, c.time);
    }
    const older = ddb!.changes.filter((c) => c.time < newest.get(itemKey(c.item.artist, c.item.song))!);
    expect(older.length).toBeGreaterThan(0);
    lines = [];
    const lateLines = older.map((c, i) => changeRecord(c, i, 'MICROSECOND'));
    expect(await ingest(kinesisEvent(lateLines, 10_000), context('req-i-late'))).toEqual({
      batchItemFailures: [],
    });
    await commit(SCHEDULED, context('req-c-2', 60_000));
    const [late] = metric('ChangesSuperseded', 'table', 'music_catalog');
    // Each key's newest late change is the one compared (older ones of the key lose within the commit).
    expect(late?.record.ChangesSuperseded).toBe(
      new Set(older.map((c) => itemKey(c.item.artist, c.item.song))).size,
    );
    const engine = await openQueryEngine(openWarehouse(p.wh.dir));
    try {
      const music = (await engine.query('SELECT * FROM music_catalog')).rows;
      expect(
        new Map(music.map((r) => [itemKey(String(r.artist), BigInt(r.songid as bigint)), rowState(r)])),
      ).toEqual(new Map([...finalState(ddb!.changes)].map(([k, item]) => [k, itemState(item)])));
      const customers = (
        await engine.query(
          'SELECT id, CAST(balance AS VARCHAR) AS balance, typeof(birthday) AS t FROM customers',
        )
      ).rows;
      expect(new Map(customers.map((r) => [Number(r.id), [r.balance, r.t]]))).toEqual(
        new Map([...dbz!.customers].map(([id, c]) => [id, [decimalText(c.balance, 2), 'DATE']])),
      );
    } finally {
      engine.close();
    }
  });

  it('malformed records become dead letters counted per reason; a malformed envelope is thrown', async () => {
    const p = await startPipeline(dynamo, dir());
    const { logger, metrics } = tools();
    let built = 0;
    const ingest = makeIngestHandler(
      () => {
        built++;
        return runtimeOf(p);
      },
      { logger, metrics },
    );
    const good = generate(20, 'v1', 31).lines;
    const payloads = [
      ...good.slice(0, 5),
      '{"event_type": "ORDER", oops',
      ...good.slice(5),
      '[1, 2]',
      'not json',
    ];
    expect(await ingest(kinesisEvent(payloads), context('req-dl'))).toEqual({ batchItemFailures: [] });
    expect(metric('RecordsIn')[0]?.record.RecordsIn).toBe(23);
    const malformed = metric('DeadLetters', 'reason', 'malformed-json');
    expect(malformed).toHaveLength(1);
    expect(malformed[0]!.dimensions).toEqual([['service', 'reason']]);
    expect(malformed[0]!.record.DeadLetters).toBe(2);
    expect(metric('DeadLetters', 'reason', 'not-an-object')[0]?.record.DeadLetters).toBe(1);
    expect(logs('ingest batch')[0]?.deadLetters).toEqual({ 'malformed-json': 2, 'not-an-object': 1 });
    const kept = await p.deadLetters.list();
    expect(kept.map((d) => d.reason).sort()).toEqual(['malformed-json', 'malformed-json', 'not-an-object']);

    // An envelope Lambda would never send: thrown (Lambda retries / bisects), logged, nothing built.
    lines = [];
    const bad = { Records: [{ eventSource: 'aws:sqs' }] };
    await expect(ingest(bad, context('req-bad'))).rejects.toMatchObject({ kind: ErrorKind.DataInvalid });
    expect(logs('malformed Kinesis event')[0]).toMatchObject({ level: 'ERROR', requestId: 'req-bad' });
    expect(built).toBe(1);
    await expect(ingest({ Records: [] })).rejects.toThrow(/Records is empty/);
  });

  it('committer: a table that fails is logged at error level and retried by the next run; others commit', async () => {
    const p = await startPipeline(dynamo, dir());
    const { logger, metrics } = tools();
    const v1 = generate(150, 'v1', 41);
    const ingest = makeIngestHandler(() => runtimeOf(p), { logger, metrics });
    expect(await ingest(kinesisEvent(v1.lines), context('i-1'))).toEqual({ batchItemFailures: [] });
    const faulty = new FaultyLedger(p.ledger, { table: 'user_events', op: 'entriesAfter' });
    const broken = makeCommitterHandler(() => runtimeOf(p, {}, { ledger: faulty }), { logger, metrics });
    lines = [];
    const s = await broken(SCHEDULED, context('c-1', 60_000));
    expect(s).toMatchObject({
      committed: ['click_events', 'order_events'],
      failed: ['user_events'],
      deferred: [],
    });
    const [err] = logs(/^commit of user_events failed/);
    expect(err).toMatchObject({
      level: 'ERROR',
      table: 'user_events',
      status: 'failed',
      errorMessage: 'injected entriesAfter failure for user_events',
    });
    expect(metric('CommitFailures')[0]?.record.CommitFailures).toBe(1);
    expect(metric('RowsCommitted', 'table', 'user_events')).toEqual([]);
    expect((await committedIds(p)).has('user_events')).toBe(false);

    const healthy = makeCommitterHandler(() => runtimeOf(p), { logger, metrics });
    const again = await healthy(SCHEDULED, context('c-2', 60_000));
    expect(again).toMatchObject({ committed: ['user_events'], failed: [] });
    expect(await committedIds(p)).toEqual(expectedIds(v1.events));
  });

  it('committer: no table starts inside the time reserve (deferred to the next run); no context, no deadline', async () => {
    const p = await startPipeline(dynamo, dir());
    const { logger, metrics } = tools();
    const v1 = generate(60, 'v1', 51);
    await makeIngestHandler(() => runtimeOf(p), { logger, metrics })(kinesisEvent(v1.lines), context('i'));
    const commit = makeCommitterHandler(() => runtimeOf(p), { logger, metrics });
    lines = [];
    // 5 s left, reserve max(10 s, 30 %): the deadline has passed before the first table.
    const s = await commit(SCHEDULED, context('c-short', 5_000));
    expect(s).toMatchObject({ committed: [], deferred: ['click_events', 'order_events', 'user_events'] });
    expect(metric('DeferredTables')[0]?.record.DeferredTables).toBe(3);
    expect(await committedIds(p)).toEqual(new Map());
    // 100 s left: 70 s to start tables in.
    const s2 = await commit(SCHEDULED, context('c-long', 100_000));
    expect(s2.committed).toEqual(['click_events', 'order_events', 'user_events']);
    expect(s2.owner).toBe('c-long');
    // Nothing left; without a context the owner is generated.
    const s3 = await commit(SCHEDULED);
    expect(s3).toMatchObject({ committed: [], deferred: [], rows: 0 });
    expect(s3.owner).toMatch(/^committer-[0-9a-f-]{36}$/);
    expect(await committedIds(p)).toEqual(expectedIds(v1.events));
  });
});

describe('Lambda entry points', () => {
  it('read the environment on the first invocation, not at import, and name the missing variable', async () => {
    for (const v of [
      'STAGING_URI',
      'DEAD_LETTER_URI',
      'LEDGER_TABLE',
      'WAREHOUSE_URI',
      'FLOE_CONFIG',
      'CATALOG_TYPE',
    ])
      vi.stubEnv(v, '');
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    const event = kinesisEvent(generate(1, 'v1', 61).lines);
    const e = await ingestEntry(event).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(FloeError);
    expect((e as FloeError).kind).toBe(ErrorKind.ConfigInvalid);
    expect((e as FloeError).message).toContain('STAGING_URI is required');
    await expect(committerEntry(SCHEDULED)).rejects.toThrow(/LEDGER_TABLE is required/);
    expect(logs('committer run failed')[0]).toMatchObject({ level: 'ERROR', service: 'floe-committer' });
  });

  it('awsRuntime wires the adapters the settings name', () => {
    const base = {
      STAGING_URI: 's3://staging/floe',
      DEAD_LETTER_URI: 's3://lake/dead',
      LEDGER_TABLE: 'floe-ledger',
      AWS_REGION: 'eu-west-1',
      LEASE_MS: '90000',
      COMMIT_CONCURRENCY: '6',
    };
    const glue = awsRuntime(readSettings({ ...base, WAREHOUSE_URI: 's3://lake/wh' }));
    try {
      expect(glue.catalog).toBeInstanceOf(GlueCatalog);
      expect((glue.catalog as GlueCatalog).warehouse).toBe('s3://lake/wh');
      expect(glue.registry).toBeUndefined();
      const i = glue.ingestDeps();
      expect(i.stagingUri).toBe('s3://staging/floe');
      expect(i.tables).toBe(glue.tables); // one table cache per container
      expect(i.registry).toBeUndefined();
      const c = glue.committerDeps('req-9');
      expect([c.owner, c.leaseMs, glue.commitConcurrency]).toEqual(['req-9', 90_000, 6]);
      expect(c.ledger).toBe(i.ledger);
    } finally {
      glue.destroy();
    }
    const tables = awsRuntime(
      readSettings({
        ...base,
        CATALOG_TYPE: 's3tables',
        TABLE_BUCKET_ARN: 'arn:aws:s3tables:eu-west-1:123456789012:bucket/floe',
        FLOE_CONFIG: '{"format":"avro-gsr"}',
        SCHEMA_REGISTRY_NAME: 'floe-registry',
      }),
    );
    try {
      expect(tables.catalog).toBeInstanceOf(S3TablesCatalog);
      expect(tables.registry).toBeInstanceOf(CachedSchemaRegistry);
      expect(tables.ingestDeps().registry).toBe(tables.registry);
      expect(tables.committerDeps('x').registry).toBe(tables.registry);
    } finally {
      tables.destroy();
    }
  });
});
