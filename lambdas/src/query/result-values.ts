/**
 * DuckDB result values → plain JS: bigint stays bigint, decimals are exact strings, dates, times and
 * timestamps are ISO strings in Iceberg's JSON single-value form (timestamptz ends `+00:00`), UUIDs are
 * strings, BLOBs are Uint8Array, maps are `{ key, value }[]`, structs are objects, lists are arrays.
 */
import {
  arrayFromArrayValue,
  arrayFromListValue,
  bigintFromBigIntValue,
  bytesFromBlobValue,
  createDuckDBValueConverter,
  type DuckDBDateValue,
  type DuckDBTimestampNanosecondsValue,
  type DuckDBTimestampTZValue,
  type DuckDBTimestampValue,
  type DuckDBTimeValue,
  DuckDBTypeId,
  type DuckDBValueConverter,
  JsonDuckDBValueConverter,
  numberFromValue,
  objectArrayFromMapValue,
  objectFromStructValue,
  stringFromValue,
} from '@duckdb/node-api';
import { daysToIsoDate, epochToIso, timeOfDayToIso } from './sql.ts';

type Converter = DuckDBValueConverter<unknown>;

const isoDate: Converter = (v) => daysToIsoDate((v as DuckDBDateValue).days);
const isoTime: Converter = (v) => timeOfDayToIso((v as DuckDBTimeValue).micros);
const isoTimestamp: Converter = (v) => epochToIso((v as DuckDBTimestampValue).micros);
const isoTimestampTz: Converter = (v) => `${epochToIso((v as DuckDBTimestampTZValue).micros)}+00:00`;
const isoTimestampNs: Converter = (v) => epochToIso((v as DuckDBTimestampNanosecondsValue).nanos, 9);

const overrides: Partial<Record<DuckDBTypeId, Converter>> = {
  [DuckDBTypeId.INTEGER]: numberFromValue,
  [DuckDBTypeId.FLOAT]: numberFromValue, // NaN/±Infinity stay numbers
  [DuckDBTypeId.DOUBLE]: numberFromValue,
  [DuckDBTypeId.BIGINT]: bigintFromBigIntValue,
  [DuckDBTypeId.UBIGINT]: bigintFromBigIntValue,
  [DuckDBTypeId.HUGEINT]: bigintFromBigIntValue,
  [DuckDBTypeId.UHUGEINT]: bigintFromBigIntValue,
  [DuckDBTypeId.DECIMAL]: stringFromValue,
  [DuckDBTypeId.DATE]: isoDate,
  [DuckDBTypeId.TIME]: isoTime,
  [DuckDBTypeId.TIMESTAMP]: isoTimestamp,
  [DuckDBTypeId.TIMESTAMP_TZ]: isoTimestampTz,
  [DuckDBTypeId.TIMESTAMP_NS]: isoTimestampNs,
  [DuckDBTypeId.UUID]: stringFromValue,
  [DuckDBTypeId.VARCHAR]: stringFromValue,
  [DuckDBTypeId.BLOB]: bytesFromBlobValue,
  [DuckDBTypeId.LIST]: arrayFromListValue,
  [DuckDBTypeId.ARRAY]: arrayFromArrayValue,
  [DuckDBTypeId.STRUCT]: objectFromStructValue,
  [DuckDBTypeId.MAP]: objectArrayFromMapValue,
};

function converterFor(id: DuckDBTypeId): Converter {
  // Anything not overridden (booleans, small ints, intervals …) converts as DuckDB's JSON converter does.
  return overrides[id] ?? (JsonDuckDBValueConverter as Converter);
}

/** Converts one DuckDB value (recursively) to the JS form described above. */
export const resultValueConverter: Converter = createDuckDBValueConverter<unknown>(
  Object.fromEntries(
    Object.values(DuckDBTypeId)
      .filter((id): id is DuckDBTypeId => typeof id === 'number')
      .map((id) => [id, converterFor(id)]),
  ) as Record<DuckDBTypeId, Converter>,
);
