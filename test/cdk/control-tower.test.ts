/**
 * AWS Control Tower's proactive controls, as AWS ships them for the CDK's policy validation
 * (`@cdklabs/cdk-validator-cfnguard`: the cfn-guard binary and the Control Tower rules), run over
 * every synthesized combination. A rule may fail only when the README gives the reason (the choice
 * a regulated account can make otherwise: "Baseline controls"); any other failure fails the test.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { synth } from './helpers.ts';

const require = createRequire(import.meta.url);
const PLUGIN = dirname(require.resolve('@cdklabs/cdk-validator-cfnguard/package.json'));
const GUARD = join(
  PLUGIN,
  'bin',
  process.platform === 'darwin' ? 'macos' : 'ubuntu',
  process.arch === 'arm64' ? 'aarch64' : 'x86_64',
  'cfn-guard',
);
const RULES = join(PLUGIN, 'rules', 'control-tower', 'cfn-guard');

/** The rules that may fail by default, each with its reason in the README ("Baseline controls"). */
const ACCEPTED = new Set([
  'ct-athena-pr-2', // Athena results with SSE-S3, not a customer-managed key
  'ct-cloudwatch-pr-2', // log retention 30 days by default (-c logRetentionDays=365 passes)
  'ct-cloudwatch-pr-3', // log groups without a customer-managed key
  'ct-dynamodb-pr-2', // the ledger table with the AWS-owned key
  'ct-lambda-pr-3', // Lambdas outside a VPC
  'ct-s3-pr-10', // buckets with SSE-S3
  'ct-s3-pr-11', // no versioning: compaction and expiry delete files on purpose
  'ct-s3-pr-2', // no server access logging
  'ct-s3-pr-4', // no event notifications
  'ct-s3-pr-9', // no object lock: compaction and expiry delete files
  'ct-sqs-pr-1', // the failed-batch queue is itself the dead-letter queue
]);

const dir = mkdtempSync(join(tmpdir(), 'floe-guard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The Control Tower rules (file names without `.guard`) the stack of `context` fails. */
function failingRules(context: Record<string, unknown>): string[] {
  const file = join(dir, `t-${Object.keys(context).join('-') || 'default'}.json`);
  writeFileSync(file, JSON.stringify(synth(context).template.toJSON()));
  let out: string;
  try {
    out = execFileSync(GUARD, ['validate', '-d', file, '-r', RULES, '--show-summary', 'fail'], {
      encoding: 'utf8',
    });
  } catch (e) {
    // cfn-guard exits 19 when a rule fails; its report is on stdout either way.
    out = String((e as { stdout?: unknown }).stdout ?? '');
    if (out === '') throw e;
  }
  const rules = new Set<string>();
  for (const m of out.matchAll(/^(ct-[a-z0-9-]+)\.guard\/\w+\s+FAIL$/gm)) rules.add(m[1]!);
  return [...rules].sort();
}

describe('Control Tower proactive controls (cfn-guard)', () => {
  const combos: Record<string, Record<string, unknown>> = {
    'Glue, JSON': {},
    'Glue, Avro': { appType: 'dynamic-avro' },
    'S3 Tables': { catalogType: 's3tables' },
    'S3 Tables, federated catalog ensured': { catalogType: 's3tables', s3TablesCatalog: 'ensure' },
    'removalPolicy=destroy': { removalPolicy: 'destroy' },
  };
  for (const [name, context] of Object.entries(combos)) {
    it(`${name}: only the rules the README explains fail; every alarm has an action`, () => {
      const failing = failingRules(context);
      expect(failing.filter((r) => !ACCEPTED.has(r))).toEqual([]);
      // Alarms notify a topic (the stack's own when none is given).
      expect(failing).not.toContain('ct-cloudwatch-pr-1');
      // The run found rules to fail at all (the rules and the binary are there and were read).
      expect(failing.length).toBeGreaterThan(0);
    });
  }

  // compliance=strict: the rules about keys, versioning and retention pass; what still fails has
  // its reason in the README.
  const STRICT_ACCEPTED = new Set([
    'ct-lambda-pr-3', // Lambdas outside a VPC unless -c vpcSubnets
    'ct-s3-pr-10', // the access-log bucket: server access logs are delivered only to SSE-S3 buckets
    'ct-s3-pr-2', // the access-log bucket logs nothing of its own
    'ct-s3-pr-4', // no event notifications
    'ct-s3-pr-9', // no object lock: compaction and expiry delete files
    'ct-sqs-pr-1', // the failed-batch queue is itself the dead-letter queue
  ]);
  const STRICT_PASSES = [
    'ct-athena-pr-2',
    'ct-cloudwatch-pr-2',
    'ct-cloudwatch-pr-3',
    'ct-dynamodb-pr-2',
    'ct-kms-pr-3',
    'ct-s3-pr-11',
  ];
  for (const catalogType of ['glue', 's3tables']) {
    it(`compliance=strict (${catalogType}): the key, versioning and retention rules pass; the rest is explained`, () => {
      const failing = failingRules({ compliance: 'strict', catalogType });
      expect(failing.filter((r) => !STRICT_ACCEPTED.has(r))).toEqual([]);
      for (const rule of STRICT_PASSES) expect(failing).not.toContain(rule);
      expect(failing.length).toBeGreaterThan(0);
    });
  }

  it('compliance=strict with -c vpcSubnets: the Lambda-in-a-VPC rule passes too', () => {
    const failing = failingRules({
      compliance: 'strict',
      vpcId: 'vpc-0123456789abcdef0',
      vpcSubnets: 'subnet-0123456789abcdef0,subnet-0123456789abcdef1',
      vpcRouteTables: 'rtb-0123456789abcdef0',
    });
    expect(failing).not.toContain('ct-lambda-pr-3');
    expect(failing.filter((r) => !STRICT_ACCEPTED.has(r))).toEqual([]);
  });

  it('a year of log retention passes the retention rule', () => {
    expect(failingRules({ logRetentionDays: 365 })).not.toContain('ct-cloudwatch-pr-2');
    expect(failingRules({})).toContain('ct-cloudwatch-pr-2');
  });
});
