/**
 * Everything the pipeline keeps its data in (DESIGN §1, §4, §5):
 *
 * - the Kinesis stream (on-demand or provisioned), encrypted with a customer managed KMS key;
 * - the catalog: a warehouse bucket + Glue database (`glue`), or an S3 Tables table bucket +
 *   namespace (`s3tables`);
 * - the staging bucket: pending fragments under `staging/`, the dead-letter store under
 *   `dead-letters/`, each with its lifecycle rule;
 * - the DynamoDB ledger + lock table, exactly the key schema `createLedgerTable` creates;
 * - the Glue Schema Registry (Avro only);
 * - the on-failure destination of the event source mapping (an SQS queue);
 * - an access-log bucket receiving the S3 server access logs of the other buckets.
 *
 * Every bucket blocks public access, rejects non-TLS requests (and TLS below 1.2) and is
 * encrypted (SSE-S3, so Athena users need no KMS grant). With `removalPolicy=retain` (default)
 * every resource holding data outlives `cdk destroy`.
 *
 * `compliance=strict`: one customer-managed key of the stack's own (`dataKey`, rotated yearly)
 * encrypts the stream, the staging, warehouse and Athena results buckets, the S3 Tables table
 * bucket, the ledger table, the failed-batch queue and the log groups; every function, role and
 * the analyst policy that reads or writes them is granted the key. Buckets are versioned, with
 * noncurrent versions expiring after `NONCURRENT_DAYS` (compaction, expiry and orphan removal
 * delete files on purpose). The access-log bucket stays SSE-S3: server access logs are delivered
 * only to SSE-S3 buckets.
 */
import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kinesis from 'aws-cdk-lib/aws-kinesis';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3tables from 'aws-cdk-lib/aws-s3tables';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { STAGED_INDEX, TTL_ATTRIBUTE } from '../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import type { FloeSettings } from './config.ts';
import { acknowledge } from './nag.ts';

/** Key prefixes inside the buckets. */
export const WAREHOUSE_PREFIX = 'warehouse';
export const STAGING_PREFIX = 'staging';
export const DEAD_LETTER_PREFIX = 'dead-letters';

/** `compliance=strict`: days a deleted or overwritten object's version is kept. */
export const NONCURRENT_DAYS = 7;

export class FloeStorage extends Construct {
  /** `streamEncryption=customer-managed` only (with `compliance=strict`: `dataKey`). */
  readonly streamKey?: kms.Key;
  /** `compliance=strict` only: encrypts everything the stack stores. */
  readonly dataKey?: kms.Key;
  readonly stream: kinesis.Stream;
  readonly accessLogs: s3.Bucket;
  readonly staging: s3.Bucket;
  readonly ledger: dynamodb.Table;
  readonly failedBatches: sqs.Queue;
  /** `glue` only. */
  readonly warehouse?: s3.Bucket;
  readonly database?: glue.CfnDatabase;
  /** `s3tables` only. */
  readonly tableBucket?: s3tables.CfnTableBucket;
  readonly tableNamespace?: s3tables.CfnNamespace;
  /** `dynamic-avro` only. */
  readonly registry?: glue.CfnRegistry;

  constructor(scope: Construct, id: string, settings: FloeSettings) {
    super(scope, id);
    const stack = Stack.of(this);
    const retain = settings.storage.removal === 'retain';
    const dataRemoval = retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const strict = settings.storage.compliance === 'strict';
    if (strict) {
      this.dataKey = new kms.Key(this, 'DataKey', {
        description: `${settings.stackName}: encrypts what Floe stores (compliance=strict)`,
        enableKeyRotation: true,
        // Retained data stays readable only while its key exists.
        removalPolicy: dataRemoval,
        pendingWindow: Duration.days(7),
      });
      limitGrantsToAwsServices(this.dataKey);
      // CloudWatch Logs encrypts the stack's log groups with it (the key policy must say so).
      this.dataKey.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'CloudWatchLogs',
          principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
          actions: [
            'kms:Encrypt*',
            'kms:Decrypt*',
            'kms:ReEncrypt*',
            'kms:GenerateDataKey*',
            'kms:Describe*',
          ],
          resources: ['*'],
          conditions: {
            ArnLike: {
              'kms:EncryptionContext:aws:logs:arn': stack.formatArn({
                service: 'logs',
                resource: 'log-group',
                resourceName: '*',
                arnFormat: ArnFormat.COLON_RESOURCE_NAME,
              }),
            },
          },
        }),
      );
    }
    const bucketKey = this.dataKey;

    // ---- stream: KMS server-side encryption, with the AWS managed key `aws/kinesis` by default
    // (no key to pay for, producers and the event source mapping need no key grant), or with a
    // customer managed key of the stack's own (rotated yearly) when compliance asks for one.
    if (this.dataKey !== undefined) this.streamKey = this.dataKey;
    else if (settings.stream.encryption === 'customer-managed') {
      this.streamKey = new kms.Key(this, 'StreamKey', {
        description: `${settings.stackName}: encrypts the Floe Kinesis stream`,
        enableKeyRotation: true,
        removalPolicy: RemovalPolicy.DESTROY,
        pendingWindow: Duration.days(7),
      });
      limitGrantsToAwsServices(this.streamKey);
    }
    this.stream = new kinesis.Stream(this, 'Stream', {
      streamMode:
        settings.stream.mode === 'on-demand' ? kinesis.StreamMode.ON_DEMAND : kinesis.StreamMode.PROVISIONED,
      ...(settings.stream.shardCount === undefined ? {} : { shardCount: settings.stream.shardCount }),
      retentionPeriod: Duration.hours(settings.stream.retentionHours),
      ...(this.streamKey === undefined
        ? { encryption: kinesis.StreamEncryption.MANAGED }
        : { encryption: kinesis.StreamEncryption.KMS, encryptionKey: this.streamKey }),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    if (this.streamKey !== undefined) {
      acknowledge(
        this.stream,
        'AwsSolutions-KDS3',
        'A customer managed key was asked for explicitly (-c streamEncryption=customer-managed), e.g. for a compliance rule; the default is the aws/kinesis key.',
      );
    }

    // ---- buckets
    this.accessLogs = new s3.Bucket(this, 'AccessLogs', {
      // SSE-S3 whatever the compliance setting: server access logs are delivered to no other.
      ...secureBucket(dataRemoval, retain, strict ? { versioned: true } : {}),
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(365) }, ...versionRules(strict)],
    });
    // (cdk-nag's S1 knows a log destination bucket needs no access logs of its own.)
    const logged = (prefix: string): s3.BucketProps => ({
      ...secureBucket(dataRemoval, retain, strict ? { versioned: true, key: bucketKey } : {}),
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: `${prefix}/`,
    });

    const expiry = (id: string, prefix: string, days: number): s3.LifecycleRule[] =>
      days > 0 ? [{ id, prefix: `${prefix}/`, expiration: Duration.days(days) }] : [];
    this.staging = new s3.Bucket(this, 'Staging', {
      ...logged('staging'),
      lifecycleRules: [
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // Pending fragments are deleted by the commit that consumes them; this only sweeps the
        // orphans of attempts that never wrote their ledger entry. It must outlast any committer
        // outage (a fragment named by a staged entry must still exist when the commit runs).
        ...expiry('expire-orphaned-staging', STAGING_PREFIX, settings.storage.stagingExpirationDays),
        ...expiry('expire-dead-letters', DEAD_LETTER_PREFIX, settings.storage.deadLetterExpirationDays),
        ...versionRules(strict),
      ],
    });

    // ---- catalog
    if (settings.catalogType === 'glue') {
      this.warehouse = new s3.Bucket(this, 'Warehouse', {
        ...logged('warehouse'),
        lifecycleRules: [
          { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
          ...versionRules(strict),
        ],
      });
      this.database = new glue.CfnDatabase(this, 'Database', {
        catalogId: stack.account,
        databaseInput: {
          name: settings.namespace,
          description: `Floe tables of stack ${settings.stackName} (Iceberg, created and evolved by the committer)`,
          locationUri: `s3://${this.warehouse.bucketName}/${WAREHOUSE_PREFIX}/${settings.namespace}`,
        },
      });
      this.database.applyRemovalPolicy(dataRemoval);
    } else {
      this.tableBucket = new s3tables.CfnTableBucket(this, 'TableBucket', {
        tableBucketName: settings.storage.tableBucketName!,
        encryptionConfiguration:
          this.dataKey === undefined
            ? { sseAlgorithm: 'AES256' }
            : { sseAlgorithm: 'aws:kms', kmsKeyArn: this.dataKey.keyArn },
        // The ingest writes data files into a table's storage before the committer references
        // them, so "unreferenced" files must survive at least as long as staged work may wait
        // (and at least maintenanceOrphansOlderThan); noncurrent ones are kept S3 Tables' 10 days.
        unreferencedFileRemoval:
          settings.maintenance.unreferencedDays !== undefined
            ? {
                status: 'Enabled',
                unreferencedDays: settings.maintenance.unreferencedDays,
                noncurrentDays: 10,
              }
            : { status: 'Disabled' },
      });
      this.tableBucket.applyRemovalPolicy(dataRemoval);
      if (this.dataKey !== undefined) {
        // S3 Tables' maintenance (compaction, snapshot and unreferenced-file removal) reads and
        // writes the encrypted files. The bucket's ARN is spelled out: referencing the bucket
        // from the key it references would be a cycle.
        const bucketArn = stack.formatArn({
          service: 's3tables',
          resource: 'bucket',
          resourceName: settings.storage.tableBucketName!,
        });
        this.dataKey.addToResourcePolicy(
          new iam.PolicyStatement({
            sid: 'S3TablesMaintenance',
            principals: [new iam.ServicePrincipal('maintenance.s3tables.amazonaws.com')],
            actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
            resources: ['*'],
            conditions: { StringLike: { 'kms:EncryptionContext:aws:s3:arn': `${bucketArn}/*` } },
          }),
        );
      }
      this.tableNamespace = new s3tables.CfnNamespace(this, 'Namespace', {
        namespace: settings.namespace,
        tableBucketArn: this.tableBucket.attrTableBucketArn,
      });
      this.tableNamespace.applyRemovalPolicy(dataRemoval);
    }

    // ---- ledger + lock: exactly what createLedgerTable (dynamodb-ledger.ts) creates
    this.ledger = new dynamodb.Table(this, 'Ledger', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TTL_ATTRIBUTE,
      removalPolicy: dataRemoval,
      ...(this.dataKey === undefined
        ? {}
        : { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: this.dataKey }),
    });
    this.ledger.addGlobalSecondaryIndex({
      indexName: STAGED_INDEX,
      partitionKey: { name: 'stagedTable', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'stagedKey', type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });

    // ---- schema registry
    if (settings.registryName !== undefined) {
      this.registry = new glue.CfnRegistry(this, 'Registry', {
        name: settings.registryName,
        description: `Avro writer schemas of the Floe stream of stack ${settings.stackName}`,
      });
      this.registry.applyRemovalPolicy(dataRemoval);
    }

    // ---- where the event source mapping sends batches it gave up on
    this.failedBatches = new sqs.Queue(this, 'FailedBatches', {
      ...(this.dataKey === undefined
        ? { encryption: sqs.QueueEncryption.SQS_MANAGED }
        : { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: this.dataKey }),
      enforceSSL: true,
      retentionPeriod: Duration.days(settings.storage.failedBatchRetentionDays),
    });
    acknowledge(
      this.failedBatches,
      'AwsSolutions-SQS3',
      'This queue is itself the on-failure destination of the Kinesis event source mapping (it receives the shard and sequence range of batches Lambda gave up on); nothing consumes it, so a dead-letter queue behind it would never receive anything.',
    );
  }

  /** `s3://<warehouse bucket>/warehouse` (glue). */
  get warehouseUri(): string | undefined {
    return this.warehouse === undefined ? undefined : `s3://${this.warehouse.bucketName}/${WAREHOUSE_PREFIX}`;
  }

  get stagingUri(): string {
    return `s3://${this.staging.bucketName}/${STAGING_PREFIX}`;
  }

  get deadLetterUri(): string {
    return `s3://${this.staging.bucketName}/${DEAD_LETTER_PREFIX}`;
  }
}

/**
 * Public access blocked, TLS 1.2+ only, SSE-S3 (or SSE-KMS with `key`, S3 Bucket Keys on), ACLs
 * disabled; `versioned` (compliance=strict) keeps noncurrent versions `NONCURRENT_DAYS`. A caller
 * giving `lifecycleRules` of its own adds the versioned rule itself (`versionRules`).
 */
export function secureBucket(
  removalPolicy: RemovalPolicy,
  retain: boolean,
  opts: { readonly versioned?: boolean; readonly key?: kms.IKey } = {},
): s3.BucketProps {
  return {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    ...(opts.key === undefined
      ? { encryption: s3.BucketEncryption.S3_MANAGED }
      : { encryption: s3.BucketEncryption.KMS, encryptionKey: opts.key, bucketKeyEnabled: true }),
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    versioned: opts.versioned === true,
    removalPolicy,
    // With removalPolicy=destroy a bucket must be emptied before CloudFormation can delete it.
    autoDeleteObjects: !retain,
  };
}

/** The lifecycle rule of a versioned bucket: noncurrent versions and lone delete markers expire. */
export function versionRules(versioned: boolean): s3.LifecycleRule[] {
  return versioned
    ? [
        {
          id: 'expire-noncurrent-versions',
          noncurrentVersionExpiration: Duration.days(NONCURRENT_DAYS),
          expiredObjectDeleteMarker: true,
        },
      ]
    : [];
}

/**
 * compliance=strict: what reading and writing data under the stack's key takes (S3 SSE-KMS,
 * DynamoDB, SQS, Kinesis), named action by action on that key alone.
 */
export function grantDataKey(key: kms.IKey, role: iam.IRole): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'DataKey',
      actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
      resources: [key.keyArn],
    }),
  );
}

/**
 * Only AWS services (DynamoDB, S3, SQS acting for the stack) may create grants on `key`: AWS
 * Control Tower's CT.KMS.PR.3.
 */
function limitGrantsToAwsServices(key: kms.Key): void {
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'GrantsOnlyForAwsServices',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['kms:CreateGrant'],
      resources: ['*'],
      conditions: {
        BoolIfExists: { 'kms:GrantIsForAWSResource': 'false', 'aws:PrincipalIsAWSService': 'false' },
      },
    }),
  );
}
