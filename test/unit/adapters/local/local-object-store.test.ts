import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

  it('names every file: URI literally, as Hadoop Path and PyIceberg read it, and lists it back as written', async () => {
    const d = join(dir(), 'my dir é');
    const s = new LocalObjectStore();
    const root = fileUri(d);
    expect(root).toBe(`file://${d}`);
    const names = [
      'v=%00%01', // NUL and U+0001, escaped
      'v=%2F', // an escaped '/'
      'v=%252F', // the text '%252F'
      'v=%C3%A9+%2B%3D%25%3F%23%5C', // é, '+', '+', '=', '%', '?', '#', '\\' escaped
      'v=a b:c=d?e#f ü', // the same characters unescaped
      'v=100%', // not an escape at all
      'v=tab\tnew\nline', // control characters as they are
    ];
    const uris = names.map((n) => `${root}/${n}/f.bin`);
    for (const [i, u] of uris.entries()) await s.put(u, bytes(String(i)));
    expect(readdirSync(d).sort()).toEqual([...names].sort());
    expect(await s.list(root)).toEqual([...uris].sort());
    for (const [i, u] of uris.entries()) {
      expect(s.pathOf(u)).toBe(join(d, names[i]!, 'f.bin'));
      expect(new TextDecoder().decode(await s.get(u))).toBe(String(i));
    }
    expect(await s.listChildren(root)).toEqual([...names].sort());
    expect(s.pathOf(`file:${d}/x`)).toBe(join(d, 'x'));
    expect(s.pathOf(`file://localhost${d}/x`)).toBe(join(d, 'x'));
  });

  it('still reads a warehouse written percent-decoded, and writes what is new literally', async () => {
    const d = join(dir(), 'my dir');
    const s = new LocalObjectStore();
    // As the store wrote before: the location escaped, the folders decoded (all but %2F).
    const old = `${pathToFileURL(d).href}/t/data/region=x%3Dy/f.bin`;
    expect(old).toContain('/my%20dir/');
    mkdirSync(join(d, 't', 'data', 'region=x=y'), { recursive: true });
    writeFileSync(join(d, 't', 'data', 'region=x=y', 'f.bin'), 'old');
    expect(s.pathOf(old)).toBe(join(d, 't', 'data', 'region=x=y', 'f.bin'));
    expect(new TextDecoder().decode(await s.get(old))).toBe('old');
    expect(await s.exists(old)).toBe(true);
    expect(await s.size(old)).toBe(3);
    // Listed under the old spelling: the files found, each a URI that reads back.
    const listed = await s.list(`${pathToFileURL(d).href}/t`);
    expect(listed).toEqual([`${pathToFileURL(d).href}/t/data/region=x=y/f.bin`]);
    expect(new TextDecoder().decode(await s.get(listed[0]!))).toBe('old');
    // A new file under the literal spelling gets the literal folder, beside the old one.
    await s.put(`${fileUri(d)}/t/data/region=x%3Dy/g.bin`, 'new');
    expect(readdirSync(join(d, 't', 'data')).sort()).toEqual(['region=x%3Dy', 'region=x=y']);
    // Once the literal name exists it wins over the decoded one.
    await s.put(`${fileUri(d)}/t/data/region=x%3Dy/f.bin`, 'literal');
    expect(new TextDecoder().decode(await s.get(`${fileUri(d)}/t/data/region=x%3Dy/f.bin`))).toBe('literal');
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

  it('rejects a malformed escape under a mapped prefix, and a file URI of another host, as DataInvalid', async () => {
    const s = new LocalObjectStore([{ prefix: 'http://127.0.0.1:9/wh', dir: dir() }]);
    for (const bad of ['http://127.0.0.1:9/wh/a%zz', 'http://127.0.0.1:9/wh/a%E9', 'file://host/x']) {
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
