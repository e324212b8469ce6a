import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readByteChunks, readLineBatches } from '../../../../lambdas/src/adapters/local/line-reader.ts';

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

describe('readByteChunks', () => {
  it('yields the file exactly, each chunk ending at a newline but the last, chunks never reused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-bytes-'));
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.constant('\n'), fc.constant('\r\n')), {
          maxLength: 60,
        }),
        fc.integer({ min: 1, max: 64 }),
        async (parts, chunkBytes) => {
          const bytes = Buffer.from(parts.join(''));
          const path = join(dir, `in-${n++}.ndjson`);
          writeFileSync(path, bytes);
          const chunks: Uint8Array[] = [];
          for await (const c of readByteChunks(path, chunkBytes)) chunks.push(c);
          // Kept chunks still hold what they held when yielded (no buffer is read into again).
          expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
          chunks.forEach((c, i) => {
            expect(c.length).toBeGreaterThan(0);
            if (i < chunks.length - 1) expect(c[c.length - 1]).toBe(10);
            else if (bytes.lastIndexOf(10) !== bytes.length - 1) expect(c.includes(10)).toBe(false);
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
