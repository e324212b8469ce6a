import { describe, expect, it } from 'vitest';
import { decimal, field, fixed, list, map, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import { parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';
import {
  type ConvertResult,
  compileRowConverter,
  describeConvertFailure,
  toRow,
  unknownFields,
} from '../../../lambdas/src/schema/convert.ts';
import { StructInferrer } from '../../../lambdas/src/schema/infer.ts';
import { CLICK_V1, CLICK_V2, ORDER_V1, ORDER_V2, USER_V1, USER_V2 } from './sample-events.ts';

const rec = (text: string) => parseJsonRecord(text) as object;
const one = (
  type: Parameters<typeof field>[2],
  json: string,
  opts?: Parameters<typeof toRow>[2],
): ConvertResult => toRow(struct([field(1, 'v', type)]), rec(`{"v": ${json}}`), opts);
const ok = (r: ConvertResult) => {
  if (!r.ok) throw new Error(`expected ok, got ${r.field}: ${r.value} ${r.reason}`);
  return r.row;
};
const value = (type: Parameters<typeof field>[2], json: string, opts?: Parameters<typeof toRow>[2]) =>
  ok(one(type, json, opts)).v;

describe('toRow on the sample events', () => {
  it('converts every sample event into the schema inferred from all of them', () => {
    const texts = [ORDER_V1, ORDER_V2, USER_V1, USER_V2, CLICK_V1, CLICK_V2];
    const inf = new StructInferrer();
    for (const t of texts) expect(inf.add(rec(t))).toBeUndefined();
    const convert = compileRowConverter(inf.result());
    const rows = texts.map((t) => ok(convert(rec(t))));
    expect(rows[0]).toMatchObject({
      event_id: 'ORDER-3f1c9a52-7d4e-4b8a-9c1e-2a6b5d8e9f01',
      event_time: 1714566896789000n,
      event_date: 19844,
      metadata: { source: 'data-generator', schema_version: 'v1' },
      amount: 123.45,
      user_agent: null,
      scroll_depth: null,
    });
    expect(rows[1]!.amount).toBe(10); // long literal into the unified double column
    expect(rows[5]).toMatchObject({ time_on_page_seconds: 304n, scroll_depth: 99n, amount: null });
    // every row has every top-level column, in schema order
    for (const r of rows) expect(Object.keys(r)).toEqual(inf.result().fields.map((f) => f.name));
  });
});

describe('timestamps are exact to the microsecond', () => {
  it.each([
    ['"1970-01-01T00:00:00Z"', 0n],
    ['"2024-05-01T12:34:56.789Z"', 1714566896789000n],
    ['"2024-05-01T12:34:56.123456Z"', 1714566896123456n],
    ['"2024-05-01T12:34:56.1234567Z"', 1714566896123456n], // sub-µs digits truncated
    ['"2024-05-01T12:34:56.123456999Z"', 1714566896123456n],
    ['"2024-05-01T12:34:56.1Z"', 1714566896100000n],
    ['"2024-05-01T14:34:56.5+02:00"', 1714566896500000n],
    ['"2024-05-01T07:04:56-05:30"', 1714566896000000n],
    ['"2024-05-01t12:34:56z"', 1714566896000000n],
    ['"1969-12-31T23:59:59.999999Z"', -1n],
    ['"1600-01-01T00:00:00Z"', -11676096000000000n], // beyond 2^53 µs: the BigInt path
    ['"9999-12-31T23:59:59.999999Z"', 253402300799999999n],
    ['"2024-02-29T00:00:00+00:00"', 1709164800000000n],
  ])('timestamptz %s → %s', (json, micros) => {
    expect(value(T.timestamptz, json)).toBe(micros);
  });

  it('timestamptz_ns keeps all nine digits', () => {
    expect(value(T.timestamptz_ns, '"2024-05-01T12:34:56.123456789Z"')).toBe(1714566896123456789n);
    expect(value(T.timestamptz_ns, '"1969-12-31T23:59:59.000000001Z"')).toBe(-999999999n);
  });

  it('timestamp (no zone) takes wall-clock strings, and zoned ones as their UTC wall clock', () => {
    expect(value(T.timestamp, '"2024-05-01T12:34:56"')).toBe(1714566896000000n);
    expect(value(T.timestamp, '"2024-05-01T14:34:56+02:00"')).toBe(1714566896000000n);
  });

  it.each([
    '"2024-05-01T12:34:56"', // no zone for an instant
    '"2024-05-01 12:34:56Z"',
    '"2024-13-01T00:00:00Z"',
    '"2023-02-29T00:00:00Z"',
    '"2024-05-01T24:00:00Z"',
    '"2024-05-01T12:60:00Z"',
    '"2024-05-01T12:00:60Z"',
    '"2024-05-01T12:00:00.Z"',
    '"2024-05-01T12:00:00.1234567890Z"',
    '"2024-05-01T12:00:00+19:00"',
    '"2024-05-01T12:00:00+0200"',
    '"2024-05-01T12:00:00Zjunk"',
    '1714566896789',
    '"yesterday"',
  ])('timestamptz rejects %s', (json) => {
    const r = one(T.timestamptz, json);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.field).toBe('v');
  });

  it('epoch numbers only with an explicit unit', () => {
    expect(value(T.timestamptz, '1714566896789', { epochUnit: 'millis' })).toBe(1714566896789000n);
    expect(value(T.timestamptz, '1714566896', { epochUnit: 'seconds' })).toBe(1714566896000000n);
    expect(value(T.timestamptz, '1714566896789000', { epochUnit: 'micros' })).toBe(1714566896789000n);
    expect(value(T.timestamptz_ns, '1714566896789', { epochUnit: 'millis' })).toBe(1714566896789000000n);
    expect(one(T.timestamptz, '1714566896.5', { epochUnit: 'seconds' })).toMatchObject({
      ok: false,
      reason: 'not an integer epoch in seconds',
    });
  });

  it('dates and times', () => {
    expect(value(T.date, '"1970-01-01"')).toBe(0);
    expect(value(T.date, '"2024-05-01"')).toBe(19844);
    expect(value(T.date, '"1969-12-31"')).toBe(-1);
    expect(value(T.date, '"0001-01-01"')).toBe(-719162);
    expect(one(T.date, '"2024-05-01T00:00:00Z"').ok).toBe(false);
    expect(one(T.date, '"2024-5-1"').ok).toBe(false);
    expect(value(T.time, '"12:34:56.789012"')).toBe(45296789012n);
    expect(one(T.time, '"25:00:00"').ok).toBe(false);
  });
});

describe('numbers', () => {
  it('long: integers (exact beyond 2^53) and integral doubles; never fractions', () => {
    expect(value(T.long, '9007199254740993')).toBe(9007199254740993n);
    expect(value(T.long, '9223372036854775807')).toBe(9223372036854775807n);
    expect(value(T.long, '1.0')).toBe(1n);
    expect(one(T.long, '1.5')).toEqual({ ok: false, field: 'v', value: '1.5', reason: 'not an integer' });
    expect(one(T.long, '9223372036854775808')).toMatchObject({ ok: false, reason: 'out of range for long' });
    expect(one(T.long, '"abc"')).toEqual({
      ok: false,
      field: 'v',
      value: '"abc"',
      reason: 'expected an integer, got string',
    });
    expect(one(T.long, '"12"')).toMatchObject({ ok: false, reason: 'expected an integer, got string' });
    expect(one(T.long, '1e300')).toMatchObject({ ok: false, reason: 'not an integer' });
  });

  it('int: range-checked to 32 bits', () => {
    expect(value(T.int, '2147483647')).toBe(2147483647);
    expect(value(T.int, '-2147483648')).toBe(-2147483648);
    expect(one(T.int, '2147483648')).toMatchObject({ ok: false, reason: 'out of range for int' });
  });

  it('double and float', () => {
    expect(value(T.double, '1.5')).toBe(1.5);
    expect(value(T.double, '7')).toBe(7);
    expect(value(T.float, '1.5')).toBe(1.5);
    expect(one(T.float, '1e39')).toMatchObject({ ok: false, reason: 'out of range for float' });
    expect(one(T.double, 'true')).toMatchObject({ ok: false, reason: 'expected a number, got boolean' });
  });

  it('decimal: exact unscaled values from numbers, integers and strings; never rounded', () => {
    const d = decimal(12, 2);
    expect(value(d, '123.45')).toBe(12345n);
    expect(value(d, '0.1')).toBe(10n);
    expect(value(d, '12.5')).toBe(1250n);
    expect(value(d, '-0.07')).toBe(-7n);
    expect(value(d, '42')).toBe(4200n);
    expect(value(d, '1.5e2')).toBe(15000n);
    expect(value(d, '"9999999999.99"')).toBe(999999999999n);
    expect(value(d, '"1.10"')).toBe(110n);
    expect(one(d, '0.125')).toMatchObject({ ok: false, reason: 'has more than 2 fractional digits' });
    expect(one(d, '"10000000000.00"')).toMatchObject({
      ok: false,
      reason: 'needs more than 12 digits (decimal(12,2))',
    });
    expect(one(d, '10000000000')).toMatchObject({ ok: false });
    expect(one(d, '"12,50"')).toMatchObject({ ok: false, reason: 'not a decimal number' });
    // 18 significant digits: only exact through the kept source text
    const big = decimal(18, 2);
    const exact = toRow(
      struct([field(1, 'v', big)]),
      parseJsonRecord('{"v": 1234567890123456.78}', { exactFractions: true }) as object,
    );
    expect(ok(exact).v).toBe(123456789012345678n);
    // the double prints as 1234567890123456.8: more digits than a double keeps, so refused, not guessed
    expect(one(big, '1234567890123456.78')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('more than 15 significant digits'),
    });
    expect(value(big, '1234567890123.45')).toBe(123456789012345n); // 15 significant digits: exact from the double
    expect(value(decimal(38, 0), '"12345678901234567890123456789012345678"')).toBe(
      12345678901234567890123456789012345678n,
    );
  });
});

describe('other primitives', () => {
  it('string, boolean, uuid, binary, fixed', () => {
    expect(value(T.string, '"x"')).toBe('x');
    expect(one(T.string, '{"a": 1}')).toEqual({
      ok: false,
      field: 'v',
      value: '{"a":1}',
      reason: 'expected a string, got object',
    });
    expect(one(T.string, '12')).toMatchObject({ ok: false, reason: 'expected a string, got integer' });
    expect(value(T.boolean, 'false')).toBe(false);
    expect(one(T.boolean, '"true"').ok).toBe(false);
    expect(value(T.uuid, '"F79C3E09-677C-4BBD-A479-3F349CB785E7"')).toBe(
      'f79c3e09-677c-4bbd-a479-3f349cb785e7',
    );
    expect(one(T.uuid, '"f79c3e09677c4bbda4793f349cb785e7"').ok).toBe(false);
    expect(value(T.binary, '"AAECAw=="')).toEqual(new Uint8Array([0, 1, 2, 3]));
    expect(value(T.binary, '""')).toEqual(new Uint8Array([]));
    expect(value(T.binary, '"/+8="')).toEqual(new Uint8Array([255, 239]));
    expect(one(T.binary, '"AAECAw="').ok).toBe(false);
    expect(one(T.binary, '"AA=CAw=="').ok).toBe(false);
    expect(value(fixed(2), '"AAE="')).toEqual(new Uint8Array([0, 1]));
    expect(one(fixed(3), '"AAE="')).toMatchObject({ ok: false, reason: 'expected 3 bytes, got 2' });
  });
});

describe('nested types and failure paths', () => {
  const schema = struct([
    field(1, 'id', T.long, true),
    field(2, 'meta', struct([field(5, 'version', T.int), field(6, 'tags', list(7, T.string))])),
    field(3, 'items', list(8, struct([field(9, 'sku', T.string), field(10, 'qty', T.long)]))),
    field(4, 'attrs', map(11, T.string, 12, T.double)),
  ]);

  it('converts structs, lists and maps', () => {
    const row = ok(
      toRow(
        schema,
        rec(
          '{"id": 1, "meta": {"version": 2, "tags": ["a", null]}, "items": [{"sku": "x", "qty": 3}], "attrs": {"w": 1.5, "h": 2}}',
        ),
      ),
    );
    expect(row).toEqual({
      id: 1n,
      meta: { version: 2, tags: ['a', null] },
      items: [{ sku: 'x', qty: 3n }],
      attrs: new Map([
        ['w', 1.5],
        ['h', 2],
      ]),
    });
  });

  it.each([
    ['{"id": 1, "meta": {"version": "two"}}', 'meta.version', '"two"', 'expected an integer, got string'],
    ['{"id": 1, "items": [{"sku": "a"}, {"sku": "b", "qty": 1.5}]}', 'items[1].qty', '1.5', 'not an integer'],
    ['{"id": 1, "meta": {"tags": ["a", 3]}}', 'meta.tags[1]', '3', 'expected a string, got integer'],
    ['{"id": 1, "attrs": {"w": "wide"}}', 'attrs["w"]', '"wide"', 'expected a number, got string'],
    ['{"id": 1, "meta": "v2"}', 'meta', '"v2"', 'expected an object, got string'],
    ['{"id": 1, "items": {"sku": "x"}}', 'items', '{"sku":"x"}', 'expected an array, got object'],
    ['{"meta": {}}', 'id', '(missing)', 'is required but missing'],
    ['{"id": null}', 'id', 'null', 'is required but null'],
    [
      '{"id": 1, "colour": "red"}',
      'colour',
      '"red"',
      'is not a column of the table (evolve the schema first)',
    ],
    [
      '{"id": 1, "meta": {"version": 1, "extra": [1]}}',
      'meta.extra',
      '[1]',
      'is not a column of the table (evolve the schema first)',
    ],
    ['{"id": 1, "ID": 2}', 'ID', '2', "collides with another key that maps to column 'id'"],
  ])('%s fails at %s', (json, path, shown, reason) => {
    const r = toRow(schema, rec(json));
    expect(r).toEqual({ ok: false, field: path, value: shown, reason });
  });

  it('fields without a column pass when they carry no type, or when told to ignore them', () => {
    expect(ok(toRow(schema, rec('{"id": 1, "gone": null, "empty": [], "obj": {"x": null}}')))).toMatchObject({
      id: 1n,
    });
    expect(
      ok(toRow(schema, rec('{"id": 1, "colour": "red"}'), { unknownFields: 'ignore' })),
    ).not.toHaveProperty('colour');
  });

  it('matches keys to columns by the inference name rule', () => {
    expect(ok(toRow(schema, rec('{"ID": 5, "Meta": {"Version": 3}}')))).toMatchObject({
      id: 5n,
      meta: { version: 3, tags: null },
    });
  });

  it('never reads Object.prototype members as column values', () => {
    const s = struct([
      field(1, 'constructor', T.string),
      field(2, 'tostring', T.string),
      field(3, '__proto__', T.string),
    ]);
    const empty = ok(toRow(s, rec('{}')));
    expect(empty.constructor).toBeNull();
    expect(Object.keys(empty)).toEqual(['constructor', 'tostring', '__proto__']);
    const full = ok(toRow(s, rec('{"constructor": "c", "__proto__": "p"}')));
    expect(full.constructor).toBe('c');
    expect(Object.getOwnPropertyDescriptor(full, '__proto__')?.value).toBe('p');
  });

  it('rejects a record that is not an object', () => {
    expect(toRow(schema, [] as unknown as object)).toMatchObject({
      ok: false,
      reason: 'expected a JSON object record, got array',
    });
  });

  it('describes failures with table, field, value and reason', () => {
    const r = toRow(schema, rec('{"id": "abc"}'));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(describeConvertFailure('order_events', r)).toBe(
        "table 'order_events', field 'id': value \"abc\" expected an integer, got string",
      );
    }
  });
});

describe('unknownFields', () => {
  it('lists typed fields without a column, nested and by column name', () => {
    const schema = struct([
      field(1, 'a', T.long),
      field(2, 's', struct([field(4, 'x', T.long)])),
      field(3, 'l', list(5, struct([field(6, 'y', T.long)]))),
    ]);
    const r = rec(
      '{"a": 1, "New-Col": 1, "nul": null, "e": [], "s": {"x": 1, "z": "q"}, "l": [{"y": 1, "w": true}, {"w": false}]}',
    );
    expect(unknownFields(schema, r)).toEqual(['new_col', 's.z', 'l.element.w']);
    expect(unknownFields(schema, rec('{"a": 1}'))).toEqual([]);
  });
});

describe('properties', () => {
  it('timestamptz agrees with Date for any instant and offset, to the microsecond', async () => {
    const fc = (await import('fast-check')).default;
    fc.assert(
      fc.property(
        fc.integer({ min: -62135596800000, max: 253402300799999 }), // years 0001..9999 in ms
        fc.integer({ min: 0, max: 999 }),
        fc.integer({ min: -18 * 60, max: 18 * 60 }),
        (ms, extraMicros, offsetMin) => {
          const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 23); // wall clock at the offset
          if (local.startsWith('-') || local.startsWith('+')) return; // outside 4-digit years
          const sign = offsetMin < 0 ? '-' : '+';
          const abs = Math.abs(offsetMin);
          const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          const text = `${local}${String(extraMicros).padStart(3, '0')}${zone}`;
          expect(value(T.timestamptz, JSON.stringify(text))).toBe(BigInt(ms) * 1000n + BigInt(extraMicros));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('decimal(P,2) takes any amount with cents exactly from its JSON number', async () => {
    const fc = (await import('fast-check')).default;
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), (cents) => {
        const neg = cents < 0n;
        const abs = neg ? -cents : cents;
        const text = `${neg ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
        expect(value(decimal(18, 2), text)).toBe(cents);
      }),
      { numRuns: 2000 },
    );
  });
});
