import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createS3Client,
  parseS3Uri,
  S3ObjectStore,
  translateS3Error,
} from '../../lambdas/src/adapters/aws/s3-object-store.ts';
import { fileUri, LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import { type FloeError, isFloeError } from '../../lambdas/src/errors.ts';
import { objectStoreContract, startS3rver } from './object-store.contract.ts';

const tempDir = (tag: string) => mkdtempSync(join(tmpdir(), `floe-${tag}-`));

objectStoreContract('LocalObjectStore', async () => {
  const d = tempDir('local-store');
  return {
    store: new LocalObjectStore(),
    root: fileUri(d),
    close: async () => rmSync(d, { recursive: true, force: true }),
  };
});

objectStoreContract(
  'S3ObjectStore on s3rver',
  async () => {
    const s = await startS3rver();
    return { store: new S3ObjectStore(s.client), root: 's3://bucket/contract', close: s.close };
  },
  // s3rver ignores If-None-Match on PUT, and its delimiter listing skips folders that hold only
  // folders; both are asserted below as s3rver facts, so a fixed s3rver shows up as a failure.
  { honoursPutIfAbsent: false, listsFoldersOfFolders: false },
);

describe('LocalObjectStore.listEntries', () => {
  it("reports a file's own modification time (what purging dead letters by age relies on)", async () => {
    const d = tempDir('local-entries');
    try {
      const store = new LocalObjectStore();
      const uri = `${fileUri(d)}/old/x.json`;
      await store.put(uri, '{}');
      const when = Date.UTC(2021, 2, 4, 5, 6, 7, 123);
      utimesSync(join(d, 'old', 'x.json'), new Date(when), new Date(when));
      expect(await store.listEntries(fileUri(d))).toEqual([{ uri, size: 2, lastModifiedMs: when }]);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('S3ObjectStore on s3rver: S3-specific behaviour', () => {
  let s: Awaited<ReturnType<typeof startS3rver>>;
  let store: S3ObjectStore;
  beforeAll(async () => {
    s = await startS3rver();
    store = new S3ObjectStore(s.client);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('putIfAbsent: s3rver ignores If-None-Match and overwrites (why Floe never commits through it)', async () => {
    const uri = 's3://bucket/specific/v1.json';
    expect(await store.putIfAbsent(uri, 'first')).toBe(true);
    // A real S3 bucket answers 412 here (see the stub-server test below); s3rver does not.
    expect(await store.putIfAbsent(uri, 'second')).toBe(true);
    expect(new TextDecoder().decode(await store.get(uri))).toBe('second');
  });

  it('listChildren on s3rver misses a folder that holds only folders (an s3rver bug; S3 lists it)', async () => {
    await store.put('s3://bucket/specific/nested/only/deeper/x.txt', 'x');
    await store.put('s3://bucket/specific/nested/file.txt', 'f');
    expect(await store.listChildren('s3://bucket/specific/nested')).toEqual(['file.txt']);
    expect(await store.listChildren('s3://bucket/specific/nested/only')).toEqual(['deeper']);
  });

  it('accepts s3a:// URIs and lists them with the scheme of the prefix', async () => {
    await store.put('s3a://bucket/specific/s3a/x.txt', 'x');
    expect(await store.exists('s3://bucket/specific/s3a/x.txt')).toBe(true);
    expect(await store.list('s3a://bucket/specific/s3a')).toEqual(['s3a://bucket/specific/s3a/x.txt']);
    expect(await store.listChildren('s3a://bucket/specific')).toContain('s3a');
  });

  it('skips folder-marker keys (ending in /) in listings', async () => {
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    await s.client.send(new PutObjectCommand({ Bucket: 'bucket', Key: 'specific/markers/', Body: '' }));
    await s.client.send(new PutObjectCommand({ Bucket: 'bucket', Key: 'specific/markers/sub/', Body: '' }));
    await store.put('s3://bucket/specific/markers/a.txt', 'a');
    expect(await store.list('s3://bucket/specific/markers')).toEqual(['s3://bucket/specific/markers/a.txt']);
    expect(await store.listChildren('s3://bucket/specific/markers')).toEqual(['a.txt', 'sub']);
  });

  it('a missing bucket is NotFound naming the bucket', async () => {
    const err = await store.get('s3://no-such-bucket/k').catch((e: unknown) => e);
    expect(isFloeError(err, 'NotFound')).toBe(true);
    expect((err as Error).message).toContain('no-such-bucket');
  });

  it('rejects URIs that are not S3 objects', async () => {
    for (const bad of ['file:///tmp/x', 's3://', 's3://bucket', 's3://bucket/', 's3://bucket/dir/']) {
      const err = await store.get(bad).catch((e: unknown) => e);
      expect(isFloeError(err, 'DataInvalid')).toBe(true);
    }
    expect(parseS3Uri('s3://b/a b/c+d')).toEqual({ scheme: 's3', bucket: 'b', key: 'a b/c+d' });
  });
});

describe('createS3Client', () => {
  it('sets WHEN_REQUIRED checksums, the given endpoint and path style', async () => {
    const c = createS3Client({ region: 'eu-west-1', endpoint: 'http://127.0.0.1:1', forcePathStyle: true });
    try {
      expect(await c.config.requestChecksumCalculation()).toBe('WHEN_REQUIRED');
      expect(await c.config.responseChecksumValidation()).toBe('WHEN_REQUIRED');
      expect(await c.config.region()).toBe('eu-west-1');
      expect(c.config.forcePathStyle).toBe(true);
    } finally {
      c.destroy();
    }
  });
});

/**
 * A tiny S3 stand-in answering canned errors: conditional PUTs get 412, keys under `denied/` 403,
 * `busy/` 503 SlowDown, `conflict/` 409 ConditionalRequestConflict, `broken/` 500, `bad/` 400.
 */
describe('S3ObjectStore error translation (stub server)', () => {
  let server: Server;
  let client: S3Client;
  let store: S3ObjectStore;
  const requests: { method: string; url: string; ifNoneMatch?: string }[] = [];
  let lastBody = Buffer.alloc(0);
  let lastHeaders: IncomingMessage['headers'] = {};

  const xmlError = (res: ServerResponse, req: IncomingMessage, status: number, code: string, msg: string) => {
    res.statusCode = status;
    res.setHeader('x-amz-request-id', 'STUB-REQUEST');
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.setHeader('content-type', 'application/xml');
    res.end(
      `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${msg}</Message><RequestId>STUB-REQUEST</RequestId></Error>`,
    );
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c)); // drain the body: the connection stays usable
      req.on('end', () => {
        lastBody = Buffer.concat(chunks);
        lastHeaders = req.headers;
        const url = decodeURIComponent(req.url ?? '');
        const ifNoneMatch = req.headers['if-none-match'] as string | undefined;
        requests.push({ method: req.method ?? '', url: url.split('?')[0]!, ifNoneMatch });
        // The key is in the path (objects) or in `prefix=` (listings).
        const under = (folder: string) => url.includes(`/${folder}/`) || url.includes(`=${folder}/`);
        if (under('denied')) return xmlError(res, req, 403, 'AccessDenied', 'Access Denied');
        if (under('busy')) return xmlError(res, req, 503, 'SlowDown', 'Please reduce your request rate.');
        if (under('conflict')) {
          return xmlError(res, req, 409, 'ConditionalRequestConflict', 'A conflicting operation occurred.');
        }
        if (under('broken')) return xmlError(res, req, 500, 'InternalError', 'We encountered an error.');
        if (under('bad')) return xmlError(res, req, 400, 'InvalidArgument', 'Invalid argument.');
        if (req.method === 'PUT' && ifNoneMatch === '*') {
          return xmlError(
            res,
            req,
            412,
            'PreconditionFailed',
            'At least one of the pre-conditions did not hold',
          );
        }
        if (req.method === 'PUT') {
          res.setHeader('etag', '"stub"');
          res.end();
          return;
        }
        return xmlError(res, req, 404, 'NoSuchKey', 'The specified key does not exist.');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = createS3Client({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: 'STUB', secretAccessKey: 'STUB' },
      maxAttempts: 1, // no SDK retries: each test sees the first answer
    });
    store = new S3ObjectStore(client);
  });
  afterAll(async () => {
    client?.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it('putIfAbsent sends If-None-Match: * and maps 412 PreconditionFailed to false', async () => {
    requests.length = 0;
    expect(await store.putIfAbsent('s3://bucket/t/metadata/v2.json', '{}')).toBe(false);
    expect(requests).toEqual([{ method: 'PUT', url: '/bucket/t/metadata/v2.json', ifNoneMatch: '*' }]);
    // A plain put sends no condition.
    await store.put('s3://bucket/t/plain.json', '{}');
    expect(requests[1]?.ifNoneMatch).toBeUndefined();
  });

  it('sends the body plainly with a CRC32 header (no aws-chunked framing)', async () => {
    const body = new Uint8Array(70_000).map((_, i) => (i * 7) & 0xff);
    await store.put('s3://bucket/t/data.bin', body);
    expect(Buffer.compare(lastBody, Buffer.from(body))).toBe(0);
    expect(lastHeaders['content-encoding'] ?? '').not.toContain('aws-chunked');
    expect(lastHeaders['content-length']).toBe('70000');
    expect(lastHeaders['x-amz-checksum-crc32']).toMatch(/^[A-Za-z0-9+/]{6}==$/);
    await new S3ObjectStore(client, { uploadChecksum: false }).put('s3://bucket/t/data.bin', body);
    expect(lastHeaders['x-amz-checksum-crc32']).toBeUndefined();
  });

  it('maps 403 to a non-retryable Unexpected error naming bucket and key', async () => {
    for (const op of [
      () => store.get('s3://bucket/denied/k.bin'),
      () => store.put('s3://bucket/denied/k.bin', 'x'),
      () => store.exists('s3://bucket/denied/k.bin'), // HEAD: no error body, status only
      () => store.size('s3://bucket/denied/k.bin'),
      () => store.list('s3://bucket/denied/k.bin'),
    ]) {
      const err = await op().catch((e: unknown) => e);
      expect(isFloeError(err, 'Unexpected')).toBe(true);
      const fe = err as FloeError;
      expect(fe.retryable).toBe(false);
      expect(fe.message).toMatch(/access denied/i);
      expect(fe.message).toContain("bucket 'bucket'");
      expect(fe.message).toContain('denied/k.bin');
      expect(fe.context.httpStatus).toBe(403);
    }
  });

  it('maps 503 SlowDown, 500 and 409 ConditionalRequestConflict to retryable errors', async () => {
    for (const [uri, status] of [
      ['s3://bucket/busy/k', 503],
      ['s3://bucket/broken/k', 500],
      ['s3://bucket/conflict/k', 409],
    ] as const) {
      const err = await store.putIfAbsent(uri, 'x').catch((e: unknown) => e);
      expect(isFloeError(err, 'Unexpected')).toBe(true);
      expect((err as FloeError).retryable).toBe(true);
      expect((err as FloeError).message).toContain(uri);
      expect((err as FloeError).context.httpStatus).toBe(status);
    }
    const head = await store.exists('s3://bucket/busy/k').catch((e: unknown) => e);
    expect(isFloeError(head, 'Unexpected') && head.retryable).toBe(true);
  });

  it('maps other client errors to non-retryable errors and 404 to NotFound', async () => {
    const bad = await store.get('s3://bucket/bad/k').catch((e: unknown) => e);
    expect(isFloeError(bad, 'Unexpected') && !bad.retryable).toBe(true);
    expect((bad as Error).message).toContain('InvalidArgument');
    const missing = await store.get('s3://bucket/t/missing.bin').catch((e: unknown) => e);
    expect(isFloeError(missing, 'NotFound')).toBe(true);
    expect((missing as Error).message).toContain('s3://bucket/t/missing.bin');
    expect(await store.exists('s3://bucket/t/missing.bin')).toBe(false);
    await store.delete('s3://bucket/t/missing.bin'); // a 404 on delete is fine too
  });

  it('treats network failures and throttling names as retryable', () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(translateS3Error(reset, 'GetObject', 's3://b/k').retryable).toBe(true);
    const throttled = Object.assign(new Error('slow'), { name: 'ThrottlingException', $metadata: {} });
    expect(translateS3Error(throttled, 'GetObject', 's3://b/k').retryable).toBe(true);
    const other = Object.assign(new Error('nope'), {
      name: 'InvalidObjectState',
      $metadata: { httpStatusCode: 403 },
    });
    expect(translateS3Error(other, 'GetObject', 's3://b/k').retryable).toBe(false);
  });
});
