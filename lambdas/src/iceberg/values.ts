/**
 * How Floe holds one Iceberg value in memory (rows, partition tuples, bounds before encoding).
 *
 * | Iceberg type                         | JS value                                   |
 * |--------------------------------------|--------------------------------------------|
 * | boolean                              | boolean                                    |
 * | int, date (days since epoch)         | number                                     |
 * | long                                 | bigint                                     |
 * | float, double                        | number                                     |
 * | decimal(P,S)                         | bigint (the unscaled value)                |
 * | time, timestamp, timestamptz (µs)    | bigint                                     |
 * | timestamp_ns, timestamptz_ns (ns)    | bigint                                     |
 * | string                               | string                                     |
 * | uuid                                 | string (canonical, lower case)             |
 * | fixed, binary                        | Uint8Array                                 |
 * | struct                               | object keyed by field name                 |
 * | list                                 | array                                      |
 * | map                                  | Map                                        |
 * | null                                 | null or undefined                          |
 */
export type IcebergValue =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | readonly IcebergValue[]
  | ReadonlyMap<IcebergValue, IcebergValue>
  | { readonly [name: string]: IcebergValue };

/** A row of a table: top-level column name → value. */
export type Row = Record<string, IcebergValue>;
