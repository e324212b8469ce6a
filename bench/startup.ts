/**
 * Start-up of the `floe` command (issue "A fresh machine and a clean terminal"): `floe --help` and
 * `floe tables` on an empty warehouse against a bare `node -e 0`, each as a child process, in
 * alternation, median of BENCH_STARTUP_RUNS. Target: each within 3 × `node -e 0`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envInt, median, type SummaryRow } from './common.ts';

const BIN = fileURLToPath(new URL('../bin/floe.mjs', import.meta.url));
const TARGET_RATIO = 3;

function timeMs(args: readonly string[]): number {
  const t0 = performance.now();
  execFileSync(process.execPath, [...args], { stdio: 'ignore' });
  return performance.now() - t0;
}

export async function benchStartup(work: string): Promise<SummaryRow[]> {
  const runs = envInt('BENCH_STARTUP_RUNS', 15);
  const warehouse = join(work, 'startup-empty-warehouse');
  mkdirSync(warehouse, { recursive: true });
  const commands = {
    node: ['-e', '0'],
    help: [BIN, '--help'],
    tables: [BIN, 'tables', '-w', warehouse],
  };
  console.log(`\n## Start-up: floe --help, floe tables (empty warehouse) vs node -e 0, ${runs} runs each\n`);
  // Untimed: builds dist/ if it is stale and warms the file cache.
  for (const args of Object.values(commands)) timeMs(args);
  const times = { node: [] as number[], help: [] as number[], tables: [] as number[] };
  for (let i = 0; i < runs; i++) {
    for (const [name, args] of Object.entries(commands)) times[name as keyof typeof times].push(timeMs(args));
  }
  const node = median(times.node);
  const row = (measure: string, ms: number): SummaryRow => ({
    measure,
    value: `${ms.toFixed(0)} ms = ${(ms / node).toFixed(2)} × node -e 0`,
    target: `≤ ${TARGET_RATIO} × node -e 0`,
    pass: ms <= TARGET_RATIO * node,
  });
  for (const [name, xs] of Object.entries(times)) {
    console.log(
      `  ${name.padEnd(6)} median ${median(xs).toFixed(0)} ms  (${xs.map((x) => x.toFixed(0)).join(' ')})`,
    );
  }
  return [
    { measure: 'node -e 0 (start-up baseline)', value: `${node.toFixed(0)} ms`, target: '' },
    row('floe --help', median(times.help)),
    row('floe tables (empty warehouse)', median(times.tables)),
  ];
}
