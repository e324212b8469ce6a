/**
 * Hostile routing values through every naming rule (routing field, explicit table field, template,
 * consolidation variant column): whatever comes in, every table is a legal name inside the
 * warehouse, or the record is a dead letter naming why; nothing is written outside the warehouse;
 * and every table written passes the independent Iceberg validator.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../lambdas/src/config.ts';
import { fileWarehouse, load, tempDir } from '../helpers/e2e.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

const HOSTILE = [
  '../x',
  '../../../../etc/passwd',
  '..',
  '.',
  '/abs/path',
  'a\\\\b',
  'x'.repeat(5000),
  'ÉLITE ✈ 東京',
  "orders'; DROP TABLE orders;--",
  'SELECT * FROM t',
  '%2e%2e%2f',
  '\u0000nul',
  ' ',
  '_',
  'aws_reserved',
];

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else out.push(p);
  }
  return out;
}

describe('hostile routing values', () => {
  const configs = {
    'routing field': {},
    'table field': { routing: { tableField: 'table', defaultTable: null } },
    template: { routing: { template: '{source}_{payload.kind}', defaultTable: null } },
    consolidation: {
      consolidate: [
        { table: 'activity', discriminators: ['kind'], shared: ['id'], variantColumn: '{kind}_attrs' },
      ],
    },
  } as const;

  for (const [rule, cfg] of Object.entries(configs)) {
    it(`${rule}: legal tables inside the warehouse, or dead letters`, async () => {
      const { dir, cleanup } = tempDir();
      try {
        const root = join(dir, 'wh');
        const wh = fileWarehouse(root);
        const lines = HOSTILE.map((v, i) =>
          JSON.stringify({
            id: i,
            event_type: v,
            table: v,
            source: v,
            payload: { kind: v },
            kind: v,
            value: 1,
          }),
        );
        const run = await load(wh, [{ name: 'hostile.ndjson', lines }], { config: parseConfig(cfg) });
        const landed = run.report.tables.reduce((n, t) => n + t.rows, 0);
        expect(landed + run.dead.length).toBe(HOSTILE.length);
        for (const d of run.dead) expect(d.detail.length).toBeGreaterThan(0);
        for (const t of run.report.tables) expect(t.table).toMatch(/^[a-z0-9]([a-z0-9_]{0,253}[a-z0-9])?$/);
        // Every file written is inside the warehouse folder.
        for (const f of files(dir)) expect(relative(root, f).startsWith('..'), f).toBe(false);
        for (const ns of await wh.catalog.listNamespaces()) {
          for (const t of await wh.catalog.listTables(ns)) expect(t).toMatch(/^[a-z0-9_]+$/);
        }
        // And every table is a valid Iceberg table (independent validator, every snapshot).
        const reports = await expectWarehouseValid(wh);
        expect([...reports.values()].reduce((n, r) => n + r.stats.liveRecords, 0n)).toBe(BigInt(landed));
      } finally {
        cleanup();
      }
    });
  }
});
