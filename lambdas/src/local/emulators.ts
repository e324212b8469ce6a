/**
 * kinesalite (Kinesis) and dynalite (DynamoDB) started in-process on 127.0.0.1, with SDK clients
 * pointed at them. Both speak the real wire protocols, so the ingest, committer, ledger, lock and
 * poller run unchanged against them (DESIGN §1: "The local mode runs the very same … code").
 */
import http from 'node:http';
import { createRequire } from 'node:module';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KinesisClient } from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';

interface EmulatorServer {
  listen(port: number, host: string, cb: (err?: Error) => void): void;
  address(): { port: number };
  close(cb?: (err?: Error) => void): void;
}

const require = createRequire(import.meta.url);
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface Emulator<C> {
  readonly endpoint: string;
  readonly client: C;
  close(): Promise<void>;
}

async function listen(server: EmulatorServer, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) =>
    server.listen(port, '127.0.0.1', (e) => (e ? reject(e) : resolve())),
  );
  return `http://127.0.0.1:${server.address().port}`;
}

function handler(): NodeHttpHandler {
  // Both emulators speak HTTP/1.1 only.
  return new NodeHttpHandler({ httpAgent: new http.Agent({ keepAlive: true, maxSockets: 32 }) });
}

export async function startKinesalite(
  opts: { port?: number; region?: string } = {},
): Promise<Emulator<KinesisClient>> {
  const kinesalite = require('kinesalite') as (o: Record<string, number>) => EmulatorServer;
  const server = kinesalite({ createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 100 });
  const endpoint = await listen(server, opts.port ?? 0);
  const client = new KinesisClient({
    endpoint,
    region: opts.region ?? 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    requestHandler: handler(),
  });
  return {
    endpoint,
    client,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startDynalite(
  opts: { port?: number; region?: string } = {},
): Promise<Emulator<DynamoDBClient>> {
  const dynalite = require('dynalite') as (o: Record<string, number>) => EmulatorServer;
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const endpoint = await listen(server, opts.port ?? 0);
  const client = new DynamoDBClient({
    endpoint,
    region: opts.region ?? 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    requestHandler: handler(),
  });
  return {
    endpoint,
    client,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
