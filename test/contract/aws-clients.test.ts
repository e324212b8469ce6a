/**
 * Liveness of Floe's AWS clients: a request the service received but never answers (the answer
 * lost on the way, or a service that hangs) fails after the configured time and is retried, instead
 * of holding the run until the Lambda times out. The SDK only warns on a request timeout unless
 * told to throw, and sets no idle-socket timeout of its own: these tests fail without both.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetTableCommand } from '@aws-sdk/client-glue';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDynamoClient, createGlueClient } from '../../lambdas/src/adapters/aws/glue-schema-registry.ts';
import { createS3Client } from '../../lambdas/src/adapters/aws/s3-object-store.ts';

let server: Server;
let received = 0;
let endpoint = '';
const credentials = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' };

beforeEach(async () => {
  received = 0;
  // Reads every request, never answers.
  server = createServer((req) => {
    req.resume();
    req.on('end', () => {
      received++;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(() => r(undefined)));
});

describe('an answer that never comes', () => {
  it('DynamoDB and Glue: each attempt times out, the request fails after its attempts', async () => {
    const dynamo = createDynamoClient({
      endpoint,
      credentials,
      region: 'eu-west-1',
      requestTimeoutMs: 300,
      maxAttempts: 2,
    });
    const glue = createGlueClient({
      endpoint,
      credentials,
      region: 'eu-west-1',
      requestTimeoutMs: 300,
      maxAttempts: 2,
    });
    try {
      await expect(
        dynamo.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } }, ConsistentRead: true })),
      ).rejects.toThrow(/timeout|timed out|exceeded/i);
      expect(received).toBe(2);
      await expect(glue.send(new GetTableCommand({ DatabaseName: 'd', Name: 't' }))).rejects.toThrow(
        /timeout|timed out|exceeded/i,
      );
      expect(received).toBe(4);
    } finally {
      dynamo.destroy();
      glue.destroy();
    }
  });

  it('S3: a socket silent past its timeout is given up and retried', async () => {
    const s3 = createS3Client({
      endpoint,
      credentials,
      region: 'eu-west-1',
      forcePathStyle: true,
      requestTimeoutMs: 300,
      maxAttempts: 2,
    });
    try {
      await expect(s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }))).rejects.toThrow(
        /timeout|timed out|exceeded|socket/i,
      );
      expect(received).toBe(2);
    } finally {
      s3.destroy();
    }
  });
});
