/**
 * Runs once before the tests: builds dist/ (scripts/build.mjs), so the tests that run the real
 * command (`node bin/floe.mjs …`) run the current sources, as built JavaScript like a user's.
 * bin/floe.mjs would rebuild a stale dist/ by itself, but then each of the first parallel spawns
 * would; one build here takes ~0.3 s and writes nothing when dist/ is current.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function buildDist(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
}
