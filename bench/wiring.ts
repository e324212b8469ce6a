/**
 * The streaming apps wired for the benchmarks: the real ingest and committer on a local-disk
 * warehouse (file catalog), the DynamoDB ledger and lease lock on dynalite, an object-store
 * dead-letter store. Copied from test/helpers/pipeline.ts with two differences that matter for
 * timing: the ingest's table cache keeps tables for its default 30 s (a warm Lambda), and the
 * ledger table is named by the caller, so a child process can attach to the parent's ledger.
 */

import { spawn } from 'node:child_process';
import http from 'node:http';
import { createRequire } from 'node:module';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createLedgerTable, DynamoLedger } from '../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { DynamoLock } from '../lambdas/src/adapters/aws/dynamodb-lock.ts';
import { FileCatalog } from '../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../lambdas/src/adapters/local/local-object-store.ts';
import { seededIds, systemClock } from '../lambdas/src/adapters/local/system-clock.ts';
import { ObjectStoreDeadLetterStore } from '../lambdas/src/adapters/object-dead-letter-store.ts';
import type { CommitterDeps } from '../lambdas/src/app/committer.ts';
import type { IngestDeps } from '../lambdas/src/app/ingest.ts';
import { type FloeConfig, parseConfig } from '../lambdas/src/config.ts';
import { TableCache } from '../lambdas/src/engine/table-cache.ts';
import type { Ledger } from '../lambdas/src/ports/ledger.ts';
import type { Lock } from '../lambdas/src/ports/lock.ts';
import type { KinesisBatchRecord } from '../lambdas/src/records/kinesis-event.ts';

// The SDK's "Node 20 support ends" notice would be printed by every process.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// ---------------------------------------------------------------------------------------------
// dynalite (in this process) and a DynamoDB client for it

export interface Dynamo {
  readonly client: DynamoDBClient;
  readonly endpoint: string;
  close(): Promise<void>;
}

/** DynamoDB requests sent by every client made here (ledger and lock calls each send one or more). */
export const dynamoRequests = { count: 0 };

export function dynamoClient(endpoint: string): DynamoDBClient {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    requestHandler: new NodeHttpHandler({ httpAgent: new http.Agent({ keepAlive: true, maxSockets: 32 }) }),
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      dynamoRequests.count++;
      return next(args);
    },
    { step: 'initialize', name: 'benchRequestCounter' },
  );
  return client;
}

/**
 * dynalite in a child process: DynamoDB is a remote service in production, so the emulator's own
 * CPU must not be billed to the code under test (in-process it took ~8 ms of a 10k-record
 * invocation's main thread). Requests still travel over HTTP on 127.0.0.1.
 */
export async function startDynalite(): Promise<Dynamo> {
  const path = createRequire(import.meta.url).resolve('dynalite');
  const script = `
    const dynalite = require(${JSON.stringify(path)});
    const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
    process.stdin.on('end', () => process.exit(0));
    process.stdin.resume();`;
  const child = spawn(process.execPath, ['-e', script], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0]!) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`dynalite exited early (${code})`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = dynamoClient(endpoint);
  return {
    client,
    endpoint,
    close: async () => {
      client.destroy();
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.stdin.end();
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Time spent waiting on the ledger and the lock (dynalite answers in this process, so this
// includes its CPU time)

export class CallTimer {
  /** Summed duration of all calls (concurrent calls add up). */
  ms = 0;
  /** Wall time during which at least one call was in flight. */
  wallMs = 0;
  calls = 0;
  private inFlight = 0;
  private since = 0;
  reset(): void {
    this.ms = 0;
    this.wallMs = 0;
    this.calls = 0;
  }
  wrap<T extends object>(target: T): T {
    return new Proxy(target, {
      get: (t, key) => {
        const v = Reflect.get(t, key, t);
        if (typeof v !== 'function') return v;
        return async (...args: unknown[]) => {
          const t0 = performance.now();
          if (this.inFlight++ === 0) this.since = t0;
          try {
            return await v.apply(t, args);
          } finally {
            const t1 = performance.now();
            this.ms += t1 - t0;
            this.calls++;
            if (--this.inFlight === 0) this.wallMs += t1 - this.since;
          }
        };
      },
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The pipeline

export interface BenchPipeline {
  readonly dir: string;
  readonly uri: string;
  readonly store: LocalObjectStore;
  readonly catalog: FileCatalog;
  readonly config: FloeConfig;
  readonly ledgerTable: string;
  /** Times every ledger and lock call made through `ingestDeps` / `committerDeps`. */
  readonly dynamoTime: CallTimer;
  /** A fresh table cache (default refresh 30 s), as a newly started Lambda has. */
  newTableCache(): TableCache;
  ingestDeps(tables: TableCache): IngestDeps;
  committerDeps(): CommitterDeps;
}

let ledgerCounter = 0;

export function ledgerTableName(): string {
  return `floe-bench-${process.pid}-${++ledgerCounter}`;
}

export async function createLedger(client: DynamoDBClient, name = ledgerTableName()): Promise<string> {
  await createLedgerTable(client, name);
  return name;
}

/** Wires the apps on `dir` and the ledger table `ledgerTable` (which must exist). */
export function pipeline(
  client: DynamoDBClient,
  dir: string,
  ledgerTable: string,
  opts: { config?: unknown; seed?: number; store?: LocalObjectStore } = {},
): BenchPipeline {
  const clock = systemClock;
  const ids = seededIds(opts.seed ?? 7);
  // A caller may pass a decorated store (bench/ingest-width.ts counts puts and bytes).
  const store = opts.store ?? new LocalObjectStore();
  const uri = fileUri(dir);
  const catalog = new FileCatalog(store, uri);
  const config = parseConfig(opts.config ?? {});
  const dynamoTime = new CallTimer();
  const ledger: Ledger = dynamoTime.wrap(new DynamoLedger(client, { tableName: ledgerTable, clock }));
  const lock: Lock = dynamoTime.wrap(new DynamoLock(client, { tableName: ledgerTable, clock }));
  const deadLetters = new ObjectStoreDeadLetterStore(store, `${uri}/_dead_letters`);
  return {
    dir,
    uri,
    store,
    catalog,
    config,
    ledgerTable,
    dynamoTime,
    newTableCache: () => new TableCache(catalog, clock),
    ingestDeps: (tables) => ({
      config,
      catalog,
      store,
      ledger,
      deadLetters,
      clock,
      ids,
      tables,
      stagingUri: `${uri}/_staging`,
    }),
    committerDeps: () => ({
      config,
      catalog,
      store,
      ledger,
      lock,
      deadLetters,
      clock,
      ids,
      owner: 'bench-committer',
      sleep: async () => undefined,
      route: { tables: new TableCache(catalog, clock), stagingUri: `${uri}/_staging` },
    }),
  };
}

export const UNPARTITIONED = { partitioning: { candidates: [] } };
/** The ingest benchmark's config: default partitioning (event_date × region), or none. */
export const INGEST_CONFIG = process.env.BENCH_UNPARTITIONED === '1' ? UNPARTITIONED : {};

// ---------------------------------------------------------------------------------------------
// Kinesis records

export const SHARD = 'shardId-000000000000';
export const STREAM_ARN = 'arn:aws:kinesis:us-east-1:000000000000:stream/floe-bench';

/** Kinesis-like sequence numbers: 56 digits, far beyond 2^53, strictly increasing. */
const SEQ_BASE = 49590338271490256608559692538361571095921575989136588898n;

/** Records with sequence numbers from `startIndex` on (use a fresh range per batch); text is UTF-8 encoded. */
export function kinesisRecords(
  payloads: readonly (string | Uint8Array)[],
  startIndex: number,
): KinesisBatchRecord[] {
  const enc = new TextEncoder();
  const arrival = Date.now();
  return payloads.map((p, i) => ({
    sequenceNumber: (SEQ_BASE + BigInt((startIndex + i) * 1000)).toString(),
    partitionKey: `pk-${(startIndex + i) % 17}`,
    arrivalMs: arrival + i,
    data: typeof p === 'string' ? enc.encode(p) : p,
  }));
}
