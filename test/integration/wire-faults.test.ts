/**
 * Faults on the wire (issue 21): the ingest and committer handlers run against dynalite (ledger,
 * leases) and s3rver (warehouse, staging, dead letters) through a fault proxy of our own
 * (test/helpers/fault-proxy.ts) that loses requests, applies requests and loses their answers,
 * delays them, or fails them, for every DynamoDB and S3 call the handlers make. A schedule of
 * runs: each batch delivered as Lambda's event source mapping does (a failed invocation retried,
 * a reported item resumed from), a scheduled committer run after each, all under faults; then the
 * faults stop. Every table must hold exactly the records sent, read by an independent validator,
 * and nothing staged may be left after two committer runs.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLedgerTable, DynamoLedger } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { DynamoLock } from '../../lambdas/src/adapters/aws/dynamodb-lock.ts';
import { createDynamoClient } from '../../lambdas/src/adapters/aws/glue-schema-registry.ts';
import { createS3Client, S3ObjectStore } from '../../lambdas/src/adapters/aws/s3-object-store.ts';
import { FileCatalog } from '../../lambdas/src/adapters/local/file-catalog.ts';
import { seededIds, systemClock } from '../../lambdas/src/adapters/local/system-clock.ts';
import { ObjectStoreDeadLetterStore } from '../../lambdas/src/adapters/object-dead-letter-store.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import { DEFERRED_CHAIN, ROUTED_CHAIN } from '../../lambdas/src/engine/deferred-batch.ts';
import { TableCache } from '../../lambdas/src/engine/table-cache.ts';
import { makeCommitterHandler } from '../../lambdas/src/handlers/committer.ts';
import { makeIngestHandler } from '../../lambdas/src/handlers/ingest.ts';
import type { HandlerRuntime, LambdaContext } from '../../lambdas/src/handlers/runtime.ts';
import { buildKinesisEvent, type KinesisBatchRecord } from '../../lambdas/src/records/kinesis-event.ts';
import { startS3rver } from '../contract/object-store.contract.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import {
  currentSnapshotOf,
  generate,
  groupByTable,
  liveFiles,
  openDuck,
  sorted,
  sqlString,
  tempDir,
} from '../helpers/e2e.ts';
import { type FaultProxy, startFaultProxy } from '../helpers/fault-proxy.ts';
import { Rng } from '../helpers/faults.ts';
import { records } from '../helpers/pipeline.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

const SHARD = 'shardId-000000000007';
const STREAM_ARN = 'arn:aws:kinesis:us-east-1:000000000000:stream/floe-wire';
const SCHEDULED = {
  version: '0',
  id: 'c9f3b2a4-0000-4000-8000-000000000007',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  time: '2025-03-14T15:01:00Z',
  detail: {},
};
const NS = 'default';

let dynamo: LocalDynamo;
let s3: Awaited<ReturnType<typeof startS3rver>>;
const cleanups: (() => void)[] = [];
beforeAll(async () => {
  dynamo = await startDynalite();
  s3 = await startS3rver();
}, 60_000);
afterAll(async () => {
  await dynamo?.close();
  await s3?.close();
  for (const c of cleanups) c();
});
beforeEach(() => {
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'SILENT');
});
afterEach(() => {
  vi.unstubAllEnvs();
});

interface Wired {
  readonly ddb: FaultProxy;
  readonly s3: FaultProxy;
  readonly ledger: DynamoLedger;
  readonly store: S3ObjectStore;
  readonly catalog: FileCatalog;
  readonly runtime: HandlerRuntime;
  close(): Promise<void>;
}

let wiredCount = 0;

/** The handlers' runtime on dynalite and s3rver, every request through a fault proxy. */
async function wire(seed: number, chance: number, configured: unknown = {}): Promise<Wired> {
  const rng = new Rng(seed);
  const ddb = await startFaultProxy(dynamo.endpoint, { rng, chance, service: 'dynamodb' });
  const s3p = await startFaultProxy(s3.endpoint, { rng, chance, service: 's3' });
  const tableName = `floe-wire-${process.pid}-${++wiredCount}`;
  await createLedgerTable(dynamo.client, tableName);
  const client = createDynamoClient({
    endpoint: ddb.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestTimeoutMs: 3_000,
  });
  const s3Client = createS3Client({
    region: 'us-east-1',
    endpoint: s3p.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestTimeoutMs: 3_000,
  });
  const store = new S3ObjectStore(s3Client);
  const base = `s3://bucket/wire-${wiredCount}`;
  const catalog = new FileCatalog(store, base);
  const clock = systemClock;
  const ledger = new DynamoLedger(client, { tableName, clock });
  const lock = new DynamoLock(client, { tableName, clock });
  const deadLetters = new ObjectStoreDeadLetterStore(store, `${base}/_dead_letters`);
  const config = parseConfig(configured);
  const ids = seededIds(seed);
  const tables = new TableCache(catalog, clock, { refreshMs: 0 });
  const runtime: HandlerRuntime = {
    ingestDeps: () => ({
      config,
      catalog,
      store,
      ledger,
      deadLetters,
      clock,
      ids,
      tables,
      stagingUri: `${base}/_staging`,
    }),
    committerDeps: (owner) => ({
      config,
      catalog,
      store,
      ledger,
      lock,
      deadLetters,
      clock,
      ids,
      owner,
      route: { tables, stagingUri: `${base}/_staging` },
    }),
    commitConcurrency: 2,
  };
  return {
    ddb,
    s3: s3p,
    ledger,
    store,
    catalog,
    runtime,
    close: async () => {
      client.destroy();
      s3Client.destroy();
      await ddb.close();
      await s3p.close();
    },
  };
}

const context = (requestId: string): LambdaContext => ({
  awsRequestId: requestId,
  functionName: 'floe-wire',
});

/** What the tables hold: event ids per table, read with DuckDB from the live files (S3 copies). */
async function committedIds(w: Wired, dir: string, names: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const duck = await openDuck();
  try {
    // Named, not listed: s3rver answers a delimited listing of these keys with nothing.
    for (const name of names) {
      if (!(await w.catalog.tableExists({ namespace: NS, name }))) continue;
      const snap = currentSnapshotOf((await w.catalog.loadTable({ namespace: NS, name })).metadata);
      const ids: string[] = [];
      for (const [i, f] of (snap ? await liveFiles(w.store, snap) : []).entries()) {
        const path = join(dir, `${name}-${i}.parquet`);
        writeFileSync(path, await w.store.get(f.file.file_path));
        const rows = await duck.rows(`SELECT event_id FROM read_parquet(${sqlString(path)})`);
        ids.push(...rows.map((r) => String(r.event_id)));
      }
      out.set(name, sorted(ids));
    }
  } finally {
    duck.close();
  }
  return out;
}

describe('the handlers with faults on the wire (dynalite, s3rver)', () => {
  // At 10 % the SDK's own retries absorb nearly every fault; at 35 % many reach the handlers (all
  // three attempts of a call faulted): failed invocations, failed tables, lost lease answers.
  // The last: every batch deferred (one object, one ledger entry) and routed by the committer.
  for (const [seed, chance, deferred] of [
    [2101, 0.1, false],
    [2102, 0.35, false],
    [2103, 0.35, false],
    [2104, 0.35, true],
  ] as const) {
    it(`seed ${seed}, ${chance * 100} % of requests faulted${deferred ? ', batches deferred' : ''}: exact data, nothing staged two runs after the faults stop`, async () => {
      const tmp = tempDir('floe-wire-');
      cleanups.push(tmp.cleanup);
      const w = await wire(seed, chance, deferred ? { source: { deferRouting: true } } : {});
      try {
        const tools = () => ({
          logger: new Logger({ serviceName: 'floe-wire', logLevel: 'SILENT' }),
          metrics: new Metrics({ namespace: 'Floe', serviceName: 'floe-wire' }),
        });
        const ingest = makeIngestHandler(() => w.runtime, tools());
        const commit = makeCommitterHandler(() => w.runtime, tools());
        const gen = generate(480, 'v1', seed);
        const recs = records(gen.lines, 0);
        let invocation = 0;
        /** Lambda's event source mapping: retried until the batch is processed; resumes at a reported item. */
        const deliver = async (batch: readonly KinesisBatchRecord[]) => {
          let from = 0;
          for (let attempt = 1; from < batch.length; attempt++) {
            expect(attempt, 'delivery converges').toBeLessThan(40);
            const event = buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', batch.slice(from));
            let failures: { itemIdentifier: string }[];
            try {
              failures = (await ingest(event, context(`ingest-${++invocation}`))).batchItemFailures;
            } catch {
              continue; // the whole batch again
            }
            if (failures.length === 0) return;
            const at = batch.findIndex((r) => r.sequenceNumber === failures[0]!.itemIdentifier);
            expect(at).toBeGreaterThanOrEqual(from);
            from = at;
          }
        };
        const runs: string[] = [];
        const runCommitter = async (id: string) => {
          try {
            const s = await commit(SCHEDULED, context(id));
            runs.push(
              `${id}: ${'skipped' in s ? 'skipped' : `${s.committed.length} committed, ${s.failed.length} failed`}`,
            );
            return s;
          } catch (e) {
            runs.push(`${id}: threw ${(e as Error).message}`);
            return undefined;
          }
        };

        w.ddb.faulting = true;
        w.s3.faulting = true;
        for (let i = 0; i < recs.length; i += 80) {
          await deliver(recs.slice(i, i + 80));
          await runCommitter(`commit-${i}`);
        }
        w.ddb.faulting = false;
        w.s3.faulting = false;
        // Every kind of fault hit both services.
        for (const proxy of [w.ddb, w.s3])
          for (const kind of ['drop-request', 'lose-answer', 'delay', 'fail'])
            expect(proxy.counts.get(kind) ?? 0, `${kind}: ${[...proxy.counts]}`).toBeGreaterThan(0);

        // Within two runs of the faults stopping, every table with staged work is committed.
        for (const id of ['after-1', 'after-2']) {
          await runCommitter(id);
          if ((await w.ledger.tablesWithStagedWork()).length === 0) break;
        }
        expect(await w.ledger.tablesWithStagedWork(), runs.join('\n')).toEqual([]);
        if (deferred) {
          // The batches went through the shard's deferral chains, all of them routed.
          const tails = await w.ledger.shardTails(SHARD);
          expect(tails.get(DEFERRED_CHAIN)).toBe(recs[recs.length - 1]!.sequenceNumber);
          expect(tails.get(ROUTED_CHAIN)).toBe(tails.get(DEFERRED_CHAIN));
        }

        const expected = new Map(
          [...groupByTable(gen.events)]
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([t, evs]) => [t, sorted(evs.map((e) => String(e.event_id)))]),
        );
        expect(await committedIds(w, tmp.dir, [...expected.keys()])).toEqual(expected);
        const tables = [...expected.keys()].map((name) => ({ namespace: NS, name }));
        await expectWarehouseValid({ store: w.store, catalog: w.catalog }, { tables });
        expect(w.ddb.inFlight() + w.s3.inFlight()).toBe(0);
        // At the higher rate the faults reached the handlers, not only the SDK's retries.
        if (chance > 0.3)
          expect(
            runs.some((r) => /[1-9]\d* failed|threw|skipped/.test(r)),
            runs.join('\n'),
          ).toBe(true);
      } finally {
        await w.close();
      }
    }, 300_000);
  }
});
