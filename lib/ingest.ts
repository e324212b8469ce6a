/**
 * The ingest Lambda and its Kinesis event source mapping (DESIGN §1, §4): one invocation per
 * shard batch, `ParallelizationFactor` 1 (the ledger's exactly-once protocol relies on a shard's
 * batches arriving in order), `ReportBatchItemFailures` (the handler answers with the lowest
 * sequence number not staged), bisect on error, bounded retries and record age, and an SQS
 * on-failure destination for what Lambda finally gives up on.
 */
import { Duration } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { KinesisEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import type { FloeSettings } from './config.ts';
import { FloeFunction } from './lambda.ts';
import { acknowledge } from './nag.ts';
import { grantFloeAccess } from './permissions.ts';
import type { FloeStorage } from './storage.ts';

export class FloeIngest extends Construct {
  readonly handler: FloeFunction;
  readonly eventSource: KinesisEventSource;

  constructor(
    scope: Construct,
    id: string,
    props: { settings: FloeSettings; storage: FloeStorage; environment: Record<string, string> },
  ) {
    super(scope, id);
    const { settings, storage } = props;
    const ingest = settings.ingest;
    this.handler = new FloeFunction(this, 'Handler', {
      handler: 'ingest',
      description: `Floe ingest (${settings.stackName}): Kinesis batch -> staged Parquet files, pending fragments, dead letters, ledger entries`,
      memoryMb: ingest.memoryMb,
      timeoutSeconds: ingest.timeoutSeconds,
      logRetentionDays: settings.storage.logRetentionDays,
      ...(storage.dataKey === undefined ? {} : { key: storage.dataKey }),
      environment: {
        ...props.environment,
        ...(ingest.tableCacheRefreshSeconds === undefined
          ? {}
          : { TABLE_CACHE_REFRESH_MS: String(ingest.tableCacheRefreshSeconds * 1000) }),
      },
    });
    grantFloeAccess(this.handler, storage, settings, 'ingest');

    this.eventSource = new KinesisEventSource(storage.stream, {
      // From the oldest retained record: nothing put before the mapping existed is skipped.
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: ingest.batchSize,
      maxBatchingWindow: Duration.seconds(ingest.batchingWindowSeconds),
      parallelizationFactor: 1,
      reportBatchItemFailures: true,
      bisectBatchOnError: true,
      retryAttempts: ingest.retryAttempts,
      ...(ingest.maxRecordAgeSeconds === -1
        ? {}
        : { maxRecordAge: Duration.seconds(ingest.maxRecordAgeSeconds) }),
      onFailure: new SqsDlq(storage.failedBatches),
    });
    this.handler.function.addEventSource(this.eventSource);
    if (storage.dataKey !== undefined) {
      // The on-failure destination's grant (CDK's SqsDlq) names the KMS actions SQS needs with
      // wildcards; they apply to the stack's own key alone.
      const policy = this.handler.role.node.findChild('DefaultPolicy');
      for (const action of ['kms:GenerateDataKey*', 'kms:ReEncrypt*'])
        acknowledge(
          policy,
          `AwsSolutions-IAM5[Action::${action}]`,
          'Granted by the Kinesis event source mapping’s on-failure destination (an SQS queue encrypted with the stack’s key, compliance=strict), on that key only.',
        );
    }
  }
}
