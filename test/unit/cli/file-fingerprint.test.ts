/** File fingerprints (cli/file-fingerprint.ts): computed on the chunks as they pass, or of a prefix. */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readByteChunks } from '../../../lambdas/src/adapters/local/line-reader.ts';
import type { FileFingerprint } from '../../../lambdas/src/app/load-history.ts';
import { fingerprinted, prefixFingerprint } from '../../../lambdas/src/cli/file-fingerprint.ts';

const tmp = mkdtempSync(join(tmpdir(), 'floe-fingerprint-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const sha128 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex').slice(0, 32);

describe('fingerprinted', () => {
  it('passes every chunk through unchanged and reports the SHA-256 (128 bits) and size of them all', async () => {
    const bytes = Buffer.from(
      `${Array.from({ length: 5000 }, (_, i) => `{"i":${i}}`).join('\n')}\n{"last":true}`,
    );
    const path = join(tmp, 'lines.ndjson');
    writeFileSync(path, bytes);
    let fp: FileFingerprint | undefined;
    const seen: Uint8Array[] = [];
    // Small chunks: the hash must cover the joins between them.
    for await (const c of fingerprinted(readByteChunks(path, 1000), (f) => {
      fp = f;
    }))
      seen.push(Buffer.from(c));
    expect(Buffer.concat(seen).equals(bytes)).toBe(true);
    expect(fp).toEqual({ hash: sha128(bytes), size: bytes.length });
  });

  it('reports only once the last chunk is consumed', async () => {
    let done = false;
    const it = fingerprinted(
      (async function* () {
        yield new Uint8Array([1]);
      })(),
      () => {
        done = true;
      },
    );
    await it.next();
    expect(done).toBe(false);
    await it.next();
    expect(done).toBe(true);
  });
});

describe('prefixFingerprint', () => {
  it("is the fingerprint of the file's first bytes (and of nothing for 0)", async () => {
    const path = join(tmp, 'grown.ndjson');
    writeFileSync(path, 'first line\nsecond line\n');
    expect(await prefixFingerprint(path, 11)).toEqual({
      hash: sha128(Buffer.from('first line\n')),
      size: 11,
    });
    expect(await prefixFingerprint(path, 0)).toEqual({ hash: sha128(new Uint8Array()), size: 0 });
  });
});
