#!/usr/bin/env node
/**
 * `node bench/child.mjs <module-or-script> [args…]`: runs the target in this process (as if it had
 * been started as `node <target> [args…]`: `process.argv` is rewritten to that) and, when the
 * process exits, writes one JSON line about it:
 *
 *   {"maxRssKiB":…,"wallMs":…,"userMs":…,"systemMs":…,"exitCode":…,"target":"…"}
 *
 * `maxRssKiB` is `process.resourceUsage().maxRSS` (the process's peak resident set, worker threads
 * included); `wallMs` the time from the process's start (`performance.timeOrigin`) to its exit.
 * The line goes to the file descriptor in BENCH_CHILD_FD, or is appended to the file in
 * BENCH_CHILD_OUT (else to stderr), so the target's own stdout and stderr are untouched.
 * Plain JavaScript (no tsx): the launcher adds nothing but this module to the measured process.
 */
import { appendFileSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [target, ...args] = process.argv.slice(2);
if (target === undefined) {
  process.stderr.write('usage: node bench/child.mjs <module-or-script> [args…]\n');
  process.exit(2);
}
const script = resolve(target);

process.on('exit', (code) => {
  const ru = process.resourceUsage();
  const line = `${JSON.stringify({
    maxRssKiB: ru.maxRSS,
    wallMs: Math.round(performance.now() * 10) / 10,
    userMs: Math.round(ru.userCPUTime / 1000),
    systemMs: Math.round(ru.systemCPUTime / 1000),
    exitCode: code,
    target,
  })}\n`;
  const fd = process.env.BENCH_CHILD_FD;
  const file = process.env.BENCH_CHILD_OUT;
  if (fd !== undefined && fd !== '') writeSync(Number(fd), line);
  else if (file !== undefined && file !== '') appendFileSync(file, line);
  else process.stderr.write(line);
});

process.argv = [process.argv[0], script, ...args];
await import(pathToFileURL(script).href);
