/**
 * IAM from the configuration (issue #14): the stack grants exactly the namespaces its routing can
 * reach — the stack's, a template's literal one (`analytics.{event_type}_events`), consolidation
 * rules' (`rides`), and for a template whose namespace comes from the data (`{tenant}.orders`) the
 * names and prefixes of `-c allowedNamespaces` — in every role and policy that touches the
 * catalog (the maintenance function's too, which is told the same list), on Glue and on S3
 * Tables, and nothing wider. Without `allowedNamespaces` such a template
 * stops synth with a message saying so; with it, the Lambdas dead-letter records routed elsewhere
 * (the product's own router and record rules judge them here).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lambdas/src/config.ts';
import { RecordRules } from '../../lambdas/src/engine/record-rules.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { readMaintenanceEnv } from '../../lambdas/src/handlers/maintenance-env.ts';
import type { Catalog } from '../../lambdas/src/ports/catalog.ts';
import { compileRouter } from '../../lambdas/src/routing/route.ts';
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

type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, string | string[]>>;
};

const actionsOf = (st: Statement): string[] => (Array.isArray(st.Action) ? st.Action : [st.Action]);
const resourcesOf = (st: Statement): unknown[] => (Array.isArray(st.Resource) ? st.Resource : [st.Resource]);

/** A resource as text: `Fn::Join` joined, references as `<Ref>` / `<Id.Attr>`. */
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

/** Every statement of the policies whose logical id starts with `prefix` (managed ones too). */
function statements(s: Synth, prefix: string): Statement[] {
  return [
    ...Object.entries(resources(s.template, 'AWS::IAM::Policy')),
    ...Object.entries(resources(s.template, 'AWS::IAM::ManagedPolicy')),
  ]
    .filter(([id]) => id.startsWith(prefix))
    .flatMap(([, p]) => (p.PolicyDocument as { Statement: Statement[] }).Statement);
}

/** The namespaces (patterns) of the Glue database and table ARNs the statements name. */
function glueNamespaces(sts: Statement[]): Set<string> {
  const out = new Set<string>();
  for (const st of sts)
    for (const r of resourcesOf(st)) {
      const t = text(r);
      const m = /:(?:database|table)\/(?:s3tablescatalog\/[^/]+\/)?([^/]+)/.exec(t);
      if (t.includes(':glue:') && m) out.add(m[1]!);
    }
  return out;
}

/** The `s3tables:namespace` values of the statements with S3 Tables actions (all must have one). */
function s3TablesNamespaces(sts: Statement[]): Set<string> {
  const out = new Set<string>();
  for (const st of sts) {
    const actions = actionsOf(st).filter((a) => a.startsWith('s3tables:'));
    if (actions.length === 0) continue;
    // Bucket-level calls without a namespace: CreateNamespace (IAM has no key for it) and reads.
    if (
      actions.every((a) =>
        ['s3tables:CreateNamespace', 's3tables:GetTableBucket', 's3tables:ListNamespaces'].includes(a),
      )
    )
      continue;
    const cond =
      st.Condition?.StringEquals?.['s3tables:namespace'] ?? st.Condition?.StringLike?.['s3tables:namespace'];
    expect(cond, `${st.Sid}: ${actions.join(', ')} without an s3tables:namespace condition`).toBeDefined();
    for (const v of Array.isArray(cond) ? cond : [cond!]) out.add(v);
    if (st.Condition?.StringEquals !== undefined) for (const v of [cond].flat()) expect(v).not.toContain('*');
  }
  return out;
}

/** The maintenance function's environment (values that are references left out). */
function maintenanceEnv(s: Synth): Record<string, string> {
  const fn = one(s.template, 'AWS::Lambda::Function', (_p, id) => id.startsWith('MaintenanceHandler'));
  const vars = (fn.Environment as { Variables: Record<string, unknown> }).Variables;
  return Object.fromEntries(
    Object.entries(vars).filter((e): e is [string, string] => typeof e[1] === 'string'),
  );
}

/** `MAINTENANCE_NAMESPACES` as the handler reads it (failing on any problem with it). */
function readMaintenanceNamespaces(env: Record<string, string>) {
  return readMaintenanceEnv(
    (n) => (n === 'MAINTENANCE_NAMESPACES' ? env[n] : undefined),
    (_v, message) => {
      throw new Error(message);
    },
    'glue',
    (v) => JSON.stringify(v),
  ).namespaces;
}

const ROLES = {
  ingest: 'IngestHandlerRoleDefaultPolicy',
  committer: 'CommitterHandlerRoleDefaultPolicy',
  maintenance: 'MaintenanceHandlerRoleDefaultPolicy',
  optimizers: 'GlueOptimizerRoleDefaultPolicy',
  analysts: 'AthenaAnalystPolicy',
} as const;

/** The documented examples, and what each must grant. */
const EXAMPLES = [
  { name: 'default routing', context: {}, granted: ['floe'] },
  {
    name: 'README template analytics.{source}_events',
    context: { tableTemplate: 'analytics.{source}_events' },
    granted: ['floe', 'analytics'],
  },
  {
    name: 'literal namespace in mixed case',
    context: { tableTemplate: 'Analytics.{event_type}_events' },
    granted: ['floe', 'analytics'],
  },
  {
    name: 'README template {tenant}.orders with allowedNamespaces',
    context: { tableTemplate: '{tenant}.orders', allowedNamespaces: 'acme,globex,tenant_*' },
    granted: ['floe', 'acme', 'globex', 'tenant_*'],
  },
  {
    name: 'README consolidation rule with namespace rides',
    context: {
      floeConfig: JSON.stringify({
        consolidate: [
          {
            table: 'driver_ride_activity',
            namespace: 'rides',
            discriminators: ['event_type', 'ride_type'],
            variantColumn: '{ride_type}_ride_attributes',
          },
        ],
      }),
    },
    granted: ['floe', 'rides'],
  },
] as const;

describe.each(['glue', 's3tables'] as const)('catalogType=%s', (catalogType) => {
  const glue = catalogType === 'glue';
  it.each(EXAMPLES)('$name: every role reaches exactly $granted', ({ context, granted }) => {
    const s = synth({ catalogType, ...context, ...(glue ? { maintenance: 'glue' } : {}) });
    const expected = new Set<string>(granted);
    const of = (sts: Statement[]) => (glue ? glueNamespaces(sts) : s3TablesNamespaces(sts));
    // The maintenance function visits every namespace the configuration reaches: the same scope.
    for (const role of ['ingest', 'committer', 'maintenance', 'analysts'] as const)
      expect(of(statements(s, ROLES[role])), role).toEqual(expected);
    // … and is told which (MAINTENANCE_NAMESPACES), read back by the handler as names and prefixes.
    const env = maintenanceEnv(s);
    expect(env.MAINTENANCE_NAMESPACES).toBe(granted.join(','));
    expect(readMaintenanceNamespaces(env)).toEqual({
      names: granted.filter((g) => !g.endsWith('*')),
      prefixes: granted.filter((g) => g.endsWith('*')).map((g) => g.slice(0, -1)),
    });
    // Listing namespaces only to match a prefix; on S3 Tables the stack's bucket only.
    const prefixed = granted.some((g) => g.endsWith('*'));
    const lists = statements(s, ROLES.maintenance).filter((st) =>
      actionsOf(st).some((a) => a === 'glue:GetDatabases' || a === 's3tables:ListNamespaces'),
    );
    expect(lists.length, 'namespace listing').toBe(prefixed ? 1 : 0);
    if (prefixed && !glue)
      expect(text(lists[0]!.Resource)).toMatch(/^<StorageTableBucket[^>]*\.TableBucketARN>$/);
    for (const role of ['ingest', 'committer'] as const)
      for (const st of statements(s, ROLES[role]))
        expect(actionsOf(st), role).not.toEqual(
          expect.arrayContaining([expect.stringMatching(/^(glue:GetDatabases|s3tables:ListNamespaces)$/)]),
        );
    if (glue) expect(glueNamespaces(statements(s, ROLES.optimizers))).toEqual(expected);
    else {
      // S3 Tables' own maintenance is set up by the committer on every table it creates.
      const setUp = statements(s, ROLES.committer).find((st) => st.Sid === 'TableMaintenance')!;
      expect(s3TablesNamespaces([setUp])).toEqual(expected);
    }
    // Nothing wider anywhere: no Glue database or table wildcard but the granted prefixes.
    for (const [id, p] of [
      ...Object.entries(resources(s.template, 'AWS::IAM::Policy')),
      ...Object.entries(resources(s.template, 'AWS::IAM::ManagedPolicy')),
    ]) {
      const found = glueNamespaces((p.PolicyDocument as { Statement: Statement[] }).Statement);
      for (const ns of found) expect(expected.has(ns), `${id}: ${ns}`).toBe(true);
    }
    expect(s.template.findOutputs('Namespaces').Namespaces?.Value).toBe(granted.join(','));
    expect(nagFindings(s.stack)).toEqual([]);
  });
});

describe('a namespace taken from the data', () => {
  it('stops synth naming allowedNamespaces when the template has a {placeholder} namespace', () => {
    const fail = (context: Record<string, unknown>) => {
      try {
        synth(context);
      } catch (e) {
        expect(e).toBeInstanceOf(FloeError);
        expect((e as FloeError).kind).toBe(ErrorKind.ConfigInvalid);
        return (e as FloeError).message;
      }
      throw new Error('synth succeeded');
    };
    const message = fail({ tableTemplate: '{tenant}.orders' });
    expect(message).toContain("context 'tableTemplate'");
    expect(message).toContain('-c allowedNamespaces=a,b,c');
    expect(message).toContain('{tenant}.orders');
    // The same from a floe.config.json, and for a partly literal namespace.
    expect(fail({ floeConfig: '{"routing":{"template":"t_{tenant}.orders"}}' })).toContain(
      "context 'floeConfig': routing template 't_{tenant}.orders' takes its namespace from the data",
    );
    expect(fail({ tableTemplate: '{tenant}.orders', allowedNamespaces: '*' })).toContain(
      "context 'allowedNamespaces'",
    );
    expect(fail({ tableTemplate: 'x_{a}_events', allowedNamespaces: 'acme' })).toContain(
      "context 'allowedNamespaces': only applies when the routing template takes its namespace from the data",
    );
    expect(fail({ tableTemplate: 'aws_x.{a}' })).toContain('can never be a namespace');
  });

  it('cdk synth (bin/cdk.ts) prints that message and exits 1', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'floe-cdk-ns-'));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bin/cdk.ts'], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: {
        ...process.env,
        CDK_OUTDIR: outdir,
        CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [], tableTemplate: '{tenant}.orders' }),
      },
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('allowedNamespaces');
  });

  it('the Lambdas dead-letter records routed outside the granted namespaces (router + record rules)', async () => {
    const s = synth({ tableTemplate: '{tenant}.orders', allowedNamespaces: 'acme,tenant_*' });
    const fn = one(s.template, 'AWS::Lambda::Function', (_p, id) => id.startsWith('IngestHandler'));
    const cfg = parseConfig(
      JSON.parse((fn.Environment as { Variables: { FLOE_CONFIG: string } }).Variables.FLOE_CONFIG),
    );
    expect(cfg.guards?.allowTables).toBeDefined();
    const route = compileRouter(cfg.routing);
    const rules = await RecordRules.create(cfg, {} as Catalog);
    const judge = async (record: Record<string, string>) => {
      const r = route(record);
      if (!r.ok) return r.reason;
      const checked = await rules.check(record, r.table);
      return checked.ok ? r.table : checked.reason;
    };
    expect(await judge({ tenant: 'acme', event_type: 'X' })).toBe('acme.orders');
    expect(await judge({ tenant: 'Tenant_42' })).toBe('tenant_42.orders');
    expect(await judge({ tenant: 'floe' })).toBe('floe.orders');
    expect(await judge({ event_type: 'ORDER' })).toBe('order_events'); // no tenant: the stack's namespace
    expect(await judge({ tenant: 'globex' })).toBe('guard-allow-tables');
    expect(await judge({ tenant: 'tenant' })).toBe('guard-allow-tables'); // `tenant*` is not `tenant_*`
  });

  it('a configured allowTables guard still applies alongside', async () => {
    const s = synth({
      tableTemplate: '{tenant}.orders',
      allowedNamespaces: 'acme,globex',
      floeConfig: JSON.stringify({ guards: { allowTables: '(acme\\.)?[a-z_]+' } }),
    });
    const fn = one(s.template, 'AWS::Lambda::Function', (_p, id) => id.startsWith('CommitterHandler'));
    const cfg = parseConfig(
      JSON.parse((fn.Environment as { Variables: { FLOE_CONFIG: string } }).Variables.FLOE_CONFIG),
    );
    const rules = await RecordRules.create(cfg, {} as Catalog);
    expect((await rules.check({}, 'acme.orders')).ok).toBe(true);
    expect((await rules.check({}, 'order_events')).ok).toBe(true);
    expect(await rules.check({}, 'globex.orders')).toMatchObject({ ok: false, reason: 'guard-allow-tables' });
    expect(await rules.check({}, 'other.orders')).toMatchObject({ ok: false, reason: 'guard-allow-tables' });
  });
});

describe('the maintenance function: the committer’s namespaces, no wider', () => {
  /** Every acknowledgment matches a finding (none stale), and no finding is left. */
  const nagClean = (s: Synth) => {
    expect(nagFindings(s.stack)).toEqual([]);
    const findings = allNagFindings(s.stack);
    for (const a of acknowledgments(s.stack))
      expect(
        findings.some((f) => f.startsWith(`${a.id} @ ${a.path}`)),
        `${a.id} at ${a.path}`,
      ).toBe(true);
  };

  it("Glue + maintenance=floe, -c tableTemplate='analytics.{event_type}_events': rewrites the tables of analytics too", () => {
    const s = synth({ tableTemplate: 'analytics.{event_type}_events' });
    const sts = statements(s, ROLES.maintenance);
    const tables = sts.find((st) => st.Sid === 'GlueTables')!;
    expect(actionsOf(tables)).toEqual(['glue:GetTable', 'glue:GetTables', 'glue:UpdateTable']);
    const arns = resourcesOf(tables).map(text);
    for (const ns of ['floe', 'analytics']) {
      expect(
        arns.some((a) => a.endsWith(`:database/${ns}`)),
        ns,
      ).toBe(true);
      expect(
        arns.some((a) => a.endsWith(`:table/${ns}/*`)),
        ns,
      ).toBe(true);
    }
    expect(glueNamespaces(sts)).toEqual(glueNamespaces(statements(s, ROLES.committer)));
    expect(glueNamespaces(sts)).toEqual(new Set(['floe', 'analytics']));
    // Two names: nothing to list.
    expect(sts.flatMap(actionsOf)).not.toContain('glue:GetDatabases');
    expect(maintenanceEnv(s).MAINTENANCE_NAMESPACES).toBe('floe,analytics');
    nagClean(s);
  });

  it('Glue + maintenance=floe, {tenant}.orders with allowedNamespaces=tenant_*: the pattern, and GetDatabases on it only', () => {
    const s = synth({ tableTemplate: '{tenant}.orders', allowedNamespaces: 'tenant_*' });
    const sts = statements(s, ROLES.maintenance);
    expect(glueNamespaces(sts)).toEqual(new Set(['floe', 'tenant_*']));
    const list = sts.find((st) => st.Sid === 'GlueDatabases')!;
    expect(actionsOf(list)).toEqual(['glue:GetDatabases']);
    expect(resourcesOf(list).map(text).sort()).toEqual(
      [
        'arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:catalog',
        'arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:database/floe',
        'arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:database/tenant_*',
      ].sort(),
    );
    expect(maintenanceEnv(s).MAINTENANCE_NAMESPACES).toBe('floe,tenant_*');
    nagClean(s);
  });

  it('S3 Tables, {tenant}.orders with allowedNamespaces=acme,tenant_*: s3tables:namespace like the committer’s', () => {
    const s = synth({
      catalogType: 's3tables',
      tableTemplate: '{tenant}.orders',
      allowedNamespaces: 'acme,tenant_*',
    });
    const sts = statements(s, ROLES.maintenance);
    for (const sid of ['TableBucket', 'Tables'])
      expect(sts.find((st) => st.Sid === sid)!.Condition).toEqual({
        StringLike: { 's3tables:namespace': ['floe', 'acme', 'tenant_*'] },
      });
    expect(s3TablesNamespaces(sts)).toEqual(s3TablesNamespaces(statements(s, ROLES.committer)));
    expect(actionsOf(sts.find((st) => st.Sid === 'ListNamespaces')!)).toEqual(['s3tables:ListNamespaces']);
    expect(maintenanceEnv(s).MAINTENANCE_NAMESPACES).toBe('floe,acme,tenant_*');
    nagClean(s);
  });
});
