/**
 * bin/floe.mjs runs dist/ only when it was built from the current sources (else it rebuilds):
 * scripts/dist-state.mjs decides by the inputs' mtimes in dist/build-info.json. Tested on a copy in
 * a temporary folder, so the repository's own dist/ is left alone.
 */
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/run-node.ts';

const root = mkdtempSync(join(tmpdir(), 'floe-dist-state-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

for (const dir of ['scripts', 'src', 'dist/cli']) mkdirSync(join(root, dir), { recursive: true });
copyFileSync(join(ROOT, 'scripts/dist-state.mjs'), join(root, 'scripts/dist-state.mjs'));
writeFileSync(join(root, 'dist/cli/main.js'), '');
const source = join(root, 'src/a.ts');
writeFileSync(source, 'export const a = 1;\n');
// Whole milliseconds, so that utimes (which takes a Date) can put it back exactly.
const builtMtime = new Date(Date.UTC(2026, 0, 1));
utimesSync(source, builtMtime, builtMtime);
const writeBuildInfo = () =>
  writeFileSync(
    join(root, 'dist/build-info.json'),
    JSON.stringify({ inputs: { 'src/a.ts': statSync(source).mtimeMs } }),
  );

const { distIsCurrent } = (await import(pathToFileURL(join(root, 'scripts/dist-state.mjs')).href)) as {
  distIsCurrent(): boolean;
};

describe('dist-state', () => {
  it('is current right after a build, stale once a source changes or vanishes', () => {
    writeBuildInfo();
    expect(distIsCurrent()).toBe(true);
    utimesSync(source, new Date(), new Date(builtMtime.getTime() + 5_000));
    expect(distIsCurrent()).toBe(false);
    utimesSync(source, new Date(), builtMtime);
    expect(distIsCurrent()).toBe(true);
    rmSync(source);
    expect(distIsCurrent()).toBe(false);
    writeFileSync(source, 'export const a = 1;\n');
    utimesSync(source, new Date(), builtMtime);
  });

  it('is stale without build-info.json or without the built entry', () => {
    writeBuildInfo();
    rmSync(join(root, 'dist/cli/main.js'));
    expect(distIsCurrent()).toBe(false);
    writeFileSync(join(root, 'dist/cli/main.js'), '');
    expect(distIsCurrent()).toBe(true);
    rmSync(join(root, 'dist/build-info.json'));
    expect(distIsCurrent()).toBe(false);
  });

  it("the repository's build records the CLI's sources and the build script as inputs", () => {
    const info = JSON.parse(readFileSync(join(ROOT, 'dist/build-info.json'), 'utf8')) as {
      inputs: Record<string, number>;
    };
    expect(Object.keys(info.inputs)).toEqual(
      expect.arrayContaining(['lambdas/src/cli/main.ts', 'lambdas/src/local/stack.ts', 'scripts/build.mjs']),
    );
  });
});
