/**
 * The handlers' per-table metrics as `PER_TABLE_METRICS` allows (issue #14), and one committer run
 * at a time without reserved concurrency. The ingest and committer handlers run on real local parts
 * (dynalite ledger and lock, a local-disk warehouse) with the sample's events (three tables); a
 * recording metrics sink keeps every EMF record they flush (its dimensions and values).
 *
 * - `off`: no record carries a `table` dimension; the run-level record carries the totals.
 * - `top:1`: the busiest table, and `(other)` with the rest combined; totals as always.
 * - `on`: one record per table.
 * - A committer invocation that finds the run lease held does nothing (`RunsSkipped`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCommitterHandler } from '../../lambdas/src/handlers/committer.ts';
import { makeIngestHandler } from '../../lambdas/src/handlers/ingest.ts';
import type { HandlerRuntime, MetricsSink, MetricUnitName } from '../../lambdas/src/handlers/runtime.ts';
import { OTHER_TABLES, type PerTableMetrics } from '../../lambdas/src/handlers/table-metrics.ts';
import { buildKinesisEvent } from '../../lambdas/src/records/kinesis-event.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { generate, groupByTable, tempDir } from '../helpers/e2e.ts';
import { type Pipeline, records, startPipeline } from '../helpers/pipeline.ts';

const SHARD = 'shardId-000000000001';
const STREAM_ARN = 'arn:aws:kinesis:us-east-1:000000000000:stream/floe-test';

interface Flushed {
  readonly dimensions: Record<string, string>;
  readonly values: Record<string, number>;
}

/** Keeps what each `publishStoredMetrics` flushed, like one EMF line each. */
class RecordingSink implements MetricsSink {
  readonly flushed: Flushed[] = [];
  private dimensions: Record<string, string> = {};
  private values: Record<string, number> = {};
  addDimension(name: string, value: string): void {
    this.dimensions[name] = value;
  }
  addMetric(name: string, _unit: MetricUnitName, value: number): void {
    this.values[name] = value;
  }
  publishStoredMetrics(): void {
    this.flushed.push({ dimensions: this.dimensions, values: this.values });
    this.dimensions = {};
    this.values = {};
  }
  /** Records with a `table` dimension, by table. */
  perTable(metric: string): Map<string, number> {
    return new Map(
      this.flushed
        .filter((f) => f.dimensions.table !== undefined && f.values[metric] !== undefined)
        .map((f) => [f.dimensions.table!, f.values[metric]!]),
    );
  }
  /** The record without dimensions carrying `metric`. */
  run(metric: string): Record<string, number> | undefined {
    return this.flushed.find((f) => Object.keys(f.dimensions).length === 0 && f.values[metric] !== undefined)
      ?.values;
  }
}

let dynamo: LocalDynamo;
const dirs: (() => void)[] = [];
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  for (const d of dirs) d();
});

async function pipeline(): Promise<Pipeline> {
  const t = tempDir('floe-table-metrics-');
  dirs.push(t.cleanup);
  return startPipeline(dynamo, t.dir);
}

function runtimeOf(p: Pipeline): HandlerRuntime {
  return {
    ingestDeps: () => p.ingestDeps(),
    committerDeps: (owner) => p.committerDeps({ owner }),
  };
}

/** Ingests `lines` then commits them, each handler with `policy`; returns the two sinks. */
async function run(policy: PerTableMetrics, lines: readonly string[]) {
  const p = await pipeline();
  const ingestSink = new RecordingSink();
  const commitSink = new RecordingSink();
  const ingest = makeIngestHandler(() => runtimeOf(p), { metrics: ingestSink, perTableMetrics: policy });
  const commit = makeCommitterHandler(() => runtimeOf(p), { metrics: commitSink, perTableMetrics: policy });
  expect(await ingest(buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', records(lines)))).toEqual({
    batchItemFailures: [],
  });
  const summary = await commit({}, { awsRequestId: 'req-commit', getRemainingTimeInMillis: () => 60_000 });
  return { ingestSink, commitSink, summary };
}

describe('per-table metrics: off, top:N, on', () => {
  const sample = generate(300, 'v1', 5);
  const counts = new Map([...groupByTable(sample.events)].map(([t, evs]) => [t, evs.length]));
  const tables = [...counts.keys()].sort();
  const busiest = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;

  it('the sample spreads over three tables of different sizes', () => {
    expect(tables).toHaveLength(3);
    expect(new Set(counts.values()).size).toBeGreaterThan(1);
  });

  it('off: no record has a table dimension; the run-level records carry the totals', async () => {
    const { ingestSink, commitSink, summary } = await run({ mode: 'off' }, sample.lines);
    expect(summary.rows).toBe(300);
    for (const sink of [ingestSink, commitSink])
      for (const f of sink.flushed) expect(f.dimensions.table).toBeUndefined();
    // Pending records (the tables are new), summed over the tables, beside RecordsIn.
    expect(ingestSink.run('RecordsIn')).toMatchObject({ RecordsIn: 300, PendingRecords: 300, RowsStaged: 0 });
    expect(ingestSink.run('RecordsIn')!.StagedBytes).toBeGreaterThan(0);
    const committed = commitSink.run('TablesCommitted')!;
    expect(committed).toMatchObject({ TablesCommitted: 3, RowsCommitted: 300, CommitFailures: 0 });
    expect(committed.Freshness).toBeGreaterThanOrEqual(0);
    expect(committed.CommitLatency).toBeGreaterThanOrEqual(0);
  });

  it('top:1: the busiest table, and (other) with the rest combined; totals as always', async () => {
    const { ingestSink, commitSink } = await run({ mode: 'top', n: 1 }, sample.lines);
    const pending = ingestSink.perTable('PendingRecords');
    expect([...pending.keys()].sort()).toEqual([busiest[0], OTHER_TABLES].sort());
    expect(pending.get(busiest[0])).toBe(busiest[1]);
    expect(pending.get(OTHER_TABLES)).toBe(300 - busiest[1]);
    const rows = commitSink.perTable('RowsCommitted');
    expect([...rows.keys()].sort()).toEqual([busiest[0], OTHER_TABLES].sort());
    expect(rows.get(OTHER_TABLES)).toBe(300 - busiest[1]);
    expect(commitSink.run('TablesCommitted')).toMatchObject({ RowsCommitted: 300 });
    expect(ingestSink.run('RecordsIn')).toMatchObject({ PendingRecords: 300 });
  });

  it('on: one record per table, and the totals', async () => {
    const { ingestSink, commitSink } = await run({ mode: 'on' }, sample.lines);
    expect(Object.fromEntries(ingestSink.perTable('PendingRecords'))).toEqual(Object.fromEntries(counts));
    expect(Object.fromEntries(commitSink.perTable('RowsCommitted'))).toEqual(Object.fromEntries(counts));
    expect(commitSink.run('TablesCommitted')).toMatchObject({ RowsCommitted: 300 });
  });
});

describe('one committer run at a time, without reserved concurrency', () => {
  it('a run that finds the run lease held does nothing; the next one commits', async () => {
    const p = await pipeline();
    const sink = new RecordingSink();
    const ingest = makeIngestHandler(() => runtimeOf(p), { metrics: sink });
    const commit = makeCommitterHandler(() => runtimeOf(p), { metrics: sink });
    await ingest(buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', records(generate(50, 'v1', 9).lines)));

    // Another invocation's run holds the lease (as an overlapping scheduled run would).
    const held = await p.lock.acquire('run/committer', 'other-run', 60_000);
    expect(held).toBeDefined();
    const skipped = await commit({}, { awsRequestId: 'req-2', getRemainingTimeInMillis: () => 60_000 });
    expect(skipped).toMatchObject({ skipped: 'another run in progress', committed: [], locked: [], rows: 0 });
    expect(sink.run('RunsSkipped')).toEqual({ RunsSkipped: 1 });
    expect(sink.run('TablesCommitted')).toBeUndefined();

    await p.lock.release(held!);
    const ran = await commit({}, { awsRequestId: 'req-3', getRemainingTimeInMillis: () => 60_000 });
    expect(ran.skipped).toBeUndefined();
    expect(ran.rows).toBe(50);
    // The run released its lease: the next run is not skipped either.
    const again = await commit({}, { awsRequestId: 'req-4', getRemainingTimeInMillis: () => 60_000 });
    expect(again.skipped).toBeUndefined();
  });

  it('two overlapping invocations: one commits, the other returns at once', async () => {
    const p = await pipeline();
    const ingest = makeIngestHandler(() => runtimeOf(p), { metrics: new RecordingSink() });
    const commit = makeCommitterHandler(() => runtimeOf(p), { metrics: new RecordingSink() });
    await ingest(buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', records(generate(80, 'v1', 3).lines)));
    const [a, b] = await Promise.all([
      commit({}, { awsRequestId: 'req-a', getRemainingTimeInMillis: () => 60_000 }),
      commit({}, { awsRequestId: 'req-b', getRemainingTimeInMillis: () => 60_000 }),
    ]);
    expect([a.skipped, b.skipped].filter((x) => x !== undefined)).toEqual(['another run in progress']);
    expect(a.rows + b.rows).toBe(80);
    expect([...a.locked, ...b.locked]).toEqual([]);
  });
});
