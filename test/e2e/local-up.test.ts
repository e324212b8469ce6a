/**
 * `floe local up` keeps the stack running: events sent with `floe generate` to the endpoint it
 * prints land in the warehouse while it runs, and `floe query` sees them.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateCommand } from '../../lambdas/src/cli/generate-command.ts';
import { openQueryEngine } from '../../lambdas/src/cli/query-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { tempDir } from '../helpers/e2e.ts';
import { startLocalUp } from '../helpers/local-up.ts';

describe('floe local up', () => {
  it('prints its endpoints, ingests and commits what is sent, and stops cleanly', async () => {
    const tmp = tempDir('floe-local-up-');
    const dir = join(tmp.dir, 'wh');
    const up = await startLocalUp(dir);
    const { endpoint, lines } = up;
    try {
      await generateCommand({ endpoint, events: '400', seed: '3' }, () => undefined);
      const wh = openWarehouse(dir);
      let total = 0;
      for (let i = 0; i < 100 && total < 400; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const engine = await openQueryEngine(wh);
        try {
          const tables = ['order_events', 'user_events', 'click_events'];
          total = 0;
          // Only the tables the engine saw when it opened (one may be created just after).
          const seen = new Set(
            (await engine.query(`SELECT table_name AS t FROM information_schema.tables`)).rows.map(
              (r) => r.t,
            ),
          );
          for (const t of tables) {
            if (!seen.has(t)) continue;
            total += Number((await engine.query(`SELECT count(*) AS n FROM ${t}`)).rows[0]!.n);
          }
        } finally {
          engine.close();
        }
      }
      expect(total).toBe(400);
      expect(lines.some((l) => l.startsWith('  committed order_events'))).toBe(true);
    } finally {
      await up.stop();
      tmp.cleanup();
    }
    expect(lines.at(-1)).toBe('stopping…');
  }, 60_000);
});
