/**
 * The whole streaming pipeline on real local parts: producers PutRecords into kinesalite (JSON v1,
 * then JSON v2 with new fields, plus GSR-framed Avro encoded by avsc, in one stream); the
 * event-source poller invokes the Lambda ingest handler (`handlers/ingest.ts`, via the local stack)
 * with genuine Lambda Kinesis events; the committer
 * runs on an interval, sometimes twice at once; the ledger and lock live in dynalite. Faults are
 * injected at seeded random points (ingest crashes before and after the ledger entry, failed file
 * writes, committer crashes before and after the catalog swap). Afterwards every table holds
 * exactly the events sent (multiset of event ids), the schemas evolved, every table passes the
 * independent Iceberg validator (every snapshot walked), and DuckDB and icebird (over HTTP) read
 * the result.
 */
import { join } from 'node:path';
import { icebergRead } from 'icebird';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putRecords } from '../../lambdas/src/adapters/aws/kinesis-producer.ts';
import { seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import { DEFERRED_CHAIN, ROUTED_CHAIN } from '../../lambdas/src/engine/deferred-batch.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { currentSchema, defaultSpec } from '../../lambdas/src/iceberg/table-metadata.ts';
import { LocalStack } from '../../lambdas/src/local/stack.ts';
import type { Catalog } from '../../lambdas/src/ports/catalog.ts';
import type { Ledger } from '../../lambdas/src/ports/ledger.ts';
import type { ObjectStore } from '../../lambdas/src/ports/object-store.ts';
import { encodeGsrFrame } from '../../lambdas/src/records/gsr.ts';
import { Prng } from '../../lambdas/src/sample/prng.ts';
import {
  currentSnapshotOf,
  generate,
  groupByTable,
  type Json,
  liveFiles,
  sorted,
  tempDir,
} from '../helpers/e2e.ts';
import { type StaticServer, serveDirectory } from '../helpers/static-server.ts';
import { expectWarehouseValid, servedFolderIo } from '../helpers/warehouse-validation.ts';
import { avscEncode, clickEvent, orderV1, orderV2 } from '../unit/records/avro-sample-schemas.ts';

const NS = 'default';
let tmp: ReturnType<typeof tempDir>;
let server: StaticServer;
let stack: LocalStack;
const expected = new Map<string, string[]>();
const stats = { ingestFaults: 0, commitFaults: 0, commitRuns: 0, concurrentRuns: 0 };

/** Throws "crashes" at seeded random points: before or after the real call. */
function chaos(rnd: Prng, rate: number, count: () => void) {
  return async <T>(call: () => Promise<T>): Promise<T> => {
    const roll = rnd.next();
    if (roll < rate / 2) {
      count();
      throw new FloeError(ErrorKind.Unexpected, 'injected crash before the call', { retryable: true });
    }
    const out = await call();
    if (roll < rate) {
      count();
      throw new FloeError(ErrorKind.Unexpected, 'injected crash after the call', { retryable: true });
    }
    return out;
  };
}

function faultyLedger(ledger: Ledger, rnd: Prng): Ledger {
  const fault = chaos(rnd, 0.12, () => stats.ingestFaults++);
  return new Proxy(ledger, {
    get(target, prop, receiver) {
      if (prop === 'appendEntry')
        return (e: Parameters<Ledger['appendEntry']>[0]) => fault(() => target.appendEntry(e));
      // The batched append crashes as a whole, before any entry or after all of them.
      if (prop === 'appendEntries' && target.appendEntries)
        return (es: Parameters<NonNullable<Ledger['appendEntries']>>[0]) =>
          fault(() => target.appendEntries!(es));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

function faultyStore(store: ObjectStore, rnd: Prng): ObjectStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'put')
        return (uri: string, bytes: Uint8Array | string) => {
          if (uri.endsWith('.parquet') && rnd.next() < 0.01) {
            stats.ingestFaults++;
            return Promise.reject(new FloeError(ErrorKind.Unexpected, `injected write failure of ${uri}`));
          }
          return target.put(uri, bytes);
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

function faultyCatalog(catalog: Catalog, rnd: Prng): Catalog {
  const fault = chaos(rnd, 0.2, () => stats.commitFaults++);
  return new Proxy(catalog, {
    get(target, prop, receiver) {
      if (prop === 'commitTable')
        return (base: Parameters<Catalog['commitTable']>[0], m: Parameters<Catalog['commitTable']>[1]) =>
          fault(() => target.commitTable(base, m));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** JSON sample ORDER / CLICK event → Avro datum of the sample's Avro variant. */
function orderDatum(e: Json, v2: boolean): Json {
  return {
    event_id: e.event_id,
    event_time: Date.parse(String(e.event_time)) * 1000,
    event_type: e.event_type,
    region: e.region,
    event_date: Math.round(Date.parse(`${e.event_date}T00:00:00Z`) / 86_400_000),
    order_id: e.order_id,
    customer_id: e.customer_id,
    amount: e.amount,
    currency: e.currency,
    status: e.status,
    ...(v2 ? { payment_method: 'card', promo_code: null } : {}),
  };
}

function clickDatum(e: Json): Json {
  return {
    event_id: e.event_id,
    event_time: Date.parse(String(e.event_time)) * 1000,
    event_type: e.event_type,
    region: e.region,
    event_date: Math.round(Date.parse(`${e.event_date}T00:00:00Z`) / 86_400_000),
    session_id: e.session_id,
    page_url: e.page_url,
    referrer: e.referrer ?? null,
    scroll_depth: e.scroll_depth ?? null,
    time_on_page_seconds: e.time_on_page_seconds ?? null,
  };
}

async function put(payloads: readonly Uint8Array[], keys: readonly string[]): Promise<void> {
  await putRecords(
    stack.kinesis.client,
    stack.streamName,
    payloads.map((data, i) => ({ data, partitionKey: keys[i]! })),
  );
}

function expect_(table: string, ids: readonly string[]) {
  expected.set(table, [...(expected.get(table) ?? []), ...ids]);
}

describe('kinesalite → ingest handler → committer, with faults', () => {
  beforeAll(async () => {
    tmp = tempDir('floe-streaming-');
    server = await serveDirectory(tmp.dir);
    const rnd = new Prng(20261129);
    stack = await LocalStack.start({
      warehouseDir: join(tmp.dir, 'wh'),
      warehouseUrl: `${server.url}/wh`,
      // Batches over two tables are deferred and routed by the committer, the others routed in the
      // ingest: both paths, and the switches between them, under the same faults.
      config: parseConfig({
        format: 'avro-gsr',
        jsonFallback: true,
        source: { deferRouting: { aboveTables: 2 } },
      }),
      shards: 2,
      ids: seededIds(5),
    });
    const orderV1Version = await stack.registry.register('OrderEvent', JSON.stringify(orderV1), 'AVRO');
    const orderV2Version = await stack.registry.register('OrderEvent', JSON.stringify(orderV2), 'AVRO');
    const clickVersion = await stack.registry.register('ClickEvent', JSON.stringify(clickEvent), 'AVRO');

    const ingestDeps = stack.ingestDeps({
      ledger: faultyLedger(stack.ledger, rnd),
      store: faultyStore(stack.store, rnd),
    });
    await stack.startPoller(stack.ingestHandler(ingestDeps), { batchSize: 700, batchWindowMs: 50 });

    // Committers on an interval while data flows; now and then two at once; some crash.
    let flowing = true;
    const committerLoop = (async () => {
      let n = 0;
      while (flowing) {
        const deps = stack.committerDeps({ catalog: faultyCatalog(stack.catalog, rnd), owner: `c${n}` });
        if (n % 3 === 0) {
          stats.concurrentRuns++;
          await Promise.all([stack.commit(deps), stack.commit(stack.committerDeps({ owner: `d${n}` }))]);
        } else await stack.commit(deps);
        stats.commitRuns++;
        n++;
        await new Promise((r) => setTimeout(r, 150));
      }
    })();

    const json = (lines: readonly string[]) => lines.map((l) => new TextEncoder().encode(l));
    const keysOf = (events: readonly Json[]) => events.map((e) => String(e.event_id));
    // JSON v1, then JSON v2 (new columns), interleaved with Avro order v1 → v2 and Avro clicks.
    const v1 = generate(8000, 'v1', 101);
    const v2 = generate(8000, 'v2', 202);
    const avroSource = generate(6000, 'v2', 303).events;
    const orders = avroSource.filter((e) => e.event_type === 'ORDER');
    const clicks = avroSource.filter((e) => e.event_type === 'CLICK');
    const half = Math.floor(orders.length / 2);
    const avroOrdersV1 = orders
      .slice(0, half)
      .map((e) => encodeGsrFrame(orderV1Version.id, avscEncode(orderV1, orderDatum(e, false))));
    const avroOrdersV2 = orders
      .slice(half)
      .map((e) => encodeGsrFrame(orderV2Version.id, avscEncode(orderV2, orderDatum(e, true)), 'zlib'));
    const avroClicks = clicks.map((e) =>
      encodeGsrFrame(clickVersion.id, avscEncode(clickEvent, clickDatum(e))),
    );

    await put(json(v1.lines), keysOf(v1.events));
    await put(avroOrdersV1, keysOf(orders.slice(0, half)));
    await stack.drain();
    await put(json(v2.lines), keysOf(v2.events));
    await put(avroOrdersV2, keysOf(orders.slice(half)));
    await put(avroClicks, keysOf(clicks));
    await stack.drain();
    flowing = false;
    await committerLoop;
    // A clean final run, repeated until nothing is staged (a GSI may lag a moment).
    for (let i = 0; i < 10; i++) {
      const r = await stack.commit();
      if (
        r.tables.every((t) => t.status === 'nothing-to-commit') &&
        (await stack.ledger.tablesWithStagedWork()).length === 0
      )
        break;
      await new Promise((r2) => setTimeout(r2, 100));
    }

    for (const [t, evs] of groupByTable([...v1.events, ...v2.events])) expect_(t, keysOf(evs));
    expect_('orderevent', keysOf(orders));
    expect_('clickevent', keysOf(clicks));
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    await server?.close();
    tmp?.cleanup();
  });

  it('sent ≥ 20,000 events of 5 tables and injected faults on both sides', () => {
    const total = [...expected.values()].reduce((n, ids) => n + ids.length, 0);
    expect(total).toBeGreaterThanOrEqual(20_000);
    expect([...expected.keys()].sort()).toEqual([
      'click_events',
      'clickevent',
      'order_events',
      'orderevent',
      'user_events',
    ]);
    expect(stats.ingestFaults).toBeGreaterThan(0);
    expect(stats.commitFaults).toBeGreaterThan(0);
    expect(stats.concurrentRuns).toBeGreaterThan(0);
  });

  it('every table holds exactly the events sent (event ids, duplicates in the stream included)', async () => {
    const engine = new (await import('../../lambdas/src/query/engine.ts')).IcebergQueryEngine({
      read: (uri) => stack.store.get(uri),
      resolvePath: (uri) => stack.store.pathOf(uri),
    });
    try {
      for (const [table, ids] of expected) {
        const t = await stack.catalog.loadTable({ namespace: NS, name: table });
        await engine.registerTable(table, t.metadata);
        const rows = await engine.query(`SELECT event_id FROM "${table}"`);
        expect(sorted(rows.rows.map((r) => String(r.event_id))), table).toEqual(sorted(ids));
      }
    } finally {
      engine.close();
    }
  });

  it('no committed file is missing, and nothing is left staged', async () => {
    for (const table of expected.keys()) {
      const t = await stack.catalog.loadTable({ namespace: NS, name: table });
      for (const f of await liveFiles(stack.store, currentSnapshotOf(t.metadata)!)) {
        expect(await stack.store.exists(f.file.file_path), f.file.file_path).toBe(true);
      }
    }
    expect(await stack.ledger.tablesWithStagedWork()).toEqual([]);
    // Some batches were deferred, and every deferred batch is routed.
    let deferred = 0;
    for (const shard of ['shardId-000000000000', 'shardId-000000000001']) {
      const tails = await stack.ledger.shardTails(shard);
      if (tails.has(DEFERRED_CHAIN)) deferred++;
      expect(tails.get(ROUTED_CHAIN), shard).toBe(tails.get(DEFERRED_CHAIN));
    }
    expect(deferred).toBeGreaterThan(0);
  });

  it('an independent validator accepts every table, every snapshot (HTTP locations read from the served folder)', async () => {
    // Mapped as the test's server maps them: `<url>/…` is `<tmp>/…`.
    const reports = await expectWarehouseValid(stack, { io: servedFolderIo(server.url, tmp.dir) });
    expect([...reports.keys()].sort()).toEqual([...expected.keys()].map((t) => `${NS}.${t}`).sort());
    for (const [table, ids] of expected)
      expect(reports.get(`${NS}.${table}`)?.stats.liveRecords, table).toBe(BigInt(ids.length));
  });

  it('schemas evolved: v2 JSON columns and the second Avro order version were added', async () => {
    const cols = async (name: string) =>
      currentSchema((await stack.catalog.loadTable({ namespace: NS, name })).metadata).fields.map(
        (f) => f.name,
      );
    expect(await cols('click_events')).toContain('scroll_depth');
    expect(await cols('user_events')).toContain('user_agent');
    expect(await cols('orderevent')).toEqual(
      expect.arrayContaining(['payment_method', 'promo_code', 'amount']),
    );
    const order = (await stack.catalog.loadTable({ namespace: NS, name: 'orderevent' })).metadata;
    expect(order.schemas.length).toBeGreaterThanOrEqual(2);
    expect(defaultSpec(order).fields.map((f) => f.name)).toEqual(['event_date', 'region']);
    const ts = currentSchema(order).fields.find((f) => f.name === 'event_time');
    expect(ts?.type).toEqual({ kind: 'timestamptz' });
  });

  it('icebird (over HTTP, its own Avro and Parquet code) reads the same rows', async () => {
    for (const table of ['orderevent', 'click_events']) {
      const rows = (await icebergRead({ tableUrl: `${server.url}/wh/${NS}/${table}` })) as Json[];
      expect(sorted(rows.map((r) => String(r.event_id))), table).toEqual(sorted(expected.get(table)!));
    }
    const orders = (await icebergRead({ tableUrl: `${server.url}/wh/${NS}/orderevent` })) as Json[];
    const withPayment = orders.filter((r) => r.payment_method === 'card').length;
    expect(withPayment).toBeGreaterThan(0);
    expect(withPayment).toBeLessThan(orders.length);
  });
});
