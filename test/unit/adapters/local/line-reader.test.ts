import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLineBatches } from '../../../../lambdas/src/adapters/local/line-reader.ts';

async function all(path: string, chunk: number): Promise<string[]> {
  const out: string[] = [];
  for await (const b of readLineBatches(path, chunk)) out.push(...b);
  return out;
}

describe('readLineBatches', () => {
  it('returns every line exactly, across chunk boundaries, CRLF, multi-byte characters and no final newline', async () => {
    const lines = ['{"a":1}', '', '{"é":"ünïcödé 🚀"}', 'x'.repeat(50), '{"b":2}'];
    const path = join(mkdtempSync(join(tmpdir(), 'floe-lines-')), 'in.ndjson');
    writeFileSync(path, `${lines.slice(0, 3).join('\r\n')}\n${lines.slice(3).join('\n')}`);
    for (const chunk of [1, 3, 7, 64, 4096]) expect(await all(path, chunk)).toEqual(lines);
  });

  it('keeps a trailing empty line out but keeps blank lines inside', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'floe-lines-')), 'in.ndjson');
    writeFileSync(path, 'a\n\nb\n');
    expect(await all(path, 2)).toEqual(['a', '', 'b']);
  });
});
