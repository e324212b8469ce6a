/**
 * Contract test of S3TablesTableMaintenance against the real AWS SDK v3 S3TablesClient, pointed at
 * a local HTTP server speaking S3 Tables' REST-JSON wire format (the table-bucket ARN URL-encoded as
 * one path segment; errors as HTTP status + `x-amzn-errortype`). Every request is pinned: method,
 * path and body of `PutTableMaintenanceConfiguration` / `GetTableMaintenanceConfiguration`.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3TablesClient } from '@aws-sdk/client-s3tables';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { S3TablesTableMaintenance } from '../../lambdas/src/adapters/aws/s3tables-maintenance.ts';
import { ErrorKind } from '../../lambdas/src/errors.ts';
import type { TableIdentifier } from '../../lambdas/src/ports/catalog.ts';
import type { ManagedMaintenanceSettings } from '../../lambdas/src/ports/managed-maintenance.ts';

const ARN = 'arn:aws:s3tables:eu-west-1:123456789012:bucket/floe-tables';
const ARN_ENC = 'arn%3Aaws%3As3tables%3Aeu-west-1%3A123456789012%3Abucket%2Ffloe-tables';
const TABLE_ARN = `${ARN}/table/2d1b6c6e-0c8f-4a4b-9f1e-3b5d7c9e1f20`;
const ID: TableIdentifier = { namespace: 'floe', name: 'order_events' };
const MIB = 1024 * 1024;
const SETTINGS: ManagedMaintenanceSettings = {
  retainLast: 2,
  expireOlderThanMs: 5 * 86_400_000,
  orphansOlderThanMs: 3 * 86_400_000,
  targetFileSizeBytes: 128 * MIB,
};

interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}
type Reply = { readonly status: number; readonly body?: unknown; readonly errorType?: string };

class FakeS3TablesMaintenance {
  readonly requests: Recorded[] = [];
  /** `<ns>.<table>` → type → value. */
  readonly config = new Map<string, Record<string, unknown>>([['floe.order_events', {}]]);
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const r: Recorded = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: text === '' ? undefined : JSON.parse(text),
        };
        this.requests.push(r);
        const reply = this.handle(r);
        res.writeHead(reply.status, {
          'content-type': 'application/json',
          ...(reply.errorType ? { 'x-amzn-errortype': reply.errorType } : {}),
        });
        res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()));
  }

  calls(): string[] {
    return this.requests.map((r) => `${r.method} ${r.url}`);
  }

  private handle(r: Recorded): Reply {
    const [, kind, bucket, ns, name, sub, type] = new URL(r.url, 'http://x').pathname.split('/');
    const table = this.config.get(`${ns}.${name}`);
    if (kind !== 'tables' || decodeURIComponent(bucket ?? '') !== ARN || sub !== 'maintenance' || !table)
      return {
        status: 404,
        errorType: 'NotFoundException',
        body: { message: 'The specified table does not exist.' },
      };
    if (r.method === 'GET') return { status: 200, body: { tableARN: TABLE_ARN, configuration: table } };
    if (r.method === 'PUT' && type !== undefined) {
      table[type] = (r.body as { value: unknown }).value;
      return { status: 204 };
    }
    return { status: 400, errorType: 'BadRequestException', body: { message: 'bad request' } };
  }
}

const COMPACTION = { status: 'enabled', settings: { icebergCompaction: { targetFileSizeMB: 128 } } };
const SNAPSHOTS = {
  status: 'enabled',
  settings: { icebergSnapshotManagement: { minSnapshotsToKeep: 2, maxSnapshotAgeHours: 120 } },
};
const PATH = `/tables/${ARN_ENC}/floe/order_events/maintenance`;

let fake: FakeS3TablesMaintenance;
let client: S3TablesClient;
const maintenance = (settings: ManagedMaintenanceSettings = SETTINGS) =>
  new S3TablesTableMaintenance({ client, tableBucketARN: ARN, settings });

beforeEach(async () => {
  fake = new FakeS3TablesMaintenance();
  await fake.start();
  client = new S3TablesClient({
    region: 'eu-west-1',
    endpoint: fake.url,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    maxAttempts: 1,
  });
});
afterEach(async () => {
  client.destroy();
  await fake.stop();
});

describe('S3TablesTableMaintenance', () => {
  it('setUp: PutTableMaintenanceConfiguration for compaction and snapshot management, exactly', async () => {
    expect(await maintenance().setUp(ID)).toEqual({
      created: ['icebergCompaction', 'icebergSnapshotManagement'],
      updated: [],
    });
    expect(fake.calls()).toEqual([`PUT ${PATH}/icebergCompaction`, `PUT ${PATH}/icebergSnapshotManagement`]);
    expect(fake.requests.map((r) => r.body)).toEqual([{ value: COMPACTION }, { value: SNAPSHOTS }]);
    for (const r of fake.requests) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3tables\//,
      );
    }
  });

  it('ensure: reads the configuration and puts only what differs (the service’s own defaults are left)', async () => {
    fake.config.set('floe.order_events', {
      icebergCompaction: {
        status: 'enabled',
        settings: { icebergCompaction: { targetFileSizeMB: 128, strategy: 'auto' } },
      },
      icebergSnapshotManagement: {
        status: 'enabled',
        settings: { icebergSnapshotManagement: { minSnapshotsToKeep: 1, maxSnapshotAgeHours: 120 } },
      },
    });
    expect(await maintenance().ensure(ID)).toEqual({ created: [], updated: ['icebergSnapshotManagement'] });
    expect(fake.calls()).toEqual([`GET ${PATH}`, `PUT ${PATH}/icebergSnapshotManagement`]);
    expect(fake.requests[0]!.body).toBeUndefined();
    expect(fake.requests[1]!.body).toEqual({ value: SNAPSHOTS });
    fake.requests.length = 0;
    expect(await maintenance().ensure(ID)).toEqual({ created: [], updated: [] });
    expect(fake.calls()).toEqual([`GET ${PATH}`]);
  });

  it('ensure of a table without configuration puts both; a disabled one is enabled again', async () => {
    expect(await maintenance().ensure(ID)).toEqual({
      created: ['icebergCompaction', 'icebergSnapshotManagement'],
      updated: [],
    });
    fake.config.get('floe.order_events')!.icebergCompaction = { ...COMPACTION, status: 'disabled' };
    fake.requests.length = 0;
    expect(await maintenance().ensure(ID)).toEqual({ created: [], updated: ['icebergCompaction'] });
    expect(fake.requests[1]!.body).toEqual({ value: COMPACTION });
  });

  it('values S3 Tables accepts: target clamped to 64–512 MB, snapshot age rounded up to whole hours', async () => {
    await maintenance({ ...SETTINGS, targetFileSizeBytes: 2048 * MIB, expireOlderThanMs: 90 * 60_000 }).setUp(
      ID,
    );
    await maintenance({ ...SETTINGS, targetFileSizeBytes: 8 * MIB, retainLast: 1 }).setUp(ID);
    expect(fake.requests.map((r) => (r.body as { value: { settings: unknown } }).value.settings)).toEqual([
      { icebergCompaction: { targetFileSizeMB: 512 } },
      { icebergSnapshotManagement: { minSnapshotsToKeep: 2, maxSnapshotAgeHours: 2 } },
      { icebergCompaction: { targetFileSizeMB: 64 } },
      { icebergSnapshotManagement: { minSnapshotsToKeep: 1, maxSnapshotAgeHours: 120 } },
    ]);
  });

  it('a table S3 Tables does not know: NotFound naming it', async () => {
    const e = await maintenance()
      .ensure({ namespace: 'floe', name: 'gone' })
      .catch((x: unknown) => x);
    expect(e).toMatchObject({ kind: ErrorKind.NotFound, message: expect.stringContaining('floe.gone') });
  });
});
