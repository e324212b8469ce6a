/**
 * Athena out of the box (issue #14): analysts deploy, run `floe generate`, open the workgroup and
 * run a saved query.
 *
 * - **Workgroup** `<stackName>`: engine version 3, results in a bucket of its own (SSE-S3, public
 *   access blocked, TLS only, access-logged, results expire after `athenaResultsExpirationDays`,
 *   incomplete uploads after a day), settings enforced so every query of the workgroup writes
 *   there, encrypted, with CloudWatch query metrics.
 * - **Named queries** in the workgroup: the README's examples ("Query with Athena") on the tables
 *   the sample's events create (`floe generate`), qualified for this stack's catalog.
 * - **Analyst policy** (AWS::IAM::ManagedPolicy, attach it to the analysts' roles or users): run
 *   queries in this workgroup and read their results; read the catalog (every namespace the
 *   configuration routes to) and the table files. Nothing else: no write anywhere in the lake.
 * - **S3 Tables**: the analytics-services integration, i.e. the account's federated catalog
 *   `s3tablescatalog` (table buckets become catalogs `s3tablescatalog/<bucket>`, namespaces
 *   databases). CloudFormation's AWS::Glue::Catalog cannot adopt that catalog, which is one per
 *   account and region and often exists already (the S3 console creates it when a table bucket is
 *   made with "Enable integration", another stack may have), and a stack must never delete it. So
 *   the one custom resource of the stack ensures it: Glue `CreateCatalog` in IAM access-control mode
 *   (default permissions to `IAM_ALLOWED_PRINCIPALS`), an `AlreadyExistsException` ignored, nothing
 *   on delete (`-c s3TablesCatalog=skip` leaves it to the account). In IAM mode the analyst policy
 *   is the grant; an account that governs the catalog with Lake Formation grants the namespaces
 *   there as well (README).
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import type { FloeSettings } from './config.ts';
import { acknowledge } from './nag.ts';
import { namespacePatterns } from './namespaces.ts';
import {
  acknowledgeGlueWildcards,
  glueArns,
  logicalIdOf,
  s3TablesNamespaceCondition,
} from './permissions.ts';
import { type FloeStorage, secureBucket, versionRules, WAREHOUSE_PREFIX } from './storage.ts';

/** Athena's current engine (Trino-based; reads Iceberg v2, time travel, metadata tables). */
export const ATHENA_ENGINE_VERSION = 'Athena engine version 3';
/** The account's federated catalog of S3 table buckets. */
export const S3_TABLES_CATALOG = 's3tablescatalog';
/** Where the workgroup writes query results, in the results bucket. */
export const RESULTS_PREFIX = 'results';

/** One saved query of the workgroup. */
export interface NamedQuerySpec {
  readonly name: string;
  readonly description: string;
  readonly sql: string;
}

/**
 * The README's example queries for this stack: `t` is how a table of the stack's namespace is
 * written (`"floe"."order_events"`, or `"s3tablescatalog/floe-tables"."floe"."order_events"`).
 */
export function exampleQueries(t: (table: string) => string): NamedQuerySpec[] {
  const orders = t('order_events');
  const meta = (suffix: string) => t(`order_events$${suffix}`);
  return [
    {
      name: 'rows per table',
      description: 'Rows in each table the sample events create (floe generate)',
      sql: [
        `SELECT 'order_events' AS table_name, count(*) AS n FROM ${orders}`,
        `UNION ALL SELECT 'user_events', count(*) FROM ${t('user_events')}`,
        `UNION ALL SELECT 'click_events', count(*) FROM ${t('click_events')};`,
      ].join('\n'),
    },
    {
      name: 'revenue by region, last 7 days',
      description: 'Orders and revenue per region over the last seven days',
      sql: `SELECT region, count(*) AS orders, sum(amount) AS revenue\nFROM ${orders} WHERE event_date >= current_date - interval '7' day GROUP BY region;`,
    },
    {
      name: 'snapshots',
      description: "One snapshot per commit; the summary carries Floe's floe.watermark",
      sql: `SELECT committed_at, snapshot_id, operation, summary['added-records'], summary['total-records']\nFROM ${meta('snapshots')} ORDER BY committed_at DESC;`,
    },
    {
      name: 'history',
      description: 'When each snapshot became current',
      sql: `SELECT * FROM ${meta('history')};`,
    },
    {
      name: 'data files',
      description: 'Data files of the current snapshot, with record counts and partitions',
      sql: `SELECT file_path, record_count, partition FROM ${meta('files')} LIMIT 20;`,
    },
    {
      name: 'time travel, 10 minutes ago',
      description: 'The table as it was ten minutes ago (Iceberg time travel)',
      sql: `SELECT count(*) FROM ${orders} FOR TIMESTAMP AS OF (current_timestamp - interval '10' minute);`,
    },
  ];
}

export class FloeAthena extends Construct {
  readonly results: s3.Bucket;
  readonly workGroup: athena.CfnWorkGroup;
  readonly namedQueries: athena.CfnNamedQuery[] = [];
  readonly analystPolicy: iam.ManagedPolicy;
  /** S3 Tables with `s3TablesCatalog=ensure`. */
  readonly s3TablesCatalog?: cr.AwsCustomResource;
  /** How queries name the catalog: `AwsDataCatalog`, or `s3tablescatalog/<table bucket>`. */
  readonly catalogName: string;

  constructor(scope: Construct, id: string, props: { settings: FloeSettings; storage: FloeStorage }) {
    super(scope, id);
    const { settings, storage } = props;
    const stack = Stack.of(this);
    const retain = settings.storage.removal === 'retain';
    const s3tables = settings.catalogType === 's3tables';
    const bucketName = settings.storage.tableBucketName;

    // ---- results
    const key = storage.dataKey;
    this.results = new s3.Bucket(this, 'Results', {
      ...secureBucket(
        retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
        retain,
        key === undefined ? {} : { versioned: true, key },
      ),
      serverAccessLogsBucket: storage.accessLogs,
      serverAccessLogsPrefix: 'athena-results/',
      lifecycleRules: [
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        {
          id: 'expire-query-results',
          prefix: `${RESULTS_PREFIX}/`,
          expiration: Duration.days(settings.athena.resultsExpirationDays),
        },
        ...versionRules(key !== undefined),
      ],
    });

    // ---- workgroup
    this.workGroup = new athena.CfnWorkGroup(this, 'WorkGroup', {
      name: settings.stackName,
      description: `Floe (${settings.stackName}): queries over the Iceberg tables of ${namespacePatterns(settings.namespaces).join(', ')}`,
      state: 'ENABLED',
      // The workgroup holds nothing but saved queries and history: it goes with the stack.
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        engineVersion: { selectedEngineVersion: ATHENA_ENGINE_VERSION },
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        resultConfiguration: {
          outputLocation: `s3://${this.results.bucketName}/${RESULTS_PREFIX}/`,
          encryptionConfiguration:
            key === undefined
              ? { encryptionOption: 'SSE_S3' }
              : { encryptionOption: 'SSE_KMS', kmsKey: key.keyArn },
          expectedBucketOwner: stack.account,
        },
      },
    });

    // ---- the catalog as queries name it
    this.catalogName = s3tables ? `${S3_TABLES_CATALOG}/${bucketName}` : 'AwsDataCatalog';
    const qualified = (table: string) =>
      s3tables
        ? `"${this.catalogName}"."${settings.namespace}"."${table}"`
        : `"${settings.namespace}"."${table}"`;
    for (const [i, q] of exampleQueries(qualified).entries()) {
      const query = new athena.CfnNamedQuery(this, `Query${i}`, {
        name: `${settings.stackName}: ${q.name}`,
        description: q.description,
        database: settings.namespace,
        queryString: q.sql,
        workGroup: this.workGroup.ref,
      });
      query.node.addDependency(this.workGroup);
      this.namedQueries.push(query);
    }

    // ---- S3 Tables: the federated catalog
    if (s3tables && settings.athena.s3TablesCatalog === 'ensure') {
      this.s3TablesCatalog = this.ensureS3TablesCatalog(settings, storage);
    }

    // ---- the analysts' policy
    this.analystPolicy = new iam.ManagedPolicy(this, 'AnalystPolicy', {
      description: `Floe (${settings.stackName}): run Athena queries in the workgroup ${settings.stackName} and read the lake's tables (read only)`,
      statements: this.analystStatements(settings, storage),
    });
    this.acknowledgeAnalystWildcards(settings, storage);
  }

  /** Glue CreateCatalog of `s3tablescatalog` (IAM access control), AlreadyExists ignored, no delete. */
  private ensureS3TablesCatalog(settings: FloeSettings, storage: FloeStorage): cr.AwsCustomResource {
    const stack = Stack.of(this);
    const catalogArn = stack.formatArn({ service: 'glue', resource: 'catalog' });
    const logGroup = new logs.LogGroup(this, 'S3TablesCatalogLogs', {
      retention: settings.storage.logRetentionDays as logs.RetentionDays,
      ...(storage.dataKey === undefined ? {} : { encryptionKey: storage.dataKey }),
    });
    // A role of its own, without AWSLambdaBasicExecutionRole: the calls below and its own logs.
    const role = new iam.Role(this, 'S3TablesCatalogRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description:
        'Creates the s3tablescatalog federated catalog of the account (Glue CreateCatalog) if it is missing',
    });
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'WriteOwnLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn],
      }),
    );
    const allPrincipals = [
      { Principal: { DataLakePrincipalIdentifier: 'IAM_ALLOWED_PRINCIPALS' }, Permissions: ['ALL'] },
    ];
    const call: cr.AwsSdkCall = {
      service: 'Glue',
      action: 'CreateCatalog',
      parameters: {
        Name: S3_TABLES_CATALOG,
        CatalogInput: {
          Description:
            'S3 table buckets of this account and Region (S3 Tables integration with AWS analytics services)',
          FederatedCatalog: {
            Identifier: stack.formatArn({ service: 's3tables', resource: 'bucket', resourceName: '*' }),
            ConnectionName: 'aws:s3tables',
          },
          CreateDatabaseDefaultPermissions: allPrincipals,
          CreateTableDefaultPermissions: allPrincipals,
          AllowFullTableExternalDataAccess: 'True',
        },
      },
      physicalResourceId: cr.PhysicalResourceId.of(S3_TABLES_CATALOG),
      // One per account and Region: created by the console, another stack or an earlier deploy.
      ignoreErrorCodesMatching: 'AlreadyExistsException',
    };
    const resource = new cr.AwsCustomResource(this, 'S3TablesCatalog', {
      resourceType: 'Custom::S3TablesCatalog',
      onCreate: call,
      onUpdate: call,
      // No onDelete: the catalog is the account's, shared by every table bucket of the Region.
      installLatestAwsSdk: false,
      role,
      logGroup,
      timeout: Duration.minutes(2),
      policy: cr.AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({
          actions: ['glue:CreateCatalog', 'glue:GetCatalog'],
          resources: [catalogArn, `${catalogArn}/${S3_TABLES_CATALOG}`],
        }),
        new iam.PolicyStatement({
          actions: ['glue:PassConnection'],
          resources: [
            stack.formatArn({ service: 'glue', resource: 'connection', resourceName: 'aws:s3tables' }),
          ],
        }),
      ]),
    });
    return resource;
  }

  private analystStatements(settings: FloeSettings, storage: FloeStorage): iam.PolicyStatement[] {
    const stack = Stack.of(this);
    const workGroupArn = stack.formatArn({
      service: 'athena',
      resource: 'workgroup',
      resourceName: this.workGroup.ref,
    });
    const statements = [
      new iam.PolicyStatement({
        sid: 'QueryInWorkGroup',
        actions: [
          'athena:StartQueryExecution',
          'athena:StopQueryExecution',
          'athena:GetQueryExecution',
          'athena:GetQueryResults',
          'athena:GetQueryResultsStream',
          'athena:GetQueryRuntimeStatistics',
          'athena:ListQueryExecutions',
          'athena:BatchGetQueryExecution',
          'athena:GetWorkGroup',
          'athena:ListNamedQueries',
          'athena:GetNamedQuery',
          'athena:BatchGetNamedQuery',
        ],
        resources: [workGroupArn],
      }),
      new iam.PolicyStatement({
        sid: 'BrowseDataCatalog',
        actions: [
          'athena:GetDataCatalog',
          'athena:ListDatabases',
          'athena:GetDatabase',
          'athena:ListTableMetadata',
          'athena:GetTableMetadata',
        ],
        resources: [
          stack.formatArn({ service: 'athena', resource: 'datacatalog', resourceName: 'AwsDataCatalog' }),
        ],
      }),
      new iam.PolicyStatement({
        // The console's workgroup and data source pickers; neither action takes a resource.
        sid: 'ListWorkGroups',
        actions: ['athena:ListWorkGroups', 'athena:ListDataCatalogs'],
        resources: ['*'],
      }),
      new iam.PolicyStatement({
        sid: 'QueryResults',
        actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        resources: [this.results.arnForObjects(`${RESULTS_PREFIX}/*`)],
      }),
      new iam.PolicyStatement({
        sid: 'QueryResultsBucket',
        actions: ['s3:GetBucketLocation', 's3:ListBucket', 's3:ListBucketMultipartUploads'],
        resources: [this.results.bucketArn],
      }),
    ];
    const namespaces = settings.namespaces;
    if (storage.database !== undefined && storage.warehouse !== undefined) {
      const { catalogArn, databaseArns, tablesArns } = glueArns(this, namespaces);
      statements.push(
        new iam.PolicyStatement({
          sid: 'ReadCatalog',
          actions: ['glue:GetDatabase', 'glue:GetDatabases', 'glue:GetTable', 'glue:GetTables'],
          resources: [catalogArn, ...databaseArns, ...tablesArns],
        }),
        new iam.PolicyStatement({
          sid: 'ReadTableFiles',
          actions: ['s3:GetObject'],
          resources: [storage.warehouse.arnForObjects(`${WAREHOUSE_PREFIX}/*`)],
        }),
        new iam.PolicyStatement({
          sid: 'ListTableFiles',
          actions: ['s3:ListBucket', 's3:GetBucketLocation'],
          resources: [storage.warehouse.bucketArn],
        }),
      );
    }
    if (storage.tableBucket !== undefined) {
      const bucket = settings.storage.tableBucketName!;
      const patterns = namespacePatterns(namespaces);
      const federated = `${S3_TABLES_CATALOG}/${bucket}`;
      statements.push(
        new iam.PolicyStatement({
          sid: 'ReadFederatedCatalog',
          actions: [
            'glue:GetCatalog',
            'glue:GetCatalogs',
            'glue:GetDatabase',
            'glue:GetDatabases',
            'glue:GetTable',
            'glue:GetTables',
          ],
          resources: [
            stack.formatArn({ service: 'glue', resource: 'catalog' }),
            stack.formatArn({ service: 'glue', resource: 'catalog', resourceName: S3_TABLES_CATALOG }),
            stack.formatArn({ service: 'glue', resource: 'catalog', resourceName: federated }),
            ...patterns.map((p) =>
              stack.formatArn({ service: 'glue', resource: 'database', resourceName: `${federated}/${p}` }),
            ),
            ...patterns.map((p) =>
              stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${federated}/${p}/*` }),
            ),
          ],
        }),
        new iam.PolicyStatement({
          sid: 'ReadTableBucket',
          actions: ['s3tables:GetTableBucket', 's3tables:ListNamespaces'],
          resources: [storage.tableBucket.attrTableBucketArn],
        }),
        new iam.PolicyStatement({
          sid: 'ReadNamespaces',
          actions: ['s3tables:GetNamespace', 's3tables:ListTables'],
          resources: [storage.tableBucket.attrTableBucketArn],
          conditions: s3TablesNamespaceCondition(namespaces),
        }),
        new iam.PolicyStatement({
          sid: 'ReadTables',
          actions: ['s3tables:GetTable', 's3tables:GetTableMetadataLocation', 's3tables:GetTableData'],
          resources: [`${storage.tableBucket.attrTableBucketArn}/table/*`],
          conditions: s3TablesNamespaceCondition(namespaces),
        }),
        new iam.PolicyStatement({
          // In an account that governs s3tablescatalog with Lake Formation, Athena reads with
          // credentials Lake Formation vends for what it granted; the action takes no resource.
          sid: 'LakeFormationDataAccess',
          actions: ['lakeformation:GetDataAccess'],
          resources: ['*'],
        }),
      );
    }
    if (storage.dataKey !== undefined) {
      // compliance=strict: the tables' files and the query results are encrypted with the stack's key.
      statements.push(
        new iam.PolicyStatement({
          sid: 'DataKey',
          actions: ['kms:Decrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
          resources: [storage.dataKey.keyArn],
        }),
      );
    }
    return statements;
  }

  private acknowledgeAnalystWildcards(settings: FloeSettings, storage: FloeStorage): void {
    const policy = this.analystPolicy;
    const ack = (resource: string, reason: string) =>
      acknowledge(policy, `AwsSolutions-IAM5[Resource::${resource}]`, reason);
    ack(
      '*',
      'athena:ListWorkGroups and athena:ListDataCatalogs (the console’s workgroup and data source pickers) take no resource; queries themselves are limited to this stack’s workgroup.',
    );
    ack(
      `<${logicalIdOf(this.results)}.Arn>/${RESULTS_PREFIX}/*`,
      'Athena writes each query’s result under a name of its own (the query id); access is limited to the results/ prefix of this workgroup’s results bucket.',
    );
    if (storage.warehouse !== undefined) {
      ack(
        `<${logicalIdOf(storage.warehouse)}.Arn>/${WAREHOUSE_PREFIX}/*`,
        'Athena reads the data, manifest and metadata files of tables Floe creates at run time (file names with uuids); read-only, limited to the warehouse/ prefix of this stack’s warehouse bucket.',
      );
      acknowledgeGlueWildcards(
        policy,
        settings.namespaces,
        (ns) =>
          `Tables are created at run time, one per event type; analysts read the tables of the Glue database ${ns}, a namespace this stack's configuration routes to (read only).`,
        (prefix) =>
          `-c allowedNamespaces grants the namespaces starting with ${prefix}; analysts read the tables Floe creates there (read only).`,
      );
    }
    if (storage.tableBucket !== undefined) {
      const bucket = settings.storage.tableBucketName!;
      const arn = (resource: string) =>
        `arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:${resource}`;
      for (const p of namespacePatterns(settings.namespaces)) {
        ack(
          arn(`table/${S3_TABLES_CATALOG}/${bucket}/${p}/*`),
          `Tables are created at run time, one per event type; analysts read the tables of namespace ${p} of this stack’s table bucket through the federated catalog (read only).`,
        );
        if (p.endsWith('*'))
          ack(
            arn(`database/${S3_TABLES_CATALOG}/${bucket}/${p}`),
            `-c allowedNamespaces grants the namespaces starting with ${p.slice(0, -1)}; analysts read the tables Floe creates there (read only).`,
          );
      }
      ack(
        `<${logicalIdOf(storage.tableBucket)}.TableBucketARN>/table/*`,
        'S3 Tables names table ARNs by a generated id, so they cannot be listed in advance; reads are limited to this stack’s table bucket and, by the s3tables:namespace condition, to the namespaces its configuration routes to.',
      );
    }
  }
}
