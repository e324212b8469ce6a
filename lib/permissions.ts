/**
 * Least-privilege IAM for the two handlers: exactly the calls their adapters make
 * (`lambdas/src/adapters/aws/*.ts`), on exactly this stack's resources.
 *
 * | adapter | ingest | committer |
 * |---|---|---|
 * | S3 object store (warehouse `warehouse/`, staging `staging/` + `dead-letters/`) | Get/Put/DeleteObject, ListBucket on the prefixes | same |
 * | DynamoDB ledger + lock (one table) | GetItem, PutItem, UpdateItem, Query | same + Query/Scan on the `staged` index |
 * | Glue catalog | GetTable, GetTables | + CreateTable, UpdateTable, CreateDatabase (AlreadyExists on the stack's database) |
 * | S3 Tables catalog | GetTableMetadataLocation, ListTables, Get/PutTableData | + CreateNamespace, CreateTable (this namespace), UpdateTableMetadataLocation |
 * | Glue Schema Registry (Avro) | GetSchemaVersion | GetSchemaVersion (pending Avro records are re-decoded) |
 *
 * The maintenance function (`grantMaintenanceAccess`) and the committer's setup of managed
 * maintenance (`grantManagedSetUp`) are below, by `maintenance` value.
 *
 * Kinesis read and the stream key's Decrypt come with the event source mapping; SendMessage to
 * the failed-batch queue with its on-failure destination; the log group with the function.
 * No `glue:GetDatabases` / `s3tables:ListNamespaces` (the apps never list namespaces), no
 * `RegisterSchemaVersion` / `CreateSchema` (producers register schemas, the ingest only reads).
 */
import { type CfnElement, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import { STAGED_INDEX } from '../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import type { FloeSettings } from './config.ts';
import type { FloeFunction, HandlerName } from './lambda.ts';
import { acknowledge } from './nag.ts';
import { DEAD_LETTER_PREFIX, type FloeStorage, STAGING_PREFIX, WAREHOUSE_PREFIX } from './storage.ts';

export function grantFloeAccess(
  fn: FloeFunction,
  storage: FloeStorage,
  settings: FloeSettings,
  handler: Exclude<HandlerName, 'maintenance'>,
): void {
  const stack = Stack.of(fn);
  const committer = handler === 'committer';
  const add = (statement: iam.PolicyStatement) => fn.role.addToPrincipalPolicy(statement);
  const policy = fn.role.node.findChild('DefaultPolicy');
  const wildcard = (resource: string, reason: string) =>
    acknowledge(policy, `AwsSolutions-IAM5[Resource::${resource}]`, reason);

  // ---- S3: objects under the stack's prefixes only
  const objectActions = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'];
  add(
    new iam.PolicyStatement({
      sid: 'StagingObjects',
      actions: objectActions,
      resources: [
        storage.staging.arnForObjects(`${STAGING_PREFIX}/*`),
        storage.staging.arnForObjects(`${DEAD_LETTER_PREFIX}/*`),
      ],
    }),
  );
  add(
    new iam.PolicyStatement({
      sid: 'StagingList',
      actions: ['s3:ListBucket'],
      resources: [storage.staging.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${STAGING_PREFIX}/*`, `${DEAD_LETTER_PREFIX}/*`] } },
    }),
  );
  wildcard(
    `<${logicalIdOf(storage.staging)}.Arn>/${STAGING_PREFIX}/*`,
    'Pending fragments get unique names at run time (uuid per file); access is limited to the staging/ prefix of this stack’s staging bucket.',
  );
  wildcard(
    `<${logicalIdOf(storage.staging)}.Arn>/${DEAD_LETTER_PREFIX}/*`,
    'Dead letters are keyed at run time by reason, shard and sequence number; access is limited to the dead-letters/ prefix of this stack’s staging bucket.',
  );

  if (storage.warehouse !== undefined) {
    add(
      new iam.PolicyStatement({
        sid: 'WarehouseObjects',
        actions: objectActions,
        resources: [storage.warehouse.arnForObjects(`${WAREHOUSE_PREFIX}/*`)],
      }),
    );
    add(
      new iam.PolicyStatement({
        sid: 'WarehouseList',
        actions: ['s3:ListBucket'],
        resources: [storage.warehouse.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${WAREHOUSE_PREFIX}/*`] } },
      }),
    );
    wildcard(
      `<${logicalIdOf(storage.warehouse)}.Arn>/${WAREHOUSE_PREFIX}/*`,
      'Iceberg data, manifest and metadata files of tables created at run time (one folder per table, file names with uuids); access is limited to the warehouse/ prefix of this stack’s warehouse bucket.',
    );
  }

  // ---- DynamoDB: the ledger + lock table (and its sparse index for the committer)
  add(
    new iam.PolicyStatement({
      sid: 'Ledger',
      actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query'],
      resources: [storage.ledger.tableArn],
    }),
  );
  if (committer) {
    add(
      new iam.PolicyStatement({
        sid: 'LedgerStagedIndex',
        actions: ['dynamodb:Query', 'dynamodb:Scan'],
        resources: [`${storage.ledger.tableArn}/index/${STAGED_INDEX}`],
      }),
    );
  }

  // ---- the catalog
  if (storage.database !== undefined) {
    const ns = settings.namespace;
    const catalogArn = stack.formatArn({ service: 'glue', resource: 'catalog' });
    const databaseArn = stack.formatArn({ service: 'glue', resource: 'database', resourceName: ns });
    const tablesArn = stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${ns}/*` });
    add(
      new iam.PolicyStatement({
        sid: 'GlueTables',
        actions: committer
          ? ['glue:GetTable', 'glue:GetTables', 'glue:CreateTable', 'glue:UpdateTable']
          : ['glue:GetTable', 'glue:GetTables'],
        resources: [catalogArn, databaseArn, tablesArn],
      }),
    );
    if (committer) {
      // The committer calls CreateDatabase before it creates a table; the stack created the
      // database already, so Glue answers AlreadyExists (which needs the permission to be asked).
      add(
        new iam.PolicyStatement({
          sid: 'GlueDatabase',
          actions: ['glue:CreateDatabase'],
          resources: [catalogArn, databaseArn],
        }),
      );
    }
    wildcard(
      `arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:table/${ns}/*`,
      `Tables are created at run time, one per event type (named from the data); access is limited to the tables of this stack’s Glue database ${ns}.`,
    );
  }
  if (storage.tableBucket !== undefined) {
    const bucketArn = storage.tableBucket.attrTableBucketArn;
    const tablesArn = `${bucketArn}/table/*`;
    add(
      new iam.PolicyStatement({
        sid: 'TableBucket',
        actions: committer ? ['s3tables:ListTables', 's3tables:CreateNamespace'] : ['s3tables:ListTables'],
        resources: [bucketArn],
      }),
    );
    if (committer) {
      add(
        new iam.PolicyStatement({
          sid: 'CreateTablesInNamespace',
          actions: ['s3tables:CreateTable'],
          resources: [bucketArn],
          conditions: { StringEquals: { 's3tables:namespace': settings.namespace } },
        }),
      );
    }
    add(
      new iam.PolicyStatement({
        sid: 'Tables',
        actions: committer
          ? [
              's3tables:GetTableMetadataLocation',
              's3tables:UpdateTableMetadataLocation',
              's3tables:GetTableData',
              's3tables:PutTableData',
            ]
          : ['s3tables:GetTableMetadataLocation', 's3tables:GetTableData', 's3tables:PutTableData'],
        resources: [tablesArn],
      }),
    );
    wildcard(
      `<${logicalIdOf(storage.tableBucket)}.TableBucketARN>/table/*`,
      'Tables are created at run time (one per event type) and S3 Tables names table ARNs by a generated id, so they cannot be listed in advance; access is limited to this stack’s own table bucket.',
    );
  }

  // ---- the schema registry (Avro)
  if (storage.registry !== undefined) {
    add(
      new iam.PolicyStatement({
        sid: 'SchemaVersions',
        actions: ['glue:GetSchemaVersion'],
        resources: ['*'],
      }),
    );
    wildcard(
      '*',
      'glue:GetSchemaVersion by SchemaVersionId (how GSR-framed records name their schema) cannot be scoped to a registry or schema ARN: IAM evaluates it against "*" (awslabs/aws-glue-schema-registry#68, as in AWS’s deserializer policy example). Read-only, one action.',
    );
  }
}

/** The logical id cdk-nag shows for a reference to `resource` (`<LogicalId.Arn>`). */
function logicalIdOf(resource: IConstruct): string {
  const cfn = (resource.node.defaultChild ?? resource) as CfnElement;
  return Stack.of(cfn).getLogicalId(cfn);
}

/**
 * The maintenance function, by what it does:
 *
 * | maintenance | S3 | DynamoDB | catalog |
 * |---|---|---|---|
 * | floe (Glue) | Get/Put/DeleteObject + ListBucket under `warehouse/` (compaction, expiry, orphans) | lock (Get/Update), ledger + staged index (Query), log (Put) | GetTable(s), UpdateTable |
 * | glue (Glue) | GetObject under `warehouse/` (metrics) | log (Query, Put) | GetTable(s); Create/Update/BatchGet table optimizers, PassRole of the optimizer role to Glue |
 * | floe (S3 Tables) | through S3 Tables: GetTableData (metrics) | log (Query, Put) | ListTables, GetTableMetadataLocation, Get/PutTableMaintenanceConfiguration |
 *
 * No staging bucket, no CreateTable, no Scan: it never reads fragments or creates tables.
 */
export function grantMaintenanceAccess(
  fn: FloeFunction,
  storage: FloeStorage,
  settings: FloeSettings,
  optimizerRole?: iam.IRole,
): void {
  const floe = settings.maintenance.mode === 'floe' && storage.warehouse !== undefined;
  const add = (statement: iam.PolicyStatement) => fn.role.addToPrincipalPolicy(statement);
  const policy = fn.role.node.findChild('DefaultPolicy');
  const wildcard = (resource: string, reason: string) =>
    acknowledge(policy, `AwsSolutions-IAM5[Resource::${resource}]`, reason);

  if (storage.warehouse !== undefined) {
    add(
      new iam.PolicyStatement({
        sid: 'WarehouseObjects',
        actions: floe ? ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'] : ['s3:GetObject'],
        resources: [storage.warehouse.arnForObjects(`${WAREHOUSE_PREFIX}/*`)],
      }),
    );
    if (floe) {
      add(
        new iam.PolicyStatement({
          sid: 'WarehouseList',
          actions: ['s3:ListBucket'],
          resources: [storage.warehouse.bucketArn],
          conditions: { StringLike: { 's3:prefix': [`${WAREHOUSE_PREFIX}/*`] } },
        }),
      );
    }
    wildcard(
      `<${logicalIdOf(storage.warehouse)}.Arn>/${WAREHOUSE_PREFIX}/*`,
      floe
        ? 'Maintenance rewrites, expires and cleans the files of tables created at run time (one folder per table, file names with uuids); access is limited to the warehouse/ prefix of this stack’s warehouse bucket.'
        : 'Metrics read the manifests of tables created at run time (one folder per table, file names with uuids); read-only, limited to the warehouse/ prefix of this stack’s warehouse bucket.',
    );
  }

  add(
    new iam.PolicyStatement({
      sid: 'Ledger',
      // Lock: GetItem/UpdateItem; ledger chains: Query; maintenance log: Query/PutItem.
      actions: floe
        ? ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query']
        : ['dynamodb:PutItem', 'dynamodb:Query'],
      resources: [storage.ledger.tableArn],
    }),
  );
  if (floe) {
    add(
      new iam.PolicyStatement({
        sid: 'LedgerStagedIndex',
        actions: ['dynamodb:Query'],
        resources: [`${storage.ledger.tableArn}/index/${STAGED_INDEX}`],
      }),
    );
  }

  if (storage.database !== undefined) {
    const { catalogArn, databaseArn, tablesArn } = glueArns(fn, settings);
    add(
      new iam.PolicyStatement({
        sid: 'GlueTables',
        actions: floe
          ? ['glue:GetTable', 'glue:GetTables', 'glue:UpdateTable']
          : ['glue:GetTable', 'glue:GetTables'],
        resources: [catalogArn, databaseArn, tablesArn],
      }),
    );
    if (optimizerRole !== undefined) grantOptimizers(fn, settings, optimizerRole, true);
    wildcard(
      `arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:table/${settings.namespace}/*`,
      `Tables are created at run time, one per event type (named from the data); access is limited to the tables of this stack’s Glue database ${settings.namespace}.`,
    );
  }
  if (storage.tableBucket !== undefined) {
    const bucketArn = storage.tableBucket.attrTableBucketArn;
    add(
      new iam.PolicyStatement({
        sid: 'TableBucket',
        actions: ['s3tables:ListTables'],
        resources: [bucketArn],
      }),
    );
    add(
      new iam.PolicyStatement({
        sid: 'Tables',
        actions: [
          's3tables:GetTableMetadataLocation',
          's3tables:GetTableData',
          's3tables:GetTableMaintenanceConfiguration',
          's3tables:PutTableMaintenanceConfiguration',
        ],
        resources: [`${bucketArn}/table/*`],
      }),
    );
    wildcard(
      `<${logicalIdOf(storage.tableBucket)}.TableBucketARN>/table/*`,
      'Tables are created at run time (one per event type) and S3 Tables names table ARNs by a generated id, so they cannot be listed in advance; access is limited to this stack’s own table bucket.',
    );
  }
}

/**
 * The committer sets a new table's managed maintenance up as it creates it: Glue table optimizers
 * (maintenance=glue: create, or update one that exists; PassRole of the optimizer role to Glue),
 * or S3 Tables' table maintenance (always on S3 Tables).
 */
export function grantManagedSetUp(
  fn: FloeFunction,
  storage: FloeStorage,
  settings: FloeSettings,
  optimizerRole?: iam.IRole,
): void {
  if (optimizerRole !== undefined && storage.database !== undefined) {
    grantOptimizers(fn, settings, optimizerRole, false);
  }
  if (storage.tableBucket !== undefined) {
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'TableMaintenance',
        actions: ['s3tables:PutTableMaintenanceConfiguration'],
        resources: [`${storage.tableBucket.attrTableBucketArn}/table/*`],
      }),
    );
  }
}

function grantOptimizers(fn: FloeFunction, settings: FloeSettings, role: iam.IRole, read: boolean): void {
  const { catalogArn, databaseArn, tablesArn } = glueArns(fn, settings);
  fn.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'GlueTableOptimizers',
      actions: [
        ...(read ? ['glue:BatchGetTableOptimizer'] : []),
        'glue:CreateTableOptimizer',
        'glue:UpdateTableOptimizer',
      ],
      resources: [catalogArn, databaseArn, tablesArn],
    }),
  );
  fn.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'PassOptimizerRole',
      actions: ['iam:PassRole'],
      resources: [role.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'glue.amazonaws.com' } },
    }),
  );
}

function glueArns(scope: IConstruct, settings: FloeSettings) {
  const stack = Stack.of(scope);
  const ns = settings.namespace;
  return {
    catalogArn: stack.formatArn({ service: 'glue', resource: 'catalog' }),
    databaseArn: stack.formatArn({ service: 'glue', resource: 'database', resourceName: ns }),
    tablesArn: stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${ns}/*` }),
  };
}
