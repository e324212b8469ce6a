/**
 * Catalog-aware file handling (issue #14), end to end through the Lambda handlers on the AWS
 * runtime (`awsRuntime`: the real S3, S3 Tables, Glue and DynamoDB adapters with the SDK) against
 * local stand-ins: s3rver behind a proxy that records every S3 request, a fake S3 Tables control
 * plane, a fake Glue, dynalite. The routing template gives every table a per-rule namespace
 * (`analytics.{event_type}_events`), and the table properties are those of a table an earlier
 * version created (metadata cleanup after every commit, one previous version kept), so each commit
 * wants to delete metadata; a commit conflict is injected so a failed attempt leaves files too.
 *
 * - S3 Tables: no DeleteObject reaches table storage (which refuses it): not the metadata cleanup,
 *   not the failed attempt's files. Deletes of Floe's own staging objects still go out.
 * - Glue: the same deletes are sent to the warehouse; one the bucket refuses is logged at warn
 *   and the commit lands anyway.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLedgerTable } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { CatalogAwareStore } from '../../lambdas/src/adapters/catalog-aware-store.ts';
import { makeCommitterHandler } from '../../lambdas/src/handlers/committer.ts';
import { readSettings } from '../../lambdas/src/handlers/env.ts';
import { makeIngestHandler } from '../../lambdas/src/handlers/ingest.ts';
import { type AwsRuntime, awsRuntime, type MetricsSink } from '../../lambdas/src/handlers/runtime.ts';
import { buildKinesisEvent } from '../../lambdas/src/records/kinesis-event.ts';
import { FakeGlue } from '../cdk/fake-glue.ts';
import { startS3rver } from '../contract/object-store.contract.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { FakeS3Tables } from '../helpers/fake-s3tables.ts';
import { records } from '../helpers/pipeline.ts';
import { S3RecordingProxy } from '../helpers/s3-recording-proxy.ts';

const REGION = 'us-east-1';
const SHARD = 'shardId-000000000000';
const STREAM_ARN = `arn:aws:kinesis:${REGION}:123456789012:stream/floe`;
const TABLE_BUCKET_ARN = `arn:aws:s3tables:${REGION}:123456789012:bucket/floe-tables`;
/** s3rver's one bucket; each S3 Tables table gets a folder of it as its storage. */
const BUCKET = 'bucket';
const TABLE_STORAGE = `/${BUCKET}/table-storage/`;

/** What an earlier version gave every table: clean metadata up after each commit, keep one. */
const FLOE_CONFIG = {
  format: 'json',
  namespace: 'floe',
  formatVersion: 2,
  routing: { template: 'analytics.{event_type}_events' },
  tableProperties: {
    'write.metadata.delete-after-commit.enabled': 'true',
    'write.metadata.previous-versions-max': '1',
  },
};

const quiet: MetricsSink = { addDimension() {}, addMetric() {}, publishStoredMetrics() {} };

let s3: Awaited<ReturnType<typeof startS3rver>>;
let proxy: S3RecordingProxy;
let dynamo: LocalDynamo;
let ledgers = 0;
let lines: string[] = [];

beforeAll(async () => {
  s3 = await startS3rver();
  proxy = new S3RecordingProxy(s3.endpoint);
  await proxy.start();
  dynamo = await startDynalite();
}, 60_000);

afterAll(async () => {
  await proxy?.stop();
  await s3?.close();
  await dynamo?.close();
});

beforeEach(() => {
  proxy.requests.length = 0;
  proxy.refuse = undefined;
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'S3RVER');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'S3RVER');
  vi.stubEnv('AWS_REGION', REGION);
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
  vi.stubEnv('AWS_ENDPOINT_URL_S3', proxy.endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', dynamo.endpoint);
  vi.stubEnv('FLOE_S3_FORCE_PATH_STYLE', '1');
  vi.stubEnv('POWERTOOLS_DEV', '');
  vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'INFO');
  lines = [];
  const grab = (chunk: unknown): boolean => {
    for (const l of String(chunk).split('\n')) if (l.trim() !== '') lines.push(l);
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(grab as typeof process.stdout.write);
  vi.spyOn(process.stderr, 'write').mockImplementation(grab as typeof process.stderr.write);
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

function logs(): Record<string, unknown>[] {
  return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function ledgerTable(): Promise<string> {
  const name = `floe-deletes-${process.pid}-${++ledgers}`;
  await createLedgerTable(dynamo.client, name);
  return name;
}

/** `n` events from `from`, alternating ORDER and CLICK (two tables of namespace `analytics`). */
function batch(from: number, n: number) {
  const payloads = Array.from({ length: n }, (_, j) => {
    const i = from + j;
    return JSON.stringify({
      event_id: `e-${i}`,
      event_type: i % 2 === 0 ? 'ORDER' : 'CLICK',
      event_date: '2025-03-01',
      region: i % 3 === 0 ? 'eu' : 'us',
      amount: 1.5 + i,
    });
  });
  return buildKinesisEvent(SHARD, STREAM_ARN, REGION, records(payloads, from));
}

/** Ingest three batches, committing after each; the second commit meets a conflict first. */
async function stream(runtime: AwsRuntime, conflict: () => void) {
  const ingest = makeIngestHandler(() => runtime, { metrics: quiet });
  const commit = makeCommitterHandler(() => runtime, { metrics: quiet });
  const results = [];
  for (let round = 0; round < 3; round++) {
    expect(await ingest(batch(round * 20, 20))).toEqual({ batchItemFailures: [] });
    if (round === 1) conflict();
    results.push(
      await commit({}, { awsRequestId: `commit-${round}`, getRemainingTimeInMillis: () => 60_000 }),
    );
  }
  return results;
}

async function totalRecords(metadataLocation: string): Promise<string | undefined> {
  const key = metadataLocation.replace(`s3://${BUCKET}/`, '');
  const body = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  const m = JSON.parse(await body.Body!.transformToString()) as {
    'current-snapshot-id': number;
    snapshots: { 'snapshot-id': number; summary: Record<string, string> }[];
  };
  return m.snapshots.find((x) => x['snapshot-id'] === m['current-snapshot-id'])?.summary['total-records'];
}

describe('S3 Tables: no delete is ever sent to table storage', () => {
  const fake = new FakeS3Tables(TABLE_BUCKET_ARN, (n) => `s3://${BUCKET}/table-storage/t${n}--table-s3`);
  beforeAll(() => fake.start());
  afterAll(() => fake.stop());

  it('metadata cleanup and the failed attempt’s files are left to S3 Tables; staging deletes still go out', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_S3TABLES', fake.url);
    const runtime = awsRuntime(
      readSettings({
        FLOE_CONFIG: JSON.stringify(FLOE_CONFIG),
        CATALOG_TYPE: 's3tables',
        TABLE_BUCKET_ARN,
        STAGING_URI: `s3://${BUCKET}/staging`,
        DEAD_LETTER_URI: `s3://${BUCKET}/dead-letters`,
        LEDGER_TABLE: await ledgerTable(),
        AWS_REGION: REGION,
      }),
    );
    try {
      const results = await stream(runtime, () => fake.conflictOnce());
      for (const r of results) expect(r).toMatchObject({ failed: [] });
      expect([...results[0]!.committed].sort()).toEqual(['analytics.click_events', 'analytics.order_events']);

      // The tables live in the rule's namespace, and hold every record.
      expect([...fake.namespaces]).toEqual(['analytics']);
      for (const t of ['order_events', 'click_events']) {
        const table = fake.tables.get(`analytics.${t}`)!;
        expect(await totalRecords(table.metadataLocation!)).toBe('30');
      }
      // The conflict happened, and the commits wrote files the old properties would clean up.
      expect(fake.requests.some((r) => r.method === 'PUT' && r.path.endsWith('/metadata-location'))).toBe(
        true,
      );
      expect(proxy.requests.some((r) => r.method === 'PUT' && r.path.startsWith(TABLE_STORAGE))).toBe(true);

      // Not one DeleteObject against table storage; the store skipped them instead.
      const deletes = proxy.deletes();
      expect(deletes.filter((p) => p.startsWith(TABLE_STORAGE))).toEqual([]);
      const store = runtime.store as CatalogAwareStore;
      expect(store).toBeInstanceOf(CatalogAwareStore);
      // Metadata cleanup after each later commit (2 tables × 2) + the conflicting attempt's files.
      expect(store.skippedDeletes).toBeGreaterThanOrEqual(5);
      // Floe's own objects are still deleted: pending fragments after their commit.
      expect(deletes.some((p) => p.startsWith(`/${BUCKET}/staging/`))).toBe(true);
      for (const p of deletes) expect(p).toMatch(new RegExp(`^/${BUCKET}/(staging|dead-letters)/`));
    } finally {
      runtime.destroy();
    }
  }, 120_000);
});

describe('Glue: deletes keep working, and a refused one is logged at warn', () => {
  const glue = new FakeGlue();
  beforeAll(() => glue.start());
  afterAll(() => glue.stop());

  it('metadata cleanup deletes in the warehouse; an AccessDenied delete is reported, the commit lands', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_GLUE', glue.url);
    const runtime = awsRuntime(
      readSettings({
        FLOE_CONFIG: JSON.stringify(FLOE_CONFIG),
        CATALOG_TYPE: 'glue',
        WAREHOUSE_URI: `s3://${BUCKET}/warehouse`,
        STAGING_URI: `s3://${BUCKET}/staging`,
        DEAD_LETTER_URI: `s3://${BUCKET}/dead-letters`,
        LEDGER_TABLE: await ledgerTable(),
        AWS_REGION: REGION,
      }),
    );
    try {
      // From the conflict on, the warehouse refuses deletes.
      const refuseWarehouseDeletes = () => {
        proxy.refuse = (r) =>
          r.method === 'DELETE' && r.path.startsWith(`/${BUCKET}/warehouse/`)
            ? { status: 403, code: 'AccessDenied', message: 'Access Denied' }
            : undefined;
      };
      const results = await stream(runtime, refuseWarehouseDeletes);
      for (const r of results) expect(r).toMatchObject({ failed: [] });
      expect(glue.databases.has('analytics')).toBe(true);
      for (const t of ['order_events', 'click_events']) {
        const location = glue.tables.get(`analytics.${t}`)!.Parameters!.metadata_location!;
        expect(await totalRecords(location)).toBe('30');
      }

      const deletes = proxy.deletes();
      const warehouse = deletes.filter((p) => p.startsWith(`/${BUCKET}/warehouse/analytics/`));
      // Sent: metadata cleanup of the first later commit succeeded, later ones were refused.
      expect(warehouse.length).toBeGreaterThanOrEqual(2);
      expect((runtime.store as CatalogAwareStore).skippedDeletes).toBe(0);
      const warned = logs().filter(
        (l) => l.level === 'WARN' && l.message === 'delete failed; the file is left for cleanup',
      );
      expect(warned.length).toBeGreaterThanOrEqual(1);
      expect(String(warned[0]!.uri)).toMatch(new RegExp(`^s3://${BUCKET}/warehouse/analytics/`));
      expect(warned[0]!.error).toMatchObject({ name: expect.any(String) });
    } finally {
      runtime.destroy();
    }
  }, 120_000);
});
