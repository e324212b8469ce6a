/**
 * Debezium with schemas on a stream (issue 20): the ingest handler's path and the committer, each
 * with a config object of its own (as two Lambdas have), so the committer learns the columns'
 * types only from the staged fragments. Tombstones and truncates are counted by the ingest, never
 * dead letters; the tables have the schema's types and the model's rows; a batch re-delivered
 * after a commit changes nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommitter } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { openQueryEngine } from '../../lambdas/src/cli/query-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import {
  DEBEZIUM_CONFIG,
  DECLARED_REQUIRED,
  dateText,
  decimalText,
  typedDebeziumArb,
} from '../fuzz/debezium-typed.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { openDuck, tempDir } from '../helpers/e2e.ts';
import { batchOf, records, startPipeline } from '../helpers/pipeline.ts';
import { requiredColumns } from '../helpers/table-files.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

let dynamo: LocalDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
});

describe('Debezium with schemas through ingest and committer', () => {
  it('types columns from the staged schemas and keeps exactly the last state of each key', async () => {
    const [s] = fc.sample(typedDebeziumArb({ snapshot: 10, changes: 60 }), { seed: 77, numRuns: 1 });
    const stream = s!;
    const t = tempDir('floe-debezium-stream-');
    try {
      const p = await startPipeline(dynamo, t.dir, { config: DEBEZIUM_CONFIG });
      const recs = records(stream.lines);
      let noRow = 0;
      for (let i = 0; i < recs.length; i += 25) {
        const r = await ingestBatch(p.ingestDeps(), batchOf('shardId-000000000000', recs.slice(i, i + 25)));
        expect(r.failures).toEqual([]);
        expect(r.deadLetters).toEqual({});
        noRow += r.noRowChanges ?? 0;
      }
      expect(noRow).toBe(stream.noRow);
      const committer = () => p.committerDeps({ config: parseConfig(DEBEZIUM_CONFIG) });
      await runCommitter(committer());
      // The first batch again (a re-delivery after the commit): nothing changes.
      await ingestBatch(
        p.ingestDeps({ config: parseConfig(DEBEZIUM_CONFIG) }),
        batchOf('shardId-000000000000', recs.slice(0, 25)),
      );
      await runCommitter(committer());
      expect(await p.ledger.tablesWithStagedWork()).toEqual([]);
      await expectWarehouseValid(p.wh);
      // The committer learns each column's `optional` from the staged fragments too: the columns
      // declared `optional: false` are required, in the schema and in every data file.
      const duck = await openDuck();
      try {
        for (const table of ['customers', 'orders'] as const) {
          const req = await requiredColumns(duck, p.wh, { namespace: 'default', name: table });
          expect(req.schema).toEqual(DECLARED_REQUIRED[table]);
          expect(req.files.length).toBeGreaterThan(0);
          for (const f of req.files) expect(f).toEqual(DECLARED_REQUIRED[table]);
        }
      } finally {
        duck.close();
      }
      const engine = await openQueryEngine(openWarehouse(t.dir));
      try {
        const q = async (sql: string) => (await engine.query(sql)).rows;
        const types = Object.fromEntries(
          (
            await q(
              "SELECT column_name AS c, data_type AS t FROM information_schema.columns WHERE table_name = 'customers'",
            )
          ).map((r) => [r.c, String(r.t)]),
        );
        expect(types).toMatchObject({
          id: 'INTEGER',
          balance: 'DECIMAL(10,2)',
          birthday: 'DATE',
          created_at: 'TIMESTAMP',
          updated_at: 'TIMESTAMP WITH TIME ZONE',
          opens: 'TIME',
          tier: 'INTEGER',
        });
        const rows = await q(
          'SELECT id, CAST(balance AS VARCHAR) AS balance, CAST(birthday AS VARCHAR) AS birthday, epoch_us(created_at) AS created FROM customers',
        );
        expect(new Map(rows.map((r) => [Number(r.id), [r.balance, r.birthday, r.created]]))).toEqual(
          new Map(
            [...stream.customers].map(([id, c]) => [
              id,
              [decimalText(c.balance, 2), dateText(c.birthday), c.createdAt],
            ]),
          ),
        );
        const orders = await q('SELECT order_id, CAST(amount AS VARCHAR) AS amount FROM orders');
        expect(new Map(orders.map((r) => [BigInt(r.order_id as bigint), r.amount]))).toEqual(
          new Map([...stream.orders].map(([id, o]) => [id, decimalText(o.amount, 3)])),
        );
      } finally {
        engine.close();
      }
    } finally {
      t.cleanup();
    }
  }, 120_000);
});
