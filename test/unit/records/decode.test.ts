import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LocalSchemaRegistry } from '../../../lambdas/src/adapters/local/local-schema-registry.ts';
import { seededIds } from '../../../lambdas/src/adapters/local/system-clock.ts';
import { CachedSchemaRegistry } from '../../../lambdas/src/engine/cached-registry.ts';
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';
import { typeToString } from '../../../lambdas/src/iceberg/types.ts';
import {
  type DecodeContext,
  type DecodedAvro,
  type DecodedRecord,
  type DecodeFailure,
  decodeRecord,
} from '../../../lambdas/src/records/decode.ts';
import { encodeGsrFrame } from '../../../lambdas/src/records/gsr.ts';
import {
  avscEncode,
  clickDatum,
  clickEvent,
  EVENT_DATE_DAYS,
  EVENT_TIME_MICROS,
  orderDatumV1,
  orderDatumV2,
  orderV1,
  orderV2,
  userDatum,
  userEvent,
} from './avro-sample-schemas.ts';

const enc = new TextEncoder();
const UNKNOWN = '11111111-2222-4333-8444-555555555555';

async function setup() {
  const local = new LocalSchemaRegistry({ ids: seededIds(42) });
  const reg = async (name: string, schema: object) => local.register(name, JSON.stringify(schema));
  const versions = {
    order1: await reg('OrderEvent', orderV1),
    order2: await reg('OrderEvent', orderV2),
    user: await reg('UserEvent', userEvent),
    click: await reg('ClickEvent', clickEvent),
    union: await reg('Weird', {
      type: 'record',
      name: 'Weird',
      fields: [{ name: 'v', type: ['string', 'long'] }],
    }),
    money: await reg('Money', {
      type: 'record',
      name: 'Money',
      fields: [{ name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 3, scale: 2 } }],
    }),
    proto: await local.register('Proto', 'syntax = "proto3"; message M { string a = 1; }', 'PROTOBUF'),
    jsonSchema: await local.register('JsonThing', '{"type":"object"}', 'JSON'),
    notJson: await local.register('Broken', '{not json', 'AVRO'),
  };
  const lookups: string[] = [];
  const cached = new CachedSchemaRegistry(local);
  const ctx: DecodeContext = {
    format: 'avro-gsr',
    lookupSchema: (id) => {
      lookups.push(id);
      return cached.getSchemaVersion(id);
    },
  };
  return { versions, ctx, lookups };
}

function avro(r: DecodedRecord): DecodedAvro {
  if (r.kind !== 'avro') throw new Error(`expected avro, got ${JSON.stringify(r)}`);
  return r;
}
function dead(r: DecodedRecord): DecodeFailure {
  if (r.kind !== 'dead-letter') throw new Error(`expected a dead letter, got ${r.kind}`);
  return r;
}

describe('decodeRecord: json streams', () => {
  const ctx: DecodeContext = { format: 'json' };

  it('parses a JSON object (integers as bigint)', async () => {
    expect(await decodeRecord(enc.encode('{"event_type":"ORDER","n":1}'), ctx)).toEqual({
      kind: 'json',
      value: { event_type: 'ORDER', n: 1n },
    });
  });

  it('dead-letters malformed JSON, invalid UTF-8 and non-objects', async () => {
    const bad = dead(await decodeRecord(enc.encode('{"a":'), ctx));
    expect(bad.reason).toBe('malformed-json');
    expect(bad.detail).toMatch(/invalid JSON at byte 5/);
    expect(dead(await decodeRecord(new Uint8Array([0x7b, 0xff, 0x7d]), ctx))).toMatchObject({
      reason: 'malformed-json',
      detail: 'invalid UTF-8 in the record',
    });
    for (const [text, kind] of [
      ['[1]', 'array'],
      ['5', 'number'],
      ['"s"', 'string'],
      ['null', 'null'],
    ]) {
      expect(dead(await decodeRecord(enc.encode(text!), ctx))).toEqual({
        kind: 'dead-letter',
        reason: 'not-an-object',
        detail: `expected a JSON object, got ${kind}`,
      });
    }
  });

  it('hints at the stream format when a json stream gets a GSR frame', async () => {
    const framed = encodeGsrFrame(UNKNOWN, avscEncode(orderV1, orderDatumV1));
    const d = dead(await decodeRecord(framed, ctx));
    expect(d.reason).toBe('malformed-json');
    expect(d.detail).toContain('is the stream format avro-gsr?');
  });
});

describe('decodeRecord: avro-gsr streams', () => {
  it('decodes the sample events of every schema, uncompressed and zlib', async () => {
    const { versions, ctx } = await setup();
    const cases = [
      [versions.order1, orderV1, orderDatumV1, 'OrderEvent'],
      [versions.order2, orderV2, orderDatumV2, 'OrderEvent'],
      [versions.user, userEvent, userDatum, 'UserEvent'],
      [versions.click, clickEvent, clickDatum, 'ClickEvent'],
    ] as const;
    for (const [v, schema, datum, name] of cases) {
      for (const compression of ['none', 'zlib'] as const) {
        const r = avro(await decodeRecord(encodeGsrFrame(v.id, avscEncode(schema, datum), compression), ctx));
        expect(r).toMatchObject({
          schemaName: name,
          schemaVersionId: v.id,
          versionNumber: v.versionNumber,
          recordName: `com.aws.samples.iceberg.events.${name}`,
        });
        expect(r.writerSchema).toEqual(schema);
        expect(r.row.event_time).toBe(BigInt(EVENT_TIME_MICROS));
        expect(r.row.event_date).toBe(EVENT_DATE_DAYS);
        expect(Object.keys(r.row)).toEqual(schema.fields.map((f) => f.name));
      }
    }
  });

  it('gives rows and structs of both Order versions (v2 adds optional fields)', async () => {
    const { versions, ctx } = await setup();
    const r1 = avro(
      await decodeRecord(encodeGsrFrame(versions.order1.id, avscEncode(orderV1, orderDatumV1)), ctx),
    );
    const r2 = avro(
      await decodeRecord(encodeGsrFrame(versions.order2.id, avscEncode(orderV2, orderDatumV2)), ctx),
    );
    expect(r1.row).toEqual({ ...orderDatumV1, event_time: BigInt(EVENT_TIME_MICROS) });
    expect(r2.row).toEqual({ ...orderDatumV2, event_time: BigInt(EVENT_TIME_MICROS) });
    expect(r1.versionNumber).toBe(1);
    expect(r2.versionNumber).toBe(2);
    const extra = r2.struct.fields.slice(r1.struct.fields.length);
    expect(extra.map((f) => `${f.name}:${typeToString(f.type)}:${f.required}`)).toEqual([
      'payment_method:string:false',
      'promo_code:string:false',
    ]);
  });

  it('compiles each schema version once (struct and writer schema are shared across records)', async () => {
    const { versions, ctx, lookups } = await setup();
    const frame = encodeGsrFrame(versions.user.id, avscEncode(userEvent, userDatum));
    const a = avro(await decodeRecord(frame, ctx));
    const b = avro(await decodeRecord(frame, ctx));
    expect(b.struct).toBe(a.struct);
    expect(b.writerSchema).toBe(a.writerSchema);
    expect(b.row).not.toBe(a.row);
    expect(lookups).toEqual([versions.user.id, versions.user.id]);
  });

  it("dead-letters JSON text: 'not-gsr-framed', or parses it with jsonFallback", async () => {
    const { ctx } = await setup();
    const text = enc.encode('{"event_type":"ORDER"}');
    expect(dead(await decodeRecord(text, ctx))).toEqual({
      kind: 'dead-letter',
      reason: 'not-gsr-framed',
      detail: 'not GSR-framed: first byte 0x7b',
    });
    expect(await decodeRecord(text, { ...ctx, jsonFallback: true })).toEqual({
      kind: 'json',
      value: { event_type: 'ORDER' },
    });
    expect(dead(await decodeRecord(enc.encode('[1'), { ...ctx, jsonFallback: true })).reason).toBe(
      'malformed-json',
    );
  });

  it("dead-letters bad frames as 'bad-gsr-frame' with the exact reason", async () => {
    const { versions, ctx } = await setup();
    const good = encodeGsrFrame(versions.order1.id, avscEncode(orderV1, orderDatumV1));
    const unknownCompression = good.slice();
    unknownCompression[1] = 7;
    const corrupt = good.slice();
    corrupt[1] = 5; // claims zlib, carries plain Avro
    const cases: [Uint8Array, RegExp][] = [
      [good.subarray(0, 10), /^truncated header: 10 bytes/],
      [unknownCompression, /^unknown compression byte 7$/],
      [corrupt, /^zlib payload corrupt: /],
    ];
    for (const [bytes, detail] of cases) {
      const d = dead(await decodeRecord(bytes, ctx));
      expect(d.reason).toBe('bad-gsr-frame');
      expect(d.detail).toMatch(detail);
    }
  });

  it("dead-letters an id the registry does not know: 'unknown-schema-version'", async () => {
    const { ctx } = await setup();
    const d = dead(await decodeRecord(encodeGsrFrame(UNKNOWN, avscEncode(orderV1, orderDatumV1)), ctx));
    expect(d).toEqual({
      kind: 'dead-letter',
      reason: 'unknown-schema-version',
      detail: `schema version ${UNKNOWN} is not in the registry`,
      schemaVersionId: UNKNOWN,
    });
  });

  it('throws (never dead-letters) when the registry itself fails', async () => {
    const { versions } = await setup();
    const ctx: DecodeContext = {
      format: 'avro-gsr',
      lookupSchema: () =>
        Promise.reject(new FloeError(ErrorKind.Unexpected, 'Glue throttled', { retryable: true })),
    };
    await expect(
      decodeRecord(encodeGsrFrame(versions.order1.id, avscEncode(orderV1, orderDatumV1)), ctx),
    ).rejects.toThrow('Glue throttled');
    await expect(decodeRecord(new Uint8Array([3]), { format: 'avro-gsr' })).rejects.toThrow(
      /needs a schema registry lookup/,
    );
  });

  it("dead-letters schemas Floe cannot use: 'unsupported-schema'", async () => {
    const { versions, ctx } = await setup();
    const some = new Uint8Array([2, 0x61]);
    const union = dead(await decodeRecord(encodeGsrFrame(versions.union.id, some), ctx));
    expect(union.reason).toBe('unsupported-schema');
    expect(union.detail).toContain("schema 'Weird' version 1");
    expect(union.detail).toContain("field 'v'");
    const proto = dead(await decodeRecord(encodeGsrFrame(versions.proto.id, some), ctx));
    expect(proto).toMatchObject({ reason: 'unsupported-schema', schemaVersionId: versions.proto.id });
    expect(proto.detail).toContain('data format PROTOBUF');
    const broken = dead(await decodeRecord(encodeGsrFrame(versions.notJson.id, some), ctx));
    expect(broken.reason).toBe('unsupported-schema');
    expect(broken.detail).toContain('definition is not JSON');
  });

  it('decodes GSR-framed JSON (data format JSON) as a JSON record', async () => {
    const { versions, ctx } = await setup();
    const r = await decodeRecord(
      encodeGsrFrame(versions.jsonSchema.id, enc.encode('{"a":1.5}'), 'zlib'),
      ctx,
    );
    expect(r).toEqual({
      kind: 'json',
      value: { a: 1.5 },
      schemaName: 'JsonThing',
      schemaVersionId: versions.jsonSchema.id,
    });
    const bad = dead(await decodeRecord(encodeGsrFrame(versions.jsonSchema.id, enc.encode('{')), ctx));
    expect(bad).toMatchObject({ reason: 'malformed-json', schemaVersionId: versions.jsonSchema.id });
  });

  it("dead-letters payloads that are not a datum of the writer schema: 'avro-decode-failed'", async () => {
    const { versions, ctx } = await setup();
    const v1 = avscEncode(orderV1, orderDatumV1);
    const v2 = avscEncode(orderV2, { ...orderDatumV2, promo_code: 'SAVE10' });
    // truncated datum
    const t = dead(
      await decodeRecord(encodeGsrFrame(versions.order1.id, v1.subarray(0, v1.length - 3)), ctx),
    );
    expect(t).toMatchObject({ reason: 'avro-decode-failed', schemaVersionId: versions.order1.id });
    expect(t.detail).toContain("schema 'OrderEvent' version 1");
    // a v2 datum framed with the v1 id: bytes left over
    const extra = dead(await decodeRecord(encodeGsrFrame(versions.order1.id, v2), ctx));
    expect(extra.reason).toBe('avro-decode-failed');
    expect(extra.detail).toMatch(/^\d+ bytes left after the Avro datum/);
    // a v1 datum framed with the v2 id: runs out of bytes
    expect(dead(await decodeRecord(encodeGsrFrame(versions.order2.id, v1), ctx)).reason).toBe(
      'avro-decode-failed',
    );
    // a value the Iceberg type cannot hold
    const money = { type: 'record', name: 'Money', fields: [{ name: 'amount', type: 'bytes' }] };
    const tooBig = avscEncode(money, { amount: Buffer.from([0x03, 0xe8]) }); // 1000 > decimal(3,2)
    const m = dead(await decodeRecord(encodeGsrFrame(versions.money.id, tooBig), ctx));
    expect(m.reason).toBe('avro-decode-failed');
    expect(m.detail).toContain("field 'amount'");
  });

  it('never throws for arbitrary bytes', async () => {
    const { versions, ctx } = await setup();
    const ids = [versions.order1.id, versions.click.id, versions.money.id, UNKNOWN];
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 80 }),
        fc.constantFrom(...ids),
        fc.constantFrom<'raw' | 'framed' | 'json'>('raw', 'framed', 'json'),
        async (bytes, id, mode) => {
          const data = mode === 'framed' ? encodeGsrFrame(id, bytes) : bytes;
          const r = await decodeRecord(data, mode === 'json' ? { format: 'json' } : ctx);
          expect(['json', 'avro', 'dead-letter']).toContain(r.kind);
        },
      ),
      { numRuns: 500 },
    );
  });
});
