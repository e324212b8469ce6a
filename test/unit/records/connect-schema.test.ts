/**
 * Kafka Connect schemas (records/connect-schema.ts): each logical type Debezium writes becomes its
 * Iceberg column type, its value rewritten into the exact form that type reads. The expected
 * values are computed here independently (Date for calendar fields, BigInt for decimals).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ConnectSchema,
  ConnectValueError,
  typedImage,
} from '../../../lambdas/src/records/connect-schema.ts';
import { type JsonObject, parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';
import { decimalBase64, decimalText } from '../../fuzz/debezium-typed.ts';

const struct = (...fields: ConnectSchema[]): ConnectSchema => ({ type: 'struct', fields });

describe('typedImage', () => {
  it('types every logical type of the Debezium documentation', () => {
    const schema = struct(
      { type: 'int16', optional: false, field: 'Id' },
      { type: 'int64', field: 'big' },
      { type: 'float32', field: 'f' },
      { type: 'float64', field: 'd' },
      { type: 'boolean', field: 'b' },
      { type: 'string', field: 's' },
      { type: 'bytes', field: 'raw' },
      {
        type: 'bytes',
        name: 'org.apache.kafka.connect.data.Decimal',
        parameters: { scale: '2', 'connect.decimal.precision': '10' },
        field: 'price',
      },
      { type: 'int32', name: 'io.debezium.time.Date', field: 'day' },
      { type: 'int32', name: 'org.apache.kafka.connect.data.Date', field: 'day2' },
      { type: 'int64', name: 'io.debezium.time.Timestamp', field: 'ms' },
      { type: 'int64', name: 'io.debezium.time.MicroTimestamp', field: 'us' },
      { type: 'int64', name: 'io.debezium.time.NanoTimestamp', field: 'ns' },
      { type: 'string', name: 'io.debezium.time.ZonedTimestamp', field: 'zoned' },
      { type: 'int64', name: 'io.debezium.time.MicroTime', field: 't' },
      { type: 'int32', name: 'io.debezium.time.Time', field: 'tms' },
      {
        type: 'struct',
        name: 'io.debezium.data.VariableScaleDecimal',
        fields: [
          { type: 'int32', field: 'scale' },
          { type: 'bytes', field: 'value' },
        ],
        field: 'vsd',
      },
      {
        type: 'struct',
        field: 'addr',
        fields: [{ type: 'int32', name: 'io.debezium.time.Date', field: 'since' }],
      },
      { type: 'array', items: { type: 'int64', name: 'io.debezium.time.MicroTimestamp' }, field: 'seen' },
      {
        type: 'bytes',
        name: 'org.apache.kafka.connect.data.Decimal',
        parameters: { scale: '0' },
        field: 'nothing',
      },
    );
    const image = parseJsonRecord(
      JSON.stringify({
        Id: 7,
        big: 1,
        f: 1.5,
        d: 2,
        b: true,
        s: 'x',
        raw: 'AAE=',
        price: 'MDk=', // 12345 → 123.45
        day: 19_723, // 2024-01-01
        day2: -1,
        ms: 1_704_067_200_123,
        us: 1_704_067_200_123_456,
        ns: '@NS@',
        zoned: '2024-01-01T00:00:00.5Z',
        t: 3_723_000_004, // 01:02:03.000004
        tms: 1_000,
        vsd: { scale: 3, value: '/w==' }, // -1 at scale 3
        addr: { since: 0 },
        seen: [0, null],
        nothing: null,
        extra: 'kept',
      }).replace('"@NS@"', '1704067200123456789'),
    ) as JsonObject;
    const typed = typedImage(schema, image);
    expect(typed.row).toEqual({
      // Integers stay as the JSON reader gives them (exact bigints).
      Id: 7n,
      big: 1n,
      f: 1.5,
      d: 2n,
      b: true,
      s: 'x',
      raw: 'AAE=',
      price: '123.45',
      day: '2024-01-01',
      day2: '1969-12-31',
      ms: '2024-01-01T00:00:00.123000',
      us: '2024-01-01T00:00:00.123456',
      ns: '2024-01-01T00:00:00.123456',
      zoned: '2024-01-01T00:00:00.5Z',
      t: '01:02:03.000004',
      tms: '00:00:01.000000',
      vsd: '-0.001',
      addr: { since: '1970-01-01' },
      seen: ['1970-01-01T00:00:00.000000', null],
      nothing: null,
      extra: 'kept',
    });
    expect(typed.hints).toEqual({
      id: 'int',
      big: 'long',
      f: 'float',
      d: 'double',
      b: 'boolean',
      s: 'string',
      raw: 'binary',
      price: 'decimal(10,2)',
      day: 'date',
      day2: 'date',
      ms: 'timestamp',
      us: 'timestamp',
      ns: 'timestamp',
      zoned: 'timestamptz',
      t: 'time',
      tms: 'time',
      vsd: 'string',
      'addr.since': 'date',
      'seen.element': 'timestamp',
      nothing: 'decimal(38,0)',
    });
  });

  it("notes each struct field's optional flag by column path, but not inside list elements", () => {
    const schema = struct(
      { type: 'int32', optional: false, field: 'Id' },
      { type: 'string', optional: true, field: 'name' },
      { type: 'string', field: 'note' }, // Connect's default: optional is false
      {
        type: 'struct',
        optional: true,
        field: 'addr',
        fields: [
          { type: 'string', optional: false, field: 'city' },
          { type: 'string', optional: true, field: 'zip' },
        ],
      },
      {
        type: 'array',
        optional: false,
        field: 'items',
        items: { type: 'struct', fields: [{ type: 'int64', optional: false, field: 'sku' }] },
      },
    );
    // Fields absent from the value are noted from the schema all the same.
    const typed = typedImage(schema, { Id: 1n, items: [{ sku: 2n }] });
    expect({ ...typed.required }).toEqual({
      id: true,
      name: false,
      note: true,
      addr: false,
      'addr.city': true,
      'addr.zip': false,
      items: true,
    });
  });

  it('a Decimal of any unscaled value and scale reads exactly', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }),
        fc.integer({ min: 0, max: 38 }),
        (n, scale) => {
          const schema = struct({
            type: 'bytes',
            name: 'org.apache.kafka.connect.data.Decimal',
            parameters: { scale: String(scale), 'connect.decimal.precision': '38' },
            field: 'x',
          });
          const typed = typedImage(schema, { x: decimalBase64(n) });
          expect(typed.row.x).toBe(decimalText(n, scale));
          expect(typed.hints.x).toBe(`decimal(38,${scale})`);
        },
      ),
    );
  });

  it('micro-timestamps read as the same instant (checked against Date)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 16n), max: 10n ** 16n }), (us) => {
        const schema = struct({ type: 'int64', name: 'io.debezium.time.MicroTimestamp', field: 'x' });
        const out = typedImage(schema, { x: us }).row.x as string;
        const ms = us / 1000n - (us % 1000n < 0n ? 1n : 0n);
        const micros = ((us % 1000n) + 1000n) % 1000n;
        const iso = new Date(Number(ms)).toISOString(); // yyyy-MM-ddTHH:mm:ss.SSSZ
        expect(out).toBe(`${iso.slice(0, -1)}${String(micros).padStart(3, '0')}`);
      }),
    );
  });

  it('a value its schema cannot read names the field', () => {
    const dec = struct({
      type: 'bytes',
      name: 'org.apache.kafka.connect.data.Decimal',
      parameters: { scale: '2' },
      field: 'price',
    });
    expect(() => typedImage(dec, { price: 'not base64!' })).toThrow(ConnectValueError);
    expect(() => typedImage(dec, { price: 'not base64!' })).toThrow(/Decimal must be base64/);
    const date = struct({ type: 'int32', name: 'io.debezium.time.Date', field: 'day' });
    try {
      typedImage(date, { day: '2024-01-01' });
      throw new Error('expected a refusal');
    } catch (e) {
      expect(e).toBeInstanceOf(ConnectValueError);
      expect((e as ConnectValueError).path).toBe('day');
    }
    const time = struct({ type: 'int64', name: 'io.debezium.time.MicroTime', field: 't' });
    expect(() => typedImage(time, { t: 86_400_000_000 })).toThrow(/out of range/);
  });
});
