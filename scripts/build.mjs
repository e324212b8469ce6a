#!/usr/bin/env node
/**
 * `npm run build`, also run by `npm ci` through `prepare`: bundles the `floe` command from
 * lambdas/src into dist/cli/ as ESM JavaScript, so the command starts without transpiling.
 *
 * - Packages stay in node_modules (`packages: 'external'`): native and wasm modules (DuckDB,
 *   parquet-wasm, leveldown under kinesalite / dynalite) load from there as they expect.
 * - Code splitting keeps every `await import()` of a command a real lazy import, so `floe --help`
 *   loads neither DuckDB nor the AWS SDK nor Arrow.
 * - Only files whose bytes changed are written, each atomically (temp file + rename): tests and a
 *   running `floe` may read dist/ while another process rebuilds it.
 *
 * dist/build-info.json (written last) records each input's mtime; bin/floe.mjs rebuilds when one
 * differs (scripts/dist-state.mjs).
 */
import { promises as fs } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_INFO, DIST, ROOT } from './dist-state.mjs';

/** A `floe` started before a rebuild may still import an old chunk: keep those for a while. */
const OLD_OUTPUT_GRACE_MS = 10 * 60_000;

export async function build() {
  const startedMs = Date.now();
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    // The load's worker threads run a script of their own (engine/load-workers.ts finds it).
    entryPoints: {
      'cli/main': 'lambdas/src/cli/main.ts',
      'cli/load-worker': 'lambdas/src/engine/load-worker.ts',
    },
    outdir: DIST,
    chunkNames: 'cli/chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const outputs = new Set();
  for (const file of result.outputFiles) {
    await writeIfChanged(file.path, file.contents);
    outputs.add(file.path);
  }
  await removeOldOutputs(join(DIST, 'cli'), outputs);
  const self = relative(ROOT, fileURLToPath(import.meta.url));
  const inputs = {};
  for (const input of [...Object.keys(result.metafile.inputs), self]) {
    const st = await fs.stat(join(ROOT, input)).catch(() => undefined);
    // Edited (or removed) while esbuild ran: the output may hold the old text; -1 forces a rebuild.
    inputs[input] = st && st.mtimeMs < startedMs ? st.mtimeMs : -1;
  }
  await writeIfChanged(BUILD_INFO, `${JSON.stringify({ inputs }, null, 1)}\n`);
}

async function writeIfChanged(path, contents) {
  const bytes = typeof contents === 'string' ? Buffer.from(contents) : contents;
  const old = await fs.readFile(path).catch(() => undefined);
  if (old?.equals(bytes)) return;
  await fs.mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await fs.writeFile(temp, bytes);
  await fs.rename(temp, path);
}

async function removeOldOutputs(dir, keep) {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  for (const e of entries) {
    const path = join(e.parentPath ?? e.path, e.name);
    if (!e.isFile() || keep.has(path)) continue;
    // Another build's temporary file may be renamed away meanwhile.
    const st = await fs.stat(path).catch(() => undefined);
    if (st && Date.now() - st.mtimeMs > OLD_OUTPUT_GRACE_MS) await fs.rm(path, { force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    await build();
  } catch (e) {
    // `npm ci --omit=dev` runs `prepare` too, without esbuild: a note there, not a failed install.
    if (!(process.argv.includes('--prepare') && e?.code === 'ERR_MODULE_NOT_FOUND')) throw e;
    console.warn('floe: esbuild is not installed (dev dependencies omitted), so dist/ was not built');
  }
}
