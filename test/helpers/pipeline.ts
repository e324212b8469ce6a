/**
 * The streaming pipeline assembled for tests: the real ingest and committer apps on a local-disk
 * warehouse (file catalog), the DynamoDB ledger and lock on dynalite, an object-store dead-letter
 * store, and helpers to cut record lists into genuine Kinesis batches and read back what tables hold.
 */
import { createLedgerTable, DynamoLedger } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { DynamoLock } from '../../lambdas/src/adapters/aws/dynamodb-lock.ts';
import type { LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import { seededIds, systemClock } from '../../lambdas/src/adapters/local/system-clock.ts';
import { ObjectStoreDeadLetterStore } from '../../lambdas/src/adapters/object-dead-letter-store.ts';
import type { CommitterDeps } from '../../lambdas/src/app/committer.ts';
import type { IngestDeps } from '../../lambdas/src/app/ingest.ts';
import { type FloeConfig, parseConfig } from '../../lambdas/src/config.ts';
import { TableCache } from '../../lambdas/src/engine/table-cache.ts';
import type { Catalog } from '../../lambdas/src/ports/catalog.ts';
import type { Clock, Ids } from '../../lambdas/src/ports/clock.ts';
import type { SchemaRegistry } from '../../lambdas/src/ports/schema-registry.ts';
import { IcebergQueryEngine } from '../../lambdas/src/query/engine.ts';
import type { KinesisBatch, KinesisBatchRecord } from '../../lambdas/src/records/kinesis-event.ts';
import type { LocalDynamo } from './dynalite.ts';
import { fileWarehouse, type TestWarehouse } from './e2e.ts';

export interface Pipeline {
  readonly wh: TestWarehouse;
  readonly config: FloeConfig;
  readonly ledger: DynamoLedger;
  readonly lock: DynamoLock;
  readonly deadLetters: ObjectStoreDeadLetterStore;
  readonly clock: Clock;
  readonly ids: Ids;
  ingestDeps(over?: Partial<IngestDeps>): IngestDeps;
  committerDeps(over?: Partial<CommitterDeps>): CommitterDeps;
}

let tableCounter = 0;

export async function startPipeline(
  dynamo: LocalDynamo,
  dir: string,
  opts: { config?: unknown; registry?: SchemaRegistry; seed?: number; clock?: Clock } = {},
): Promise<Pipeline> {
  const tableName = `floe-test-${process.pid}-${++tableCounter}`;
  await createLedgerTable(dynamo.client, tableName);
  const clock = opts.clock ?? systemClock;
  const ids = seededIds(opts.seed ?? 7);
  const wh = fileWarehouse(dir);
  const config = parseConfig(opts.config ?? {});
  const ledger = new DynamoLedger(dynamo.client, { tableName, clock });
  const lock = new DynamoLock(dynamo.client, { tableName, clock });
  const deadLetters = new ObjectStoreDeadLetterStore(wh.store, `${wh.uri}/_dead_letters`);
  const tables = new TableCache(wh.catalog, clock, { refreshMs: 0 });
  return {
    wh,
    config,
    ledger,
    lock,
    deadLetters,
    clock,
    ids,
    ingestDeps: (over = {}) => ({
      config,
      catalog: wh.catalog,
      store: wh.store,
      ledger,
      deadLetters,
      clock,
      ids,
      tables,
      stagingUri: `${wh.uri}/_staging`,
      ...(opts.registry ? { registry: opts.registry } : {}),
      ...over,
    }),
    committerDeps: (over = {}) => ({
      config,
      catalog: wh.catalog,
      store: wh.store,
      ledger,
      lock,
      deadLetters,
      clock,
      ids,
      owner: 'test-committer',
      sleep: async () => undefined,
      route: { tables, stagingUri: `${wh.uri}/_staging` },
      ...(opts.registry ? { registry: opts.registry } : {}),
      ...over,
    }),
  };
}

/** Kinesis-like sequence numbers: 56 digits, far beyond 2^53, strictly increasing. */
export const SEQ_BASE = 49590338271490256608559692538361571095921575989136588898n;

export function records(
  payloads: readonly (string | Uint8Array)[],
  startIndex = 0,
  arrivalMs = Date.UTC(2025, 2, 14, 15),
): KinesisBatchRecord[] {
  return payloads.map((p, i) => ({
    sequenceNumber: (SEQ_BASE + BigInt((startIndex + i) * 1000)).toString(),
    partitionKey: `pk-${(startIndex + i) % 17}`,
    arrivalMs: arrivalMs + startIndex + i,
    data: typeof p === 'string' ? new TextEncoder().encode(p) : p,
  }));
}

export function batchOf(shardId: string, recs: KinesisBatchRecord[]): KinesisBatch {
  return { shardId, streamArn: 'arn:aws:kinesis:us-east-1:000000000000:stream/floe-test', records: recs };
}

/** Event ids per table of everything committed (sorted multiset), read by DuckDB through our scan planner. */
export async function committedIds(p: Pipeline, idColumn = 'event_id'): Promise<Map<string, string[]>> {
  return committedIdsOf(p.wh.catalog, p.wh.store, p.config.namespace, idColumn);
}

export async function committedIdsOf(
  catalog: Catalog,
  store: LocalObjectStore,
  namespace: string,
  idColumn = 'event_id',
): Promise<Map<string, string[]>> {
  const engine = new IcebergQueryEngine({
    read: (uri) => store.get(uri),
    resolvePath: (uri) => store.pathOf(uri),
  });
  const out = new Map<string, string[]>();
  try {
    for (const name of await catalog.listTables(namespace).catch(() => [])) {
      const t = await catalog.loadTable({ namespace, name });
      if (t.metadata['current-snapshot-id'] === undefined || t.metadata['current-snapshot-id'] === null) {
        out.set(name, []);
        continue;
      }
      await engine.registerTable(name, t.metadata);
      const r = await engine.query(`SELECT CAST(${idColumn} AS VARCHAR) AS id FROM "${name}"`);
      out.set(name, r.rows.map((x) => String(x.id)).sort());
    }
  } finally {
    engine.close();
  }
  return out;
}
