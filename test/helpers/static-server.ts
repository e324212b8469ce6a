/**
 * A tiny static file server on 127.0.0.1 with HEAD and Range support, so HTTP-only readers
 * (icebird, hyparquet) can read a local warehouse in tests.
 */
import { createReadStream, promises as fs } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

export interface StaticServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function serveDirectory(dir: string): Promise<StaticServer> {
  const server: Server = createServer(async (req, res) => {
    try {
      const path = normalize(join(dir, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)));
      if (!path.startsWith(dir)) {
        res.writeHead(403).end();
        return;
      }
      const st = await fs.stat(path).catch(() => undefined);
      if (!st?.isFile()) {
        res.writeHead(404).end();
        return;
      }
      const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
      let start = 0;
      let end = st.size - 1;
      if (range) {
        if (range[1] === '') {
          start = Math.max(0, st.size - Number(range[2]));
        } else {
          start = Number(range[1]);
          if (range[2] !== '') end = Math.min(end, Number(range[2]));
        }
      }
      const headers = {
        'content-length': String(Math.max(0, end - start + 1)),
        'accept-ranges': 'bytes',
        ...(range ? { 'content-range': `bytes ${start}-${end}/${st.size}` } : {}),
      };
      res.writeHead(range ? 206 : 200, headers);
      if (req.method === 'HEAD' || end < start) {
        res.end();
        return;
      }
      createReadStream(path, { start, end }).pipe(res);
    } catch {
      res.writeHead(500).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
