/**
 * A fault proxy on the wire: an HTTP server on 127.0.0.1 between an AWS SDK client and an
 * emulator (dynalite, s3rver), forwarding each request as it came (headers, signature and body
 * untouched) unless the plan picks a fault for it:
 *
 * - `drop-request`: the request is lost (the connection closes; the emulator never sees it);
 * - `lose-answer`: the request is applied, then its answer is lost (the connection closes);
 * - `delay`: the request waits, then goes through;
 * - `fail`: the emulator never sees it; the answer is a 500 in the service's error format.
 *
 * The SDK sees what it would see on a bad network: resets, server errors, slow answers.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Rng } from './faults.ts';

export type WireFault = 'drop-request' | 'lose-answer' | 'delay' | 'fail';
export const WIRE_FAULTS: readonly WireFault[] = ['drop-request', 'lose-answer', 'delay', 'fail'];

export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
}

export interface FaultProxyOptions {
  readonly rng: Rng;
  /** Probability that a request meets a fault while `faulting` is on. */
  readonly chance: number;
  readonly kinds?: readonly WireFault[];
  /** How the service answers a failure: DynamoDB's JSON, S3's XML. */
  readonly service: 'dynamodb' | 's3';
  /** Longest `delay` (ms). */
  readonly maxDelayMs?: number;
}

export interface FaultProxy {
  readonly endpoint: string;
  /** Faults are picked only while this is true. */
  faulting: boolean;
  /** Requests per outcome, and per fault the operations it hit (`fault operation`). */
  readonly counts: Map<string, number>;
  /** Requests received and not answered (or dropped) yet. */
  readonly inFlight: () => number;
  close(): Promise<void>;
}

/** The operation a request names: DynamoDB's `X-Amz-Target`, else the S3 method. */
export function operationOf(r: ProxiedRequest): string {
  const target = r.headers['x-amz-target'];
  if (typeof target === 'string') return target.replace(/^DynamoDB_\d+\./, '');
  return r.method;
}

export async function startFaultProxy(target: string, opts: FaultProxyOptions): Promise<FaultProxy> {
  const upstream = new URL(target);
  const counts = new Map<string, number>();
  const count = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  const kinds = opts.kinds ?? WIRE_FAULTS;
  let inFlight = 0;
  const proxy: FaultProxy = {
    endpoint: '',
    faulting: false,
    counts,
    inFlight: () => inFlight,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = createServer((req, res) => {
    inFlight++;
    const done = () => {
      inFlight--;
    };
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const r: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers };
        const fault = proxy.faulting && opts.rng.chance(opts.chance) ? opts.rng.pick(kinds) : undefined;
        count(fault ?? 'pass');
        if (fault) count(`${fault} ${operationOf(r)}`);
        try {
          if (fault === 'drop-request') {
            req.socket.destroy();
            return;
          }
          if (fault === 'fail') {
            const f = failure(opts.service, r.method);
            res.writeHead(f.status, f.headers);
            res.end(f.body);
            return;
          }
          if (fault === 'delay') await sleep(opts.rng.int(20, opts.maxDelayMs ?? 200));
          const answer = await forward(upstream, r, body);
          if (fault === 'lose-answer') {
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        } catch {
          req.socket.destroy(); // the emulator itself failed: the client sees a reset
        } finally {
          done();
        }
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, { endpoint: `http://127.0.0.1:${port}` });
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

function forward(
  upstream: URL,
  r: ProxiedRequest,
  body: Buffer,
): Promise<{ status: number; headers: OutgoingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(r.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
    headers['content-length'] = body.length;
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: r.method, path: r.path, headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          const back: OutgoingHttpHeaders = {};
          for (const [k, v] of Object.entries(answer.headers))
            if (!HOP_BY_HOP.has(k) && v !== undefined) back[k] = v;
          const b = Buffer.concat(chunks);
          // A HEAD answer carries the length of the body it does not send.
          back['content-length'] = r.method === 'HEAD' ? (answer.headers['content-length'] ?? 0) : b.length;
          resolve({ status: answer.statusCode ?? 502, headers: back, body: b });
        });
        answer.on('error', reject);
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

function failure(
  service: 'dynamodb' | 's3',
  method: string,
): { status: number; headers: OutgoingHttpHeaders; body: string } {
  if (service === 'dynamodb') {
    const body = JSON.stringify({
      __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
      message: 'injected by the fault proxy',
    });
    return { status: 500, headers: { 'content-type': 'application/x-amz-json-1.0' }, body };
  }
  const body =
    method === 'HEAD'
      ? ''
      : '<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected by the fault proxy</Message></Error>';
  return { status: 500, headers: { 'content-type': 'application/xml' }, body };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
