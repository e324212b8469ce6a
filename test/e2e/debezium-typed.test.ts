/**
 * Debezium with schemas (issue 20): change events as Debezium Server writes them by default,
 * `{schema, payload}`, in the shapes of its PostgreSQL and MySQL connectors, with snapshot reads,
 * deletes and their tombstones, a truncate and a column added mid-stream. Loaded with `floe load`
 * (drawn from a generator), the tables must have the columns the schemas declare (decimal(P,S),
 * date, timestamp, timestamptz, time, int, long) and exactly the model's rows; tombstones and
 * truncates change nothing and are counted, never dead letters.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadCommand } from '../../lambdas/src/cli/load-command.ts';
import { openQueryEngine } from '../../lambdas/src/cli/query-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import {
  DEBEZIUM_CONFIG,
  DECLARED_REQUIRED,
  dateText,
  decimalText,
  instantMs,
  type LooseOrder,
  orderLine,
  ordersArb,
  typedDebeziumArb,
} from '../fuzz/debezium-typed.ts';
import { openDuck, tempDir } from '../helpers/e2e.ts';
import { requiredColumns } from '../helpers/table-files.ts';

describe('Debezium change events with schemas', () => {
  it('floe load types columns from the schema and keeps exactly the last state of each key', async () => {
    await fc.assert(
      fc.asyncProperty(typedDebeziumArb({ snapshot: 8, changes: 30 }), async (s) => {
        const tmp = tempDir('floe-debezium-typed-');
        try {
          const file = join(tmp.dir, 'changes.ndjson');
          writeFileSync(file, `${s.lines.join('\n')}\n`);
          const cfg = join(tmp.dir, 'floe.config.json');
          writeFileSync(cfg, JSON.stringify(DEBEZIUM_CONFIG));
          const wh = join(tmp.dir, 'wh');
          const out: string[] = [];
          expect(await loadCommand([file], { warehouse: wh, config: cfg }, (x) => out.push(x))).toBe(0);
          const text = out.join('\n');
          expect(text).toContain(`${s.noRow} change(s) that change no rows`);
          expect(text).not.toMatch(/rejected.*\[/);
          // Nullability follows the schemas' `optional`: the columns declared `optional: false`
          // are required in the table's schema and in every data file, the rest optional.
          const warehouse = openWarehouse(wh);
          const duck = await openDuck();
          try {
            const tables = s.orders.size > 0 ? (['customers', 'orders'] as const) : (['customers'] as const);
            for (const table of tables) {
              const req = await requiredColumns(duck, warehouse, { namespace: 'default', name: table });
              expect(req.schema).toEqual(DECLARED_REQUIRED[table]);
              expect(req.files.length).toBeGreaterThan(0);
              for (const f of req.files) expect(f).toEqual(DECLARED_REQUIRED[table]);
            }
          } finally {
            duck.close();
          }
          const engine = await openQueryEngine(warehouse);
          try {
            const q = async (sql: string) => (await engine.query(sql)).rows;
            const types = async (table: string) =>
              Object.fromEntries(
                (
                  await q(
                    `SELECT column_name AS c, data_type AS t FROM information_schema.columns WHERE table_name = '${table}'`,
                  )
                ).map((r) => [r.c, String(r.t)]),
              );
            const customerTypes = await types('customers');
            expect(customerTypes).toMatchObject({
              id: 'INTEGER',
              name: 'VARCHAR',
              balance: 'DECIMAL(10,2)',
              birthday: 'DATE',
              created_at: 'TIMESTAMP',
              updated_at: 'TIMESTAMP WITH TIME ZONE',
              opens: 'TIME',
            });
            // The column added mid-stream arrives typed (int16 → int), once a change carried it.
            if ('tier' in customerTypes) expect(customerTypes.tier).toBe('INTEGER');
            if (s.orders.size > 0)
              expect(await types('orders')).toMatchObject({
                order_id: 'BIGINT',
                amount: 'DECIMAL(12,3)',
                placed: 'TIMESTAMP',
                ship_by: 'DATE',
              });
            const customers = await q(
              `SELECT id, name, CAST(balance AS VARCHAR) AS balance, CAST(birthday AS VARCHAR) AS birthday,
                      epoch_us(created_at) AS created, epoch_ms(updated_at) AS updated,
                      extract('hour' FROM opens) * 3600000000 + extract('minute' FROM opens) * 60000000 + extract('microseconds' FROM opens) AS opens
               FROM customers`,
            );
            const got = new Map(customers.map((r) => [Number(r.id), r]));
            expect([...got.keys()].sort((a, b) => a - b)).toEqual(
              [...s.customers.keys()].sort((a, b) => a - b),
            );
            for (const [id, c] of s.customers) {
              expect(got.get(id)).toEqual({
                id: expect.anything(),
                name: c.name,
                balance: decimalText(c.balance, 2),
                birthday: dateText(c.birthday),
                created: c.createdAt,
                updated: BigInt(instantMs(c.updatedAt)),
                opens: c.opens,
              });
            }
            if (s.orders.size > 0) {
              const orders = await q(
                'SELECT order_id, CAST(amount AS VARCHAR) AS amount, epoch_ms(placed) AS placed, CAST(ship_by AS VARCHAR) AS ship_by FROM orders',
              );
              expect(new Map(orders.map((r) => [BigInt(r.order_id as bigint), r]))).toEqual(
                new Map(
                  [...s.orders].map(([id, o]) => [
                    id,
                    {
                      order_id: id,
                      amount: decimalText(o.amount, 3),
                      placed: BigInt(o.placed),
                      ship_by: dateText(o.shipBy),
                    },
                  ]),
                ),
              );
            }
          } finally {
            engine.close();
          }
        } finally {
          tmp.cleanup();
        }
      }),
      { numRuns: 5, seed: 2020 },
    );
  }, 180_000);

  it('a declared-required column stays required through deletes, and becomes optional when data or schema has a null', async () => {
    const scenario = ordersArb({ minLength: 2, maxLength: 6 }).chain((orders) =>
      fc.record({
        orders: fc.constant(orders),
        deleted: fc.integer({ min: 1, max: orders.length - 1 }),
        nulled: fc.integer({ min: 0, max: orders.length - 1 }),
        // The column made nullable upstream (the schema says so), or a producer breaking its schema.
        amountOptional: fc.boolean(),
      }),
    );
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const tmp = tempDir('floe-debezium-nullability-');
        try {
          const cfg = join(tmp.dir, 'floe.config.json');
          writeFileSync(cfg, JSON.stringify(DEBEZIUM_CONFIG));
          const wh = join(tmp.dir, 'wh');
          const warehouse = openWarehouse(wh);
          let pos = 1;
          let step = 0;
          const load = async (lines: string[]) => {
            const file = join(tmp.dir, `step-${step++}.ndjson`);
            writeFileSync(file, `${lines.join('\n')}\n`);
            const out: string[] = [];
            expect(await loadCommand([file], { warehouse: wh, config: cfg }, (x) => out.push(x))).toBe(0);
            expect(out.join('\n')).not.toMatch(/rejected.*\[|dead letter/);
          };
          const required = async () => {
            const duck = await openDuck();
            try {
              return await requiredColumns(duck, warehouse, { namespace: 'default', name: 'orders' });
            } finally {
              duck.close();
            }
          };
          const amounts = async () => {
            const engine = await openQueryEngine(warehouse);
            try {
              const rows = (
                await engine.query('SELECT order_id, CAST(amount AS VARCHAR) AS amount FROM orders')
              ).rows;
              return new Map(rows.map((r) => [BigInt(r.order_id as bigint), r.amount ?? null]));
            } finally {
              engine.close();
            }
          };
          const expected = (orders: readonly LooseOrder[]) =>
            new Map(orders.map((o) => [o.orderId, o.amount === null ? null : decimalText(o.amount, 3)]));

          // 1. Snapshot reads: the columns declared `optional: false` are required.
          await load(s.orders.map((o) => orderLine('r', null, o, pos++)));
          expect((await required()).schema).toEqual(DECLARED_REQUIRED.orders);

          // 2. Deletes alone (each with its tombstone) judge no column: they all stay required.
          const gone = s.orders.slice(0, s.deleted);
          await load(gone.flatMap((o) => [orderLine('d', o, null, pos++), '{"schema":null,"payload":null}']));
          const left: LooseOrder[] = s.orders.slice(s.deleted);
          expect((await required()).schema).toEqual(DECLARED_REQUIRED.orders);
          expect(await amounts()).toEqual(expected(left));

          // 3. An update with a null amount lands, and relaxes the column instead of failing.
          const target = left[s.nulled % left.length]!;
          const nulled: LooseOrder = { ...target, amount: null };
          await load([orderLine('u', target, nulled, pos++, { amountOptional: s.amountOptional })]);
          const after = await required();
          expect(after.schema).toEqual(DECLARED_REQUIRED.orders.filter((c) => c !== 'amount'));
          // The new file writes amount as optional; the files before keep it required, which
          // readers take under the optional column.
          expect(after.files.some((f) => !f.includes('amount'))).toBe(true);
          expect(await amounts()).toEqual(expected(left.map((o) => (o === target ? nulled : o))));
        } finally {
          tmp.cleanup();
        }
      }),
      { numRuns: 6, seed: 2021 },
    );
  }, 180_000);
});
