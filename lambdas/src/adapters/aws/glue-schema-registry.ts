/**
 * {@link SchemaRegistry} on the AWS Glue Schema Registry (facts §12.2), the registry the GSR serde
 * library frames Kinesis records for.
 *
 * - `getSchemaVersion(id)`: `GetSchemaVersion {SchemaVersionId}`. The schema name comes from the
 *   response's `SchemaArn` (`arn:aws:glue:<region>:<account>:schema/<registry>/<schema>`).
 *   `EntityNotFoundException` → `FloeError(NotFound)` (the record naming the id is bad data);
 *   throttling, 5xx and network errors → `FloeError(Unexpected, retryable)`; other 4xx →
 *   `FloeError(Unexpected)`, not retryable. A response missing a field Floe needs is an
 *   `Unexpected`, retryable error too (never bad data): the version exists, Glue just did not say.
 * - `register(name, definition, format)`, as the serde library's auto-registration does:
 *   `RegisterSchemaVersion` (Glue returns the existing version for an identical definition); when
 *   the schema does not exist, `CreateSchema` with the definition as version 1 (an
 *   `AlreadyExistsException` from a concurrent creator falls back to `RegisterSchemaVersion`).
 *   A new version is `PENDING` while Glue checks compatibility: `GetSchemaVersion` is polled until
 *   it is `AVAILABLE`; `FAILURE` (incompatible with the schema's compatibility mode) →
 *   `FloeError(SchemaIncompatible)`; still pending after the poll budget → retryable `Unexpected`.
 *
 * Also the SDK client factories the Lambda handlers use (HTTP/1.1 keep-alive, built once per
 * container): only adapters import `@aws-sdk/*`.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type Compatibility,
  CreateSchemaCommand,
  GetSchemaVersionCommand,
  type GetSchemaVersionResponse,
  GlueClient,
  RegisterSchemaVersionCommand,
} from '@aws-sdk/client-glue';
import { S3TablesClient } from '@aws-sdk/client-s3tables';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { ErrorKind, FloeError } from '../../errors.ts';
import type { SchemaDataFormat, SchemaRegistry, SchemaVersion } from '../../ports/schema-registry.ts';
import { isRetryable, messageOf, nameOf } from './sdk-errors.ts';

export interface GlueSchemaRegistryOptions {
  readonly glue: GlueClient;
  /** Registry that `register` creates schemas in (lookups by version id need none). */
  readonly registryName?: string;
  /** Compatibility mode of schemas `register` creates. Default `BACKWARD` (the serde library's). */
  readonly compatibility?: Compatibility;
  /** `GetSchemaVersion` polls while a new version is PENDING. Default 20. */
  readonly maxPolls?: number;
  /** Pause between polls. Default 250 ms. */
  readonly pollIntervalMs?: number;
  /** Injectable so tests run instantly. */
  readonly sleep?: (ms: number) => Promise<void>;
}

const DATA_FORMATS: ReadonlySet<string> = new Set(['AVRO', 'JSON', 'PROTOBUF']);
/** `arn:<partition>:glue:<region>:<account>:schema/<registry>/<schema>`. */
const SCHEMA_ARN = /^arn:aws[a-z-]*:glue:[a-z0-9-]*:\d*:schema\/([^/]+)\/([^/]+)$/;

export class GlueSchemaRegistry implements SchemaRegistry {
  private readonly glue: GlueClient;
  private readonly registryName: string | undefined;
  private readonly compatibility: Compatibility;
  private readonly maxPolls: number;
  private readonly pollIntervalMs: number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(options: GlueSchemaRegistryOptions) {
    this.glue = options.glue;
    this.registryName = options.registryName;
    this.compatibility = options.compatibility ?? 'BACKWARD';
    this.maxPolls = options.maxPolls ?? 20;
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** Ids are sent lower-cased, as Glue issues them (a GSR frame carries the bytes, not the text). */
  async getSchemaVersion(id: string): Promise<SchemaVersion> {
    const key = id.toLowerCase();
    return versionOf(await this.fetch(key), key);
  }

  async register(
    schemaName: string,
    definition: string,
    dataFormat: SchemaDataFormat = 'AVRO',
  ): Promise<SchemaVersion> {
    const registryName = this.registryName;
    if (registryName === undefined) {
      throw new FloeError(ErrorKind.ConfigInvalid, 'Glue schema registry: register needs a registry name');
    }
    const what = `schema ${registryName}/${schemaName}`;
    let id: string | undefined;
    let status: string | undefined;
    try {
      const res = await this.glue.send(
        new RegisterSchemaVersionCommand({
          SchemaId: { RegistryName: registryName, SchemaName: schemaName },
          SchemaDefinition: definition,
        }),
      );
      id = res.SchemaVersionId;
      status = res.Status;
    } catch (e) {
      if (nameOf(e) !== 'EntityNotFoundException') throw translate(e, 'RegisterSchemaVersion', what);
    }
    if (id === undefined) {
      try {
        const res = await this.glue.send(
          new CreateSchemaCommand({
            RegistryId: { RegistryName: registryName },
            SchemaName: schemaName,
            DataFormat: dataFormat,
            Compatibility: this.compatibility,
            SchemaDefinition: definition,
          }),
        );
        id = res.SchemaVersionId;
        status = res.SchemaVersionStatus;
      } catch (e) {
        if (nameOf(e) !== 'AlreadyExistsException') throw translate(e, 'CreateSchema', what);
        // Created concurrently by someone else: register the definition as a version of it.
        try {
          const res = await this.glue.send(
            new RegisterSchemaVersionCommand({
              SchemaId: { RegistryName: registryName, SchemaName: schemaName },
              SchemaDefinition: definition,
            }),
          );
          id = res.SchemaVersionId;
          status = res.Status;
        } catch (e2) {
          throw translate(e2, 'RegisterSchemaVersion', what);
        }
      }
    }
    if (id === undefined) {
      throw new FloeError(ErrorKind.Unexpected, `Glue returned no schema version id for ${what}`, {
        retryable: true,
        context: { schemaName, registryName },
      });
    }
    // Poll until AVAILABLE (a new version is PENDING while Glue checks compatibility).
    for (let poll = 0; ; poll++) {
      const res = await this.fetch(id);
      status = res.Status ?? status;
      if (status === 'AVAILABLE') return versionOf(res, id);
      if (status === 'FAILURE') {
        throw new FloeError(
          ErrorKind.SchemaIncompatible,
          `${what}: version ${res.VersionNumber ?? '?'} (${id}) FAILED: the definition breaks the schema's compatibility mode`,
          { context: { schemaName, registryName, schemaVersionId: id, status } },
        );
      }
      if (status === 'DELETING') {
        throw new FloeError(ErrorKind.Unexpected, `${what}: version ${id} is being deleted`, {
          context: { schemaName, registryName, schemaVersionId: id, status },
        });
      }
      if (poll + 1 >= this.maxPolls) {
        throw new FloeError(
          ErrorKind.Unexpected,
          `${what}: version ${id} is still ${status ?? 'without status'} after ${this.maxPolls} polls`,
          { retryable: true, context: { schemaName, registryName, schemaVersionId: id, status } },
        );
      }
      await this.sleep(this.pollIntervalMs);
    }
  }

  private async fetch(id: string): Promise<GetSchemaVersionResponse> {
    try {
      return await this.glue.send(new GetSchemaVersionCommand({ SchemaVersionId: id }));
    } catch (e) {
      throw translate(e, 'GetSchemaVersion', `schema version ${id}`, { schemaVersionId: id });
    }
  }
}

function versionOf(res: GetSchemaVersionResponse, asked: string): SchemaVersion {
  const missing = (what: string): never => {
    throw new FloeError(
      ErrorKind.Unexpected,
      `Glue GetSchemaVersion for schema version ${asked} returned ${what}`,
      { retryable: true, context: { schemaVersionId: asked } },
    );
  };
  const id = res.SchemaVersionId ?? missing('no SchemaVersionId');
  const definition = res.SchemaDefinition ?? missing('no SchemaDefinition');
  const format = res.DataFormat ?? missing('no DataFormat');
  if (!DATA_FORMATS.has(format)) missing(`an unknown DataFormat ${JSON.stringify(format)}`);
  const versionNumber = res.VersionNumber ?? missing('no VersionNumber');
  const arn = res.SchemaArn ?? missing('no SchemaArn');
  const m = SCHEMA_ARN.exec(arn) ?? missing(`a SchemaArn that names no schema: ${JSON.stringify(arn)}`);
  return {
    id: id.toLowerCase(),
    schemaName: m[2]!,
    definition,
    dataFormat: format as SchemaDataFormat,
    versionNumber,
  };
}

function translate(e: unknown, op: string, what: string, context: Record<string, unknown> = {}): FloeError {
  if (e instanceof FloeError) return e;
  const name = nameOf(e) || 'Error';
  const ctx = { ...context, operation: op, awsError: name };
  if (name === 'EntityNotFoundException') {
    return new FloeError(ErrorKind.NotFound, `${what} does not exist in the Glue Schema Registry (${op})`, {
      cause: e,
      context: ctx,
    });
  }
  return new FloeError(ErrorKind.Unexpected, `Glue ${op} failed for ${what}: ${name}: ${messageOf(e)}`, {
    cause: e,
    context: ctx,
    retryable: isRetryable(e),
  });
}

// ---------------------------------------------------------------------------------------------
// SDK clients for the Lambda handlers (S3's is `createS3Client` in s3-object-store.ts).

export interface AwsClientOptions {
  /** Default: `$AWS_REGION`, then `$AWS_DEFAULT_REGION`, then `us-east-1`. */
  readonly region?: string;
  /** For emulators, e.g. dynalite. */
  readonly endpoint?: string;
  /** Default: the SDK's credential chain (the Lambda role). */
  readonly credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** SDK attempts per request, retries included (SDK default 3). */
  readonly maxAttempts?: number;
  /** How long a request may wait for its answer (default 30 s). */
  readonly requestTimeoutMs?: number;
}

/** The settings every Floe AWS client shares (region, endpoint, keep-alive sockets, timeouts). */
export function clientConfig(opts: AwsClientOptions) {
  return {
    region: opts.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...(opts.endpoint === undefined ? {} : { endpoint: opts.endpoint }),
    ...(opts.credentials === undefined ? {} : { credentials: opts.credentials }),
    ...(opts.maxAttempts === undefined ? {} : { maxAttempts: opts.maxAttempts }),
    // HTTP/1.1 with keep-alive: a warm Lambda reuses its TLS connections across invocations.
    requestHandler: new NodeHttpHandler({
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 50 }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 50 }),
      connectionTimeout: 5_000,
      // A request whose answer never comes (lost on the way, or a service that hangs) fails and
      // is retried instead of holding its run until the Lambda times out: these clients' requests
      // are small, so the whole request is bounded (the SDK only warns unless told to throw), and
      // so is an idle socket.
      requestTimeout: opts.requestTimeoutMs ?? 30_000,
      throwOnRequestTimeout: true,
      socketTimeout: opts.requestTimeoutMs ?? 30_000,
    }),
  };
}

/**
 * Glue and S3 Tables throttle per account and Region at rates AWS does not publish: their clients
 * use the SDK's adaptive retry mode, which, once throttled, also spaces the client's own requests
 * (a token bucket), so many commits at once back off together instead of retrying into the limit.
 */
const CATALOG_RETRY = { retryMode: 'adaptive' } as const;

export function createGlueClient(opts: AwsClientOptions = {}): GlueClient {
  return new GlueClient({ ...clientConfig(opts), ...CATALOG_RETRY });
}

export function createDynamoClient(opts: AwsClientOptions = {}): DynamoDBClient {
  return new DynamoDBClient(clientConfig(opts));
}

export function createS3TablesClient(opts: AwsClientOptions = {}): S3TablesClient {
  return new S3TablesClient({ ...clientConfig(opts), ...CATALOG_RETRY });
}
