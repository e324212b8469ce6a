/**
 * The behaviour every ObjectStore must share (local disk, S3, …). Call `objectStoreContract` from a
 * `*.test.ts` file with a factory that gives a fresh store and a root folder URI under which the
 * suite may write; each test works in its own sub-folder of that root.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Client } from '../../lambdas/src/adapters/aws/s3-object-store.ts';
import { isFloeError } from '../../lambdas/src/errors.ts';
import { listEntries, type ObjectStore } from '../../lambdas/src/ports/object-store.ts';

export interface ObjectStoreFixture {
  readonly store: ObjectStore;
  /** A folder URI (no trailing slash) the suite may write under. */
  readonly root: string;
  close(): Promise<void>;
}

export interface ObjectStoreContractOptions {
  /**
   * Whether `putIfAbsent` really refuses to overwrite (default true). False for S3-compatible
   * servers that ignore `If-None-Match` (s3rver): the suite then checks only the first write.
   */
  readonly honoursPutIfAbsent?: boolean;
  /**
   * Whether `listChildren` names a folder that holds only sub-folders (default true; real S3 and
   * the local disk do). s3rver's delimiter listing skips such folders: `a/b/c.txt` alone does not
   * make `a` a child of the root.
   */
  readonly listsFoldersOfFolders?: boolean;
}

/** Deterministic pseudo-random bytes (xorshift32), fast for multi-MiB payloads. */
export function bytesOf(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: readonly T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export function objectStoreContract(
  name: string,
  make: () => Promise<ObjectStoreFixture>,
  options: ObjectStoreContractOptions = {},
): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let fx: ObjectStoreFixture;
    let store: ObjectStore;
    const dir = (test: string) => `${fx.root}/${test}`;

    beforeAll(async () => {
      fx = await make();
      store = fx.store;
    });
    afterAll(async () => {
      await fx?.close();
    });

    it('round-trips binary data of 0 bytes, a few bytes and 5 MiB, and UTF-8 strings', async () => {
      const d = dir('roundtrip');
      const big = bytesOf(5 * 1024 * 1024, 7);
      const small = new Uint8Array([0, 1, 2, 127, 128, 254, 255]);
      await store.put(`${d}/empty.bin`, new Uint8Array(0));
      await store.put(`${d}/small.bin`, small);
      await store.put(`${d}/big.bin`, big);
      await store.put(`${d}/text.json`, '{"ok":"ünïcødé ✓"}');

      expect(await store.get(`${d}/empty.bin`)).toEqual(new Uint8Array(0));
      expect(await store.get(`${d}/small.bin`)).toEqual(small);
      const gotBig = await store.get(`${d}/big.bin`);
      expect(gotBig.byteLength).toBe(big.byteLength);
      expect(Buffer.compare(Buffer.from(gotBig), Buffer.from(big))).toBe(0);
      expect(text(await store.get(`${d}/text.json`))).toBe('{"ok":"ünïcødé ✓"}');

      expect(await store.size(`${d}/empty.bin`)).toBe(0);
      expect(await store.size(`${d}/small.bin`)).toBe(7);
      expect(await store.size(`${d}/big.bin`)).toBe(5 * 1024 * 1024);
      expect(await store.size(`${d}/text.json`)).toBe(new TextEncoder().encode('{"ok":"ünïcødé ✓"}').length);
    });

    it('overwrites an object with put', async () => {
      const uri = `${dir('overwrite')}/o.txt`;
      await store.put(uri, 'first version');
      await store.put(uri, 'v2');
      expect(text(await store.get(uri))).toBe('v2');
      expect(await store.size(uri)).toBe(2);
      expect(await store.list(dir('overwrite'))).toEqual([uri]);
    });

    it('exists reflects put and delete; delete is idempotent', async () => {
      const uri = `${dir('exists')}/x.bin`;
      expect(await store.exists(uri)).toBe(false);
      await store.put(uri, new Uint8Array([1]));
      expect(await store.exists(uri)).toBe(true);
      await store.delete(uri);
      expect(await store.exists(uri)).toBe(false);
      await store.delete(uri);
      await store.delete(`${dir('exists')}/never-existed.bin`);
      expect(await store.list(dir('exists'))).toEqual([]);
    });

    it('reports a missing object as NotFound naming the URI (get and size)', async () => {
      const uri = `${dir('missing')}/nope.bin`;
      for (const op of [() => store.get(uri), () => store.size(uri)]) {
        const err = await op().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isFloeError(err, 'NotFound')).toBe(true);
        expect((err as Error).message).toContain(uri);
      }
    });

    it('putIfAbsent writes a new object', async () => {
      const uri = `${dir('put-if-absent')}/v1.json`;
      expect(await store.putIfAbsent(uri, 'first')).toBe(true);
      expect(text(await store.get(uri))).toBe('first');
      const second = await store.putIfAbsent(uri, 'second');
      if (options.honoursPutIfAbsent ?? true) {
        expect(second).toBe(false);
        expect(text(await store.get(uri))).toBe('first');
      }
    });

    it('lists recursively in lexical order, with folder (not string) prefixes', async () => {
      const d = dir('list');
      const keys = ['b/2.txt', 'a.txt', 'b/1.txt', 'b/c/deep/x.txt', 'ab/z.txt', 'b0.txt'];
      for (const k of keys) await store.put(`${d}/${k}`, k);
      const all = await store.list(d);
      expect(all).toEqual(keys.map((k) => `${d}/${k}`).sort());
      expect(await store.list(`${d}/b`)).toEqual([`${d}/b/1.txt`, `${d}/b/2.txt`, `${d}/b/c/deep/x.txt`]);
      expect(await store.list(`${d}/a`)).toEqual([]); // `a.txt` and `ab/` are not under folder `a`
      expect(await store.list(`${d}/missing`)).toEqual([]);
    });

    it("listEntries lists like list, with each object's size and last-modified time", async () => {
      const d = dir('entries');
      const keys = ['b/2.txt', 'a.txt', 'b/c/deep/x.txt', 'ab/z.txt', 'b0.txt'];
      // Stores keep whole seconds (S3's LastModified); allow a second either side of the writes.
      const before = Math.floor(Date.now() / 1000) * 1000 - 1000;
      for (const [i, k] of keys.entries()) await store.put(`${d}/${k}`, bytesOf(3 * i, i + 1));
      const after = Date.now() + 1000;
      const entries = await listEntries(store, d);
      expect(entries.map((e) => e.uri)).toEqual(await store.list(d));
      expect(entries.map((e) => e.uri)).toEqual(keys.map((k) => `${d}/${k}`).sort());
      for (const e of entries) {
        const i = keys.findIndex((k) => e.uri === `${d}/${k}`);
        expect(e.size, e.uri).toBe(3 * i);
        expect(e.lastModifiedMs, e.uri).toBeGreaterThanOrEqual(before);
        expect(e.lastModifiedMs, e.uri).toBeLessThanOrEqual(after);
      }
      expect((await listEntries(store, `${d}/b`)).map((e) => e.uri)).toEqual([
        `${d}/b/2.txt`,
        `${d}/b/c/deep/x.txt`,
      ]);
      expect(await listEntries(store, `${d}/a`)).toEqual([]); // folder prefixes, as list
      expect(await listEntries(store, `${d}/missing`)).toEqual([]);
      await store.delete(`${d}/a.txt`);
      expect((await listEntries(store, d)).map((e) => e.uri)).not.toContain(`${d}/a.txt`);
    });

    it('lists more than 1,000 objects (pagination) completely and in order', async () => {
      const d = dir('many');
      const n = 1_050;
      const uris = Array.from({ length: n }, (_, i) => `${d}/${i % 2 ? 'odd' : 'even'}/k-${i}`);
      await pool(uris, 32, (u) => store.put(u, new Uint8Array(0)));
      const listed = await store.list(d);
      expect(listed).toHaveLength(n);
      expect(listed).toEqual([...uris].sort());
      expect((await listEntries(store, d)).map((e) => e.uri)).toEqual(listed);
      expect(await store.listChildren(d)).toEqual(['even', 'odd']);
      expect(await store.listChildren(`${d}/odd`)).toHaveLength(n / 2);
    });

    it('lists immediate children: objects and nested folders, sorted, without duplicates', async () => {
      const d = dir('children');
      for (const k of ['x.txt', 'b/c.txt', 'b/d.txt', 'e/f/g.txt', 'a.txt']) await store.put(`${d}/${k}`, k);
      const foldersOfFolders = options.listsFoldersOfFolders ?? true;
      // `e` holds only the folder `f`.
      expect(await store.listChildren(d)).toEqual([
        'a.txt',
        'b',
        ...(foldersOfFolders ? ['e'] : []),
        'x.txt',
      ]);
      expect(await store.listChildren(`${d}/b`)).toEqual(['c.txt', 'd.txt']);
      expect(await store.listChildren(`${d}/e`)).toEqual(['f']);
      expect(await store.listChildren(`${d}/missing`)).toEqual([]);
    });

    it('handles names with spaces, unicode and +', async () => {
      const d = dir('names');
      const names = ['with space.txt', 'plus+sign.txt', 'ünïcødé-日本.txt', 'emoji-🧊 x+y.bin'];
      for (const [i, n] of names.entries()) {
        const uri = `${d}/${n}`;
        await store.put(uri, bytesOf(10 + i, i + 1));
        expect(await store.exists(uri)).toBe(true);
        expect(await store.size(uri)).toBe(10 + i);
        expect(await store.get(uri)).toEqual(bytesOf(10 + i, i + 1));
      }
      expect(await store.listChildren(d)).toEqual([...names].sort());
      // Listed URIs may be percent-encoded (file: URLs) but name the very same objects.
      const listed = await store.list(d);
      expect(listed.map((u) => decodeURIComponent(u)).sort()).toEqual(names.map((n) => `${d}/${n}`).sort());
      for (const u of listed) {
        const i = names.findIndex((n) => decodeURIComponent(u).endsWith(`/${n}`));
        expect(await store.get(u)).toEqual(bytesOf(10 + i, i + 1));
      }
      await store.delete(`${d}/plus+sign.txt`);
      expect(await store.exists(`${d}/plus+sign.txt`)).toBe(false);
      expect(await store.listChildren(d)).toHaveLength(names.length - 1);
    });
  });
}

/**
 * s3rver on 127.0.0.1 (ephemeral port, one bucket `bucket`), plus a client for it. It runs in a
 * child Node process with `--openssl-legacy-provider`: s3rver encrypts ListObjectsV2 continuation
 * tokens with DES, which OpenSSL 3 disables, so in-process it fails every listing of more than
 * 1,000 keys with a 500. The child exits when its stdin closes (also if this process dies).
 */
export async function startS3rver(): Promise<{ client: S3Client; endpoint: string; close(): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), 'floe-s3rver-'));
  const script = `
    const S3rver = require(${JSON.stringify(createRequire(import.meta.url).resolve('s3rver'))});
    const s = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: process.env.S3RVER_DIR,
      configureBuckets: [{ name: 'bucket' }] });
    s.run().then(({ port }) => process.stdout.write(JSON.stringify({ port }) + '\\n'));
    process.stdin.on('end', () => s.close().finally(() => process.exit(0)));
    process.stdin.resume();`;
  const child = spawn(process.execPath, ['--openssl-legacy-provider', '-e', script], {
    env: { ...process.env, S3RVER_DIR: directory, NODE_OPTIONS: '' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited early (code ${code})`)));
    child.once('error', reject);
  });
  const client = createS3Client({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    maxAttempts: 1,
  });
  return {
    client,
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      client.destroy();
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
