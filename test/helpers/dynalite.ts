/** dynalite (DynamoDB emulator) on 127.0.0.1 with a client pointed at it, for integration tests. */
import http from 'node:http';
import { createRequire } from 'node:module';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';

// dynalite ships no type declarations; load it through require with the little we use.
interface DynaliteServer {
  listen(port: number, host: string, cb: (err?: Error) => void): void;
  address(): { port: number };
  close(cb?: () => void): void;
}
const dynalite = createRequire(import.meta.url)('dynalite') as (
  options: Record<string, number>,
) => DynaliteServer;

export interface LocalDynamo {
  readonly client: DynamoDBClient;
  readonly endpoint: string;
  close(): Promise<void>;
}

export async function startDynalite(): Promise<LocalDynamo> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) =>
    server.listen(0, '127.0.0.1', (e) => (e ? reject(e) : resolve())),
  );
  const endpoint = `http://127.0.0.1:${server.address().port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestHandler: new NodeHttpHandler({ httpAgent: new http.Agent({ keepAlive: true, maxSockets: 32 }) }),
  });
  return {
    client,
    endpoint,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
