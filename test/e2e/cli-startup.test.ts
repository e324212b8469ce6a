/**
 * `floe` starts fast: it runs the built JavaScript in dist/ (not the TypeScript sources), and the
 * commands that do not need them load none of the heavy packages (DuckDB, parquet-wasm, Arrow,
 * the AWS SDK, the emulators). A module hook logs every module the process resolves.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runNode } from '../helpers/run-node.ts';

const HEAVY =
  /node_modules\/(@duckdb|parquet-wasm|apache-arrow|@aws-sdk|@smithy|@aws-lambda-powertools|kinesalite|dynalite|avsc)\//;

const tmp = mkdtempSync(join(tmpdir(), 'floe-startup-'));
// An empty warehouse, as `floe local up` leaves one: only its `_floe/` marker.
mkdirSync(join(tmp, 'empty-warehouse', '_floe'), { recursive: true });
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs `floe ARGS…` and returns its exit code and the URLs of every module it resolved. */
async function resolvedModules(name: string, args: string[]): Promise<{ code: number; urls: string[] }> {
  const log = join(tmp, `${name}.log`);
  writeFileSync(log, '');
  const hooks = join(tmp, `${name}-hooks.mjs`);
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}
`,
  );
  const register = `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});`;
  const r = await runNode(['--import', `data:text/javascript,${encodeURIComponent(register)}`, BIN, ...args]);
  expect(r.stderr).toBe('');
  return {
    code: r.code,
    urls: readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l !== ''),
  };
}

describe('floe start-up', () => {
  it.each([
    ['help', ['--help']],
    ['tables', ['tables', '-w', join(tmp, 'empty-warehouse')]],
  ])('floe %s runs dist/ and loads no heavy package', async (name, args) => {
    const { code, urls } = await resolvedModules(name, args);
    expect(code).toBe(0);
    expect(urls.some((u) => u.endsWith('/dist/cli/main.js'))).toBe(true);
    expect(urls.filter((u) => u.endsWith('.ts') || u.includes('/node_modules/tsx/'))).toEqual([]);
    expect(urls.filter((u) => HEAVY.test(u))).toEqual([]);
  });
});
