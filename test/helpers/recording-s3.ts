/**
 * A stand-in S3 endpoint that records each request's Host header and path, to see how a client
 * addresses buckets (path style `host/bucket/key` or virtual-hosted `bucket.host/key`). It listens
 * on `localhost` (not an IP: for an IP endpoint the SDK uses path style anyway) and answers every
 * listing with an empty ListObjectsV2 result and everything else with 404 NoSuchKey.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly host: string;
  /** Path without the query string. */
  readonly path: string;
}

export interface RecordingS3 {
  /** `http://localhost:<port>` */
  readonly endpoint: string;
  readonly host: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

const EMPTY_LISTING =
  '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
  '<Name>bucket</Name><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>';

export async function startRecordingS3(): Promise<RecordingS3> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const [path, query = ''] = (req.url ?? '').split('?');
      requests.push({ method: req.method ?? '', host: req.headers.host ?? '', path: path ?? '' });
      res.setHeader('x-amz-request-id', 'RECORDING');
      if (req.method === 'GET' && query.includes('list-type=2')) {
        res.setHeader('content-type', 'application/xml');
        res.end(EMPTY_LISTING);
        return;
      }
      res.statusCode = 404;
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      res.setHeader('content-type', 'application/xml');
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>none</Message></Error>',
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://localhost:${port}`,
    host: `localhost:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
