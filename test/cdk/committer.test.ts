/**
 * The committer's cadence and fan-out in the synthesized stack (issue 19): `commitIntervalSeconds`
 * below a minute keeps an EventBridge `rate(1 minute)` rule and tells the function to commit in
 * passes inside its minute; the fan-out invokes the committer itself, so its role may invoke
 * exactly that function and nothing else.
 */
import { describe, expect, it } from 'vitest';
import { ErrorKind, type FloeError } from '../../lambdas/src/errors.ts';
import { readSettings } from '../../lambdas/src/handlers/env.ts';
import { readFloeSettings } from '../../lib/config.ts';
import { one, resources, synth } from './helpers.ts';

type Props = Record<string, unknown>;
const isCommitter = (_p: Props, id: string) => id.startsWith('CommitterHandler');

function committerOf(context: Record<string, unknown>) {
  const s = synth(context);
  const fnEntry = Object.entries(resources(s.template, 'AWS::Lambda::Function')).find(([id, p]) =>
    isCommitter(p, id),
  )!;
  const [fnId, fn] = fnEntry;
  const env = (fn.Environment as { Variables: Record<string, string> }).Variables;
  const rules = Object.values(resources(s.template, 'AWS::Events::Rule')).filter((r) =>
    JSON.stringify(r.Targets).includes(fnId),
  );
  return { s, fnId, fn, env, rules };
}

/** The statements of every IAM policy that grant lambda:InvokeFunction (`sid`: that one only). */
function invokeStatements(s: ReturnType<typeof synth>, sid = 'InvokeCommitSlices') {
  return Object.entries(resources(s.template, 'AWS::IAM::Policy')).flatMap(([id, p]) =>
    ((p.PolicyDocument as { Statement: Props[] }).Statement ?? [])
      .filter((st) => JSON.stringify(st.Action).includes('lambda:InvokeFunction') && st.Sid === sid)
      .map((st) => ({ id, st, roles: p.Roles })),
  );
}

function problems(context: Record<string, unknown>): string {
  try {
    readFloeSettings((k) => context[k], Object.keys(context));
  } catch (e) {
    expect((e as FloeError).kind).toBe(ErrorKind.ConfigInvalid);
    return (e as FloeError).message;
  }
  throw new Error(`accepted: ${JSON.stringify(context)}`);
}

describe('committer cadence', () => {
  it('commitIntervalSeconds=10: a rate(1 minute) rule, and the function commits every 10 s inside it', () => {
    const { fn, env, rules } = committerOf({ commitIntervalSeconds: '10' });
    expect(rules.map((r) => r.ScheduleExpression)).toEqual(['rate(1 minute)']);
    expect(env.COMMIT_SCHEDULE_MS).toBe('60000');
    expect(env.COMMIT_INTERVAL_MS).toBe('10000');
    // A run commits for its minute: the timeout leaves room for a last pass.
    expect(fn.Timeout as number).toBeGreaterThanOrEqual(120);
    const handler = readSettings({
      COMMIT_SCHEDULE_MS: env.COMMIT_SCHEDULE_MS,
      COMMIT_INTERVAL_MS: env.COMMIT_INTERVAL_MS,
      COMMIT_TABLES_PER_SLICE: env.COMMIT_TABLES_PER_SLICE,
      COMMIT_MAX_SLICES: env.COMMIT_MAX_SLICES,
      WAREHOUSE_URI: 's3://warehouse/w',
      STAGING_URI: 's3://staging/s',
      DEAD_LETTER_URI: 's3://staging/d',
      LEDGER_TABLE: 'ledger',
      AWS_REGION: 'eu-west-1',
    });
    expect(handler.commitSchedule).toEqual({
      scheduleMs: 60_000,
      intervalMs: 10_000,
      tablesPerSlice: 250,
      maxSlices: 20,
    });
    expect(String(fn.Description)).toContain('every 10 s');
  });

  it("records wait no longer than an interval in the event source's batching window", () => {
    const windowOf = (context: Record<string, unknown>) =>
      readFloeSettings((k) => context[k], Object.keys(context)).ingest.batchingWindowSeconds;
    expect(windowOf({})).toBe(15);
    expect(windowOf({ commitIntervalSeconds: '5' })).toBe(5);
    expect(windowOf({ commitIntervalSeconds: '30' })).toBe(15);
    expect(windowOf({ commitIntervalSeconds: '5', batchingWindowSeconds: '20' })).toBe(20);
    const s = synth({ commitIntervalSeconds: '5' });
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      MaximumBatchingWindowInSeconds: 5,
    });
  });

  it('the default is one pass a minute; whole minutes keep their rate', () => {
    expect(committerOf({}).env.COMMIT_INTERVAL_MS).toBe('60000');
    const two = committerOf({ commitIntervalSeconds: '120' });
    expect(two.rules.map((r) => r.ScheduleExpression)).toEqual(['rate(2 minutes)']);
    expect(two.env.COMMIT_SCHEDULE_MS).toBe('120000');
    expect(two.env.COMMIT_INTERVAL_MS).toBe('120000');
    expect(committerOf({ commitIntervalMinutes: '5' }).env.COMMIT_INTERVAL_MS).toBe('300000');
  });

  it('refuses intervals it cannot keep, naming the key and value', () => {
    expect(problems({ commitIntervalSeconds: '4' })).toContain("context 'commitIntervalSeconds'");
    expect(problems({ commitIntervalSeconds: '90' })).toMatch(
      /commitIntervalSeconds.*whole number of minutes.*90/,
    );
    expect(problems({ commitIntervalSeconds: '10', commitIntervalMinutes: '1' })).toContain('not both');
    expect(problems({ commitIntervalSeconds: '10', committerTimeoutSeconds: '60' })).toMatch(
      /committerTimeoutSeconds.*at least 120.*60/,
    );
  });
});

describe('committer fan-out', () => {
  it('the committer may invoke itself, and only itself, for the slices', () => {
    const { s, fnId, env } = committerOf({ commitTablesPerSlice: '100', commitMaxSlices: '20' });
    expect(env.COMMIT_TABLES_PER_SLICE).toBe('100');
    expect(env.COMMIT_MAX_SLICES).toBe('20');
    const grants = invokeStatements(s);
    expect(grants).toHaveLength(1);
    const { st, roles } = grants[0]!;
    expect(st.Effect).toBe('Allow');
    expect(st.Resource).toEqual({ 'Fn::GetAtt': [fnId, 'Arn'] });
    const role = (one(s.template, 'AWS::Lambda::Function', isCommitter).Role as { 'Fn::GetAtt': string[] })[
      'Fn::GetAtt'
    ][0];
    expect(roles).toEqual([{ Ref: role }]);
    // The async settings slices run under: no retries (the next tick dispatches again).
    const invokeConfigs = Object.values(resources(s.template, 'AWS::Lambda::EventInvokeConfig')).filter((c) =>
      JSON.stringify(c.FunctionName).includes(fnId),
    );
    expect(invokeConfigs).toHaveLength(1);
    expect(invokeConfigs[0]!.MaximumRetryAttempts).toBe(0);
  });

  it('Floe compacting on Glue: the committer may invoke the maintenance function, and names it', () => {
    const { s, env, fn } = committerOf({});
    const maintenanceId = Object.keys(resources(s.template, 'AWS::Lambda::Function')).find((id) =>
      id.startsWith('MaintenanceHandler'),
    )!;
    expect(env.MAINTENANCE_FUNCTION).toEqual({ Ref: maintenanceId });
    const grants = invokeStatements(s, 'AskForMaintenance');
    expect(grants).toHaveLength(1);
    expect(grants[0]!.st.Resource).toEqual({ 'Fn::GetAtt': [maintenanceId, 'Arn'] });
    const role = (fn.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    expect(grants[0]!.roles).toEqual([{ Ref: role }]);
    // Where the service compacts (S3 Tables, Glue's optimizers) or nothing does, nobody asks.
    for (const context of [{ catalogType: 's3tables' }, { maintenance: 'glue' }, { maintenance: 'off' }]) {
      const other = committerOf(context);
      expect(other.env.MAINTENANCE_FUNCTION).toBeUndefined();
      expect(invokeStatements(other.s, 'AskForMaintenance')).toHaveLength(0);
    }
  });

  it('commitMaxSlices=1 turns the fan-out off: no invoke permission', () => {
    const { s, env } = committerOf({ commitMaxSlices: '1' });
    expect(env.COMMIT_MAX_SLICES).toBe('1');
    expect(invokeStatements(s)).toHaveLength(0);
  });
});
