/**
 * Table maintenance in the stack, for every `maintenance` value × catalog type: the maintenance
 * function and its schedule (or none), the Glue optimizer role and what it may do, least-privilege
 * IAM of the maintenance function and the committer's additions, the environment (accepted by the
 * handlers' reader), the S3 Tables bucket's unreferenced-file removal, the alarms, and cdk-nag.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { readSettings } from '../../lambdas/src/handlers/env.ts';
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

const DAY = 86_400_000;
const isCommitter = (_p: Props, id: string) => id.startsWith('CommitterHandler');
const isMaintenance = (_p: Props, id: string) => id.startsWith('MaintenanceHandler');
const actionsOf = (st: Statement): string[] => (Array.isArray(st.Action) ? st.Action : [st.Action]);

function statements(s: Synth, prefix: string): Statement[] {
  return Object.entries(resources(s.template, 'AWS::IAM::Policy'))
    .filter(([id]) => id.startsWith(prefix))
    .flatMap(([, p]) => (p.PolicyDocument as { Statement: Statement[] }).Statement);
}
const actions = (s: Synth, prefix: string) => new Set(statements(s, prefix).flatMap(actionsOf));
const bySid = (s: Synth, prefix: string, sid: string) =>
  statements(s, prefix).find((st) => (st as { Sid?: string }).Sid === sid);

function variables(s: Synth, pred: (p: Props, id: string) => boolean): Record<string, unknown> {
  return (
    one(s.template, 'AWS::Lambda::Function', pred).Environment as { Variables: Record<string, unknown> }
  ).Variables;
}

/** CloudFormation references replaced by plausible values. */
function resolve(variables: Record<string, unknown>): Record<string, string> {
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
      const [res, attr] = o['Fn::GetAtt'] as [string, string];
      if (attr === 'TableBucketARN') return 'arn:aws:s3tables:eu-west-1:123456789012:bucket/floe-tables';
      if (attr === 'Arn' && res.startsWith('GlueOptimizerRole'))
        return 'arn:aws:iam::123456789012:role/floe-optimizers';
    }
    throw new Error(`unexpected value ${JSON.stringify(v)}`);
  };
  return Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, value(v)]));
}

const CASES = [
  { catalogType: 'glue', maintenance: 'floe' },
  { catalogType: 'glue', maintenance: 'glue' },
  { catalogType: 'glue', maintenance: 'off' },
  { catalogType: 's3tables', maintenance: 'floe' },
  { catalogType: 's3tables', maintenance: 'off' },
] as const;

describe.each(CASES)('catalogType=$catalogType maintenance=$maintenance', (c) => {
  let s: Synth;
  const glue = c.catalogType === 'glue';
  const deployed = c.maintenance !== 'off';
  const optimizers = glue && c.maintenance === 'glue';
  const floe = glue && c.maintenance === 'floe';
  beforeAll(() => {
    s = synth({ ...c });
  });

  it('the maintenance function and its schedule exist unless maintenance=off', () => {
    const fns = Object.keys(resources(s.template, 'AWS::Lambda::Function'));
    expect(fns.some((id) => isMaintenance({}, id))).toBe(deployed);
    const rules = Object.values(resources(s.template, 'AWS::Events::Rule'));
    const maintenanceRules = rules.filter((r) =>
      JSON.stringify(r.Targets).includes('MaintenanceHandlerFunction'),
    );
    expect(maintenanceRules).toHaveLength(deployed ? 1 : 0);
    if (!deployed) return;
    expect(maintenanceRules[0]).toMatchObject({
      ScheduleExpression: 'rate(1 hour)',
      State: 'ENABLED',
      Targets: [
        expect.objectContaining({ RetryPolicy: { MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 2 } }),
      ],
    });
    const fn = one(s.template, 'AWS::Lambda::Function', isMaintenance);
    expect(fn).toMatchObject({ MemorySize: 2048, Timeout: 600, Architectures: ['arm64'] });
    // One run at a time by a run lease, not a reservation a 10-quota account cannot grant.
    expect(fn.ReservedConcurrentExecutions).toBeUndefined();
    s.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: Match.stringLikeRegexp('^MaintenanceHandlerFunction') },
      MaximumRetryAttempts: 0,
    });
    expect(Object.keys(s.template.findOutputs('*'))).toContain('MaintenanceFunctionName');
  });

  it('environments: what each function needs, accepted by the handlers’ reader', () => {
    const committer = variables(s, isCommitter);
    const expectedCommitter = optimizers
      ? { MAINTENANCE: 'glue', MAINTENANCE_ORPHANS_OLDER_THAN_MS: String(30 * DAY) }
      : { MAINTENANCE: c.maintenance };
    expect(
      Object.fromEntries(Object.entries(committer).filter(([k]) => /^(MAINTENANCE|GLUE_)/.test(k))),
    ).toEqual({
      ...expectedCommitter,
      // Floe's own compaction on Glue: the committer asks for it by file count.
      ...(c.catalogType === 'glue' && c.maintenance === 'floe'
        ? { MAINTENANCE_FUNCTION: { Ref: expect.stringMatching(/^MaintenanceHandler/) } }
        : {}),
      ...(optimizers
        ? { GLUE_OPTIMIZER_ROLE_ARN: expect.anything(), GLUE_CATALOG_ID: { Ref: 'AWS::AccountId' } }
        : {}),
    });
    const read = readSettings({ ...resolve(committer), AWS_REGION: 'eu-west-1' }).maintenance;
    expect(read).toMatchObject({ mode: c.maintenance, configured: true });
    if (optimizers) {
      expect(committer.GLUE_OPTIMIZER_ROLE_ARN).toEqual({
        'Fn::GetAtt': [expect.stringMatching(/^GlueOptimizerRole/), 'Arn'],
      });
      expect(read.glueOptimizers).toEqual({
        roleArn: 'arn:aws:iam::123456789012:role/floe-optimizers',
        catalogId: '123456789012',
      });
      expect(read.orphansOlderThanMs).toBe(30 * DAY);
    }
    if (!deployed) return;
    const maintenance = variables(s, isMaintenance);
    const m = readSettings({ ...resolve(maintenance), AWS_REGION: 'eu-west-1' }).maintenance;
    expect(m.mode).toBe(c.maintenance);
    // The namespaces it visits: the ones its role is granted (here the stack's; test/cdk/namespaces.test.ts).
    expect(maintenance.MAINTENANCE_NAMESPACES).toBe('floe');
    expect(m.namespaces).toEqual({ names: ['floe'], prefixes: [] });
    if (floe) expect(maintenance.MAINTENANCE_ORPHANS_OLDER_THAN_MS).toBe(String(3 * DAY));
    if (!glue) expect(maintenance.MAINTENANCE_ORPHANS_OLDER_THAN_MS).toBeUndefined();
    // The ingest knows nothing of maintenance.
    expect(Object.keys(variables(s, (_p, id) => id.startsWith('IngestHandler')))).not.toContain(
      'MAINTENANCE',
    );
  });

  it('the Glue optimizer role: only for maintenance=glue, trusted by Glue, as AWS documents it', () => {
    const roles = Object.entries(resources(s.template, 'AWS::IAM::Role')).filter(([id]) =>
      id.startsWith('GlueOptimizerRole'),
    );
    expect(roles).toHaveLength(optimizers ? 1 : 0);
    if (!optimizers) return;
    expect(roles[0]![1].AssumeRolePolicyDocument).toMatchObject({
      Statement: [
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'glue.amazonaws.com' } },
      ],
    });
    const prefix = 'GlueOptimizerRoleDefaultPolicy';
    expect(actionsOf(bySid(s, prefix, 'TableFiles')!).sort()).toEqual([
      's3:DeleteObject',
      's3:GetObject',
      's3:PutObject',
    ]);
    expect(JSON.stringify(bySid(s, prefix, 'TableFiles')!.Resource)).toMatch(
      /StorageWarehouse.*\/warehouse\/\*/,
    );
    expect(actionsOf(bySid(s, prefix, 'ListTableFiles')!)).toEqual(['s3:ListBucket']);
    expect(actionsOf(bySid(s, prefix, 'Tables')!)).toEqual(['glue:GetTable', 'glue:UpdateTable']);
    expect(JSON.stringify(bySid(s, prefix, 'Tables')!.Resource)).toContain(':table/floe/*');
    const logs = bySid(s, prefix, 'OptimizerLogs')!;
    expect(actionsOf(logs)).toEqual(['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents']);
    for (const g of ['iceberg-compaction', 'iceberg-retention', 'iceberg-orphan-file-deletion'])
      expect(JSON.stringify(logs.Resource)).toContain(`:log-group:/aws-glue/${g}/logs:*`);
    expect(Object.keys(s.template.findOutputs('*'))).toContain('GlueOptimizerRoleArn');
  });

  it('least privilege for the maintenance function and the committer’s managed setup', () => {
    const committer = actions(s, 'CommitterHandlerRoleDefaultPolicy');
    for (const a of ['glue:CreateTableOptimizer', 'glue:UpdateTableOptimizer', 'iam:PassRole'])
      expect(committer.has(a), a).toBe(optimizers);
    expect(committer.has('s3tables:PutTableMaintenanceConfiguration')).toBe(!glue);
    if (optimizers) {
      expect(bySid(s, 'CommitterHandlerRoleDefaultPolicy', 'PassOptimizerRole')).toMatchObject({
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/^GlueOptimizerRole/), 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'glue.amazonaws.com' } },
      });
    }
    if (!deployed) {
      expect(statements(s, 'MaintenanceHandlerRoleDefaultPolicy')).toEqual([]);
      return;
    }
    const sts = statements(s, 'MaintenanceHandlerRoleDefaultPolicy');
    const has = actions(s, 'MaintenanceHandlerRoleDefaultPolicy');
    for (const st of sts) {
      for (const a of actionsOf(st)) expect(a).not.toMatch(/\*/);
      expect(JSON.stringify(st.Resource)).not.toContain('"*"');
      // No staging bucket: maintenance never reads fragments or dead letters.
      expect(JSON.stringify(st.Resource)).not.toMatch(/StorageStaging/);
    }
    for (const a of [
      'glue:CreateTable',
      'glue:CreateDatabase',
      's3tables:CreateTable',
      's3tables:PutTableData',
      's3tables:UpdateTableMetadataLocation',
      'dynamodb:Scan',
      'dynamodb:DeleteItem',
    ])
      expect(has.has(a), a).toBe(false);
    // Floe's own maintenance rewrites and deletes; the others only read (and write the log).
    for (const a of [
      's3:PutObject',
      's3:DeleteObject',
      's3:ListBucket',
      'glue:UpdateTable',
      'dynamodb:UpdateItem',
    ])
      expect(has.has(a), a).toBe(floe);
    expect(has.has('dynamodb:Query')).toBe(true);
    expect(has.has('dynamodb:PutItem')).toBe(true);
    const stagedIndex = bySid(s, 'MaintenanceHandlerRoleDefaultPolicy', 'LedgerStagedIndex');
    if (floe) expect(JSON.stringify(stagedIndex?.Resource)).toContain('/index/staged');
    else expect(stagedIndex).toBeUndefined();
    for (const a of ['glue:BatchGetTableOptimizer', 'glue:CreateTableOptimizer', 'iam:PassRole'])
      expect(has.has(a), a).toBe(optimizers);
    for (const a of [
      's3tables:GetTableMaintenanceConfiguration',
      's3tables:PutTableMaintenanceConfiguration',
    ])
      expect(has.has(a), a).toBe(!glue);
    expect(has.has(glue ? 's3:GetObject' : 's3tables:GetTableData')).toBe(true);
  });

  it('S3 Tables: the bucket removes unreferenced files after the staging expiry, whatever maintenance says', () => {
    s.template.resourceCountIs('AWS::S3Tables::TableBucket', glue ? 0 : 1);
    if (!glue)
      s.template.hasResourceProperties('AWS::S3Tables::TableBucket', {
        UnreferencedFileRemoval: { Status: 'Enabled', UnreferencedDays: 30, NoncurrentDays: 10 },
      });
  });

  it('alarms: small files, maintenance failures and errors, with the function', () => {
    const alarms = Object.fromEntries(
      Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')).map((a) => [a.AlarmName as string, a]),
    );
    for (const n of ['SmallFiles', 'MaintenanceFailures', 'MaintenanceErrors'])
      expect(`Floe-${n}` in alarms, n).toBe(deployed);
    if (!deployed) return;
    expect(alarms['Floe-SmallFiles']).toMatchObject({
      Namespace: 'Floe/Floe',
      MetricName: 'SmallFiles',
      Statistic: 'Maximum',
      Period: 3600,
      Threshold: 1000,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(alarms['Floe-MaintenanceFailures']).toMatchObject({
      MetricName: 'MaintenanceFailures',
      Statistic: 'Sum',
    });
    expect(alarms['Floe-MaintenanceErrors']).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors' });
  });

  it('cdk-nag AwsSolutions: no unacknowledged finding, every acknowledgment needed', () => {
    expect(nagFindings(s.stack)).toEqual([]);
    const findings = allNagFindings(s.stack);
    for (const a of acknowledgments(s.stack)) {
      const used = findings.some((f) => f.startsWith(`${a.id} @ ${a.path}`));
      expect(used, `acknowledgment ${a.id} at ${a.path} matches no finding`).toBe(true);
    }
  });
});

describe('maintenance options', () => {
  it('schedule, thresholds and alarm threshold reach the function, its rule and the alarm', () => {
    const s = synth({
      maintenanceSchedule: 'rate(6 hours)',
      maintenanceRetainLast: '3',
      maintenanceExpireOlderThan: '2d',
      maintenanceOrphansOlderThan: '4d',
      maintenanceTargetFileSize: '256MiB',
      maintenanceMemoryMb: '3008',
      maintenanceTimeoutSeconds: '900',
      smallFilesAlarmFiles: '200',
      leaseSeconds: '300',
    });
    s.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(6 hours)' });
    expect(one(s.template, 'AWS::Lambda::Function', isMaintenance)).toMatchObject({
      MemorySize: 3008,
      Timeout: 900,
    });
    const env = variables(s, isMaintenance);
    expect(env).toMatchObject({
      MAINTENANCE: 'floe',
      MAINTENANCE_RETAIN_LAST: '3',
      MAINTENANCE_EXPIRE_OLDER_THAN_MS: String(2 * DAY),
      MAINTENANCE_ORPHANS_OLDER_THAN_MS: String(4 * DAY),
      MAINTENANCE_TARGET_FILE_SIZE_BYTES: String(256 * 1024 * 1024),
      LEASE_MS: '300000',
    });
    const alarm = Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')).find(
      (a) => a.AlarmName === 'Floe-SmallFiles',
    )!;
    expect(alarm).toMatchObject({ Threshold: 200, Period: 21_600, EvaluationPeriods: 3 });
  });

  it('a cron schedule: daily alarm periods, two of them', () => {
    const s = synth({ maintenanceSchedule: 'cron(0 3 * * ? *)' });
    s.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'cron(0 3 * * ? *)' });
    const alarm = Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')).find(
      (a) => a.AlarmName === 'Floe-SmallFiles',
    )!;
    expect(alarm).toMatchObject({ Period: 86_400, EvaluationPeriods: 2, DatapointsToAlarm: 2 });
  });

  it("S3 Tables: the service's values from the thresholds; a longer orphan age delays unreferenced-file removal", () => {
    const s = synth({
      catalogType: 's3tables',
      maintenanceRetainLast: '4',
      maintenanceExpireOlderThan: '36h',
      maintenanceOrphansOlderThan: '45d',
    });
    expect(variables(s, isCommitter)).toMatchObject({
      MAINTENANCE: 'floe',
      MAINTENANCE_RETAIN_LAST: '4',
      MAINTENANCE_EXPIRE_OLDER_THAN_MS: String(36 * 3_600_000),
    });
    s.template.hasResourceProperties('AWS::S3Tables::TableBucket', {
      UnreferencedFileRemoval: { Status: 'Enabled', UnreferencedDays: 45 },
    });
  });

  it('no reservation for maintenance when the committer gets none; one each when asked', () => {
    const s = synth({ committerReservedConcurrency: '0' });
    expect(
      one(s.template, 'AWS::Lambda::Function', isMaintenance).ReservedConcurrentExecutions,
    ).toBeUndefined();
    const reserved = synth({ committerReservedConcurrency: '1' });
    expect(one(reserved.template, 'AWS::Lambda::Function', isMaintenance).ReservedConcurrentExecutions).toBe(
      1,
    );
    expect(one(reserved.template, 'AWS::Lambda::Function', isCommitter).ReservedConcurrentExecutions).toBe(1);
  });
});
