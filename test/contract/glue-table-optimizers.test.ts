/**
 * Contract test of GlueTableOptimizers against the real AWS SDK v3 GlueClient, pointed at a local
 * HTTP server speaking Glue's awsJson1_1 wire format (`POST /`, `X-Amz-Target: AWSGlue.<Op>`,
 * errors as `{"__type", "message"}`) that keeps table optimizers in memory. Every request body
 * is pinned: what Floe asks Glue to run on its tables is exactly this.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GlueClient } from '@aws-sdk/client-glue';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GlueTableOptimizers } from '../../lambdas/src/adapters/aws/glue-table-optimizers.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import type { TableIdentifier } from '../../lambdas/src/ports/catalog.ts';
import type { ManagedMaintenanceSettings } from '../../lambdas/src/ports/managed-maintenance.ts';

const ACCOUNT = '123456789012';
const ROLE = `arn:aws:iam::${ACCOUNT}:role/Floe-GlueOptimizerRole`;
const ID: TableIdentifier = { namespace: 'floe', name: 'order_events' };
const DAY = 86_400_000;
const SETTINGS: ManagedMaintenanceSettings = {
  retainLast: 3,
  expireOlderThanMs: 36 * 3_600_000, // 1.5 days: Glue counts whole days, rounded up
  orphansOlderThanMs: 30 * DAY,
  targetFileSizeBytes: 128 * 1024 * 1024,
};

interface Recorded {
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}
type Reply = { readonly status: number; readonly body: unknown };

class FakeGlueOptimizers {
  readonly requests: Recorded[] = [];
  /** `<db>.<table>/<type>` → configuration. */
  readonly optimizers = new Map<string, Record<string, unknown>>();
  readonly tables = new Set<string>(['floe.order_events']);
  readonly failNext = new Map<string, Reply>();
  private server?: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const target = String(req.headers['x-amz-target'] ?? '');
        const body = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
        this.requests.push({ target, headers: req.headers, body });
        const op = target.replace(/^AWSGlue\./, '');
        const failure = this.failNext.get(op);
        if (failure) this.failNext.delete(op);
        const reply = failure ?? this.handle(op, body);
        res.writeHead(reply.status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()));
  }

  ops(): string[] {
    return this.requests.map((r) => r.target.replace(/^AWSGlue\./, ''));
  }

  private handle(op: string, b: Record<string, unknown>): Reply {
    if (op === 'BatchGetTableOptimizer') {
      const found: unknown[] = [];
      const failures: unknown[] = [];
      for (const e of b.Entries as Record<string, string>[]) {
        const c = this.optimizers.get(`${e.databaseName}.${e.tableName}/${e.type}`);
        const where = { catalogId: e.catalogId, databaseName: e.databaseName, tableName: e.tableName };
        if (c)
          found.push({
            ...where,
            tableOptimizer: {
              type: e.type,
              configuration: c,
              lastRun: { eventType: 'completed', startTimestamp: 1_735_689_600, endTimestamp: 1_735_689_660 },
            },
          });
        else
          failures.push({
            ...where,
            type: e.type,
            error: { ErrorCode: 'EntityNotFoundException', ErrorMessage: 'Table optimizer not found' },
          });
      }
      return ok({ TableOptimizers: found, Failures: failures });
    }
    const key = `${b.DatabaseName}.${b.TableName}`;
    if (!this.tables.has(key)) return err('EntityNotFoundException', `Table ${b.TableName} not found.`);
    const slot = `${key}/${b.Type}`;
    if (op === 'CreateTableOptimizer') {
      if (this.optimizers.has(slot)) return err('AlreadyExistsException', 'Table optimizer already exists.');
      this.optimizers.set(slot, b.TableOptimizerConfiguration as Record<string, unknown>);
      return ok({});
    }
    if (op === 'UpdateTableOptimizer') {
      if (!this.optimizers.has(slot)) return err('EntityNotFoundException', 'Table optimizer not found.');
      this.optimizers.set(slot, b.TableOptimizerConfiguration as Record<string, unknown>);
      return ok({});
    }
    return err('UnknownOperationException', op);
  }
}

const ok = (body: unknown): Reply => ({ status: 200, body });
const err = (type: string, message: string, status = 400): Reply => ({
  status,
  body: { __type: type, message },
});

/** What Floe sends for each type with SETTINGS. */
const COMPACTION = {
  roleArn: ROLE,
  enabled: true,
  compactionConfiguration: { icebergConfiguration: { strategy: 'binpack' } },
};
const RETENTION = {
  roleArn: ROLE,
  enabled: true,
  retentionConfiguration: {
    icebergConfiguration: {
      snapshotRetentionPeriodInDays: 2,
      numberOfSnapshotsToRetain: 3,
      cleanExpiredFiles: true,
    },
  },
};
const ORPHANS = {
  roleArn: ROLE,
  enabled: true,
  orphanFileDeletionConfiguration: { icebergConfiguration: { orphanFileRetentionPeriodInDays: 30 } },
};
const request = (type: string, configuration: unknown) => ({
  CatalogId: ACCOUNT,
  DatabaseName: 'floe',
  TableName: 'order_events',
  Type: type,
  TableOptimizerConfiguration: configuration,
});

let glue: FakeGlueOptimizers;
let client: GlueClient;
const optimizers = (settings: ManagedMaintenanceSettings = SETTINGS) =>
  new GlueTableOptimizers({ glue: client, catalogId: ACCOUNT, roleArn: ROLE, settings });

beforeEach(async () => {
  glue = new FakeGlueOptimizers();
  await glue.start();
  client = new GlueClient({
    region: 'eu-west-1',
    endpoint: glue.url,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    maxAttempts: 1,
  });
});
afterEach(async () => {
  client.destroy();
  await glue.stop();
});

describe('GlueTableOptimizers', () => {
  it('setUp: CreateTableOptimizer for compaction, retention and orphan file deletion, exactly', async () => {
    const out = await optimizers().setUp(ID);
    expect(out).toEqual({ created: ['compaction', 'retention', 'orphan_file_deletion'], updated: [] });
    expect(glue.ops()).toEqual(['CreateTableOptimizer', 'CreateTableOptimizer', 'CreateTableOptimizer']);
    expect(glue.requests.map((r) => r.body)).toEqual([
      request('compaction', COMPACTION),
      request('retention', RETENTION),
      request('orphan_file_deletion', ORPHANS),
    ]);
    for (const r of glue.requests) {
      expect(r.headers['content-type']).toBe('application/x-amz-json-1.1');
      expect(r.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/glue\//,
      );
    }
  });

  it('setUp of a table that has an optimizer already: AlreadyExistsException → UpdateTableOptimizer', async () => {
    glue.optimizers.set('floe.order_events/retention', {
      roleArn: 'arn:aws:iam::1:role/old',
      enabled: false,
    });
    const out = await optimizers().setUp(ID);
    expect(out).toEqual({ created: ['compaction', 'orphan_file_deletion'], updated: ['retention'] });
    expect(glue.ops()).toEqual([
      'CreateTableOptimizer',
      'CreateTableOptimizer',
      'UpdateTableOptimizer',
      'CreateTableOptimizer',
    ]);
    expect(glue.requests[2]!.body).toEqual(request('retention', RETENTION));
    expect(glue.optimizers.get('floe.order_events/retention')).toEqual(RETENTION);
  });

  it('ensure: one BatchGetTableOptimizer; creates what is missing, updates what differs, leaves the rest', async () => {
    // Compaction as Floe set it, plus Glue's own defaults; retention with other values; no orphans.
    glue.optimizers.set('floe.order_events/compaction', {
      ...COMPACTION,
      compactionConfiguration: {
        icebergConfiguration: { strategy: 'binpack', minInputFiles: 100, deleteFileThreshold: 1 },
      },
    });
    glue.optimizers.set('floe.order_events/retention', {
      ...RETENTION,
      retentionConfiguration: {
        icebergConfiguration: {
          snapshotRetentionPeriodInDays: 5,
          numberOfSnapshotsToRetain: 1,
          cleanExpiredFiles: true,
        },
      },
    });
    const out = await optimizers().ensure(ID);
    expect(out).toEqual({ created: ['orphan_file_deletion'], updated: ['retention'] });
    expect(glue.ops()).toEqual(['BatchGetTableOptimizer', 'UpdateTableOptimizer', 'CreateTableOptimizer']);
    expect(glue.requests[0]!.body).toEqual({
      Entries: ['compaction', 'retention', 'orphan_file_deletion'].map((type) => ({
        catalogId: ACCOUNT,
        databaseName: 'floe',
        tableName: 'order_events',
        type,
      })),
    });
    expect(glue.requests[1]!.body).toEqual(request('retention', RETENTION));
    expect(glue.requests[2]!.body).toEqual(request('orphan_file_deletion', ORPHANS));
    // Everything matches now: the next sweep only reads.
    glue.requests.length = 0;
    expect(await optimizers().ensure(ID)).toEqual({ created: [], updated: [] });
    expect(glue.ops()).toEqual(['BatchGetTableOptimizer']);
  });

  it('without an orphan age (staging never expires) no orphan file deletion is set up', async () => {
    const { orphansOlderThanMs: _, ...noOrphans } = SETTINGS;
    const out = await optimizers(noOrphans).setUp(ID);
    expect(out.created).toEqual(['compaction', 'retention']);
    expect(glue.requests.map((r) => r.body.Type)).toEqual(['compaction', 'retention']);
  });

  it('errors become FloeErrors naming the table: not found, throttled (retryable), denied', async () => {
    const missing = await optimizers()
      .setUp({ namespace: 'floe', name: 'gone' })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(FloeError);
    expect(missing).toMatchObject({
      kind: ErrorKind.NotFound,
      message: expect.stringContaining('floe.gone'),
    });

    glue.failNext.set('BatchGetTableOptimizer', err('ThrottlingException', 'Rate exceeded'));
    const throttled = await optimizers()
      .ensure(ID)
      .catch((e: unknown) => e);
    expect(throttled).toMatchObject({ kind: ErrorKind.Unexpected, retryable: true });

    glue.failNext.set(
      'CreateTableOptimizer',
      err('AccessDeniedException', 'not authorized to pass the role'),
    );
    const denied = await optimizers()
      .setUp(ID)
      .catch((e: unknown) => e);
    expect(denied).toMatchObject({
      kind: ErrorKind.Unexpected,
      retryable: false,
      message: expect.stringContaining('AccessDeniedException'),
    });
  });
});
