/**
 * Contract test of S3TablesCatalog against the real AWS SDK v3 S3TablesClient, pointed at a local
 * HTTP server that speaks S3 Tables' REST-JSON wire format (the table-bucket ARN URL-encoded as one
 * path segment: `GET /tables/arn%3Aaws%3As3tables%3A…%3Abucket%2F<name>/<ns>/<table>/metadata-location`;
 * errors as HTTP status + `x-amzn-errortype` + `{"message": …}`) and keeps a tiny in-memory
 * S3 Tables (namespaces, tables, version tokens, warehouse locations). Every request is pinned.
 */
import { promises as fs, mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3TablesClient } from '@aws-sdk/client-s3tables';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { S3TablesCatalog } from '../../lambdas/src/adapters/aws/s3tables-catalog.ts';
import { LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { applyUpdates, newTableMetadata } from '../../lambdas/src/iceberg/metadata/index.ts';
import {
  parseTableMetadata,
  serializeTableMetadata,
  type TableMetadata,
} from '../../lambdas/src/iceberg/table-metadata.ts';
import { field, T } from '../../lambdas/src/iceberg/types.ts';
import type { LoadedTable, TableIdentifier } from '../../lambdas/src/ports/catalog.ts';
import type { Ids } from '../../lambdas/src/ports/clock.ts';

const T0 = 1_735_689_600_000;
const ARN = 'arn:aws:s3tables:eu-west-1:123456789012:bucket/floe-lake';
const ARN_ENC = 'arn%3Aaws%3As3tables%3Aeu-west-1%3A123456789012%3Abucket%2Ffloe-lake';
const ID: TableIdentifier = { namespace: 'events', name: 'orders' };
/** The warehouse location the fake service assigns to the first table it creates. */
const WH = 's3://63a8e430-6e0b-46f5-k833abtwr6s8tmtsycedn8s4yc3xhuse1b--table-s3';
const TABLE_UUID = '5a1c7e7e-3c1b-4b7e-9d43-0f3a4a1e2b10';

// ---- a tiny S3 Tables on the wire ----

interface Recorded {
  readonly method: string;
  /** Raw request target (path + query), exactly as the SDK serialised it. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown> | undefined;
}

interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly errorType?: string;
}

interface FakeTable {
  versionToken: string;
  metadataLocation?: string;
  readonly warehouseLocation: string;
}

class FakeS3Tables {
  readonly requests: Recorded[] = [];
  readonly namespaces = new Set<string>();
  readonly tables = new Map<string, FakeTable>();
  /** Called at CreateTable: lets a test make the service write its own initial metadata. */
  onCreate?: (t: FakeTable, key: string) => Promise<void>;
  readonly intercept: ((r: Recorded) => Reply | undefined)[] = [];
  private server?: Server;
  private tokens = 0;
  private tablesCreated = 0;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const r: Recorded = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
        };
        this.requests.push(r);
        let reply: Reply | undefined;
        for (let i = 0; i < this.intercept.length && reply === undefined; i++) {
          reply = this.intercept[i]!(r);
          if (reply !== undefined) this.intercept.splice(i, 1);
        }
        reply ??= await this.handle(r);
        res.writeHead(reply.status, {
          'content-type': 'application/json',
          ...(reply.errorType ? { 'x-amzn-errortype': reply.errorType } : {}),
        });
        res.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()));
  }

  /** One-shot interceptor for the first request matching `method` and `pathEnd`. */
  once(method: string, pathEnd: string, reply: (r: Recorded) => Reply): void {
    this.intercept.push((r) =>
      r.method === method && new URL(r.url, 'http://x').pathname.endsWith(pathEnd) ? reply(r) : undefined,
    );
  }

  token(): string {
    return `tok-${++this.tokens}`;
  }

  calls(): string[] {
    return this.requests.map((r) => `${r.method} ${r.url}`);
  }

  async handle(r: Recorded): Promise<Reply> {
    const u = new URL(r.url, 'http://x');
    const parts = u.pathname.split('/').slice(1);
    if (decodeURIComponent(parts[1] ?? '') !== ARN)
      return error(404, 'NotFoundException', 'bucket not found');
    const [kind, , ns, name, sub] = parts;
    const key = `${ns}.${name}`;
    if (kind === 'namespaces' && r.method === 'PUT') {
      const n = (r.body as { namespace: string[] }).namespace[0]!;
      if (this.namespaces.has(n))
        return error(
          409,
          'ConflictException',
          'A namespace with an identical name already exists in the bucket.',
        );
      this.namespaces.add(n);
      return { status: 200, body: { tableBucketARN: ARN, namespace: [n] } };
    }
    if (kind === 'namespaces' && r.method === 'GET') {
      const all = [...this.namespaces].sort();
      const start = Number(u.searchParams.get('continuationToken') ?? 0);
      return {
        status: 200,
        body: {
          namespaces: all.slice(start, start + 1).map((n) => ({
            namespace: [n],
            createdAt: '2025-01-01T00:00:00Z',
            createdBy: '123456789012',
            ownerAccountId: '123456789012',
          })),
          ...(start + 1 < all.length ? { continuationToken: String(start + 1) } : {}),
        },
      };
    }
    if (kind === 'tables' && r.method === 'GET' && ns === undefined) {
      const n = u.searchParams.get('namespace');
      const all = [...this.tables.keys()].filter((k) => k.startsWith(`${n}.`));
      const start = Number(u.searchParams.get('continuationToken') ?? 0);
      return {
        status: 200,
        body: {
          tables: all.slice(start, start + 1).map((k) => ({
            namespace: [n],
            name: k.slice(String(n).length + 1),
            type: 'customer',
            tableARN: `arn:aws:s3tables:eu-west-1:123456789012:bucket/floe-lake/table/${k}`,
            createdAt: '2025-01-01T00:00:00Z',
            modifiedAt: '2025-01-01T00:00:00Z',
          })),
          ...(start + 1 < all.length ? { continuationToken: String(start + 1) } : {}),
        },
      };
    }
    if (kind === 'tables' && r.method === 'PUT' && name === undefined) {
      const tname = String(r.body?.name);
      if (!this.namespaces.has(String(ns)))
        return error(404, 'NotFoundException', 'The specified namespace does not exist.');
      if (this.tables.has(`${ns}.${tname}`))
        return error(
          409,
          'ConflictException',
          'A table with an identical name already exists in the namespace.',
        );
      this.tablesCreated++;
      const t: FakeTable = {
        versionToken: this.token(),
        warehouseLocation: this.tablesCreated === 1 ? WH : `s3://other-${this.tablesCreated}--table-s3`,
      };
      this.tables.set(`${ns}.${tname}`, t);
      await this.onCreate?.(t, `${ns}.${tname}`);
      return { status: 200, body: { tableARN: `${ARN}/table/${ns}.${tname}`, versionToken: t.versionToken } };
    }
    if (kind === 'tables' && sub === 'metadata-location') {
      const t = this.tables.get(key);
      if (!t) return error(404, 'NotFoundException', 'The specified table does not exist.');
      if (r.method === 'GET') {
        return {
          status: 200,
          body: {
            versionToken: t.versionToken,
            warehouseLocation: t.warehouseLocation,
            ...(t.metadataLocation ? { metadataLocation: t.metadataLocation } : {}),
          },
        };
      }
      const b = r.body as { versionToken: string; metadataLocation: string };
      if (b.versionToken !== t.versionToken) {
        return error(
          409,
          'ConflictException',
          'Provided version token does not match the table version token.',
        );
      }
      if (
        !b.metadataLocation.startsWith(t.warehouseLocation) ||
        !b.metadataLocation.endsWith('.metadata.json')
      ) {
        return error(400, 'BadRequestException', 'The specified metadata location is not valid.');
      }
      t.versionToken = this.token();
      t.metadataLocation = b.metadataLocation;
      return {
        status: 200,
        body: {
          name,
          tableARN: `${ARN}/table/${key}`,
          namespace: [ns],
          versionToken: t.versionToken,
          metadataLocation: t.metadataLocation,
        },
      };
    }
    return error(405, 'MethodNotAllowedException', `${r.method} ${r.url}`);
  }
}

function error(status: number, type: string, message: string): Reply {
  return { status, errorType: type, body: { message } };
}

// ---- fixtures ----

function counterIds(): Ids {
  let n = 0;
  return {
    uuid: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
    snapshotId: () => 1n,
    bytes16: () => new Uint8Array(16),
  };
}

function firstMetadata(location: string): TableMetadata {
  return newTableMetadata({
    location,
    schema: { schemaId: 0, fields: [field(1, 'id', T.long, true), field(2, 'name', T.string)] },
    formatVersion: 2,
    tableUuid: TABLE_UUID,
    nowMs: T0,
  });
}

function successor(base: LoadedTable, writer: string): TableMetadata {
  return applyUpdates(base.metadata, [{ action: 'set-properties', updates: { writer } }], {
    nowMs: T0 + 1000,
    metadataLocation: base.metadataLocation,
  });
}

interface Fixture {
  readonly s3t: FakeS3Tables;
  readonly dir: string;
  readonly store: LocalObjectStore;
  readonly catalog: S3TablesCatalog;
}

let f: Fixture;

function newClient(): S3TablesClient {
  return new S3TablesClient({
    endpoint: f.s3t.url,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    maxAttempts: 1,
  });
}

beforeEach(async () => {
  const s3t = new FakeS3Tables();
  await s3t.start();
  const dir = mkdtempSync(join(tmpdir(), 'floe-s3tables-contract-'));
  const store = new LocalObjectStore([
    { prefix: WH, dir: join(dir, 'first') },
    ...[2, 3, 4].map((n) => ({ prefix: `s3://other-${n}--table-s3`, dir: join(dir, `other-${n}`) })),
  ]);
  f = { s3t, dir, store, catalog: undefined as unknown as S3TablesCatalog };
  f = {
    ...f,
    catalog: new S3TablesCatalog({ client: newClient(), store, ids: counterIds(), tableBucketARN: ARN }),
  };
});

afterEach(async () => {
  await f.s3t.stop();
  await fs.rm(f.dir, { recursive: true, force: true });
});

async function metadataFiles(): Promise<string[]> {
  return (await f.store.list(`${WH}/metadata`)).map((u) => u.slice(`${WH}/metadata/`.length));
}

async function created(): Promise<LoadedTable> {
  await f.catalog.createNamespace('events');
  return f.catalog.createTable(ID, firstMetadata(f.catalog.defaultLocation(ID)));
}

async function failure(p: Promise<unknown>): Promise<FloeError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof FloeError) return e;
    throw e;
  }
  throw new Error('expected a FloeError');
}

const F1 = '00000-00000000-0000-4000-8000-000000000001.metadata.json';
const F2 = '00001-00000000-0000-4000-8000-000000000002.metadata.json';
const PTR = `/tables/${ARN_ENC}/events/orders/metadata-location`;

// ---- tests ----

describe('S3TablesCatalog wire contract', () => {
  it('createNamespace: PUT /namespaces/{encoded ARN} {namespace:[ns]}, signed for s3tables; idempotent', async () => {
    await f.catalog.createNamespace('events');
    await f.catalog.createNamespace('events'); // ConflictException = exists
    expect(f.s3t.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['PUT', `/namespaces/${ARN_ENC}`, { namespace: ['events'] }],
      ['PUT', `/namespaces/${ARN_ENC}`, { namespace: ['events'] }],
    ]);
    const h = f.s3t.requests[0]!.headers;
    expect(h['content-type']).toBe('application/json');
    expect(h.authorization).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3tables\/aws4_request/);
  });

  it('listNamespaces and listTables follow continuationToken', async () => {
    await f.catalog.createNamespace('events');
    await f.catalog.createNamespace('audit');
    await f.catalog.createTable(ID, firstMetadata('s3tables://x'));
    await f.catalog.createTable({ namespace: 'events', name: 'clicks' }, firstMetadata('s3tables://y'));
    f.s3t.requests.length = 0;
    expect(await f.catalog.listNamespaces()).toEqual(['audit', 'events']);
    expect(await f.catalog.listTables('events')).toEqual(['orders', 'clicks']);
    expect(f.s3t.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET /namespaces/${ARN_ENC}`,
      `GET /namespaces/${ARN_ENC}?continuationToken=1`,
      `GET /tables/${ARN_ENC}?namespace=events`,
      `GET /tables/${ARN_ENC}?continuationToken=1&namespace=events`,
    ]);
  });

  it('createTable: CreateTable(ICEBERG) → GetTableMetadataLocation → first metadata under the warehouse location', async () => {
    await f.catalog.createNamespace('events');
    const provisional = f.catalog.defaultLocation(ID);
    expect(provisional).toBe('s3tables://floe-lake/events/orders');
    f.s3t.requests.length = 0;
    const t = await f.catalog.createTable(ID, firstMetadata(provisional));
    expect(f.s3t.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['PUT', `/tables/${ARN_ENC}/events`, { name: 'orders', format: 'ICEBERG' }],
      ['GET', PTR, undefined],
      ['PUT', PTR, { versionToken: 'tok-1', metadataLocation: `${WH}/metadata/${F1}` }],
    ]);
    expect(t.metadataLocation).toBe(`${WH}/metadata/${F1}`);
    expect(t.versionToken).toBe('tok-2');
    expect(t.metadata.location).toBe(WH);
    expect(await metadataFiles()).toEqual([F1]);
    const written = parseTableMetadata(new TextDecoder().decode(await f.store.get(t.metadataLocation)));
    expect(written.location).toBe(WH);
    expect(written['table-uuid']).toBe(TABLE_UUID);
  });

  it('createTable: a metadata file the service wrote itself is replaced by the next version', async () => {
    await f.catalog.createNamespace('events');
    f.s3t.onCreate = async (t) => {
      const own = `${t.warehouseLocation}/metadata/00000-1f7b8a51-3c1d-4e0f-9b2a-6d5c4b3a2918.metadata.json`;
      await f.store.put(own, serializeTableMetadata(firstMetadata(t.warehouseLocation)));
      t.metadataLocation = own;
      t.versionToken = f.s3t.token();
    };
    const t = await f.catalog.createTable(ID, firstMetadata('s3tables://x'));
    expect(t.metadataLocation).toBe(
      `${WH}/metadata/00001-00000000-0000-4000-8000-000000000001.metadata.json`,
    );
    expect(f.s3t.requests.at(-1)!.body).toEqual({
      versionToken: 'tok-2',
      metadataLocation: t.metadataLocation,
    });
    expect(f.s3t.tables.get('events.orders')!.metadataLocation).toBe(t.metadataLocation);
  });

  it('createTable of a table with metadata → AlreadyExists naming the table, nothing written', async () => {
    await created();
    const e = await failure(f.catalog.createTable(ID, firstMetadata('s3tables://x')));
    expect(e.kind).toBe(ErrorKind.AlreadyExists);
    expect(e.message).toContain('events.orders');
    expect(await metadataFiles()).toEqual([F1]);
  });

  it('createTable adopts a table left without metadata by a crashed writer', async () => {
    await f.catalog.createNamespace('events');
    f.s3t.tables.set('events.orders', { versionToken: 'tok-9', warehouseLocation: WH });
    f.s3t.requests.length = 0;
    const t = await f.catalog.createTable(ID, firstMetadata('s3tables://x'));
    expect(f.s3t.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['PUT', `/tables/${ARN_ENC}/events`, { name: 'orders', format: 'ICEBERG' }],
      ['GET', PTR, undefined],
      ['PUT', PTR, { versionToken: 'tok-9', metadataLocation: `${WH}/metadata/${F1}` }],
    ]);
    expect(t.metadataLocation).toBe(`${WH}/metadata/${F1}`);
  });

  it('createTable: losing the first-metadata race → AlreadyExists, our file deleted', async () => {
    await f.catalog.createNamespace('events');
    f.s3t.once('PUT', '/metadata-location', () =>
      error(409, 'ConflictException', 'Provided version token does not match the table version token.'),
    );
    const e = await failure(f.catalog.createTable(ID, firstMetadata('s3tables://x')));
    expect(e.kind).toBe(ErrorKind.AlreadyExists);
    expect(await metadataFiles()).toEqual([]);
  });

  it('createTable in a missing namespace → NotFound', async () => {
    const e = await failure(f.catalog.createTable(ID, firstMetadata('s3tables://x')));
    expect(e.kind).toBe(ErrorKind.NotFound);
    expect(e.message).toContain('events.orders');
  });

  it('loadTable: GetTableMetadataLocation → metadata; versionToken = the service token', async () => {
    const t = await created();
    f.s3t.requests.length = 0;
    const loaded = await f.catalog.loadTable(ID);
    expect(f.s3t.calls()).toEqual([`GET ${PTR}`]);
    expect(loaded).toMatchObject({ id: ID, metadataLocation: t.metadataLocation, versionToken: 'tok-2' });
    expect(loaded.metadata.location).toBe(WH);
    expect(await f.catalog.tableExists(ID)).toBe(true);
  });

  it('loadTable: missing table → NotFound naming it; a table without metadata is not found either', async () => {
    await f.catalog.createNamespace('events');
    let e = await failure(f.catalog.loadTable(ID));
    expect(e.kind).toBe(ErrorKind.NotFound);
    expect(e.message).toContain('events.orders');
    expect(await f.catalog.tableExists(ID)).toBe(false);
    f.s3t.tables.set('events.orders', { versionToken: 'tok-9', warehouseLocation: WH });
    e = await failure(f.catalog.loadTable(ID));
    expect(e.kind).toBe(ErrorKind.NotFound);
    expect(await f.catalog.tableExists(ID)).toBe(false);
  });

  it('commitTable: re-read pointer, next file under the warehouse location, UpdateTableMetadataLocation with the token', async () => {
    const base = await created();
    f.s3t.requests.length = 0;
    const next = successor(base, 'w1');
    const done = await f.catalog.commitTable(base, next);
    expect(f.s3t.requests.map((r) => [r.method, r.url, r.body])).toEqual([
      ['GET', PTR, undefined],
      ['PUT', PTR, { versionToken: 'tok-2', metadataLocation: `${WH}/metadata/${F2}` }],
    ]);
    expect(done).toEqual({
      id: ID,
      metadata: next,
      metadataLocation: `${WH}/metadata/${F2}`,
      versionToken: 'tok-3',
    });
    expect(await metadataFiles()).toEqual([F1, F2]);
    const loaded = await f.catalog.loadTable(ID);
    expect(loaded.metadata.properties.writer).toBe('w1');
    expect(loaded.metadata['metadata-log'].map((e) => e['metadata-file'])).toEqual([base.metadataLocation]);
  });

  it('commitTable: ConflictException (token moved, e.g. by S3 Tables compaction) → CommitConflict, orphan deleted', async () => {
    const base = await created();
    f.s3t.once('PUT', '/metadata-location', () =>
      error(409, 'ConflictException', 'Provided version token does not match the table version token.'),
    );
    const e = await failure(f.catalog.commitTable(base, successor(base, 'w1')));
    expect(e.kind).toBe(ErrorKind.CommitConflict);
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('events.orders');
    expect(await metadataFiles()).toEqual([F1]);
  });

  it('commitTable: a stale base token is rejected by the service → CommitConflict, orphan deleted', async () => {
    const base = await created();
    f.s3t.tables.get('events.orders')!.versionToken = 'tok-77';
    const e = await failure(f.catalog.commitTable(base, successor(base, 'w1')));
    expect(e.kind).toBe(ErrorKind.CommitConflict);
    expect(f.s3t.requests.at(-1)!.body).toEqual({
      versionToken: 'tok-2',
      metadataLocation: `${WH}/metadata/${F2}`,
    });
    expect(await metadataFiles()).toEqual([F1]);
  });

  it('commitTable: metadataLocation changed since base → CommitConflict before any write', async () => {
    const base = await created();
    const other = await f.catalog.commitTable(base, successor(base, 'other'));
    f.s3t.requests.length = 0;
    const e = await failure(f.catalog.commitTable(base, successor(base, 'late')));
    expect(e.kind).toBe(ErrorKind.CommitConflict);
    expect(e.message).toContain(other.metadataLocation);
    expect(f.s3t.calls()).toEqual([`GET ${PTR}`]);
    expect(await metadataFiles()).toEqual([F1, F2]);
  });

  it('TooManyRequestsException → retryable error naming the table, orphan deleted', async () => {
    const base = await created();
    f.s3t.once('PUT', '/metadata-location', () => error(429, 'TooManyRequestsException', 'Rate exceeded'));
    const e = await failure(f.catalog.commitTable(base, successor(base, 'w1')));
    expect(e.kind).toBe(ErrorKind.Unexpected);
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('events.orders');
    expect(e.message).toContain('TooManyRequestsException');
    expect(await metadataFiles()).toEqual([F1]);
    f.s3t.once('GET', '/metadata-location', () => error(429, 'TooManyRequestsException', 'Rate exceeded'));
    const l = await failure(f.catalog.loadTable(ID));
    expect(l.retryable).toBe(true);
  });

  it('ForbiddenException → not retryable', async () => {
    f.s3t.once('GET', '/metadata-location', () => error(403, 'ForbiddenException', 'denied'));
    const e = await failure(f.catalog.loadTable(ID));
    expect(e.kind).toBe(ErrorKind.Unexpected);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain('events.orders');
  });

  it('a 5xx after the service applied the update is a success; one that did not apply deletes the file', async () => {
    const base = await created();
    f.s3t.once('PUT', '/metadata-location', (r) => {
      const t = f.s3t.tables.get('events.orders')!;
      t.metadataLocation = (r.body as { metadataLocation: string }).metadataLocation;
      t.versionToken = f.s3t.token();
      return error(500, 'InternalServerErrorException', 'oops');
    });
    const done = await f.catalog.commitTable(base, successor(base, 'w1'));
    expect(done.metadataLocation).toBe(`${WH}/metadata/${F2}`);
    expect(done.versionToken).toBe('tok-3');
    f.s3t.once('PUT', '/metadata-location', () => error(500, 'InternalServerErrorException', 'oops'));
    const e = await failure(f.catalog.commitTable(done, successor(done, 'w2')));
    expect(e.retryable).toBe(true);
    expect(await metadataFiles()).toEqual([F1, F2]);
  });

  it('validates names and the bucket ARN before any request', async () => {
    for (const bad of ['_orders', 'orders_', 'Orders', 'a-b', 'x'.repeat(256)]) {
      const e = await failure(f.catalog.loadTable({ namespace: 'events', name: bad }));
      expect(e.kind).toBe(ErrorKind.DataInvalid);
    }
    const e = await failure(f.catalog.createNamespace('aws_stuff'));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(f.s3t.requests).toHaveLength(0);
    expect(
      () =>
        new S3TablesCatalog({
          client: newClient(),
          store: f.store,
          ids: counterIds(),
          tableBucketARN: 'floe-lake',
        }),
    ).toThrow(FloeError);
  });

  it('refuses to create a table from metadata with snapshots', async () => {
    await f.catalog.createNamespace('events');
    const m = firstMetadata('s3tables://x');
    const withSnapshot = { ...m, snapshots: [{} as TableMetadata['snapshots'][number]] };
    const e = await failure(f.catalog.createTable(ID, withSnapshot));
    expect(e.kind).toBe(ErrorKind.FeatureUnsupported);
  });
});
