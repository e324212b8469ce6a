import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileUri, LocalObjectStore } from '../../../../lambdas/src/adapters/local/local-object-store.ts';
import { isFloeError } from '../../../../lambdas/src/errors.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'floe-store-'));

describe('LocalObjectStore', () => {
  it('puts, gets, lists recursively and lists immediate children', async () => {
    const d = dir();
    const s = new LocalObjectStore();
    const root = fileUri(d);
    await s.put(`${root}/a/b/c.txt`, 'hello');
    await s.put(`${root}/a/d.bin`, new Uint8Array([1, 2, 3]));
    expect(new TextDecoder().decode(await s.get(`${root}/a/b/c.txt`))).toBe('hello');
    expect(await s.size(`${root}/a/d.bin`)).toBe(3);
    expect(await s.list(`${root}/a`)).toEqual([`${root}/a/b/c.txt`, `${root}/a/d.bin`]);
    expect(await s.listChildren(`${root}/a`)).toEqual(['b', 'd.bin']);
    expect(await s.listChildren(`${root}/missing`)).toEqual([]);
  });

  it('putIfAbsent succeeds once, keeps the first content, and leaves no temp files', async () => {
    const d = dir();
    const s = new LocalObjectStore();
    const uri = `${fileUri(d)}/v1.json`;
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => s.putIfAbsent(uri, `writer-${i}`)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true) + 1;
    expect(new TextDecoder().decode(await s.get(uri))).toBe(`writer-${winner}`);
    expect(await s.listChildren(fileUri(d))).toEqual(['v1.json']);
  });

  it('maps a URI prefix onto a folder and rejects paths escaping it', async () => {
    const d = dir();
    const s = new LocalObjectStore([{ prefix: 'http://127.0.0.1:9/wh', dir: d }]);
    await s.put('http://127.0.0.1:9/wh/t/x.txt', 'x');
    expect(await s.exists(`${fileUri(d)}/t/x.txt`)).toBe(true);
    expect(await s.list('http://127.0.0.1:9/wh/t')).toEqual(['http://127.0.0.1:9/wh/t/x.txt']);
    expect(() => s.pathOf('http://127.0.0.1:9/wh/../etc/passwd')).toThrow(/\.\./);
  });

  it('reports a missing object as NotFound', async () => {
    const s = new LocalObjectStore();
    const err = await s.get(`${fileUri(dir())}/nope`).catch((e) => e);
    expect(isFloeError(err, 'NotFound')).toBe(true);
  });
});

/**
 * Partition folders escaped as Java's `partitionToPath` does: `%2F` (an escaped `/`) and `%00` stay
 * in the file name as written (a file name cannot hold `/` or NUL); other escapes decode as file
 * URLs always did. Every URI maps to the file it was written as, and listed URIs name it again.
 */
describe('LocalObjectStore: percent-escaped names', () => {
  const bytes = (s: string) => new TextEncoder().encode(s);

  it('stores a%2Fb as one folder named region=a%2Fb and lists it as written', async () => {
    const d = dir();
    const s = new LocalObjectStore();
    const uri = `${fileUri(d)}/t/data/region=eu%2Fwest/00000-a.parquet`;
    await s.put(uri, bytes('eu/west'));
    expect(readdirSync(join(d, 't', 'data'))).toEqual(['region=eu%2Fwest']);
    expect(s.pathOf(uri)).toBe(join(d, 't', 'data', 'region=eu%2Fwest', '00000-a.parquet'));
    expect(new TextDecoder().decode(await s.get(uri))).toBe('eu/west');
    expect(await s.list(`${fileUri(d)}/t`)).toEqual([uri]);
    expect(await s.listChildren(`${fileUri(d)}/t/data`)).toEqual(['region=eu%2Fwest']);
    await s.delete(uri);
    expect(await s.exists(uri)).toBe(false);
  });

  it('keeps %00 as text, decodes other escapes, and a literal %2F lists back to the same file', async () => {
    const d = dir();
    const s = new LocalObjectStore();
    const root = fileUri(d);
    const uris = [
      `${root}/v=%00%01`, // NUL and U+0001
      `${root}/v=%2F`, // an escaped '/'
      `${root}/v=%252F`, // the text '%2F'
      `${root}/v=%C3%A9+%2B%3D%25%3F%23%5C`, // é, '+', '+', '=', '%', '?', '#', '\'
    ].map((u) => `${u}/f.bin`);
    for (const [i, u] of uris.entries()) await s.put(u, bytes(String(i)));
    expect(readdirSync(d).sort()).toEqual(['v=%00\u0001', 'v=%2F', 'v=é++=%?#\\'].sort());
    // '%2F' (escaped '/') and '%252F' (the text '%2F') name one folder: same name, two files.
    expect(s.pathOf(uris[1]!)).toBe(s.pathOf(uris[2]!));
    const listed = await s.list(root);
    expect(listed).toHaveLength(3);
    expect(listed).toContain(uris[1]);
    for (const u of listed) expect(await s.exists(u)).toBe(true);
    // Each written URI reads what was written under it (the second put replaced the first).
    expect(new TextDecoder().decode(await s.get(uris[0]!))).toBe('0');
    expect(new TextDecoder().decode(await s.get(uris[3]!))).toBe('3');
  });

  it('decodes the %20 of a warehouse folder with a space (fileUri) as before', async () => {
    const d = join(dir(), 'my dir');
    const s = new LocalObjectStore();
    const root = fileUri(d);
    expect(root.endsWith('/my%20dir')).toBe(true);
    await s.put(`${root}/t/region=a%2Fb/x.bin`, 'x');
    expect(readdirSync(join(d, 't'))).toEqual(['region=a%2Fb']);
    expect(await s.list(root)).toEqual([`${root}/t/region=a%2Fb/x.bin`]);
  });

  it('serves escaped names under a mapped prefix the same way', async () => {
    const d = dir();
    const s = new LocalObjectStore([{ prefix: 'http://127.0.0.1:9/wh', dir: d }]);
    const uri = 'http://127.0.0.1:9/wh/t/region=%2F..%2Fx/f.bin';
    await s.put(uri, 'x');
    expect(readdirSync(join(d, 't'))).toEqual(['region=%2F..%2Fx']);
    expect(await s.list('http://127.0.0.1:9/wh/t')).toEqual([
      'http://127.0.0.1:9/wh/t/region%3D%2F..%2Fx/f.bin',
    ]);
    expect(s.pathOf('http://127.0.0.1:9/wh/t/region%3D%2F..%2Fx/f.bin')).toBe(s.pathOf(uri));
  });

  it('rejects a malformed escape as DataInvalid', async () => {
    const s = new LocalObjectStore([{ prefix: 'http://127.0.0.1:9/wh', dir: dir() }]);
    for (const bad of [`${fileUri(dir())}/a%zz`, 'http://127.0.0.1:9/wh/a%E9']) {
      let err: unknown;
      try {
        s.pathOf(bad);
      } catch (e) {
        err = e;
      }
      expect(isFloeError(err, 'DataInvalid'), String(err)).toBe(true);
    }
  });
});
