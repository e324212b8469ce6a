/**
 * Test helper: a minimal Parquet file with one REQUIRED INT96 column (legacy Impala/Spark
 * timestamps), built by hand because no writer available here produces INT96: one row group, one
 * uncompressed PLAIN data page, footer encoded with our Thrift codec.
 */
import {
  encodeStruct,
  type TField,
  type TList,
  type TStruct,
  TType,
  type TValue,
} from '../../../lambdas/src/parquet/thrift-compact.ts';

const JULIAN_DAY_OF_EPOCH = 2440588n;
const NANOS_PER_DAY = 86_400_000_000_000n;

/** The 12 INT96 bytes of an instant in nanoseconds since the epoch: nanos of day (LE 8), Julian day (LE 4). */
export function int96Bytes(epochNanos: bigint): Uint8Array {
  let day = epochNanos / NANOS_PER_DAY;
  let nanos = epochNanos % NANOS_PER_DAY;
  if (nanos < 0n) {
    nanos += NANOS_PER_DAY;
    day -= 1n;
  }
  const out = new Uint8Array(12);
  const view = new DataView(out.buffer);
  view.setBigInt64(0, nanos, true);
  view.setInt32(8, Number(day + JULIAN_DAY_OF_EPOCH), true);
  return out;
}

/** A Parquet file whose only column, `name`, holds `values` (epoch nanoseconds) as INT96. */
export function int96ParquetFile(name: string, values: readonly bigint[], fieldId?: number): Uint8Array {
  const data = new Uint8Array(values.length * 12);
  values.forEach((v, i) => {
    data.set(int96Bytes(v), i * 12);
  });
  const pageHeader = encodeStruct(
    struct([
      i32(1, 0), // DATA_PAGE
      i32(2, data.length),
      i32(3, data.length),
      f(5, TType.STRUCT, struct([i32(1, values.length), i32(2, 0), i32(3, 3), i32(4, 3)])),
    ]),
  );
  const magic = new TextEncoder().encode('PAR1');
  const pageOffset = BigInt(magic.length);
  const chunkSize = BigInt(pageHeader.length + data.length);
  const columnMeta = struct([
    i32(1, 3), // INT96
    f(2, TType.LIST, list(TType.I32, [0])), // PLAIN
    f(3, TType.LIST, list(TType.BINARY, [utf8(name)])),
    i32(4, 0), // UNCOMPRESSED
    i64(5, BigInt(values.length)),
    i64(6, chunkSize),
    i64(7, chunkSize),
    i64(9, pageOffset),
  ]);
  const column = struct([i64(2, pageOffset), f(3, TType.STRUCT, columnMeta)]);
  const rowGroup = struct([
    f(1, TType.LIST, list(TType.STRUCT, [column])),
    i64(2, chunkSize),
    i64(3, BigInt(values.length)),
  ]);
  const leaf = struct([
    i32(1, 3), // INT96
    i32(3, 0), // REQUIRED
    f(4, TType.BINARY, utf8(name)),
    ...(fieldId === undefined ? [] : [i32(9, fieldId)]),
  ]);
  const root = struct([f(4, TType.BINARY, utf8('schema')), i32(5, 1)]);
  const footer = encodeStruct(
    struct([
      i32(1, 1),
      f(2, TType.LIST, list(TType.STRUCT, [root, leaf])),
      i64(3, BigInt(values.length)),
      f(4, TType.LIST, list(TType.STRUCT, [rowGroup])),
    ]),
  );
  const length = new Uint8Array(4);
  new DataView(length.buffer).setUint32(0, footer.length, true);
  return concat([magic, pageHeader, data, footer, length, magic]);
}

function struct(fields: TField[]): TStruct {
  return { kind: 'struct', fields };
}
function f(id: number, type: number, value: TValue): TField {
  return { id, type, value };
}
function i32(id: number, value: number): TField {
  return f(id, TType.I32, value);
}
function i64(id: number, value: bigint): TField {
  return f(id, TType.I64, value);
}
function list(elemType: number, items: TValue[]): TList {
  return { kind: 'list', wireType: TType.LIST, elemType, items };
}
function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}
function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
