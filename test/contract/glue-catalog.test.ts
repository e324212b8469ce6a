/**
 * Contract test of GlueCatalog against the real AWS SDK v3 GlueClient, pointed at a local HTTP
 * server that speaks Glue's awsJson1_1 wire format (`POST /`, `X-Amz-Target: AWSGlue.<Op>`,
 * `Content-Type: application/x-amz-json-1.1`, errors as `{"__type": …, "message": …}`) and keeps
 * a tiny in-memory Glue (databases, tables, VersionId). Every request body is pinned.
 */
import { promises as fs, mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GlueClient } from '@aws-sdk/client-glue';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  GlueCatalog,
  glueTypeString,
  parseMetadataVersion,
} from '../../lambdas/src/adapters/aws/glue-catalog.ts';
import { LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { applyUpdates, LAST_ADDED, newTableMetadata } from '../../lambdas/src/iceberg/metadata/index.ts';
import type { Schema } from '../../lambdas/src/iceberg/schema.ts';
import { parseTableMetadata, type TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import { decimal, field, fixed, list, map, struct, T } from '../../lambdas/src/iceberg/types.ts';
import type { LoadedTable, TableIdentifier } from '../../lambdas/src/ports/catalog.ts';
import type { Ids } from '../../lambdas/src/ports/clock.ts';

const T0 = 1_735_689_600_000;
const WAREHOUSE = 's3://lake-bucket/warehouse';
const ID: TableIdentifier = { namespace: 'events', name: 'orders' };
const LOCATION = `${WAREHOUSE}/events/orders`;
const TABLE_UUID = '5a1c7e7e-3c1b-4b7e-9d43-0f3a4a1e2b10';

// ---- a tiny Glue on the wire ----

interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Record<string, unknown>;
}

interface Reply {
  readonly status: number;
  readonly body: unknown;
}

type GlueTable = Record<string, unknown> & { Parameters?: Record<string, string>; VersionId: string };

class FakeGlue {
  readonly requests: Recorded[] = [];
  readonly databases = new Map<string, Record<string, unknown>>();
  readonly tables = new Map<string, GlueTable>();
  /** One-shot interceptors by operation; return undefined to fall through to the normal handler. */
  readonly intercept = new Map<string, ((body: Record<string, unknown>) => Reply | undefined)[]>();
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
        this.requests.push({
          method: req.method ?? '',
          path: req.url ?? '',
          target,
          headers: req.headers,
          body,
        });
        const op = target.replace(/^AWSGlue\./, '');
        const hook = this.intercept.get(op)?.shift();
        const reply = hook?.(body) ?? this.handle(op, body);
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

  on(op: string, hook: (body: Record<string, unknown>) => Reply | undefined): void {
    const list = this.intercept.get(op) ?? [];
    list.push(hook);
    this.intercept.set(op, list);
  }

  ops(): string[] {
    return this.requests.map((r) => r.target);
  }

  last(target: string): Recorded {
    const r = this.requests.filter((x) => x.target === `AWSGlue.${target}`).at(-1);
    if (!r) throw new Error(`no ${target} request`);
    return r;
  }

  handle(op: string, b: Record<string, unknown>): Reply {
    const key = `${b.DatabaseName}.${(b.TableInput as { Name?: string } | undefined)?.Name ?? b.Name}`;
    switch (op) {
      case 'CreateDatabase': {
        const input = b.DatabaseInput as { Name: string };
        if (this.databases.has(input.Name))
          return err('AlreadyExistsException', `Database ${input.Name} already exists.`);
        this.databases.set(input.Name, input);
        return ok({});
      }
      case 'GetDatabases': {
        // One database per page, to exercise NextToken.
        const names = [...this.databases.keys()].sort();
        const start = b.NextToken === undefined ? 0 : Number(b.NextToken);
        const page = names.slice(start, start + 1).map((Name) => ({ Name, CreateTime: 1_735_689_600 }));
        return ok({
          DatabaseList: page,
          ...(start + 1 < names.length ? { NextToken: String(start + 1) } : {}),
        });
      }
      case 'CreateTable': {
        if (!this.databases.has(String(b.DatabaseName)))
          return err('EntityNotFoundException', 'Database not found.');
        if (this.tables.has(key)) return err('AlreadyExistsException', 'Table already exists.');
        this.tables.set(key, { ...(b.TableInput as object), DatabaseName: b.DatabaseName, VersionId: '0' });
        return ok({});
      }
      case 'GetTable': {
        const t = this.tables.get(key);
        if (!t) return err('EntityNotFoundException', `Table ${b.Name} not found.`);
        return ok({ Table: { ...t, CreateTime: 1_735_689_600, UpdateTime: 1_735_689_601 } });
      }
      case 'GetTables': {
        if (!this.databases.has(String(b.DatabaseName)))
          return err('EntityNotFoundException', 'Database not found.');
        const all = [...this.tables.values()].filter((t) => t.DatabaseName === b.DatabaseName);
        const start = b.NextToken === undefined ? 0 : Number(b.NextToken);
        return ok({
          TableList: all.slice(start, start + 1),
          ...(start + 1 < all.length ? { NextToken: String(start + 1) } : {}),
        });
      }
      case 'UpdateTable': {
        const t = this.tables.get(key);
        if (!t) return err('EntityNotFoundException', 'Table not found.');
        if (b.VersionId !== undefined && b.VersionId !== t.VersionId) {
          return err(
            'ConcurrentModificationException',
            'Update table failed due to concurrent modifications.',
          );
        }
        this.tables.set(key, {
          ...(b.TableInput as object),
          DatabaseName: b.DatabaseName,
          VersionId: String(Number(t.VersionId) + 1),
        });
        return ok({});
      }
      default:
        return { status: 400, body: { __type: 'UnknownOperationException', message: op } };
    }
  }
}

function ok(body: unknown): Reply {
  return { status: 200, body };
}
function err(type: string, message: string, status = 400): Reply {
  return { status, body: { __type: type, message } };
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

function firstMetadata(location = LOCATION): TableMetadata {
  const schema: Schema = {
    schemaId: 0,
    fields: [
      field(1, 'id', T.long, true),
      field(2, 'name', T.string, false, 'customer name'),
      field(3, 'ts', T.timestamptz, true),
      field(4, 'amount', decimal(10, 2)),
      field(5, 'address', struct([field(6, 'street', T.string), field(7, 'zip', T.int)])),
      field(8, 'tags', list(9, T.string)),
      field(10, 'attrs', map(11, T.string, 12, T.long)),
    ],
  };
  return newTableMetadata({ location, schema, formatVersion: 2, tableUuid: TABLE_UUID, nowMs: T0 });
}

/** Drops `name`, adds `note` (so Glue gets the old column with iceberg.field.current=false). */
function evolved(base: LoadedTable): TableMetadata {
  const cur = base.metadata.schemas[0]!;
  const schema: Schema = {
    schemaId: 1,
    fields: [...cur.fields.filter((f) => f.name !== 'name'), field(13, 'note', T.string)],
  };
  return applyUpdates(
    base.metadata,
    [
      { action: 'add-schema', schema, 'last-column-id': 13 },
      { action: 'set-current-schema', 'schema-id': LAST_ADDED },
      { action: 'set-properties', updates: { comment: 'orders from the shop' } },
    ],
    { nowMs: T0 + 1000, metadataLocation: base.metadataLocation },
  );
}

const COLUMNS_V0 = [
  col('id', 'bigint', 1, false, true),
  col('name', 'string', 2, true, true, 'customer name'),
  col('ts', 'timestamp', 3, false, true),
  col('amount', 'decimal(10,2)', 4, true, true),
  col('address', 'struct<street:string,zip:int>', 5, true, true),
  col('tags', 'array<string>', 6, true, true),
  col('attrs', 'map<string,bigint>', 7, true, true),
];

function col(name: string, type: string, id: number, optional: boolean, current: boolean, comment?: string) {
  return {
    Name: name,
    Type: type,
    ...(comment === undefined ? {} : { Comment: comment }),
    Parameters: {
      'iceberg.field.id': String(id),
      'iceberg.field.optional': String(optional),
      'iceberg.field.current': String(current),
    },
  };
}

interface Fixture {
  readonly glue: FakeGlue;
  readonly dir: string;
  readonly store: LocalObjectStore;
  readonly catalog: GlueCatalog;
}

let f: Fixture;

beforeEach(async () => {
  const glue = new FakeGlue();
  await glue.start();
  const dir = mkdtempSync(join(tmpdir(), 'floe-glue-contract-'));
  const store = new LocalObjectStore([{ prefix: 's3://lake-bucket', dir }]);
  const client = new GlueClient({
    endpoint: glue.url,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    maxAttempts: 1,
  });
  f = {
    glue,
    dir,
    store,
    catalog: new GlueCatalog({ glue: client, store, ids: counterIds(), warehouse: `${WAREHOUSE}/` }),
  };
});

afterEach(async () => {
  await f.glue.stop();
  await fs.rm(f.dir, { recursive: true, force: true });
});

async function metadataFiles(): Promise<string[]> {
  return (await f.store.list(`${LOCATION}/metadata`)).map((u) => u.slice(`${LOCATION}/metadata/`.length));
}

async function created(): Promise<LoadedTable> {
  await f.catalog.createNamespace('events');
  return f.catalog.createTable(ID, firstMetadata());
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

// ---- tests ----

describe('GlueCatalog wire contract', () => {
  it('sends awsJson1_1 requests: POST / with X-Amz-Target and signed for glue', async () => {
    await f.catalog.createNamespace('events');
    const r = f.glue.last('CreateDatabase');
    expect(r.method).toBe('POST');
    expect(r.path).toBe('/');
    expect(r.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(r.headers.authorization).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/glue\/aws4_request/);
    expect(r.body).toEqual({ DatabaseInput: { Name: 'events', LocationUri: `${WAREHOUSE}/events` } });
  });

  it('createNamespace is idempotent (AlreadyExistsException is fine) and validates names', async () => {
    await f.catalog.createNamespace('events');
    await f.catalog.createNamespace('events');
    expect(f.glue.ops()).toEqual(['AWSGlue.CreateDatabase', 'AWSGlue.CreateDatabase']);
    const e = await failure(f.catalog.createNamespace('Events-1'));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain('Events-1');
    expect(f.glue.requests).toHaveLength(2);
  });

  it('listNamespaces and listTables follow NextToken; listTables keeps only Iceberg tables', async () => {
    await f.catalog.createNamespace('events');
    await f.catalog.createNamespace('audit');
    await f.catalog.createTable(ID, firstMetadata());
    await f.catalog.createTable(
      { namespace: 'events', name: 'clicks' },
      firstMetadata(`${WAREHOUSE}/events/clicks`),
    );
    f.glue.tables.set('events.hive_table', {
      Name: 'hive_table',
      DatabaseName: 'events',
      Parameters: { EXTERNAL: 'TRUE' },
      VersionId: '0',
    });
    f.glue.requests.length = 0;
    expect(await f.catalog.listNamespaces()).toEqual(['audit', 'events']);
    expect(f.glue.requests.map((r) => [r.target, r.body])).toEqual([
      ['AWSGlue.GetDatabases', {}],
      ['AWSGlue.GetDatabases', { NextToken: '1' }],
    ]);
    f.glue.requests.length = 0;
    expect(await f.catalog.listTables('events')).toEqual(['orders', 'clicks']);
    expect(f.glue.requests.map((r) => r.body)).toEqual([
      { DatabaseName: 'events' },
      { DatabaseName: 'events', NextToken: '1' },
      { DatabaseName: 'events', NextToken: '2' },
    ]);
    expect(await f.catalog.listTables('missing')).toEqual([]);
  });

  it('createTable writes 00000-<uuid>.metadata.json and CreateTable with the Iceberg table shape', async () => {
    await f.catalog.createNamespace('events');
    const t = await f.catalog.createTable(ID, firstMetadata());
    const file = `${LOCATION}/metadata/00000-00000000-0000-4000-8000-000000000001.metadata.json`;
    expect(t.metadataLocation).toBe(file);
    expect(t.versionToken).toBe('0');
    expect(await metadataFiles()).toEqual(['00000-00000000-0000-4000-8000-000000000001.metadata.json']);
    expect(parseTableMetadata(new TextDecoder().decode(await f.store.get(file)))['table-uuid']).toBe(
      TABLE_UUID,
    );
    expect(f.glue.last('CreateTable').body).toEqual({
      DatabaseName: 'events',
      TableInput: {
        Name: 'orders',
        TableType: 'EXTERNAL_TABLE',
        Parameters: { table_type: 'ICEBERG', metadata_location: file },
        StorageDescriptor: { Location: LOCATION, Columns: COLUMNS_V0 },
      },
    });
    // The VersionId comes from a GetTable after the create.
    expect(f.glue.ops()).toEqual(['AWSGlue.CreateDatabase', 'AWSGlue.CreateTable', 'AWSGlue.GetTable']);
    expect(f.glue.last('GetTable').body).toEqual({ DatabaseName: 'events', Name: 'orders' });
  });

  it('createTable: AlreadyExistsException → AlreadyExists and the unreferenced file is deleted', async () => {
    await created();
    const e = await failure(f.catalog.createTable(ID, firstMetadata()));
    expect(e.kind).toBe(ErrorKind.AlreadyExists);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain('events.orders');
    expect(await metadataFiles()).toEqual(['00000-00000000-0000-4000-8000-000000000001.metadata.json']);
  });

  it('createTable in a missing database → NotFound naming the database', async () => {
    const e = await failure(f.catalog.createTable(ID, firstMetadata()));
    expect(e.kind).toBe(ErrorKind.NotFound);
    expect(e.message).toContain('database events');
    expect(await metadataFiles()).toEqual([]);
  });

  it('loadTable: GetTable → metadata_location → parsed metadata; versionToken = VersionId', async () => {
    const t = await created();
    f.glue.requests.length = 0;
    const loaded = await f.catalog.loadTable(ID);
    expect(f.glue.requests.map((r) => [r.target, r.body])).toEqual([
      ['AWSGlue.GetTable', { DatabaseName: 'events', Name: 'orders' }],
    ]);
    expect(loaded.metadataLocation).toBe(t.metadataLocation);
    expect(loaded.versionToken).toBe('0');
    expect(loaded.metadata['table-uuid']).toBe(TABLE_UUID);
    expect(loaded.id).toEqual(ID);
    expect(await f.catalog.tableExists(ID)).toBe(true);
  });

  it('loadTable of a missing table → NotFound naming the table; tableExists false', async () => {
    await f.catalog.createNamespace('events');
    const e = await failure(f.catalog.loadTable(ID));
    expect(e.kind).toBe(ErrorKind.NotFound);
    expect(e.message).toContain('events.orders');
    expect(await f.catalog.tableExists(ID)).toBe(false);
  });

  it('loadTable of a non-Iceberg Glue table → FeatureUnsupported naming the table', async () => {
    await f.catalog.createNamespace('events');
    f.glue.tables.set('events.orders', {
      Name: 'orders',
      DatabaseName: 'events',
      Parameters: {},
      VersionId: '1',
    });
    const e = await failure(f.catalog.loadTable(ID));
    expect(e.kind).toBe(ErrorKind.FeatureUnsupported);
    expect(e.message).toContain('events.orders');
  });

  it('commitTable: GetTable re-check, next metadata file, UpdateTable with VersionId and SkipArchive', async () => {
    const base = await created();
    // Someone edited a parameter out of band: it must survive the update (Java copies the map).
    f.glue.tables.get('events.orders')!.Parameters!.owner_team = 'payments';
    f.glue.requests.length = 0;
    const next = evolved(base);
    const committed = await f.catalog.commitTable(base, next);
    const file = `${LOCATION}/metadata/00001-00000000-0000-4000-8000-000000000002.metadata.json`;
    expect(committed.metadataLocation).toBe(file);
    expect(committed.versionToken).toBe('1');
    expect(committed.metadata).toBe(next);
    expect(f.glue.ops()).toEqual(['AWSGlue.GetTable', 'AWSGlue.UpdateTable', 'AWSGlue.GetTable']);
    expect(f.glue.last('UpdateTable').body).toEqual({
      DatabaseName: 'events',
      TableInput: {
        Name: 'orders',
        Description: 'orders from the shop',
        TableType: 'EXTERNAL_TABLE',
        Parameters: {
          owner_team: 'payments',
          table_type: 'ICEBERG',
          metadata_location: file,
          previous_metadata_location: base.metadataLocation,
        },
        StorageDescriptor: {
          Location: LOCATION,
          Columns: [
            col('id', 'bigint', 1, false, true),
            col('ts', 'timestamp', 3, false, true),
            col('amount', 'decimal(10,2)', 4, true, true),
            col('address', 'struct<street:string,zip:int>', 5, true, true),
            col('tags', 'array<string>', 6, true, true),
            col('attrs', 'map<string,bigint>', 7, true, true),
            col('note', 'string', 13, true, true),
            col('name', 'string', 2, true, false, 'customer name'),
          ],
        },
      },
      SkipArchive: true,
      VersionId: '0',
    });
    const written = parseTableMetadata(new TextDecoder().decode(await f.store.get(file)));
    expect(written['current-schema-id']).toBe(1);
    expect(written['metadata-log'].map((e) => e['metadata-file'])).toEqual([base.metadataLocation]);
    // And it loads back.
    const loaded = await f.catalog.loadTable(ID);
    expect(loaded.metadataLocation).toBe(file);
    expect(loaded.versionToken).toBe('1');
    // A second commit numbers from the committed file.
    const third = await f.catalog.commitTable(
      loaded,
      applyUpdates(loaded.metadata, [{ action: 'set-properties', updates: { k: 'v' } }], {
        nowMs: T0 + 2000,
        metadataLocation: loaded.metadataLocation,
      }),
    );
    expect(third.metadataLocation).toBe(
      `${LOCATION}/metadata/00002-00000000-0000-4000-8000-000000000003.metadata.json`,
    );
    expect(f.glue.last('UpdateTable').body.VersionId).toBe('1');
    expect((f.glue.last('UpdateTable').body.TableInput as { Parameters: unknown }).Parameters).toEqual({
      owner_team: 'payments',
      table_type: 'ICEBERG',
      metadata_location: third.metadataLocation,
      previous_metadata_location: file,
    });
  });

  it('commitTable: ConcurrentModificationException → CommitConflict (retryable), orphan deleted', async () => {
    const base = await created();
    f.glue.on('UpdateTable', () =>
      err('ConcurrentModificationException', 'Update table failed due to concurrent modifications.'),
    );
    const e = await failure(f.catalog.commitTable(base, evolved(base)));
    expect(e.kind).toBe(ErrorKind.CommitConflict);
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('events.orders');
    expect(f.glue.last('UpdateTable').body.VersionId).toBe('0');
    expect(await metadataFiles()).toEqual(['00000-00000000-0000-4000-8000-000000000001.metadata.json']);
    expect(f.glue.tables.get('events.orders')!.Parameters!.metadata_location).toBe(base.metadataLocation);
  });

  it('commitTable: a stale VersionId is rejected by Glue → CommitConflict, orphan deleted', async () => {
    const base = await created();
    // A non-Iceberg edit bumped the version; metadata_location is unchanged.
    f.glue.tables.get('events.orders')!.VersionId = '7';
    const e = await failure(f.catalog.commitTable(base, evolved(base)));
    expect(e.kind).toBe(ErrorKind.CommitConflict);
    expect(await metadataFiles()).toEqual(['00000-00000000-0000-4000-8000-000000000001.metadata.json']);
  });

  it('commitTable: metadata_location changed since base → CommitConflict before any write', async () => {
    const base = await created();
    const other = await f.catalog.commitTable(base, evolved(base));
    f.glue.requests.length = 0;
    const e = await failure(f.catalog.commitTable(base, evolved(base)));
    expect(e.kind).toBe(ErrorKind.CommitConflict);
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('events.orders');
    expect(e.message).toContain(other.metadataLocation);
    expect(f.glue.ops()).toEqual(['AWSGlue.GetTable']);
    expect(await metadataFiles()).toEqual([
      '00000-00000000-0000-4000-8000-000000000001.metadata.json',
      '00001-00000000-0000-4000-8000-000000000002.metadata.json',
    ]);
  });

  it('commitTable: ThrottlingException → retryable Unexpected naming the table, orphan deleted', async () => {
    const base = await created();
    f.glue.on('UpdateTable', () => err('ThrottlingException', 'Rate exceeded'));
    const e = await failure(f.catalog.commitTable(base, evolved(base)));
    expect(e.kind).toBe(ErrorKind.Unexpected);
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('events.orders');
    expect(e.message).toContain('ThrottlingException');
    expect(await metadataFiles()).toHaveLength(1);
  });

  it('loadTable: ThrottlingException on GetTable → retryable', async () => {
    await created();
    f.glue.on('GetTable', () => err('ThrottlingException', 'Rate exceeded'));
    const e = await failure(f.catalog.loadTable(ID));
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('events.orders');
  });

  it('AccessDeniedException → not retryable', async () => {
    f.glue.on('GetTable', () => err('AccessDeniedException', 'not authorized'));
    const e = await failure(f.catalog.loadTable(ID));
    expect(e.kind).toBe(ErrorKind.Unexpected);
    expect(e.retryable).toBe(false);
  });

  it('commitTable: a 5xx after Glue applied the update is a success (commit-status check)', async () => {
    const base = await created();
    f.glue.on('UpdateTable', (b) => {
      f.glue.handle('UpdateTable', b);
      return err('InternalServiceException', 'oops', 500);
    });
    const done = await f.catalog.commitTable(base, evolved(base));
    expect(done.metadataLocation).toBe(
      `${LOCATION}/metadata/00001-00000000-0000-4000-8000-000000000002.metadata.json`,
    );
    expect(done.versionToken).toBe('1');
    expect(await metadataFiles()).toHaveLength(2);
  });

  it('commitTable: a 5xx that was not applied → retryable failure, orphan deleted', async () => {
    const base = await created();
    f.glue.on('UpdateTable', () => err('InternalServiceException', 'oops', 500));
    const e = await failure(f.catalog.commitTable(base, evolved(base)));
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('events.orders');
    expect(await metadataFiles()).toHaveLength(1);
  });

  it('commitTable on a deleted table → NotFound', async () => {
    const base = await created();
    f.glue.tables.delete('events.orders');
    const e = await failure(f.catalog.commitTable(base, evolved(base)));
    expect(e.kind).toBe(ErrorKind.NotFound);
    expect(e.message).toContain('events.orders');
  });

  it('catalogId goes into every request when configured', async () => {
    const client = new GlueClient({
      endpoint: f.glue.url,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      maxAttempts: 1,
    });
    const c = new GlueCatalog({
      glue: client,
      store: f.store,
      ids: counterIds(),
      warehouse: WAREHOUSE,
      catalogId: '123456789012',
    });
    await c.createNamespace('events');
    const t = await c.createTable(ID, firstMetadata());
    await c.commitTable(t, evolved(t));
    await c.listNamespaces();
    await c.listTables('events');
    for (const r of f.glue.requests) expect(r.body.CatalogId).toBe('123456789012');
  });

  it('validates table names before any request', async () => {
    const e = await failure(f.catalog.loadTable({ namespace: 'events', name: 'Orders.V2' }));
    expect(e.kind).toBe(ErrorKind.DataInvalid);
    expect(e.message).toContain('Orders.V2');
    expect(() => f.catalog.defaultLocation({ namespace: 'events', name: 'x'.repeat(256) })).toThrow(
      FloeError,
    );
    expect(f.catalog.defaultLocation(ID)).toBe(LOCATION);
    expect(f.glue.requests).toHaveLength(0);
  });
});

describe('Glue type strings and metadata file names', () => {
  it('maps Iceberg types as IcebergToGlueConverter does', () => {
    expect(glueTypeString(T.boolean)).toBe('boolean');
    expect(glueTypeString(T.int)).toBe('int');
    expect(glueTypeString(T.long)).toBe('bigint');
    expect(glueTypeString(T.float)).toBe('float');
    expect(glueTypeString(T.double)).toBe('double');
    expect(glueTypeString(T.date)).toBe('date');
    expect(glueTypeString(T.time)).toBe('string');
    expect(glueTypeString(T.uuid)).toBe('string');
    expect(glueTypeString(T.timestamp)).toBe('timestamp');
    expect(glueTypeString(T.timestamptz)).toBe('timestamp');
    expect(glueTypeString(T.timestamptz_ns)).toBe('timestamp_nano');
    expect(glueTypeString(T.binary)).toBe('binary');
    expect(glueTypeString(fixed(16))).toBe('binary');
    expect(glueTypeString(decimal(38, 9))).toBe('decimal(38,9)');
    expect(glueTypeString(T.unknown)).toBe('unknown');
    expect(
      glueTypeString(
        struct([
          field(1, 'a', list(2, map(3, T.string, 4, struct([field(5, 'b', T.long)])))),
          field(6, 'c', T.date),
        ]),
      ),
    ).toBe('struct<a:array<map<string,struct<b:bigint>>>,c:date>');
  });

  it('parses the version of a metadata file name as Java does', () => {
    expect(parseMetadataVersion('s3://b/t/metadata/00042-abc.metadata.json')).toBe(42);
    expect(parseMetadataVersion('s3://b/t/metadata/123456-abc.gz.metadata.json')).toBe(123456);
    expect(parseMetadataVersion('s3://b/t/metadata/v7.metadata.json')).toBe(7);
    expect(parseMetadataVersion('s3://b/t/metadata/abc.metadata.json')).toBe(-1);
  });
});
