/**
 * Self-test of the change-stream model and generator (change-streams.ts): the model on hand-written
 * streams, then the generator's streams for the shapes the upsert tests rely on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ChangeStream,
  changeStreamArb,
  changeStreamBatchesArb,
  expectedState,
  keyOfRow,
  keyString,
  modelChange,
  ROUTING_FIELD,
  specFor,
  splitBatches,
  type UpsertSpecJson,
  valueAt,
} from './change-streams.ts';

const lines = (...records: unknown[]) => records.map((r) => JSON.stringify(r));
const keys = (s: ReturnType<typeof expectedState>) => [...s.rows.keys()].sort();

describe('expectedState (hand-written streams)', () => {
  const byOp: UpsertSpecJson = { key: ['customer_id'], operationField: 'op' };

  it('update then delete: absent; delete then insert: present with the inserted row', () => {
    const s = expectedState(
      lines(
        { customer_id: 1, name: 'a', op: 'c' },
        { customer_id: 1, name: 'b', op: 'u' },
        { customer_id: 1, op: 'd' },
        { customer_id: 2, op: 'delete' }, // deleting an absent key changes nothing
        { customer_id: 2, name: 'x', op: 'insert' },
      ),
      byOp,
    );
    expect(keys(s)).toEqual(['[2]']);
    expect(s.rows.get('[2]')).toEqual({ customer_id: 2n, name: 'x', op: 'insert' });
    expect(s.deadLetters.size).toBe(0);
  });

  it('operations are case-insensitive; unknown ones are dead letters (bad-operation)', () => {
    const s = expectedState(
      lines(
        { customer_id: 1, op: 'UPSERT' },
        { customer_id: 2, op: 'Insert' },
        { customer_id: 1, op: 'DeLeTe' },
        { customer_id: 2, op: 'x' },
        { customer_id: 2, op: 'truncate' },
        { customer_id: 3, op: 'R' },
        { customer_id: 3, op: 'D' },
        { customer_id: 4 }, // no operation at all
      ),
      byOp,
    );
    expect(keys(s)).toEqual(['[2]']);
    expect([...s.deadLetters]).toEqual([
      [3, 'bad-operation'],
      [4, 'bad-operation'],
      [7, 'bad-operation'],
    ]);
  });

  it('without operationField every record upserts, an `op` field being only data', () => {
    const s = expectedState(lines({ customer_id: 1, op: 'd' }, { customer_id: 1, op: 'd', v: 2 }), {
      key: ['customer_id'],
    });
    expect([...s.rows.values()]).toEqual([{ customer_id: 1n, op: 'd', v: 2n }]);
  });

  it('composite keys: each combination is its own row; a missing or null part is missing-key', () => {
    const spec: UpsertSpecJson = { key: ['tenant', 'order_id'] };
    const s = expectedState(
      lines(
        { tenant: 'acme', order_id: 1, v: 1 },
        { tenant: 'globex', order_id: 1, v: 2 },
        { tenant: 'acme', order_id: 1, v: 3 },
        { tenant: 'acme', v: 4 },
        { tenant: null, order_id: 1, v: 5 },
      ),
      spec,
    );
    expect(keys(s)).toEqual(['["acme",1]', '["globex",1]']);
    expect(s.rows.get('["acme",1]')?.v).toBe(3n);
    expect([...s.deadLetters]).toEqual([
      [3, 'missing-key'],
      [4, 'missing-key'],
    ]);
  });

  it('nested key paths: a missing or null parent or leaf is missing-key', () => {
    const s = expectedState(
      lines(
        { customer: { id: 'c1' }, v: 1 },
        { customer: null, v: 2 },
        { customer: { id: null }, v: 3 },
        { customer: 'c1', v: 4 },
        { v: 5 },
        { customer: { id: 'c1', tier: 'gold' }, v: 6 },
        { customer: { id: { x: 1 } }, v: 7 }, // not a single value
        { customer: { id: ['c1'] }, v: 8 },
      ),
      { key: ['customer.id'] },
    );
    expect([...s.rows]).toEqual([['["c1"]', { customer: { id: 'c1', tier: 'gold' }, v: 6n }]]);
    expect([...s.deadLetters.keys()]).toEqual([1, 2, 3, 4, 6, 7]);
  });

  it('Debezium: the row is `after`, a delete uses `before`, `{schema, payload}` is unwrapped', () => {
    const spec: UpsertSpecJson = { key: ['id'], envelope: 'debezium' };
    const src = { db: 'shop', table: 'orders' };
    const s = expectedState(
      lines(
        { before: null, after: { id: 1, v: 'a' }, op: 'c', ts_ms: 1, source: src },
        {
          schema: { type: 'struct' },
          payload: { before: null, after: { id: 2, v: 'b' }, op: 'r', ts_ms: 2, source: src },
        },
        { before: { id: 1, v: 'a' }, after: { id: 1, v: 'a2' }, op: 'u', ts_ms: 3, source: src },
        { schema: {}, payload: { before: { id: 2 }, after: null, op: 'd', ts_ms: 4, source: src } },
        { before: null, after: null, op: 'd', ts_ms: 5, source: src }, // delete without before
        { before: null, after: null, op: 't', ts_ms: 6, source: src }, // truncate
        { before: null, after: { v: 'no id' }, op: 'c', ts_ms: 7, source: src },
        { before: null, after: { id: 3 }, op: 'C', ts_ms: 8, source: src },
        { before: { id: 3 }, after: null, op: 'delete', ts_ms: 9, source: src }, // not Debezium's word
      ),
      spec,
    );
    expect([...s.rows]).toEqual([
      ['[1]', { id: 1n, v: 'a2' }],
      ['[3]', { id: 3n }],
    ]);
    expect([...s.deadLetters]).toEqual([
      [4, 'missing-key'],
      [5, 'bad-operation'],
      [6, 'missing-key'],
      [8, 'bad-operation'],
    ]);
  });

  it('keys compare integers by value, whatever their JS type, and strings apart from numbers', () => {
    expect(keyString([1])).toBe(keyString([1n]));
    expect(keyString(['1'])).not.toBe(keyString([1]));
    // A row read back from the table (long → bigint, nested struct → object) has the same key.
    expect(keyOfRow({ tenant: 'acme', order_id: 7n }, ['tenant', 'order_id'])).toBe('["acme",7]');
    expect(keyOfRow({ customer: { id: 'c1' } }, ['customer.id'])).toBe('["c1"]');
    expect(keyOfRow({ customer: null }, ['customer.id'])).toBeUndefined();
    expect(valueAt({ a: { b: 0 } }, 'a.b')).toBe(0);
  });
});

describe('splitBatches', () => {
  it('cuts before each index, ignoring duplicates and out-of-range cuts', () => {
    expect(splitBatches([1, 2, 3, 4, 5], [3, 1, 3, 0, 9])).toEqual([[1], [2, 3], [4, 5]]);
    expect(splitBatches([1], [])).toEqual([[1]]);
  });
});

// ---------------------------------------------------------------------------------------------
// Generator

interface Coverage {
  reinserted: number;
  regionMoved: number;
  updatedInOneBatch: number;
  updatedAcrossBatches: number;
  dead: Record<string, number>;
  wrapped: number;
  mixedCaseOps: number;
  styles: Set<string>;
}

/** What a stream exercises, found by replaying it through the model line by line. */
function observe(s: ChangeStream, cuts: number[], cov: Coverage): void {
  cov.styles.add(`${s.keyStyle}/${s.opStyle}`);
  const batchOf = (i: number) => cuts.filter((c) => c <= i).length;
  const keys = new Map<string, { present: boolean; deleted: boolean; region: unknown; batch: number }>();
  s.lines.forEach((line, i) => {
    const rec = JSON.parse(line) as Record<string, unknown>;
    if (rec.schema !== undefined) cov.wrapped++;
    if (typeof rec.op === 'string' && rec.op !== rec.op.toLowerCase()) cov.mixedCaseOps++;
    const c = modelChange(line, s.spec);
    if (c.op === 'dead') {
      cov.dead[c.reason] = (cov.dead[c.reason] ?? 0) + 1;
      return;
    }
    const prev = keys.get(c.key);
    if (c.op === 'delete') {
      if (prev?.present) keys.set(c.key, { ...prev, present: false, deleted: true });
      return;
    }
    if (prev?.deleted && !prev.present) cov.reinserted++;
    if (prev?.present) {
      if (prev.region !== c.row.region) cov.regionMoved++;
      if (prev.batch === batchOf(i)) cov.updatedInOneBatch++;
      else cov.updatedAcrossBatches++;
    }
    keys.set(c.key, {
      present: true,
      deleted: prev?.deleted ?? false,
      region: c.row.region,
      batch: batchOf(i),
    });
  });
}

describe('changeStreamArb', () => {
  it('draws valid JSON routed to one upsert table, with the shapes the upsert tests need', () => {
    const cov: Coverage = {
      reinserted: 0,
      regionMoved: 0,
      updatedInOneBatch: 0,
      updatedAcrossBatches: 0,
      dead: {},
      wrapped: 0,
      mixedCaseOps: 0,
      styles: new Set(),
    };
    fc.assert(
      fc.property(changeStreamBatchesArb({ maxEvents: 25 }), ({ stream: s, cuts }) => {
        expect(s.config.routing.defaultTable).toBe(s.table);
        expect(s.config.upsert[s.table]).toEqual(s.spec);
        expect(s.spec).toEqual(specFor(s.keyStyle, s.opStyle));
        for (const line of s.lines) {
          const rec = JSON.parse(line) as Record<string, unknown>;
          expect(Object.hasOwn(rec, ROUTING_FIELD)).toBe(false);
          // amount is always a double literal (an integer would infer a long column).
          expect(line).not.toMatch(/"amount":-?\d+[,}]/);
        }
        // Every row the model keeps is keyed, partitionable and timed.
        for (const [k, row] of expectedState(s.lines, s.spec).rows) {
          expect(keyOfRow(row, s.spec.key)).toBe(k);
          expect(['eu', 'us', 'ap']).toContain(row.region);
          expect(Number.isNaN(Date.parse(String(row.event_time)))).toBe(false);
        }
        const batches = splitBatches(s.lines, cuts);
        expect(batches.flat()).toEqual(s.lines);
        expect(batches.every((b) => b.length > 0)).toBe(true);
        observe(s, cuts, cov);
      }),
      { seed: 1313, numRuns: 150 },
    );
    expect(cov.styles.size, [...cov.styles].join(' ')).toBe(9);
    expect(cov.reinserted).toBeGreaterThan(10);
    expect(cov.regionMoved).toBeGreaterThan(10);
    expect(cov.updatedInOneBatch).toBeGreaterThan(10);
    expect(cov.updatedAcrossBatches).toBeGreaterThan(10);
    expect(cov.dead['missing-key'] ?? 0).toBeGreaterThan(5);
    expect(cov.dead['bad-operation'] ?? 0).toBeGreaterThan(5);
    expect(cov.wrapped).toBeGreaterThan(5);
    expect(cov.mixedCaseOps).toBeGreaterThan(5);
  });

  it('can be restricted to some styles', () => {
    fc.assert(
      fc.property(
        changeStreamArb({ keyStyles: ['composite'], opStyles: ['debezium'], maxEvents: 5 }),
        (s) => {
          expect(s.table).toBe('orders');
          expect(s.spec).toEqual({ key: ['tenant', 'order_id'], envelope: 'debezium' });
        },
      ),
      { seed: 7, numRuns: 20 },
    );
  });
});
