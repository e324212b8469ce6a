import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FloeError, isFloeError } from '../../../lambdas/src/errors.ts';
import { highestFieldId, indexById, type Schema } from '../../../lambdas/src/iceberg/schema.ts';
import {
  assignFreshIds,
  canPromote,
  partitionSourceTransforms,
  promotionChangesTransform,
  unionByName,
} from '../../../lambdas/src/iceberg/schema-evolution.ts';
import {
  decimal,
  field,
  type IcebergType,
  list,
  map,
  type PrimitiveType,
  type StructType,
  struct,
  T,
} from '../../../lambdas/src/iceberg/types.ts';

/** Incoming (inferred) structs carry placeholder ids; 0 everywhere shows they are ignored. */
const f = (name: string, type: IcebergType, required = false) => field(0, name, type, required);

const TABLE: Schema = {
  schemaId: 3,
  identifierFieldIds: [1],
  fields: [
    field(1, 'event_id', T.string, true),
    field(2, 'qty', T.int, true),
    field(3, 'customer', struct([field(4, 'id', T.long, true), field(5, 'name', T.string)])),
    field(6, 'items', list(7, struct([field(8, 'sku', T.string)]), true)),
    field(9, 'attrs', map(10, T.string, 11, struct([field(12, 'v', T.string)]))),
    field(13, 'price', decimal(9, 2)),
    field(14, 'total', T.long),
  ],
};

/** Incoming data always carries the table's required key columns unless a test says otherwise. */
const withKeys = (...fields: ReturnType<typeof f>[]) =>
  struct([f('event_id', T.string, true), f('qty', T.int, true), ...fields]);

function thrown(fn: () => unknown): FloeError {
  try {
    fn();
  } catch (e) {
    if (isFloeError(e)) return e;
    throw e;
  }
  throw new Error('expected a FloeError');
}

describe('canPromote', () => {
  it.each<[PrimitiveType, PrimitiveType, number, boolean]>([
    [T.int, T.long, 2, true],
    [T.long, T.int, 2, false],
    [T.float, T.double, 2, true],
    [T.double, T.float, 2, false],
    [decimal(9, 2), decimal(12, 2), 2, true],
    [decimal(12, 2), decimal(9, 2), 2, false],
    [decimal(9, 2), decimal(12, 3), 2, false],
    [T.date, T.timestamp, 2, false],
    [T.date, T.timestamp, 3, true],
    [T.date, T.timestamp_ns, 3, true],
    [T.date, T.timestamptz, 3, false],
    [T.unknown, T.string, 3, true],
    [T.unknown, T.string, 2, false],
    [T.string, T.binary, 3, false],
    [T.int, T.string, 3, false],
    [T.long, T.long, 2, true],
  ])('%o → %o in v%i: %s', (from, to, v, expected) => {
    expect(canPromote(from, to, v)).toBe(expected);
  });
});

describe('assignFreshIds', () => {
  it("numbers a struct's fields before descending, like Java AssignFreshIds", () => {
    let next = 100;
    const out = assignFreshIds(
      struct([f('a', struct([f('x', T.int), f('y', map(0, T.string, 0, list(0, T.int)))])), f('b', T.long)]),
      () => ++next,
    );
    const ids = [...indexById(out).entries()].map(([id, x]) => [x.path.join('.'), id]);
    expect(Object.fromEntries(ids)).toEqual({
      a: 101,
      b: 102,
      'a.x': 103,
      'a.y': 104,
      'a.y.key': 105,
      'a.y.value': 106,
      'a.y.value.element': 107,
    });
  });
});

describe('unionByName', () => {
  const same = struct(TABLE.fields.map((x) => ({ ...x, id: 0 })));

  it('returns no schema when the incoming struct already fits (including narrower types)', () => {
    const r = unionByName(TABLE, same, 14, 2);
    expect(r).toEqual({ schema: undefined, lastColumnId: 14, changes: [] });
    const narrower = struct([
      f('event_id', T.string, true),
      f('qty', T.int, true),
      f('total', T.int),
      f('price', decimal(5, 2)),
    ]);
    // customer/items/attrs are optional already, so their absence changes nothing either.
    expect(unionByName(TABLE, narrower, 14, 2).schema).toBeUndefined();
  });

  it('adds a top-level column as optional with a fresh id and the next schema id', () => {
    const r = unionByName(TABLE, struct([...same.fields, f('user_agent', T.string, true)]), 20, 2, {
      tableName: 'order_events',
      maxSchemaId: 5,
    });
    expect(r.changes).toEqual(['added column order_events.user_agent string']);
    expect(r.lastColumnId).toBe(21);
    expect(r.schema?.schemaId).toBe(6);
    expect(r.schema?.identifierFieldIds).toEqual([1]);
    expect(r.schema?.fields.at(-1)).toEqual({ id: 21, name: 'user_agent', required: false, type: T.string });
    // Existing fields keep their ids and order.
    expect(r.schema?.fields.slice(0, 7)).toEqual(TABLE.fields);
  });

  it('adds nested struct fields, and new structs get fresh ids for every child (all optional)', () => {
    const incoming = withKeys(
      f('customer', struct([f('id', T.long, true), f('tier', T.string)])),
      f('geo', struct([f('lat', T.double, true), f('tags', list(0, T.string, true), true)]), true),
    );
    const r = unionByName(TABLE, incoming, 14, 2);
    const byPath = new Map([...indexById(r.schema!).values()].map((x) => [x.path.join('.'), x.field]));
    expect(byPath.get('customer.tier')).toMatchObject({ id: 15, required: false });
    expect(byPath.get('geo')).toMatchObject({ id: 16, required: false });
    expect(byPath.get('geo.lat')).toMatchObject({ id: 17, required: false });
    expect(byPath.get('geo.tags')).toMatchObject({ id: 18, required: false });
    expect(byPath.get('geo.tags.element')).toMatchObject({ id: 19, required: false });
    expect(r.lastColumnId).toBe(19);
    expect(r.changes).toContain('added column customer.tier string');
    expect(r.changes).toContain('added column geo struct<lat: double, tags: list<string>>');
  });

  it('adds fields inside list elements and map values that are structs', () => {
    const incoming = withKeys(
      f('items', list(0, struct([f('sku', T.string), f('price', T.double)]))),
      f('attrs', map(0, T.string, 0, struct([f('v', T.string), f('unit', T.string)]))),
    );
    const r = unionByName(TABLE, incoming, 14, 2);
    const byPath = new Map([...indexById(r.schema!).values()].map((x) => [x.path.join('.'), x.field.id]));
    expect(byPath.get('items.element.price')).toBe(15);
    expect(byPath.get('attrs.value.unit')).toBe(16);
    expect(byPath.get('items.element.sku')).toBe(8);
    expect(r.changes).toEqual([
      'added column items.element.price double',
      'made column items.element optional (optional in incoming data)',
      'added column attrs.value.unit string',
    ]);
  });

  it('applies allowed promotions', () => {
    const r = unionByName(
      TABLE,
      struct([f('event_id', T.string, true), f('qty', T.long, true), f('price', decimal(18, 2))]),
      14,
      2,
    );
    expect(r.changes).toEqual([
      'promoted column qty from int to long',
      'promoted column price from decimal(9,2) to decimal(18,2)',
    ]);
    expect(r.schema?.fields[1]).toEqual(field(2, 'qty', T.long, true));
    expect(r.lastColumnId).toBe(14);
  });

  it('makes a required field optional when incoming data lacks it or carries it as optional', () => {
    const r = unionByName(TABLE, struct([f('event_id', T.string, true), f('qty', T.int, false)]), 14, 2);
    expect(r.schema?.fields[1]?.required).toBe(false);
    expect(r.changes).toEqual(['made column qty optional (optional in incoming data)']);
    const missing = unionByName(
      TABLE,
      struct([f('event_id', T.string, true), f('customer', struct([]))]),
      14,
      2,
    );
    expect(missing.changes).toEqual([
      'made column qty optional (absent from incoming data)',
      'made column customer.id optional (absent from incoming data)',
    ]);
  });

  it.each<[string, StructType, RegExp]>([
    [
      'string vs long',
      withKeys(f('total', T.string)),
      /column t\.total: existing type long cannot hold incoming type string/,
    ],
    [
      'struct vs primitive',
      withKeys(f('customer', struct([f('id', struct([f('x', T.int)]))]))),
      /column t\.customer\.id: existing type long .* struct<x: int>/,
    ],
    [
      'primitive vs struct',
      struct([f('event_id', struct([]), true), f('qty', T.int, true)]),
      /t\.event_id: existing type string/,
    ],
    [
      'list vs map',
      withKeys(f('items', map(0, T.string, 0, T.string))),
      /t\.items: existing type list<struct<sku: string>>/,
    ],
    [
      'decimal scale change',
      withKeys(f('price', decimal(9, 3))),
      /t\.price: existing type decimal\(9,2\) cannot hold incoming type decimal\(9,3\)/,
    ],
    [
      'map key change',
      withKeys(f('attrs', map(0, T.long, 0, struct([])))),
      /t\.attrs\.key: existing type string/,
    ],
  ])('rejects %s naming the path and both types', (_name, incoming, message) => {
    const e = thrown(() => unionByName(TABLE, incoming, 14, 2, { tableName: 't' }));
    expect(e.kind).toBe('SchemaIncompatible');
    expect(e.message).toMatch(message);
  });

  it('keeps an identifier field required when incoming data lacks it or has it optional', () => {
    // Records without it are refused one by one when converted; the batch does not fail here.
    for (const incoming of [struct([f('qty', T.int, true)]), struct([f('event_id', T.string, false)])]) {
      const r = unionByName(TABLE, incoming, 14, 2);
      const id = (r.schema ?? TABLE).fields.find((x) => x.name === 'event_id');
      expect(id?.required).toBe(true);
      expect(r.changes.join(' ')).not.toMatch(/event_id/);
    }
  });

  it('handles v3-only types by format version', () => {
    const incoming = struct([
      f('event_id', T.string, true),
      f('qty', T.int, true),
      f('seen', T.unknown),
      f('at', T.timestamp_ns),
    ]);
    // v2: an all-null (unknown) field waits for a typed value; timestamp_ns cannot be added.
    expect(thrown(() => unionByName(TABLE, incoming, 14, 2)).message).toMatch(
      /at \(timestamp_ns\): type requires format version 3/,
    );
    const v2 = unionByName(
      TABLE,
      struct([f('event_id', T.string, true), f('qty', T.int, true), f('seen', T.unknown)]),
      14,
      2,
    );
    expect(v2.schema).toBeUndefined();
    const v3 = unionByName(TABLE, incoming, 14, 3);
    expect(v3.changes).toEqual(['added column seen unknown', 'added column at timestamp_ns']);
    // Later, a typed value promotes unknown (v3 only).
    const later = unionByName(v3.schema!, withKeys(f('seen', T.string)), v3.lastColumnId, 3);
    expect(later.changes).toEqual(['promoted column seen from unknown to string']);
  });

  it('never reuses ids even when last-column-id lags the schema', () => {
    const r = unionByName(TABLE, withKeys(f('extra', T.string)), 3, 2);
    expect(r.schema?.fields.at(-1)?.id).toBe(15);
    expect(r.lastColumnId).toBe(15);
  });

  it('property: across any sequence of unions ids are never reused and last-column-id never decreases', () => {
    const names = ['a', 'b', 'c', 'd'];
    const prim = fc.constantFrom<IcebergType>(
      T.int,
      T.long,
      T.float,
      T.double,
      T.string,
      T.boolean,
      T.date,
      decimal(9, 2),
      decimal(12, 2),
    );
    const { type } = fc.letrec<{ type: IcebergType; struct: StructType }>((tie) => ({
      type: fc.oneof(
        { maxDepth: 3, depthSize: 'small' },
        prim,
        tie('struct'),
        tie('type').map((t) => list(0, t) as IcebergType),
      ),
      struct: fc
        .uniqueArray(fc.tuple(fc.constantFrom(...names), tie('type'), fc.boolean()), {
          selector: (x) => x[0],
          maxLength: 4,
        })
        .map((fs) => struct(fs.map(([n, t, r]) => f(n, t, r)))),
    }));
    const incomingStruct = fc
      .uniqueArray(fc.tuple(fc.constantFrom(...names), type, fc.boolean()), {
        selector: (x) => x[0],
        maxLength: 4,
      })
      .map((fs) => struct(fs.map(([n, t, r]) => f(n, t, r))));

    fc.assert(
      fc.property(
        fc.array(incomingStruct, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(2, 3),
        (steps, v) => {
          let schema: Schema = { schemaId: 0, fields: [field(1, 'id', T.long, true)] };
          let last = 1;
          /** Every id ever handed out → the path it was given to. */
          const owner = new Map<number, string>([[1, 'id']]);
          for (const incoming of steps) {
            let r: ReturnType<typeof unionByName>;
            try {
              r = unionByName(schema, incoming, last, v);
            } catch (e) {
              if (isFloeError(e, 'SchemaIncompatible')) continue;
              throw e;
            }
            expect(r.lastColumnId).toBeGreaterThanOrEqual(last);
            if (r.schema === undefined) {
              expect(r.changes).toEqual([]);
              continue;
            }
            expect(r.changes.length).toBeGreaterThan(0);
            expect(r.schema.schemaId).toBe(schema.schemaId + 1);
            const index = indexById(r.schema);
            for (const [id, x] of index) {
              const path = x.path.join('.');
              const prev = owner.get(id);
              if (prev === undefined) {
                expect(id).toBeGreaterThan(last);
                owner.set(id, path);
              } else {
                expect(path).toBe(prev);
              }
            }
            // Nothing that existed before disappeared.
            for (const id of indexById(schema).keys()) expect(index.has(id)).toBe(true);
            expect(highestFieldId(r.schema)).toBeLessThanOrEqual(r.lastColumnId);
            schema = r.schema;
            last = r.lastColumnId;
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('promotion of a partition source', () => {
  const table: Schema = {
    schemaId: 0,
    fields: [
      field(1, 'qty', T.int),
      field(2, 'score', T.float),
      field(3, 'price', decimal(9, 2)),
      field(4, 'day', T.date),
    ],
  };
  const specs = [
    {
      'spec-id': 0,
      fields: [
        { 'source-id': 1, 'field-id': 1000, name: 'qty_bucket', transform: 'bucket[8]' },
        { 'source-id': 1, 'field-id': 1001, name: 'qty_trunc', transform: 'truncate[10]' },
        { 'source-id': 2, 'field-id': 1002, name: 'score', transform: 'identity' },
        { 'source-id': 3, 'field-id': 1003, name: 'price_bucket', transform: 'bucket[4]' },
      ],
    },
    { 'spec-id': 1, fields: [{ 'source-id': 4, 'field-id': 1004, name: 'day', transform: 'identity' }] },
  ];
  const partitionTransforms = partitionSourceTransforms(specs);

  it('collects every transform on each source across specs', () => {
    expect([...partitionTransforms]).toEqual([
      [1, ['bucket[8]', 'truncate[10]']],
      [2, ['identity']],
      [3, ['bucket[4]']],
      [4, ['identity']],
    ]);
  });

  it('allows int → long, float → double and decimal precision under identity, bucket and truncate', () => {
    const r = unionByName(
      table,
      struct([f('qty', T.long), f('score', T.double), f('price', decimal(12, 2))]),
      4,
      2,
      { partitionTransforms },
    );
    expect(r.changes).toEqual([
      'promoted column qty from int to long',
      'promoted column score from float to double',
      'promoted column price from decimal(9,2) to decimal(12,2)',
    ]);
  });

  it('refuses date → timestamp for an identity (or bucket) source, whose values would change', () => {
    const e = thrown(() =>
      unionByName(table, struct([f('day', T.timestamp)]), 4, 3, { partitionTransforms }),
    );
    expect(e.kind).toBe('SchemaIncompatible');
    expect(e.message).toContain('partition transform identity');
    // Without the spec the promotion is a plain v3 one.
    expect(unionByName(table, struct([f('day', T.timestamp)]), 4, 3).changes).toEqual([
      'promoted column day from date to timestamp',
    ]);
  });

  it.each([
    ['identity', true],
    ['bucket[16]', true],
    ['year', false],
    ['month', false],
    ['day', false],
    ['void', false],
  ])('date → timestamp under %s changes the partition: %s', (transform, changes) => {
    expect(promotionChangesTransform(T.date, T.timestamp, transform)).toBe(changes);
    expect(promotionChangesTransform(T.int, T.long, transform)).toBe(false);
  });
});
