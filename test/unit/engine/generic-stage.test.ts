/**
 * `screen` and `stage` of the generic load path: a record whose values do not convert is a dead
 * letter that shapes nothing (no column, no promotion, no partition field), and values that need a
 * promotion of an existing column get it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileCatalog } from '../../../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import { fixedClock, seededIds } from '../../../lambdas/src/adapters/local/system-clock.ts';
import { loadSources } from '../../../lambdas/src/app/load.ts';
import { parseConfig } from '../../../lambdas/src/config.ts';
import { screen, stage } from '../../../lambdas/src/engine/generic-stage.ts';
import type { LoadDeps, PendingRecord } from '../../../lambdas/src/engine/load-types.ts';
import { typeToString } from '../../../lambdas/src/iceberg/types.ts';
import type { JsonValue } from '../../../lambdas/src/records/json-line.ts';
import { parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';
import { StructInferrer } from '../../../lambdas/src/schema/infer.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const ID = { namespace: 'default', name: 'order_events' };

/** A warehouse whose `order_events` has `qty int` and `amount decimal(9,2)`. */
async function table(): Promise<LoadDeps> {
  const dir = mkdtempSync(join(tmpdir(), 'floe-load-generic-'));
  dirs.push(dir);
  const store = new LocalObjectStore();
  const deps: LoadDeps = {
    catalog: new FileCatalog(store, fileUri(dir)),
    store,
    clock: fixedClock(1_760_000_000_000),
    ids: seededIds(3),
    config: parseConfig({}),
    sleep: async () => undefined,
    onDeadLetter: () => undefined,
  };
  await loadSources(
    {
      ...deps,
      config: parseConfig({ inference: { hints: { order_events: { qty: 'int', amount: 'decimal(9,2)' } } } }),
    },
    [{ name: 'first', lines: ['{"event_type":"ORDER","qty":1,"amount":1.5}'] }],
  );
  return deps;
}

const pending = (lines: string[]): PendingRecord[] =>
  lines.map((raw, i) => ({
    seq: i,
    source: 'test',
    line: i + 1,
    raw,
    value: parseJsonRecord(raw) as Record<string, JsonValue>,
  }));

const inferrer = () => new StructInferrer();
const names = (t: { fields: readonly { name: string }[] }) => t.fields.map((f) => f.name);

describe('screen', () => {
  it('dead-letters a record whose value does not convert and derives the batch type without it', async () => {
    const deps = await table();
    const s = await screen(
      deps,
      ID,
      pending([
        '{"event_type":"ORDER","qty":2,"amount":2.5}',
        '{"event_type":"ORDER","qty":3000000000,"amount":1.234,"coupon":"X","region":"eu"}',
      ]),
      inferrer(),
      inferrer,
    );
    expect(s.rejected.map((d) => [d.line, d.reason])).toEqual([[2, 'invalid-value']]);
    expect(s.accepted.map((r) => r.line)).toEqual([1]);
    expect(names(s.batchType)).toEqual(['event_type', 'qty', 'amount']);
    expect(s.batchType.fields.map((f) => typeToString(f.type))).toEqual(['string', 'int', 'decimal(9,2)']);
    expect(s.fit).toEqual({});
  });

  it('fits the batch type to the promotions its values need', async () => {
    const deps = await table();
    const s = await screen(
      deps,
      ID,
      pending(['{"event_type":"ORDER","qty":3000000000,"amount":1234567890.12}']),
      inferrer(),
      inferrer,
    );
    expect(s.rejected).toEqual([]);
    expect(s.batchType.fields.map((f) => typeToString(f.type))).toEqual(['string', 'long', 'decimal(12,2)']);
    expect([...(s.fit.needs ?? [])].map(([p, t]) => [p, typeToString(t)])).toEqual([
      ['qty', 'long'],
      ['amount', 'decimal(12,2)'],
    ]);
  });
});

describe('stage', () => {
  it('evolves the table again without a record that fails conversion (a table that moved since screening)', async () => {
    const deps = await table();
    const base = await deps.catalog.loadTable(ID);
    const records = pending([
      '{"event_type":"ORDER","qty":2,"amount":2.5}',
      '{"event_type":"ORDER","qty":3000000000,"amount":1.234,"coupon":"X","region":"eu"}',
    ]);
    // The batch type as if screened against a table without `amount`: the bad record is in it.
    const all = inferrer();
    for (const r of records) all.add(r.value);
    const staged: string[] = [];
    const out = await stage(deps, base, all.result(), ['region'], records, staged);
    expect(out.rejected.map((d) => [d.line, d.reason])).toEqual([[2, 'invalid-value']]);
    expect(out.changes).toEqual([]);
    expect(out.specChanged).toBe(false);
    expect(out.prepared.updates).toEqual([]);
    expect(out.prepared.dataFiles.map((f) => f.record_count)).toEqual([1n]);
  });
});
