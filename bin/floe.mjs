#!/usr/bin/env node
// The `floe` command: runs the JavaScript that scripts/build.mjs bundles from lambdas/src into
// dist/ (`npm ci` builds it through `prepare`; `npm run build` by hand). In a checkout whose
// sources changed since the last build (an edit, a `git pull`) it rebuilds first — well under a
// second with esbuild — so it never runs stale code and needs no manual step.
import { distIsCurrent } from '../scripts/dist-state.mjs';

// Floe supports Node 20; the AWS SDK's notice that its 2027 releases will not is documented as
// silenced by this switch (aws/aws-sdk-js-v3#7983). An explicit value in the environment wins.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// glibc raises its mmap threshold each time a large block is freed (up to 32 MiB); from then on
// the column buffers a load allocates and frees come from per-thread heap arenas that stay
// resident. A fixed threshold keeps them mmapped, returned when freed: 3M records into 230
// tables with two worker threads peaked at 577 MB RSS, 452 MB with it (bench/README.md). glibc
// reads the setting only at start, so `floe load` runs itself once more with it set.
if (wantsMallocTuning()) process.exit(await rerunWith({ MALLOC_MMAP_THRESHOLD_: '131072' }));

if (!distIsCurrent()) await rebuild();
const { main } = await import('../dist/cli/main.js');
process.exitCode = await main(process.argv);

async function rebuild() {
  try {
    const { build } = await import('../scripts/build.mjs');
    await build();
  } catch (e) {
    const why =
      e?.code === 'ERR_MODULE_NOT_FOUND'
        ? 'esbuild is not installed; run `npm ci`'
        : Array.isArray(e?.errors)
          ? 'the sources do not compile (errors above)'
          : String(e?.message ?? e);
    process.stderr.write(`floe: dist/ is missing or out of date and could not be rebuilt: ${why}\n`);
    process.exit(1);
  }
}

/** `floe load` on glibc, not already tuned (and not turned off with FLOE_MALLOC_TUNING=0). */
function wantsMallocTuning() {
  if (process.platform !== 'linux' || process.argv[2] !== 'load') return false;
  if (process.env.MALLOC_MMAP_THRESHOLD_ !== undefined || process.env.FLOE_MALLOC_TUNING === '0')
    return false;
  return Boolean(process.report?.getReport?.().header?.glibcVersionRuntime);
}

/** Runs this command again in a child with `env` added; resolves to its exit code. */
async function rerunWith(env) {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  // Signals sent to this process alone (a supervisor's SIGTERM) reach the load too.
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const forward = (sig) => child.kill(sig);
  for (const sig of signals) process.on(sig, forward);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      for (const sig of signals) process.off(sig, forward);
      if (signal) process.kill(process.pid, signal);
      resolve(code ?? 1);
    });
  });
}
