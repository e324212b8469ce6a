/**
 * Contract test of LambdaFanout against the real AWS SDK v3 LambdaClient, pointed at a local HTTP
 * server speaking Lambda's REST wire format: `POST /2015-03-31/functions/<name>/invocations` with
 * `X-Amz-Invocation-Type: Event`, the slice event as the JSON body, and 202 for an accepted
 * asynchronous invocation. Errors (a throttle, an unknown function, a dropped connection) become a
 * FloeError naming the function and the slice, retryable as the service says.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createLambdaClient,
  LambdaFanout,
  LambdaMaintenanceRequests,
} from '../../lambdas/src/adapters/aws/lambda-invoke.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { type SliceTask, sliceTaskOf } from '../../lambdas/src/ports/commit-fanout.ts';
import { requestedTablesOf } from '../../lambdas/src/ports/maintenance-requests.ts';

interface Recorded {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}
type Reply = { status: number; errorType?: string; message?: string } | 'drop' | 'hang';

let server: Server;
let requests: Recorded[];
let reply: (r: Recorded) => Reply;
let client: LambdaClient;

beforeEach(async () => {
  requests = [];
  reply = () => ({ status: 202 });
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      requests.push(r);
      const out = reply(r);
      if (out === 'drop') {
        req.socket.destroy();
        return;
      }
      if (out === 'hang') return; // applied, and the answer never comes
      res.writeHead(out.status, {
        'content-type': 'application/json',
        ...(out.errorType ? { 'x-amzn-errortype': out.errorType } : {}),
      });
      res.end(out.errorType ? JSON.stringify({ Type: 'User', message: out.message ?? '' }) : '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  client = new LambdaClient({
    region: 'eu-west-1',
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
    maxAttempts: 1,
  });
});
afterEach(async () => {
  client.destroy();
  await new Promise((r) => server.close(() => r(undefined)));
});

const TASK: SliceTask = {
  index: 2,
  count: 5,
  untilMs: 1_765_000_000_000,
  intervalMs: 10_000,
  dispatchedBy: 'req-1',
};

describe('LambdaFanout', () => {
  it('one asynchronous invocation per slice: the request, pinned', async () => {
    await new LambdaFanout(client, 'Floe-CommitterHandler-abc').dispatch(TASK);
    expect(requests).toHaveLength(1);
    const [r] = requests;
    expect(r!.method).toBe('POST');
    expect(r!.url).toBe('/2015-03-31/functions/Floe-CommitterHandler-abc/invocations');
    expect(r!.headers['x-amz-invocation-type']).toBe('Event');
    expect(r!.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/eu-west-1\/lambda\/aws4_request/,
    );
    const event = JSON.parse(r!.body);
    expect(event).toEqual({ floeCommitSlice: TASK });
    // What the invoked committer reads back from it.
    expect(sliceTaskOf(event)).toEqual(TASK);
  });

  it('a throttle, an unknown function and a dropped connection are FloeErrors naming the slice', async () => {
    const fanout = new LambdaFanout(client, 'Floe-CommitterHandler-abc');
    const cases: [Reply, boolean][] = [
      [{ status: 429, errorType: 'TooManyRequestsException', message: 'Rate exceeded' }, true],
      [{ status: 404, errorType: 'ResourceNotFoundException', message: 'Function not found' }, false],
      ['drop', true],
    ];
    for (const [r, retryable] of cases) {
      reply = () => r;
      const e = await fanout.dispatch(TASK).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(FloeError);
      expect((e as FloeError).kind).toBe(ErrorKind.Unexpected);
      expect((e as FloeError).retryable).toBe(retryable);
      expect((e as FloeError).message).toContain('Floe-CommitterHandler-abc');
      expect((e as FloeError).message).toContain('slice 3 of 5');
    }
  });

  it('an answer other than 202 is not taken for an accepted invocation', async () => {
    reply = () => ({ status: 200 });
    await expect(new LambdaFanout(client, 'f').dispatch(TASK)).rejects.toThrow(
      /expected status 202, got 200/,
    );
  });

  it('sliceTaskOf reads only well-formed slice events (a schedule tick is not one)', () => {
    expect(sliceTaskOf({ 'detail-type': 'Scheduled Event' })).toBeUndefined();
    expect(sliceTaskOf(undefined)).toBeUndefined();
    expect(sliceTaskOf({ floeCommitSlice: { ...TASK, index: 5 } })).toBeUndefined();
    expect(sliceTaskOf({ floeCommitSlice: { ...TASK, count: 0 } })).toBeUndefined();
    expect(sliceTaskOf({ floeCommitSlice: { ...TASK, untilMs: 'soon' } })).toBeUndefined();
  });

  it('a maintenance request: one asynchronous invocation of the maintenance function with the tables', async () => {
    await new LambdaMaintenanceRequests(
      client,
      'Floe-MaintenanceHandler-xyz',
      'Floe-CommitterHandler-abc',
    ).request(['order_events', 'analytics.clicks']);
    const [r] = requests;
    expect(r!.url).toBe('/2015-03-31/functions/Floe-MaintenanceHandler-xyz/invocations');
    expect(r!.headers['x-amz-invocation-type']).toBe('Event');
    const event = JSON.parse(r!.body);
    expect(event).toEqual({
      floeMaintainTables: {
        tables: ['order_events', 'analytics.clicks'],
        requestedBy: 'Floe-CommitterHandler-abc',
      },
    });
    expect(requestedTablesOf(event)).toEqual(['order_events', 'analytics.clicks']);
    expect(requestedTablesOf({ 'detail-type': 'Scheduled Event' })).toBeUndefined();
    expect(requestedTablesOf({ floeMaintainTables: { tables: [] } })).toBeUndefined();
    reply = () => ({ status: 429, errorType: 'TooManyRequestsException', message: 'Rate exceeded' });
    await expect(new LambdaMaintenanceRequests(client, 'm', 'c').request(['t'])).rejects.toThrow(
      /invoking m for maintenance of 1 table\(s\) failed/,
    );
  });

  it("an answer that never comes does not hold the run: Floe's client gives up after two short attempts", async () => {
    reply = () => 'hang';
    const floeClient = createLambdaClient({
      region: 'eu-west-1',
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
    });
    try {
      const e = await new LambdaFanout(floeClient, 'f').dispatch(TASK).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(FloeError);
      expect((e as FloeError).retryable).toBe(true);
      expect((e as FloeError).message).toContain('slice 3 of 5');
      // Two attempts, then the caller commits the slice itself.
      expect(requests).toHaveLength(2);
    } finally {
      floeClient.destroy();
    }
  }, 20_000);
});
