#!/usr/bin/env node
// The `floe` command: runs the JavaScript that scripts/build.mjs bundles from lambdas/src into
// dist/ (`npm ci` builds it through `prepare`; `npm run build` by hand). In a checkout whose
// sources changed since the last build (an edit, a `git pull`) it rebuilds first — well under a
// second with esbuild — so it never runs stale code and needs no manual step.
import { distIsCurrent } from '../scripts/dist-state.mjs';

// Floe supports Node 20; the AWS SDK's notice that its 2027 releases will not is documented as
// silenced by this switch (aws/aws-sdk-js-v3#7983). An explicit value in the environment wins.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

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
