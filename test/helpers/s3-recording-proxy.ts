/**
 * An HTTP proxy in front of an S3 stand-in (s3rver) that records every request (method and
 * path-style path `/bucket/key`) and can refuse chosen ones with an S3 error, to see which objects a
 * process asks S3 to delete and what it does when a delete fails. Clients reach it through
 * `AWS_ENDPOINT_URL_S3` with path-style addressing (an IP endpoint is path-style anyway).
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  readonly method: string;
  /** `/bucket/key`, decoded, without the query string. */
  readonly path: string;
  readonly query: string;
}

export interface S3Refusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
}

export class S3RecordingProxy {
  readonly requests: ProxiedRequest[] = [];
  /** Answers a matching request itself with an S3 error instead of forwarding it. */
  refuse: ((r: ProxiedRequest) => S3Refusal | undefined) | undefined;
  private server?: Server;
  endpoint = '';

  constructor(private readonly target: string) {}

  /** The DELETE requests (DeleteObject) seen, as `/bucket/key`. */
  deletes(): string[] {
    return this.requests.filter((r) => r.method === 'DELETE').map((r) => r.path);
  }

  async start(): Promise<void> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const [rawPath, query = ''] = (req.url ?? '').split('?');
      const r: ProxiedRequest = { method: req.method ?? '', path: decodeURIComponent(rawPath ?? ''), query };
      this.requests.push(r);
      const refusal = this.refuse?.(r);
      if (refusal !== undefined) {
        req.resume();
        res.writeHead(refusal.status, { 'content-type': 'application/xml', 'x-amz-request-id': 'PROXY' });
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${refusal.message}</Message><RequestId>PROXY</RequestId></Error>`,
        );
        return;
      }
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          // Unchanged (the Host header too): s3rver checks the signature the client computed.
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      req.pipe(upstream);
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.endpoint = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
