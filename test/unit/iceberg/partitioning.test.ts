import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { compareValues, fromBinary } from '../../../lambdas/src/iceberg/conversions.ts';
import type { PartitionField, PartitionSpec } from '../../../lambdas/src/iceberg/partition-spec.ts';
import {
  evolveSpec,
  fieldSummaries,
  partitionKey,
  partitionPath,
  partitionTuple,
  partitionType,
  urlEncode,
  validateSpec,
} from '../../../lambdas/src/iceberg/partitioning.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import { decimal, field, list, map, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import type { IcebergValue } from '../../../lambdas/src/iceberg/values.ts';

const schema: Schema = {
  schemaId: 0,
  fields: [
    field(1, 'id', T.long, true),
    field(2, 'ts', T.timestamptz),
    field(3, 'name', T.string),
    field(4, 'loc', struct([field(5, 'city', T.string), field(6, 'zip', T.int)])),
    field(7, 'tags', list(8, T.string)),
    field(9, 'amount', decimal(9, 2)),
    field(10, 'd', T.date),
    field(11, 'payload', T.binary),
    field(12, 'attrs', map(13, T.string, 14, T.string)),
    field(15, 'score', T.double),
  ],
};

const pf = (sourceId: number, fieldId: number, name: string, transform: string): PartitionField => ({
  'source-id': sourceId,
  'field-id': fieldId,
  name,
  transform,
});
const spec = (id: number, ...fields: PartitionField[]): PartitionSpec => ({ 'spec-id': id, fields });

const TS = BigInt(Date.parse('2017-11-16T22:31:08Z')) * 1000n;
const main = spec(
  1,
  pf(1, 1000, 'id', 'identity'),
  pf(2, 1001, 'ts_day', 'day'),
  pf(5, 1002, 'loc.city_bucket', 'bucket[16]'),
  pf(3, 1003, 'name_trunc', 'truncate[4]'),
);

function expectError(fn: () => unknown, kind: ErrorKind, ...texts: string[]) {
  try {
    fn();
  } catch (e) {
    expect(isFloeError(e, kind), String(e)).toBe(true);
    for (const t of texts) expect((e as Error).message).toContain(t);
    return;
  }
  throw new Error('expected a FloeError');
}

describe('partitionType', () => {
  it('has one optional field per partition field typed by the result type', () => {
    expect(partitionType(main, schema)).toEqual(
      struct([
        field(1000, 'id', T.long),
        field(1001, 'ts_day', T.date),
        field(1002, 'loc.city_bucket', T.int),
        field(1003, 'name_trunc', T.string),
      ]),
    );
    expect(partitionType(spec(0), schema)).toEqual(struct([]));
  });
});

describe('partitionTuple', () => {
  it('applies transforms, reaching nested sources through structs', () => {
    const row = { id: 7n, ts: TS, name: 'iceberg', loc: { city: 'iceberg', zip: 1 } };
    expect(partitionTuple(main, schema, row)).toEqual([7n, 17486, 1210000089 % 16, 'iceb']);
  });
  it('yields nulls for missing values and null parents', () => {
    expect(partitionTuple(main, schema, { id: 1n, loc: null })).toEqual([1n, null, null, null]);
    expect(partitionTuple(main, schema, { id: 1n })).toEqual([1n, null, null, null]);
  });
  it('names the partition field when a value is malformed', () => {
    expectError(
      () => partitionTuple(main, schema, { id: 1n, ts: 'yesterday' }),
      ErrorKind.DataInvalid,
      'ts_day',
    );
    expectError(() => partitionTuple(main, schema, { id: 1n, loc: 'x' }), ErrorKind.DataInvalid, 'loc.city');
  });
});

describe('partitionKey', () => {
  it('distinguishes values that stringify alike', () => {
    const keys = [
      [1],
      [1n],
      ['1'],
      [null],
      ['null'],
      ['a,b'],
      ['a', 'b'],
      [-0],
      [0],
      [true],
      ['T'],
      [Uint8Array.of(1)],
    ].map((t) => partitionKey(t as IcebergValue[]));
    expect(new Set(keys).size).toBe(keys.length);
    expect(partitionKey([2n ** 60n + 1n])).not.toBe(partitionKey([2n ** 60n]));
    expect(partitionKey([Uint8Array.of(1, 2)])).toBe(partitionKey([Uint8Array.of(1, 2)]));
  });
  it('is equal exactly when tuples are equal', () => {
    const value = fc.oneof(
      fc.constant(null),
      fc.integer(),
      fc.bigInt(),
      fc.string(),
      fc.uint8Array({ maxLength: 3 }),
      fc.boolean(),
    );
    const tuple = fc.array(value, { maxLength: 3 });
    fc.assert(
      fc.property(tuple, tuple, (a, b) => {
        const equal = a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
        expect(partitionKey(a) === partitionKey(b)).toBe(equal);
      }),
    );
  });
});

function sameValue(x: unknown, y: unknown): boolean {
  if (x instanceof Uint8Array && y instanceof Uint8Array) return Buffer.from(x).equals(Buffer.from(y));
  return Object.is(x, y);
}

describe('partitionPath', () => {
  it('renders name=value pairs with human forms', () => {
    const row = { id: 7n, ts: TS, name: 'iceberg', loc: { city: 'iceberg' } };
    expect(partitionPath(main, schema, partitionTuple(main, schema, row))).toBe(
      `id=7/ts_day=2017-11-16/loc.city_bucket=${1210000089 % 16}/name_trunc=iceb`,
    );
    expect(partitionPath(main, schema, [1n, null, null, null])).toBe(
      'id=1/ts_day=null/loc.city_bucket=null/name_trunc=null',
    );
  });
  it('URL-encodes like java.net.URLEncoder', () => {
    const s = spec(2, pf(3, 1000, 'na me/x', 'identity'));
    expect(partitionPath(s, schema, ['a b&c=d/é*~'])).toBe('na+me%2Fx=a+b%26c%3Dd%2F%C3%A9*%7E');
    expect(urlEncode("Az09.-*_ !'()~😀")).toBe('Az09.-*_+%21%27%28%29%7E%F0%9F%98%80');
  });
  it('is empty when unpartitioned', () => {
    expect(partitionPath(spec(0), schema, [])).toBe('');
    expect(partitionPath(spec(3, pf(1, 1000, 'id_null', 'void')), schema, [null])).toBe('');
  });
  it('rejects a tuple of the wrong arity', () => {
    expectError(() => partitionPath(main, schema, [1n]), ErrorKind.DataInvalid, '1 values');
  });
});

describe('fieldSummaries', () => {
  it('reports nulls, NaN and result-type bounds', () => {
    const s = spec(
      4,
      pf(2, 1000, 'ts_day', 'day'),
      pf(15, 1001, 'score', 'identity'),
      pf(3, 1002, 'name_null', 'void'),
    );
    const tuples = [
      [17486, 1.5, null],
      [17000, Number.NaN, null],
      [null, -0, null],
      [17999, 0, null],
    ];
    const [day, score, v] = fieldSummaries(s, schema, tuples);
    expect(day!.contains_null).toBe(true);
    expect(day!.contains_nan).toBe(false);
    expect(Buffer.from(day!.lower_bound!).toString('hex')).toBe('68420000'); // 17000 as 4-byte LE date
    expect(fromBinary(T.date, day!.upper_bound!)).toBe(17999);
    expect(score!.contains_nan).toBe(true);
    expect(score!.contains_null).toBe(false);
    expect(Object.is(fromBinary(T.double, score!.lower_bound!), -0)).toBe(true);
    expect(fromBinary(T.double, score!.upper_bound!)).toBe(1.5);
    expect(v).toEqual({ contains_null: true, contains_nan: false });
  });
  it('bounds enclose every value', () => {
    const s = spec(5, pf(3, 1000, 'name_trunc', 'truncate[3]'), pf(1, 1001, 'id_bucket', 'bucket[8]'));
    fc.assert(
      fc.property(
        fc.array(fc.record({ name: fc.option(fc.string()), id: fc.bigInt() }), {
          minLength: 1,
          maxLength: 20,
        }),
        (rows) => {
          const tuples = rows.map((r) => partitionTuple(s, schema, r));
          const sums = fieldSummaries(s, schema, tuples);
          const types = [T.string, T.int];
          sums.forEach((sum, i) => {
            const values = tuples.map((t) => t[i]).filter((x) => x !== null);
            expect(sum.contains_null).toBe(values.length < tuples.length);
            if (values.length === 0) {
              expect(sum.lower_bound).toBeUndefined();
              return;
            }
            const lo = fromBinary(types[i]!, sum.lower_bound!);
            const hi = fromBinary(types[i]!, sum.upper_bound!);
            for (const x of values) {
              expect(compareValues(types[i]!, lo, x)).toBeLessThanOrEqual(0);
              expect(compareValues(types[i]!, hi, x)).toBeGreaterThanOrEqual(0);
            }
          });
        },
      ),
    );
  });
});

describe('validateSpec', () => {
  it('accepts a valid spec and a void field whose source was dropped', () => {
    expect(() => validateSpec(main, schema)).not.toThrow();
    expect(() => validateSpec(spec(1, pf(99, 1000, 'gone_null', 'void')), schema)).not.toThrow();
  });
  it('rejects sources in lists/maps, non-primitive sources and wrong types, naming the field', () => {
    expectError(
      () => validateSpec(spec(1, pf(8, 1000, 'tag', 'identity')), schema),
      ErrorKind.SchemaIncompatible,
      "'tag'",
      'list or map',
    );
    expectError(
      () => validateSpec(spec(1, pf(14, 1000, 'av', 'identity')), schema),
      ErrorKind.SchemaIncompatible,
      "'av'",
      'list or map',
    );
    expectError(
      () => validateSpec(spec(1, pf(4, 1000, 'l', 'identity')), schema),
      ErrorKind.SchemaIncompatible,
      "'l'",
      'not primitive',
    );
    expectError(
      () => validateSpec(spec(1, pf(3, 1000, 'name_day', 'day')), schema),
      ErrorKind.SchemaIncompatible,
      "'name_day'",
      'day does not apply',
      'string',
    );
    expectError(
      () => validateSpec(spec(1, pf(99, 1000, 'x', 'identity')), schema),
      ErrorKind.SchemaIncompatible,
      "'x'",
      'not found',
    );
    expectError(
      () => validateSpec(spec(1, pf(1, 1000, 'z', 'zorder')), schema),
      ErrorKind.FeatureUnsupported,
      'zorder',
      "'z'",
    );
  });
  it('rejects duplicate ids/names and names that shadow other columns', () => {
    expectError(
      () => validateSpec(spec(1, pf(1, 1000, 'a', 'identity'), pf(3, 1000, 'b', 'identity')), schema),
      ErrorKind.DataInvalid,
      'duplicate field id',
    );
    expectError(
      () => validateSpec(spec(1, pf(1, 1000, 'a', 'identity'), pf(3, 1001, 'a', 'identity')), schema),
      ErrorKind.DataInvalid,
      'duplicate name',
    );
    expectError(
      () => validateSpec(spec(1, pf(1, 1000, 'name', 'bucket[4]')), schema),
      ErrorKind.SchemaIncompatible,
      "'name'",
    );
    expect(() => validateSpec(spec(1, pf(3, 1000, 'name', 'identity')), schema)).not.toThrow();
  });
});

describe('evolveSpec', () => {
  const unpartitioned = spec(0);

  it('adds a spec with fresh ids and default names', () => {
    const r = evolveSpec([unpartitioned], 0, 999, [{ sourceId: 2, transform: 'day' }], schema);
    expect(r).toEqual({ spec: spec(1, pf(2, 1000, 'ts_day', 'day')), lastPartitionId: 1000, changed: true });
  });

  it('returns the default spec unchanged when equivalent', () => {
    const s1 = spec(1, pf(2, 1000, 'ts_day', 'day'));
    const r = evolveSpec([unpartitioned, s1], 1, 1000, [{ sourceId: 2, transform: 'DAY' }], schema);
    expect(r.changed).toBe(false);
    expect(r.spec).toBe(s1);
    expect(r.lastPartitionId).toBe(1000);
  });

  it('reuses ids of equivalent fields from any earlier spec and reuses equivalent specs', () => {
    const s1 = spec(1, pf(2, 1000, 'ts_day', 'day'));
    const s2 = spec(2, pf(2, 1000, 'ts_day', 'day'), pf(1, 1001, 'id_bucket', 'bucket[16]'));
    const specs = [unpartitioned, s1, s2];
    // back to unpartitioned: the existing spec 0 is reused
    expect(evolveSpec(specs, 2, 1001, [], schema)).toEqual({
      spec: unpartitioned,
      lastPartitionId: 1001,
      changed: true,
    });
    // bucket alone: new spec 3, id 1001 recycled; a new hour field gets 1002
    const r = evolveSpec(
      specs,
      0,
      1001,
      [
        { sourceId: 1, transform: 'bucket[16]' },
        { sourceId: 2, transform: 'hour' },
      ],
      schema,
    );
    expect(r).toEqual({
      spec: spec(3, pf(1, 1001, 'id_bucket', 'bucket[16]'), pf(2, 1002, 'ts_hour', 'hour')),
      lastPartitionId: 1002,
      changed: true,
    });
    // a different bucket count is a different field
    const r2 = evolveSpec(specs, 2, 1001, [{ sourceId: 1, transform: 'bucket[8]', name: 'id_b8' }]);
    expect(r2.spec.fields).toEqual([pf(1, 1002, 'id_b8', 'bucket[8]')]);
    // a rename keeps the id
    const r3 = evolveSpec(specs, 1, 1001, [{ sourceId: 2, transform: 'day', name: 'event_day' }]);
    expect(r3.spec).toEqual(spec(3, pf(2, 1000, 'event_day', 'day')));
    expect(r3.lastPartitionId).toBe(1001);
  });

  it('rejects unknown transforms, duplicates, missing names and invalid sources', () => {
    expectError(
      () => evolveSpec([unpartitioned], 0, 999, [{ sourceId: 1, transform: 'zorder' }], schema),
      ErrorKind.FeatureUnsupported,
      'zorder',
    );
    expectError(
      () =>
        evolveSpec(
          [unpartitioned],
          0,
          999,
          [
            { sourceId: 1, transform: 'identity' },
            { sourceId: 1, transform: 'identity', name: 'x' },
          ],
          schema,
        ),
      ErrorKind.ConfigInvalid,
      'redundant',
    );
    expectError(
      () => evolveSpec([unpartitioned], 0, 999, [{ sourceId: 1, transform: 'identity' }]),
      ErrorKind.ConfigInvalid,
      'needs a name',
    );
    expectError(
      () => evolveSpec([unpartitioned], 0, 999, [{ sourceId: 3, transform: 'hour' }], schema),
      ErrorKind.SchemaIncompatible,
      'name_hour',
    );
    expectError(
      () =>
        evolveSpec([unpartitioned], 0, 999, [
          { sourceId: 1, transform: 'identity', name: 'k' },
          { sourceId: 3, transform: 'identity', name: 'k' },
        ]),
      ErrorKind.ConfigInvalid,
      "'k'",
    );
  });

  it('keeps ids stable across any evolution sequence', () => {
    const choices = [
      { sourceId: 1, transform: 'identity' },
      { sourceId: 1, transform: 'bucket[4]' },
      { sourceId: 2, transform: 'day' },
      { sourceId: 2, transform: 'hour' },
      { sourceId: 3, transform: 'truncate[2]' },
      { sourceId: 10, transform: 'month' },
    ];
    const desiredSet = fc
      .subarray(choices)
      .chain((xs) => fc.shuffledSubarray(xs, { minLength: xs.length, maxLength: xs.length }));
    fc.assert(
      fc.property(fc.array(desiredSet, { minLength: 1, maxLength: 8 }), (steps) => {
        let specs: PartitionSpec[] = [spec(0)];
        let def = 0;
        let last = 999;
        const idOf = new Map<string, number>();
        for (const desired of steps) {
          const r = evolveSpec(specs, def, last, desired, schema);
          expect(r.lastPartitionId).toBeGreaterThanOrEqual(last);
          if (!specs.includes(r.spec)) {
            expect(r.spec['spec-id']).toBe(Math.max(...specs.map((s) => s['spec-id'])) + 1);
            specs = [...specs, r.spec];
          }
          expect(r.changed).toBe(r.spec['spec-id'] !== def);
          def = r.spec['spec-id'];
          last = r.lastPartitionId;
          expect(r.spec.fields.map((f) => [f['source-id'], f.transform])).toEqual(
            desired.map((d) => [d.sourceId, d.transform]),
          );
          const ids = r.spec.fields.map((f) => f['field-id']);
          expect(new Set(ids).size).toBe(ids.length);
          for (const f of r.spec.fields) {
            expect(f['field-id']).toBeLessThanOrEqual(last);
            const k = `${f['source-id']}:${f.transform}`;
            if (idOf.has(k)) expect(f['field-id']).toBe(idOf.get(k));
            idOf.set(k, f['field-id']);
          }
        }
        // no two specs hold the same field list
        const shapes = specs.map((s) =>
          JSON.stringify(s.fields.map((f) => [f['source-id'], f.transform, f.name])),
        );
        expect(new Set(shapes).size).toBe(shapes.length);
      }),
    );
  });
});
