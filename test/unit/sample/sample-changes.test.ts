import { describe, expect, it } from 'vitest';
import {
  type ChangeEvent,
  type CustomerRow,
  changeKey,
  customerChanges,
  finalState,
} from '../../../lambdas/src/sample/sample-changes.ts';

const take = (n: number, seed = 3) => {
  const it = customerChanges({ seed, nowMs: Date.UTC(2026, 0, 1) });
  return Array.from({ length: n }, () => it.next().value as ChangeEvent);
};

describe('sample change stream (Debezium customers)', () => {
  it('is reproducible from its seed, and consistent: each change starts from the state the last one left', () => {
    const changes = take(2000);
    expect(take(2000)).toEqual(changes);
    expect(take(50, 4)).not.toEqual(changes.slice(0, 50));
    const state = new Map<number, CustomerRow>();
    for (const c of changes) {
      expect(c.source).toMatchObject({ table: 'customers', connector: 'postgresql' });
      const id = Number(changeKey(c));
      if (c.op === 'c') {
        expect(c.before).toBeNull();
        expect(state.has(id)).toBe(false);
        expect(c.after!.revision).toBe(0);
        state.set(id, c.after!);
      } else if (c.op === 'u') {
        expect(c.before).toEqual(state.get(id));
        expect(c.after!.id).toBe(id);
        expect(c.after!.revision).toBe(c.before!.revision + 1);
        state.set(id, c.after!);
      } else {
        expect(c.op).toBe('d');
        expect(c.after).toBeNull();
        expect(c.before).toEqual(state.get(id));
        state.delete(id);
      }
    }
    expect(finalState(changes).rows).toEqual(state);
  });

  it('exercises what an upsert table must get right: repeated updates in a row, deletes, re-creates', () => {
    const changes = take(300);
    const s = finalState(changes);
    expect(s.changes).toBe(300);
    expect(s.creates + s.recreates + s.updates + s.deletes).toBe(300);
    expect(s.updates).toBeGreaterThan(50);
    expect(s.deletes).toBeGreaterThan(10);
    expect(s.recreates).toBeGreaterThan(3);
    expect(s.keys).toBe(s.creates);
    expect(s.rows.size).toBe(s.creates + s.recreates - s.deletes);
    const repeated = changes.filter(
      (c, i) =>
        i > 0 && c.op === 'u' && changes[i - 1]!.op === 'u' && changeKey(changes[i - 1]!) === changeKey(c),
    );
    expect(repeated.length).toBeGreaterThan(5);
  });
});
