/**
 * Consolidated tables, the ride-activity example (shared/seeds: "schema consolidation"): 4 event
 * types × 3 ride types = 12 variants go to ONE table `driver_ride_activity` with the discriminators
 * `event_type` and `ride_type`, the shared fields top-level, and one optional struct per ride type
 * for its own fields. Through `floe load` and through the streaming ingest + committer. Every
 * warehouse ends valid by the independent Iceberg validator (every snapshot walked).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import { commitTable } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import { currentSchema } from '../../lambdas/src/iceberg/table-metadata.ts';
import type { Catalog } from '../../lambdas/src/ports/catalog.ts';
import { IcebergQueryEngine } from '../../lambdas/src/query/engine.ts';
import { Prng } from '../../lambdas/src/sample/prng.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { fileWarehouse, load, sorted, tempDir } from '../helpers/e2e.ts';
import { batchOf, records, startPipeline } from '../helpers/pipeline.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

const EVENT_TYPES = ['ACCEPTED', 'STARTED', 'COMPLETED', 'CANCELLED'] as const;
const RIDE_TYPES = ['STANDARD', 'SHARED', 'SCHEDULED'] as const;

const CONFIG = {
  consolidate: [
    {
      table: 'driver_ride_activity',
      when: { ride_type: '*' },
      discriminators: ['event_type', 'ride_type'],
      shared: ['event_id', 'event_time', 'driver_id', 'ride_id', 'city_id'],
      variantColumn: '{ride_type}_ride_attributes',
    },
  ],
};

type Ride = Record<string, unknown>;

/** Every (event type, ride type) combination, `perVariant` times, with the variant's own fields. */
function rides(perVariant: number, seed: number, rideTypes: readonly string[] = RIDE_TYPES): Ride[] {
  const rnd = new Prng(seed);
  const out: Ride[] = [];
  let n = 0;
  for (let i = 0; i < perVariant; i++) {
    for (const event_type of EVENT_TYPES) {
      for (const ride_type of rideTypes) {
        n++;
        const base = {
          event_id: `RIDE-${seed}-${n}`,
          event_time: new Date(Date.UTC(2025, 2, 14, 15, 0, n)).toISOString(),
          driver_id: `D-${rnd.int(1, 50)}`,
          ride_id: `R-${rnd.int(1, 10_000)}`,
          city_id: rnd.int(1, 20),
          event_type,
          ride_type,
        };
        const own =
          ride_type === 'STANDARD'
            ? {
                fare_estimate: rnd.int(500, 5000) / 100 + 0.5,
                vehicle_class: rnd.pick(['economy', 'comfort']),
              }
            : ride_type === 'SHARED'
              ? { passenger_count: rnd.int(1, 4), pooling_score: rnd.int(1, 99) / 100 + 0.001 }
              : ride_type === 'SCHEDULED'
                ? {
                    scheduled_for: new Date(Date.UTC(2025, 2, 15, rnd.int(0, 23))).toISOString(),
                    booking_lead_minutes: rnd.int(10, 2000),
                  }
                : { lounge_access: true, concierge: 'yes' };
        out.push({ ...base, ...own });
      }
    }
  }
  return out;
}

async function query(
  store: LocalObjectStore,
  catalog: Catalog,
  sql: string,
): Promise<Record<string, unknown>[]> {
  const engine = new IcebergQueryEngine({ read: (u) => store.get(u), resolvePath: (u) => store.pathOf(u) });
  try {
    for (const name of await catalog.listTables('default')) {
      await engine.registerTable(name, (await catalog.loadTable({ namespace: 'default', name })).metadata);
    }
    return (await engine.query(sql)).rows;
  } finally {
    engine.close();
  }
}

function idsOf(rs: readonly Ride[]): string[] {
  return sorted(rs.map((r) => String(r.event_id)));
}

let tmp: ReturnType<typeof tempDir>;
let dynamo: LocalDynamo;
beforeAll(async () => {
  tmp = tempDir('floe-consolidated-');
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  tmp?.cleanup();
});

async function checkTable(store: LocalObjectStore, catalog: Catalog, all: readonly Ride[]): Promise<void> {
  expect(await catalog.listTables('default')).toEqual(['driver_ride_activity']);
  const t = await catalog.loadTable({ namespace: 'default', name: 'driver_ride_activity' });
  const cols = currentSchema(t.metadata).fields.map((f) => [f.name, f.type.kind]);
  expect(cols).toEqual(
    expect.arrayContaining([
      ['event_type', 'string'],
      ['ride_type', 'string'],
      ['event_time', 'timestamptz'],
      ['driver_id', 'string'],
      ['city_id', 'long'],
      ['standard_ride_attributes', 'struct'],
      ['shared_ride_attributes', 'struct'],
      ['scheduled_ride_attributes', 'struct'],
    ]),
  );
  // Variant fields never leak to the top level.
  for (const f of ['fare_estimate', 'passenger_count', 'scheduled_for'])
    expect(cols.map((c) => c[0])).not.toContain(f);
  // Exactly the block of the row's ride type is set; the others are null.
  const blocks = await query(
    store,
    catalog,
    `SELECT ride_type,
            count(*) AS n,
            count(standard_ride_attributes) AS std,
            count(shared_ride_attributes) AS shr,
            count(scheduled_ride_attributes) AS sch
       FROM driver_ride_activity GROUP BY ride_type ORDER BY ride_type`,
  );
  const per = (rt: string) => all.filter((r) => r.ride_type === rt).length;
  expect(blocks.map((b) => [b.ride_type, Number(b.n), Number(b.std), Number(b.shr), Number(b.sch)])).toEqual([
    ['SCHEDULED', per('SCHEDULED'), 0, 0, per('SCHEDULED')],
    ['SHARED', per('SHARED'), 0, per('SHARED'), 0],
    ['STANDARD', per('STANDARD'), per('STANDARD'), 0, 0],
  ]);
  // The article's query: one table, one filter, instead of a UNION over twelve tables.
  const completedShared = await query(
    store,
    catalog,
    `SELECT event_id, shared_ride_attributes.passenger_count AS pc FROM driver_ride_activity
      WHERE event_type = 'COMPLETED' AND ride_type = 'SHARED'`,
  );
  const want = all.filter((r) => r.event_type === 'COMPLETED' && r.ride_type === 'SHARED');
  expect(sorted(completedShared.map((r) => String(r.event_id)))).toEqual(idsOf(want));
  const pcById = new Map(want.map((r) => [String(r.event_id), BigInt(r.passenger_count as number)]));
  for (const r of completedShared) expect(r.pc).toBe(pcById.get(String(r.event_id)));
}

describe('consolidated table: 4 event types × 3 ride types → driver_ride_activity', () => {
  it('floe load: one table, 12 variants, one block per row, one filter query', async () => {
    const wh = fileWarehouse(`${tmp.dir}/load`);
    const all = rides(5, 1);
    const run = await load(wh, [{ name: 'rides.ndjson', lines: all.map((r) => JSON.stringify(r)) }], {
      config: parseConfig(CONFIG),
    });
    expect(run.dead).toEqual([]);
    expect(new Set(all.map((r) => `${r.event_type}/${r.ride_type}`)).size).toBe(12);
    await checkTable(wh.store, wh.catalog, all);

    // A new variant (PREMIUM) adds its own optional struct column; old rows read null there.
    const premium = rides(2, 2, ['PREMIUM']);
    const bad = { event_id: 'RIDE-bad', ride_type: 'SHARED', driver_id: 'D-1', passenger_count: 2 };
    const run2 = await load(
      wh,
      [{ name: 'premium.ndjson', lines: [...premium.map((r) => JSON.stringify(r)), JSON.stringify(bad)] }],
      { config: parseConfig(CONFIG) },
    );
    expect(run2.dead.map((d) => [d.reason, d.table])).toEqual([
      ['consolidation-failed', 'driver_ride_activity'],
    ]);
    expect(run2.dead[0]!.detail).toContain('discriminator event_type is missing');
    const t = await wh.catalog.loadTable({ namespace: 'default', name: 'driver_ride_activity' });
    expect(currentSchema(t.metadata).fields.map((f) => f.name)).toContain('premium_ride_attributes');
    const rows = await query(
      wh.store,
      wh.catalog,
      'SELECT count(*) AS n, count(premium_ride_attributes) AS p FROM driver_ride_activity',
    );
    expect([Number(rows[0]!.n), Number(rows[0]!.p)]).toEqual([all.length + premium.length, premium.length]);
    await expectWarehouseValid(wh);
  });

  it('streaming ingest + committer: the same table, exactly once', async () => {
    const p = await startPipeline(dynamo, `${tmp.dir}/stream`, { config: CONFIG });
    const all = rides(6, 3);
    const lines = all.map((r) => JSON.stringify(r));
    const shard = 'shardId-000000000000';
    await ingestBatch(p.ingestDeps(), batchOf(shard, records(lines.slice(0, 40), 0)));
    expect(await commitTable(p.committerDeps(), 'driver_ride_activity')).toMatchObject({
      status: 'committed',
      created: true,
    });
    const r2 = await ingestBatch(p.ingestDeps(), batchOf(shard, records(lines.slice(40), 40)));
    expect(r2.tables.map((t) => [t.table, t.path])).toEqual([['driver_ride_activity', 'generic']]);
    // A redelivery of everything is skipped.
    expect((await ingestBatch(p.ingestDeps(), batchOf(shard, records(lines, 0)))).skipped).toBe(all.length);
    await commitTable(p.committerDeps(), 'driver_ride_activity');
    await checkTable(p.wh.store, p.wh.catalog, all);
    await expectWarehouseValid(p.wh);
  });
});

describe('a consolidation rule with its own namespace', () => {
  it('puts the table in that namespace, through floe load and through ingest + committer', async () => {
    const config = { ...CONFIG, consolidate: [{ ...CONFIG.consolidate[0]!, namespace: 'rides' }] };
    const all = rides(2, 4);
    const wh = fileWarehouse(`${tmp.dir}/ns-load`);
    const run = await load(wh, [{ name: 'r', lines: all.map((r) => JSON.stringify(r)) }], {
      config: parseConfig(config),
    });
    expect(run.dead).toEqual([]);
    expect(await wh.catalog.listNamespaces()).toEqual(['rides']);
    expect(await wh.catalog.listTables('rides')).toEqual(['driver_ride_activity']);

    const p = await startPipeline(dynamo, `${tmp.dir}/ns-stream`, { config });
    const r = await ingestBatch(
      p.ingestDeps(),
      batchOf('shardId-000000000009', records(all.map((x) => JSON.stringify(x)))),
    );
    expect(r.tables.map((t) => t.table)).toEqual(['rides.driver_ride_activity']);
    expect(await commitTable(p.committerDeps(), 'rides.driver_ride_activity')).toMatchObject({
      status: 'committed',
    });
    const t = await p.wh.catalog.loadTable({ namespace: 'rides', name: 'driver_ride_activity' });
    expect(t.metadata.snapshots.at(-1)?.summary['total-records']).toBe(String(all.length));
    for (const w of [wh, p.wh]) await expectWarehouseValid(w);
  });
});

describe('a routing template with a namespace', () => {
  it('one namespace per tenant, through floe load and through ingest + committer', async () => {
    const config = { routing: { template: '{tenant}.{event_type}_events' } };
    const lines = ['acme', 'globex', 'acme'].map((tenant, i) =>
      JSON.stringify({ tenant, event_type: 'ORDER', event_id: `E${i}`, amount: 1.5 }),
    );
    const wh = fileWarehouse(`${tmp.dir}/tpl-load`);
    const run = await load(wh, [{ name: 't', lines }], { config: parseConfig(config) });
    expect(run.dead).toEqual([]);
    expect((await wh.catalog.listNamespaces()).sort()).toEqual(['acme', 'globex']);
    expect(await wh.catalog.listTables('acme')).toEqual(['order_events']);

    const p = await startPipeline(dynamo, `${tmp.dir}/tpl-stream`, { config });
    const r = await ingestBatch(p.ingestDeps(), batchOf('shardId-000000000011', records(lines)));
    expect(r.tables.map((t) => [t.table, t.records])).toEqual([
      ['acme.order_events', 2],
      ['globex.order_events', 1],
    ]);
    for (const t of r.tables) await commitTable(p.committerDeps(), t.table);
    const acme = await p.wh.catalog.loadTable({ namespace: 'acme', name: 'order_events' });
    expect(acme.metadata.snapshots.at(-1)?.summary['total-records']).toBe('2');
    for (const w of [wh, p.wh]) await expectWarehouseValid(w);
  });
});
