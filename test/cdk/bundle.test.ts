/**
 * The one real bundling test: synthesizes the default stack WITH bundling (esbuild on this
 * machine, no Docker), copies the three Lambda assets out of `cdk.out` into a folder outside the
 * repository (so nothing resolves from the project's node_modules), and runs the bundled handlers
 * there, each invocation in a fresh `node` process, with the environment the template gives them
 * (resource names swapped for local ones) against local stand-ins reached through the AWS SDK's
 * service endpoint variables: s3rver (`AWS_ENDPOINT_URL_S3`), dynalite (`AWS_ENDPOINT_URL_DYNAMODB`)
 * and a fake Glue (`AWS_ENDPOINT_URL_GLUE`).
 *
 *   ingest(batch 1) → the table does not exist yet: a pending fragment in staging/
 *   committer       → creates floe.order_events (Glue + metadata in S3), rewrites the fragment as Parquet
 *   ingest(batch 2) → the table exists: the ingest writes a Parquet data file itself
 *   committer       → commits it: the table holds all 100 rows
 *   maintenance     → Floe's own maintenance (the default): compacts the table's small files
 *
 * Then the committer's fan-out through Lambda's own wire protocol: a fake Lambda service
 * (`AWS_ENDPOINT_URL_LAMBDA`) answers each asynchronous `Invoke` with 202 and runs the bundled
 * committer with the slice event in a process of its own, as Lambda would.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerTable } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { buildKinesisEvent } from '../../lambdas/src/records/kinesis-event.ts';
import { PARQUET_WASM_FILE } from '../../lib/lambda.ts';
import { startS3rver } from '../contract/object-store.contract.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { FakeGlue } from './fake-glue.ts';
import { one, type Synth, synth } from './helpers.ts';

const REGION = 'us-east-1';
const BUCKET = 'bucket';
const LEDGER = 'floe-ledger';
const STREAM_ARN = `arn:aws:kinesis:${REGION}:123456789012:stream/floe`;
const SHARD = 'shardId-000000000000';
const FIRST_SEQUENCE = 49_590_338_271_490_256_608_559_692_538_361_571_095_921_575_989_136_588_898n;

/** Runs one bundled handler in a fresh node process; resolves its return value. */
const RUNNER = `
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const [assetDir, eventFile, outFile] = process.argv.slice(2);
const { handler } = await import(pathToFileURL(join(assetDir, 'index.mjs')).href);
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const started = Date.now();
const context = {
  awsRequestId: 'request-' + started + '-' + process.pid,
  functionName: 'floe',
  getRemainingTimeInMillis: () => 120000 - (Date.now() - started),
};
const result = await handler(event, context);
writeFileSync(outFile, JSON.stringify(result));
`;

let s: Synth;
let runDir: string;
let s3: Awaited<ReturnType<typeof startS3rver>>;
let dynamo: LocalDynamo;
const glue = new FakeGlue();
let invocation = 0;
let bundleMs = 0;

beforeAll(async () => {
  const outdir = mkdtempSync(join(tmpdir(), 'floe-cdk-out-'));
  const started = Date.now();
  s = synth({}, { bundle: true, outdir });
  s.app.synth();
  bundleMs = Date.now() - started;

  // Copy the assets (named by the S3 key of each function's code) out of cdk.out.
  runDir = mkdtempSync(join(tmpdir(), 'floe-lambda-run-'));
  for (const name of ['ingest', 'committer', 'maintenance'] as const) {
    const fn = one(s.template, 'AWS::Lambda::Function', (_p, id) =>
      id.startsWith(`${name[0]!.toUpperCase()}${name.slice(1)}Handler`),
    );
    const key = (fn.Code as { S3Key: string }).S3Key;
    cpSync(join(outdir, `asset.${key.replace(/\.zip$/, '')}`), join(runDir, name), { recursive: true });
  }
  writeFileSync(join(runDir, 'run.mjs'), RUNNER);
  rmSync(outdir, { recursive: true, force: true });

  s3 = await startS3rver();
  dynamo = await startDynalite();
  await createLedgerTable(dynamo.client, LEDGER);
  await glue.start();
}, 120_000);

afterAll(async () => {
  await s3?.close();
  await dynamo?.close();
  await glue.stop();
  if (runDir) rmSync(runDir, { recursive: true, force: true });
});

/** The function's environment from the template, with this test's resources swapped in. */
type Handler = 'Ingest' | 'Committer' | 'Maintenance';

function environment(handler: Handler): Record<string, string> {
  const fn = one(s.template, 'AWS::Lambda::Function', (_p, id) => id.startsWith(handler));
  const variables = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
  const local: Record<string, string> = {
    WAREHOUSE_URI: `s3://${BUCKET}/warehouse`,
    STAGING_URI: `s3://${BUCKET}/staging`,
    DEAD_LETTER_URI: `s3://${BUCKET}/dead-letters`,
    LEDGER_TABLE: LEDGER,
    // Asked only for a table with hundreds of small files, which this test does not make.
    MAINTENANCE_FUNCTION: 'floe-maintenance',
  };
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(variables)) {
    if (k in local) env[k] = local[k]!;
    else if (typeof v === 'string') env[k] = v;
    else throw new Error(`unexpected reference in ${k}: ${JSON.stringify(v)}`);
  }
  return env;
}

/**
 * Runs one bundled handler in a fresh node process (asynchronously: dynalite and the fake Glue
 * answer from this process's event loop).
 */
async function invoke(
  handler: Handler,
  event: unknown,
  extraEnv: Record<string, string> = {},
): Promise<unknown> {
  invocation += 1;
  const eventFile = join(runDir, `event-${invocation}.json`);
  const outFile = join(runDir, `result-${invocation}.json`);
  writeFileSync(eventFile, JSON.stringify(event));
  const child = spawn(
    process.execPath,
    ['run.mjs', join(runDir, handler.toLowerCase()), eventFile, outFile],
    {
      cwd: runDir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        ...environment(handler),
        AWS_REGION: REGION,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_ENDPOINT_URL_S3: s3.endpoint,
        AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
        AWS_ENDPOINT_URL_GLUE: glue.url,
        ...extraEnv,
      },
    },
  );
  let output = '';
  child.stdout.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    output += c.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const status = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  clearTimeout(timer);
  if (status !== 0 || !existsSync(outFile))
    throw new Error(`${handler} exited ${status}:\n${output.slice(-6000)}`);
  return JSON.parse(readFileSync(outFile, 'utf8'));
}

function kinesisEvent(from: number, count: number) {
  const records = Array.from({ length: count }, (_, j) => {
    const i = from + j;
    const event = {
      event_id: `e-${i}`,
      event_type: 'ORDER',
      event_time: '2025-03-01T12:00:00Z',
      event_date: '2025-03-01',
      region: i % 2 === 0 ? 'eu' : 'us',
      order_id: `o-${i}`,
      amount: 10.5 + i,
    };
    return {
      sequenceNumber: (FIRST_SEQUENCE + BigInt(i)).toString(),
      partitionKey: `k${i}`,
      arrivalMs: Date.now(),
      data: new TextEncoder().encode(JSON.stringify(event)),
    };
  });
  return buildKinesisEvent(SHARD, STREAM_ARN, REGION, records);
}

async function keys(prefix: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.client.send(
      new ListObjectsV2Command({
        Bucket: BUCKET,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const o of page.Contents ?? []) if (o.Key) out.push(o.Key);
    token = page.NextContinuationToken;
  } while (token);
  return out.sort();
}

async function bytes(key: string): Promise<Uint8Array> {
  const r = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return r.Body!.transformToByteArray();
}

/** The current snapshot's summary of `floe.<table>`, read from the metadata file Glue points at. */
async function currentSummary(table: string): Promise<Record<string, string>> {
  const location = glue.tables.get(`floe.${table}`)!.Parameters!.metadata_location!;
  const md = JSON.parse(new TextDecoder().decode(await bytes(location.replace(`s3://${BUCKET}/`, '')))) as {
    'current-snapshot-id': number;
    snapshots: { 'snapshot-id': number; summary: Record<string, string> }[];
  };
  return md.snapshots.find((x) => x['snapshot-id'] === md['current-snapshot-id'])!.summary;
}

const TABLE_PREFIX = 'warehouse/floe/order_events/';
const isParquet = (k: string) => k.endsWith('.parquet');

describe('the bundled Lambda assets', () => {
  it('are self-contained ESM bundles with parquet-wasm beside them, no DuckDB, no node_modules', () => {
    console.log(`synth with bundling: ${bundleMs} ms`);
    for (const name of ['ingest', 'committer', 'maintenance']) {
      const files = readdirSync(join(runDir, name)).sort();
      expect(files).toEqual(['index.mjs', 'index.mjs.map', PARQUET_WASM_FILE]);
      const code = readFileSync(join(runDir, name, 'index.mjs'), 'utf8');
      expect(code).not.toMatch(/@duckdb|duckdb\.node|kinesalite|dynalite|s3rver/);
      expect(code.length).toBeLessThan(3_000_000);
    }
    // Nothing outside the asset can be resolved from where the bundles run.
    const require = createRequire(join(runDir, 'ingest', 'index.mjs'));
    expect(() => require.resolve('parquet-wasm')).toThrow();
    expect(() => require.resolve('@aws-sdk/client-s3')).toThrow();
  });

  it('the ingest rejects a malformed event with FloeError DataInvalid (the module loads and runs)', async () => {
    await expect(invoke('Ingest', { Records: 'nope' })).rejects.toThrow(/"kind":"DataInvalid"/);
  });

  it('ingest → committer → ingest → committer writes Parquet files and commits every row', async () => {
    // 1. A table never seen: pending fragment, no data file.
    expect(await invoke('Ingest', kinesisEvent(0, 50))).toEqual({ batchItemFailures: [] });
    expect((await keys('staging/')).length).toBeGreaterThan(0);
    expect((await keys('warehouse/')).filter(isParquet)).toEqual([]);

    // 2. The committer creates the table and rewrites the pending records as Parquet.
    const first = (await invoke('Committer', {})) as { committed: string[]; failed: string[]; rows: number };
    expect(first).toMatchObject({ committed: ['order_events'], failed: [], rows: 50 });
    expect(glue.tables.has('floe.order_events')).toBe(true);
    const afterCommit = (await keys(TABLE_PREFIX)).filter(isParquet);
    expect(afterCommit.length).toBeGreaterThan(0);

    // 3. The table exists now: the bundled ingest writes the Parquet data file itself.
    expect(await invoke('Ingest', kinesisEvent(50, 50))).toEqual({ batchItemFailures: [] });
    const written = (await keys(TABLE_PREFIX)).filter(isParquet).filter((k) => !afterCommit.includes(k));
    expect(written.length).toBeGreaterThan(0);
    let rows = 0;
    for (const k of written) {
      const b = await bytes(k);
      expect(new TextDecoder().decode(b.subarray(0, 4))).toBe('PAR1');
      const buffer = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
      rows += Number(parquetMetadata(buffer).num_rows);
    }
    expect(rows).toBe(50);

    // 4. Committed: the current snapshot holds all 100 records.
    const second = (await invoke('Committer', {})) as { committed: string[]; rows: number };
    expect(second).toMatchObject({ committed: ['order_events'], rows: 50 });
    const location = glue.tables.get('floe.order_events')!.Parameters!.metadata_location!;
    const metadata = JSON.parse(
      new TextDecoder().decode(await bytes(location.replace(`s3://${BUCKET}/`, ''))),
    ) as {
      'current-snapshot-id': number;
      snapshots: { 'snapshot-id': number; summary: Record<string, string> }[];
    };
    const current = metadata.snapshots.find((x) => x['snapshot-id'] === metadata['current-snapshot-id'])!;
    expect(current.summary['total-records']).toBe('100');
    expect(glue.operations).toContain('UpdateTable');

    // 5. The bundled maintenance function compacts the table under the committer's lease.
    const maintained = (await invoke('Maintenance', {})) as {
      mode: string;
      maintained: string[];
      failed: string[];
    };
    expect(maintained).toMatchObject({ mode: 'floe', maintained: ['order_events'], failed: [] });
    const compacted = JSON.parse(
      new TextDecoder().decode(
        await bytes(
          glue.tables.get('floe.order_events')!.Parameters!.metadata_location!.replace(`s3://${BUCKET}/`, ''),
        ),
      ),
    ) as typeof metadata;
    const now = compacted.snapshots.find((x) => x['snapshot-id'] === compacted['current-snapshot-id'])!;
    expect(now.summary['total-records']).toBe('100');
    expect(Number(now.summary['total-data-files'])).toBeLessThan(Number(current.summary['total-data-files']));
  });

  it('the bundled committer fans out: slices through Lambda Invoke, each run by the bundle, every row once', async () => {
    const types = ['FAN0', 'FAN1', 'FAN2', 'FAN3', 'FAN4', 'FAN5'];
    const tables = types.map((t) => `${t.toLowerCase()}_events`);
    const events = Array.from({ length: 60 }, (_, i) => ({
      event_id: `f-${i}`,
      event_type: types[i % types.length],
      event_date: '2025-03-02',
      region: 'eu',
      n: i,
    }));
    const batch = buildKinesisEvent(
      SHARD,
      STREAM_ARN,
      REGION,
      events.map((e, i) => ({
        sequenceNumber: (FIRST_SEQUENCE + 1_000_000n + BigInt(i)).toString(),
        partitionKey: `f${i}`,
        arrivalMs: Date.now(),
        data: new TextEncoder().encode(JSON.stringify(e)),
      })),
    );
    expect(await invoke('Ingest', batch)).toEqual({ batchItemFailures: [] });
    // The fake Lambda: 202 at once, then the bundle runs the event (an asynchronous invocation).
    const calls: { url: string; type: string | undefined; body: unknown }[] = [];
    const runs: Promise<unknown>[] = [];
    const lambdaEnv: Record<string, string> = {
      AWS_LAMBDA_FUNCTION_NAME: 'floe-committer',
      COMMIT_TABLES_PER_SLICE: '2',
    };
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as unknown;
        calls.push({
          url: req.url ?? '',
          type: req.headers['x-amz-invocation-type'] as string | undefined,
          body,
        });
        res.writeHead(202).end();
        runs.push(invoke('Committer', body, { ...lambdaEnv, AWS_ENDPOINT_URL_LAMBDA: url }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const tick = (await invoke(
        'Committer',
        { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} },
        { ...lambdaEnv, AWS_ENDPOINT_URL_LAMBDA: url },
      )) as { committed: string[]; failed: string[]; slices: number; dispatched: number };
      const slices = (await Promise.all(runs)) as { committed: string[]; failed: string[] }[];
      expect(tick).toMatchObject({ slices: 3, dispatched: 2, failed: [] });
      expect(calls.map((c) => [c.url, c.type])).toEqual([
        ['/2015-03-31/functions/floe-committer/invocations', 'Event'],
        ['/2015-03-31/functions/floe-committer/invocations', 'Event'],
      ]);
      expect(
        calls.map((c) => (c.body as { floeCommitSlice: { index: number } }).floeCommitSlice.index).sort(),
      ).toEqual([1, 2]);
      for (const r of slices) expect(r.failed).toEqual([]);
      const committed = [tick, ...slices].flatMap((r) => r.committed).sort();
      expect(committed).toEqual([...tables].sort());
    } finally {
      await new Promise((r) => server.close(() => r(undefined)));
    }
    // Every table created, holding exactly its 10 rows.
    for (const t of tables) expect((await currentSummary(t))['total-records'], t).toBe('10');
  }, 180_000);
});
