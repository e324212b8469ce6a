/**
 * A per-table field rule adds to the global one through the streaming pipeline (ingest → ledger on
 * dynalite → committer), for JSON and for Avro: with a global `drop: ["secret"]`, a table with its
 * own `keep` rule never holds `secret`, while one whose rule names `secret` does. Two batches per
 * run: the first lands through pending fragments the committer turns into the table, the second is
 * staged by the ingest straight into data files of the existing table; both paths are checked on
 * the Iceberg schema and on the Parquet files DuckDB reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSchemaRegistry } from '../../lambdas/src/adapters/local/local-schema-registry.ts';
import { seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { commitTable } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { encodeGsrFrame } from '../../lambdas/src/records/gsr.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { type Duck, openDuck, tempDir } from '../helpers/e2e.ts';
import { batchOf, committedIds, type Pipeline, records, startPipeline } from '../helpers/pipeline.ts';
import { type TableContents, tableContents } from '../helpers/table-files.ts';
import { avscEncode } from '../unit/records/avro-sample-schemas.ts';

let dynamo: LocalDynamo;
let duck: Duck;
let tmp: ReturnType<typeof tempDir>;
beforeAll(async () => {
  dynamo = await startDynalite();
  duck = await openDuck();
  tmp = tempDir('floe-compose-');
});
afterAll(async () => {
  await dynamo?.close();
  duck?.close();
  tmp?.cleanup();
});

const SHARD = 'shardId-000000000007';

/** Ingests two batches, committing every touched table after each; returns the ingest results. */
async function twoBatches(p: Pipeline, first: (string | Uint8Array)[], second: (string | Uint8Array)[]) {
  const results = [];
  let start = 0;
  for (const payloads of [first, second]) {
    const r = await ingestBatch(p.ingestDeps(), batchOf(SHARD, records(payloads, start)));
    expect(r.failures).toEqual([]);
    for (const t of r.tables) await commitTable(p.committerDeps(), t.table);
    results.push(r);
    start += payloads.length;
  }
  return results;
}

const contentsOf = (p: Pipeline, table: string) =>
  tableContents(duck, p.wh, { namespace: 'default', name: table });

const rowsById = (c: TableContents) =>
  c.rows
    .map((r) => JSON.parse(r) as { event_id: string })
    .sort((a, b) => (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));

/** Both batches took the intended paths: pending (committer creates) first, data files second. */
function expectBothPaths(results: Awaited<ReturnType<typeof twoBatches>>, tables: string[]) {
  expect(results[0]!.tables.map((t) => [t.table, t.path])).toEqual(tables.map((t) => [t, 'pending']));
  for (const t of results[1]!.tables) {
    expect(t.path, t.table).not.toBe('pending');
    expect(t.dataFiles, t.table).toBeGreaterThan(0);
  }
}

describe('JSON: a global drop beside per-table rules, ingest + committer', () => {
  it('secret never reaches order_events (own keep rule); vault_events (keep secret) holds it', async () => {
    const p = await startPipeline(dynamo, `${tmp.dir}/json`, {
      config: {
        fields: {
          drop: ['secret'],
          tables: { order_events: { keep: ['event_id'] }, vault_events: { keep: ['secret'] } },
        },
      },
    });
    const ev = (type: string, id: string, extra: object) =>
      JSON.stringify({ event_type: type, event_id: id, note: `note ${id}`, ...extra });
    const results = await twoBatches(
      p,
      [ev('order', 'O-1', { secret: 'S-O-1' }), ev('vault', 'V-1', { secret: 'S-V-1' })],
      [
        ev('order', 'O-2', { SECRET: 'S-O-2' }),
        JSON.stringify({ event_type: 'order', secret: 'S-O-3' }), // no event_id: dead-lettered
        ev('vault', 'V-2', { secret: 'S-V-2' }),
        ev('vault', 'V-3', {}), // no secret: dead-lettered
      ],
    );
    expectBothPaths(results, ['order_events', 'vault_events']);
    expect(results[1]!.deadLetters).toEqual({ 'missing-kept-field': 2 });

    const orders = await contentsOf(p, 'order_events');
    expect(orders.files).toBe(2);
    expect(orders.schemaColumns).toEqual(['event_id', 'event_type', 'note']);
    expect(orders.parquetColumns).toEqual(['event_id', 'event_type', 'note']);
    expect(rowsById(orders)).toEqual([
      { event_type: 'order', event_id: 'O-1', note: 'note O-1' },
      { event_type: 'order', event_id: 'O-2', note: 'note O-2' },
    ]);

    const vault = await contentsOf(p, 'vault_events');
    expect(vault.files).toBe(2);
    expect(vault.schemaColumns).toEqual(['event_id', 'event_type', 'note', 'secret']);
    expect(vault.parquetColumns).toEqual(['event_id', 'event_type', 'note', 'secret']);
    expect(rowsById(vault).map((r) => (r as { secret?: string }).secret)).toEqual(['S-V-1', 'S-V-2']);
    expect((await committedIds(p)).get('vault_events')).toEqual(['V-1', 'V-2']);
  });
});

const accountEvent = {
  type: 'record',
  name: 'AccountEvent',
  namespace: 'test.floe',
  fields: [
    { name: 'event_id', type: ['null', 'string'], default: null },
    { name: 'secret', type: ['null', 'string'], default: null },
    { name: 'note', type: 'string' },
  ],
};
const vaultEvent = { ...accountEvent, name: 'VaultEvent' };

describe('Avro: a global drop beside per-table rules, ingest + committer', () => {
  it('the writer schema and rows lose secret for accountevent (own keep rule); vaultevent (keep secret) keeps it', async () => {
    const registry = new LocalSchemaRegistry({ ids: seededIds(11) });
    const account = await registry.register('AccountEvent', JSON.stringify(accountEvent));
    const vault = await registry.register('VaultEvent', JSON.stringify(vaultEvent));
    const p = await startPipeline(dynamo, `${tmp.dir}/avro`, {
      config: {
        format: 'avro-gsr',
        fields: {
          drop: ['secret'],
          tables: { accountevent: { keep: ['event_id'] }, vaultevent: { keep: ['secret'] } },
        },
      },
      registry,
    });
    // Both schemas have the same fields, so one avsc type encodes either; the GSR id tells them apart.
    const frame = (schemaId: string, id: string | null, secret: string | null) =>
      encodeGsrFrame(schemaId, avscEncode(accountEvent, { event_id: id, secret, note: `note ${id}` }));
    const results = await twoBatches(
      p,
      [frame(account.id, 'A-1', 'S-A-1'), frame(vault.id, 'V-1', 'S-V-1')],
      [
        frame(account.id, 'A-2', 'S-A-2'),
        frame(account.id, null, 'S-A-3'), // no event_id: dead-lettered
        frame(vault.id, 'V-2', 'S-V-2'),
        frame(vault.id, 'V-3', null), // no secret: dead-lettered
      ],
    );
    expectBothPaths(results, ['accountevent', 'vaultevent']);
    expect(results[1]!.deadLetters).toEqual({ 'missing-kept-field': 2 });

    const accounts = await contentsOf(p, 'accountevent');
    expect(accounts.files).toBe(2);
    expect(accounts.schemaColumns).toEqual(['event_id', 'note']);
    expect(accounts.parquetColumns).toEqual(['event_id', 'note']);
    expect(rowsById(accounts)).toEqual([
      { event_id: 'A-1', note: 'note A-1' },
      { event_id: 'A-2', note: 'note A-2' },
    ]);

    const vaults = await contentsOf(p, 'vaultevent');
    expect(vaults.files).toBe(2);
    expect(vaults.schemaColumns).toEqual(['event_id', 'note', 'secret']);
    expect(vaults.parquetColumns).toEqual(['event_id', 'note', 'secret']);
    expect(rowsById(vaults)).toEqual([
      { event_id: 'V-1', secret: 'S-V-1', note: 'note V-1' },
      { event_id: 'V-2', secret: 'S-V-2', note: 'note V-2' },
    ]);
  });
});
