/**
 * A per-table field rule adds to the global one (`floe load`, i.e. `loadSources`): a global
 * `drop: ["secret"]` keeps `secret` out of every table, those with their own rule included, unless
 * the table's `keep` or `only` names `secret`. Checked on the Iceberg schema and, independently, on
 * the Parquet files DuckDB reads; exact rows, so any leaked value fails.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../lambdas/src/config.ts';
import { DeadLetterReason } from '../../lambdas/src/engine/dead-letters.ts';
import { type Duck, fileWarehouse, load, openDuck, tempDir } from '../helpers/e2e.ts';
import { type TableContents, tableContents } from '../helpers/table-files.ts';

const tmp = tempDir('floe-e2e-compose-');
let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => {
  duck?.close();
  tmp.cleanup();
});

const config = {
  fields: {
    drop: ['secret', 'payload.token'],
    tables: {
      order_events: { keep: ['id'] }, // adds a requirement; the global drops stay
      audit_events: { only: ['id', 'secret', 'who'] }, // names `secret`: re-admitted
      vault_events: { keep: ['secret'] }, // names `secret`: re-admitted (and required)
      raw_events: {}, // adds nothing
    },
  },
};

const input = [
  { event_type: 'order', id: 1, secret: 'S-o1', payload: { token: 'T-o1', note: 'n1' } },
  { event_type: 'order', id: 2, Secret: 'S-o2', payload: { Token: 'T-o2', note: 'n2' } },
  { event_type: 'order', secret: 'S-o3' }, // no id: missing-kept-field
  { event_type: 'audit', id: 3, secret: 'S-a', who: 'me', what: 'it' },
  { event_type: 'vault', id: 4, secret: 'S-v', payload: { token: 'T-v', note: 'nv' } },
  { event_type: 'vault', id: 5 }, // no secret: missing-kept-field
  { event_type: 'raw', id: 6, secret: 'S-r' },
  { event_type: 'click', id: 7, secret: 'S-c' }, // no table scope: the global rules
];

const rowsById = (c: TableContents) =>
  c.rows.map((r) => JSON.parse(r) as { id: number }).sort((a, b) => a.id - b.id);

describe('a global drop beside per-table rules (floe load)', () => {
  let contents: (table: string) => Promise<TableContents>;
  let dead: Awaited<ReturnType<typeof load>>['dead'];

  beforeAll(async () => {
    const wh = fileWarehouse(join(tmp.dir, 'wh'));
    const run = await load(wh, [{ name: 'in.ndjson', lines: input.map((x) => JSON.stringify(x)) }], {
      config: parseConfig(config),
    });
    dead = run.dead;
    expect(run.report.rows).toBe(6);
    contents = (table) => tableContents(duck, wh, { namespace: 'default', name: table });
  });

  it('dead-letters only the records lacking a kept field', () => {
    expect(dead.map((d) => [d.line, d.reason, d.table])).toEqual([
      [3, DeadLetterReason.MissingKeptField, 'order_events'],
      [6, DeadLetterReason.MissingKeptField, 'vault_events'],
    ]);
  });

  it.each([
    ['order_events', 'its own keep'],
    ['raw_events', 'an empty scope'],
    ['click_events', 'no scope'],
  ])('%s (%s): secret and payload.token are in neither the schema nor the Parquet files', async (table) => {
    const c = await contents(table);
    expect(c.files).toBeGreaterThan(0);
    const want =
      table === 'order_events' ? ['event_type', 'id', 'payload', 'payload.note'] : ['event_type', 'id'];
    expect(c.schemaColumns).toEqual(want);
    expect(c.parquetColumns).toEqual(want);
    for (const row of c.rows) expect(row).not.toMatch(/S-|T-/);
  });

  it('order_events holds exactly the admitted rows, without secret', async () => {
    expect(rowsById(await contents('order_events'))).toEqual([
      { event_type: 'order', id: 1, payload: { note: 'n1' } },
      { event_type: 'order', id: 2, payload: { note: 'n2' } },
    ]);
  });

  it('audit_events (only naming secret) has secret, and nothing its only leaves out', async () => {
    const c = await contents('audit_events');
    expect(c.schemaColumns).toEqual(['id', 'secret', 'who']);
    expect(c.parquetColumns).toEqual(['id', 'secret', 'who']);
    expect(rowsById(c)).toEqual([{ id: 3, secret: 'S-a', who: 'me' }]);
  });

  it('vault_events (keep naming secret) has secret; the other global drop, payload.token, still applies', async () => {
    const c = await contents('vault_events');
    const want = ['event_type', 'id', 'payload', 'payload.note', 'secret'];
    expect(c.schemaColumns).toEqual(want);
    expect(c.parquetColumns).toEqual(want);
    expect(rowsById(c)).toEqual([{ event_type: 'vault', id: 4, secret: 'S-v', payload: { note: 'nv' } }]);
  });
});
