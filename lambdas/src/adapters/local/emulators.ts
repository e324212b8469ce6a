/**
 * kinesalite (Kinesis) and dynalite (DynamoDB) started in-process on 127.0.0.1, with SDK clients
 * pointed at them. Both speak the real wire protocols, so the ingest, committer, ledger, lock and
 * poller run unchanged against them (DESIGN §1: "The local mode runs the very same … code").
 */
import http from 'node:http';
import { createRequire } from 'node:module';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KinesisClient } from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createKinesisClient } from '../aws/kinesis-producer.ts';

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

/** Starts an emulator package's server and a client for it (both speak AWS JSON over HTTP/1.1). */
async function start<C extends { destroy(): void }>(
  pkg: string,
  options: Record<string, number>,
  port: number | undefined,
  client: (endpoint: string) => C,
): Promise<Emulator<C>> {
  const create = require(pkg) as (o: Record<string, number>) => EmulatorServer;
  const server = create(options);
  const endpoint = await listen(server, port ?? 0);
  const c = client(endpoint);
  return {
    endpoint,
    client: c,
    close: async () => {
      c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type KinesisEmulator = Emulator<KinesisClient>;
export type DynamoEmulator = Emulator<DynamoDBClient>;

export function startKinesalite(opts: { port?: number; region?: string } = {}): Promise<KinesisEmulator> {
  return start(
    'kinesalite',
    { createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 100 },
    opts.port,
    (endpoint) => createKinesisClient({ endpoint, region: opts.region ?? 'us-east-1' }),
  );
}

export function startDynalite(
  opts: { port?: number; region?: string } = {},
): Promise<Emulator<DynamoDBClient>> {
  return start(
    'dynalite',
    { createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 },
    opts.port,
    (endpoint) =>
      new DynamoDBClient({
        endpoint,
        region: opts.region ?? 'us-east-1',
        credentials: LOCAL_CREDENTIALS,
        requestHandler: handler(),
      }),
  );
}
