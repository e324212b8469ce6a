/**
 * Declared nullability (schema/nullability.ts): a column the records' schema declares required is
 * required in the batch's type exactly when every row that writes data has a value for it (a
 * struct's child: every row whose struct has a value), and with no row to judge it by, it stays as
 * the table has it. The expectation is computed here from the rows directly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NestedField, StructType } from '../../../lambdas/src/iceberg/types.ts';
import type { JsonObject, JsonValue } from '../../../lambdas/src/records/json-line.ts';
import { declaredNullability } from '../../../lambdas/src/schema/nullability.ts';

const str = { kind: 'string' } as const;
const field = (id: number, name: string, type: NestedField['type'], required = false): NestedField => ({
  id,
  name,
  required,
  type,
});
const struct = (...fields: NestedField[]): StructType => ({ kind: 'struct', fields });

/** Batch type: `a`, `b` strings and `s` a struct of `x`, `y`, all optional as inference makes them. */
const TYPE = struct(
  field(1, 'a', str),
  field(2, 'b', str),
  field(3, 's', struct(field(4, 'x', str), field(5, 'y', str))),
);
const PATHS = ['a', 'b', 's', 's.x', 's.y'] as const;

const valueArb = fc.option(fc.constantFrom('v', ''), { nil: null }) as fc.Arbitrary<JsonValue>;
const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const rowArb: fc.Arbitrary<JsonObject> = fc
  .record({
    a: maybe(valueArb),
    b: maybe(valueArb),
    s: maybe(fc.option(fc.record({ x: maybe(valueArb), y: maybe(valueArb) }).map(strip), { nil: null })),
  })
  .map(strip);

function strip<T extends object>(o: T): JsonObject {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as JsonObject;
}

function requiredPaths(t: StructType, prefix = ''): string[] {
  return t.fields.flatMap((f) => {
    const p = prefix === '' ? f.name : `${prefix}.${f.name}`;
    return [...(f.required ? [p] : []), ...(f.type.kind === 'struct' ? requiredPaths(f.type, p) : [])];
  });
}

/** The values at `path` in the rows where its parent has a value (the rows judging `path`). */
function judged(rows: readonly JsonObject[], path: string): JsonValue[] {
  const [head, child] = path.split('.') as [string, string | undefined];
  if (child === undefined) return rows.map((r) => r[head] ?? null);
  return rows.flatMap((r) => {
    const s = r[head];
    return s && typeof s === 'object' && !Array.isArray(s) ? [(s as JsonObject)[child] ?? null] : [];
  });
}

describe('declaredNullability', () => {
  it('requires a declared column exactly when every row judging it has a value', () => {
    fc.assert(
      fc.property(fc.array(rowArb, { maxLength: 8 }), fc.subarray([...PATHS]), (rows, declared) => {
        const out = declaredNullability(TYPE, undefined, rows, new Set(declared));
        const want = declared.filter((p) => {
          const values = judged(rows, p);
          return values.length > 0 && values.every((v) => v !== null);
        });
        expect(requiredPaths(out).sort()).toEqual([...want].sort());
      }),
    );
  });

  it('with no row to judge by, keeps what the table requires (also a column the batch does not name)', () => {
    const table = struct(
      field(1, 'a', str, true),
      field(2, 'b', str, false),
      field(3, 's', struct(field(4, 'x', str, true), field(5, 'y', str)), false),
      field(6, 'c', str, true),
    );
    const out = declaredNullability(TYPE, table, [], new Set(['a', 'b', 's.x', 'c']));
    expect(requiredPaths(out).sort()).toEqual(['a', 'c', 's.x']);
    // Undeclared, a required table column the batch does not name is left to the evolution rules.
    expect(requiredPaths(declaredNullability(TYPE, table, [], new Set(['a']))).sort()).toEqual(['a']);
  });

  it('reads a key that is not yet a column name by the column it becomes', () => {
    const out = declaredNullability(TYPE, undefined, [{ A: 'v', b: null }], new Set(['a', 'b']));
    expect(requiredPaths(out)).toEqual(['a']);
  });

  it('declaring nothing leaves the type as it is', () => {
    expect(declaredNullability(TYPE, undefined, [{ a: 'v' }], new Set())).toBe(TYPE);
  });
});
