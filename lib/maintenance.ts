/**
 * Table maintenance on AWS (`-c maintenance=floe|glue|off`, lib/config.ts):
 *
 * - `FloeMaintenance`: the maintenance Lambda on an EventBridge schedule (`maintenanceSchedule`,
 *   default hourly), one run at a time like the committer (a run lease; reserved concurrency only
 *   with `committerReservedConcurrency=1`). On Glue with `floe` it maintains the
 *   tables itself under the committer's leases; with `glue`, and on S3 Tables, it keeps the
 *   service's maintenance configured and publishes the tables' metrics. It visits every namespace
 *   the configuration routes to (`MAINTENANCE_NAMESPACES`, the committer's IAM scope).
 * - `GlueOptimizerRole` (`glue` only): the role Glue's table optimizers run as, as AWS documents
 *   for them: trusts glue.amazonaws.com; reads, writes and deletes the warehouse's table files;
 *   GetTable / UpdateTable on the stack's tables; writes the optimizers' CloudWatch log groups.
 *   The committer (at table creation) and the maintenance sweep create the optimizers with it.
 */
import { ArnFormat, type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { FloeSettings } from './config.ts';
import { FloeFunction } from './lambda.ts';
import { maintenanceEnvironment } from './maintenance-env.ts';
import { acknowledge } from './nag.ts';
import { namespacePatterns } from './namespaces.ts';
import { acknowledgeGlueWildcards, glueArns, grantMaintenanceAccess } from './permissions.ts';
import { type FloeStorage, grantDataKey, WAREHOUSE_PREFIX } from './storage.ts';

/** The log groups Glue's table optimizers write (one per optimizer type). */
export const OPTIMIZER_LOG_GROUPS = [
  '/aws-glue/iceberg-compaction/logs',
  '/aws-glue/iceberg-retention/logs',
  '/aws-glue/iceberg-orphan-file-deletion/logs',
] as const;

export class GlueOptimizerRole extends Construct {
  readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: { settings: FloeSettings; storage: FloeStorage }) {
    super(scope, id);
    const { settings, storage } = props;
    const warehouse = storage.warehouse!;
    const stack = Stack.of(this);
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('glue.amazonaws.com'),
      description:
        `Glue table optimizers (compaction, snapshot retention, orphan file deletion) of the Floe tables in ${namespacePatterns(settings.namespaces).join(', ')}`.slice(
          0,
          1000,
        ),
    });
    const add = (s: iam.PolicyStatement) => this.role.addToPrincipalPolicy(s);
    // compliance=strict: the table files are encrypted with the stack's key.
    if (storage.dataKey !== undefined) grantDataKey(storage.dataKey, this.role);
    add(
      new iam.PolicyStatement({
        sid: 'TableFiles',
        actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
        resources: [warehouse.arnForObjects(`${WAREHOUSE_PREFIX}/*`)],
      }),
    );
    add(
      new iam.PolicyStatement({
        sid: 'ListTableFiles',
        actions: ['s3:ListBucket'],
        resources: [warehouse.bucketArn],
      }),
    );
    // The committer sets optimizers up on every table it creates, in any namespace it routes to.
    const { catalogArn, databaseArns, tablesArns } = glueArns(this, settings.namespaces);
    add(
      new iam.PolicyStatement({
        sid: 'Tables',
        actions: ['glue:GetTable', 'glue:UpdateTable'],
        resources: [catalogArn, ...databaseArns, ...tablesArns],
      }),
    );
    add(
      new iam.PolicyStatement({
        sid: 'OptimizerLogs',
        actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: OPTIMIZER_LOG_GROUPS.map((g) =>
          stack.formatArn({
            service: 'logs',
            resource: 'log-group',
            resourceName: `${g}:*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ),
      }),
    );
    const policy = this.role.node.findChild('DefaultPolicy');
    const ack = (resource: string, reason: string) =>
      acknowledge(policy, `AwsSolutions-IAM5[Resource::${resource}]`, reason);
    ack(
      `<${logicalId(warehouse)}.Arn>/${WAREHOUSE_PREFIX}/*`,
      'Glue compacts, expires and deletes the files of tables Floe creates at run time (one folder per table, file names with uuids); access is limited to the warehouse/ prefix of this stack’s warehouse bucket.',
    );
    acknowledgeGlueWildcards(
      policy,
      settings.namespaces,
      (db) =>
        `Tables are created at run time, one per event type; Glue's optimizers update only the tables of the database ${db}, a namespace this stack's configuration routes to.`,
      (prefix) =>
        `-c allowedNamespaces grants the namespaces starting with ${prefix}; Glue's optimizers update only the tables Floe creates there.`,
    );
    for (const g of OPTIMIZER_LOG_GROUPS) {
      ack(
        `arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:${g}:*`,
        'The log streams of the log group AWS Glue’s table optimizers write to (named by Glue per run); as AWS documents for the optimizer role.',
      );
    }
  }
}

export class FloeMaintenance extends Construct {
  readonly handler: FloeFunction;
  readonly schedule: events.Rule;

  constructor(
    scope: Construct,
    id: string,
    props: {
      settings: FloeSettings;
      storage: FloeStorage;
      environment: Record<string, string>;
      optimizerRole?: iam.IRole;
    },
  ) {
    super(scope, id);
    const { settings, storage } = props;
    const m = settings.maintenance;
    const what =
      settings.catalogType === 'glue' && m.mode === 'floe'
        ? 'compaction, manifest rewrite, snapshot expiry and orphan cleanup of every table'
        : `the tables' metrics; keeps ${settings.catalogType === 'glue' ? "Glue's table optimizers" : "S3 Tables' maintenance"} configured`;
    this.handler = new FloeFunction(this, 'Handler', {
      handler: 'maintenance',
      description: `Floe maintenance (${settings.stackName}): ${what}, ${m.schedule}`,
      memoryMb: m.memoryMb,
      timeoutSeconds: m.timeoutSeconds,
      logRetentionDays: settings.storage.logRetentionDays,
      ...(storage.dataKey === undefined ? {} : { key: storage.dataKey }),
      // One run at a time by a run lease (runs would only skip each other's tables); a reservation
      // only when the committer gets one (committerReservedConcurrency=1).
      ...(settings.committer.reservedConcurrency === 0 ? {} : { reservedConcurrency: 1 }),
      environment: {
        ...props.environment,
        ...maintenanceEnvironment(m, settings.catalogType, 'maintenance', {
          ...(props.optimizerRole === undefined ? {} : { optimizerRoleArn: props.optimizerRole.roleArn }),
          account: Stack.of(this).account,
          // Every namespace the configuration routes to: what its role is granted.
          namespaces: namespacePatterns(settings.namespaces),
        }),
        ...(settings.committer.leaseSeconds === undefined
          ? {}
          : { LEASE_MS: String(settings.committer.leaseSeconds * 1000) }),
      },
    });
    grantMaintenanceAccess(this.handler, storage, settings, props.optimizerRole);

    // A run that fails is retried by the next tick; a throttled one is dropped, not queued.
    this.handler.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    this.schedule = new events.Rule(this, 'Schedule', {
      description: `Runs the Floe maintenance of ${settings.stackName}`,
      schedule: events.Schedule.expression(m.schedule),
      targets: [
        new targets.LambdaFunction(this.handler.function, {
          retryAttempts: 2,
          maxEventAge: Duration.minutes(1),
        }),
      ],
    });
  }
}

function logicalId(c: Construct): string {
  const cfn = (c.node.defaultChild ?? c) as CfnElement;
  return Stack.of(cfn).getLogicalId(cfn);
}
