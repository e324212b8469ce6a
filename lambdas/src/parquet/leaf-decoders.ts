/**
 * Decoders for one primitive column: given the column's Arrow type in the file and the Iceberg
 * type it is read as, a function that binds an Arrow Data chunk to a value getter producing
 * Floe's in-memory values (values.ts). Allowed pairs are the exact Parquet mappings of spec
 * Appendix A plus the type promotions of §Schema Evolution (int→long, float→double,
 * decimal(P,S)→decimal(P',S), date→timestamp/timestamp_ns), and the legacy encodings Java's
 * reader accepts (TIMESTAMP/TIME MILLIS, INT96 timestamps, un-annotated BINARY as string).
 * Anything else is refused, so a file is never silently misread.
 */
import * as arrow from 'apache-arrow';
import { ErrorKind, FloeError } from '../errors.ts';
import { floorDiv, MICROS_PER_DAY, NANOS_PER_DAY } from '../iceberg/conversions.ts';
import { type PrimitiveType, primitiveToString } from '../iceberg/types.ts';
import type { IcebergValue } from '../iceberg/values.ts';
import {
  boolGetter,
  bytesGetter,
  decimalGetter,
  fixedGetter,
  type Getter,
  stringGetter,
  uuidGetter,
  withNulls,
} from './arrow-buffers.ts';

/** Binds one Data chunk of a column to a getter of its values (nulls included). */
export type Binder = (data: arrow.Data) => Getter;

export interface LeafColumn {
  /** `<file>: column <path> (id N)`, for error messages. */
  readonly where: string;
  /** Whether the column is stored as INT96 (asked only for nanosecond timestamps). */
  readonly isInt96: () => boolean;
}

/** The decoder of a `file`-typed column read as `target`; throws when the pair is not allowed. */
export function leafDecoder(file: arrow.DataType, target: PrimitiveType, col: LeafColumn): Binder {
  if (arrow.DataType.isDictionary(file)) return dictionaryDecoder(file, target, col);
  const values = valueDecoder(file, target, col);
  if (values === undefined) {
    throw new FloeError(
      ErrorKind.SchemaIncompatible,
      `${col.where} holds ${String(file)}, which cannot be read as Iceberg ${primitiveToString(target)}`,
      { context: { fileType: String(file), icebergType: primitiveToString(target) } },
    );
  }
  return (data) => withNulls(data, values(data));
}

/** Getter of the non-null values, or undefined when `file` cannot be read as `target`. */
function valueDecoder(file: arrow.DataType, target: PrimitiveType, col: LeafColumn): Binder | undefined {
  switch (target.kind) {
    case 'boolean':
      return arrow.DataType.isBool(file) ? boolGetter : undefined;
    case 'int':
      return intBits(file, 32) ? numbers : undefined;
    case 'long':
      if (arrow.DataType.isInt(file) && file.isSigned && file.bitWidth === 64) return numbers;
      return intBits(file, 32) || isUint32(file) ? bigints : undefined;
    case 'float':
      return isFloat(file, arrow.Precision.SINGLE) ? numbers : undefined;
    case 'double':
      return isFloat(file, arrow.Precision.SINGLE) || isFloat(file, arrow.Precision.DOUBLE)
        ? numbers
        : undefined;
    case 'decimal':
      return arrow.DataType.isDecimal(file) &&
        file.scale === target.scale &&
        file.precision <= target.precision &&
        [32, 64, 128, 256].includes(file.bitWidth)
        ? (data) => decimalGetter(data, file.bitWidth, file.precision)
        : undefined;
    case 'date':
      return dateDecoder(file);
    case 'time':
      return timeDecoder(file);
    case 'timestamp':
    case 'timestamp_ns':
      // Spec (v3): date may be promoted to timestamp / timestamp_ns, never to the tz types.
      if (isDateDay(file)) return scaled(target.kind === 'timestamp' ? MICROS_PER_DAY : NANOS_PER_DAY);
      return timestampDecoder(file, target.kind === 'timestamp' ? 'us' : 'ns', col);
    case 'timestamptz':
      return timestampDecoder(file, 'us', col);
    case 'timestamptz_ns':
      return timestampDecoder(file, 'ns', col);
    case 'string':
      return isVarBinary(file) ? strings(col) : undefined;
    case 'uuid':
      return isFixed(file, 16) ? uuidGetter : undefined;
    case 'fixed':
      return isFixed(file, target.length) ? (data) => fixedGetter(data, target.length) : undefined;
    case 'binary':
      return isBinary(file) ? bytesGetter : undefined;
    case 'unknown':
      return () => () => null;
  }
}

// ---- value getters ----

const numbers: Binder = (data) => {
  const v = data.values as ArrayLike<number | bigint>;
  return (i) => v[i]!;
};

const bigints: Binder = (data) => {
  const v = data.values as ArrayLike<number>;
  return (i) => BigInt(v[i]!);
};

/** Strings, decoded strictly: invalid UTF-8 (possible in an un-annotated BINARY column) is refused. */
function strings(col: LeafColumn): Binder {
  return (data) => {
    const get = stringGetter(data);
    return (i) => {
      try {
        return get(i);
      } catch (cause) {
        throw new FloeError(
          ErrorKind.DataInvalid,
          `${col.where} holds invalid UTF-8 (value ${i} of a batch)`,
          {
            cause,
          },
        );
      }
    };
  };
}

/** 32-bit (or narrower) values times `factor`, as bigints. */
function scaled(factor: bigint): Binder {
  return (data) => {
    const v = data.values as ArrayLike<number>;
    return (i) => BigInt(v[i]!) * factor;
  };
}

function dateDecoder(file: arrow.DataType): Binder | undefined {
  if (isDateDay(file)) return numbers;
  if (arrow.DataType.isDate(file) && file.unit === arrow.DateUnit.MILLISECOND) {
    return (data) => {
      const v = data.values as BigInt64Array;
      return (i) => Number(floorDiv(v[i]!, 86_400_000n));
    };
  }
  return undefined;
}

function timeDecoder(file: arrow.DataType): Binder | undefined {
  if (!arrow.DataType.isTime(file)) return undefined;
  switch (file.unit) {
    case arrow.TimeUnit.MICROSECOND:
      return numbers;
    case arrow.TimeUnit.MILLISECOND:
      return scaled(1000n);
    case arrow.TimeUnit.SECOND:
      return scaled(1_000_000n);
    default:
      // Nanoseconds would lose precision as Iceberg time (µs).
      return undefined;
  }
}

const UNIT_NANOS: Record<arrow.TimeUnit, bigint> = {
  [arrow.TimeUnit.SECOND]: 1_000_000_000n,
  [arrow.TimeUnit.MILLISECOND]: 1_000_000n,
  [arrow.TimeUnit.MICROSECOND]: 1000n,
  [arrow.TimeUnit.NANOSECOND]: 1n,
};

/**
 * Timestamps in the target unit. Coarser file units are multiplied up. Nanoseconds narrow to
 * microseconds only for INT96 columns (Java truncates their nanos-of-day the same way); a real
 * TIMESTAMP(NANOS) column is refused rather than truncated. The UTC-adjustment flag is not
 * compared: the stored number is the same either way.
 */
function timestampDecoder(file: arrow.DataType, unit: 'us' | 'ns', col: LeafColumn): Binder | undefined {
  if (!arrow.DataType.isTimestamp(file)) return undefined;
  const fileNanos = UNIT_NANOS[file.unit];
  const targetNanos = unit === 'us' ? 1000n : 1n;
  if (fileNanos === targetNanos) return numbers;
  if (fileNanos > targetNanos) {
    const factor = fileNanos / targetNanos;
    return (data) => {
      const v = data.values as BigInt64Array;
      return (i) => v[i]! * factor;
    };
  }
  if (!col.isInt96()) return undefined;
  return (data) => {
    const v = data.values as BigInt64Array;
    return (i) => floorDiv(v[i]!, 1000n);
  };
}

/** Dictionary-encoded columns (only when a writer's Arrow schema asked for them): decode via the dictionary. */
function dictionaryDecoder(file: arrow.Dictionary, target: PrimitiveType, col: LeafColumn): Binder {
  const inner = leafDecoder(file.dictionary, target, col);
  return (data) => {
    const chunks = data.dictionary?.data ?? [];
    const getters = chunks.map(inner);
    const starts: number[] = [];
    let n = 0;
    for (const c of chunks) {
      starts.push(n);
      n += c.length;
    }
    const indexes = data.values as ArrayLike<number | bigint>;
    const lookup = (k: number): IcebergValue => {
      let c = getters.length - 1;
      while (c > 0 && starts[c]! > k) c--;
      return getters[c]!(k - starts[c]!);
    };
    return withNulls(data, (i) => lookup(Number(indexes[i]!)));
  };
}

// ---- Arrow type tests ----

function intBits(t: arrow.DataType, maxSigned: number): boolean {
  if (!arrow.DataType.isInt(t)) return false;
  return t.isSigned ? t.bitWidth <= maxSigned : t.bitWidth < maxSigned;
}

function isUint32(t: arrow.DataType): boolean {
  return arrow.DataType.isInt(t) && !t.isSigned && t.bitWidth === 32;
}

function isFloat(t: arrow.DataType, precision: arrow.Precision): boolean {
  return arrow.DataType.isFloat(t) && t.precision === precision;
}

function isDateDay(t: arrow.DataType): boolean {
  return arrow.DataType.isDate(t) && t.unit === arrow.DateUnit.DAY;
}

function isFixed(t: arrow.DataType, width: number): boolean {
  return arrow.DataType.isFixedSizeBinary(t) && t.byteWidth === width;
}

function isBinary(t: arrow.DataType): boolean {
  return arrow.DataType.isBinary(t) || arrow.DataType.isLargeBinary(t);
}

/** Strings: UTF8-annotated, or plain BINARY as older Hive/Impala files store them (decoded strictly). */
function isVarBinary(t: arrow.DataType): boolean {
  return arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t) || isBinary(t);
}
