/**
 * Write-audit-publish on a local warehouse (issue 21): `floe load --branch audit` commits to a
 * branch that `main` does not see; `floe branch publish` fast-forwards main to it, and refuses
 * (saying why) once main moved on its own. Read back independently of Floe's query engine: the
 * snapshot each ref names, its manifests walked here, its Parquet files read by DuckDB; and the
 * independent validator over every snapshot. Inputs drawn from the sample generator per seed.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { publishCommand } from '../../lambdas/src/cli/branch-command.ts';
import { loadCommand } from '../../lambdas/src/cli/load-command.ts';
import { maintainCommand } from '../../lambdas/src/cli/maintain-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import type { TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import {
  generate,
  groupByTable,
  type Json,
  liveFiles,
  openDuck,
  sorted,
  sqlString,
  tempDir,
} from '../helpers/e2e.ts';
import { readTableRows } from '../helpers/iceberg-rows.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

const NS = 'default';

/** Event ids per table of `events`. */
function idsOf(...batches: readonly (readonly Json[])[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [t, evs] of groupByTable(batches.flat())) out.set(t, sorted(evs.map((e) => String(e.event_id))));
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

describe('floe load --branch and floe branch publish', () => {
  it('a branch holds its loads apart from main until published; publishing only fast-forwards', async () => {
    const seen = { published: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 5, max: 60 }),
        async (seed, n) => {
          const tmp = tempDir('floe-branches-');
          try {
            const wh = join(tmp.dir, 'wh');
            const batch = (k: number) => {
              const g = generate(n, 'v1', seed * 10 + k);
              const file = join(tmp.dir, `b${k}.ndjson`);
              writeFileSync(file, `${g.lines.join('\n')}\n`);
              return { file, events: g.events };
            };
            const [a, b, c, d] = [batch(1), batch(2), batch(3), batch(4)];
            const quiet = () => undefined;
            const load = async (file: string, branch?: string) =>
              loadCommand([file], { warehouse: wh, quiet: true, ...(branch ? { branch } : {}) }, quiet);
            const w = openWarehouse(wh);
            const tables = async () => [...idsOf(a.events, b.events, c.events, d.events).keys()];
            /** Event ids per table in the snapshot `ref` names, read by DuckDB from its live files. */
            const read = async (ref: string): Promise<Map<string, string[]>> => {
              const duck = await openDuck();
              const out = new Map<string, string[]>();
              try {
                for (const name of await tables()) {
                  if (!(await w.catalog.tableExists({ namespace: NS, name }))) continue;
                  const m: TableMetadata = (await w.catalog.loadTable({ namespace: NS, name })).metadata;
                  // A table the branch never reached reads as main (Floe's branches start from it).
                  const id = (m.refs[ref] ?? m.refs.main)?.['snapshot-id'];
                  if (id === undefined) continue;
                  const snap = m.snapshots.find((s) => s['snapshot-id'] === id)!;
                  const files = (await liveFiles(w.store, snap)).map((f) => w.store.pathOf(f.file.file_path));
                  if (files.length === 0) continue;
                  const rows = await duck.rows(
                    `SELECT event_id FROM read_parquet([${files.map(sqlString).join(', ')}], union_by_name=true)`,
                  );
                  out.set(name, sorted(rows.map((r) => String(r.event_id))));
                }
              } finally {
                duck.close();
              }
              return new Map([...out].sort(([x], [y]) => (x < y ? -1 : 1)));
            };

            // The model: per table, main's ids, the branch's (absent: it reads as main), and
            // whether main moved since the branch left it.
            // (Multisets: the sample generator repeats an event now and then, as producers do.)
            const main = new Map<string, string[]>();
            const audit = new Map<string, string[]>();
            const moved = new Set<string>();
            const model = (ref: 'main' | 'audit') =>
              new Map(
                [...new Set([...main.keys(), ...audit.keys()])]
                  .sort()
                  .map((t) => [
                    t,
                    sorted([...((ref === 'audit' ? audit.get(t) : undefined) ?? main.get(t) ?? [])]),
                  ]),
              );
            const loaded = async (x: { file: string; events: readonly Json[] }, branch?: 'audit') => {
              expect(await load(x.file, branch)).toBe(0);
              for (const [t, ids] of idsOf(x.events)) {
                if (branch === undefined) {
                  main.set(t, [...(main.get(t) ?? []), ...ids]);
                  if (audit.has(t)) moved.add(t);
                } else audit.set(t, [...(audit.get(t) ?? main.get(t) ?? []), ...ids]);
              }
              expect(await read('main')).toEqual(model('main'));
              expect(await read('audit')).toEqual(model('audit'));
            };
            const publish = async (t: string) => {
              const said: string[] = [];
              const run = publishCommand(t, { warehouse: wh, from: 'audit' }, (x) => said.push(x));
              if (!audit.has(t)) {
                await expect(run).rejects.toThrow(/has no branch 'audit'/);
              } else if (moved.has(t)) {
                await expect(run).rejects.toThrow(
                  /main cannot fast-forward to branch 'audit': main moved since the branch left it/,
                );
                seen.refused++;
              } else {
                await run;
                expect(said.join('\n')).toMatch(
                  /main fast-forwarded to branch 'audit'|main is already at branch 'audit'/,
                );
                main.set(t, [...audit.get(t)!]);
                seen.published++;
              }
              expect(await read('main')).toEqual(model('main'));
            };

            await loaded(a);
            await loaded(b, 'audit');
            // The branch's own history: loading the same file again into it adds nothing.
            await loaded({ file: b.file, events: [] }, 'audit');
            for (const t of await tables()) await publish(t);
            // main moves on its own, the branch gets other rows: where main moved, publishing
            // would drop main's rows, and is refused.
            await loaded(c);
            await loaded(d, 'audit');
            for (const t of await tables()) await publish(t);
            await expectWarehouseValid(w);
          } finally {
            tmp.cleanup();
          }
        },
      ),
      { numRuns: 4, seed: 2121 },
    );
    // Both outcomes of a publish were met.
    expect(seen.published).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  }, 180_000);

  it('an upsert table on a branch: its changes resolve against the branch, main keeps its rows until published', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 6 }), fc.string({ maxLength: 4 })), {
          minLength: 1,
          maxLength: 15,
        }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 6 }), fc.string({ maxLength: 4 })), {
          minLength: 1,
          maxLength: 15,
        }),
        async (first, second) => {
          const tmp = tempDir('floe-branches-upsert-');
          try {
            const wh = join(tmp.dir, 'wh');
            const cfg = join(tmp.dir, 'floe.config.json');
            writeFileSync(cfg, JSON.stringify({ upsert: { customer_events: { key: ['id'] } } }));
            const file = (name: string, rows: [number, string][]) => {
              const path = join(tmp.dir, name);
              const lines = rows.map(([id, n]) => JSON.stringify({ event_type: 'customer', id, name: n }));
              writeFileSync(path, `${lines.join('\n')}\n`);
              return path;
            };
            const quiet = () => undefined;
            const load = (path: string, branch?: string) =>
              loadCommand(
                [path],
                { warehouse: wh, config: cfg, quiet: true, ...(branch ? { branch } : {}) },
                quiet,
              );
            expect(await load(file('a.ndjson', first))).toBe(0);
            expect(await load(file('b.ndjson', second), 'audit')).toBe(0);
            // The model: each key's last name, main from the first file, the branch from both.
            const state = (rows: [number, string][]) => new Map(rows.map(([id, n]) => [String(id), n]));
            const w = openWarehouse(wh);
            const id = { namespace: NS, name: 'customer_events' };
            const at = async (ref: string) => {
              const t = await w.catalog.loadTable(id);
              const read = (uri: string) => w.store.get(uri);
              const { rows } = await readTableRows({
                metadataJson: await read(t.metadataLocation),
                read,
                snapshotId: t.metadata.refs[ref]!['snapshot-id'],
              });
              const out = new Map<string, string>();
              for (const r of rows) {
                expect(out.has(String(r.id)), `key ${r.id} twice on ${ref}`).toBe(false);
                out.set(String(r.id), String(r.name));
              }
              return out;
            };
            expect(await at('main')).toEqual(state(first));
            expect(await at('audit')).toEqual(state([...first, ...second]));
            await publishCommand('customer_events', { warehouse: wh, from: 'audit' }, quiet);
            expect(await at('main')).toEqual(state([...first, ...second]));
            await expectWarehouseValid(w);
          } finally {
            tmp.cleanup();
          }
        },
      ),
      { numRuns: 6, seed: 2123 },
    );
  }, 120_000);

  it("config 'branches': a table loads into its branch, the others into main; floe maintain -c compacts the branch", async () => {
    const tmp = tempDir('floe-branches-config-');
    try {
      const wh = join(tmp.dir, 'wh');
      const g = generate(120, 'v1', 2124);
      const files = [0, 1, 2].map((k) => {
        const f = join(tmp.dir, `p${k}.ndjson`);
        writeFileSync(f, `${g.lines.slice(k * 40, k * 40 + 40).join('\n')}\n`);
        return f;
      });
      const cfg = join(tmp.dir, 'floe.config.json');
      writeFileSync(cfg, JSON.stringify({ branches: { click_events: 'audit' } }));
      const quiet = () => undefined;
      for (const f of files)
        expect(await loadCommand([f], { warehouse: wh, config: cfg, quiet: true }, quiet)).toBe(0);
      // A file loaded before is recognised on the branch too: nothing twice.
      expect(await loadCommand([files[0]!], { warehouse: wh, config: cfg, quiet: true }, quiet)).toBe(0);
      const w = openWarehouse(wh);
      const want = idsOf(g.events);
      const idsOn = async (name: string, ref: string) => {
        const m = (await w.catalog.loadTable({ namespace: NS, name })).metadata;
        const snapId = m.refs[ref]?.['snapshot-id'];
        if (snapId === undefined) return [];
        const snap = m.snapshots.find((x) => x['snapshot-id'] === snapId)!;
        const duck = await openDuck();
        try {
          const paths = (await liveFiles(w.store, snap)).map((f) => w.store.pathOf(f.file.file_path));
          const rows = await duck.rows(
            `SELECT event_id FROM read_parquet([${paths.map(sqlString).join(', ')}], union_by_name=true)`,
          );
          return sorted(rows.map((r) => String(r.event_id)));
        } finally {
          duck.close();
        }
      };
      for (const [name, ids] of want) {
        const m = (await w.catalog.loadTable({ namespace: NS, name })).metadata;
        if (name === 'click_events') {
          expect(m.refs.main, 'main of click_events').toBeUndefined();
          expect(await idsOn(name, 'audit')).toEqual(ids);
        } else {
          expect(Object.keys(m.refs)).toEqual(['main']);
          expect(await idsOn(name, 'main')).toEqual(ids);
        }
      }
      // Maintenance with the config compacts click_events on its branch (three loads: three files).
      const before = (await w.catalog.loadTable({ namespace: NS, name: 'click_events' })).metadata;
      const said: string[] = [];
      const code = await maintainCommand(
        ['click_events'],
        { warehouse: wh, config: cfg, compact: true, json: true },
        (x) => said.push(x),
      );
      expect(code).toBe(0);
      const after = (await w.catalog.loadTable({ namespace: NS, name: 'click_events' })).metadata;
      expect(after.refs.main).toBeUndefined();
      expect(after.refs.audit!['snapshot-id']).not.toBe(before.refs.audit!['snapshot-id']);
      const head = after.snapshots.find((x) => x['snapshot-id'] === after.refs.audit!['snapshot-id'])!;
      expect(head.summary.operation).toBe('replace');
      const beforeHead = before.snapshots.find(
        (x) => x['snapshot-id'] === before.refs.audit!['snapshot-id'],
      )!;
      expect((await liveFiles(w.store, head)).length).toBeLessThan(
        (await liveFiles(w.store, beforeHead)).length,
      );
      expect(await idsOn('click_events', 'audit')).toEqual(want.get('click_events'));
      await publishCommand('click_events', { warehouse: wh, from: 'audit' }, quiet);
      expect(await idsOn('click_events', 'main')).toEqual(want.get('click_events'));
      await expectWarehouseValid(w);
    } finally {
      tmp.cleanup();
    }
  }, 120_000);

  it("audits: publish goes on only when every row the branch adds satisfies the table's predicates", async () => {
    const rowsArb = fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 12 });
    const seen = { published: 0, refused: 0 };
    // Half the branches hold only amounts >= 0 (else nearly every one would fail its audit).
    const branchArb = fc.oneof(
      rowsArb,
      fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 12 }),
    );
    await fc.assert(
      fc.asyncProperty(rowsArb, branchArb, async (mainAmounts, branchAmounts) => {
        const tmp = tempDir('floe-branches-audit-');
        try {
          const wh = join(tmp.dir, 'wh');
          const file = (name: string, amounts: number[], from: number) => {
            const path = join(tmp.dir, name);
            const lines = amounts.map((amount, i) =>
              JSON.stringify({ event_type: 'order', id: from + i, amount }),
            );
            writeFileSync(path, `${lines.join('\n')}\n`);
            return path;
          };
          const cfg = join(tmp.dir, 'floe.config.json');
          writeFileSync(
            cfg,
            JSON.stringify({ audits: { order_events: ['amount >= 0'], '*': ['id IS NOT NULL'] } }),
          );
          const quiet = () => undefined;
          expect(
            await loadCommand([file('a.ndjson', mainAmounts, 0)], { warehouse: wh, quiet: true }, quiet),
          ).toBe(0);
          expect(
            await loadCommand(
              [file('b.ndjson', branchAmounts, 1000)],
              { warehouse: wh, quiet: true, branch: 'audit' },
              quiet,
            ),
          ).toBe(0);
          const w = openWarehouse(wh);
          const mainRows = async () => {
            const m = (await w.catalog.loadTable({ namespace: NS, name: 'order_events' })).metadata;
            const snap = m.snapshots.find((x) => x['snapshot-id'] === m.refs.main!['snapshot-id'])!;
            return (await liveFiles(w.store, snap)).reduce((n, f) => n + Number(f.file.record_count), 0);
          };
          const bad = branchAmounts.filter((a) => a < 0).length;
          const run = publishCommand('order_events', { warehouse: wh, config: cfg }, quiet);
          if (bad > 0) {
            // Main's own negative amounts are not the branch's to answer for: only the new rows count.
            await expect(run).rejects.toThrow(`'amount >= 0' fails for ${bad} new row(s)`);
            expect(await mainRows()).toBe(mainAmounts.length);
            seen.refused++;
          } else {
            await run;
            expect(await mainRows()).toBe(mainAmounts.length + branchAmounts.length);
            seen.published++;
          }
        } finally {
          tmp.cleanup();
        }
      }),
      { numRuns: 8, seed: 2122 },
    );
    expect(seen.published).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  }, 180_000);
});
