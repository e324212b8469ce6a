import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { decimal, type StructType, T, typeToString } from '../../../lambdas/src/iceberg/types.ts';
import { parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';
import {
  conflictFromError,
  inferStruct,
  inferType,
  StructInferrer,
  tryInferStruct,
  unifyStructs,
  unifyTypes,
} from '../../../lambdas/src/schema/infer.ts';
import { CLICK_V1, CLICK_V2, ORDER_V1, ORDER_V2, USER_V1, USER_V2 } from './sample-events.ts';

const rec = (text: string) => parseJsonRecord(text) as Record<string, never>;
const shape = (s: StructType) => typeToString(s);
const ids = (s: StructType): number[] => {
  const out: number[] = [];
  const walk = (t: StructType) => {
    for (const f of t.fields) out.push(f.id);
    for (const f of t.fields) if (f.type.kind === 'struct') walk(f.type);
  };
  walk(s);
  return out;
};

const COMMON =
  'event_id: string, event_time: timestamptz, event_type: string, region: string, event_date: date, metadata: struct<source: string, schema_version: string>';

describe('inferStruct on the sample events', () => {
  it('ORDER v1: amount double, empty items array adds no column', () => {
    const s = inferStruct(rec(ORDER_V1));
    expect(shape(s)).toBe(
      `struct<${COMMON}, order_id: string, customer_id: string, amount: double, currency: string, status: string>`,
    );
    expect(s.fields.every((f) => !f.required)).toBe(true);
    // placeholder ids: the record's fields 1..11 first, then the metadata struct's children
    expect(ids(s)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(s.fields.find((f) => f.name === 'metadata')?.type).toMatchObject({
      fields: [
        { id: 12, name: 'source' },
        { id: 13, name: 'schema_version' },
      ],
    });
  });

  it('ORDER v2 sends amount 10 (an integer): the batch unifies long+double to double', () => {
    expect(shape(inferStruct(rec(ORDER_V2)))).toContain('amount: long');
    const inf = new StructInferrer();
    expect(inf.add(rec(ORDER_V1))).toBeUndefined();
    expect(inf.add(rec(ORDER_V2))).toBeUndefined();
    expect(shape(inf.result())).toContain('amount: double');
  });

  it('USER v1 then v2 adds the optional user_agent column', () => {
    const inf = new StructInferrer();
    inf.add(rec(USER_V1));
    expect(shape(inf.result())).toBe(
      `struct<${COMMON}, user_id: string, action: string, device_type: string, ip_address: string>`,
    );
    inf.add(rec(USER_V2));
    const s = inf.result();
    expect(shape(s)).toBe(
      `struct<${COMMON}, user_id: string, action: string, device_type: string, ip_address: string, user_agent: string>`,
    );
    expect(s.fields.at(-1)).toMatchObject({ id: 11, name: 'user_agent', required: false });
  });

  it('CLICK v1/v2: integers are long, scroll_depth appears with v2', () => {
    const a = inferStruct(rec(CLICK_V1));
    const b = inferStruct(rec(CLICK_V2));
    expect(shape(a)).toBe(
      `struct<${COMMON}, session_id: string, page_url: string, referrer: string, time_on_page_seconds: long>`,
    );
    const u = unifyStructs(a, b);
    expect(u.ok && shape(u.type)).toBe(
      `struct<${COMMON}, session_id: string, page_url: string, referrer: string, time_on_page_seconds: long, scroll_depth: long>`,
    );
  });
});

describe('inferType', () => {
  it.each([
    ['1', 'long'],
    ['1.0', 'double'],
    ['1e3', 'double'],
    ['"2024-05-01T12:34:56Z"', 'timestamptz'],
    ['"2024-05-01T12:34:56.123456789+05:30"', 'timestamptz'],
    ['"2024-05-01T12:34:56"', 'string'], // no zone: not an instant
    ['"2024-05-01 12:34:56Z"', 'string'], // space instead of T
    ['"2024-05-01"', 'date'],
    ['"2024-02-30"', 'string'], // not a real date
    ['"2023-02-29"', 'string'],
    ['"2024-02-29"', 'date'],
    ['"hello"', 'string'],
    ['true', 'boolean'],
    ['[1, 2.5]', 'list<double>'],
    ['[[1], [2]]', 'list<list<long>>'],
    ['[null, "a"]', 'list<string>'],
    ['{"A": 1}', 'struct<a: long>'],
    ['[{"a": 1}, {"b": "x"}]', 'list<struct<a: long, b: string>>'],
    ['["2024-05-01", "x"]', 'list<string>'],
    ['["2024-05-01", "2024-05-01T00:00:00Z"]', 'list<string>'],
  ])('%s → %s', (json, expected) => {
    const t = inferType(parseJsonRecord(json), 'f');
    expect(t && typeToString(t)).toBe(expected);
  });

  it.each(['null', '[]', '[null]', '{}', '{"a": null}', '[[], {}]', '{"a": {"b": []}}'])(
    '%s carries no type yet',
    (json) => {
      expect(inferType(parseJsonRecord(json), 'f')).toBeUndefined();
    },
  );

  it('detectTimestamps: false keeps strings as strings', () => {
    expect(inferType('2024-05-01', 'f', { detectTimestamps: false })).toBe(T.string);
    expect(inferType('2024-05-01T00:00:00Z', 'f', { detectTimestamps: false })).toBe(T.string);
  });

  it('assigns list element ids', () => {
    expect(inferType(parseJsonRecord('[{"a": 1}]'), 'f')).toMatchObject({
      elementId: 1,
      element: { fields: [{ id: 2, name: 'a' }] },
    });
  });

  it('throws a typed conflict for a self-contradicting array', () => {
    try {
      inferType(parseJsonRecord('[1, "a"]'), 'tags');
      expect.unreachable();
    } catch (e) {
      expect(isFloeError(e, ErrorKind.SchemaIncompatible)).toBe(true);
      expect(conflictFromError(e)).toMatchObject({
        kind: 'type',
        path: 'tags.element',
        existing: 'long',
        incoming: 'string',
      });
    }
  });
});

describe('hints', () => {
  it('override inference by dotted column path, including list elements', () => {
    const s = inferStruct(
      rec('{"amount": 12.5, "Meta": {"Version": 3}, "when": "x", "codes": [1, 2], "never": null}'),
      {
        hints: {
          amount: 'decimal(12, 2)',
          'meta.version': 'int',
          when: 'string',
          'codes.element': 'int',
          never: 'long',
        },
      },
    );
    expect(s.fields.map((f) => [f.name, typeToString(f.type)])).toEqual([
      ['amount', 'decimal(12,2)'],
      ['meta', 'struct<version: int>'],
      ['when', 'string'],
      ['codes', 'list<int>'],
    ]);
    expect(s.fields[0]!.type).toEqual(decimal(12, 2));
  });

  it('an invalid hint type is a config error naming the path and type', () => {
    expect(() => inferStruct({}, { hints: { amount: 'money' } })).toThrow(
      /hint for 'amount' has invalid type 'money'/,
    );
  });
});

describe('column names', () => {
  it('lower-cases and sanitises keys (Athena / S3 Tables need lower-case [a-z0-9_])', () => {
    const s = inferStruct(
      rec('{"UserId": 1, "user-agent": "x", "Café Name": "y", "_id": "z", "a.b": true, "😀": 1}'),
    );
    expect(s.fields.map((f) => f.name)).toEqual(['userid', 'user_agent', 'cafe_name', '_id', 'a_b', '_']);
  });

  it('two keys of one object mapping to the same column are a conflict', () => {
    const r = tryInferStruct(rec('{"user_id": 1, "User-Id": 2}'));
    expect(r).toMatchObject({
      ok: false,
      conflict: { kind: 'name-collision', path: 'user_id', existing: 'user_id', incoming: 'User-Id' },
    });
    const nested = tryInferStruct(rec('{"m": {"A": 1, "a": 2}}'));
    expect(nested).toMatchObject({ ok: false, conflict: { kind: 'name-collision', path: 'm.a' } });
  });

  it('the same column spelt differently in different records is not a collision', () => {
    const inf = new StructInferrer();
    expect(inf.add(rec('{"UserId": 1}'))).toBeUndefined();
    expect(inf.add(rec('{"userid": 2}'))).toBeUndefined();
    expect(shape(inf.result())).toBe('struct<userid: long>');
  });

  it('an empty key cannot become a column', () => {
    expect(tryInferStruct(rec('{"": 1}'))).toMatchObject({ ok: false, conflict: { kind: 'illegal-name' } });
  });
});

describe('conflicts', () => {
  it.each([
    ['{"a": 1}', '{"a": "x"}', 'a', 'long', 'string'],
    ['{"a": true}', '{"a": 1.5}', 'a', 'boolean', 'double'],
    ['{"a": {"b": 1}}', '{"a": "x"}', 'a', 'struct', 'string'],
    ['{"a": [1]}', '{"a": {"b": 1}}', 'a', 'list', 'struct'],
    ['{"a": {"b": 1}}', '{"a": {"b": [1]}}', 'a.b', 'long', 'list'],
    ['{"a": [{"b": 1}]}', '{"a": [{"b": "x"}]}', 'a.element.b', 'long', 'string'],
    ['{"a": "2024-05-01"}', '{"a": 5}', 'a', 'date', 'long'],
  ])('%s then %s → conflict at %s', (first, second, path, existing, incoming) => {
    const inf = new StructInferrer();
    expect(inf.add(rec(first))).toBeUndefined();
    const c = inf.add(rec(second));
    expect(c).toMatchObject({ kind: 'type', path, existing, incoming });
    expect(c?.message).toContain(path);
  });

  it('a conflicting record leaves the accumulated schema untouched', () => {
    const inf = new StructInferrer();
    inf.add(rec('{"a": 1, "s": {"x": 1}, "l": [1]}'));
    const before = shape(inf.result());
    // adds new columns and widens before hitting the conflict on `z`
    const c = inf.add(
      rec('{"new1": "x", "a": 2.5, "s": {"y": true}, "l": [2.5], "z": 1, "zz": {"w": 1}, "z2": [1, "x"]}'),
    );
    expect(c).toMatchObject({ path: 'z2.element' });
    expect(shape(inf.result())).toBe(before);
    expect(inf.add(rec('{"a": 3}'))).toBeUndefined();
    expect(shape(inf.result())).toBe(before);
  });

  it('inferStruct throws FloeError(SchemaIncompatible) carrying the conflict', () => {
    try {
      inferStruct(rec('{"a": [1, true]}'));
      expect.unreachable();
    } catch (e) {
      expect(isFloeError(e, ErrorKind.SchemaIncompatible)).toBe(true);
      expect((e as Error).message).toBe("type conflict at field 'a.element': long vs boolean");
    }
  });
});

describe('unifyStructs / unifyTypes', () => {
  it('merges fields by name, a first, and renumbers ids', () => {
    const a = inferStruct(rec('{"x": 1, "s": {"p": 1}}'));
    const b = inferStruct(rec('{"y": "t", "x": 2.5, "s": {"q": true}}'));
    const u = unifyStructs(a, b);
    expect(u.ok).toBe(true);
    if (!u.ok) return;
    expect(shape(u.type)).toBe('struct<x: double, s: struct<p: long, q: boolean>, y: string>');
    expect(ids(u.type)).toEqual([1, 2, 3, 4, 5]);
  });

  it('reports conflicts with the path', () => {
    const a = inferStruct(rec('{"s": {"p": 1}}'));
    const b = inferStruct(rec('{"s": {"p": "x"}}'));
    expect(unifyStructs(a, b)).toMatchObject({
      ok: false,
      conflict: { path: 's.p', existing: 'long', incoming: 'string' },
    });
  });

  it('widens int→long, float→double, decimal precision; never changes decimal scale', () => {
    expect(unifyTypes(T.int, T.long)).toEqual({ ok: true, type: T.long });
    expect(unifyTypes(T.float, T.double)).toEqual({ ok: true, type: T.double });
    expect(unifyTypes(decimal(9, 2), decimal(12, 2))).toEqual({ ok: true, type: decimal(12, 2) });
    expect(unifyTypes(decimal(9, 2), decimal(9, 3)).ok).toBe(false);
    expect(unifyTypes(T.boolean, T.string).ok).toBe(false);
  });
});

describe('untyped values never conflict', () => {
  it('[] and {} neither conflict with a typed field nor fix a type', () => {
    const inf = new StructInferrer();
    expect(inf.add(rec('{"a": [], "b": {}, "c": 1, "d": {"x": null}}'))).toBeUndefined();
    expect(inf.add(rec('{"a": {"k": 1}, "b": [2], "c": [], "d": 7}'))).toBeUndefined();
    expect(inf.add(rec('{"a": [], "b": {}, "c": {}}'))).toBeUndefined();
    expect(shape(inf.result())).toBe('struct<a: struct<k: long>, b: list<long>, c: long, d: long>');
  });
});

describe('records must be objects', () => {
  it('an array record is a conflict, not columns named 0, 1, …', () => {
    expect(new StructInferrer().add([1, 2] as unknown as object)).toMatchObject({
      kind: 'type',
      path: '',
      existing: 'struct',
      incoming: 'list',
    });
  });
});
