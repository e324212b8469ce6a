/**
 * Athena out of the box and per-table metrics at a chosen cost (issue #14), in the synthesized
 * template: the workgroup (engine v3, enforced, encrypted results in a bucket of its own with a
 * lifecycle), the saved queries of the README, the analysts' managed policy (read only), the
 * outputs, S3 Tables' `s3tablescatalog` integration (the one custom resource: Glue CreateCatalog),
 * and `perTableMetrics` reaching the functions and the stack's metric filters.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { acknowledgments, one, resources, type Synth, synth } from './helpers.ts';

type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
};
const actionsOf = (st: Statement): string[] => (Array.isArray(st.Action) ? st.Action : [st.Action]);
const resourcesOf = (st: Statement): unknown[] => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]);

/** `Fn::Join` joined, references as `<Ref>` / `<Id.Attr>`. */
function text(v: unknown): string {
  if (typeof v === 'string') return v;
  const o = v as Record<string, unknown>;
  if ('Fn::Join' in o) {
    const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
    return parts.map(text).join(sep);
  }
  if ('Ref' in o) return `<${String(o.Ref)}>`;
  if ('Fn::GetAtt' in o) return `<${(o['Fn::GetAtt'] as string[]).join('.')}>`;
  return JSON.stringify(v);
}

function analystStatements(s: Synth): Statement[] {
  const policy = one(s.template, 'AWS::IAM::ManagedPolicy', (_p, id) => id.startsWith('AthenaAnalystPolicy'));
  return (policy.PolicyDocument as { Statement: Statement[] }).Statement;
}

describe.each(['glue', 's3tables'] as const)('catalogType=%s', (catalogType) => {
  const glue = catalogType === 'glue';
  const s = synth({ catalogType });

  it('a workgroup: engine v3, settings enforced, results encrypted in the stack’s results bucket', () => {
    const wg = one(s.template, 'AWS::Athena::WorkGroup');
    expect(wg).toMatchObject({
      Name: 'Floe',
      State: 'ENABLED',
      WorkGroupConfiguration: {
        EngineVersion: { SelectedEngineVersion: 'Athena engine version 3' },
        EnforceWorkGroupConfiguration: true,
        PublishCloudWatchMetricsEnabled: true,
        ResultConfiguration: { EncryptionConfiguration: { EncryptionOption: 'SSE_S3' } },
      },
    });
    const location = text(
      (wg.WorkGroupConfiguration as { ResultConfiguration: { OutputLocation: unknown } }).ResultConfiguration
        .OutputLocation,
    );
    expect(location).toMatch(/^s3:\/\/<AthenaResults[0-9A-F]+>\/results\/$/);
    const bucket = one(s.template, 'AWS::S3::Bucket', (_p, id) => id.startsWith('AthenaResults'));
    expect(bucket.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket.PublicAccessBlockConfiguration).toMatchObject({
      BlockPublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket.LoggingConfiguration).toMatchObject({ LogFilePrefix: 'athena-results/' });
    expect((bucket.LifecycleConfiguration as { Rules: unknown[] }).Rules).toEqual([
      {
        Id: 'abort-incomplete-uploads',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        Status: 'Enabled',
      },
      { Id: 'expire-query-results', Prefix: 'results/', ExpirationInDays: 30, Status: 'Enabled' },
    ]);
  });

  it('the README’s queries are saved in the workgroup, naming the stack’s catalog', () => {
    const queries = Object.values(resources(s.template, 'AWS::Athena::NamedQuery'));
    expect(queries.map((q) => q.Name).sort()).toEqual(
      [
        'data files',
        'history',
        'revenue by region, last 7 days',
        'rows per table',
        'snapshots',
        'time travel, 10 minutes ago',
      ].map((n) => `Floe: ${n}`),
    );
    const table = glue ? '"floe"."order_events"' : '"s3tablescatalog/floe-tables"."floe"."order_events"';
    for (const q of queries) {
      expect(q.WorkGroup).toEqual({ Ref: expect.stringMatching(/^AthenaWorkGroup/) });
      expect(q.Database).toBe('floe');
      expect(String(q.QueryString)).toContain(table.replace(/"$/, ''));
    }
    const snapshots = queries.find((q) => q.Name === 'Floe: snapshots')!;
    expect(snapshots.QueryString).toContain(table.replace(/"$/, '$snapshots"'));
  });

  it('an analyst policy: queries in this workgroup, results, and read-only access to catalog and tables', () => {
    const sts = analystStatements(s);
    const all = sts.flatMap(actionsOf);
    // Read only: the one write is a query result under results/.
    const writes = all.filter(
      (a) =>
        /:(Put|Create|Update|Delete|Batch(Create|Update|Delete))/.test(a) &&
        a !== 'athena:BatchGetQueryExecution' &&
        a !== 'athena:BatchGetNamedQuery',
    );
    expect(writes).toEqual(['s3:PutObject']);
    const put = sts.find((st) => actionsOf(st).includes('s3:PutObject'))!;
    expect(resourcesOf(put).map(text)).toEqual([
      expect.stringMatching(/^<AthenaResults[0-9A-F]+\.Arn>\/results\/\*$/),
    ]);
    expect(all).toContain('athena:StartQueryExecution');
    const start = sts.find((st) => actionsOf(st).includes('athena:StartQueryExecution'))!;
    expect(resourcesOf(start).map(text)).toEqual([
      expect.stringMatching(/:workgroup\/<AthenaWorkGroup[0-9A-F]+>$/),
    ]);
    // "*" only for the console's pickers (and S3 Tables' Lake Formation credential vending).
    for (const st of sts)
      if (resourcesOf(st).includes('*'))
        expect(
          actionsOf(st).every((a) =>
            ['athena:ListWorkGroups', 'athena:ListDataCatalogs', 'lakeformation:GetDataAccess'].includes(a),
          ),
        ).toBe(true);
    if (glue) {
      expect(all).toEqual(expect.arrayContaining(['glue:GetTable', 'glue:GetDatabase', 's3:GetObject']));
      const files = sts.find((st) => st.Sid === 'ReadTableFiles')!;
      expect(resourcesOf(files).map(text)).toEqual([
        expect.stringMatching(/StorageWarehouse.*\/warehouse\/\*$/),
      ]);
    } else {
      expect(all).toEqual(
        expect.arrayContaining([
          'glue:GetCatalog',
          's3tables:GetTableData',
          's3tables:GetTableMetadataLocation',
        ]),
      );
      const catalog = sts.find((st) => st.Sid === 'ReadFederatedCatalog')!;
      const arns = resourcesOf(catalog).map(text);
      expect(arns.some((a) => a.endsWith(':catalog/s3tablescatalog/floe-tables'))).toBe(true);
      expect(arns.some((a) => a.endsWith(':table/s3tablescatalog/floe-tables/floe/*'))).toBe(true);
      const tables = sts.find((st) => st.Sid === 'ReadTables')!;
      expect(tables.Condition).toEqual({ StringEquals: { 's3tables:namespace': 'floe' } });
    }
    // Every wildcard of the policy carries its reason.
    expect(
      acknowledgments(s.stack).filter((a) => a.path === 'Floe/Athena/AnalystPolicy').length,
    ).toBeGreaterThan(2);
  });

  it('outputs: the workgroup, its catalog, the analyst policy, the saved queries', () => {
    const outputs = s.template.findOutputs('*');
    for (const o of [
      'AthenaWorkGroup',
      'AthenaCatalog',
      'AthenaResultsBucketName',
      'AnalystPolicyArn',
      'AthenaNamedQueryIds',
    ])
      expect(Object.keys(outputs)).toContain(o);
    expect(outputs.AthenaCatalog!.Value).toBe(glue ? 'AwsDataCatalog' : 's3tablescatalog/floe-tables');
    expect(outputs.AnalystPolicyArn!.Value).toEqual({ Ref: expect.stringMatching(/^AthenaAnalystPolicy/) });
    expect(text(outputs.AthenaNamedQueryIds!.Value).split(',')).toHaveLength(6);
  });

  it(`S3 Tables' analytics integration: ${glue ? 'none on Glue' : 'Glue CreateCatalog of s3tablescatalog, never deleted'}`, () => {
    const custom = resources(s.template, 'Custom::S3TablesCatalog');
    expect(Object.keys(custom)).toHaveLength(glue ? 0 : 1);
    if (glue) return;
    const r = Object.values(custom)[0]!;
    const create = JSON.parse(text(r.Create).replace(/<AWS::(\w+)>/g, 'X')) as Record<string, unknown>;
    expect(create).toMatchObject({
      service: 'Glue',
      action: 'CreateCatalog',
      parameters: {
        Name: 's3tablescatalog',
        CatalogInput: {
          FederatedCatalog: { Identifier: 'arn:X:s3tables:X:X:bucket/*', ConnectionName: 'aws:s3tables' },
          CreateDatabaseDefaultPermissions: [
            { Principal: { DataLakePrincipalIdentifier: 'IAM_ALLOWED_PRINCIPALS' }, Permissions: ['ALL'] },
          ],
          AllowFullTableExternalDataAccess: 'True',
        },
      },
      ignoreErrorCodesMatching: 'AlreadyExistsException',
    });
    expect(r.Delete).toBeUndefined();
    expect(r.InstallLatestAwsSdk).toBe(false);
    // Its provider may create and read that catalog and pass the s3tables connection; nothing else.
    const policy = one(s.template, 'AWS::IAM::Policy', (_p, id) =>
      id.startsWith('AthenaS3TablesCatalogCustomResourcePolicy'),
    );
    const sts = (policy.PolicyDocument as { Statement: Statement[] }).Statement;
    expect(sts.flatMap(actionsOf).sort()).toEqual([
      'glue:CreateCatalog',
      'glue:GetCatalog',
      'glue:PassConnection',
    ]);
    expect(sts.flatMap(resourcesOf).map(text).sort()).toEqual([
      expect.stringMatching(/:glue:.*:catalog$/),
      expect.stringMatching(/:glue:.*:catalog\/s3tablescatalog$/),
      expect.stringMatching(/:glue:.*:connection\/aws:s3tables$/),
    ]);
    const role = one(s.template, 'AWS::IAM::Role', (_p, id) => id.startsWith('AthenaS3TablesCatalogRole'));
    expect(role.ManagedPolicyArns).toBeUndefined();
    // The catalog exists before the table bucket's tables are queried: after the bucket.
    s.template.hasResource('Custom::S3TablesCatalog', {
      DependsOn: Match.arrayWith([Match.stringLikeRegexp('^StorageTableBucket')]),
    });
  });
});

describe('Athena options', () => {
  it('s3TablesCatalog=skip leaves the integration to the account; results expire as asked', () => {
    const s = synth({ catalogType: 's3tables', s3TablesCatalog: 'skip', athenaResultsExpirationDays: '7' });
    s.template.resourceCountIs('Custom::S3TablesCatalog', 0);
    expect(
      JSON.stringify(one(s.template, 'AWS::S3::Bucket', (_p, id) => id.startsWith('AthenaResults'))),
    ).toContain('"ExpirationInDays":7');
    expect(() => synth({ s3TablesCatalog: 'ensure' })).toThrow(
      /s3TablesCatalog': only applies to catalogType=s3tables/,
    );
  });
});

describe('perTableMetrics=on|off|top:N', () => {
  const perTableFilters = (s: Synth) =>
    Object.values(resources(s.template, 'AWS::Logs::MetricFilter')).filter(
      (f) => (f.MetricTransformations as { Dimensions?: unknown }[])[0]!.Dimensions !== undefined,
    );
  const env = (s: Synth) =>
    Object.values(resources(s.template, 'AWS::Lambda::Function'))
      .filter(
        (f) => (f.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.FLOE_CONFIG,
      )
      .map((f) => (f.Environment as { Variables: Record<string, unknown> }).Variables.PER_TABLE_METRICS);

  it.each([
    [{}, 'top:10', 4],
    [{ perTableMetrics: 'on' }, 'on', 4],
    [{ perTableMetrics: 'top:3' }, 'top:3', 4],
    [{ perTableMetrics: 'off' }, 'off', 0],
  ] as const)(
    '%j: PER_TABLE_METRICS=%s in every function, %i per-table filters',
    (context, value, filters) => {
      const s = synth(context);
      expect(env(s)).toEqual([value, value, value]);
      expect(perTableFilters(s)).toHaveLength(filters);
      const dashboard = JSON.stringify(one(s.template, 'AWS::CloudWatch::Dashboard').DashboardBody);
      expect(dashboard.includes('SEARCH(')).toBe(filters > 0);
      // The alarms read the totals whatever the setting.
      expect(
        Object.values(resources(s.template, 'AWS::CloudWatch::Alarm')).map((a) => a.AlarmName),
      ).toContain('Floe-SmallFiles');
    },
  );

  it('a bad value stops synth', () => {
    expect(() => synth({ perTableMetrics: 'some' })).toThrow(/perTableMetrics': expected on, off or top:N/);
  });
});
