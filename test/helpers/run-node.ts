/** Runs `node ARGS…` from the repository root as its own process and collects its output. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = `${ROOT}bin/floe.mjs`;

export interface NodeRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `env` entries set to undefined are removed from the child's environment. */
export function runNode(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
): Promise<NodeRun> {
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...args],
      { cwd: ROOT, env: childEnv, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}
