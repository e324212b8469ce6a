/**
 * `floe load` of files that producers' framings wrap (issue 20): gzip and zstd NDJSON (the zstd
 * one written by the reference CLI, test/fixtures/framing), CloudWatch Logs subscription batches
 * one per line, and EventBridge events, each table read back with our query engine and checked
 * against what the files hold.
 */
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadCommand } from '../../lambdas/src/cli/load-command.ts';
import { openQueryEngine } from '../../lambdas/src/cli/query-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { dynamoDbStreamArb, finalState, itemKey, itemState, rowState } from '../fuzz/dynamodb-streams.ts';
import { tempDir } from '../helpers/e2e.ts';
import { Rng } from '../helpers/faults.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/framing/', import.meta.url));

describe('floe load of framed files', () => {
  it('gzip, zstd, CloudWatch Logs batches and EventBridge events load as their records', async () => {
    const tmp = tempDir('floe-load-framed-');
    try {
      const rng = new Rng(7);
      const orders = Array.from({ length: 3000 }, (_, i) =>
        JSON.stringify({ event_type: 'order', order_id: i, amount: rng.int(1, 999) / 100 }),
      );
      const gz = join(tmp.dir, 'orders.ndjson.gz');
      writeFileSync(gz, gzipSync(`${orders.join('\n')}\n`));
      const zst = join(tmp.dir, 'lines.ndjson.zst');
      copyFileSync(join(FIXTURES, 'lines.ndjson.zst'), zst);
      let logEvents = 0;
      const batches = Array.from({ length: 20 }, (_, b) => {
        const n = rng.int(1, 20);
        logEvents += n;
        return JSON.stringify({
          messageType: 'DATA_MESSAGE',
          owner: '123456789012',
          logGroup: '/aws/lambda/app',
          logStream: `s-${b}`,
          subscriptionFilters: ['f'],
          logEvents: Array.from({ length: n }, (_, i) => ({
            id: `${b}-${i}`,
            timestamp: 1764700000000 + b * 100 + i,
            message: i % 2 ? `plain text ${i}` : JSON.stringify({ level: 'INFO', n: i }),
          })),
        });
      });
      const logs = join(tmp.dir, 'logs.ndjson');
      writeFileSync(logs, `${batches.join('\n')}\n`);
      const bridge = join(tmp.dir, 'bridge.ndjson');
      writeFileSync(
        bridge,
        `${Array.from({ length: 50 }, (_, i) =>
          JSON.stringify({
            version: '0',
            id: `e-${i}`,
            'detail-type': 'Invoice Paid',
            source: 'billing',
            account: '1',
            time: '2026-12-02T00:00:00Z',
            region: 'eu-west-1',
            resources: [],
            detail: { event_type: 'invoice', invoice_id: i },
          }),
        ).join('\n')}\n`,
      );
      const wh = join(tmp.dir, 'wh');
      const out: string[] = [];
      for (const f of [gz, zst, logs, bridge]) {
        expect(await loadCommand([f], { warehouse: wh, quiet: true }, (s) => out.push(s))).toBe(0);
      }
      const engine = await openQueryEngine(openWarehouse(wh));
      try {
        const q = async (sql: string) => (await engine.query(sql)).rows;
        // 3000 from gzip; ids 1 and 2 from the zstd fixture.
        expect(
          await q('SELECT count(*) AS n, count(DISTINCT order_id) AS d, count(id) AS z FROM order_events'),
        ).toEqual([{ n: 3002n, d: 3000n, z: 2n }]);
        expect(await q('SELECT count(*) AS n FROM user_events')).toEqual([{ n: 1n }]);
        expect(
          await q('SELECT count(*) AS n, count(DISTINCT log_event_id) AS d FROM unknown_events'),
        ).toEqual([{ n: BigInt(logEvents), d: BigInt(logEvents) }]);
        expect(
          await q('SELECT count(*) AS n, min(detail_type) AS t, min(source) AS s FROM invoice_events'),
        ).toEqual([{ n: 50n, t: 'Invoice Paid', s: 'billing' }]);
      } finally {
        engine.close();
      }
    } finally {
      tmp.cleanup();
    }
  }, 60_000);

  it('a DynamoDB change log loads as the source table final state, whatever the order and however often', async () => {
    await fc.assert(
      fc.asyncProperty(dynamoDbStreamArb({ maxKeys: 8, minHistories: 20, maxHistories: 40 }), async (s) => {
        const tmp = tempDir('floe-load-dynamodb-');
        try {
          // Three files: the first half, the rest gzipped, then the first half again (every change
          // in it late by then): loaded in that order with no config.
          const half = Math.floor(s.lines.length / 2);
          const a = join(tmp.dir, 'changes-1.ndjson');
          const b = join(tmp.dir, 'changes-2.ndjson.gz');
          const c = join(tmp.dir, 'changes-1-again.ndjson');
          writeFileSync(a, `${s.lines.slice(0, half).join('\n')}\n`);
          writeFileSync(b, gzipSync(`${s.lines.slice(half).join('\n')}\n`));
          writeFileSync(c, `${[...s.lines.slice(0, half)].reverse().join('\n')}\n`);
          const wh = join(tmp.dir, 'wh');
          for (const f of [a, b, c])
            expect(await loadCommand([f], { warehouse: wh, quiet: true }, () => undefined)).toBe(0);
          const engine = await openQueryEngine(openWarehouse(wh));
          try {
            const rows = (await engine.query('SELECT * FROM music_catalog')).rows;
            const got = new Map(
              rows.map((r) => [itemKey(String(r.artist), BigInt(r.songid as bigint)), rowState(r)]),
            );
            expect(got.size).toBe(rows.length);
            expect(got).toEqual(new Map([...finalState(s.changes)].map(([k, i]) => [k, itemState(i)])));
          } finally {
            engine.close();
          }
        } finally {
          tmp.cleanup();
        }
      }),
      { numRuns: 4, seed: 20 },
    );
  }, 120_000);
});
