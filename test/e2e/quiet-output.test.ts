/**
 * A clean terminal: `floe demo` (the local stack driving the real ingest handler) prints its own
 * lines only. The handler's EMF metric lines (`{"_aws":…}`) reach stdout only with
 * FLOE_LOG_LEVEL=debug, and on Node 20 the AWS SDK's end-of-support notice stays off stderr
 * although the test's own switch for it is removed from the command's environment.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runNode } from '../helpers/run-node.ts';

const SDK_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
const EMF_LINE = /^\{"_aws":/m;
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

const tmp = mkdtempSync(join(tmpdir(), 'floe-quiet-output-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The demo as a user starts it: no FLOE_LOG_LEVEL, no SDK switch, so only bin/floe.mjs sets it. */
function demo(warehouse: string, env: Record<string, string | undefined> = {}) {
  return runNode([BIN, 'demo', '-n', '60', '-w', join(tmp, warehouse)], {
    [SDK_SWITCH]: undefined,
    FLOE_LOG_LEVEL: undefined,
    ...env,
  });
}

describe('floe demo output', () => {
  it('has no EMF lines, no warnings and no SDK notice by default', async () => {
    const r = await demo('default');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^▶ sending/m);
    expect(r.stdout).not.toMatch(EMF_LINE);
    expect(r.stderr).not.toContain('NodeVersionSupportWarning');
    expect(r.stderr).not.toMatch(/\(node:\d+\) \w*Warning/);
    expect(r.stderr).toBe('');
  });

  it('shows the ingest handler EMF lines with FLOE_LOG_LEVEL=debug', async () => {
    const r = await demo('debug', { FLOE_LOG_LEVEL: 'debug' });
    expect(r.code, r.stderr).toBe(0);
    const emf = r.stdout.split('\n').filter((l) => EMF_LINE.test(l));
    expect(emf.length).toBeGreaterThan(0);
    const record = JSON.parse(emf[0]!) as { _aws: { CloudWatchMetrics: { Namespace: string }[] } };
    expect(record._aws.CloudWatchMetrics[0]!.Namespace).toBe('Floe');
  });

  // The first test only proves something where the SDK warns: on Node < 22, unless switched off.
  it.runIf(NODE_MAJOR < 22)(
    'control: on this Node the SDK does print its notice without the switch',
    async () => {
      const client = "new (require('@aws-sdk/client-kinesis').KinesisClient)({ region: 'us-east-1' })";
      const r = await runNode(['-e', client], { [SDK_SWITCH]: undefined });
      expect(r.stderr).toContain('NodeVersionSupportWarning');
    },
  );
});
