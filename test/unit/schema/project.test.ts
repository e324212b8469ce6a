import { describe, expect, it } from 'vitest';
import { field, list, map, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import type { Row } from '../../../lambdas/src/iceberg/values.ts';
import { ProjectFailure, projectRow } from '../../../lambdas/src/schema/project.ts';

function projected(r: Row | ProjectFailure): Row {
  if (r instanceof ProjectFailure) throw new Error(`unexpected failure at ${r.path}: ${r.why}`);
  return r;
}

function failure(r: Row | ProjectFailure): ProjectFailure {
  expect(r).toBeInstanceOf(ProjectFailure);
  return r as ProjectFailure;
}

describe('projectRow: primitive widening', () => {
  it('widens an int (number) to a long (bigint), exactly', () => {
    const target = struct([field(1, 'a', T.long), field(2, 'b', T.long), field(3, 'c', T.long)]);
    const out = projected(projectRow({ a: 5, b: -2_147_483_648, c: Number.MAX_SAFE_INTEGER }, target));
    expect(out).toEqual({ a: 5n, b: -2_147_483_648n, c: 9_007_199_254_740_991n });
    expect(typeof out.a).toBe('bigint');
  });

  it('keeps a long that is already a bigint', () => {
    const out = projected(projectRow({ a: 2n ** 62n }, struct([field(1, 'a', T.long)])));
    expect(out.a).toBe(2n ** 62n);
  });

  it('keeps float and double values as numbers (an integral double does not become a bigint)', () => {
    const target = struct([field(1, 'f', T.float), field(2, 'd', T.double), field(3, 'i', T.double)]);
    const out = projected(projectRow({ f: 1.5, d: -0.125, i: 3 }, target));
    expect(out).toEqual({ f: 1.5, d: -0.125, i: 3 });
    expect(typeof out.i).toBe('number');
  });

  it('passes other primitives through unchanged', () => {
    const bytes = new Uint8Array([0, 1, 255]);
    const target = struct([
      field(1, 's', T.string),
      field(2, 'b', T.boolean),
      field(3, 'bin', T.binary),
      field(4, 'ts', T.timestamptz),
      field(5, 'n', T.int),
    ]);
    const out = projected(
      projectRow({ s: 'héllo', b: false, bin: bytes, ts: 1_700_000_000_000_000n, n: 7 }, target),
    );
    expect(out).toEqual({ s: 'héllo', b: false, bin: bytes, ts: 1_700_000_000_000_000n, n: 7 });
    expect(out.bin).toBe(bytes);
    // int stays a number: only long widens.
    expect(typeof out.n).toBe('number');
  });
});

describe('projectRow: nested types', () => {
  it('projects inside structs, lists and maps', () => {
    const target = struct([
      field(1, 'outer', struct([field(2, 'n', T.long), field(3, 'inner', struct([field(4, 'm', T.long)]))])),
      field(5, 'xs', list(6, T.long)),
      field(7, 'byKey', map(8, T.string, 9, T.long)),
      field(10, 'byNum', map(11, T.long, 12, T.double)),
      field(13, 'structs', list(14, struct([field(15, 'v', T.long)]))),
    ]);
    const row: Row = {
      outer: { n: 1, inner: { m: 2 } },
      xs: [1, 2, 3],
      byKey: new Map([
        ['a', 10],
        ['b', 20],
      ]),
      byNum: new Map([[4, 0.5]]),
      structs: [{ v: 8 }, { v: 9n }],
    };
    const out = projected(projectRow(row, target));
    expect(out).toEqual({
      outer: { n: 1n, inner: { m: 2n } },
      xs: [1n, 2n, 3n],
      byKey: new Map([
        ['a', 10n],
        ['b', 20n],
      ]),
      byNum: new Map([[4n, 0.5]]),
      structs: [{ v: 8n }, { v: 9n }],
    });
    expect(out.byKey).toBeInstanceOf(Map);
  });

  it('keeps null elements of lists and null map values', () => {
    const target = struct([field(1, 'xs', list(2, T.long)), field(3, 'm', map(4, T.string, 5, T.long))]);
    const out = projected(projectRow({ xs: [1, null, 3], m: new Map([['k', null]]) }, target));
    expect(out.xs).toEqual([1n, null, 3n]);
    expect(out.m).toEqual(new Map([['k', null]]));
  });

  it('drops fields the target lacks, at the top level and inside structs', () => {
    const target = struct([field(1, 'a', T.long), field(2, 's', struct([field(3, 'x', T.string)]))]);
    const out = projected(
      projectRow({ a: 1, extra: 'gone', s: { x: 'kept', y: 'gone too' }, more: [1, 2] }, target),
    );
    expect(out).toEqual({ a: 1n, s: { x: 'kept' } });
    expect(Object.keys(out)).toEqual(['a', 's']);
    expect(Object.keys(out.s as object)).toEqual(['x']);
  });
});

describe('projectRow: missing values', () => {
  it('omits optional columns the row lacks or holds as null', () => {
    const target = struct([
      field(1, 'a', T.long),
      field(2, 'missing', T.string),
      field(3, 'nulled', T.long),
      field(4, 's', struct([field(5, 'x', T.long), field(6, 'y', T.long)])),
    ]);
    const out = projected(projectRow({ a: 1, nulled: null, s: { x: 2 } }, target));
    expect(out).toEqual({ a: 1n, s: { x: 2n } });
    expect('missing' in out).toBe(false);
    expect('nulled' in out).toBe(false);
    expect('y' in (out.s as object)).toBe(false);
  });

  it('fails on a missing required top-level column, naming it', () => {
    const target = struct([field(1, 'a', T.long), field(2, 'id', T.string, true)]);
    const f = failure(projectRow({ a: 1 }, target));
    expect(f.path).toBe('id');
    expect(f.why).toMatch(/required/);
  });

  it('fails on a null required column', () => {
    const f = failure(projectRow({ id: null }, struct([field(1, 'id', T.string, true)])));
    expect(f.path).toBe('id');
  });

  it('fails on a missing required nested column with its dotted path', () => {
    const target = struct([
      field(1, 'order', struct([field(2, 'customer', struct([field(3, 'id', T.long, true)]), true)]), true),
    ]);
    const f = failure(projectRow({ order: { customer: { name: 'x' } } }, target));
    expect(f.path).toBe('order.customer.id');
  });

  it('accepts a missing optional struct even if it has required fields', () => {
    const target = struct([field(1, 'a', T.long), field(2, 's', struct([field(3, 'x', T.long, true)]))]);
    expect(projected(projectRow({ a: 1 }, target))).toEqual({ a: 1n });
  });
});

describe('projectRow: values of the wrong kind', () => {
  it('fails on a string in a long column', () => {
    const f = failure(projectRow({ n: '12' }, struct([field(1, 'n', T.long)])));
    expect(f.path).toBe('n');
  });

  it('fails on a fractional number in a long column', () => {
    const f = failure(projectRow({ n: 1.5 }, struct([field(1, 'n', T.long)])));
    expect(f.path).toBe('n');
  });

  it('fails on a bigint or a string in a double column', () => {
    expect(failure(projectRow({ d: 1n }, struct([field(1, 'd', T.double)]))).path).toBe('d');
    expect(failure(projectRow({ d: '1.5' }, struct([field(1, 'd', T.float)]))).path).toBe('d');
  });

  it.each([
    ['an array', [1, 2]],
    ['a map', new Map([['x', 1]])],
    ['bytes', new Uint8Array([1])],
    ['a string', 'x'],
    ['a number', 3],
  ])('fails on %s in a struct column', (_what, v) => {
    const target = struct([field(1, 's', struct([field(2, 'x', T.long)]))]);
    const f = failure(projectRow({ s: v }, target));
    expect(f.path).toBe('s');
  });

  it('fails on a non-array in a list column and names the element of a bad element', () => {
    const target = struct([field(1, 'xs', list(2, T.long))]);
    expect(failure(projectRow({ xs: { 0: 1 } }, target)).path).toBe('xs');
    expect(failure(projectRow({ xs: [1, 2, 'three'] }, target)).path).toBe('xs[2]');
  });

  it('fails on a plain object in a map column and names a bad key or value', () => {
    const target = struct([field(1, 'm', map(2, T.long, 3, T.long))]);
    expect(failure(projectRow({ m: { a: 1 } }, target)).path).toBe('m');
    expect(failure(projectRow({ m: new Map([['k', 1]]) }, target)).path).toBe('m.key');
    expect(failure(projectRow({ m: new Map([[1, 'v']]) }, target)).path).toBe('m.value');
  });

  it('names the failing field inside a list of structs', () => {
    const target = struct([field(1, 'items', list(2, struct([field(3, 'qty', T.long, true)])))]);
    expect(failure(projectRow({ items: [{ qty: 1 }, { qty: 'two' }] }, target)).path).toBe('items[1].qty');
    expect(failure(projectRow({ items: [{ qty: 1 }, {}] }, target)).path).toBe('items[1].qty');
  });
});
