import { describe, expect, it } from 'vitest';
import { avroDatumType } from '../../../lambdas/src/avro/datum.ts';
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';
import { type StructType, typeToJson, typeToString } from '../../../lambdas/src/iceberg/types.ts';
import {
  avroDatumToRow,
  avroToIcebergStruct,
  compileAvroRowConverter,
  compileAvroSchema,
  unscaledOf,
} from '../../../lambdas/src/schema/avro-to-iceberg.ts';
import {
  avscEncode,
  clickDatum,
  clickEvent,
  EVENT_DATE_DAYS,
  EVENT_TIME_MICROS,
  orderDatumV2,
  orderV1,
  orderV2,
} from '../records/avro-sample-schemas.ts';

function rec(fields: unknown[], name = 'R'): Record<string, unknown> {
  return { type: 'record', name, fields };
}

/** The Iceberg type string of a single field `f` of the given Avro type. */
function mapped(type: unknown): { type: string; required: boolean } {
  const s = avroToIcebergStruct(rec([{ name: 'f', type }]));
  const f = s.fields[0]!;
  return { type: typeToString(f.type), required: f.required };
}

/** Encodes with plain avsc, decodes with Floe's codec (bigint longs), converts to a row. */
function roundTrip(schema: Record<string, unknown>, datum: Record<string, unknown>) {
  const bytes = avscEncode(schema, datum);
  const { value, offset } = avroDatumType(schema).decode(bytes, 0);
  expect(offset).toBe(bytes.length);
  return compileAvroRowConverter(schema)(value);
}

function unsupported(fn: () => unknown): FloeError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(FloeError);
    expect((e as FloeError).kind).toBe(ErrorKind.FeatureUnsupported);
    return e as FloeError;
  }
  throw new Error('expected FeatureUnsupported');
}

describe('Avro → Iceberg types: primitives and logical types', () => {
  const rows: [unknown, string][] = [
    ['int', 'int'],
    ['long', 'long'],
    ['float', 'float'],
    ['double', 'double'],
    ['boolean', 'boolean'],
    ['string', 'string'],
    [{ type: 'enum', name: 'Status', symbols: ['A', 'B'] }, 'string'],
    ['bytes', 'binary'],
    [{ type: 'fixed', name: 'F8', size: 8 }, 'fixed[8]'],
    [{ type: 'bytes', logicalType: 'decimal', precision: 10, scale: 2 }, 'decimal(10,2)'],
    [{ type: 'bytes', logicalType: 'decimal', precision: 38, scale: 0 }, 'decimal(38,0)'],
    [{ type: 'bytes', logicalType: 'decimal', precision: 5 }, 'decimal(5,0)'],
    [
      { type: 'fixed', name: 'D', size: 16, logicalType: 'decimal', precision: 38, scale: 9 },
      'decimal(38,9)',
    ],
    [{ type: 'int', logicalType: 'date' }, 'date'],
    [{ type: 'int', logicalType: 'time-millis' }, 'time'],
    [{ type: 'long', logicalType: 'time-micros' }, 'time'],
    [{ type: 'long', logicalType: 'timestamp-millis' }, 'timestamptz'],
    [{ type: 'long', logicalType: 'timestamp-micros' }, 'timestamptz'],
    [{ type: 'long', logicalType: 'local-timestamp-millis' }, 'timestamp'],
    [{ type: 'long', logicalType: 'local-timestamp-micros' }, 'timestamp'],
    [{ type: 'long', logicalType: 'timestamp-nanos' }, 'timestamptz_ns'],
    [{ type: 'long', logicalType: 'local-timestamp-nanos' }, 'timestamp_ns'],
    [{ type: 'fixed', name: 'U', size: 16, logicalType: 'uuid' }, 'uuid'],
    // Documented choice: uuid on string stays string.
    [{ type: 'string', logicalType: 'uuid' }, 'string'],
    // Primitive written as an object.
    [{ type: 'string' }, 'string'],
  ];
  for (const [avro, iceberg] of rows) {
    it(`${JSON.stringify(avro)} → ${iceberg}, required`, () => {
      expect(mapped(avro)).toEqual({ type: iceberg, required: true });
    });
  }

  it('ignores invalid or unknown logical types (Avro spec), using the underlying type', () => {
    expect(mapped({ type: 'bytes', logicalType: 'decimal', precision: 2, scale: 3 }).type).toBe('binary');
    expect(mapped({ type: 'bytes', logicalType: 'decimal' }).type).toBe('binary');
    expect(mapped({ type: 'fixed', name: 'D2', size: 2, logicalType: 'decimal', precision: 5 }).type).toBe(
      'fixed[2]',
    );
    expect(mapped({ type: 'fixed', name: 'D2', size: 2, logicalType: 'decimal', precision: 4 }).type).toBe(
      'decimal(4,0)',
    );
    expect(mapped({ type: 'long', logicalType: 'date' }).type).toBe('long');
    expect(mapped({ type: 'int', logicalType: 'timestamp-millis' }).type).toBe('int');
    expect(mapped({ type: 'fixed', name: 'U8', size: 8, logicalType: 'uuid' }).type).toBe('fixed[8]');
    expect(mapped({ type: 'fixed', name: 'Dur', size: 12, logicalType: 'duration' }).type).toBe('fixed[12]');
    expect(mapped({ type: 'string', logicalType: 'my-own' }).type).toBe('string');
  });

  it('rejects a decimal Iceberg cannot hold (precision > 38), naming the field', () => {
    const e = unsupported(() => mapped({ type: 'bytes', logicalType: 'decimal', precision: 39, scale: 2 }));
    expect(e.message).toContain("field 'f'");
    expect(e.message).toContain('decimal(39,2)');
  });
});

describe('Avro → Iceberg types: unions', () => {
  it('["null", T] and [T, "null"] are optional T', () => {
    expect(mapped(['null', 'string'])).toEqual({ type: 'string', required: false });
    expect(mapped(['string', 'null'])).toEqual({ type: 'string', required: false });
    expect(mapped(['null', { type: 'long', logicalType: 'timestamp-millis' }])).toEqual({
      type: 'timestamptz',
      required: false,
    });
    expect(mapped([{ type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 }, 'null'])).toEqual({
      type: 'decimal(9,2)',
      required: false,
    });
  });

  it('a single-branch union is its branch', () => {
    expect(mapped(['int'])).toEqual({ type: 'int', required: true });
  });

  it('other unions are FeatureUnsupported naming the field', () => {
    for (const u of [
      ['string', 'long'],
      ['null', 'string', 'long'],
      ['long', 'null', { type: 'record', name: 'X', fields: [{ name: 'a', type: 'int' }] }],
    ]) {
      const e = unsupported(() => avroToIcebergStruct(rec([{ name: 'Payload', type: u }])));
      expect(e.message).toContain("field 'payload'");
      expect(e.message).toContain('not supported');
      expect(e.context).toMatchObject({ field: 'payload', reason: 'union' });
    }
  });

  it('names the nested path of an unsupported union', () => {
    const schema = rec([
      {
        name: 'outer',
        type: {
          type: 'record',
          name: 'Outer',
          fields: [{ name: 'xs', type: { type: 'array', items: ['int', 'string'] } }],
        },
      },
    ]);
    expect(unsupported(() => avroToIcebergStruct(schema)).message).toContain("field 'outer.xs.element'");
  });

  it('null alone has no Iceberg type', () => {
    expect(unsupported(() => mapped('null')).context.reason).toBe('null-type');
    expect(unsupported(() => mapped(['null'])).context.reason).toBe('null-type');
  });
});

describe('Avro → Iceberg types: records, arrays, maps', () => {
  it('maps nested records, arrays and maps with fresh placeholder ids (struct fields first)', () => {
    const schema = rec(
      [
        { name: 'id', type: 'long' },
        {
          name: 'customer',
          type: {
            type: 'record',
            name: 'Customer',
            fields: [
              { name: 'name', type: 'string' },
              { name: 'tags', type: { type: 'array', items: 'string' } },
            ],
          },
        },
        {
          name: 'items',
          type: {
            type: 'array',
            items: [
              'null',
              {
                type: 'record',
                name: 'Item',
                fields: [
                  { name: 'sku', type: 'string' },
                  { name: 'qty', type: 'int' },
                ],
              },
            ],
          },
        },
        { name: 'attrs', type: { type: 'map', values: ['null', 'double'] } },
        { name: 'counts', type: ['null', { type: 'map', values: 'long' }] },
      ],
      'Order',
    );
    expect(typeToJson(avroToIcebergStruct(schema))).toEqual({
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        {
          id: 2,
          name: 'customer',
          required: true,
          type: {
            type: 'struct',
            fields: [
              { id: 6, name: 'name', required: true, type: 'string' },
              {
                id: 7,
                name: 'tags',
                required: true,
                type: { type: 'list', 'element-id': 8, element: 'string', 'element-required': true },
              },
            ],
          },
        },
        {
          id: 3,
          name: 'items',
          required: true,
          type: {
            type: 'list',
            'element-id': 9,
            'element-required': false,
            element: {
              type: 'struct',
              fields: [
                { id: 10, name: 'sku', required: true, type: 'string' },
                { id: 11, name: 'qty', required: true, type: 'int' },
              ],
            },
          },
        },
        {
          id: 4,
          name: 'attrs',
          required: true,
          type: {
            type: 'map',
            'key-id': 12,
            key: 'string',
            'value-id': 13,
            value: 'double',
            'value-required': false,
          },
        },
        {
          id: 5,
          name: 'counts',
          required: false,
          type: {
            type: 'map',
            'key-id': 14,
            key: 'string',
            'value-id': 15,
            value: 'long',
            'value-required': true,
          },
        },
      ],
    });
  });

  it('resolves named types by short and full name, across namespaces', () => {
    const schema = {
      type: 'record',
      name: 'Person',
      namespace: 'com.example',
      fields: [
        {
          name: 'home',
          type: { type: 'record', name: 'Address', fields: [{ name: 'city', type: 'string' }] },
        },
        { name: 'work', type: ['null', 'Address'] },
        { name: 'billing', type: 'com.example.Address' },
        { name: 'kind', type: { type: 'enum', name: 'Kind', namespace: 'other.ns', symbols: ['A'] } },
        { name: 'kind2', type: 'other.ns.Kind' },
      ],
    };
    const s = avroToIcebergStruct(schema);
    expect(s.fields.map((f) => `${f.name}:${typeToString(f.type)}:${f.required}`)).toEqual([
      'home:struct<city: string>:true',
      'work:struct<city: string>:false',
      'billing:struct<city: string>:true',
      'kind:string:true',
      'kind2:string:true',
    ]);
    expect(compileAvroSchema(schema)).toMatchObject({ fullName: 'com.example.Person', name: 'Person' });
  });

  it('maps a referenced record whose definition holds inline named types, and rejects redefinitions', () => {
    const address = {
      type: 'record',
      name: 'Address',
      fields: [
        { name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['HOME', 'WORK'] } },
        { name: 'zip', type: { type: 'fixed', name: 'Zip', size: 5 } },
      ],
    };
    const s = avroToIcebergStruct(
      rec([
        { name: 'a', type: address },
        { name: 'b', type: 'Address' },
        { name: 'c', type: { type: 'array', items: 'Address' } },
        { name: 'k', type: 'Kind' },
      ]),
    );
    expect(typeToString(s)).toBe(
      'struct<a: struct<kind: string, zip: fixed[5]>, b: struct<kind: string, zip: fixed[5]>, ' +
        'c: list<struct<kind: string, zip: fixed[5]>>, k: string>',
    );
    expect(() =>
      avroToIcebergStruct(
        rec([
          { name: 'a', type: { type: 'fixed', name: 'Twice', size: 1 } },
          { name: 'b', type: { type: 'fixed', name: 'Twice', size: 2 } },
        ]),
      ),
    ).toThrow(/type 'Twice' is defined twice/);
  });

  it('rejects recursive types with the field path', () => {
    const list = rec(
      [
        { name: 'value', type: 'int' },
        { name: 'next', type: ['null', 'Node'] },
      ],
      'Node',
    );
    const e = unsupported(() => avroToIcebergStruct(list));
    expect(e.message).toContain("field 'next'");
    expect(e.message).toContain("recursive type 'Node'");
    const indirect = rec(
      [
        {
          name: 'child',
          type: {
            type: 'record',
            name: 'B',
            fields: [{ name: 'parents', type: { type: 'array', items: 'A' } }],
          },
        },
      ],
      'A',
    );
    expect(unsupported(() => avroToIcebergStruct(indirect)).message).toContain(
      "field 'child.parents.element'",
    );
  });

  it('rejects an unknown type name and a nested record with no fields', () => {
    expect(() => mapped('Missing')).toThrow(/unknown type 'Missing'/);
    expect(unsupported(() => mapped({ type: 'record', name: 'E', fields: [] })).context.reason).toBe(
      'empty-record',
    );
  });

  it('rejects a top level that is not a record', () => {
    for (const s of ['string', ['null', 'string'], { type: 'array', items: 'int' }]) {
      expect(unsupported(() => compileAvroSchema(s)).context.reason).toBe('not-a-record');
    }
  });

  it('keeps field docs', () => {
    const s = avroToIcebergStruct(rec([{ name: 'a', type: 'int', doc: 'the a' }]));
    expect(s.fields[0]!.doc).toBe('the a');
  });
});

describe('Avro → Iceberg types: column names', () => {
  it('lower-cases and sanitises field names like JSON keys', () => {
    const s = avroToIcebergStruct(
      rec([
        { name: 'eventTime', type: 'long' },
        { name: 'Amount_EUR', type: 'double' },
        { name: '_id', type: 'string' },
        {
          name: 'Meta',
          type: { type: 'record', name: 'M', fields: [{ name: 'schemaVersion', type: 'string' }] },
        },
      ]),
    );
    expect(typeToString(s)).toBe(
      'struct<eventtime: long, amount_eur: double, _id: string, meta: struct<schemaversion: string>>',
    );
  });

  it('reports two fields that map to one column', () => {
    const e = unsupported(() =>
      avroToIcebergStruct(
        rec([
          { name: 'userId', type: 'string' },
          { name: 'userid', type: 'string' },
        ]),
      ),
    );
    expect(e.message).toContain("fields 'userId' and 'userid' both map to column 'userid'");
    expect(e.context.reason).toBe('name-collision');
  });

  it('rejects a name too long for a column', () => {
    const e = unsupported(() => avroToIcebergStruct(rec([{ name: 'a'.repeat(256), type: 'int' }])));
    expect(e.context.reason).toBe('illegal-name');
  });
});

describe('Avro datum → row', () => {
  it('converts the sample OrderEvent v2 (timestamp-micros, date, double, null union)', () => {
    const row = roundTrip(orderV2, orderDatumV2);
    expect(row).toEqual({
      ...orderDatumV2,
      event_time: BigInt(EVENT_TIME_MICROS),
      event_date: EVENT_DATE_DAYS,
      payment_method: 'card',
      promo_code: null,
    });
    expect(Object.keys(row)).toEqual(orderV2.fields.map((f) => f.name));
    expect(typeToString(avroToIcebergStruct(orderV1))).toBe(
      'struct<event_id: string, event_time: timestamptz, event_type: string, region: string, event_date: date, ' +
        'order_id: string, customer_id: string, amount: double, currency: string, status: string>',
    );
  });

  it('converts the sample ClickEvent (optional int and long)', () => {
    const row = roundTrip(clickEvent, clickDatum);
    expect(row).toMatchObject({ referrer: null, scroll_depth: 42, time_on_page_seconds: 17n });
    const s = avroToIcebergStruct(clickEvent);
    expect(s.fields.filter((f) => !f.required).map((f) => f.name)).toEqual([
      'referrer',
      'scroll_depth',
      'time_on_page_seconds',
    ]);
  });

  it('converts every logical type to the values.ts representation', () => {
    const U = 'f79c3e09-677c-4bbd-a479-3f349cb785e7';
    const schema = rec([
      { name: 'i', type: 'int' },
      { name: 'l', type: 'long' },
      { name: 'big', type: 'long' },
      { name: 'fl', type: 'float' },
      { name: 'b', type: 'boolean' },
      { name: 'e', type: { type: 'enum', name: 'Status', symbols: ['NEW', 'DONE'] } },
      { name: 'by', type: 'bytes' },
      { name: 'fx', type: { type: 'fixed', name: 'F3', size: 3 } },
      { name: 'dec', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } },
      {
        name: 'decf',
        type: { type: 'fixed', name: 'D8', size: 8, logicalType: 'decimal', precision: 18, scale: 4 },
      },
      { name: 'd', type: { type: 'int', logicalType: 'date' } },
      { name: 'tm', type: { type: 'int', logicalType: 'time-millis' } },
      { name: 'tu', type: { type: 'long', logicalType: 'time-micros' } },
      { name: 'tsm', type: { type: 'long', logicalType: 'timestamp-millis' } },
      { name: 'tsu', type: { type: 'long', logicalType: 'timestamp-micros' } },
      { name: 'ltm', type: { type: 'long', logicalType: 'local-timestamp-millis' } },
      { name: 'uf', type: { type: 'fixed', name: 'U16', size: 16, logicalType: 'uuid' } },
      { name: 'us', type: { type: 'string', logicalType: 'uuid' } },
    ]);
    const uuidBytes = Buffer.from(U.replace(/-/g, ''), 'hex');
    // Plain avsc cannot write `big` (> 2^53) as a number; this one is encoded with Floe's codec.
    const datum = {
      i: -7,
      l: 5n,
      big: 2n ** 62n + 1n,
      fl: 1.5,
      b: true,
      e: 'DONE',
      by: Buffer.from([0, 255]),
      fx: Buffer.from([1, 2, 3]),
      dec: Buffer.from([0xcf, 0xc7]), // -12345 → -123.45
      decf: Buffer.from([0, 0, 0, 0, 0, 0, 0x30, 0x39]), // 12345 → 1.2345
      d: -1,
      tm: 3_723_004, // 01:02:03.004
      tu: 3_723_004_005n,
      tsm: 1_714_566_896_789n,
      tsu: 1_714_566_896_789_123n,
      ltm: -1n,
      uf: uuidBytes,
      us: U.toUpperCase(),
    };
    const codec = avroDatumType(schema);
    const bytes = codec.encode(datum);
    const row = avroDatumToRow(schema, codec.decode(bytes, 0).value);
    expect(row).toEqual({
      i: -7,
      l: 5n,
      big: 2n ** 62n + 1n,
      fl: 1.5,
      b: true,
      e: 'DONE',
      by: new Uint8Array([0, 255]),
      fx: new Uint8Array([1, 2, 3]),
      dec: -12345n,
      decf: 12345n,
      d: -1,
      tm: 3_723_004_000n,
      tu: 3_723_004_005n,
      tsm: 1_714_566_896_789_000n,
      tsu: 1_714_566_896_789_123n,
      ltm: -1000n,
      uf: U,
      us: U.toUpperCase(),
    });
    // Bytes are standalone copies, not views into the decoded record.
    expect(row.by).toBeInstanceOf(Uint8Array);
    expect(Buffer.isBuffer(row.by)).toBe(false);
    expect((row.by as Uint8Array).byteOffset).toBe(0);
  });

  it('converts nested records, arrays (with null elements), maps and null unions', () => {
    const schema = rec([
      {
        name: 'Customer',
        type: [
          'null',
          {
            type: 'record',
            name: 'Customer',
            fields: [
              { name: 'Name', type: 'string' },
              { name: 'since', type: { type: 'long', logicalType: 'timestamp-millis' } },
            ],
          },
        ],
      },
      { name: 'tags', type: { type: 'array', items: ['null', 'string'] } },
      {
        name: 'lines',
        type: {
          type: 'array',
          items: {
            type: 'record',
            name: 'Line',
            fields: [
              { name: 'sku', type: 'string' },
              { name: 'price', type: { type: 'bytes', logicalType: 'decimal', precision: 6, scale: 2 } },
            ],
          },
        },
      },
      { name: 'attrs', type: { type: 'map', values: ['null', 'int'] } },
      { name: 'stamps', type: { type: 'map', values: { type: 'long', logicalType: 'timestamp-millis' } } },
    ]);
    const row = roundTrip(schema, {
      Customer: { Name: 'Ann', since: 1000 },
      tags: ['a', null],
      lines: [{ sku: 'X', price: Buffer.from([0x01, 0x00]) }],
      attrs: { a: 1, b: null },
      stamps: { t: 2 },
    });
    expect(row).toEqual({
      customer: { name: 'Ann', since: 1_000_000n },
      tags: ['a', null],
      lines: [{ sku: 'X', price: 256n }],
      attrs: new Map<string, number | null>([
        ['a', 1],
        ['b', null],
      ]),
      stamps: new Map([['t', 2000n]]),
    });
    const empty = roundTrip(schema, { Customer: null, tags: [], lines: [], attrs: {}, stamps: {} });
    expect(empty).toEqual({ customer: null, tags: [], lines: [], attrs: new Map(), stamps: new Map() });
  });

  it('fails a datum that does not fit, naming the field', () => {
    const schema = rec([
      { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 3, scale: 2 } },
      { name: 'ts', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }] },
      { name: 'name', type: 'string' },
    ]);
    const toRow = compileAvroRowConverter(schema);
    const ok = { amount: Buffer.from([0x03, 0xe7]), ts: null, name: 'n' }; // 999 → 9.99
    expect(toRow(ok)).toEqual({ amount: 999n, ts: null, name: 'n' });
    const fails = (datum: unknown, re: RegExp) => {
      try {
        toRow(datum);
      } catch (e) {
        expect((e as FloeError).kind).toBe(ErrorKind.DataInvalid);
        expect((e as Error).message).toMatch(re);
        return;
      }
      throw new Error('expected a failure');
    };
    fails({ ...ok, amount: Buffer.from([0x03, 0xe8]) }, /field 'amount'.*1000 needs more than 3 digits/);
    fails({ ...ok, ts: 2n ** 62n }, /field 'ts'.*out of range/);
    fails({ ...ok, name: null }, /field 'name' expected a value, got null/);
    fails({ ...ok, name: 5 }, /field 'name' expected a string, got number/);
    fails('x', /the record expected a R record/);
  });

  it('caches the compiled converter per schema object', () => {
    const schema = rec([{ name: 'a', type: 'int' }]);
    expect(avroDatumToRow(schema, { a: 1 })).toEqual({ a: 1 });
    expect(avroDatumToRow(schema, { a: 2 })).toEqual({ a: 2 });
  });

  it('unscaledOf reads big-endian two’s complement', () => {
    expect(unscaledOf(new Uint8Array([]))).toBe(0n);
    expect(unscaledOf(new Uint8Array([0xff]))).toBe(-1n);
    expect(unscaledOf(new Uint8Array([0x80, 0]))).toBe(-32768n);
    expect(unscaledOf(new Uint8Array([0x7f, 0xff]))).toBe(32767n);
  });

  it('struct of the sample schemas is stable', () => {
    const s: StructType = avroToIcebergStruct(orderV2);
    expect(s.fields.map((f) => f.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });
});
