/**
 * `floe dead-letters … --store s3://…` as the real command (`node bin/floe.mjs`), with the S3
 * endpoint from `AWS_ENDPOINT_URL` (as LocalStack and moto users set it): every message names the
 * S3 store it read, never the local warehouse folder; `--s3-path-style` and
 * `FLOE_S3_FORCE_PATH_STYLE=1` switch the requests to path style.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../lambdas/src/adapters/aws/s3-object-store.ts';
import { ObjectStoreDeadLetterStore } from '../../lambdas/src/adapters/object-dead-letter-store.ts';
import { DeadLetterReason } from '../../lambdas/src/engine/dead-letters.ts';
import { type DeadLetterRecord, deadLetterRecord } from '../../lambdas/src/ports/dead-letters.ts';
import { startS3rver } from '../contract/object-store.contract.ts';
import { tempDir } from '../helpers/e2e.ts';
import { type RecordingS3, startRecordingS3 } from '../helpers/recording-s3.ts';
import { BIN, runNode } from '../helpers/run-node.ts';

const STORE = 's3://bucket/pipeline/dead-letters';

let s3: Awaited<ReturnType<typeof startS3rver>>;
let recorder: RecordingS3;
let tmp: ReturnType<typeof tempDir>;
let letters: DeadLetterRecord[];

/** The environment of a user pointing the AWS tools at an emulator. */
function envFor(endpoint: string, extra: Record<string, string | undefined> = {}) {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ENDPOINT_URL_S3: undefined,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    AWS_PROFILE: undefined,
    FLOE_S3_FORCE_PATH_STYLE: undefined,
    // A warehouse that exists: a message naming it would be the bug this file guards against.
    FLOE_WAREHOUSE: tmp.dir,
    ...extra,
  };
}

/** Every request went to the endpoint's own host with the bucket as the first path segment. */
function expectPathStyle(requests: readonly { host: string; path: string }[]): void {
  expect(requests.length).toBeGreaterThan(0);
  for (const q of requests) {
    expect(q.host).toBe(recorder.host);
    expect(q.path).toMatch(/^\/bucket(\/|$)/);
  }
}

const floe = (args: string[], env: Record<string, string | undefined>) => runNode([BIN, ...args], env);

beforeAll(async () => {
  s3 = await startS3rver();
  recorder = await startRecordingS3();
  tmp = tempDir('floe-dl-endpoints-');
  letters = ['{not json', '{"also": broken'].map((raw, i) =>
    deadLetterRecord(
      {
        source: 'shardId-000000000003',
        line: i + 1,
        reason: DeadLetterReason.MalformedJson,
        detail: 'bad',
        raw,
      },
      { shardId: 'shardId-000000000003', sequenceNumber: String(1000 + i), arrivalTimeMs: 1_700_000_000_000 },
    ),
  );
  const store = new ObjectStoreDeadLetterStore(new S3ObjectStore(s3.client), STORE);
  for (const d of letters) await store.put(d);
}, 60_000);

afterAll(async () => {
  await s3?.close();
  await recorder?.close();
  tmp?.cleanup();
});

describe('floe dead-letters --store s3://… with AWS_ENDPOINT_URL (real command)', () => {
  it('list names the S3 store it read, not a local folder', async () => {
    const r = await floe(['dead-letters', 'list', '--store', STORE], envFor(s3.endpoint));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const d of letters) expect(r.stdout).toContain(d.key);
    expect(r.stdout).toContain(`2 dead letter(s) (malformed-json: 2) in ${STORE}`);
    expect(r.stdout).not.toContain('_floe');
    expect(r.stdout).not.toContain(tmp.dir);
  });

  it('list with nothing matching names the S3 store', async () => {
    const r = await floe(
      ['dead-letters', 'list', '--store', STORE, '--reason', 'no-route'],
      envFor(s3.endpoint),
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`no dead letters matching reason no-route in ${STORE}`);
  });

  it('show finds a key in the S3 store; an unknown key is NotFound naming the store and how to list it', async () => {
    const found = await floe(
      ['dead-letters', 'show', letters[0]!.key, '--store', STORE],
      envFor(s3.endpoint),
    );
    expect(found.code).toBe(0);
    expect(found.stdout).toContain('{not json');
    const missing = await floe(
      ['dead-letters', 'show', 'shardId-000000000003-0000000000000000/0', '--store', STORE],
      envFor(s3.endpoint),
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`in ${STORE} (floe dead-letters list --store ${STORE} shows the keys)`);
    expect(missing.stderr).toContain('[NotFound]');
    expect(missing.stderr).not.toContain('_floe');
  });

  it('replay --dry-run --to-stream names the S3 store', async () => {
    const r = await floe(
      ['dead-letters', 'replay', '--store', STORE, '--to-stream', 'events', '--dry-run'],
      envFor(s3.endpoint),
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(`dry run: would put 2 dead letter(s) from ${STORE} back into stream events`);
  });

  it('--s3-path-style sends path-style requests to a host-named endpoint; without it the bucket goes into the host name', async () => {
    const store = 's3://bucket/prefix';
    recorder.requests.length = 0;
    const on = await floe(
      ['dead-letters', 'list', '--store', store, '--s3-path-style'],
      envFor(recorder.endpoint),
    );
    expect(on.stderr).toBe('');
    expect(on.stdout.trim()).toBe(`no dead letters in ${store}`);
    expectPathStyle(recorder.requests);

    recorder.requests.length = 0;
    const off = await floe(['dead-letters', 'list', '--store', store], envFor(recorder.endpoint));
    // `bucket.localhost` rarely resolves; if it does, the request is virtual-hosted (path `/`).
    expect(recorder.requests.filter((q) => q.path.startsWith('/bucket'))).toEqual([]);
    if (recorder.requests.length === 0) expect(off.code).not.toBe(0);
  });

  it('FLOE_S3_FORCE_PATH_STYLE=1 does the same; a value that is not a flag is a clear error', async () => {
    recorder.requests.length = 0;
    const on = await floe(
      ['dead-letters', 'list', '--store', 's3://bucket/prefix'],
      envFor(recorder.endpoint, { FLOE_S3_FORCE_PATH_STYLE: '1' }),
    );
    expect(on.code).toBe(0);
    expectPathStyle(recorder.requests);

    const bad = await floe(
      ['dead-letters', 'list', '--store', 's3://bucket/prefix'],
      envFor(recorder.endpoint, { FLOE_S3_FORCE_PATH_STYLE: 'sure' }),
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      "FLOE_S3_FORCE_PATH_STYLE must be 1 or 0 (true/false, yes/no, on/off), got 'sure'",
    );
  });
});
