/**
 * A tiny S3 Tables control plane on the wire (REST-JSON: the table-bucket ARN URL-encoded as one
 * path segment, errors as HTTP status + `x-amzn-errortype`), enough for S3TablesCatalog and the
 * handlers: namespaces, tables with version tokens, a warehouse location per table. The same
 * service as `test/contract/s3tables-catalog.test.ts` speaks to, for running whole handlers
 * against (`AWS_ENDPOINT_URL_S3TABLES`); each table's storage is a folder of an S3 stand-in
 * (`warehouseLocation(n)`), as S3 Tables gives each table its own `s3://…--table-s3` storage.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeS3TablesRequest {
  readonly method: string;
  readonly path: string;
  readonly body: Record<string, unknown> | undefined;
}

interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly errorType?: string;
}

export interface FakeS3Table {
  versionToken: string;
  metadataLocation?: string;
  readonly warehouseLocation: string;
}

const error = (status: number, errorType: string, message: string): Reply => ({
  status,
  errorType,
  body: { message },
});

export class FakeS3Tables {
  readonly requests: FakeS3TablesRequest[] = [];
  readonly namespaces = new Set<string>();
  readonly tables = new Map<string, FakeS3Table>();
  private readonly intercept: ((r: FakeS3TablesRequest) => Reply | undefined)[] = [];
  private server?: Server;
  private tokens = 0;
  private created = 0;
  url = '';

  constructor(
    readonly tableBucketArn: string,
    /** The storage of the n-th table created (1-based). */
    private readonly warehouseLocation: (n: number) => string,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const r: FakeS3TablesRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
        };
        this.requests.push(r);
        let reply: Reply | undefined;
        for (let i = 0; i < this.intercept.length && reply === undefined; i++) {
          reply = this.intercept[i]!(r);
          if (reply !== undefined) this.intercept.splice(i, 1);
        }
        reply ??= this.handle(r);
        res.writeHead(reply.status, {
          'content-type': 'application/json',
          ...(reply.errorType ? { 'x-amzn-errortype': reply.errorType } : {}),
        });
        res.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  /** The next UpdateTableMetadataLocation answers ConflictException (another writer won). */
  conflictOnce(): void {
    this.intercept.push((r) =>
      r.method === 'PUT' && new URL(r.path, 'http://x').pathname.endsWith('/metadata-location')
        ? error(409, 'ConflictException', 'Provided version token does not match the table version token.')
        : undefined,
    );
  }

  private token(): string {
    return `tok-${++this.tokens}`;
  }

  private handle(r: FakeS3TablesRequest): Reply {
    const u = new URL(r.path, 'http://x');
    const parts = u.pathname.split('/').slice(1);
    if (decodeURIComponent(parts[1] ?? '') !== this.tableBucketArn)
      return error(404, 'NotFoundException', 'The specified table bucket does not exist.');
    const [kind, , ns, name, sub] = parts;
    const key = `${ns}.${name}`;
    if (kind === 'namespaces' && r.method === 'PUT') {
      const n = (r.body as { namespace: string[] }).namespace[0]!;
      if (this.namespaces.has(n))
        return error(409, 'ConflictException', 'A namespace with an identical name already exists.');
      this.namespaces.add(n);
      return { status: 200, body: { tableBucketARN: this.tableBucketArn, namespace: [n] } };
    }
    if (kind === 'namespaces' && r.method === 'GET') {
      return {
        status: 200,
        body: {
          namespaces: [...this.namespaces].sort().map((n) => ({
            namespace: [n],
            createdAt: '2025-01-01T00:00:00Z',
            createdBy: '123456789012',
            ownerAccountId: '123456789012',
          })),
        },
      };
    }
    if (kind === 'tables' && r.method === 'GET' && ns === undefined) {
      const n = u.searchParams.get('namespace');
      return {
        status: 200,
        body: {
          tables: [...this.tables.keys()]
            .filter((k) => k.startsWith(`${n}.`))
            .map((k) => ({
              namespace: [n],
              name: k.slice(String(n).length + 1),
              type: 'customer',
              tableARN: `${this.tableBucketArn}/table/${k}`,
              createdAt: '2025-01-01T00:00:00Z',
              modifiedAt: '2025-01-01T00:00:00Z',
            })),
        },
      };
    }
    if (kind === 'tables' && r.method === 'PUT' && name === undefined) {
      const tname = String(r.body?.name);
      if (!this.namespaces.has(String(ns)))
        return error(404, 'NotFoundException', 'The specified namespace does not exist.');
      if (this.tables.has(`${ns}.${tname}`))
        return error(409, 'ConflictException', 'A table with an identical name already exists.');
      const t: FakeS3Table = {
        versionToken: this.token(),
        warehouseLocation: this.warehouseLocation(++this.created),
      };
      this.tables.set(`${ns}.${tname}`, t);
      return {
        status: 200,
        body: { tableARN: `${this.tableBucketArn}/table/${ns}.${tname}`, versionToken: t.versionToken },
      };
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
      if (b.versionToken !== t.versionToken)
        return error(
          409,
          'ConflictException',
          'Provided version token does not match the table version token.',
        );
      if (
        !b.metadataLocation.startsWith(t.warehouseLocation) ||
        !b.metadataLocation.endsWith('.metadata.json')
      )
        return error(400, 'BadRequestException', 'The specified metadata location is not valid.');
      t.versionToken = this.token();
      t.metadataLocation = b.metadataLocation;
      return {
        status: 200,
        body: {
          name,
          tableARN: `${this.tableBucketArn}/table/${key}`,
          namespace: [ns],
          versionToken: t.versionToken,
          metadataLocation: t.metadataLocation,
        },
      };
    }
    return error(400, 'BadRequestException', `unsupported: ${r.method} ${u.pathname}`);
  }
}
