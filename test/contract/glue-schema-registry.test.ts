/**
 * Contract test of GlueSchemaRegistry against the real AWS SDK v3 GlueClient, pointed at a local
 * HTTP server that speaks Glue's awsJson1_1 wire format (`POST /`, `X-Amz-Target: AWSGlue.<Op>`,
 * errors as `{"__type": …, "message": …}`) and keeps a tiny in-memory schema registry (schemas,
 * versions, PENDING → AVAILABLE after a number of reads). Every request's target and body are pinned.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GlueClient } from '@aws-sdk/client-glue';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GlueSchemaRegistry } from '../../lambdas/src/adapters/aws/glue-schema-registry.ts';
import { CachedSchemaRegistry } from '../../lambdas/src/engine/cached-registry.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';

const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
const REGISTRY = 'floe-registry';
const ORDER_V1 = JSON.stringify({
  type: 'record',
  name: 'OrderEvent',
  fields: [{ name: 'order_id', type: 'string' }],
});
const ORDER_V2 = JSON.stringify({
  type: 'record',
  name: 'OrderEvent',
  fields: [
    { name: 'order_id', type: 'string' },
    { name: 'amount', type: ['null', 'double'], default: null },
  ],
});

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

interface Version {
  readonly id: string;
  readonly schema: string;
  readonly definition: string;
  readonly number: number;
  /** Reads (GetSchemaVersion) left before a PENDING version turns into `finalStatus`. */
  pendingReads: number;
  finalStatus: 'AVAILABLE' | 'FAILURE';
}

class FakeSchemaRegistry {
  readonly requests: Recorded[] = [];
  readonly schemas = new Map<string, { format: string; compatibility: string }>();
  readonly versions: Version[] = [];
  readonly intercept = new Map<string, ((body: Record<string, unknown>) => Reply | undefined)[]>();
  /** How many GetSchemaVersion reads a new version stays PENDING. */
  pendingReads = 0;
  /** The status a new version ends in. */
  nextFinalStatus: 'AVAILABLE' | 'FAILURE' = 'AVAILABLE';
  private server?: Server;
  private counter = 0;
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
    return this.requests.map((r) => r.target.replace(/^AWSGlue\./, ''));
  }

  bodies(): Record<string, unknown>[] {
    return this.requests.map((r) => r.body);
  }

  arn(schema: string): string {
    return `arn:aws:glue:${REGION}:${ACCOUNT}:schema/${REGISTRY}/${schema}`;
  }

  /** A version that exists already (as if registered earlier). */
  seed(schema: string, definition: string, format = 'AVRO'): Version {
    if (!this.schemas.has(schema)) this.schemas.set(schema, { format, compatibility: 'BACKWARD' });
    const v: Version = {
      id: this.newId(),
      schema,
      definition,
      number: this.versions.filter((x) => x.schema === schema).length + 1,
      pendingReads: 0,
      finalStatus: 'AVAILABLE',
    };
    this.versions.push(v);
    return v;
  }

  private newId(): string {
    return `5b3f9a2e-0c1d-4e2f-8a9b-${String(++this.counter).padStart(12, '0')}`;
  }

  private status(v: Version): string {
    return v.pendingReads > 0 ? 'PENDING' : v.finalStatus;
  }

  private addVersion(schema: string, definition: string): Version {
    const v: Version = {
      id: this.newId(),
      schema,
      definition,
      number: this.versions.filter((x) => x.schema === schema).length + 1,
      pendingReads: this.pendingReads,
      finalStatus: this.nextFinalStatus,
    };
    this.versions.push(v);
    return v;
  }

  handle(op: string, b: Record<string, unknown>): Reply {
    switch (op) {
      case 'GetSchemaVersion': {
        const v = this.versions.find((x) => x.id === b.SchemaVersionId);
        if (!v) return err('EntityNotFoundException', 'Schema version is not found.');
        const status = this.status(v);
        if (v.pendingReads > 0) v.pendingReads--;
        return ok({
          SchemaVersionId: v.id,
          SchemaDefinition: v.definition,
          DataFormat: this.schemas.get(v.schema)!.format,
          SchemaArn: this.arn(v.schema),
          VersionNumber: v.number,
          Status: status,
          CreatedTime: '2025-03-14T15:00:00.000Z',
        });
      }
      case 'RegisterSchemaVersion': {
        const id = b.SchemaId as { RegistryName?: string; SchemaName?: string };
        if (id.RegistryName !== REGISTRY) return err('EntityNotFoundException', 'Registry is not found.');
        const schema = String(id.SchemaName);
        if (!this.schemas.has(schema)) return err('EntityNotFoundException', 'Schema is not found.');
        const def = String(b.SchemaDefinition);
        const same = this.versions.find((x) => x.schema === schema && x.definition === def);
        const v = same ?? this.addVersion(schema, def);
        return ok({ SchemaVersionId: v.id, VersionNumber: v.number, Status: this.status(v) });
      }
      case 'CreateSchema': {
        const reg = (b.RegistryId as { RegistryName?: string } | undefined)?.RegistryName;
        if (reg !== REGISTRY) return err('EntityNotFoundException', 'Registry is not found.');
        const schema = String(b.SchemaName);
        if (this.schemas.has(schema)) return err('AlreadyExistsException', 'Schema already exists.');
        this.schemas.set(schema, { format: String(b.DataFormat), compatibility: String(b.Compatibility) });
        const v = this.addVersion(schema, String(b.SchemaDefinition));
        return ok({
          RegistryName: REGISTRY,
          RegistryArn: `arn:aws:glue:${REGION}:${ACCOUNT}:registry/${REGISTRY}`,
          SchemaName: schema,
          SchemaArn: this.arn(schema),
          DataFormat: b.DataFormat,
          Compatibility: b.Compatibility,
          SchemaCheckpoint: 1,
          LatestSchemaVersion: 1,
          NextSchemaVersion: 2,
          SchemaStatus: 'AVAILABLE',
          SchemaVersionId: v.id,
          SchemaVersionStatus: this.status(v),
        });
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

let fake: FakeSchemaRegistry;
let client: GlueClient;
let sleeps: number[];
let registry: GlueSchemaRegistry;

beforeEach(async () => {
  fake = new FakeSchemaRegistry();
  await fake.start();
  client = new GlueClient({
    endpoint: fake.url,
    region: REGION,
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    maxAttempts: 1,
  });
  sleeps = [];
  registry = new GlueSchemaRegistry({
    glue: client,
    registryName: REGISTRY,
    maxPolls: 4,
    pollIntervalMs: 100,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
});

afterEach(async () => {
  client.destroy();
  await fake.stop();
});

async function failure(p: Promise<unknown>): Promise<FloeError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof FloeError) return e;
    throw e;
  }
  throw new Error('expected a FloeError');
}

describe('GlueSchemaRegistry.getSchemaVersion', () => {
  it('sends GetSchemaVersion {SchemaVersionId} (lower-cased) as awsJson1_1, signed for glue, and maps the answer', async () => {
    fake.seed('OrderEvent', ORDER_V1);
    const v2 = fake.seed('OrderEvent', ORDER_V2);
    const got = await registry.getSchemaVersion(v2.id.toUpperCase());
    expect(got).toEqual({
      id: v2.id,
      schemaName: 'OrderEvent',
      definition: ORDER_V2,
      dataFormat: 'AVRO',
      versionNumber: 2,
    });
    expect(fake.requests).toHaveLength(1);
    const r = fake.requests[0]!;
    expect(r.method).toBe('POST');
    expect(r.path).toBe('/');
    expect(r.target).toBe('AWSGlue.GetSchemaVersion');
    expect(r.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(r.headers.authorization).toMatch(/Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/glue\/aws4_request/);
    expect(r.body).toEqual({ SchemaVersionId: v2.id }); // sent lower-cased, as Glue issues ids
  });

  it('takes the schema name from the SchemaArn (registry and schema names with dots and dashes)', async () => {
    const v = fake.seed('com.example.Click-Event', ORDER_V1, 'JSON');
    fake.on('GetSchemaVersion', () =>
      ok({
        SchemaVersionId: v.id,
        SchemaDefinition: '{"type":"object"}',
        DataFormat: 'JSON',
        SchemaArn: `arn:aws-cn:glue:cn-north-1:${ACCOUNT}:schema/my.registry-1/com.example.Click-Event`,
        VersionNumber: 7,
        Status: 'AVAILABLE',
      }),
    );
    expect(await registry.getSchemaVersion(v.id)).toEqual({
      id: v.id,
      schemaName: 'com.example.Click-Event',
      definition: '{"type":"object"}',
      dataFormat: 'JSON',
      versionNumber: 7,
    });
  });

  it('EntityNotFoundException → NotFound naming the id (bad data, not retried)', async () => {
    const id = '00000000-0000-4000-8000-000000000099';
    const e = await failure(registry.getSchemaVersion(id));
    expect(e.kind).toBe(ErrorKind.NotFound);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain(id);
    expect(e.context).toMatchObject({ schemaVersionId: id, operation: 'GetSchemaVersion' });
    expect(fake.ops()).toEqual(['GetSchemaVersion']);
  });

  it('ThrottlingException and 5xx → retryable Unexpected (never NotFound)', async () => {
    const v = fake.seed('OrderEvent', ORDER_V1);
    fake.on('GetSchemaVersion', () => err('ThrottlingException', 'Rate exceeded'));
    const t = await failure(registry.getSchemaVersion(v.id));
    expect(t.kind).toBe(ErrorKind.Unexpected);
    expect(t.retryable).toBe(true);
    expect(t.message).toContain('ThrottlingException');
    expect(t.context).toMatchObject({ awsError: 'ThrottlingException', schemaVersionId: v.id });

    fake.on('GetSchemaVersion', () => err('InternalServiceException', 'boom', 500));
    const s = await failure(registry.getSchemaVersion(v.id));
    expect(s.kind).toBe(ErrorKind.Unexpected);
    expect(s.retryable).toBe(true);

    // The fault was transient: the same call now succeeds.
    expect((await registry.getSchemaVersion(v.id)).versionNumber).toBe(1);
  });

  it('AccessDeniedException → Unexpected, not retryable', async () => {
    fake.on('GetSchemaVersion', () => err('AccessDeniedException', 'not authorized'));
    const e = await failure(registry.getSchemaVersion('00000000-0000-4000-8000-000000000001'));
    expect(e.kind).toBe(ErrorKind.Unexpected);
    expect(e.retryable).toBe(false);
  });

  it('an answer without a definition or with a foreign ARN is a retryable Unexpected, not bad data', async () => {
    const v = fake.seed('OrderEvent', ORDER_V1);
    fake.on('GetSchemaVersion', () =>
      ok({ SchemaVersionId: v.id, DataFormat: 'AVRO', SchemaArn: fake.arn('OrderEvent'), VersionNumber: 1 }),
    );
    const a = await failure(registry.getSchemaVersion(v.id));
    expect(a.kind).toBe(ErrorKind.Unexpected);
    expect(a.retryable).toBe(true);
    expect(a.message).toContain('SchemaDefinition');
    fake.on('GetSchemaVersion', () =>
      ok({
        SchemaVersionId: v.id,
        SchemaDefinition: ORDER_V1,
        DataFormat: 'AVRO',
        SchemaArn: `arn:aws:glue:${REGION}:${ACCOUNT}:registry/${REGISTRY}`,
        VersionNumber: 1,
      }),
    );
    const b = await failure(registry.getSchemaVersion(v.id));
    expect(b.kind).toBe(ErrorKind.Unexpected);
    expect(b.message).toContain('SchemaArn');
  });

  it('behind CachedSchemaRegistry: one GetSchemaVersion per id, NotFound passes through', async () => {
    const v = fake.seed('OrderEvent', ORDER_V1);
    const cached = new CachedSchemaRegistry(registry);
    const [a, b] = await Promise.all([cached.getSchemaVersion(v.id), cached.getSchemaVersion(v.id)]);
    expect(a).toBe(b);
    expect(await cached.getSchemaVersion(v.id)).toBe(a);
    expect(fake.ops()).toEqual(['GetSchemaVersion']);
    const e = await failure(cached.getSchemaVersion('00000000-0000-4000-8000-00000000abcd'));
    expect(e.kind).toBe(ErrorKind.NotFound);
  });
});

describe('GlueSchemaRegistry.register', () => {
  it('a new schema: RegisterSchemaVersion (not found) → CreateSchema → GetSchemaVersion until AVAILABLE', async () => {
    fake.pendingReads = 2;
    const v = await registry.register('OrderEvent', ORDER_V1, 'AVRO');
    expect(v).toEqual({
      id: fake.versions[0]!.id,
      schemaName: 'OrderEvent',
      definition: ORDER_V1,
      dataFormat: 'AVRO',
      versionNumber: 1,
    });
    expect(fake.ops()).toEqual([
      'RegisterSchemaVersion',
      'CreateSchema',
      'GetSchemaVersion',
      'GetSchemaVersion',
      'GetSchemaVersion',
    ]);
    expect(fake.bodies()).toEqual([
      { SchemaId: { RegistryName: REGISTRY, SchemaName: 'OrderEvent' }, SchemaDefinition: ORDER_V1 },
      {
        RegistryId: { RegistryName: REGISTRY },
        SchemaName: 'OrderEvent',
        DataFormat: 'AVRO',
        Compatibility: 'BACKWARD',
        SchemaDefinition: ORDER_V1,
      },
      { SchemaVersionId: v.id },
      { SchemaVersionId: v.id },
      { SchemaVersionId: v.id },
    ]);
    expect(sleeps).toEqual([100, 100]);
  });

  it('an existing schema: a new definition is version 2; an identical one returns the existing version', async () => {
    const v1 = fake.seed('OrderEvent', ORDER_V1);
    const v2 = await registry.register('OrderEvent', ORDER_V2);
    expect(v2).toMatchObject({ schemaName: 'OrderEvent', versionNumber: 2, definition: ORDER_V2 });
    expect(v2.id).not.toBe(v1.id);
    const again = await registry.register('OrderEvent', ORDER_V1);
    expect(again).toMatchObject({ id: v1.id, versionNumber: 1 });
    expect(fake.ops()).toEqual([
      'RegisterSchemaVersion',
      'GetSchemaVersion',
      'RegisterSchemaVersion',
      'GetSchemaVersion',
    ]);
    expect(fake.schemas.size).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('a concurrent creator (CreateSchema → AlreadyExists) falls back to RegisterSchemaVersion', async () => {
    fake.on('RegisterSchemaVersion', () => err('EntityNotFoundException', 'Schema is not found.'));
    fake.on('CreateSchema', () => {
      fake.seed('OrderEvent', ORDER_V1); // the other creator wins
      return err('AlreadyExistsException', 'Schema already exists.');
    });
    const v = await registry.register('OrderEvent', ORDER_V1);
    expect(v).toMatchObject({ id: fake.versions[0]!.id, versionNumber: 1 });
    expect(fake.ops()).toEqual([
      'RegisterSchemaVersion',
      'CreateSchema',
      'RegisterSchemaVersion',
      'GetSchemaVersion',
    ]);
  });

  it('a version that ends in FAILURE → SchemaIncompatible', async () => {
    fake.seed('OrderEvent', ORDER_V1);
    fake.pendingReads = 1;
    fake.nextFinalStatus = 'FAILURE';
    const e = await failure(registry.register('OrderEvent', ORDER_V2));
    expect(e.kind).toBe(ErrorKind.SchemaIncompatible);
    expect(e.message).toContain('OrderEvent');
    expect(e.retryable).toBe(false);
  });

  it('still PENDING after the poll budget → retryable Unexpected', async () => {
    fake.pendingReads = 100;
    const e = await failure(registry.register('OrderEvent', ORDER_V1));
    expect(e.kind).toBe(ErrorKind.Unexpected);
    expect(e.retryable).toBe(true);
    expect(e.message).toContain('PENDING');
    expect(fake.ops().filter((o) => o === 'GetSchemaVersion')).toHaveLength(4);
  });

  it('throttled RegisterSchemaVersion → retryable, no CreateSchema', async () => {
    fake.on('RegisterSchemaVersion', () => err('ThrottlingException', 'Rate exceeded'));
    const e = await failure(registry.register('OrderEvent', ORDER_V1));
    expect(e.retryable).toBe(true);
    expect(fake.ops()).toEqual(['RegisterSchemaVersion']);
  });

  it('a missing registry → NotFound from CreateSchema', async () => {
    const other = new GlueSchemaRegistry({ glue: client, registryName: 'nope' });
    const e = await failure(other.register('OrderEvent', ORDER_V1));
    expect(e.kind).toBe(ErrorKind.NotFound);
    expect(e.message).toContain('nope/OrderEvent');
    expect(fake.ops()).toEqual(['RegisterSchemaVersion', 'CreateSchema']);
  });
});
