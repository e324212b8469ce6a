/**
 * The whole Floe pipeline in one stack (issue #4): `appType` (JSON or GSR Avro) ×
 * `catalogType` (Glue Data Catalog or S3 Tables) × `tableFormatVersion` (2 or 3), from validated
 * settings (`lib/config.ts`).
 *
 *   Kinesis (KMS) ─► ingest Lambda (ESM: PF 1, item failures, bisect, bounded retries, SQS on failure)
 *        ─► staged Parquet in the warehouse / table bucket, fragments + dead letters in staging,
 *           ledger entries in DynamoDB
 *   EventBridge rate(N min) ─► committer Lambda (one at a time) ─► Glue / S3 Tables commits
 *   EventBridge schedule ─► maintenance Lambda (`-c maintenance`, lib/maintenance.ts)
 *   Athena workgroup + analyst policy + saved queries (+ S3 Tables' s3tablescatalog, lib/athena.ts)
 *
 * The outputs name everything the `floe` CLI and Athena need (stream, store URIs, database or
 * namespace, registry) and print ready-to-run commands.
 */
import { Annotations, CfnOutput, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { FloeAthena } from './athena.ts';
import { FloeCommitter } from './committer.ts';
import { type FloeSettings, perTableMetricsEnv } from './config.ts';
import { FloeIngest } from './ingest.ts';
import { LAMBDA_RUNTIME } from './lambda.ts';
import { FloeMaintenance, GlueOptimizerRole } from './maintenance.ts';
import { maintenanceEnvironment } from './maintenance-env.ts';
import { FloeMonitoring } from './monitoring.ts';
import { acknowledge } from './nag.ts';
import { namespacePatterns } from './namespaces.ts';
import { FloeNetwork } from './network.ts';
import { grantInvoke, grantManagedSetUp } from './permissions.ts';
import { FloeStorage } from './storage.ts';

export interface FloeStackProps extends StackProps {
  readonly settings: FloeSettings;
}

export class FloeStack extends Stack {
  readonly settings: FloeSettings;
  readonly storage: FloeStorage;
  readonly ingest: FloeIngest;
  readonly committer: FloeCommitter;
  /** Unless `maintenance=off`. */
  readonly maintenance?: FloeMaintenance;
  /** `maintenance=glue` only. */
  readonly optimizerRole?: GlueOptimizerRole;
  readonly monitoring: FloeMonitoring;
  readonly athena: FloeAthena;
  /** `-c vpcSubnets` only. */
  readonly network?: FloeNetwork;

  constructor(scope: Construct, id: string, props: FloeStackProps) {
    super(scope, id, { description: describe(props.settings), ...props });
    // Server access logs are delivered through a bucket policy (ACLs stay disabled), whatever
    // feature flags the enclosing app sets.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);
    const settings = props.settings;
    this.settings = settings;
    for (const w of settings.warnings) Annotations.of(this).addWarningV2('floe:settings', w);

    this.storage = new FloeStorage(this, 'Storage', settings);
    const s = this.storage;
    const environment: Record<string, string> = {
      FLOE_CONFIG: settings.floeConfigJson,
      CATALOG_TYPE: settings.catalogType,
      ...(settings.catalogType === 'glue'
        ? { WAREHOUSE_URI: s.warehouseUri! }
        : { TABLE_BUCKET_ARN: s.tableBucket!.attrTableBucketArn }),
      STAGING_URI: s.stagingUri,
      DEAD_LETTER_URI: s.deadLetterUri,
      LEDGER_TABLE: s.ledger.tableName,
      ...(settings.registryName === undefined ? {} : { SCHEMA_REGISTRY_NAME: settings.registryName }),
      ...perTableMetricsEnv(settings),
    };
    this.ingest = new FloeIngest(this, 'Ingest', { settings, storage: s, environment });
    const m = settings.maintenance;
    if (settings.catalogType === 'glue' && m.mode === 'glue') {
      this.optimizerRole = new GlueOptimizerRole(this, 'GlueOptimizer', { settings, storage: s });
    }
    const optimizerRole = this.optimizerRole?.role;
    // The committer sets up each new table's managed maintenance (Glue optimizers, S3 Tables).
    this.committer = new FloeCommitter(this, 'Committer', {
      settings,
      storage: s,
      environment: {
        ...environment,
        ...maintenanceEnvironment(m, settings.catalogType, 'committer', {
          ...(optimizerRole === undefined ? {} : { optimizerRoleArn: optimizerRole.roleArn }),
          account: this.account,
        }),
      },
    });
    grantManagedSetUp(this.committer.handler, s, settings, optimizerRole);
    if (m.deployFunction) {
      this.maintenance = new FloeMaintenance(this, 'Maintenance', {
        settings,
        storage: s,
        environment,
        ...(optimizerRole === undefined ? {} : { optimizerRole }),
      });
      if (settings.catalogType === 'glue' && m.mode === 'floe') {
        // Floe compacts the tables itself: the committer asks for a table's maintenance once its
        // files pile up (a seconds-fresh table gains one per ingest batch), not only hourly.
        const target = this.maintenance.handler.function;
        this.committer.handler.function.addEnvironment('MAINTENANCE_FUNCTION', target.functionName);
        grantInvoke(this, 'CommitterAsksForMaintenance', 'AskForMaintenance', this.committer.handler, target);
      }
    }
    const handlers = [this.ingest, this.committer, ...(this.maintenance ? [this.maintenance] : [])].map(
      (f) => f.handler,
    );
    if (settings.vpc !== undefined) {
      this.network = new FloeNetwork(this, 'Network', settings.vpc);
      for (const h of handlers) this.network.place(h);
    }
    const functions = handlers.map((h) => h.function);
    // The committer creates tables and the ingest writes into them: both need the catalog first.
    for (const fn of functions) {
      if (s.database) fn.node.addDependency(s.database);
      if (s.tableNamespace) fn.node.addDependency(s.tableNamespace);
    }
    this.monitoring = new FloeMonitoring(this, 'Monitoring', {
      settings,
      storage: s,
      ingest: this.ingest.handler,
      committer: this.committer.handler,
      ...(this.maintenance ? { maintenance: this.maintenance.handler } : {}),
    });

    this.athena = new FloeAthena(this, 'Athena', { settings, storage: s });
    // Saved queries name the stack's namespace: the catalog first (queries do not need it to run).
    if (s.database) this.athena.workGroup.node.addDependency(s.database);
    if (s.tableNamespace) this.athena.workGroup.node.addDependency(s.tableNamespace);
    const catalogResource = this.athena.s3TablesCatalog;
    if (catalogResource) {
      // The federated catalog sees the table bucket once both exist.
      catalogResource.node.addDependency(s.tableBucket!);
    }

    for (const fn of functions) {
      acknowledge(
        fn,
        'AwsSolutions-L1',
        `Pinned to ${LAMBDA_RUNTIME.name}: the esbuild target the bundle is built for and the Node.js version Floe is tested on (Node 20 and 22); moving to a newer runtime is a deliberate, tested change, not an automatic one.`,
      );
    }

    // ---- outputs
    const out = (id: string, value: string, description: string) =>
      new CfnOutput(this, id, { value, description });
    out('Region', this.region, 'AWS region of the pipeline (export AWS_REGION=… for the floe CLI)');
    out('StreamName', s.stream.streamName, 'Kinesis stream: floe generate --stream <this>');
    out('StreamArn', s.stream.streamArn, 'Kinesis stream ARN');
    out(
      settings.catalogType === 'glue' ? 'DatabaseName' : 'NamespaceName',
      settings.namespace,
      settings.catalogType === 'glue'
        ? 'Glue database holding the tables (Athena: "<this>"."<table>")'
        : 'S3 Tables namespace holding the tables',
    );
    if (settings.catalogType === 'glue') {
      out('WarehouseBucketName', s.warehouse!.bucketName, 'Bucket of the Iceberg tables');
      out('WarehouseUri', s.warehouseUri!, 'WAREHOUSE_URI: tables live at <this>/<namespace>/<table>');
    } else {
      out('TableBucketName', settings.storage.tableBucketName!, 'S3 table bucket holding the tables');
      out('TableBucketArn', s.tableBucket!.attrTableBucketArn, 'TABLE_BUCKET_ARN');
    }
    out('StagingBucketName', s.staging.bucketName, 'Bucket of pending fragments and dead letters');
    out('StagingUri', s.stagingUri, 'STAGING_URI: pending fragments');
    out('DeadLetterUri', s.deadLetterUri, 'Dead-letter store: floe dead-letters list --store <this>');
    out(
      'Namespaces',
      namespacePatterns(settings.namespaces).join(','),
      'Namespaces the configuration routes to, granted by IAM (prefix* = every namespace starting so)',
    );
    const a = this.athena;
    out(
      'AthenaWorkGroup',
      a.workGroup.ref,
      'Athena workgroup (engine v3, results encrypted in its own bucket)',
    );
    out('AthenaCatalog', a.catalogName, 'Athena data catalog of the tables');
    out('AthenaResultsBucketName', a.results.bucketName, 'Query results of the workgroup (they expire)');
    out(
      'AnalystPolicyArn',
      a.analystPolicy.managedPolicyArn,
      'Attach to analysts: query in the workgroup, read the tables',
    );
    out(
      'AthenaNamedQueryIds',
      Fn.join(
        ',',
        a.namedQueries.map((q) => q.attrNamedQueryId),
      ),
      'Saved queries of the workgroup (Athena console → Saved queries)',
    );
    out('LedgerTableName', s.ledger.tableName, 'DynamoDB ledger + lock table');
    out('AccessLogsBucketName', s.accessLogs.bucketName, 'Server access logs of the other buckets');
    if (settings.registryName !== undefined)
      out(
        'RegistryName',
        settings.registryName,
        'Glue Schema Registry: floe generate --format avro --registry-name <this>',
      );
    out('IngestFunctionName', this.ingest.handler.function.functionName, 'Ingest Lambda');
    out('CommitterFunctionName', this.committer.handler.function.functionName, 'Committer Lambda');
    if (this.maintenance)
      out(
        'MaintenanceFunctionName',
        this.maintenance.handler.function.functionName,
        `Maintenance Lambda (${m.mode}, ${m.schedule})`,
      );
    if (optimizerRole)
      out('GlueOptimizerRoleArn', optimizerRole.roleArn, 'Role of the Glue table optimizers');
    out('FailedBatchesQueueUrl', s.failedBatches.queueUrl, 'Batches the event source mapping gave up on');
    out('DashboardName', this.monitoring.dashboard.dashboardName, 'CloudWatch dashboard');
    out(
      'AlarmTopicArn',
      this.monitoring.alarmTopic.topicArn,
      'SNS topic every alarm notifies (subscribe to it; -c alarmTopicArn=… to use your own)',
    );
    out(
      'GenerateCommand',
      `npx floe generate --region ${this.region} --stream ${s.stream.streamName} -n 10000${
        settings.registryName === undefined ? '' : ` --format avro --registry-name ${settings.registryName}`
      }`,
      'Sends the sample events to this pipeline',
    );
    out(
      'DeadLettersCommand',
      `AWS_REGION=${this.region} npx floe dead-letters list --store ${s.deadLetterUri}`,
      'Lists the dead letters of this pipeline',
    );
  }
}

function describe(s: FloeSettings): string {
  const format = s.appType === 'dynamic-avro' ? 'GSR Avro (+JSON)' : 'JSON';
  const catalog = s.catalogType === 'glue' ? 'Glue Data Catalog' : 'S3 Tables';
  return `Floe streaming data lake: ${format} events -> Iceberg v${s.tableFormatVersion} tables in ${catalog} (namespace ${s.namespace})`;
}
