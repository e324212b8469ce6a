import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import { patchFooter, readFooter } from '../../../lambdas/src/parquet/footer.ts';
import {
  decodeStruct,
  encodeStruct,
  getField,
  structList,
  type TStruct,
  TType,
} from '../../../lambdas/src/parquet/thrift-compact.ts';

/** A small Parquet file straight from parquet-wasm (no Floe patching). */
function rawParquet(): Uint8Array {
  const table = arrow.tableFromArrays({ a: Int32Array.from([1, 2, 3]), b: ['x', 'y', 'z'] });
  return pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream')));
}

describe('thrift compact codec', () => {
  it('re-encodes a real Parquet footer byte for byte', () => {
    const file = rawParquet();
    const len = new DataView(file.buffer, file.byteOffset + file.length - 8, 4).getUint32(0, true);
    const footer = file.subarray(file.length - 8 - len, file.length - 8);
    expect(encodeStruct(decodeStruct(footer))).toEqual(footer);
  });

  it('round-trips every wire type, long field-id gaps, big lists and negative numbers', () => {
    const s: TStruct = {
      kind: 'struct',
      fields: [
        { id: 1, type: TType.TRUE, value: true },
        { id: 2, type: TType.TRUE, value: false },
        { id: 3, type: TType.BYTE, value: -5 },
        { id: 4, type: TType.I16, value: -300 },
        { id: 5, type: TType.I32, value: -2147483648 },
        { id: 6, type: TType.I64, value: -(1n << 62n) },
        { id: 7, type: TType.DOUBLE, value: 1.25 },
        { id: 40, type: TType.BINARY, value: Uint8Array.of(1, 2, 3) },
        {
          id: 41,
          type: TType.LIST,
          value: {
            kind: 'list',
            wireType: TType.LIST,
            elemType: TType.I32,
            items: Array.from({ length: 20 }, (_, i) => i - 10),
          },
        },
        {
          id: 42,
          type: TType.MAP,
          value: {
            kind: 'map',
            keyType: TType.BINARY,
            valueType: TType.TRUE,
            entries: [[Uint8Array.of(65), true]],
          },
        },
        { id: 43, type: TType.STRUCT, value: { kind: 'struct', fields: [] } },
      ],
    };
    expect(decodeStruct(encodeStruct(s))).toEqual(s);
  });

  it('rejects truncated input', () => {
    const bytes = encodeStruct({ kind: 'struct', fields: [{ id: 1, type: TType.I64, value: 123456789n }] });
    expect(() => decodeStruct(bytes.subarray(0, bytes.length - 2))).toThrow(/corrupt/);
  });
});

describe('patchFooter', () => {
  it('keeps the data pages, renames the root and drops the Arrow schema', () => {
    const file = rawParquet();
    const { bytes, metrics } = patchFooter(file, {
      uuidIds: new Set(),
      dropConvertedTypeIds: new Set(),
      dropKeys: ['ARROW:schema'],
      rootName: 'table',
    });
    const oldLen = new DataView(file.buffer, file.byteOffset + file.length - 8, 4).getUint32(0, true);
    const dataEnd = file.length - 8 - oldLen;
    expect(bytes.subarray(0, dataEnd)).toEqual(file.subarray(0, dataEnd));
    const fmd = readFooter(bytes);
    const root = structList(getField(fmd, 2))[0]!;
    expect(new TextDecoder().decode(getField(root, 4) as Uint8Array)).toBe('table');
    expect(getField(fmd, 5)).toBeUndefined();
    // Columns without field ids get no size entry; one row group starting right after the magic.
    expect(metrics.columnSizes.size).toBe(0);
    expect(metrics.splitOffsets).toEqual([4n]);
  });

  it('rejects a file without the Parquet magic', () => {
    expect(() =>
      patchFooter(new Uint8Array(20), { uuidIds: new Set(), dropConvertedTypeIds: new Set() }),
    ).toThrow(/magic/);
  });
});
