/**
 * The Floe stack, synthesized in-process with bundling skipped, for every appType × catalogType ×
 * tableFormatVersion: specific properties (not a whole-template snapshot), least-privilege IAM,
 * cdk-nag AwsSolutions with zero unacknowledged findings, and the Lambda environment accepted by
 * the handlers' own reader.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLedgerTable } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { readSettings } from '../../lambdas/src/handlers/env.ts';
import { PROJECT_ROOT } from '../../lib/lambda.ts';
import {
  acknowledgments,
  allNagFindings,
  nagFindings,
  one,
  resources,
  type Synth,
  synth,
} from './helpers.ts';

type Props = Record<string, unknown>;
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

const COMBOS = (['dynamic', 'dynamic-avro'] as const).flatMap((appType) =>
  (['glue', 's3tables'] as const).flatMap((catalogType) =>
    ([2, 3] as const).map((tableFormatVersion) => ({ appType, catalogType, tableFormatVersion })),
  ),
);

const isIngest = (_p: Props, id: string) => id.startsWith('IngestHandler');
const isCommitter = (_p: Props, id: string) => id.startsWith('CommitterHandler');
const isMaintenance = (_p: Props, id: string) => id.startsWith('MaintenanceHandler');
/** The provider function of AwsCustomResource (S3 Tables: Glue CreateCatalog of s3tablescatalog). */
const isCatalogProvider = (id: string) => id.startsWith('AWS679f53fac002430cb0da5b7982bd2287');

/** Every statement of the identity policies of `handler`'s role. */
function statements(s: Synth, handler: 'Ingest' | 'Committer'): Statement[] {
  return Object.entries(resources(s.template, 'AWS::IAM::Policy'))
    .filter(([id]) => id.startsWith(`${handler}HandlerRoleDefaultPolicy`))
    .flatMap(([, p]) => (p.PolicyDocument as { Statement: Statement[] }).Statement);
}
const actionsOf = (st: Statement): string[] => (Array.isArray(st.Action) ? st.Action : [st.Action]);
const resourcesOf = (st: Statement): unknown[] => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]);
const allActions = (sts: Statement[]) => new Set(sts.flatMap(actionsOf));

/** A Lambda environment with the CloudFormation references replaced by plausible values. */
function resolveEnvironment(variables: Record<string, unknown>): Record<string, string> {
  const value = (v: unknown): string => {
    if (typeof v === 'string') return v;
    const o = v as Record<string, unknown>;
    if ('Fn::Join' in o) {
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map(value).join(sep);
    }
    if ('Ref' in o)
      return o.Ref === 'AWS::AccountId' ? '123456789012' : `floe-${String(o.Ref).toLowerCase().slice(0, 40)}`;
    if ('Fn::GetAtt' in o) {
      const [, attr] = o['Fn::GetAtt'] as [string, string];
      if (attr === 'TableBucketARN') return 'arn:aws:s3tables:eu-west-1:123456789012:bucket/floe-tables';
    }
    throw new Error(`unexpected value ${JSON.stringify(v)}`);
  };
  return Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, value(v)]));
}

describe.each(COMBOS)(
  'appType=$appType catalogType=$catalogType tableFormatVersion=$tableFormatVersion',
  (combo) => {
    let s: Synth;
    const avro = combo.appType === 'dynamic-avro';
    const glue = combo.catalogType === 'glue';
    beforeAll(() => {
      s = synth({ ...combo });
    });

    it('the event source mapping: PF 1, item failures, bisect, bounded retries and age, on-failure queue', () => {
      s.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
      s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^StorageStream'), 'Arn'] },
        FunctionName: { Ref: Match.stringLikeRegexp('^IngestHandlerFunction') },
        StartingPosition: 'TRIM_HORIZON',
        BatchSize: 10_000,
        MaximumBatchingWindowInSeconds: 15,
        ParallelizationFactor: 1,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 10,
        MaximumRecordAgeInSeconds: 86_400,
        DestinationConfig: {
          OnFailure: {
            Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^StorageFailedBatches'), 'Arn'] },
          },
        },
      });
    });

    it('three arm64 Node.js 22 functions (ingest, committer, maintenance) with their own roles and log groups', () => {
      const all = resources(s.template, 'AWS::Lambda::Function');
      // S3 Tables adds the provider of the one custom resource (s3tablescatalog).
      expect(Object.keys(all).filter(isCatalogProvider)).toHaveLength(glue ? 0 : 1);
      const fns = Object.fromEntries(Object.entries(all).filter(([id]) => !isCatalogProvider(id)));
      expect(Object.keys(fns)).toHaveLength(3);
      for (const fn of Object.values(fns)) {
        expect(fn.Architectures).toEqual(['arm64']);
        expect(fn.Runtime).toMatch(/^nodejs(20|22)\.x$/);
        expect(fn.Handler).toBe('index.handler');
        expect(fn.LoggingConfig).toEqual({ LogGroup: { Ref: expect.stringMatching(/HandlerLogs/) } });
      }
      const ingest = one(s.template, 'AWS::Lambda::Function', isIngest);
      expect(ingest).toMatchObject({ MemorySize: 1536, Timeout: 120 });
      expect(ingest.ReservedConcurrentExecutions).toBeUndefined();
      // No reserved concurrency: an account whose quota is 10 cannot reserve any (runs are one at a
      // time by a run lease instead).
      const committer = one(s.template, 'AWS::Lambda::Function', isCommitter);
      expect(committer).toMatchObject({ MemorySize: 1024, Timeout: 300 });
      expect(committer.ReservedConcurrentExecutions).toBeUndefined();
      const maintenance = one(s.template, 'AWS::Lambda::Function', isMaintenance);
      expect(maintenance).toMatchObject({ MemorySize: 2048, Timeout: 600 });
      expect(maintenance.ReservedConcurrentExecutions).toBeUndefined();
      for (const role of Object.values(resources(s.template, 'AWS::IAM::Role'))) {
        expect(role.ManagedPolicyArns).toBeUndefined();
      }
    });

    it('the environment is wired and accepted by the handlers’ reader (lambdas/src/handlers/env.ts)', () => {
      for (const pred of [isIngest, isCommitter, isMaintenance]) {
        const fn = one(s.template, 'AWS::Lambda::Function', pred);
        const variables = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
        expect(JSON.parse(variables.FLOE_CONFIG as string)).toEqual({
          format: avro ? 'avro-gsr' : 'json',
          ...(avro ? { jsonFallback: true } : {}),
          namespace: 'floe',
          formatVersion: combo.tableFormatVersion,
          // S3 Tables: table storage refuses deletes; the service removes old metadata itself.
          ...(glue ? {} : { tableProperties: { 'write.metadata.delete-after-commit.enabled': 'false' } }),
        });
        expect(variables.PER_TABLE_METRICS).toBe('top:10');
        expect(variables.CATALOG_TYPE).toBe(combo.catalogType);
        expect(Object.keys(variables).sort()).toEqual(
          [
            'NODE_OPTIONS',
            'FLOE_CONFIG',
            'CATALOG_TYPE',
            glue ? 'WAREHOUSE_URI' : 'TABLE_BUCKET_ARN',
            'STAGING_URI',
            'DEAD_LETTER_URI',
            'LEDGER_TABLE',
            'PER_TABLE_METRICS',
            ...(avro ? ['SCHEMA_REGISTRY_NAME'] : []),
            // Floe's own compaction on Glue: the committer asks for it by file count.
            ...(pred === isCommitter && glue ? ['MAINTENANCE_FUNCTION'] : []),
            ...(pred === isCommitter
              ? [
                  'COMMIT_CONCURRENCY',
                  'COMMIT_SCHEDULE_MS',
                  'COMMIT_INTERVAL_MS',
                  'COMMIT_TABLES_PER_SLICE',
                  'COMMIT_MAX_SLICES',
                ]
              : []),
            ...(pred === isIngest ? [] : ['MAINTENANCE']),
            // Floe's own orphan cleanup (Glue); S3 Tables removes unreferenced files itself.
            ...(pred === isMaintenance && glue ? ['MAINTENANCE_ORPHANS_OLDER_THAN_MS'] : []),
            // The namespaces maintenance visits (the ones its role is granted).
            ...(pred === isMaintenance ? ['MAINTENANCE_NAMESPACES'] : []),
          ].sort(),
        );
        const settings = readSettings({ ...resolveEnvironment(variables), AWS_REGION: 'eu-west-1' });
        expect(settings.catalog.type).toBe(combo.catalogType);
        expect(settings.stagingUri).toMatch(/^s3:\/\/floe-storagestaging[0-9a-z]+\/staging$/);
        expect(settings.deadLetterUri).toMatch(/^s3:\/\/floe-storagestaging[0-9a-z]+\/dead-letters$/);
        expect(settings.config.formatVersion).toBe(combo.tableFormatVersion);
        if (avro) expect(settings.schemaRegistryName).toBe('Floe-schemas');
        expect(settings.maintenance).toMatchObject(
          pred === isIngest ? { mode: 'off', configured: false } : { mode: 'floe', configured: true },
        );
        if (pred === isMaintenance)
          expect(settings.maintenance.namespaces).toEqual({ names: ['floe'], prefixes: [] });
      }
    });

    it('the catalog: a Glue database, or an S3 Tables table bucket and namespace', () => {
      s.template.resourceCountIs('AWS::Glue::Database', glue ? 1 : 0);
      s.template.resourceCountIs('AWS::S3Tables::TableBucket', glue ? 0 : 1);
      s.template.resourceCountIs('AWS::S3Tables::Namespace', glue ? 0 : 1);
      // + the Athena results bucket
      s.template.resourceCountIs('AWS::S3::Bucket', glue ? 4 : 3);
      if (glue) {
        s.template.hasResourceProperties('AWS::Glue::Database', {
          DatabaseInput: { Name: 'floe', LocationUri: Match.anyValue() },
        });
      } else {
        s.template.hasResourceProperties('AWS::S3Tables::TableBucket', {
          TableBucketName: 'floe-tables',
          EncryptionConfiguration: { SSEAlgorithm: 'AES256' },
          UnreferencedFileRemoval: { Status: 'Enabled', UnreferencedDays: 30 },
        });
        s.template.hasResourceProperties('AWS::S3Tables::Namespace', {
          Namespace: 'floe',
          TableBucketARN: { 'Fn::GetAtt': [Match.stringLikeRegexp('^StorageTableBucket'), 'TableBucketARN'] },
        });
      }
    });

    it('a Glue Schema Registry only for Avro', () => {
      s.template.resourceCountIs('AWS::Glue::Registry', avro ? 1 : 0);
      if (avro) s.template.hasResourceProperties('AWS::Glue::Registry', { Name: 'Floe-schemas' });
    });

    it('least privilege: no wildcard actions, "*" only for glue:GetSchemaVersion, writes only for the committer', () => {
      for (const handler of ['Ingest', 'Committer'] as const) {
        const sts = statements(s, handler);
        for (const st of sts) {
          expect(st.Effect).toBe('Allow');
          for (const a of actionsOf(st)) expect(a).not.toMatch(/\*/);
          if (resourcesOf(st).includes('*')) expect(actionsOf(st)).toEqual(['glue:GetSchemaVersion']);
          const text = JSON.stringify(st.Resource);
          if (actionsOf(st).some((a) => a.startsWith('s3:') && a !== 's3:ListBucket')) {
            expect(text).toMatch(/\/(warehouse|staging|dead-letters)\/\*"/);
          }
          if (actionsOf(st).includes('s3:ListBucket')) {
            expect(st.Condition).toEqual({ StringLike: { 's3:prefix': expect.any(Array) } });
          }
          if (actionsOf(st).some((a) => a.startsWith('dynamodb:'))) {
            expect(text).toMatch(/StorageLedger/);
            expect(text).not.toMatch(/index\/\*/);
          }
          if (actionsOf(st).some((a) => a.startsWith('glue:') && a !== 'glue:GetSchemaVersion')) {
            expect(text).not.toMatch(/database\/\*|table\/\*"/);
          }
        }
        const actions = allActions(sts);
        expect(actions.has('glue:GetSchemaVersion')).toBe(avro);
        for (const a of [
          'glue:RegisterSchemaVersion',
          'glue:CreateSchema',
          'glue:GetDatabases',
          'dynamodb:DeleteItem',
        ])
          expect(actions.has(a)).toBe(false);
        const writes = glue
          ? ['glue:CreateTable', 'glue:UpdateTable', 'glue:CreateDatabase']
          : ['s3tables:CreateTable', 's3tables:UpdateTableMetadataLocation', 's3tables:CreateNamespace'];
        for (const a of writes) expect(actions.has(a)).toBe(handler === 'Committer');
        expect(actions.has('dynamodb:Scan')).toBe(handler === 'Committer');
        expect(actions.has(glue ? 'glue:GetTable' : 's3tables:GetTableMetadataLocation')).toBe(true);
        expect(actions.has(glue ? 's3tables:GetTableData' : 'glue:GetTable')).toBe(false);
      }
      const ingest = statements(s, 'Ingest');
      expect(allActions(ingest)).toContain('kinesis:GetRecords');
      expect(allActions(ingest)).toContain('sqs:SendMessage');
      expect(allActions(statements(s, 'Committer'))).not.toContain('kinesis:GetRecords');
    });

    it('cdk-nag AwsSolutions: no unacknowledged finding, every acknowledgment reasoned and needed', () => {
      expect(nagFindings(s.stack)).toEqual([]);
      const acks = acknowledgments(s.stack);
      expect(acks.length).toBeGreaterThan(0);
      const findings = allNagFindings(s.stack);
      for (const a of acks) {
        expect(a.id).toMatch(/^AwsSolutions-/);
        expect(a.reason.length, `${a.id} at ${a.path}`).toBeGreaterThanOrEqual(60);
        const used = findings.some((f) => f.startsWith(`${a.id} @ ${a.path}`));
        expect(used, `acknowledgment ${a.id} at ${a.path} matches no finding`).toBe(true);
      }
    });

    it('outputs for the CLI and Athena', () => {
      const outputs = Object.keys(s.template.findOutputs('*'));
      for (const o of [
        'Region',
        'StreamName',
        'StagingUri',
        'DeadLetterUri',
        'LedgerTableName',
        'GenerateCommand',
      ])
        expect(outputs).toContain(o);
      expect(outputs).toContain(glue ? 'DatabaseName' : 'NamespaceName');
      expect(outputs).toContain(glue ? 'WarehouseUri' : 'TableBucketArn');
      expect(outputs.includes('RegistryName')).toBe(avro);
      const generate = JSON.stringify(s.template.findOutputs('GenerateCommand'));
      expect(generate.includes('--format avro --registry-name Floe-schemas')).toBe(avro);
    });

    it('a format version 3 stack warns that Athena reads v2 only', () => {
      const warnings = s.app
        .synth()
        .getStackByName('Floe')
        .messages.filter((m) => m.level === 'warning');
      expect(warnings.some((w) => String(w.entry.data).includes('Athena'))).toBe(
        combo.tableFormatVersion === 3,
      );
    });
  },
);

describe('the default stack in detail', () => {
  let s: Synth;
  beforeAll(() => {
    s = synth();
  });

  it('the stream: on-demand, KMS-encrypted, 24 h', () => {
    s.template.hasResourceProperties('AWS::Kinesis::Stream', {
      StreamModeDetails: { StreamMode: 'ON_DEMAND' },
      StreamEncryption: { EncryptionType: 'KMS', KeyId: 'alias/aws/kinesis' },
      RetentionPeriodHours: 24,
    });
  });

  it('every bucket: public access blocked, encrypted, TLS-only policy, access logs (but the log bucket)', () => {
    const buckets = resources(s.template, 'AWS::S3::Bucket');
    for (const [id, b] of Object.entries(buckets)) {
      expect(b.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(b.BucketEncryption).toEqual({
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      });
      expect(b.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
      if (id.startsWith('StorageAccessLogs')) expect(b.LoggingConfiguration).toBeUndefined();
      else
        expect(b.LoggingConfiguration).toEqual({
          DestinationBucketName: { Ref: expect.stringMatching(/^StorageAccessLogs/) },
          LogFilePrefix: expect.any(String),
        });
    }
    const policies = Object.values(resources(s.template, 'AWS::S3::BucketPolicy'));
    expect(policies).toHaveLength(Object.keys(buckets).length);
    for (const p of policies) {
      const sts = (p.PolicyDocument as { Statement: (Statement & { Principal: unknown })[] }).Statement;
      expect(sts).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 's3:*',
          Principal: { AWS: '*' },
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
      expect(sts).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
      );
    }
  });

  it('lifecycle rules: staging orphans and dead letters expire, incomplete uploads are aborted', () => {
    const staging = one(s.template, 'AWS::S3::Bucket', (_p, id) => id.startsWith('StorageStaging'));
    expect((staging.LifecycleConfiguration as { Rules: unknown[] }).Rules).toEqual([
      {
        Id: 'abort-incomplete-uploads',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        Status: 'Enabled',
      },
      { Id: 'expire-orphaned-staging', Prefix: 'staging/', ExpirationInDays: 30, Status: 'Enabled' },
      { Id: 'expire-dead-letters', Prefix: 'dead-letters/', ExpirationInDays: 365, Status: 'Enabled' },
    ]);
    const warehouse = one(s.template, 'AWS::S3::Bucket', (_p, id) => id.startsWith('StorageWarehouse'));
    expect(JSON.stringify(warehouse.LifecycleConfiguration)).not.toMatch(/Expiration/);
  });

  it('the ledger table is exactly what createLedgerTable creates (+ on-demand, PITR, TTL)', async () => {
    const sent: { name: string; input: Record<string, unknown> }[] = [];
    const client = {
      send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
        sent.push({ name: command.constructor.name, input: command.input });
        if (command.constructor.name === 'DescribeTableCommand')
          return { Table: { TableStatus: 'ACTIVE', GlobalSecondaryIndexes: [{ IndexStatus: 'ACTIVE' }] } };
        if (command.constructor.name === 'DescribeTimeToLiveCommand')
          return { TimeToLiveDescription: { TimeToLiveStatus: 'DISABLED' } };
        return {};
      },
    } as unknown as DynamoDBClient;
    await createLedgerTable(client, 'ledger');
    const create = sent.find((c) => c.name === 'CreateTableCommand')!.input;
    const ttl = sent.find((c) => c.name === 'UpdateTimeToLiveCommand')!.input;

    const table = one(s.template, 'AWS::DynamoDB::Table');
    expect(table.KeySchema).toEqual(create.KeySchema);
    expect(table.AttributeDefinitions).toEqual(
      expect.arrayContaining(create.AttributeDefinitions as unknown[]),
    );
    expect(table.AttributeDefinitions).toHaveLength((create.AttributeDefinitions as unknown[]).length);
    expect(table.GlobalSecondaryIndexes).toEqual(create.GlobalSecondaryIndexes);
    expect(table.BillingMode).toBe(create.BillingMode);
    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.TimeToLiveSpecification).toEqual(ttl.TimeToLiveSpecification);
    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
  });

  it('the committer: rate(1 minute), no reservation, no async retries or queued runs', () => {
    s.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^CommitterHandlerFunction'), 'Arn'] },
          RetryPolicy: { MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 2 },
        }),
      ],
    });
    s.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: Match.stringLikeRegexp('^CommitterHandlerFunction') },
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 60,
    });
    // One run at a time without a reservation (a run lease; run-lease.ts): nothing to fail on quota.
    expect(
      one(s.template, 'AWS::Lambda::Function', isCommitter).ReservedConcurrentExecutions,
    ).toBeUndefined();
    for (const fn of Object.values(resources(s.template, 'AWS::Lambda::Function')))
      expect(fn.ReservedConcurrentExecutions).toBeUndefined();
  });

  it('the failed-batch queue: encrypted, TLS only', () => {
    s.template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 86_400,
    });
    s.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('data is retained by default', () => {
    for (const type of ['AWS::S3::Bucket', 'AWS::Glue::Database', 'AWS::DynamoDB::Table']) {
      for (const r of Object.values(s.template.findResources(type)))
        expect((r as { DeletionPolicy?: string }).DeletionPolicy).toBe('Retain');
    }
    for (const r of Object.values(s.template.findResources('AWS::Kinesis::Stream')))
      expect((r as { DeletionPolicy?: string }).DeletionPolicy).toBe('Delete');
  });

  it('alarms: iterator age, ingest errors, failed batches, dead letters, committer errors, commit and routing failures, freshness, lock age', () => {
    const alarms = Object.values(resources(s.template, 'AWS::CloudWatch::Alarm'));
    const byName = Object.fromEntries(alarms.map((a) => [a.AlarmName as string, a]));
    expect(Object.keys(byName).sort()).toEqual(
      [
        'CommitFailures',
        'CommitterErrors',
        'CommitterNearTimeout',
        'DeadLetters',
        'FailedBatches',
        'Freshness',
        'IngestErrors',
        'IteratorAge',
        'MaintenanceErrors',
        'MaintenanceFailures',
        'RoutingFailures',
        'SmallFiles',
        'TablesLocked',
      ].map((n) => `Floe-${n}`),
    );
    expect(byName['Floe-RoutingFailures']).toMatchObject({
      Namespace: 'Floe/Floe',
      MetricName: 'RoutingFailures',
      Statistic: 'Sum',
      Threshold: 1,
      EvaluationPeriods: 3,
    });
    expect(byName['Floe-IteratorAge']).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Statistic: 'Maximum',
      Threshold: 600_000,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: expect.stringMatching(/^IngestHandlerFunction/) } }],
    });
    expect(byName['Floe-DeadLetters']).toMatchObject({
      Namespace: 'Floe/Floe',
      MetricName: 'DeadLetters',
      Statistic: 'Sum',
      Threshold: 1,
    });
    expect(byName['Floe-Freshness']).toMatchObject({
      Namespace: 'Floe/Floe',
      MetricName: 'Freshness',
      Statistic: 'Maximum',
      Threshold: 900_000,
    });
    expect(byName['Floe-CommitterErrors']).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors' });
    expect(byName['Floe-CommitterNearTimeout']).toMatchObject({ MetricName: 'Duration', Threshold: 240_000 });
    expect(byName['Floe-FailedBatches']).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
    });
    // Without alarmTopicArn every alarm notifies (on alarm and OK) the topic the stack creates.
    const topics = Object.keys(resources(s.template, 'AWS::SNS::Topic'));
    expect(topics).toHaveLength(1);
    for (const a of alarms) {
      expect(a.AlarmActions).toEqual([{ Ref: topics[0] }]);
      expect(a.OKActions).toEqual([{ Ref: topics[0] }]);
    }
    // Encrypted with the AWS-managed SNS key.
    expect(
      JSON.stringify(Object.values(resources(s.template, 'AWS::SNS::Topic'))[0]!.KmsMasterKeyId),
    ).toContain('alias/aws/sns');
    s.template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });

  it('metric filters read the EMF metrics the handlers publish, from this stack’s log groups', () => {
    const filters = Object.values(resources(s.template, 'AWS::Logs::MetricFilter'));
    const seen = filters.map((f) => {
      const t = (f.MetricTransformations as Record<string, unknown>[])[0]!;
      // Totals from the run-level lines only; per-table series from the lines with a table.
      expect(f.FilterPattern).toBe(
        t.Dimensions === undefined
          ? `{ ($.${t.MetricName} >= 0) && ($.table NOT EXISTS) }`
          : `{ ($.${t.MetricName} >= 0) && ($.table = "*") }`,
      );
      expect(t).toMatchObject({ MetricNamespace: 'Floe/Floe', MetricValue: `$.${t.MetricName}` });
      const group = JSON.stringify(f.LogGroupName);
      const source = ['ingest', 'committer', 'maintenance'].find((h) =>
        group.includes(`${h[0]!.toUpperCase()}${h.slice(1)}HandlerLogs`),
      )!;
      const dims = t.Dimensions === undefined ? '' : `[${JSON.stringify(t.Dimensions)}]`;
      return `${t.MetricName}@${source}${dims}`;
    });
    expect(seen.sort()).toEqual(
      [
        'CommitFailures@committer',
        'RoutingFailures@committer',
        'DeadLetters@committer',
        'DeadLetters@ingest',
        'Freshness@committer',
        'RecordsIn@ingest',
        'RowsCommitted@committer',
        'TablesLocked@committer',
        'SmallFiles@maintenance',
        'MaintenanceFailures@maintenance',
        ...['DataFiles', 'AverageFileBytes', 'SmallFiles', 'Snapshots'].map(
          (n) => `${n}@maintenance[${JSON.stringify([{ Key: 'table', Value: '$.table' }])}]`,
        ),
      ].sort(),
    );
    // Each is a metric the handler of that log group publishes (EMF top-level key = metric name).
    for (const entry of seen) {
      const [name, source] = entry.replace(/\[.*$/, '').split('@') as [string, string];
      const code = readFileSync(join(PROJECT_ROOT, 'lambdas/src/handlers', `${source}.ts`), 'utf8');
      expect(code, entry).toContain(`['${name}', '`);
    }
  });
});

describe('options', () => {
  it('provisioned stream, customer managed key, destroy, alarm topic, no reserved concurrency', () => {
    const s = synth({
      streamMode: 'provisioned',
      shardCount: '3',
      streamRetentionHours: '48',
      streamEncryption: 'customer-managed',
      removalPolicy: 'destroy',
      alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops',
      committerReservedConcurrency: '0',
      commitIntervalMinutes: '5',
      batchSize: '500',
      batchingWindowSeconds: '0',
      retryAttempts: '3',
      maxRecordAgeSeconds: '-1',
      stagingExpirationDays: '0',
      deadLetterExpirationDays: '0',
    });
    s.template.hasResourceProperties('AWS::Kinesis::Stream', {
      ShardCount: 3,
      StreamModeDetails: { StreamMode: 'PROVISIONED' },
      RetentionPeriodHours: 48,
      StreamEncryption: {
        EncryptionType: 'KMS',
        KeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^StorageStreamKey'), 'Arn'] },
      },
    });
    s.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    const esm = one(s.template, 'AWS::Lambda::EventSourceMapping');
    expect(esm).toMatchObject({ BatchSize: 500, MaximumRetryAttempts: 3, ParallelizationFactor: 1 });
    expect(esm.MaximumRecordAgeInSeconds).toBeUndefined();
    expect(
      one(s.template, 'AWS::Lambda::Function', isCommitter).ReservedConcurrentExecutions,
    ).toBeUndefined();
    s.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    for (const a of Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')))
      expect(a.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:123456789012:ops']);
    for (const r of Object.values(s.template.findResources('AWS::S3::Bucket')))
      expect((r as { DeletionPolicy?: string }).DeletionPolicy).toBe('Delete');
    s.template.resourceCountIs('Custom::S3AutoDeleteObjects', 4);
    const staging = one(s.template, 'AWS::S3::Bucket', (_p, id) => id.startsWith('StorageStaging'));
    expect(JSON.stringify(staging.LifecycleConfiguration)).not.toMatch(/Expiration/);
    // The stream key is read through the event source mapping's grant.
    expect(allActions(statements(s, 'Ingest'))).toContain('kms:Decrypt');
    expect(nagFindings(s.stack)).toEqual([]);
  });

  it('compliance=strict: the stack’s own key for everything it stores, versioned buckets, a year of logs', () => {
    for (const catalogType of ['glue', 's3tables'] as const) {
      const s = synth({ compliance: 'strict', catalogType });
      const keys = Object.entries(resources(s.template, 'AWS::KMS::Key'));
      expect(keys).toHaveLength(1);
      const [keyId, key] = keys[0]!;
      expect(key.EnableKeyRotation).toBe(true);
      const keyArn = { 'Fn::GetAtt': [keyId, 'Arn'] };
      s.template.hasResourceProperties('AWS::Kinesis::Stream', {
        StreamEncryption: { EncryptionType: 'KMS', KeyId: keyArn },
      });
      const buckets = Object.entries(resources(s.template, 'AWS::S3::Bucket'));
      expect(buckets.length).toBeGreaterThanOrEqual(catalogType === 'glue' ? 4 : 3);
      for (const [id, b] of buckets) {
        expect(b.VersioningConfiguration, id).toEqual({ Status: 'Enabled' });
        expect(JSON.stringify(b.LifecycleConfiguration), id).toContain('"NoncurrentVersionExpiration"');
        const sse = (b.BucketEncryption as { ServerSideEncryptionConfiguration: Record<string, unknown>[] })
          .ServerSideEncryptionConfiguration[0];
        // Server access logs are delivered only to SSE-S3 buckets.
        if (id.startsWith('StorageAccessLogs'))
          expect(sse).toEqual({ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } });
        else
          expect(sse, id).toEqual({
            BucketKeyEnabled: true,
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: keyArn },
          });
      }
      expect(one(s.template, 'AWS::DynamoDB::Table').SSESpecification).toEqual({
        SSEEnabled: true,
        SSEType: 'KMS',
        KMSMasterKeyId: keyArn,
      });
      expect(one(s.template, 'AWS::SQS::Queue').KmsMasterKeyId).toEqual(keyArn);
      const logGroups = Object.values(resources(s.template, 'AWS::Logs::LogGroup'));
      expect(logGroups.length).toBeGreaterThanOrEqual(3);
      for (const lg of logGroups) {
        expect(lg.KmsKeyId).toEqual(keyArn);
        expect(lg.RetentionInDays).toBe(365);
      }
      expect(
        (one(s.template, 'AWS::Athena::WorkGroup').WorkGroupConfiguration as Record<string, unknown>)
          .ResultConfiguration,
      ).toMatchObject({ EncryptionConfiguration: { EncryptionOption: 'SSE_KMS', KmsKey: keyArn } });
      if (catalogType === 's3tables')
        expect(one(s.template, 'AWS::S3Tables::TableBucket').EncryptionConfiguration).toEqual({
          SSEAlgorithm: 'aws:kms',
          KMSKeyArn: keyArn,
        });
      // The key policy: CloudWatch Logs may use it, S3 Tables' maintenance on S3 Tables, and only
      // AWS services may create grants (CT.KMS.PR.3).
      const policy = JSON.stringify(key.KeyPolicy);
      expect(policy).toContain('kms:EncryptionContext:aws:logs:arn');
      expect(policy).toContain('"kms:GrantIsForAWSResource":"false"');
      expect(policy.includes('maintenance.s3tables.amazonaws.com')).toBe(catalogType === 's3tables');
      // The functions may use the key, and no other.
      for (const handler of ['Ingest', 'Committer'] as const) {
        const kms = statements(s, handler).filter((st) => actionsOf(st).some((a) => a.startsWith('kms:')));
        expect(allActions(kms)).toContain('kms:GenerateDataKey');
        expect(allActions(kms)).toContain('kms:Decrypt');
        for (const st of kms) expect(resourcesOf(st)).toEqual([keyArn]);
      }
      const analyst = one(s.template, 'AWS::IAM::ManagedPolicy', (_p, id) =>
        id.startsWith('AthenaAnalystPolicy'),
      );
      expect(JSON.stringify(analyst)).toContain('kms:Decrypt');
      expect(nagFindings(s.stack)).toEqual([]);
    }
  });

  it('-c vpcId -c vpcSubnets: the functions in the subnets, HTTPS out only, gateway endpoints on the route tables', () => {
    const vpc = {
      vpcId: 'vpc-0123456789abcdef0',
      vpcSubnets: 'subnet-0123456789abcdef0,subnet-0123456789abcdef1',
    };
    const s = synth({ ...vpc, vpcRouteTables: 'rtb-0123456789abcdef0,rtb-0123456789abcdef1' });
    const [sgId, sg] = Object.entries(resources(s.template, 'AWS::EC2::SecurityGroup'))[0]!;
    expect(sg).toMatchObject({
      VpcId: vpc.vpcId,
      SecurityGroupEgress: [{ IpProtocol: 'tcp', FromPort: 443, ToPort: 443, CidrIp: '0.0.0.0/0' }],
    });
    expect(sg.SecurityGroupIngress).toBeUndefined();
    const handlers = Object.entries(resources(s.template, 'AWS::Lambda::Function')).filter(
      ([id]) => !isCatalogProvider(id),
    );
    expect(handlers.map(([id]) => id.replace(/Handler.*$/, '')).sort()).toEqual([
      'Committer',
      'Ingest',
      'Maintenance',
    ]);
    for (const [id, fn] of handlers) {
      expect(fn.VpcConfig, id).toEqual({
        SubnetIds: vpc.vpcSubnets.split(','),
        SecurityGroupIds: [{ 'Fn::GetAtt': [sgId, 'GroupId'] }],
      });
    }
    const endpoints = Object.values(resources(s.template, 'AWS::EC2::VPCEndpoint'));
    expect(endpoints.map((e) => JSON.stringify(e.ServiceName)).sort()).toEqual([
      expect.stringContaining('.dynamodb'),
      expect.stringContaining('.s3'),
    ]);
    for (const e of endpoints)
      expect(e).toMatchObject({
        VpcEndpointType: 'Gateway',
        VpcId: vpc.vpcId,
        RouteTableIds: ['rtb-0123456789abcdef0', 'rtb-0123456789abcdef1'],
      });
    for (const handler of ['Ingest', 'Committer'] as const)
      expect(allActions(statements(s, handler))).toContain('ec2:CreateNetworkInterface');
    expect(nagFindings(s.stack)).toEqual([]);
    // Without route tables: no endpoints, and a warning that the subnets need routes of their own.
    const bare = synth(vpc);
    bare.template.resourceCountIs('AWS::EC2::VPCEndpoint', 0);
    const warnings = bare.app
      .synth()
      .getStackByName('Floe')
      .messages.filter((m) => m.level === 'warning');
    expect(warnings.some((w) => String(w.entry.data).includes('gateway endpoint'))).toBe(true);
    // And without -c vpcSubnets, no VPC at all.
    expect(
      Object.values(resources(synth({}).template, 'AWS::Lambda::Function')).every(
        (f) => f.VpcConfig === undefined,
      ),
    ).toBe(true);
  });

  it('routing and partition options reach FLOE_CONFIG', () => {
    const s = synth({
      appType: 'dynamic-avro',
      routingField: 'kind',
      partitionCandidates: 'day(ts)',
      avroRouteBy: 'fields',
    });
    const variables = (one(s.template, 'AWS::Lambda::Function', isIngest).Environment as { Variables: Props })
      .Variables;
    expect(JSON.parse(variables.FLOE_CONFIG as string)).toMatchObject({
      routing: { routingField: 'kind', avroRouteBy: 'fields' },
      partitioning: { candidates: ['day(ts)'] },
    });
  });
});

describe('bin/cdk.ts (the app cdk.json runs)', () => {
  const run = (context: Record<string, unknown>) => {
    const outdir = mkdtempSync(join(tmpdir(), 'floe-cdk-app-'));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bin/cdk.ts'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: { ...process.env, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify(context) },
      timeout: 60_000,
    });
    return { ...r, outdir };
  };

  it('synthesizes with cdk-nag registered and passing', () => {
    const r = run({
      'aws:cdk:bundling-stacks': [],
      appType: 'dynamic-avro',
      catalogType: 's3tables',
      stackName: 'FloeApp',
    });
    expect(r.stderr).not.toMatch(/AwsSolutions-/);
    expect(r.status).toBe(0);
    expect(existsSync(join(r.outdir, 'FloeApp.template.json'))).toBe(true);
  });

  it('stops with the context error and no stack trace', () => {
    const r = run({ appType: 'dynamo', tableFormatVersion: 4 });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`context 'appType': expected one of dynamic, dynamic-avro, got "dynamo"`);
    expect(r.stderr).toContain(`context 'tableFormatVersion': expected one of 2, 3, got 4`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
