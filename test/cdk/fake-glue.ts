/**
 * A tiny Glue Data Catalog on the wire (awsJson1_1: `POST /`, `X-Amz-Target: AWSGlue.<Op>`, errors
 * as `{"__type", "message"}`), enough for GlueCatalog: databases, tables with `VersionId`
 * optimistic locking. The same fake as `test/contract/glue-catalog.test.ts`, without the request
 * recording, for running the bundled Lambdas against (`AWS_ENDPOINT_URL_GLUE`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Body = Record<string, unknown>;
type GlueTable = Body & { Parameters?: Record<string, string>; VersionId: string };
interface Reply {
  readonly status: number;
  readonly body: unknown;
}

export class FakeGlue {
  readonly databases = new Map<string, Body>();
  readonly tables = new Map<string, GlueTable>();
  readonly operations: string[] = [];
  url = '';
  private server?: Server;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const op = String(req.headers['x-amz-target'] ?? '').replace(/^AWSGlue\./, '');
        this.operations.push(op);
        const reply = this.handle(op, text === '' ? {} : (JSON.parse(text) as Body));
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

  private handle(op: string, b: Body): Reply {
    const key = `${b.DatabaseName}.${(b.TableInput as { Name?: string } | undefined)?.Name ?? b.Name}`;
    switch (op) {
      case 'CreateDatabase': {
        const input = b.DatabaseInput as { Name: string };
        if (this.databases.has(input.Name))
          return err('AlreadyExistsException', `Database ${input.Name} already exists.`);
        this.databases.set(input.Name, input);
        return ok({});
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
        return ok({ TableList: [...this.tables.values()].filter((t) => t.DatabaseName === b.DatabaseName) });
      }
      case 'UpdateTable': {
        const t = this.tables.get(key);
        if (!t) return err('EntityNotFoundException', 'Table not found.');
        if (b.VersionId !== undefined && b.VersionId !== t.VersionId)
          return err(
            'ConcurrentModificationException',
            'Update table failed due to concurrent modifications.',
          );
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
function err(type: string, message: string): Reply {
  return { status: 400, body: { __type: type, message } };
}
