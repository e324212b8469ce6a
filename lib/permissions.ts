/**
 * Least-privilege IAM for the two handlers: exactly the calls their adapters make
 * (`lambdas/src/adapters/aws/*.ts`), on exactly this stack's resources, in exactly the namespaces
 * the configuration can route to (`settings.namespaces`, lib/namespaces.ts: the stack's, a
 * template's literal one, consolidation rules', `allowedNamespaces` names and `prefix*` patterns).
 *
 * | adapter | ingest | committer |
 * |---|---|---|
 * | S3 object store (warehouse `warehouse/`, staging `staging/` + `dead-letters/`) | Get/Put/DeleteObject, ListBucket on the prefixes | same |
 * | DynamoDB ledger + lock (one table) | GetItem, PutItem, UpdateItem, Query | same + Query/Scan on the `staged` index |
 * | Glue catalog (each namespace's database and tables) | GetTable, GetTables | + CreateTable, UpdateTable, CreateDatabase (AlreadyExists on a database that exists) |
 * | S3 Tables catalog (tables and calls conditioned on `s3tables:namespace`) | GetTableMetadataLocation, ListTables, Get/PutTableData | + CreateNamespace, CreateTable, UpdateTableMetadataLocation |
 * | Glue Schema Registry (Avro) | GetSchemaVersion | GetSchemaVersion (pending Avro records are re-decoded) |
 *
 * S3 Tables' `CreateNamespace` is the one call IAM cannot scope to a namespace (it has no
 * `s3tables:namespace` condition key); it is granted on this stack's table bucket only, and a
 * namespace is only useful with `CreateTable`, which is conditioned. No role may delete anything in
 * table storage (S3 Tables has no such action; Floe sends no such request: catalog-aware-store.ts).
 *
 * The maintenance function (`grantMaintenanceAccess`) and the committer's setup of managed
 * maintenance (`grantManagedSetUp`) are below, by `maintenance` value.
 *
 * Kinesis read and the stream key's Decrypt come with the event source mapping; SendMessage to
 * the failed-batch queue with its on-failure destination; the log group with the function.
 * No `glue:GetDatabases` / `s3tables:ListNamespaces` for ingest and committer (they never list
 * namespaces; maintenance does, for `allowedNamespaces` prefixes only), no
 * `RegisterSchemaVersion` / `CreateSchema` (producers register schemas, the ingest only reads).
 */
import { type CfnElement, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct, IConstruct } from 'constructs';
import { STAGED_INDEX } from '../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import type { FloeSettings } from './config.ts';
import type { FloeFunction, HandlerName } from './lambda.ts';
import { acknowledge } from './nag.ts';
import { type NamespaceScope, namespacePatterns } from './namespaces.ts';
import { DEAD_LETTER_PREFIX, type FloeStorage, STAGING_PREFIX, WAREHOUSE_PREFIX } from './storage.ts';

/**
 * Lets `caller` invoke `target` (asynchronously or not), through a policy of its own attached to
 * the caller's role. Not through the role's default policy: a function depends on its role's
 * default policy, so naming a function there (the committer invoking itself) would be a cycle.
 */
export function grantInvoke(
  scope: Construct,
  id: string,
  sid: string,
  caller: FloeFunction,
  target: lambda.IFunction,
): iam.Policy {
  const policy = new iam.Policy(scope, id, {
    statements: [
      new iam.PolicyStatement({ sid, actions: ['lambda:InvokeFunction'], resources: [target.functionArn] }),
    ],
  });
  policy.attachToRole(caller.role);
  return policy;
}

export function grantFloeAccess(
  fn: FloeFunction,
  storage: FloeStorage,
  settings: FloeSettings,
  handler: Exclude<HandlerName, 'maintenance'>,
): void {
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

  // ---- the catalog: every namespace the configuration can reach
  const namespaces = settings.namespaces;
  if (storage.database !== undefined) {
    const { catalogArn, databaseArns, tablesArns } = glueArns(fn, namespaces);
    add(
      new iam.PolicyStatement({
        sid: 'GlueTables',
        actions: committer
          ? ['glue:GetTable', 'glue:GetTables', 'glue:CreateTable', 'glue:UpdateTable']
          : ['glue:GetTable', 'glue:GetTables'],
        resources: [catalogArn, ...databaseArns, ...tablesArns],
      }),
    );
    if (committer) {
      // The committer calls CreateDatabase before it creates a table: AlreadyExists for the stack's
      // database (and any other that exists), a new database for a rule's namespace.
      add(
        new iam.PolicyStatement({
          sid: 'GlueDatabase',
          actions: ['glue:CreateDatabase'],
          resources: [catalogArn, ...databaseArns],
        }),
      );
    }
    acknowledgeGlueWildcards(
      policy,
      namespaces,
      (ns) =>
        `Tables are created at run time, one per event type (named from the data); access is limited to the tables of the Glue database ${ns}, a namespace this stack's configuration routes to.`,
      (prefix) =>
        `-c allowedNamespaces grants the namespaces starting with ${prefix} (the routing template takes the namespace from the data); the Lambdas dead-letter records routed to any other namespace.`,
    );
  }
  if (storage.tableBucket !== undefined) {
    const bucketArn = storage.tableBucket.attrTableBucketArn;
    const tablesArn = `${bucketArn}/table/*`;
    const inNamespaces = s3TablesNamespaceCondition(namespaces);
    add(
      new iam.PolicyStatement({
        sid: 'ListTables',
        actions: ['s3tables:ListTables'],
        resources: [bucketArn],
        conditions: inNamespaces,
      }),
    );
    if (committer) {
      add(
        new iam.PolicyStatement({
          // No s3tables:namespace condition key exists for CreateNamespace (see the header).
          sid: 'TableBucket',
          actions: ['s3tables:CreateNamespace'],
          resources: [bucketArn],
        }),
      );
      add(
        new iam.PolicyStatement({
          sid: 'CreateTablesInNamespace',
          actions: ['s3tables:CreateTable'],
          resources: [bucketArn],
          conditions: inNamespaces,
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
        conditions: inNamespaces,
      }),
    );
    wildcard(
      `<${logicalIdOf(storage.tableBucket)}.TableBucketARN>/table/*`,
      'Tables are created at run time (one per event type) and S3 Tables names table ARNs by a generated id, so they cannot be listed in advance; access is limited to this stack’s own table bucket and, by the s3tables:namespace condition, to the namespaces its configuration routes to.',
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
export function logicalIdOf(resource: IConstruct): string {
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
 * The catalog calls are limited to the namespaces the configuration routes to, as the
 * committer's; with `allowedNamespaces` prefixes (`tenant_*`) also `glue:GetDatabases` (on the
 * granted databases) or `s3tables:ListNamespaces` (on the stack's table bucket), to find the
 * namespaces that match. No staging bucket, no CreateTable, no Scan: it never reads fragments or
 * creates tables.
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

  // The maintenance function visits every namespace the configuration routes to (scheduled.ts,
  // MAINTENANCE_NAMESPACES): the committer's scope, no wider.
  const namespaces = settings.namespaces;
  // A prefix (`tenant_*`) is matched against the catalog's namespaces at run time: the one call
  // that lists namespaces, made only then.
  const listsNamespaces = namespaces.prefixes.length > 0;
  if (storage.database !== undefined) {
    const { catalogArn, databaseArns, tablesArns } = glueArns(fn, namespaces);
    add(
      new iam.PolicyStatement({
        sid: 'GlueTables',
        actions: floe
          ? ['glue:GetTable', 'glue:GetTables', 'glue:UpdateTable']
          : ['glue:GetTable', 'glue:GetTables'],
        resources: [catalogArn, ...databaseArns, ...tablesArns],
      }),
    );
    if (listsNamespaces) {
      // GetDatabases returns the databases the caller may read: the granted ones.
      add(
        new iam.PolicyStatement({
          sid: 'GlueDatabases',
          actions: ['glue:GetDatabases'],
          resources: [catalogArn, ...databaseArns],
        }),
      );
    }
    if (optimizerRole !== undefined) grantOptimizers(fn, namespaces, optimizerRole, true);
    acknowledgeGlueWildcards(
      policy,
      namespaces,
      (ns) =>
        `Tables are created at run time, one per event type (named from the data); access is limited to the tables of the Glue database ${ns}, a namespace this stack's configuration routes to and maintenance visits.`,
      (prefix) =>
        `-c allowedNamespaces grants the namespaces starting with ${prefix} (the routing template takes the namespace from the data); maintenance visits the tables Floe creates there, as the committer's role is granted.`,
    );
  }
  if (storage.tableBucket !== undefined) {
    const bucketArn = storage.tableBucket.attrTableBucketArn;
    const inNamespaces = s3TablesNamespaceCondition(namespaces);
    add(
      new iam.PolicyStatement({
        sid: 'TableBucket',
        actions: ['s3tables:ListTables'],
        resources: [bucketArn],
        conditions: inNamespaces,
      }),
    );
    if (listsNamespaces) {
      add(
        new iam.PolicyStatement({
          // Names only; IAM has no s3tables:namespace condition key for it (like CreateNamespace).
          sid: 'ListNamespaces',
          actions: ['s3tables:ListNamespaces'],
          resources: [bucketArn],
        }),
      );
    }
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
        conditions: inNamespaces,
      }),
    );
    wildcard(
      `<${logicalIdOf(storage.tableBucket)}.TableBucketARN>/table/*`,
      'Tables are created at run time (one per event type) and S3 Tables names table ARNs by a generated id, so they cannot be listed in advance; access is limited to this stack’s own table bucket and, by the s3tables:namespace condition, to the namespaces its configuration routes to (those maintenance visits).',
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
    grantOptimizers(fn, settings.namespaces, optimizerRole, false);
  }
  if (storage.tableBucket !== undefined) {
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'TableMaintenance',
        actions: ['s3tables:PutTableMaintenanceConfiguration'],
        resources: [`${storage.tableBucket.attrTableBucketArn}/table/*`],
        conditions: s3TablesNamespaceCondition(settings.namespaces),
      }),
    );
  }
}

function grantOptimizers(fn: FloeFunction, namespaces: NamespaceScope, role: iam.IRole, read: boolean): void {
  const { catalogArn, databaseArns, tablesArns } = glueArns(fn, namespaces);
  fn.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'GlueTableOptimizers',
      actions: [
        ...(read ? ['glue:BatchGetTableOptimizer'] : []),
        'glue:CreateTableOptimizer',
        'glue:UpdateTableOptimizer',
      ],
      resources: [catalogArn, ...databaseArns, ...tablesArns],
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

/** The Glue Data Catalog ARNs of `namespaces`: the catalog, each database, each database's tables. */
export function glueArns(scope: IConstruct, namespaces: NamespaceScope) {
  const stack = Stack.of(scope);
  const patterns = namespacePatterns(namespaces);
  return {
    catalogArn: stack.formatArn({ service: 'glue', resource: 'catalog' }),
    databaseArns: patterns.map((p) =>
      stack.formatArn({ service: 'glue', resource: 'database', resourceName: p }),
    ),
    tablesArns: patterns.map((p) =>
      stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${p}/*` }),
    ),
  };
}

/** `s3tables:namespace` limited to `namespaces` (StringLike when a prefix is among them). */
export function s3TablesNamespaceCondition(
  namespaces: NamespaceScope,
): Record<string, Record<string, unknown>> {
  const patterns = namespacePatterns(namespaces);
  const value = patterns.length === 1 ? patterns[0]! : patterns;
  return namespaces.prefixes.length === 0
    ? { StringEquals: { 's3tables:namespace': value } }
    : { StringLike: { 's3tables:namespace': value } };
}

/**
 * Acknowledges cdk-nag's IAM5 for the wildcards `glueArns` produces: the tables of each namespace,
 * and for a prefix its databases and their tables.
 */
export function acknowledgeGlueWildcards(
  policy: IConstruct,
  namespaces: NamespaceScope,
  tablesReason: (namespace: string) => string,
  prefixReason: (prefix: string) => string,
): void {
  const arn = (resource: string) => `arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:${resource}`;
  const ack = (resource: string, reason: string) =>
    acknowledge(policy, `AwsSolutions-IAM5[Resource::${arn(resource)}]`, reason);
  for (const ns of namespaces.names) ack(`table/${ns}/*`, tablesReason(ns));
  for (const p of namespaces.prefixes) {
    ack(`database/${p}*`, prefixReason(p));
    ack(`table/${p}*/*`, prefixReason(p));
  }
}
