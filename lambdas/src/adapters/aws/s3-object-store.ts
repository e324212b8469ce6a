/**
 * ObjectStore on Amazon S3 (and S3-compatible servers) over an injected AWS SDK v3 `S3Client`.
 *
 * URIs are `s3://bucket/key` (`s3a://` and `s3n://`, as Spark and Hadoop write them, are accepted
 * too; listed URIs keep the scheme of the prefix they were listed under). The key is the raw text
 * after `bucket/`: no percent-decoding, as Iceberg writes locations (`s3://b/a b.parquet` is the
 * key `a b.parquet`, and a partition folder Java-escaped as `region=eu%2Fwest` is that text).
 *
 * Prefixes of `list` and `listChildren` are folders: `list('s3://b/t/data')` lists the keys under
 * `t/data/`, never `t/data2/…`, which matches the local filesystem store. Zero-byte "folder marker"
 * keys ending in `/` (as the S3 console creates them) are not objects and are skipped.
 *
 * Every SDK error is translated here, at the boundary, into a `FloeError`:
 * - `NoSuchKey` / `NotFound` / 404 → `NotFound` naming the URI (and `NoSuchBucket` naming the bucket);
 * - throttling, 429, 5xx, timeouts and connection resets → `Unexpected`, `retryable: true`;
 * - 403 / access denied / bad credentials → `Unexpected`, `retryable: false`, naming bucket and key;
 * - anything else → `Unexpected`, `retryable: false`, carrying the SDK error as `cause`.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { ErrorKind, FloeError } from '../../errors.ts';
import type { ObjectEntry, ObjectStore } from '../../ports/object-store.ts';
import { s3ForcePathStyleFromEnv } from './endpoints.ts';

/** S3's limit for a single PutObject (larger objects need a multipart upload). */
export const MAX_SINGLE_PUT_BYTES = 5 * 1024 ** 3;

export interface S3Location {
  /** `s3`, `s3a` or `s3n`. */
  readonly scheme: string;
  readonly bucket: string;
  /** Raw key (may be empty for a bucket-level prefix). */
  readonly key: string;
}

const URI = /^(s3|s3a|s3n):\/\/([^/]+)(?:\/(.*))?$/s;

/** Splits `s3://bucket/key`; throws `DataInvalid` for anything else. */
export function parseS3Uri(uri: string): S3Location {
  const m = URI.exec(uri);
  if (!m) {
    throw new FloeError(ErrorKind.DataInvalid, `not an S3 URI (expected s3://bucket/key): ${uri}`, {
      context: { uri },
    });
  }
  return { scheme: m[1]!, bucket: m[2]!, key: m[3] ?? '' };
}

export interface S3ObjectStoreOptions {
  /**
   * Send a CRC32 checksum header with every put so S3 rejects a body damaged in transit (default
   * true). The body is always a complete buffer, so the checksum travels as a plain header, not an
   * `aws-chunked` trailer; turn it off only for an S3-compatible server that rejects the header.
   */
  readonly uploadChecksum?: boolean;
}

export class S3ObjectStore implements ObjectStore {
  private readonly uploadChecksum: boolean;

  constructor(
    private readonly client: S3Client,
    options: S3ObjectStoreOptions = {},
  ) {
    this.uploadChecksum = options.uploadChecksum ?? true;
  }

  async get(uri: string): Promise<Uint8Array> {
    const loc = objectLocation(uri);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
      if (!out.Body) return new Uint8Array(0);
      return await out.Body.transformToByteArray();
    } catch (e) {
      throw translateS3Error(e, 'GetObject', uri, loc);
    }
  }

  /**
   * One PutObject: S3 makes the object visible only once it is complete, so readers never observe
   * a partial object. Single puts are limited to 5 GiB (`MAX_SINGLE_PUT_BYTES`); Floe's files are
   * far smaller (128 MiB target), so multipart upload is not implemented yet.
   */
  async put(uri: string, bytes: Uint8Array | string): Promise<void> {
    const loc = objectLocation(uri);
    const body = toBytes(bytes, uri);
    try {
      await this.client.send(new PutObjectCommand(this.putInput(loc, body)));
    } catch (e) {
      throw translateS3Error(e, 'PutObject', uri, loc);
    }
  }

  /**
   * PutObject with `If-None-Match: *`: S3 answers 412 PreconditionFailed when the key exists
   * (→ false). S3 has honoured this since August 2024, but some S3-compatible servers (s3rver, older
   * MinIO/Ceph releases) ignore the header and silently overwrite, returning true. Floe's commit
   * protocol therefore never relies on it for S3: the catalog's compare-and-swap (Glue `VersionId`,
   * S3 Tables `versionToken`) is the commit point, and new objects get unique names. A 409
   * ConditionalRequestConflict (a concurrent conditional write in flight) is a retryable error; a
   * retry then resolves to true or false.
   */
  async putIfAbsent(uri: string, bytes: Uint8Array | string): Promise<boolean> {
    const loc = objectLocation(uri);
    const body = toBytes(bytes, uri);
    try {
      await this.client.send(new PutObjectCommand({ ...this.putInput(loc, body), IfNoneMatch: '*' }));
      return true;
    } catch (e) {
      if (statusOf(e) === 412 || nameOf(e) === 'PreconditionFailed') return false;
      throw translateS3Error(e, 'PutObject', uri, loc);
    }
  }

  async exists(uri: string): Promise<boolean> {
    const loc = objectLocation(uri);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
      return true;
    } catch (e) {
      const err = translateS3Error(e, 'HeadObject', uri, loc);
      if (err.kind === ErrorKind.NotFound && nameOf(e) !== 'NoSuchBucket') return false;
      throw err;
    }
  }

  /** Deleting a missing object is not an error (S3 answers 204 either way). */
  async delete(uri: string): Promise<void> {
    const loc = objectLocation(uri);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
    } catch (e) {
      const err = translateS3Error(e, 'DeleteObject', uri, loc);
      if (err.kind === ErrorKind.NotFound && nameOf(e) !== 'NoSuchBucket') return;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const loc = parseS3Uri(prefix);
    const folder = folderOf(loc.key);
    const out: string[] = [];
    for await (const page of this.pages(loc, folder, undefined, prefix)) {
      for (const o of page.Contents ?? []) {
        if (o.Key === undefined || o.Key.endsWith('/')) continue;
        out.push(`${loc.scheme}://${loc.bucket}/${o.Key}`);
      }
    }
    // S3 returns UTF-8 byte order; sort again so the order is the port's (and the local store's).
    return out.sort();
  }

  /** One listing, as `list`: S3 returns each key's size and last-modified time with it. */
  async listEntries(prefix: string): Promise<ObjectEntry[]> {
    const loc = parseS3Uri(prefix);
    const folder = folderOf(loc.key);
    const out: ObjectEntry[] = [];
    for await (const page of this.pages(loc, folder, undefined, prefix)) {
      for (const o of page.Contents ?? []) {
        if (o.Key === undefined || o.Key.endsWith('/')) continue;
        out.push({
          uri: `${loc.scheme}://${loc.bucket}/${o.Key}`,
          size: o.Size ?? 0,
          lastModifiedMs: o.LastModified?.getTime() ?? 0,
        });
      }
    }
    return out.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  }

  async listChildren(prefix: string): Promise<string[]> {
    const loc = parseS3Uri(prefix);
    const folder = folderOf(loc.key);
    const names = new Set<string>();
    for await (const page of this.pages(loc, folder, '/', prefix)) {
      for (const p of page.CommonPrefixes ?? []) {
        const name = p.Prefix?.slice(folder.length).replace(/\/$/, '');
        if (name) names.add(name);
      }
      for (const o of page.Contents ?? []) {
        const name = o.Key?.slice(folder.length);
        if (name) names.add(name); // '' is the folder's own marker object
      }
    }
    return [...names].sort();
  }

  async size(uri: string): Promise<number> {
    const loc = objectLocation(uri);
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: loc.bucket, Key: loc.key }));
      return out.ContentLength ?? 0;
    } catch (e) {
      throw translateS3Error(e, 'HeadObject', uri, loc);
    }
  }

  private putInput(loc: S3Location, body: Uint8Array) {
    return {
      Bucket: loc.bucket,
      Key: loc.key,
      Body: body,
      ContentLength: body.byteLength,
      ...(this.uploadChecksum ? { ChecksumAlgorithm: 'CRC32' as const } : {}),
    };
  }

  /** ListObjectsV2 pages (1,000 keys each) until the listing is no longer truncated. */
  private async *pages(
    loc: S3Location,
    folder: string,
    delimiter: string | undefined,
    uri: string,
  ): AsyncGenerator<ListObjectsV2CommandOutput> {
    let token: string | undefined;
    do {
      let page: ListObjectsV2CommandOutput;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({
            Bucket: loc.bucket,
            Prefix: folder,
            Delimiter: delimiter,
            ContinuationToken: token,
          }),
        );
      } catch (e) {
        throw translateS3Error(e, 'ListObjectsV2', uri, { ...loc, key: folder });
      }
      yield page;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}

function objectLocation(uri: string): S3Location {
  const loc = parseS3Uri(uri);
  if (loc.key === '' || loc.key.endsWith('/')) {
    throw new FloeError(ErrorKind.DataInvalid, `S3 URI names no object (empty key or ends in '/'): ${uri}`, {
      context: { uri },
    });
  }
  return loc;
}

/** `a/b` → `a/b/`; '' stays '' (the whole bucket). */
function folderOf(key: string): string {
  return key === '' || key.endsWith('/') ? key : `${key}/`;
}

function toBytes(bytes: Uint8Array | string, uri: string): Uint8Array {
  const body = typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
  if (body.byteLength > MAX_SINGLE_PUT_BYTES) {
    throw new FloeError(
      ErrorKind.FeatureUnsupported,
      `object of ${body.byteLength} bytes exceeds S3's 5 GiB single-put limit (multipart upload is not implemented): ${uri}`,
      { context: { uri, bytes: body.byteLength } },
    );
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// Error translation

interface SdkErrorShape {
  name?: string;
  code?: string;
  Code?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number; requestId?: string; extendedRequestId?: string };
}

function nameOf(e: unknown): string {
  const x = (e ?? {}) as SdkErrorShape;
  return x.name ?? x.Code ?? x.code ?? '';
}

function statusOf(e: unknown): number | undefined {
  return ((e ?? {}) as SdkErrorShape).$metadata?.httpStatusCode;
}

const NOT_FOUND = new Set(['NoSuchKey', 'NotFound', 'NoSuchBucket']);
const THROTTLING = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'ProvisionedThroughputExceededException',
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'PriorRequestNotComplete',
]);
const TRANSIENT = new Set([
  'RequestTimeout',
  'RequestTimeoutException',
  'TimeoutError',
  'InternalError',
  'ServiceUnavailable',
  'ConditionalRequestConflict',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ECONNABORTED',
]);
const ACCESS = new Set([
  'AccessDenied',
  'Forbidden',
  'AllAccessDisabled',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ExpiredToken',
  'InvalidToken',
  'AccountProblem',
]);

/**
 * Maps an SDK (or network) error from operation `op` on `uri` to a `FloeError`. Exported for the
 * other S3-based adapters.
 */
export function translateS3Error(e: unknown, op: string, uri: string, loc?: S3Location): FloeError {
  if (e instanceof FloeError) return e;
  const x = (e ?? {}) as SdkErrorShape;
  const name = nameOf(e);
  const code = x.code ?? '';
  const status = statusOf(e);
  const where = loc ?? safeParse(uri);
  const context: Record<string, unknown> = {
    op,
    uri,
    bucket: where?.bucket,
    key: where?.key,
    sdkError: name || undefined,
    httpStatus: status,
    requestId: x.$metadata?.requestId,
  };
  const detail = `${name || 'error'}${status ? ` (HTTP ${status})` : ''}${x.message && x.message !== 'UnknownError' ? `: ${x.message}` : ''}`;

  if (name === 'NoSuchBucket') {
    return new FloeError(ErrorKind.NotFound, `S3 bucket '${where?.bucket}' does not exist (${op} ${uri})`, {
      cause: e,
      context,
    });
  }
  if (NOT_FOUND.has(name) || status === 404) {
    return new FloeError(ErrorKind.NotFound, `no object at ${uri}`, { cause: e, context });
  }
  if (ACCESS.has(name) || status === 403) {
    return new FloeError(
      ErrorKind.Unexpected,
      `S3 access denied: ${op} on bucket '${where?.bucket}', key '${where?.key}' (${detail}). ` +
        'Check the credentials and the IAM/bucket policy; note that S3 answers 403 instead of 404 for a ' +
        'missing key when the caller lacks s3:ListBucket.',
      { cause: e, context, retryable: false },
    );
  }
  const retryable =
    THROTTLING.has(name) ||
    TRANSIENT.has(name) ||
    TRANSIENT.has(code) ||
    status === 429 ||
    (status !== undefined && status >= 500) ||
    x.$fault === 'server' ||
    Boolean(x.$retryable);
  const what =
    THROTTLING.has(name) || status === 429 || status === 503 ? 'throttled or unavailable' : 'failed';
  return new FloeError(ErrorKind.Unexpected, `S3 ${op} ${what} for ${uri}: ${detail}`, {
    cause: e,
    context,
    retryable,
  });
}

function safeParse(uri: string): S3Location | undefined {
  try {
    return parseS3Uri(uri);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Client

export interface CreateS3ClientOptions {
  /** Default: `$AWS_REGION`, then `$AWS_DEFAULT_REGION`, then `us-east-1`. */
  region?: string;
  /**
   * For S3-compatible servers and emulators, e.g. `http://127.0.0.1:4568`. Default: the SDK's own
   * resolution (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's `endpoint_url`, else AWS).
   */
  endpoint?: string;
  /**
   * Path-style addressing (`endpoint/bucket/key`); needed by emulators reached by host name
   * (`http://localhost:4566`). Default: `$FLOE_S3_FORCE_PATH_STYLE` (see `endpoints.ts`), else off.
   */
  forcePathStyle?: boolean;
  /** Default: the SDK's credential chain (environment, profile, Lambda role …). */
  credentials?: NonNullable<S3ClientConfig['credentials']>;
  /** SDK attempts per request, retries included (SDK default 3). */
  maxAttempts?: number;
  /** Sockets per host (default 50). */
  maxSockets?: number;
  /** Milliseconds to establish a connection (default 5,000). */
  connectionTimeoutMs?: number;
  /** Milliseconds of socket inactivity before a request fails (default 60,000). */
  requestTimeoutMs?: number;
}

/**
 * An `S3Client` configured for Floe.
 *
 * Checksums: since SDK 3.729 the default (`WHEN_SUPPORTED`) sends upload bodies with
 * `aws-chunked` content encoding and a trailing CRC32, and validates response checksums. Many
 * S3-compatible servers (s3rver among them) do not decode `aws-chunked` and store the framing
 * bytes as part of the object, i.e. corrupted data. `WHEN_REQUIRED` restores the plain-body
 * behaviour. It is also safe against real S3: Floe's bodies are whole buffers sent over TLS with a
 * signed request, and `S3ObjectStore` still asks for a CRC32 per put (as a plain header, which S3
 * validates), so integrity checking is not lost.
 *
 * Endpoint: only an explicit `endpoint` is set here; otherwise the SDK resolves it itself, so
 * `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL` (LocalStack, moto, MinIO) work as with any AWS tool.
 *
 * HTTP: HTTP/1.1 (`NodeHttpHandler`; S3 does not speak HTTP/2) with keep-alive agents so a Lambda
 * reuses its TLS connections across requests and invocations (create the client outside the
 * handler). Call `client.destroy()` to release the sockets.
 */
export function createS3Client(opts: CreateS3ClientOptions = {}): S3Client {
  const maxSockets = opts.maxSockets ?? 50;
  return new S3Client({
    region: opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...(opts.endpoint !== undefined ? { endpoint: opts.endpoint } : {}),
    ...(opts.credentials !== undefined ? { credentials: opts.credentials } : {}),
    ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
    forcePathStyle: opts.forcePathStyle ?? s3ForcePathStyleFromEnv(),
    // A bucket in another region than the client's still works (one extra round trip).
    followRegionRedirects: opts.endpoint === undefined,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: new NodeHttpHandler({
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets }),
      connectionTimeout: opts.connectionTimeoutMs ?? 5_000,
      requestTimeout: opts.requestTimeoutMs ?? 60_000,
      // A socket that stays silent this long (an answer lost, a server that hangs) is given up and
      // the request retried. Idle time, not the whole request: a large body still uploads slowly.
      socketTimeout: opts.requestTimeoutMs ?? 60_000,
    }),
  });
}
