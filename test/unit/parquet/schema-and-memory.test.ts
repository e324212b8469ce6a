import { describe, expect, it } from 'vitest';
import { decimal, field, list, map, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import { FIELD_ID_KEY, icebergToArrowSchema } from '../../../lambdas/src/parquet/arrow-schema.ts';
import { Arena } from '../../../lambdas/src/parquet/memory.ts';

describe('icebergToArrowSchema', () => {
  const schema = icebergToArrowSchema({
    schemaId: 0,
    fields: [
      field(1, 'id', T.long, true),
      field(2, 'tags', list(3, T.string, true)),
      field(4, 'm', map(5, T.string, 6, decimal(10, 2))),
      field(7, 's', struct([field(8, 'ts', T.timestamptz), field(9, 'gone', T.unknown)])),
      field(10, 'gone', T.unknown),
    ],
  });
  const id = (f: { metadata: Map<string, string> }) => f.metadata.get(FIELD_ID_KEY);

  it('carries field ids on every field, including list elements and map keys/values', () => {
    const [idF, tags, m, s] = schema.fields;
    expect(schema.fields.map((f) => [f.name, id(f)])).toEqual([
      ['id', '1'],
      ['tags', '2'],
      ['m', '4'],
      ['s', '7'],
    ]);
    expect(idF!.nullable).toBe(false);
    const element = tags!.type.children[0]!;
    expect([element.name, id(element), element.nullable]).toEqual(['element', '3', false]);
    const entries = m!.type.children[0]!;
    expect([entries.name, entries.nullable]).toEqual(['entries', false]); // Parquet: renamed key_value
    const [k, v] = entries.type.children;
    expect([k!.name, id(k!), k!.nullable, v!.name, id(v!), v!.nullable]).toEqual([
      'key',
      '5',
      false,
      'value',
      '6',
      true,
    ]);
    expect(String(v!.type)).toBe('Decimal[10e+2]');
    const ts = s!.type.children;
    expect(ts.map((c: { name: string }) => c.name)).toEqual(['ts']);
    expect(ts[0]!.type.timezone).toBe('UTC');
  });
});

describe('Arena', () => {
  it('hands out non-overlapping, zeroed, 8-byte aligned arrays and reuses memory after reset', () => {
    const a = new Arena();
    const x = a.int32(3);
    const y = a.float64(5);
    const z = a.bytes(7);
    x.fill(-1);
    y.fill(1.5);
    z.fill(9);
    expect(Array.from(x)).toEqual([-1, -1, -1]);
    expect(Array.from(y)).toEqual([1.5, 1.5, 1.5, 1.5, 1.5]);
    expect(y.byteOffset % 8).toBe(0);
    expect(z.byteOffset % 8).toBe(0);
    a.reset();
    const again = a.int32(3);
    expect(again.buffer).toBe(x.buffer);
    expect(Array.from(again)).toEqual([0, 0, 0]);
  });

  it('grows past one chunk and then keeps a single chunk big enough for everything', () => {
    const a = new Arena();
    const big = 12 * 1024 * 1024;
    const p = a.bytes(big);
    const q = a.bytes(big);
    expect(p.buffer).not.toBe(q.buffer);
    a.reset();
    const r = a.bytes(big);
    const s = a.bytes(big);
    expect(r.buffer).toBe(s.buffer);
  });
});
