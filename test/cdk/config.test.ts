/**
 * CDK context → settings (`lib/config.ts`): defaults, the Floe configuration handed to the Lambdas,
 * and clear errors naming the context key and value for everything invalid.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lambdas/src/config.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { type FloeSettings, namespaceFrom, readFloeSettings } from '../../lib/config.ts';

function settings(context: Record<string, unknown>, cwd?: string): FloeSettings {
  return readFloeSettings((k) => context[k], Object.keys(context), cwd);
}

/** The error message for `context` (fails if the context is accepted). */
function problems(context: Record<string, unknown>): string {
  try {
    settings(context);
  } catch (e) {
    expect(e).toBeInstanceOf(FloeError);
    expect((e as FloeError).kind).toBe(ErrorKind.ConfigInvalid);
    return (e as FloeError).message;
  }
  throw new Error(`context accepted: ${JSON.stringify(context)}`);
}

describe('defaults', () => {
  it('a JSON stream into Glue, format version 2, namespace from the stack name', () => {
    const s = settings({});
    expect(s.appType).toBe('dynamic');
    expect(s.catalogType).toBe('glue');
    expect(s.tableFormatVersion).toBe(2);
    expect(s.stackName).toBe('Floe');
    expect(s.namespace).toBe('floe');
    expect(JSON.parse(s.floeConfigJson)).toEqual({ format: 'json', namespace: 'floe', formatVersion: 2 });
    expect(s.floeConfig.format).toBe('json');
    expect(s.registryName).toBeUndefined();
    expect(s.stream).toEqual({ mode: 'on-demand', retentionHours: 24, encryption: 'aws-managed' });
    expect(s.ingest).toEqual({
      batchSize: 10_000,
      batchingWindowSeconds: 15,
      retryAttempts: 10,
      maxRecordAgeSeconds: 86_400,
      memoryMb: 1536,
      timeoutSeconds: 120,
    });
    expect(s.committer).toEqual({
      intervalMinutes: 1,
      intervalSeconds: 60,
      tablesPerSlice: 250,
      maxSlices: 20,
      memoryMb: 1024,
      timeoutSeconds: 300,
      commitConcurrency: 8,
      // No reservation: an account whose concurrency quota is 10 cannot reserve any.
      reservedConcurrency: 0,
    });
    expect(s.storage).toMatchObject({
      stagingExpirationDays: 30,
      deadLetterExpirationDays: 365,
      removal: 'retain',
    });
    expect(s.warnings).toEqual([]);
  });

  it('dynamic-avro: format avro-gsr with the JSON fallback, a registry named after the stack', () => {
    const s = settings({ appType: 'dynamic-avro', stackName: 'Lake' });
    expect(JSON.parse(s.floeConfigJson)).toEqual({
      format: 'avro-gsr',
      jsonFallback: true,
      namespace: 'lake',
      formatVersion: 2,
    });
    expect(s.registryName).toBe('Lake-schemas');
    expect(settings({ appType: 'dynamic-avro', jsonFallback: 'false' }).floeConfig.jsonFallback).toBe(false);
  });

  it('s3tables: a table bucket named after the stack; format version 3 is allowed, with a warning', () => {
    const s = settings({ catalogType: 's3tables', tableFormatVersion: '3', stackName: 'My-Lake' });
    expect(s.storage.tableBucketName).toBe('my-lake-tables');
    expect(s.namespace).toBe('my_lake');
    expect(s.floeConfig.formatVersion).toBe(3);
    expect(s.warnings).toEqual([expect.stringContaining('Athena')]);
  });

  it('numbers and booleans from cdk.json are accepted like -c strings', () => {
    const a = settings({ tableFormatVersion: 3, batchSize: 500, streamMode: 'provisioned', shardCount: 4 });
    const b = settings({
      tableFormatVersion: '3',
      batchSize: '500',
      streamMode: 'provisioned',
      shardCount: '4',
    });
    expect(a).toEqual(b);
    expect(a.stream).toEqual({
      mode: 'provisioned',
      shardCount: 4,
      retentionHours: 24,
      encryption: 'aws-managed',
    });
  });

  it('namespaces derived from stack names are legal', () => {
    expect(namespaceFrom('Floe')).toBe('floe');
    expect(namespaceFrom('My--Lake 2')).toBe('my_lake_2');
    expect(namespaceFrom('AwsLake')).toBe('floe_awslake');
    for (const n of ['Floe', 'My--Lake 2', 'AwsLake', 'X'])
      expect(() => parseConfig({ namespace: namespaceFrom(n) })).not.toThrow();
  });
});

describe('namespaces, metrics and Athena settings', () => {
  it('the namespaces IAM grants: the stack’s, a template’s literal one, allowedNamespaces for a variable one', () => {
    expect(settings({}).namespaces).toEqual({ names: ['floe'], prefixes: [] });
    expect(settings({ tableTemplate: 'analytics.{source}_events' }).namespaces).toEqual({
      names: ['floe', 'analytics'],
      prefixes: [],
    });
    const v = settings({ tableTemplate: '{tenant}.orders', allowedNamespaces: 'acme, globex ,tenant_*' });
    expect(v.namespaces).toEqual({ names: ['floe', 'acme', 'globex'], prefixes: ['tenant_'] });
    // The Lambdas hold routing to them: a guard in their configuration.
    expect(JSON.parse(v.floeConfigJson).guards.allowTables).toBe(
      '[a-z0-9_]+|(?:floe|acme|globex|tenant_[a-z0-9_]*)\\.[a-z0-9_]+',
    );
    expect(v.floeConfig.guards?.allowTables).toBe(JSON.parse(v.floeConfigJson).guards.allowTables);
  });

  it('per-table metrics default to top:10; S3 Tables ensures s3tablescatalog; results kept 30 days', () => {
    const s = settings({});
    expect(s.perTableMetrics).toEqual({ mode: 'top', n: 10 });
    expect(s.athena).toEqual({ resultsExpirationDays: 30 });
    expect(settings({ perTableMetrics: 'off' }).perTableMetrics).toEqual({ mode: 'off' });
    expect(settings({ catalogType: 's3tables' }).athena).toEqual({
      resultsExpirationDays: 30,
      s3TablesCatalog: 'ensure',
    });
    // S3 Tables: new tables clean no metadata up (table storage refuses deletes).
    expect(JSON.parse(settings({ catalogType: 's3tables' }).floeConfigJson).tableProperties).toEqual({
      'write.metadata.delete-after-commit.enabled': 'false',
    });
    expect(JSON.parse(settings({}).floeConfigJson).tableProperties).toBeUndefined();
  });
});

describe('routing and partitioning (DESIGN §6) from context', () => {
  it('context keys overlay the configuration document', () => {
    const s = settings({
      floeConfig: JSON.stringify({
        routing: { routingField: 'type' },
        inference: { detectTimestamps: false },
      }),
      tableSuffix: '_t',
      defaultTable: 'none',
      tableTemplate: '{source}_{type}',
      allowList: 'a_t, b_t',
      partitionCandidates: 'event_date,bucket[8](user_id)',
    });
    expect(s.floeConfig.routing).toMatchObject({
      routingField: 'type',
      suffix: '_t',
      defaultTable: null,
      template: '{source}_{type}',
      allowList: ['a_t', 'b_t'],
    });
    expect(s.floeConfig.partitioning.candidates).toEqual(['event_date', 'bucket[8](user_id)']);
    expect(s.floeConfig.inference.detectTimestamps).toBe(false);
    // What the Lambdas get parses to the same configuration.
    expect(parseConfig(JSON.parse(s.floeConfigJson))).toEqual(s.floeConfig);
  });

  it('floeConfig carries upsert tables to the Lambdas (issue 13: configuration only)', () => {
    const upsert = {
      customers: { key: ['id'], envelope: 'debezium' },
      orders: { key: ['tenant', 'order_id'], operationField: 'op' },
    };
    const s = settings({ floeConfig: JSON.stringify({ upsert }) });
    expect(s.floeConfig.upsert).toEqual(upsert);
    expect(parseConfig(JSON.parse(s.floeConfigJson)).upsert).toEqual(upsert);
    expect(problems({ floeConfig: JSON.stringify({ upsert: { customers: { key: [] } } }) })).toContain(
      "config key 'upsert.customers.key'",
    );
  });

  it('floeConfigFile is read relative to the working directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-cdk-config-'));
    writeFileSync(join(dir, 'floe.config.json'), JSON.stringify({ routing: { tableField: 'table' } }));
    const s = settings({ floeConfigFile: 'floe.config.json' }, dir);
    expect(s.floeConfig.routing.tableField).toBe('table');
  });

  it('tableSuffix=none means no suffix; avroRouteBy applies to Avro', () => {
    expect(settings({ tableSuffix: 'none' }).floeConfig.routing.suffix).toBe('');
    expect(settings({ appType: 'dynamic-avro', avroRouteBy: 'fields' }).floeConfig.routing.avroRouteBy).toBe(
      'fields',
    );
  });
});

describe('invalid context: one error naming every key and value', () => {
  it.each([
    [{ appType: 'dynamo' }, `context 'appType': expected one of dynamic, dynamic-avro, got "dynamo"`],
    [{ catalogType: 'hive' }, `context 'catalogType': expected one of glue, s3tables, got "hive"`],
    [{ tableFormatVersion: '4' }, `context 'tableFormatVersion': expected one of 2, 3, got "4"`],
    [{ tableFormatVersion: 1 }, `context 'tableFormatVersion': expected one of 2, 3, got 1`],
    [{ apptype: 'dynamic' }, `context 'apptype': unknown key (did you mean 'appType'?)`],
    [{ 'batch-size': '10' }, `context 'batch-size': unknown key (did you mean 'batchSize'?)`],
    [{ colour: 'blue' }, `context 'colour': unknown key (Floe reads appType, catalogType`],
    [{ shardCount: '2' }, `context 'shardCount': only applies to streamMode=provisioned`],
    [
      { streamMode: 'provisioned', shardCount: '0' },
      `context 'shardCount': expected an integer from 1 to 10000, got "0"`,
    ],
    [{ batchSize: '20000' }, `context 'batchSize': expected an integer from 1 to 10000, got "20000"`],
    [{ batchSize: '1.5' }, `context 'batchSize': expected an integer from 1 to 10000, got "1.5"`],
    [{ batchingWindowSeconds: '301' }, `context 'batchingWindowSeconds': expected an integer from 0 to 300`],
    [
      { maxRecordAgeSeconds: '30' },
      `context 'maxRecordAgeSeconds': expected an integer from 60 to 604800 (or -1)`,
    ],
    [{ streamRetentionHours: '200' }, `context 'streamRetentionHours': expected an integer from 24 to 168`],
    [
      { stagingExpirationDays: '3' },
      `context 'stagingExpirationDays': expected an integer from 7 to 3650 (or 0)`,
    ],
    [{ logRetentionDays: '10' }, `context 'logRetentionDays': expected one of 1, 3, 5, 7, 14, 30`],
    [{ jsonFallback: 'true' }, `context 'jsonFallback': only applies to appType=dynamic-avro`],
    [
      { appType: 'dynamic-avro', jsonFallback: 'yes' },
      `context 'jsonFallback': expected true or false, got "yes"`,
    ],
    [{ registryName: 'r' }, `context 'registryName': only applies to appType=dynamic-avro`],
    [{ tableBucketName: 'b' }, `context 'tableBucketName': only applies to catalogType=s3tables`],
    [
      { catalogType: 's3tables', tableBucketName: 'Bad_Name' },
      `context 'tableBucketName': expected 3-63 of [a-z0-9-]`,
    ],
    [{ namespace: 'Has-Dash' }, `context 'namespace': config key 'namespace': expected [a-z0-9_]`],
    [
      { namespace: 'default' },
      `context 'namespace': 'default' is Athena's and Glue's shared default database`,
    ],
    [{ stackName: '1floe' }, `context 'stackName': expected a CloudFormation stack name`],
    [{ tableSuffix: '-x' }, `context 'tableSuffix': config key 'routing.suffix'`],
    [{ tableTemplate: 'x_{' }, `context 'tableTemplate': config key 'routing.template'`],
    [
      { partitionCandidates: 'bogus[3](x)' },
      `context 'partitionCandidates': config key 'partitioning.candidates[0]'`,
    ],
    [{ floeConfig: '{not json' }, `context 'floeConfig': is not JSON`],
    [{ floeConfig: '[1]' }, `context 'floeConfig': expected a JSON object`],
    [
      { floeConfig: '{"routing":{"sufix":"_x"}}' },
      `context 'floeConfig': config key 'routing.sufix': unknown key`,
    ],
    [
      { floeConfig: '{"format":"json"}', appType: 'dynamic-avro' },
      `its format "json" contradicts appType=dynamic-avro`,
    ],
    [{ floeConfig: '{"formatVersion":3}' }, `its formatVersion 3 contradicts tableFormatVersion=2`],
    [{ floeConfig: '{"namespace":"a"}', namespace: 'b' }, `its namespace "a" contradicts namespace=b`],
    [{ floeConfigFile: '/nonexistent/floe.config.json' }, `context 'floeConfigFile': cannot read the file`],
    [
      { floeConfig: '{}', floeConfigFile: 'x.json' },
      `give either 'floeConfig' or 'floeConfigFile', not both`,
    ],
    [{ alarmTopicArn: 'topic' }, `context 'alarmTopicArn': expected an SNS topic ARN, got "topic"`],
    [
      { removalPolicy: 'snapshot' },
      `context 'removalPolicy': expected one of retain, destroy, got "snapshot"`,
    ],
    [
      { streamEncryption: 'none' },
      `context 'streamEncryption': expected one of aws-managed, customer-managed`,
    ],
    [{ compliance: 'pci' }, `context 'compliance': expected one of default, strict, got "pci"`],
    [
      { vpcSubnets: 'subnet-0123456789abcdef0' },
      `context 'vpcId': give both -c vpcId and -c vpcSubnets to place the functions in a VPC`,
    ],
    [
      { vpcId: 'vpc-0123456789abcdef0', vpcSubnets: 'sn-1' },
      `context 'vpcSubnets': expected subnet ids (subnet-…), comma-separated, got "sn-1"`,
    ],
    [
      { vpcRouteTables: 'rtb-0123456789abcdef0' },
      `context 'vpcRouteTables': only applies with -c vpcSubnets`,
    ],
    [
      { compliance: 'strict', streamEncryption: 'aws-managed' },
      `context 'streamEncryption': compliance=strict encrypts the stream with the stack’s key`,
    ],
    [
      { committerReservedConcurrency: '2' },
      `context 'committerReservedConcurrency': expected an integer from 0 to 1`,
    ],
    [
      { tableTemplate: '{tenant}.orders' },
      `context 'tableTemplate': routing template '{tenant}.orders' takes its namespace from the data, so IAM cannot name the namespaces it reaches: give -c allowedNamespaces=a,b,c`,
    ],
    [
      { tableTemplate: '{tenant}.orders', allowedNamespaces: 'Acme,aws_x,a*' },
      `context 'allowedNamespaces': expected namespaces ([a-z0-9_], not starting with 'aws') or prefixes ending in * (tenant_*), got "Acme,aws_x,a*"`,
    ],
    [
      { allowedNamespaces: 'acme' },
      `context 'allowedNamespaces': only applies when the routing template takes its namespace from the data`,
    ],
    [
      {
        catalogType: 's3tables',
        floeConfig: '{"tableProperties":{"write.metadata.delete-after-commit.enabled":"true"}}',
      },
      `must be "false" on S3 Tables: table storage refuses deletes`,
    ],
    [
      { perTableMetrics: 'top:0' },
      `context 'perTableMetrics': expected on, off or top:N (N from 1 to 1000), got "top:0"`,
    ],
    [{ perTableMetrics: 'all' }, `context 'perTableMetrics': expected on, off or top:N`],
    [
      { athenaResultsExpirationDays: '0' },
      `context 'athenaResultsExpirationDays': expected an integer from 1 to 3650`,
    ],
    [{ s3TablesCatalog: 'skip' }, `context 's3TablesCatalog': only applies to catalogType=s3tables`],
    [
      { catalogType: 's3tables', s3TablesCatalog: 'create' },
      `context 's3TablesCatalog': expected one of ensure, skip, got "create"`,
    ],
  ])('%j', (context, message) => {
    expect(problems(context)).toContain(message);
  });

  it('lists every problem at once', () => {
    const message = problems({ appType: 'x', catalogType: 'y', tableFormatVersion: '9' });
    expect(message.split('\n').filter((l) => l.startsWith('  - '))).toHaveLength(3);
  });

  it('rejects a configuration too large for the Lambda environment (4 KB)', () => {
    const hints = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`column_${i}`, 'decimal(12,2)']));
    expect(problems({ floeConfig: JSON.stringify({ inference: { hints: { '*': hints } } }) })).toContain(
      'Lambda allows 4 KB for all environment variables',
    );
  });

  it('keys CDK itself uses are not mistaken for typos', () => {
    expect(() =>
      settings({
        '@aws-cdk/core:newStyleStackSynthesis': true,
        'aws:cdk:bundling-stacks': [],
        'availability-zones:account=123456789012:region=eu-west-1': ['a'],
        'acknowledged-issue-numbers': [32775],
      }),
    ).not.toThrow();
  });
});

describe('maintenance (-c maintenance=floe|glue|off and its keys)', () => {
  const DAY = 86_400_000;

  it('defaults: Floe maintains hourly; orphans after 3 days; services keep unreferenced files as long as staging', () => {
    expect(settings({}).maintenance).toEqual({
      mode: 'floe',
      deployFunction: true,
      schedule: 'rate(1 hour)',
      intervalMinutes: 60,
      orphansOlderThanMs: 3 * DAY,
      unreferencedDays: 30,
      memoryMb: 2048,
      timeoutSeconds: 600,
      smallFilesAlarmFiles: 1000,
    });
    expect(settings({ catalogType: 's3tables' }).maintenance.mode).toBe('floe');
    expect(settings({ maintenance: 'off' }).maintenance.deployFunction).toBe(false);
    expect(settings({ stagingExpirationDays: '0' }).maintenance.unreferencedDays).toBeUndefined();
  });

  it('schedules, durations, sizes and thresholds are parsed', () => {
    const m = settings({
      maintenance: 'floe',
      maintenanceSchedule: 'rate(6 hours)',
      maintenanceRetainLast: '5',
      maintenanceExpireOlderThan: '2d',
      maintenanceOrphansOlderThan: '6w',
      maintenanceTargetFileSize: '256MiB',
      maintenanceMemoryMb: 4096,
      maintenanceTimeoutSeconds: '900',
      smallFilesAlarmFiles: '250',
    }).maintenance;
    expect(m).toMatchObject({
      schedule: 'rate(6 hours)',
      intervalMinutes: 360,
      retainLast: 5,
      expireOlderThanMs: 2 * DAY,
      orphansOlderThanMs: 42 * DAY,
      unreferencedDays: 42,
      targetFileSizeBytes: 256 * 1024 * 1024,
      memoryMb: 4096,
      timeoutSeconds: 900,
      smallFilesAlarmFiles: 250,
    });
    const cron = settings({ maintenanceSchedule: 'cron(0 3 * * ? *)' }).maintenance;
    expect(cron.schedule).toBe('cron(0 3 * * ? *)');
    expect(cron.intervalMinutes).toBeUndefined();
    expect(settings({ maintenanceSchedule: 'rate(1 day)' }).maintenance.intervalMinutes).toBe(1440);
    expect(
      settings({ maintenanceTargetFileSize: String(64 * 1024 * 1024) }).maintenance.targetFileSizeBytes,
    ).toBe(64 * 1024 * 1024);
  });

  it("glue: Glue's orphan deletion waits as long as staging; an explicit shorter age says so", () => {
    const s = settings({ maintenance: 'glue', maintenanceOrphansOlderThan: '3d' });
    expect(s.maintenance.unreferencedDays).toBe(30);
    expect(s.warnings).toEqual([
      expect.stringContaining('keeps files 30 days (stagingExpirationDays), not 3'),
    ]);
    expect(settings({ maintenance: 'glue' }).warnings).toEqual([]);
  });

  it.each([
    [{ maintenance: 'sometimes' }, `context 'maintenance': expected one of floe, glue, off, got "sometimes"`],
    [
      { catalogType: 's3tables', maintenance: 'glue' },
      `context 'maintenance': 'glue' turns on the Glue Data Catalog's table optimizers, which do not apply to S3 Tables`,
    ],
    [
      { maintenanceSchedule: 'every hour' },
      `context 'maintenanceSchedule': expected an EventBridge schedule`,
    ],
    [
      { maintenanceSchedule: 'rate(1 hours)' },
      `context 'maintenanceSchedule': expected an EventBridge schedule`,
    ],
    [
      { maintenanceSchedule: 'rate(2 minutes)' },
      `context 'maintenanceSchedule': runs at most every 5 minutes`,
    ],
    [
      { maintenanceExpireOlderThan: '5 days' },
      `context 'maintenanceExpireOlderThan': expected a whole number and a unit s, m, h, d or w (e.g. 12h, 5d, 2w), got "5 days"`,
    ],
    [
      { maintenanceOrphansOlderThan: '30m' },
      `context 'maintenanceOrphansOlderThan': must be at least 1h, got "30m"`,
    ],
    [
      { maintenanceRetainLast: '0' },
      `context 'maintenanceRetainLast': expected an integer from 1 to 1000, got "0"`,
    ],
    [
      { maintenanceTargetFileSize: '12XB' },
      `context 'maintenanceTargetFileSize': expected a size from 1MiB to 4GiB`,
    ],
    [
      { catalogType: 's3tables', maintenanceTargetFileSize: '1GiB' },
      `context 'maintenanceTargetFileSize': S3 Tables compacts to 64MiB–512MiB, got "1GiB"`,
    ],
    [
      { maintenance: 'glue', maintenanceTargetFileSize: '256MiB' },
      `context 'maintenanceTargetFileSize': Glue's compaction reads each table's write.target-file-size-bytes`,
    ],
    [
      { maintenance: 'off', maintenanceSchedule: 'rate(1 hour)' },
      `context 'maintenanceSchedule': only applies when a maintenance function is deployed (maintenance=floe or glue)`,
    ],
    [
      { maintenance: 'off', maintenanceRetainLast: '3' },
      `context 'maintenanceRetainLast': nothing maintains the tables with maintenance=off on the Glue catalog`,
    ],
    [{ maintenanceMemoryMb: '100' }, `context 'maintenanceMemoryMb': expected an integer from 512 to 10240`],
    [
      { maintenanceTimeoutSeconds: '901' },
      `context 'maintenanceTimeoutSeconds': expected an integer from 60 to 900`,
    ],
    [{ smallFilesAlarmFiles: '0' }, `context 'smallFilesAlarmFiles': expected an integer from 1 to 10000000`],
    [{ Maintenance: 'floe' }, `context 'Maintenance': unknown key (did you mean 'maintenance'?)`],
  ])('%j', (context, message) => {
    expect(problems(context)).toContain(message);
  });

  it('S3 Tables takes thresholds with maintenance=off (its own maintenance is always configured)', () => {
    const m = settings({
      catalogType: 's3tables',
      maintenance: 'off',
      maintenanceRetainLast: '4',
    }).maintenance;
    expect(m).toMatchObject({ mode: 'off', deployFunction: false, retainLast: 4 });
  });

  it("the committer's maintenance variables count against the 4 KB environment", () => {
    const hints = Object.fromEntries(Array.from({ length: 110 }, (_, i) => [`column_${i}`, 'decimal(12,2)']));
    const floeConfig = JSON.stringify({ inference: { hints: { '*': hints } } });
    const size = Buffer.byteLength(
      JSON.stringify({ ...JSON.parse(floeConfig), format: 'json', namespace: 'floe', formatVersion: 2 }),
    );
    expect(size).toBeGreaterThan(3_100);
    expect(size).toBeLessThan(3_250);
    expect(() => settings({ floeConfig })).not.toThrow();
    expect(problems({ floeConfig, maintenance: 'glue' })).toContain(
      'Lambda allows 4 KB for all environment variables',
    );
  });
});
