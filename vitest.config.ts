import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    env: {
      // Floe supports Node 20: keep the AWS SDK's end-of-support notice for Node 20 out of test
      // output (its documented switch; bin/floe.mjs sets it for the command).
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default (all cores but one) runs one file at a time on a 2-core machine; most test
    // files wait on emulators, DuckDB or child processes, so two at a time halves the wall time.
    maxWorkers: 2,
  },
});
