import { deflateRawSync, deflateSync } from 'node:zlib';
import avsc from 'avsc';
import { describe, expect, it } from 'vitest';
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';
import {
  encodeGsrFrame,
  GSR_HEADER_LENGTH,
  isGsrFramed,
  parseGsrFrame,
  uuidFromBytes,
  uuidToBytes,
} from '../../../lambdas/src/records/gsr.ts';
import {
  avscEncode,
  clickDatum,
  clickEvent,
  orderDatumV1,
  orderDatumV2,
  orderV1,
  orderV2,
  userDatum,
  userEvent,
} from './avro-sample-schemas.ts';

const ID = 'f79c3e09-677c-4bbd-a479-3f349cb785e7';
const ID_BYTES = [
  0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7,
];

function frameError(fn: () => unknown): FloeError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(FloeError);
    expect((e as FloeError).kind).toBe(ErrorKind.DataInvalid);
    return e as FloeError;
  }
  throw new Error('expected a FloeError');
}

/** A frame assembled byte by byte, as the Java serde library writes it. */
function handFrame(compression: number, id: number[], body: Uint8Array): Uint8Array {
  return new Uint8Array([3, compression, ...id, ...body]);
}

describe('GSR framing: golden bytes', () => {
  it('writes header version 3, compression 0 and the UUID in canonical byte order', () => {
    const framed = encodeGsrFrame(ID, new Uint8Array([0xaa, 0xbb]));
    expect([...framed]).toEqual([3, 0, ...ID_BYTES, 0xaa, 0xbb]);
    expect(GSR_HEADER_LENGTH).toBe(18);
  });

  it('writes compression byte 5 and a zlib (RFC 1950) stream for zlib', () => {
    const payload = new TextEncoder().encode('x'.repeat(200));
    const framed = encodeGsrFrame(ID.toUpperCase(), payload, 'zlib');
    expect([...framed.subarray(0, 18)]).toEqual([3, 5, ...ID_BYTES]);
    // zlib header of java.util.zip.Deflater's default level: 0x78 0x9c
    expect([framed[18], framed[19]]).toEqual([0x78, 0x9c]);
    expect(framed.length).toBeLessThan(18 + payload.length);
  });

  it('reads hand-assembled frames', () => {
    const body = new Uint8Array([1, 2, 3]);
    const f = parseGsrFrame(handFrame(0, ID_BYTES, body));
    expect(f).toEqual({ schemaVersionId: ID, compression: 'none', payload: body });
    const z = parseGsrFrame(handFrame(5, ID_BYTES, deflateSync(body)));
    expect(z.compression).toBe('zlib');
    expect([...z.payload]).toEqual([1, 2, 3]);
  });

  it('formats every UUID byte, leading zeros included, lower case', () => {
    const bytes = new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 255]);
    expect(uuidFromBytes(bytes)).toBe('00010203-0405-0607-0809-0a0b0c0d0eff');
    expect([...uuidToBytes('00010203-0405-0607-0809-0A0B0C0D0EFF')]).toEqual([...bytes]);
  });
});

describe('GSR framing: Avro datums of the sample schemas', () => {
  const cases = [
    ['OrderEvent v1', orderV1, orderDatumV1],
    ['OrderEvent v2', orderV2, orderDatumV2],
    ['UserEvent', userEvent, userDatum],
    ['ClickEvent', clickEvent, clickDatum],
  ] as const;

  for (const [name, schema, datum] of cases) {
    for (const compression of ['none', 'zlib'] as const) {
      it(`${name}, compression ${compression}: the payload decodes back with avsc`, () => {
        const avro = avscEncode(schema, datum);
        const framed = encodeGsrFrame(ID, avro, compression);
        expect(isGsrFramed(framed)).toBe(true);
        const f = parseGsrFrame(framed);
        expect(f.schemaVersionId).toBe(ID);
        expect(f.compression).toBe(compression);
        expect([...f.payload]).toEqual([...avro]);
        const back = avsc.Type.forSchema(schema as avsc.Schema).fromBuffer(Buffer.from(f.payload));
        expect({ ...back }).toEqual(datum);
      });
    }
  }

  it('an uncompressed payload is a view into the record, not a copy', () => {
    const framed = encodeGsrFrame(ID, avscEncode(orderV1, orderDatumV1));
    const f = parseGsrFrame(framed);
    expect(f.payload.buffer).toBe(framed.buffer);
    expect(f.payload.byteOffset).toBe(framed.byteOffset + 18);
  });

  it('accepts an empty payload', () => {
    expect(parseGsrFrame(encodeGsrFrame(ID, new Uint8Array(0))).payload.length).toBe(0);
    expect(parseGsrFrame(encodeGsrFrame(ID, new Uint8Array(0), 'zlib')).payload.length).toBe(0);
  });
});

describe('GSR framing: errors', () => {
  it("rejects JSON: 'not GSR-framed: first byte 0x7b'", () => {
    const e = frameError(() => parseGsrFrame(new TextEncoder().encode('{"event_type":"ORDER"}')));
    expect(e.message).toBe('not GSR-framed: first byte 0x7b');
    expect(e.context.reason).toBe('not-gsr-framed');
  });

  it('rejects other first bytes and empty records', () => {
    expect(frameError(() => parseGsrFrame(new Uint8Array([0, 0]))).message).toBe(
      'not GSR-framed: first byte 0x00',
    );
    expect(frameError(() => parseGsrFrame(new Uint8Array([2, 0]))).message).toBe(
      'not GSR-framed: first byte 0x02',
    );
    const empty = frameError(() => parseGsrFrame(new Uint8Array(0)));
    expect(empty.message).toBe('not GSR-framed: empty record');
    expect(empty.context.reason).toBe('not-gsr-framed');
  });

  it("rejects 'unknown compression byte 7'", () => {
    const e = frameError(() => parseGsrFrame(handFrame(7, ID_BYTES, new Uint8Array([1]))));
    expect(e.message).toBe('unknown compression byte 7');
    expect(e.context.reason).toBe('unknown-compression');
  });

  it("rejects a 'truncated header'", () => {
    for (const n of [1, 2, 10, 17]) {
      const e = frameError(() => parseGsrFrame(encodeGsrFrame(ID, new Uint8Array(0)).subarray(0, n)));
      expect(e.message).toBe(`truncated header: ${n} bytes, a GSR header needs 18`);
      expect(e.context.reason).toBe('truncated-header');
    }
  });

  it("rejects a 'zlib payload corrupt' (garbage, truncated stream, raw deflate without zlib header)", () => {
    const good = deflateSync(avscEncode(orderV1, orderDatumV1));
    for (const body of [
      new Uint8Array([1, 2, 3, 4]),
      good.subarray(0, good.length - 6),
      deflateRawSync(avscEncode(orderV1, orderDatumV1)),
    ]) {
      const e = frameError(() => parseGsrFrame(handFrame(5, ID_BYTES, body)));
      expect(e.message).toMatch(/^zlib payload corrupt: /);
      expect(e.context.reason).toBe('zlib-corrupt');
    }
  });

  it('rejects a zlib payload that inflates beyond the cap', () => {
    const framed = encodeGsrFrame(ID, new Uint8Array(100_000), 'zlib');
    expect(parseGsrFrame(framed).payload.length).toBe(100_000);
    const e = frameError(() => parseGsrFrame(framed, { maxInflatedBytes: 1000 }));
    expect(e.message).toBe('zlib payload corrupt: inflates to more than 1000 bytes');
  });

  it('isGsrFramed needs byte 3, a known compression byte and a whole header', () => {
    const framed = encodeGsrFrame(ID, new Uint8Array([1]));
    expect(isGsrFramed(framed)).toBe(true);
    expect(isGsrFramed(framed.subarray(0, 17))).toBe(false);
    expect(isGsrFramed(handFrame(7, ID_BYTES, new Uint8Array(0)))).toBe(false);
    expect(isGsrFramed(new TextEncoder().encode('{"a":1}                 '))).toBe(false);
    expect(isGsrFramed(new Uint8Array(0))).toBe(false);
  });

  it('encodeGsrFrame rejects a schema version id that is not a UUID', () => {
    for (const bad of ['', 'not-a-uuid', `${ID}0`, ID.replace(/-/g, '')]) {
      expect(() => encodeGsrFrame(bad, new Uint8Array(0))).toThrow(/canonical UUID/);
    }
  });
});
