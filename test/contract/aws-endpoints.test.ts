/**
 * Endpoints from the environment: Floe's AWS clients, built without an explicit endpoint as the
 * CLI and the Lambda handlers build them, follow `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_<SERVICE>`
 * (the SDK's own resolution, which Floe must not override), and S3 path style follows
 * `FLOE_S3_FORCE_PATH_STYLE`. Each test sets the variables only around its own requests: the SDK
 * reads them at a client's first request.
 */
import { CreateTableCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3ForcePathStyleFromEnv } from '../../lambdas/src/adapters/aws/endpoints.ts';
import { createDynamoClient } from '../../lambdas/src/adapters/aws/glue-schema-registry.ts';
import {
  createKinesisClient,
  createStream,
  putRecords,
} from '../../lambdas/src/adapters/aws/kinesis-producer.ts';
import { createS3Client, S3ObjectStore } from '../../lambdas/src/adapters/aws/s3-object-store.ts';
import { startKinesalite } from '../../lambdas/src/adapters/local/emulators.ts';
import { storeFor } from '../../lambdas/src/cli/dead-letters-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { isFloeError } from '../../lambdas/src/errors.ts';
import { deadLetterRecord } from '../../lambdas/src/ports/dead-letters.ts';
import { startDynalite } from '../helpers/dynalite.ts';
import { type RecordingS3, startRecordingS3 } from '../helpers/recording-s3.ts';
import { startS3rver } from './object-store.contract.ts';

const ENDPOINT_VARS = [
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_KINESIS',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
  'FLOE_S3_FORCE_PATH_STYLE',
] as const;

/** Runs `fn` with these variables set (undefined: removed), then restores the environment. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = new Map<string, string | undefined>();
  const all = { ...Object.fromEntries(ENDPOINT_VARS.map((k) => [k, undefined])), ...vars };
  for (const [k, v] of Object.entries(all)) {
    saved.set(k, process.env[k]);
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Credentials the emulators accept, from the environment as against AWS. */
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };
/** Nothing listens on the discard port: a request that goes there fails. */
const NOWHERE = 'http://127.0.0.1:9';

let s3: Awaited<ReturnType<typeof startS3rver>>;
let recorder: RecordingS3;

beforeAll(async () => {
  s3 = await startS3rver();
  recorder = await startRecordingS3();
}, 60_000);

afterAll(async () => {
  await s3?.close();
  await recorder?.close();
});

const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function readViaExplicitClient(key: string): Promise<string> {
  const got = await s3.client.send(new GetObjectCommand({ Bucket: 'bucket', Key: key }));
  return text(await got.Body!.transformToByteArray());
}

describe('AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_S3 (SDK resolution, not overridden by Floe)', () => {
  it('an S3 object store from createS3Client() with no endpoint talks to $AWS_ENDPOINT_URL (s3rver)', async () => {
    await withEnv({ ...CREDENTIALS, AWS_ENDPOINT_URL: s3.endpoint }, async () => {
      const client = createS3Client({ maxAttempts: 1 });
      try {
        const store = new S3ObjectStore(client);
        await store.put('s3://bucket/endpoint-env/a.txt', 'via AWS_ENDPOINT_URL');
        expect(text(await store.get('s3://bucket/endpoint-env/a.txt'))).toBe('via AWS_ENDPOINT_URL');
      } finally {
        client.destroy();
      }
    });
    // The object really is in s3rver, read with a client that names the endpoint itself.
    expect(await readViaExplicitClient('endpoint-env/a.txt')).toBe('via AWS_ENDPOINT_URL');
  });

  it('the dead-letter store the CLI opens for --store s3://… reads and writes through $AWS_ENDPOINT_URL', async () => {
    const letter = deadLetterRecord({
      source: 'shardId-000000000001',
      line: 1,
      reason: 'malformed-json',
      detail: 'bad',
      raw: '{x',
    });
    await withEnv({ ...CREDENTIALS, AWS_ENDPOINT_URL: s3.endpoint }, async () => {
      const { store, where } = await storeFor({ store: 's3://bucket/cli-dl' }, openWarehouse(undefined));
      expect(where).toBe('s3://bucket/cli-dl');
      await store.put(letter);
      expect((await store.list()).map((d) => d.key)).toEqual([letter.key]);
    });
    expect(JSON.parse(await readViaExplicitClient(`cli-dl/malformed-json/${letter.key}.json`))).toMatchObject(
      {
        key: letter.key,
        raw: '{x',
      },
    );
  });

  it('AWS_ENDPOINT_URL_S3 takes precedence over AWS_ENDPOINT_URL', async () => {
    await withEnv(
      { ...CREDENTIALS, AWS_ENDPOINT_URL: NOWHERE, AWS_ENDPOINT_URL_S3: s3.endpoint },
      async () => {
        const client = createS3Client({ maxAttempts: 1, connectionTimeoutMs: 2_000 });
        try {
          await new S3ObjectStore(client).put('s3://bucket/endpoint-env/b.txt', 'via AWS_ENDPOINT_URL_S3');
        } finally {
          client.destroy();
        }
      },
    );
    expect(await readViaExplicitClient('endpoint-env/b.txt')).toBe('via AWS_ENDPOINT_URL_S3');
  });

  it('an explicit endpoint (the CLI flag --s3-endpoint) wins over the environment', async () => {
    await withEnv({ ...CREDENTIALS, AWS_ENDPOINT_URL: NOWHERE, AWS_ENDPOINT_URL_S3: NOWHERE }, async () => {
      const client = createS3Client({ endpoint: s3.endpoint, forcePathStyle: true, maxAttempts: 1 });
      try {
        await new S3ObjectStore(client).put('s3://bucket/endpoint-env/c.txt', 'explicit');
      } finally {
        client.destroy();
      }
    });
    expect(await readViaExplicitClient('endpoint-env/c.txt')).toBe('explicit');
  });

  it('createKinesisClient() follows AWS_ENDPOINT_URL_KINESIS to kinesalite (HTTP/1.1)', async () => {
    const k = await startKinesalite();
    try {
      await withEnv(
        { ...CREDENTIALS, AWS_ENDPOINT_URL: NOWHERE, AWS_ENDPOINT_URL_KINESIS: k.endpoint },
        async () => {
          const client = createKinesisClient();
          try {
            await createStream(client, 'from-env', 1);
            await putRecords(client, 'from-env', [
              { data: new TextEncoder().encode('{}'), partitionKey: 'p' },
            ]);
          } finally {
            client.destroy();
          }
        },
      );
      const { DescribeStreamSummaryCommand } = await import('@aws-sdk/client-kinesis');
      const d = await k.client.send(new DescribeStreamSummaryCommand({ StreamName: 'from-env' }));
      expect(d.StreamDescriptionSummary?.StreamStatus).toBe('ACTIVE');
    } finally {
      await k.close();
    }
  });

  it('createDynamoClient() follows AWS_ENDPOINT_URL_DYNAMODB to dynalite', async () => {
    const dynamo = await startDynalite();
    try {
      await dynamo.client.send(
        new CreateTableCommand({
          TableName: 'endpoint-probe',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      const tables = await withEnv(
        { ...CREDENTIALS, AWS_ENDPOINT_URL: NOWHERE, AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint },
        async () => {
          const client = createDynamoClient({ maxAttempts: 1 });
          try {
            return (await client.send(new ListTablesCommand({}))).TableNames;
          } finally {
            client.destroy();
          }
        },
      );
      expect(tables).toEqual(['endpoint-probe']);
    } finally {
      await dynamo.close();
    }
  });
});

describe('FLOE_S3_FORCE_PATH_STYLE', () => {
  /** HEAD s3://bucket/k.txt with `env`; returns the client's forcePathStyle and the URL it built. */
  async function probe(env: Record<string, string | undefined>, forcePathStyle?: boolean) {
    return withEnv({ ...CREDENTIALS, AWS_ENDPOINT_URL: recorder.endpoint, ...env }, async () => {
      const client = createS3Client({
        maxAttempts: 1,
        connectionTimeoutMs: 2_000,
        ...(forcePathStyle === undefined ? {} : { forcePathStyle }),
      });
      const built: string[] = [];
      client.middlewareStack.add(
        (next) => async (args) => {
          const r = args.request as { hostname?: string; path?: string };
          built.push(`${r.hostname}${r.path}`);
          return next(args);
        },
        { step: 'finalizeRequest', name: 'recordUrl' },
      );
      recorder.requests.length = 0;
      try {
        // `bucket.localhost` may not resolve: only the URL the client built matters.
        await new S3ObjectStore(client).exists('s3://bucket/k.txt').catch(() => undefined);
        return { pathStyle: client.config.forcePathStyle, built, received: [...recorder.requests] };
      } finally {
        client.destroy();
      }
    });
  }

  it('=1 sends path-style requests (Host: the endpoint, path /bucket/key) to a host-named endpoint', async () => {
    const on = await probe({ FLOE_S3_FORCE_PATH_STYLE: '1' });
    expect(on.pathStyle).toBe(true);
    expect(on.built).toEqual(['localhost/bucket/k.txt']);
    expect(on.received).toEqual([{ method: 'HEAD', host: recorder.host, path: '/bucket/k.txt' }]);
  });

  it('unset, the SDK addresses the bucket virtual-hosted (bucket.localhost), which emulators rarely serve', async () => {
    const off = await probe({});
    expect(off.pathStyle).toBe(false);
    expect(off.built).toEqual(['bucket.localhost/k.txt']);
    expect(off.received.filter((r) => r.path.startsWith('/bucket'))).toEqual([]);
  });

  it('an explicit forcePathStyle option (the CLI flag) wins over the variable', async () => {
    expect((await probe({ FLOE_S3_FORCE_PATH_STYLE: '0' }, true)).built).toEqual(['localhost/bucket/k.txt']);
    expect((await probe({ FLOE_S3_FORCE_PATH_STYLE: '1' }, false)).built).toEqual(['bucket.localhost/k.txt']);
  });

  it('parses strictly: 1/true/yes/on and 0/false/no/off (any case) or unset; anything else is ConfigInvalid', () => {
    for (const v of ['1', 'true', 'TRUE', 'yes', 'on', ' 1 ']) {
      expect(s3ForcePathStyleFromEnv({ FLOE_S3_FORCE_PATH_STYLE: v }), v).toBe(true);
    }
    for (const v of [undefined, '', '0', 'false', 'No', 'off']) {
      expect(s3ForcePathStyleFromEnv({ FLOE_S3_FORCE_PATH_STYLE: v }), String(v)).toBe(false);
    }
    for (const v of ['2', 'y', 'enabled', 'path']) {
      const err = (() => {
        try {
          s3ForcePathStyleFromEnv({ FLOE_S3_FORCE_PATH_STYLE: v });
        } catch (e) {
          return e;
        }
      })();
      expect(isFloeError(err, 'ConfigInvalid'), v).toBe(true);
      expect((err as Error).message).toContain(`FLOE_S3_FORCE_PATH_STYLE must be 1 or 0`);
      expect((err as Error).message).toContain(`'${v}'`);
    }
  });
});
