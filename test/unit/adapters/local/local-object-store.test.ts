import { mkdtempSync } from 'node:fs';
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
