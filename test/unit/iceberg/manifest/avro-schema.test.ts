import { describe, expect, it } from 'vitest';
import { avroDatumType } from '../../../../lambdas/src/avro/index.ts';
import { isFloeError } from '../../../../lambdas/src/errors.ts';
import {
  avroFieldName,
  avroToIcebergType,
  bigintToTwosComplement,
  bytesToUuid,
  decimalRequiredBytes,
  fromAvroDatum,
  icebergToAvroSchema,
  normalizeAvroFieldNames,
  toAvroDatum,
  twosComplementToBigint,
  uuidToBytes,
} from '../../../../lambdas/src/iceberg/avro-schema.ts';
import { decimal, field, fixed, list, map, struct, T } from '../../../../lambdas/src/iceberg/types.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('avroFieldName (Java AvroSchemaUtil.sanitize)', () => {
  it.each([
    ['id', 'id'],
    ['_x', '_x'],
    ['Breed Name', 'Breed_x20Name'], // as in icebird-java-bunnies' Parquet column names
    ['1st', '_1st'],
    ['a-b.c', 'a_x2Db_x2Ec'],
    ['$v', '_x24v'],
    ['caf\u00e9', 'caf_xE9'], // Java keeps non-ASCII letters; we escape them so strict readers accept the schema
  ])('%s → %s', (name, expected) => {
    expect(avroFieldName(name)).toBe(expected);
  });
});

describe('decimal and uuid byte forms', () => {
  it('minBytes(P) matches the spec table (P 1..38)', () => {
    // Spec Appendix: required bytes for precision, e.g. 9 → 4, 18 → 8, 38 → 16.
    expect([1, 2, 3, 9, 10, 18, 19, 38].map(decimalRequiredBytes)).toEqual([1, 1, 2, 4, 5, 8, 9, 16]);
  });

  it('encodes unscaled values as big-endian two’s complement', () => {
    expect(hex(bigintToTwosComplement(1420n, 2))).toBe('058c'); // 14.20 → 05 8C (spec Appendix D)
    expect(hex(bigintToTwosComplement(1420n, 4))).toBe('0000058c');
    expect(hex(bigintToTwosComplement(-1n, 4))).toBe('ffffffff');
    expect(hex(bigintToTwosComplement(-1420n, 4))).toBe('fffffa74');
    expect(twosComplementToBigint(Buffer.from('fffffa74', 'hex'))).toBe(-1420n);
    expect(twosComplementToBigint(Buffer.from('80', 'hex'))).toBe(-128n);
    expect(() => bigintToTwosComplement(128n, 1)).toThrow(/does not fit/);
  });

  it('maps uuid strings to 16 big-endian bytes and back (lower case)', () => {
    const u = 'F79C3E09-677C-4BBD-A479-3F349CB785E7';
    expect(hex(uuidToBytes(u))).toBe('f79c3e09677c4bbda4793f349cb785e7');
    expect(bytesToUuid(uuidToBytes(u))).toBe(u.toLowerCase());
    expect(() => uuidToBytes('not-a-uuid')).toThrow(/invalid uuid/);
  });
});

const RICH = struct([
  field(1, 'id', T.long, true),
  field(2, 'Breed Name', T.string),
  field(3, 'price', decimal(9, 2)),
  field(4, 'other_price', decimal(9, 2), true),
  field(5, 'u', T.uuid),
  field(6, 'day', T.date),
  field(7, 'ts', T.timestamp),
  field(8, 'tstz', T.timestamptz, false, 'event time'),
  field(9, 'ns', T.timestamptz_ns),
  field(10, 't', T.time),
  field(11, 'f', fixed(3)),
  field(12, 'bin', T.binary),
  field(13, 'tags', list(14, T.string, false)),
  field(15, 'attrs', map(16, T.string, 17, T.long, true)),
  field(18, 'by_id', map(19, T.int, 20, T.double, false)),
  field(21, 'loc', struct([field(22, 'lat', T.double, true), field(23, 'lon', T.float)])),
  field(24, 'points', list(25, struct([field(26, 'x', T.int, true)]), true)),
  field(27, 'ok', T.boolean, true),
]);

describe('icebergToAvroSchema', () => {
  const avro = icebergToAvroSchema(RICH, 'table');
  const fields = avro.fields as Record<string, unknown>[];
  const byId = (id: number) => fields.find((f) => f['field-id'] === id)!;

  it('follows Appendix A: field ids, option unions with default null, docs, sanitised names', () => {
    expect(avro.type).toBe('record');
    expect(avro.name).toBe('table');
    expect(byId(1)).toEqual({ name: 'id', type: 'long', 'field-id': 1 });
    expect(byId(2)).toEqual({
      name: 'Breed_x20Name',
      type: ['null', 'string'],
      default: null,
      'iceberg-field-name': 'Breed Name',
      'field-id': 2,
    });
    // Java's key order: name, type, doc, default, props.
    expect(Object.keys(byId(8))).toEqual(['name', 'type', 'doc', 'default', 'field-id']);
  });

  it('maps logical types as the facts table says, naming and reusing fixed types', () => {
    expect(byId(3).type).toEqual([
      'null',
      { type: 'fixed', name: 'decimal_9_2', size: 4, logicalType: 'decimal', precision: 9, scale: 2 },
    ]);
    expect(byId(4).type).toBe('decimal_9_2'); // second use is a name reference (Avro forbids redefinition)
    expect(byId(5).type).toEqual([
      'null',
      { type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' },
    ]);
    expect(byId(6).type).toEqual(['null', { type: 'int', logicalType: 'date' }]);
    expect(byId(7).type).toEqual([
      'null',
      { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false },
    ]);
    expect(byId(8).type).toEqual([
      'null',
      { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true },
    ]);
    expect(byId(9).type).toEqual([
      'null',
      { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': true },
    ]);
    expect(byId(10).type).toEqual(['null', { type: 'long', logicalType: 'time-micros' }]);
    expect(byId(11).type).toEqual(['null', { type: 'fixed', name: 'fixed_3', size: 3 }]);
    expect(byId(12).type).toEqual(['null', 'bytes']);
  });

  it('writes lists with element-id, string maps as Avro maps, other maps as k/v arrays, structs as r<id>', () => {
    expect(byId(13).type).toEqual(['null', { type: 'array', items: ['null', 'string'], 'element-id': 14 }]);
    expect(byId(15).type).toEqual(['null', { type: 'map', values: 'long', 'key-id': 16, 'value-id': 17 }]);
    expect(byId(18).type).toEqual([
      'null',
      {
        type: 'array',
        items: {
          type: 'record',
          name: 'k19_v20',
          fields: [
            { name: 'key', type: 'int', 'field-id': 19 },
            { name: 'value', type: ['null', 'double'], default: null, 'field-id': 20 },
          ],
        },
        logicalType: 'map',
      },
    ]);
    expect((byId(21).type as unknown[])[1]).toMatchObject({ type: 'record', name: 'r21' });
    expect((byId(24).type as unknown[])[1]).toMatchObject({
      type: 'array',
      items: { name: 'r25' },
      'element-id': 25,
    });
  });

  it('is accepted by avsc and converts back to the same Iceberg type', () => {
    expect(() => avroDatumType(avro)).not.toThrow();
    expect(avroToIcebergType(avro)).toEqual(RICH);
  });
});

describe('toAvroDatum / fromAvroDatum', () => {
  const row = {
    id: 2n ** 60n + 1n,
    'Breed Name': 'Holland Lop',
    price: -99999999n,
    other_price: 1420n,
    u: 'f79c3e09-677c-4bbd-a479-3f349cb785e7',
    day: 19723,
    ts: 1_700_000_000_123_456n,
    tstz: -1n,
    ns: 2n ** 62n,
    t: 86_399_999_999n,
    f: Uint8Array.of(1, 2, 3),
    bin: new Uint8Array(0),
    tags: ['a', null, 'c'],
    attrs: new Map([['k', 9007199254740993n]]),
    by_id: new Map<number, number | null>([
      [1, 1.5],
      [2, null],
    ]),
    loc: { lat: 1.25, lon: null },
    points: [{ x: 1 }, { x: -2 }],
    ok: true,
  };

  it('round-trips every type through avsc bytes', () => {
    const schema = icebergToAvroSchema(RICH, 'table');
    const type = avroDatumType(schema);
    const bytes = type.encode(toAvroDatum(RICH, row));
    const back = fromAvroDatum(RICH, type.decode(bytes, 0).value);
    expect(back).toEqual(row);
  });

  it('writes decimals as fixed two’s complement bytes and uuids as 16 bytes', () => {
    const d = toAvroDatum(RICH, row) as Record<string, unknown>;
    expect(hex(d.other_price as Uint8Array)).toBe('0000058c');
    expect(hex(d.u as Uint8Array)).toBe('f79c3e09677c4bbda4793f349cb785e7');
    expect(d.Breed_x20Name).toBe('Holland Lop');
    expect(d.by_id).toEqual([
      { key: 1, value: 1.5 },
      { key: 2, value: null },
    ]);
  });

  it('rejects values that do not fit the type', () => {
    const bad = (v: object) => {
      try {
        toAvroDatum(RICH, { ...row, ...v });
        return false;
      } catch (e) {
        return isFloeError(e, 'DataInvalid');
      }
    };
    expect(bad({ id: null })).toBe(true); // required
    expect(bad({ price: 1_000_000_000n })).toBe(true); // 10 digits > precision 9
    expect(bad({ f: Uint8Array.of(1) })).toBe(true); // fixed[3]
    expect(bad({ day: 1.5 })).toBe(true);
    expect(bad({ points: [null] })).toBe(true); // required element
  });
});

describe('reading foreign writer schemas', () => {
  it('normalizeAvroFieldNames renames fields avsc rejects and keeps the original name', () => {
    const w = {
      type: 'record',
      name: 'r',
      fields: [
        { name: 'caf\u00e9', type: 'int', 'field-id': 1 },
        { name: 'x_y', type: 'int', 'iceberg-field-name': 'x y', 'field-id': 2 },
      ],
    };
    const n = normalizeAvroFieldNames(w);
    expect(n.fields.map((f) => f.name)).toEqual(['caf_xE9', 'x_x20y']);
    expect(avroToIcebergType(n)).toEqual(
      struct([field(1, 'caf\u00e9', T.int, true), field(2, 'x y', T.int, true)]),
    );
    const type = avroDatumType(n); // the original would make avsc throw on 'café'
    expect(() => avroDatumType(w)).toThrow();
    const decoded = fromAvroDatum(avroToIcebergType(n), type.decode(Uint8Array.of(0x02, 0x04), 0).value);
    expect(decoded).toEqual({ 'caf\u00e9': 1, 'x y': 2 });
  });

  it('maps legacy / missing attributes the way Java reads them', () => {
    expect(avroToIcebergType({ type: 'long', logicalType: 'timestamp-micros' })).toEqual(T.timestamptz);
    expect(avroToIcebergType({ type: 'long', logicalType: 'local-timestamp-micros' })).toEqual(T.timestamp);
    expect(avroToIcebergType({ type: 'string', logicalType: 'uuid' })).toEqual(T.uuid);
    expect(avroToIcebergType({ type: 'bytes', logicalType: 'decimal', precision: 5, scale: 1 })).toEqual(
      decimal(5, 1),
    );
    expect(avroToIcebergType({ type: 'record', name: 'r', fields: [{ name: 'a', type: 'int' }] })).toEqual(
      struct([field(-1, 'a', T.int, true)]),
    );
  });
});
