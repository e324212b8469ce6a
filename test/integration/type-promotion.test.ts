/**
 * Type promotion and dead letters on the streaming path (ingest → pending fragment → committer):
 * a JSON value beyond an `int` column, and a new Avro writer schema version that widens
 * `int → long`, `float → double` and a decimal's precision, evolve the table (the ingest stages
 * the records as pending, the committer promotes and rewrites them); a dead-lettered record never
 * changes the table's schema or spec, whether the ingest or the committer rejects it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSchemaRegistry } from '../../lambdas/src/adapters/local/local-schema-registry.ts';
import { fixedClock, seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { commitTable } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { loadSources } from '../../lambdas/src/app/load.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import type { TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import { currentSchema, defaultSpec } from '../../lambdas/src/iceberg/table-metadata.ts';
import { typeToString } from '../../lambdas/src/iceberg/types.ts';
import { IcebergQueryEngine } from '../../lambdas/src/query/engine.ts';
import { encodeGsrFrame } from '../../lambdas/src/records/gsr.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { NOW_MS, tempDir } from '../helpers/e2e.ts';
import { batchOf, type Pipeline, records, startPipeline } from '../helpers/pipeline.ts';
import { avscEncode } from '../unit/records/avro-sample-schemas.ts';

let dynamo: LocalDynamo;
let tmp: ReturnType<typeof tempDir>;
let n = 0;
beforeAll(async () => {
  dynamo = await startDynalite();
  tmp = tempDir('floe-stream-promote-');
});
afterAll(async () => {
  await dynamo?.close();
  tmp?.cleanup();
});
const dir = () => `${tmp.dir}/p${n++}`;

const NS = 'default';
const SHARD = 'shardId-000000000000';

async function meta(p: Pipeline, name: string): Promise<TableMetadata> {
  return (await p.wh.catalog.loadTable({ namespace: NS, name })).metadata;
}

function types(m: TableMetadata): Record<string, string> {
  return Object.fromEntries(currentSchema(m).fields.map((f) => [f.name, typeToString(f.type)]));
}

/** Rows of the table's current snapshot through Floe's query engine (by field id). */
async function query(p: Pipeline, name: string, sql: string): Promise<Record<string, unknown>[]> {
  const engine = new IcebergQueryEngine({
    read: (uri) => p.wh.store.get(uri),
    resolvePath: (uri) => p.wh.store.pathOf(uri),
  });
  try {
    await engine.registerTable('t', await meta(p, name));
    return (await engine.query(sql)).rows;
  } finally {
    engine.close();
  }
}

const order = (id: string, fields: string) => `{"event_type":"ORDER","event_id":"${id}",${fields}}`;

describe('JSON records', () => {
  it('a value beyond int32 goes pending and the committer promotes the column; a dead letter adds nothing', async () => {
    const hinted = { inference: { hints: { order_events: { qty: 'int', amount: 'decimal(9,2)' } } } };
    const plain = parseConfig({});
    const p = await startPipeline(dynamo, dir(), { config: hinted });
    await ingestBatch(p.ingestDeps(), batchOf(SHARD, records([order('o1', '"qty":7,"amount":12.5')], 0)));
    expect((await commitTable(p.committerDeps(), 'order_events')).status).toBe('committed');
    const created = await meta(p, 'order_events');
    expect(types(created)).toMatchObject({ qty: 'int', amount: 'decimal(9,2)' });

    // o3 would promote qty too and brings `coupon` and the partition candidate `region`, but its
    // amount has a third fractional digit. Both change the table, so both go pending: the
    // committer judges them together and dead-letters o3 without letting it shape anything.
    const r = await ingestBatch(
      p.ingestDeps({ config: plain }),
      batchOf(
        SHARD,
        records(
          [
            order('o2', '"qty":3000000000,"amount":3.25'),
            order('o3', '"qty":4000000000,"amount":1.234,"coupon":"X1","region":"eu"'),
          ],
          1,
        ),
      ),
    );
    expect(r.failures).toEqual([]);
    expect(r.deadLetters).toEqual({});
    expect(r.tables.map((t) => [t.table, t.path, t.pending])).toEqual([['order_events', 'pending', 2]]);

    const c = await commitTable(p.committerDeps({ config: plain }), 'order_events');
    expect(c).toMatchObject({
      status: 'committed',
      rewritten: 1,
      deadLetters: { 'invalid-value': 1 },
      schemaChanges: ['promoted column order_events.qty from int to long'],
    });
    const after = await meta(p, 'order_events');
    expect(after.schemas).toHaveLength(2);
    expect(types(after)).toEqual({
      event_type: 'string',
      event_id: 'string',
      qty: 'long',
      amount: 'decimal(9,2)',
    });
    expect(defaultSpec(after).fields).toEqual([]);
    expect(
      await query(
        p,
        'order_events',
        'SELECT event_id, CAST(qty AS VARCHAR) AS q, amount FROM t ORDER BY event_id',
      ),
    ).toEqual([
      { event_id: 'o1', q: '7', amount: '12.50' },
      { event_id: 'o2', q: '3000000000', amount: '3.25' },
    ]);
    const letters = await p.deadLetters.list();
    expect(letters.map((d) => [d.reason, d.raw])).toEqual([
      ['invalid-value', order('o3', '"qty":4000000000,"amount":1.234,"coupon":"X1","region":"eu"')],
    ]);
  });

  it('the committer dead-letters a pending record the table it finds cannot take, and evolves nothing for it', async () => {
    const p = await startPipeline(dynamo, dir());
    // No table yet: both records are pending (nothing to check their amounts against).
    const r = await ingestBatch(
      p.ingestDeps(),
      batchOf(
        SHARD,
        records([order('o1', '"amount":2.5'), order('o2', '"amount":1.234,"coupon":"X1","region":"eu"')]),
      ),
    );
    expect(r.deadLetters).toEqual({});
    expect(r.tables.map((t) => [t.path, t.pending])).toEqual([['pending', 2]]);
    // Meanwhile another writer creates the table with amount decimal(9,2).
    const loaded = await loadSources(
      {
        catalog: p.wh.catalog,
        store: p.wh.store,
        clock: fixedClock(NOW_MS),
        ids: seededIds(31),
        config: parseConfig({ inference: { hints: { order_events: { amount: 'decimal(9,2)' } } } }),
        sleep: async () => undefined,
        onDeadLetter: () => undefined,
      },
      [{ name: 'other-writer', lines: [order('o0', '"amount":1.25')] }],
    );
    expect(loaded.rows).toBe(1);
    const before = await meta(p, 'order_events');

    const c = await commitTable(p.committerDeps(), 'order_events');
    expect(c).toMatchObject({ status: 'committed', rewritten: 1, deadLetters: { 'invalid-value': 1 } });
    expect(c.schemaChanges).toEqual([]);
    const after = await meta(p, 'order_events');
    expect(after.schemas).toEqual(before.schemas);
    expect(after['last-column-id']).toBe(before['last-column-id']);
    expect(after['partition-specs']).toEqual(before['partition-specs']);
    expect(Object.keys(types(after))).toEqual(['event_type', 'event_id', 'amount']);
    expect(await query(p, 'order_events', 'SELECT event_id, amount FROM t ORDER BY event_id')).toEqual([
      { event_id: 'o0', amount: '1.25' },
      { event_id: 'o1', amount: '2.50' },
    ]);
  });
});

describe('Avro records', () => {
  const v1 = {
    type: 'record',
    name: 'Measure',
    namespace: 'com.example',
    fields: [
      { name: 'event_id', type: 'string' },
      { name: 'qty', type: 'int' },
      { name: 'score', type: 'float' },
      { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } },
    ],
  };
  const v2 = {
    ...v1,
    fields: [
      { name: 'event_id', type: 'string' },
      { name: 'qty', type: 'long' },
      { name: 'score', type: 'double' },
      { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 12, scale: 2 } },
    ],
  };
  /** A decimal's unscaled value as Avro `bytes`: big-endian two's complement. */
  const unscaled = (v: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v);
    return b;
  };

  it('a writer schema version that widens int → long, float → double and decimal precision evolves the table', async () => {
    const registry = new LocalSchemaRegistry({ ids: seededIds(5) });
    const s1 = await registry.register('Measure', JSON.stringify(v1));
    const s2 = await registry.register('Measure', JSON.stringify(v2));
    expect(s2.versionNumber).toBe(2);
    const p = await startPipeline(dynamo, dir(), { config: { format: 'avro-gsr' }, registry });
    const m1 = encodeGsrFrame(
      s1.id,
      avscEncode(v1, { event_id: 'm1', qty: 7, score: 1.5, amount: unscaled(1250n) }),
    );
    await ingestBatch(p.ingestDeps(), batchOf(SHARD, records([m1], 0)));
    expect((await commitTable(p.committerDeps(), 'measure')).status).toBe('committed');
    const created = await meta(p, 'measure');
    expect(types(created)).toEqual({
      event_id: 'string',
      qty: 'int',
      score: 'float',
      amount: 'decimal(9,2)',
    });

    const m2 = encodeGsrFrame(
      s2.id,
      avscEncode(v2, { event_id: 'm2', qty: 3000000000, score: 1e39, amount: unscaled(123456789012n) }),
    );
    const m3 = encodeGsrFrame(
      s1.id,
      avscEncode(v1, { event_id: 'm3', qty: -5, score: -2.25, amount: unscaled(-1n) }),
    );
    const r = await ingestBatch(p.ingestDeps(), batchOf(SHARD, records([m2, m3], 1)));
    expect(r.failures).toEqual([]);
    expect(r.deadLetters).toEqual({});
    // Version 2 does not fit the table as it is: the committer must evolve it first.
    expect(r.tables.map((t) => [t.table, t.path, t.pending])).toEqual([['measure', 'pending', 2]]);

    const c = await commitTable(p.committerDeps(), 'measure');
    expect(c).toMatchObject({ status: 'committed', rewritten: 2, deadLetters: {} });
    expect(c.schemaChanges).toEqual([
      'promoted column measure.qty from int to long',
      'promoted column measure.score from float to double',
      'promoted column measure.amount from decimal(9,2) to decimal(12,2)',
    ]);
    const after = await meta(p, 'measure');
    expect(types(after)).toEqual({
      event_id: 'string',
      qty: 'long',
      score: 'double',
      amount: 'decimal(12,2)',
    });
    // Same field ids: promoted, not replaced.
    expect(currentSchema(after).fields.map((f) => f.id)).toEqual(
      currentSchema(created).fields.map((f) => f.id),
    );
    expect(
      await query(
        p,
        'measure',
        'SELECT event_id, CAST(qty AS VARCHAR) AS q, score, amount FROM t ORDER BY event_id',
      ),
    ).toEqual([
      { event_id: 'm1', q: '7', score: 1.5, amount: '12.50' },
      { event_id: 'm2', q: '3000000000', score: 1e39, amount: '1234567890.12' },
      { event_id: 'm3', q: '-5', score: -2.25, amount: '-0.01' },
    ]);
  });
});
