import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitTable, runCommitter } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { currentSchema } from '../../lambdas/src/iceberg/table-metadata.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { generate, groupByTable, sorted, tempDir } from '../helpers/e2e.ts';
import { batchOf, committedIds, records, startPipeline } from '../helpers/pipeline.ts';

let dynamo: LocalDynamo;
const dirs: (() => void)[] = [];
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  for (const d of dirs) d();
});

function dir(): string {
  const t = tempDir('floe-stream-');
  dirs.push(t.cleanup);
  return t.dir;
}

function expectedIds(events: readonly Record<string, unknown>[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [t, evs] of groupByTable(events)) out.set(t, sorted(evs.map((e) => String(e.event_id))));
  return out;
}

describe('ingest → committer', () => {
  it('creates tables from pending fragments, then stages data files that fit, and evolves for v2', async () => {
    const p = await startPipeline(dynamo, dir());
    const v1 = generate(600, 'v1', 1);
    const v2 = generate(400, 'v2', 2);
    const shard = 'shardId-000000000000';
    // First batch: no table yet → pending fragments.
    const r1 = await ingestBatch(p.ingestDeps(), batchOf(shard, records(v1.lines.slice(0, 300), 0)));
    expect(r1.failures).toEqual([]);
    expect(r1.tables.every((t) => t.path === 'pending')).toBe(true);
    const c1 = await runCommitter(p.committerDeps());
    expect(c1.tables.map((t) => [t.table, t.status, t.created])).toEqual([
      ['click_events', 'committed', true],
      ['order_events', 'committed', true],
      ['user_events', 'committed', true],
    ]);
    // Second batch: tables exist and fit → data files (the fast path).
    const r2 = await ingestBatch(p.ingestDeps(), batchOf(shard, records(v1.lines.slice(300), 300)));
    expect(r2.tables.map((t) => t.path)).toEqual(['columnar', 'columnar', 'columnar']);
    // v2 adds columns → pending again; the committer evolves.
    const r3 = await ingestBatch(p.ingestDeps(), batchOf(shard, records(v2.lines, 600)));
    // order_events has no v2 field: it still fits.
    expect(r3.tables.map((t) => [t.table, t.path])).toEqual([
      ['click_events', 'pending'],
      ['order_events', 'columnar'],
      ['user_events', 'pending'],
    ]);
    const c2 = await runCommitter(p.committerDeps());
    expect(c2.tables.every((t) => t.status === 'committed')).toBe(true);
    const ids = await committedIds(p);
    expect(ids).toEqual(expectedIds([...v1.events, ...v2.events]));
    const click = await p.wh.catalog.loadTable({ namespace: 'default', name: 'click_events' });
    const cols = currentSchema(click.metadata).fields.map((f) => f.name);
    expect(cols).toContain('scroll_depth');
    // Nothing left: a further run commits nothing.
    const c3 = await runCommitter(p.committerDeps());
    expect(c3.tables).toEqual([]);
    // A replay of the whole stream (a retry) stages nothing new.
    const again = await ingestBatch(p.ingestDeps(), batchOf(shard, records(v1.lines, 0)));
    expect(again.skipped).toBe(600);
    expect(await commitTable(p.committerDeps(), 'order_events')).toMatchObject({
      status: 'nothing-to-commit',
    });
    expect(await committedIds(p)).toEqual(expectedIds([...v1.events, ...v2.events]));
  });
});

describe('a table that nothing can create', () => {
  it('dead-letters records of an Avro schema without fields and settles their entries', async () => {
    const { LocalSchemaRegistry } = await import('../../lambdas/src/adapters/local/local-schema-registry.ts');
    const { seededIds } = await import('../../lambdas/src/adapters/local/system-clock.ts');
    const { encodeGsrFrame } = await import('../../lambdas/src/records/gsr.ts');
    const registry = new LocalSchemaRegistry({ ids: seededIds(3) });
    const empty = await registry.register(
      'Nothing',
      JSON.stringify({ type: 'record', name: 'Nothing', fields: [] }),
    );
    const p = await startPipeline(dynamo, dir(), { config: { format: 'avro-gsr' }, registry });
    const shard = 'shardId-000000000001';
    const payloads = [0, 1, 2].map(() => encodeGsrFrame(empty.id, new Uint8Array(0)));
    const r = await ingestBatch(p.ingestDeps(), batchOf(shard, records(payloads)));
    expect(r.tables).toMatchObject([{ table: 'nothing', pending: 3 }]);
    const c = await commitTable(p.committerDeps(), 'nothing');
    expect(c).toMatchObject({
      status: 'nothing-to-commit',
      entries: 1,
      deadLetters: { 'no-typed-values': 3 },
    });
    expect(await p.wh.catalog.tableExists({ namespace: 'default', name: 'nothing' })).toBe(false);
    const letters = await p.deadLetters.list();
    expect(letters.map((d) => [d.reason, d.sequenceNumber])).toEqual(
      records(payloads).map((x) => ['no-typed-values', x.sequenceNumber]),
    );
    expect(letters[0]!.rawBase64).toBe(Buffer.from(payloads[0]!).toString('base64'));
    // Settled: a later run finds nothing, and a redelivery is skipped.
    expect(await commitTable(p.committerDeps(), 'nothing')).toMatchObject({
      status: 'nothing-to-commit',
      entries: 0,
    });
    const again = await ingestBatch(p.ingestDeps(), batchOf(shard, records(payloads)));
    expect(again.skipped).toBe(3);
  });
});

describe('a backlog of pending records', () => {
  it('is committed over several runs within the per-commit cap, exactly once', async () => {
    const p = await startPipeline(dynamo, dir());
    const v1 = generate(900, 'v1', 7);
    const shard = 'shardId-000000000002';
    // Nine batches before any commit: every record is pending (no table yet).
    for (let b = 0; b < 9; b++) {
      await ingestBatch(
        p.ingestDeps(),
        batchOf(shard, records(v1.lines.slice(b * 100, b * 100 + 100), b * 100)),
      );
    }
    const capped = p.committerDeps({ maxPendingRecordsPerCommit: 120 });
    const runs: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await commitTable(capped, 'order_events');
      if (r.status !== 'committed') break;
      runs.push(r.rewritten);
    }
    // Each batch holds ~40 ORDER records: at most three entries (≤ 120 records) per commit.
    expect(runs.length).toBeGreaterThan(2);
    for (const n of runs) expect(n).toBeLessThanOrEqual(120);
    const ids = await committedIds(p);
    expect(ids.get('order_events')).toEqual(expectedIds(v1.events).get('order_events'));
  });
});
