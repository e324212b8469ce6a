/** `floe query` reads and does not write, unless `--allow-writes` (the real binary). */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/e2e.ts';
import { BIN, runNode } from '../helpers/run-node.ts';

let tmp: ReturnType<typeof tempDir>;
let wh: string;
beforeAll(async () => {
  tmp = tempDir('floe-readonly-');
  wh = join(tmp.dir, 'wh');
  const input = join(tmp.dir, 'in.ndjson');
  writeFileSync(input, '{"event_type":"a","id":1}\n{"event_type":"a","id":2}\n');
  expect((await runNode([BIN, 'load', input, '-w', wh, '-q'])).code).toBe(0);
});
afterAll(() => tmp.cleanup());

describe('floe query is read-only by default', () => {
  it('refuses COPY … TO with a one-line error, writes nothing; --allow-writes runs it', async () => {
    const out = join(tmp.dir, 'out.csv');
    const sql = `COPY (SELECT id FROM a_events) TO '${out}' (HEADER false)`;
    const refused = await runNode([BIN, 'query', '-w', wh, sql]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /floe query reads and does not write: 'COPY' writes files .*--allow-writes/,
    );
    expect(refused.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
    const allowed = await runNode([BIN, 'query', '-w', wh, '--allow-writes', sql]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(existsSync(out)).toBe(true);
  });

  it('refuses ATTACH and INSTALL, runs a plain query', async () => {
    for (const sql of [`ATTACH '${join(tmp.dir, 'x.duckdb')}' AS x`, 'INSTALL httpfs']) {
      const r = await runNode([BIN, 'query', '-w', wh, sql]);
      expect(r.code, sql).toBe(1);
      expect(r.stderr).toContain('--allow-writes');
    }
    expect(existsSync(join(tmp.dir, 'x.duckdb'))).toBe(false);
    const ok = await runNode([BIN, 'query', '-w', wh, '--json', 'SELECT count(*) AS n FROM a_events']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout.trim())).toEqual({ n: '2' });
  });
});
