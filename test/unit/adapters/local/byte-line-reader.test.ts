import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ByteLine, readByteLines } from '../../../../lambdas/src/adapters/local/byte-line-reader.ts';

const dir = mkdtempSync(join(tmpdir(), 'floe-byte-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function all(path: string, max: number, chunk: number): Promise<ByteLine[]> {
  const out: ByteLine[] = [];
  for await (const b of readByteLines(path, max, chunk)) out.push(...b);
  return out;
}

const show = (l: ByteLine) =>
  'bytes' in l ? [l.number, Buffer.from(l.bytes).toString('hex')] : [l.number, `too long: ${l.tooLongBytes}`];

describe('readByteLines', () => {
  it('returns the exact bytes of every numbered line across chunk boundaries, CRLF dropped', async () => {
    const path = join(dir, 'in.ndjson');
    const content = Buffer.concat([
      Buffer.from('{"a":1}\r\n\n{"é":"🚀"}\n'),
      Buffer.from([0xff, 0xfe, 0x0d, 0x0a]),
      Buffer.from('x\ry\n  \nlast'),
    ]);
    writeFileSync(path, content);
    const want = [
      [1, Buffer.from('{"a":1}').toString('hex')],
      [2, ''],
      [3, Buffer.from('{"é":"🚀"}').toString('hex')],
      [4, 'fffe'],
      [5, Buffer.from('x\ry').toString('hex')],
      [6, '2020'],
      [7, Buffer.from('last').toString('hex')],
    ];
    for (const chunk of [1, 2, 3, 7, 64, 4096])
      expect((await all(path, 100, chunk)).map(show), `${chunk}`).toEqual(want);
  });

  it('reports a line over the limit by its length (CR not counted) without keeping it', async () => {
    const path = join(dir, 'long.ndjson');
    writeFileSync(path, `${'a'.repeat(10)}\n${'b'.repeat(11)}\r\n${'c'.repeat(10)}\r\n${'d'.repeat(25)}`);
    for (const chunk of [1, 4, 10, 1024])
      expect((await all(path, 10, chunk)).map(show), `${chunk}`).toEqual([
        [1, '61'.repeat(10)],
        [2, 'too long: 11'],
        [3, '63'.repeat(10)],
        [4, 'too long: 25'],
      ]);
  });

  it('has no line for an empty file or a final newline', async () => {
    const empty = join(dir, 'empty.ndjson');
    writeFileSync(empty, '');
    expect(await all(empty, 10, 4)).toEqual([]);
    const trailing = join(dir, 'trailing.ndjson');
    writeFileSync(trailing, 'a\n');
    expect((await all(trailing, 10, 4)).map(show)).toEqual([[1, '61']]);
  });
});
