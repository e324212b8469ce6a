import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isTombstone,
  isTombstoneBytes,
  readChange,
  type UpsertSpec,
} from '../../../lambdas/src/records/change-event.ts';
import { type JsonObject, parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';

const json = (text: string) => parseJsonRecord(text) as JsonObject;
const OP: UpsertSpec = { key: ['customer_id'], operationField: 'op' };
const DBZ: UpsertSpec = { key: ['id'], envelope: 'debezium' };

describe('readChange: plain records', () => {
  it('is an upsert of the whole record without an operation field', () => {
    const r = json('{"customer_id":1,"name":"a"}');
    expect(readChange({ key: ['customer_id'] }, r, 't')).toEqual({ ok: true, op: 'upsert', row: r });
  });

  it.each([
    ['c', 'upsert'],
    ['R', 'upsert'],
    ['u', 'upsert'],
    ['Insert', 'upsert'],
    ['UPDATE', 'upsert'],
    ['upsert', 'upsert'],
    ['d', 'delete'],
    ['DELETE', 'delete'],
  ])('reads operation %s as %s (case-insensitive)', (op, want) => {
    const c = readChange(OP, json(`{"customer_id":7,"name":"a","op":"${op}"}`), 't');
    expect(c.ok && c.op).toBe(want);
  });

  it('keeps the whole row of an upsert and only the key of a delete', () => {
    const up = readChange(OP, json('{"customer_id":7,"name":"a","op":"u"}'), 't');
    expect(up.ok && up.row).toEqual(json('{"customer_id":7,"name":"a","op":"u"}'));
    const del = readChange(OP, json('{"customer_id":7,"name":"a","op":"d"}'), 't');
    expect(del.ok && del.row).toEqual({ customer_id: 7n });
  });

  it.each([
    ['{"customer_id":1,"op":"x"}', /operation field 'op' is "x"/],
    ['{"customer_id":1}', /operation field 'op' is missing/],
    ['{"customer_id":1,"op":null}', /operation field 'op' is null/],
    ['{"customer_id":1,"op":1}', /operation field 'op' is 1/],
  ])('refuses %s as bad-operation, naming the table and value', (text, detail) => {
    const c = readChange(OP, json(text), 'customers');
    expect(c).toMatchObject({ ok: false, reason: 'bad-operation' });
    expect(!c.ok && c.detail).toMatch(/^table 'customers': /);
    expect(!c.ok && c.detail).toMatch(detail);
  });

  it.each([
    ['{"op":"c"}', "key field 'customer_id' is missing"],
    ['{"customer_id":null,"op":"c"}', "key field 'customer_id' is null"],
    ['{"customer_id":{"a":1},"op":"c"}', 'holds an object'],
    ['{"customer_id":[1],"op":"c"}', 'holds a list'],
    ['{"customer_id":1.5,"op":"c"}', 'a fractional number cannot be a key'],
    ['{"customer_id":null,"op":"d"}', "key field 'customer_id' is null"],
  ])('refuses %s as missing-key', (text, detail) => {
    const c = readChange(OP, json(text), 'customers');
    expect(c).toMatchObject({ ok: false, reason: 'missing-key' });
    expect(!c.ok && c.detail).toContain(detail);
  });

  it('reads composite and nested keys, and projects a delete to them', () => {
    const spec: UpsertSpec = { key: ['tenant', 'customer.id'], operationField: 'op' };
    const del = readChange(spec, json('{"tenant":"t1","customer":{"id":5,"name":"x"},"op":"d","z":1}'), 't');
    expect(del).toEqual({ ok: true, op: 'delete', row: { tenant: 't1', customer: { id: 5n } } });
    const noNested = readChange(spec, json('{"tenant":"t1","customer":5,"op":"c"}'), 't');
    expect(noNested).toMatchObject({ ok: false, reason: 'missing-key' });
    expect(!noNested.ok && noNested.detail).toContain("'customer.id' is missing");
  });

  it('does not take a key from the prototype', () => {
    const c = readChange({ key: ['constructor'] }, json('{"a":1}'), 't');
    expect(c).toMatchObject({ ok: false, reason: 'missing-key' });
  });
});

describe('readChange: Debezium envelopes', () => {
  const env = (op: string, before: string, after: string) =>
    `{"op":"${op}","ts_ms":1,"source":{"table":"customers","db":"shop"},"before":${before},"after":${after}}`;

  it.each(['c', 'r', 'u'])('op %s upserts the after image', (op) => {
    const c = readChange(DBZ, json(env(op, '{"id":1,"n":"old"}', '{"id":1,"n":"new"}')), 't');
    expect(c).toEqual({ ok: true, op: 'upsert', row: json('{"id":1,"n":"new"}') });
  });

  it('op d deletes the key of the before image', () => {
    const c = readChange(DBZ, json(env('d', '{"id":1,"n":"old"}', 'null')), 't');
    expect(c).toEqual({ ok: true, op: 'delete', row: { id: 1n } });
  });

  it('reads a Kafka Connect {schema, payload} wrapper', () => {
    const wrapped = `{"schema":{"type":"struct"},"payload":${env('u', 'null', '{"id":2,"n":"x"}')}}`;
    expect(readChange(DBZ, json(wrapped), 't')).toEqual({
      ok: true,
      op: 'upsert',
      row: json('{"id":2,"n":"x"}'),
    });
  });

  it.each([
    [env('t', 'null', 'null'), 'no-row', 'a Debezium truncate changes no rows'],
    ['{"schema":null,"payload":null}', 'no-row', 'a Debezium tombstone'],
    [env('m', 'null', 'null'), 'bad-operation', 'Debezium op is "m"'],
    ['{"after":{"id":1}}', 'bad-operation', 'Debezium op is missing'],
    [env('d', 'null', 'null'), 'missing-key', "no 'before' image"],
    [env('c', 'null', 'null'), 'missing-key', "no 'after' image"],
    [env('u', 'null', '{"n":"x"}'), 'missing-key', "key field 'id' is missing"],
  ])('refuses %s', (text, reason, detail) => {
    const c = readChange(DBZ, json(text), 'customers');
    expect(c).toMatchObject({ ok: false, reason });
    expect(!c.ok && c.detail).toContain(detail);
  });
});

describe('readChange: properties', () => {
  const scalar = fc.oneof(fc.string(), fc.bigInt(), fc.boolean());
  const value = fc.oneof(scalar, fc.constant(null), fc.double(), fc.array(fc.integer(), { maxLength: 2 }));
  const record = fc.dictionary(fc.constantFrom('k', 'op', 'a', 'b'), value);

  it('a change is ok exactly when the key is a non-null scalar and the operation is known', () => {
    fc.assert(
      fc.property(record, (raw) => {
        const r = raw as JsonObject;
        const c = readChange({ key: ['k'], operationField: 'op' }, r, 't');
        const k = r.k;
        const keyOk =
          Object.hasOwn(r, 'k') && (typeof k === 'string' || typeof k === 'bigint' || typeof k === 'boolean');
        const op = typeof r.op === 'string' ? r.op.toLowerCase() : undefined;
        const opOk =
          op !== undefined && ['c', 'r', 'u', 'd', 'insert', 'update', 'upsert', 'delete'].includes(op);
        expect(c.ok).toBe(keyOk && opOk);
        if (!c.ok) expect(c.reason).toBe(opOk ? 'missing-key' : 'bad-operation');
        else if (c.op === 'delete') expect(c.row).toEqual({ k });
        else expect(c.row).toBe(r);
      }),
    );
  });
});

describe('isTombstone', () => {
  it('a null value or a null schema and payload, nothing else', () => {
    expect(isTombstone(null)).toBe(true);
    expect(isTombstone(json('{"schema":null,"payload":null}'))).toBe(true);
    expect(isTombstone(json('{"payload":null}'))).toBe(true);
    expect(isTombstone(json('{"schema":{"type":"struct"},"payload":null}'))).toBe(false);
    expect(isTombstone(json('{"schema":null,"payload":{"op":"c"}}'))).toBe(false);
    expect(isTombstone(json('{}'))).toBe(false);
    expect(isTombstoneBytes(new TextEncoder().encode(' null '))).toBe(true);
    expect(isTombstoneBytes(new TextEncoder().encode('{"schema": null, "payload": null}'))).toBe(true);
    expect(isTombstoneBytes(new TextEncoder().encode('{"event_type":"x"}'))).toBe(false);
  });
});
