/**
 * Keep / drop / only field lists and guards (allowTables, maxTables, maxColumnsPerTable,
 * maxNestingDepth) through `loadSources`: each rule with good and bad records, hostile values,
 * exact counts of landed rows and dead letters, and per-table scopes adding to the global one.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../lambdas/src/config.ts';
import type { DeadLetter } from '../../lambdas/src/engine/dead-letters.ts';
import { DeadLetterReason } from '../../lambdas/src/engine/dead-letters.ts';
import { schemaColumnPaths } from '../../lambdas/src/engine/record-rules.ts';
import { currentSchema } from '../../lambdas/src/iceberg/table-metadata.ts';
import { isLegalTableName } from '../../lambdas/src/routing/table-name.ts';
import { fileWarehouse, load, type TestWarehouse, tempDir } from '../helpers/e2e.ts';

const NS = 'default';
const tmp = tempDir('floe-e2e-guards-');
afterAll(() => tmp.cleanup());
let whCounter = 0;
function freshWarehouse(): TestWarehouse {
  return fileWarehouse(join(tmp.dir, `wh${whCounter++}`));
}

async function columns(wh: TestWarehouse, table: string): Promise<string[]> {
  const t = await wh.catalog.loadTable({ namespace: NS, name: table });
  return [...schemaColumnPaths(currentSchema(t.metadata))].sort();
}

async function tables(wh: TestWarehouse): Promise<string[]> {
  return (await wh.catalog.listTables(NS)).sort();
}

function reasons(dead: readonly DeadLetter[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const d of dead) out[d.reason] = (out[d.reason] ?? 0) + 1;
  return out;
}

const lines = (xs: readonly unknown[]) => xs.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));

async function run(wh: TestWarehouse, config: unknown, records: readonly unknown[], name = 'in.ndjson') {
  return load(wh, [{ name, lines: lines(records) }], { config: parseConfig(config) });
}

describe('fields.drop', () => {
  it('removes the listed paths (nested, through arrays, any key spelling) before inference', async () => {
    const wh = freshWarehouse();
    const { report, dead } = await run(
      wh,
      { fields: { drop: ['secret', 'metadata.source', 'items.cost'] } },
      [
        { event_type: 'order', id: 1, secret: 's1', metadata: { source: 'web', v: 1 } },
        {
          event_type: 'order',
          id: 2,
          Secret: 's2',
          metadata: { Source: 'app', v: 2 },
          items: [{ sku: 'a', cost: 1.5 }],
        },
        { event_type: 'order', id: 3 },
      ],
    );
    expect(dead).toEqual([]);
    expect(report.rows).toBe(3);
    expect(report.tables.map((t) => t.path)).toEqual(['generic']);
    expect(await columns(wh, 'order_events')).toEqual([
      'event_type',
      'id',
      'items',
      'items.sku',
      'metadata',
      'metadata.v',
    ]);
  });

  it('a record left with no typed value is dead-lettered, not lost', async () => {
    const wh = freshWarehouse();
    const config = { routing: { defaultTable: 'misc' }, fields: { drop: ['a'] } };
    const first = await run(wh, config, [{ a: 1 }, { a: { b: 2 } }]);
    expect(first.report.rows).toBe(0);
    expect(reasons(first.dead)).toEqual({ [DeadLetterReason.NoTypedValues]: 2 });
    const second = await run(wh, config, [{ a: 2, b: 3 }]);
    expect(second.report.rows).toBe(1);
    expect(second.dead).toEqual([]);
    expect(await columns(wh, 'misc')).toEqual(['b']);
  });
});

describe('hostile keys', () => {
  it('prototype-ish, SQL-ish, unicode, path-like and over-long keys are projected as data', async () => {
    const wh = freshWarehouse();
    const long = 'k'.repeat(300); // no legal column name: inference dead-letters the record
    const { report, dead } = await run(
      wh,
      { fields: { drop: ['drop_me', 'nested.x'] }, guards: { maxColumnsPerTable: 9, maxNestingDepth: 3 } },
      [
        '{"event_type":"h","__proto__":{"polluted":1},"constructor":"c","drop_me":1}',
        { event_type: 'h', "x'; DROP TABLE t; --": 'sql', '../x': 'path', nested: { x: 1, y: 2 } },
        { event_type: 'h', Ωmega: 'u', drop_me: { deep: { deeper: { deepest: 1 } } } },
        { event_type: 'h', [long]: 1 },
        { event_type: 'h', one_more: 1 },
      ],
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(report.rows).toBe(3);
    // Both are judged when the table is staged, in input order.
    expect(dead.map((d) => [d.line, d.reason])).toEqual([
      [4, DeadLetterReason.TypeConflict],
      [5, DeadLetterReason.GuardMaxColumns],
    ]);
    expect(await columns(wh, 'h_events')).toEqual([
      '___x',
      '__proto__',
      '__proto__.polluted',
      '_mega',
      'constructor',
      'event_type',
      'nested',
      'nested.y',
      'x___drop_table_t____',
    ]); // exactly the limit of 9: the guard counts what inference adds
  });
});

describe('fields.only', () => {
  it('keeps just the listed paths and their parents', async () => {
    const wh = freshWarehouse();
    const { report, dead } = await run(wh, { fields: { only: ['id', 'metadata.source', 'items.sku'] } }, [
      { event_type: 'order', id: 1, secret: 'x', metadata: { source: 'web', v: 1, deep: { z: 1 } } },
      { event_type: 'order', id: 2, items: [{ sku: 'a', cost: 2 }], metadata: 'not an object' },
    ]);
    expect(dead).toEqual([]);
    expect(report.rows).toBe(2);
    // The routing field is not listed, so it routes but is not stored.
    expect(await columns(wh, 'order_events')).toEqual([
      'id',
      'items',
      'items.sku',
      'metadata',
      'metadata.source',
    ]);
  });
});

describe('fields.keep (required fields)', () => {
  it('lands records that have every kept field whole; dead-letters the rest with missing-kept-field', async () => {
    const wh = freshWarehouse();
    const { report, dead } = await run(wh, { fields: { keep: ['id', 'customer.id'] } }, [
      { event_type: 'order', id: 1, customer: { id: 'c1' }, extra: true },
      { event_type: 'order', id: 2 },
      { event_type: 'order', id: null, customer: { id: 'c3' } },
      { event_type: 'order', ID: 4, Customer: { Id: 'c4' } },
      { event_type: 'order', customer: { id: 'c5' } },
    ]);
    expect(report.rows).toBe(2);
    expect(reasons(dead)).toEqual({ [DeadLetterReason.MissingKeptField]: 3 });
    expect(dead.map((d) => d.line)).toEqual([2, 3, 5]);
    expect(dead[0]!.detail).toContain('customer.id');
    expect(dead[0]!.detail).toContain("'order_events'");
    expect(dead[2]!.detail).toContain('id');
    expect(await columns(wh, 'order_events')).toEqual([
      'customer',
      'customer.id',
      'event_type',
      'extra',
      'id',
    ]);
  });
});

describe('per-table scopes', () => {
  it('a table scope adds to the global one; only a table naming a dropped field re-admits it', async () => {
    const wh = freshWarehouse();
    const { report, dead } = await run(
      wh,
      {
        fields: {
          drop: ['secret'],
          tables: {
            audit_events: { only: ['secret', 'who'] },
            raw_events: {},
            strict_events: { keep: ['id'] },
          },
        },
      },
      [
        { event_type: 'order', id: 1, secret: 'x' },
        { event_type: 'audit', id: 2, secret: 'y', who: 'me', what: 'it' },
        { event_type: 'raw', id: 3, secret: 'z' },
        { event_type: 'strict', id: 4, secret: 'kept here' },
        { event_type: 'strict', secret: 'no id' },
      ],
    );
    expect(report.rows).toBe(4);
    expect(reasons(dead)).toEqual({ [DeadLetterReason.MissingKeptField]: 1 });
    expect(await columns(wh, 'order_events')).toEqual(['event_type', 'id']);
    expect(await columns(wh, 'audit_events')).toEqual(['secret', 'who']);
    // Neither an empty scope nor a rule that does not name `secret` lifts the global drop.
    expect(await columns(wh, 'raw_events')).toEqual(['event_type', 'id']);
    expect(await columns(wh, 'strict_events')).toEqual(['event_type', 'id']);
  });
});

describe('guards.allowTables', () => {
  const HOSTILE = [
    '../x',
    '../../etc/passwd',
    'x'.repeat(2000),
    'y'.repeat(250),
    "order'; DROP TABLE users; --",
    'order" OR 1=1',
    'Ωmega',
    '日本語',
    '😀',
    'ORDER/../../click',
    '__proto__',
    'constructor',
    '%2e%2e%2f',
    ' ',
  ];

  it('hostile routing values never produce an illegal or unlisted table', async () => {
    const wh = freshWarehouse();
    const good = [
      { event_type: 'order', id: 1 },
      { event_type: 'ORDER', id: 2 },
      { event_type: 'click', id: 3 },
    ];
    const bad = HOSTILE.map((v, i) => ({ event_type: v, id: 100 + i }));
    // Sanitised to a legal, allowed name (the control character is stripped): lands.
    const sanitised = { event_type: 'Order\u0000', id: 4 };
    const noRoute = { id: 999 }; // default table unknown_events is not allowed either
    const { report, dead } = await run(wh, { guards: { allowTables: 'order_events|click_events' } }, [
      ...good,
      sanitised,
      ...bad,
      noRoute,
    ]);
    expect(report.rows).toBe(4);
    expect(dead.length).toBe(bad.length + 1);
    expect(await tables(wh)).toEqual(['click_events', 'order_events']);
    for (const d of dead) {
      expect([DeadLetterReason.IllegalTableName, DeadLetterReason.GuardAllowTables]).toContain(d.reason);
      if (d.reason === DeadLetterReason.GuardAllowTables) {
        expect(d.detail).toContain('allowTables');
        expect(d.detail).toContain('order_events|click_events');
        expect(isLegalTableName(d.table!)).toBe(true);
        expect(d.detail).toContain(`'${d.table}'`);
      }
    }
    expect(dead.at(-1)!.reason).toBe(DeadLetterReason.GuardAllowTables);
    expect(dead.at(-1)!.table).toBe('unknown_events');
    // Raw input is kept byte for byte.
    expect(dead.map((d) => d.raw)).toEqual(lines([...bad, noRoute]));
  });

  it('the regex is anchored: a partial match is not enough', async () => {
    const wh = freshWarehouse();
    const { report, dead } = await run(wh, { guards: { allowTables: 'order' } }, [
      { event_type: 'order', id: 1 },
      { event_type: 'x', table: 'order', id: 2 },
    ]);
    expect(report.rows).toBe(0);
    expect(reasons(dead)).toEqual({ [DeadLetterReason.GuardAllowTables]: 2 });
  });
});

describe('guards.maxTables', () => {
  it('counts existing tables plus new ones; records for admitted tables keep landing', async () => {
    const wh = freshWarehouse();
    await run(wh, {}, [{ event_type: 'old', id: 0 }]);
    const { report, dead } = await run(wh, { guards: { maxTables: 3 } }, [
      { event_type: 'a', id: 1 },
      { event_type: 'old', id: 2 },
      { event_type: 'b', id: 3 },
      { event_type: 'c', id: 4 },
      { event_type: 'a', id: 5 },
      { event_type: 'd', id: 6 },
      { event_type: 'b', id: 7 },
      { event_type: 'c', id: 8 },
    ]);
    expect(report.rows).toBe(5);
    expect(reasons(dead)).toEqual({ [DeadLetterReason.GuardMaxTables]: 3 });
    expect(dead.map((d) => d.table)).toEqual(['c_events', 'd_events', 'c_events']);
    expect(dead[0]!.detail).toContain('maxTables');
    expect(dead[0]!.detail).toContain("'c_events'");
    expect(dead[0]!.detail).toContain('limit 3');
    expect(await tables(wh)).toEqual(['a_events', 'b_events', 'old_events']);

    // A later load at the limit may still write to existing tables, and never add one.
    const again = await run(wh, { guards: { maxTables: 3 } }, [
      { event_type: 'old', id: 9 },
      { event_type: 'e', id: 10 },
    ]);
    expect(again.report.rows).toBe(1);
    expect(reasons(again.dead)).toEqual({ [DeadLetterReason.GuardMaxTables]: 1 });
  });

  it('a record rejected by another rule does not use up a table slot', async () => {
    const wh = freshWarehouse();
    const { report, dead } = await run(wh, { guards: { maxTables: 1, maxNestingDepth: 1 } }, [
      { event_type: 'a', deep: { x: 1 } },
      { event_type: 'b', id: 1 },
      { event_type: 'a', id: 2 },
    ]);
    expect(report.rows).toBe(1);
    expect(dead.map((d) => d.reason)).toEqual([
      DeadLetterReason.GuardMaxDepth,
      DeadLetterReason.GuardMaxTables,
    ]);
    expect(await tables(wh)).toEqual(['b_events']);
  });
});

describe('guards.maxColumnsPerTable', () => {
  it('existing columns count; nested fields count; records that would pass the limit are dead-lettered', async () => {
    const wh = freshWarehouse();
    await run(wh, {}, [{ event_type: 'o', id: 1, a: 'x' }]); // 3 columns
    const { report, dead } = await run(wh, { guards: { maxColumnsPerTable: 5 } }, [
      { event_type: 'o', id: 2, b: 1 }, // 4
      { event_type: 'o', id: 3, c: 1, d: 1 }, // would be 6
      { event_type: 'o', id: 4, c: 1 }, // 5
      { event_type: 'o', id: 5, n: { x: 1 } }, // would be 7
      { event_type: 'o', id: 6, a: 'y', b: 2, c: 3 }, // 5
      { event_type: 'o', id: 7, e: null, f: [], g: {} }, // no typed value: adds no column
      { event_type: 'o', id: 8, E: 1 }, // would be 6
    ]);
    expect(report.rows).toBe(4);
    expect(reasons(dead)).toEqual({ [DeadLetterReason.GuardMaxColumns]: 3 });
    expect(dead.map((d) => d.line)).toEqual([2, 4, 7]);
    expect(dead[0]!.detail).toBe("guard maxColumnsPerTable: table 'o_events' would have 6 columns, limit 5");
    expect(await columns(wh, 'o_events')).toEqual(['a', 'b', 'c', 'event_type', 'id']);
  });

  it('applies per table, to new tables too, after field projection', async () => {
    const wh = freshWarehouse();
    const { report, dead } = await run(
      wh,
      { fields: { drop: ['noise'] }, guards: { maxColumnsPerTable: 2 } },
      [
        { event_type: 'p', id: 1, noise: { a: 1, b: 2 } },
        { event_type: 'q', id: 1, x: 1 },
        { event_type: 'p', id: 2, list: [{ a: 1 }] },
      ],
    );
    expect(report.rows).toBe(1);
    expect(reasons(dead)).toEqual({ [DeadLetterReason.GuardMaxColumns]: 2 });
    expect(await tables(wh)).toEqual(['p_events']);
  });
});

describe('guards.maxNestingDepth', () => {
  it('objects and arrays count as levels (the root object is 1); beyond the limit is a dead letter', async () => {
    const wh = freshWarehouse();
    let deep: unknown = 1;
    for (let i = 0; i < 200; i++) deep = { n: deep };
    const { report, dead } = await run(wh, { guards: { maxNestingDepth: 3 } }, [
      { event_type: 'o', a: { b: 1 } }, // 2
      { event_type: 'o', a: { b: { c: { d: 1 } } } }, // 4
      { event_type: 'o', l: [{ b: 1 }] }, // 3
      { event_type: 'o', l: [[{ b: 1 }]] }, // 4
      { event_type: 'o', deep }, // 201
      { event_type: 'o', m: { b: [1, 2] } }, // 3
    ]);
    expect(report.rows).toBe(3);
    expect(reasons(dead)).toEqual({ [DeadLetterReason.GuardMaxDepth]: 3 });
    expect(dead.map((d) => d.line)).toEqual([2, 4, 5]);
    expect(dead[0]!.detail).toBe(
      'guard maxNestingDepth: record nests deeper than 3 levels of objects and arrays',
    );
  });

  it('with field lists, the guard judges the record after them (a dropped deep field does not count)', async () => {
    const wh = freshWarehouse();
    const { report, dead } = await run(wh, { fields: { drop: ['debug'] }, guards: { maxNestingDepth: 2 } }, [
      { event_type: 'o', id: 1, debug: { a: { b: { c: 1 } } } },
      { event_type: 'o', id: 2, keep: { a: { b: 1 } } },
    ]);
    expect(report.rows).toBe(1);
    expect(dead.map((d) => [d.line, d.reason])).toEqual([[2, DeadLetterReason.GuardMaxDepth]]);
    expect(dead[0]!.detail).toBe("guard maxNestingDepth: table 'o_events': record nests 3 levels, limit 2");
  });

  it('the default limit (32) holds without any configuration, on the fast and the generic path', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 32; i++) deep = { n: deep }; // 33 levels with the record itself
    let ok: unknown = 1;
    for (let i = 0; i < 31; i++) ok = { n: ok }; // 32
    for (const fastPath of [true, false]) {
      const wh = freshWarehouse();
      const { load } = await import('../helpers/e2e.ts');
      const { report, dead } = await load(
        wh,
        [
          {
            name: 'in',
            lines: [JSON.stringify({ event_type: 'o', deep }), JSON.stringify({ event_type: 'o', ok })],
          },
        ],
        { config: parseConfig({}), fastPath },
      );
      expect(report.rows, `fastPath ${fastPath}`).toBe(1);
      expect(dead.map((d) => [d.line, d.reason])).toEqual([[1, DeadLetterReason.GuardMaxDepth]]);
    }
  });
});

describe('fast path switch', () => {
  it('with rules configured, the fast path stays on and gives what the generic path gives', async () => {
    const config = { fields: { drop: ['x'] }, guards: { maxTables: 1 } };
    const records = [
      { event_type: 'a', id: 1, x: 1 },
      { event_type: 'b', id: 2 },
      { event_type: 'a', id: 3 },
    ];
    const outcome = async (fastPath: boolean) => {
      const wh = freshWarehouse();
      const dead: DeadLetter[] = [];
      const { loadSources } = await import('../../lambdas/src/app/load.ts');
      const { fixedClock, seededIds } = await import('../../lambdas/src/adapters/local/system-clock.ts');
      const report = await loadSources(
        {
          catalog: wh.catalog,
          store: wh.store,
          clock: fixedClock(1_760_000_000_000),
          ids: seededIds(7),
          config: parseConfig(config),
          fastPath,
          onDeadLetter: (d) => {
            dead.push(d);
          },
        },
        [{ name: 'in', lines: lines(records) }],
      );
      return {
        rows: report.rows,
        paths: report.tables.map((t) => t.path),
        dead: dead.map((d) => [d.line, d.reason]),
        columns: await columns(wh, 'a_events'),
      };
    };
    const on = await outcome(true);
    const off = await outcome(false);
    // The rules keep the fast path on: it gives the generic path's tables and dead letters.
    expect(on.paths).toEqual(['columnar']);
    expect(off.paths).toEqual(['generic']);
    expect({ ...on, paths: [] }).toEqual({ ...off, paths: [] });
    expect(on).toEqual({
      rows: 2,
      paths: ['columnar'],
      dead: [[2, 'guard-max-tables']],
      columns: ['event_type', 'id'],
    });
  });
});
