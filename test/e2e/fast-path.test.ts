/**
 * The columnar fast path must be invisible: the same input loaded with it and without it gives
 * the same schemas, partition specs, rows and dead letters. Each scenario also checks that the fast
 * path really ran (otherwise the comparison would hold trivially).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileCatalog } from '../../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import { fixedClock, seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { type LoadReport, loadSources } from '../../lambdas/src/app/load.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import type { DeadLetter } from '../../lambdas/src/engine/dead-letters.ts';
import { schemaToJson } from '../../lambdas/src/iceberg/schema.ts';
import { currentSchema, defaultSpec } from '../../lambdas/src/iceberg/table-metadata.ts';
import { IcebergQueryEngine } from '../../lambdas/src/query/index.ts';
import { sampleEvents, toNdjsonLine } from '../../lambdas/src/sample/sample-events.ts';

interface Outcome {
  readonly reports: LoadReport[];
  readonly dead: { line: number; reason: string; table?: string }[];
  readonly tables: Record<string, { schema: unknown; spec: unknown; rows: string[] }>;
}

async function run(
  batches: string[][],
  fastPath: boolean,
  config = parseConfig({}),
  configFor: (batch: number) => ReturnType<typeof parseConfig> = () => config,
): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), 'floe-fast-'));
  const store = new LocalObjectStore();
  const catalog = new FileCatalog(store, fileUri(dir));
  const dead: DeadLetter[] = [];
  const reports: LoadReport[] = [];
  for (const [i, lines] of batches.entries()) {
    reports.push(
      await loadSources(
        {
          catalog,
          store,
          clock: fixedClock(1_760_000_000_000),
          ids: seededIds(100 + i),
          config: configFor(i),
          fastPath,
          onDeadLetter: (d) => {
            dead.push(d);
          },
        },
        [{ name: `batch-${i}`, lines }],
      ),
    );
  }
  const engine = new IcebergQueryEngine({ read: (u) => store.get(u), resolvePath: (u) => store.pathOf(u) });
  const tables: Outcome['tables'] = {};
  try {
    for (const name of await catalog.listTables(config.namespace)) {
      const t = await catalog.loadTable({ namespace: config.namespace, name });
      await engine.registerTable(name, t.metadata);
      const r = await engine.query(`SELECT * FROM "${name}"`);
      tables[name] = {
        schema: schemaToJson(currentSchema(t.metadata)),
        spec: defaultSpec(t.metadata).fields,
        rows: r.rows
          .map((row) => JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)))
          .sort(),
      };
    }
  } finally {
    engine.close();
  }
  return { reports, dead: dead.map((d) => ({ line: d.line, reason: d.reason, table: d.table })), tables };
}

function sample(n: number, version: 'v1' | 'v2', seed: number): string[] {
  const it = sampleEvents({ seed, nowMs: Date.UTC(2026, 0, 2, 3), version });
  return Array.from({ length: n }, () => toNdjsonLine(it.next().value as Record<string, unknown>));
}

function paths(o: Outcome): string[] {
  return o.reports.flatMap((r) => r.tables.map((t) => `${t.table}:${t.path}`));
}

describe('columnar fast path', () => {
  it('gives the same tables as the generic path for the sample events, v1 then v2', async () => {
    const batches = [sample(1500, 'v1', 5), sample(1500, 'v2', 6)];
    const fast = await run(batches, true);
    const slow = await run(batches, false);
    expect(paths(fast).every((p) => p.endsWith(':columnar'))).toBe(true);
    expect(paths(slow).every((p) => p.endsWith(':generic'))).toBe(true);
    expect(fast.tables).toEqual(slow.tables);
    expect(fast.dead).toEqual(slow.dead);
    expect(Object.keys(fast.tables).sort()).toEqual(['click_events', 'order_events', 'user_events']);
  });

  it('agrees on nulls, nested structs, mixed numbers, dates that turn into strings, hints and partition transforms', async () => {
    const config = parseConfig({
      inference: { hints: { e_events: { price: 'decimal(10,2)', small: 'int' } } },
      partitioning: { tables: { e_events: ['day(ts)', 'bucket[4](id)', 'truncate[2](code)'] } },
    });
    const lines = [
      '{"event_type":"E","id":1,"ts":"2026-01-01T10:00:00Z","code":"2026-01-01","price":12.5,"small":3,"ok":true,"m":{"a":"x","b":1},"empty":[],"nothing":null}',
      '{"event_type":"E","id":2,"ts":"2026-01-02T23:59:59.999999+02:00","code":"abc","price":7,"small":-4,"ok":false,"m":null,"score":1}',
      '{ "event_type" : "E", "id" : 3, "ts" : "2026-01-03T00:00:00.5Z", "code" : "2026-01-03", "score" : 2.5, "m" : { "a" : "y", "b" : 2 } }',
      '{"event_type":"E","id":4,"ts":"2026-01-03T01:00:00Z","m":{"a":null,"b":3},"score":-0.0}',
      '{"event_type":"F","when":"2026-02-03","n":9007199254740},{"x":1}',
      '{"event_type":"F","when":"2026-02-04","n":1}',
      '{"event_type":"F","when":"2026-02-05","n":2,"note":"tab\\tescaped","big":12345678901234567}',
    ];
    const fast = await run([lines], true, config);
    const slow = await run([lines], false, config);
    expect(paths(fast)).toContain('e_events:columnar');
    // f_events mixes a line the scanner hands to the generic parser (an integer beyond 15
    // digits): the table goes generic.
    expect(paths(fast)).toContain('f_events:generic');
    expect(fast.tables).toEqual(slow.tables);
    expect(fast.dead).toEqual(slow.dead);
    expect(fast.dead.map((d) => d.line)).toEqual([5]);
    expect(fast.tables.e_events?.rows).toHaveLength(4);
  });

  it('falls back to the generic path on a conflict and dead-letters exactly what the generic path does', async () => {
    const lines = [
      '{"event_type":"ORDER","event_id":"a","amount":1.5}',
      '{"event_type":"ORDER","event_id":"b","amount":"abc"}',
      '{"event_type":"ORDER","event_id":"c","amount":2.5}',
      '{"event_type":"USER","event_id":"u","tags":{"k":"v"}}',
      '{"event_type":"USER","event_id":"v","tags":"flat"}',
    ];
    const first = ['{"event_type":"ORDER","event_id":"z","amount":0.5}'];
    const fast = await run([first, lines], true);
    const slow = await run([first, lines], false);
    expect(paths(fast)).toContain('order_events:generic');
    expect(fast.tables).toEqual(slow.tables);
    expect(fast.dead).toEqual(slow.dead);
    expect(fast.dead.map((d) => [d.line, d.reason])).toEqual([
      [2, 'type-conflict'],
      [5, 'type-conflict'],
    ]);
  });

  it('fits later batches to existing decimal, int and string columns the same way', async () => {
    const first = ['{"event_type":"P","id":1,"price":12.5,"qty":3,"code":"A1","ts":"2026-03-01T00:00:00Z"}'];
    const later = [
      '{"event_type":"P","id":2,"price":7,"qty":4,"code":"2026-03-02","ts":"2026-03-02T10:00:00.25+01:00"}',
      '{"event_type":"P","id":3,"price":0.01,"qty":-5,"code":"B2","ts":"2026-03-03T00:00:00Z","extra":true}',
      '{"event_type":"P","id":4,"price":99999999.99,"qty":2147483647,"code":"C3","ts":"2026-03-04T00:00:00Z"}',
    ];
    const hinted = parseConfig({
      inference: { hints: { p_events: { price: 'decimal(10,2)', qty: 'int' } } },
    });
    const plain = parseConfig({});
    const configFor = (i: number) => (i === 0 ? hinted : plain);
    const fast = await run([first, later], true, plain, configFor);
    const slow = await run([first, later], false, plain, configFor);
    expect(paths(fast)).toEqual(['p_events:columnar', 'p_events:columnar']);
    expect(fast.tables).toEqual(slow.tables);
    expect(fast.dead).toEqual(slow.dead);
    const schema = fast.tables.p_events?.schema as { fields: { name: string; type: unknown }[] };
    // A value the existing column cannot hold but its promotion can (int → long, decimal
    // precision) promotes the column on both paths; the fast path handles it itself.
    const overflow = [
      ...later,
      '{"event_type":"P","id":5,"price":123456789.5,"qty":3000000000,"code":"D4","ts":"2026-03-05T00:00:00Z"}',
    ];
    const fast2 = await run([first, overflow], true, plain, configFor);
    const slow2 = await run([first, overflow], false, plain, configFor);
    expect(paths(fast2)).toEqual(['p_events:columnar', 'p_events:columnar']);
    expect(fast2.tables).toEqual(slow2.tables);
    expect(fast2.dead).toEqual([]);
    expect(slow2.dead).toEqual([]);
    const promoted = fast2.tables.p_events?.schema as { fields: { name: string; type: unknown }[] };
    expect(promoted.fields.filter((f) => f.name === 'price' || f.name === 'qty')).toMatchObject([
      { name: 'price', type: 'decimal(11,2)' },
      { name: 'qty', type: 'long' },
    ]);
    // A value no promotion can hold (a third fractional digit for decimal(10,2)) sends the batch
    // to the generic path, which dead-letters exactly that record.
    const unfit = [
      ...later,
      '{"event_type":"P","id":5,"price":1.505,"qty":3,"code":"D4","ts":"2026-03-05T00:00:00Z"}',
    ];
    const fast3 = await run([first, unfit], true, plain, configFor);
    const slow3 = await run([first, unfit], false, plain, configFor);
    expect(paths(fast3)).toEqual(['p_events:columnar', 'p_events:generic']);
    expect(fast3.tables).toEqual(slow3.tables);
    expect(fast3.dead).toEqual(slow3.dead);
    expect(fast3.dead.map((d) => [d.line, d.reason])).toEqual([[4, 'invalid-value']]);
    expect(schema.fields.map((f) => [f.name, f.type])).toEqual([
      ['event_type', 'string'],
      ['id', 'long'],
      ['price', 'decimal(10,2)'],
      ['qty', 'int'],
      ['code', 'string'],
      ['ts', 'timestamptz'],
      ['extra', 'boolean'],
    ]);
  });
});
