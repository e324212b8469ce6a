/**
 * Per-column metrics for a data file (spec §"Field-level Metrics"), collected while the column
 * builders convert values, then encoded into the manifest's maps.
 *
 * Choices (matching Java Iceberg's Parquet metrics):
 * - value/null counts follow Parquet's column-chunk semantics: one entry per leaf *level*, so a
 *   leaf inside a list counts each element, plus one null entry for every null or empty list
 *   (what the footer's `num_values` / `null_count` say);
 * - bounds only for leaves reached through structs alone; leaves inside lists or maps get counts
 *   but no bounds (Java's default);
 * - NaN counts only for float/double leaves (including 0), and NaN is never a bound;
 * - string and binary bounds are truncated to `truncateLength` (default 16, Java's `truncate(16)`).
 */
import {
  compareBytes,
  compareValues,
  toBinary,
  truncateLowerBound,
  truncateUpperBound,
} from '../iceberg/conversions.ts';
import type { PrimitiveType } from '../iceberg/types.ts';
import type { IcebergValue } from '../iceberg/values.ts';

const utf8Decoder = new TextDecoder('utf-8', { fatal: false });

/** Mutable accumulator for one primitive leaf column. */
export interface LeafStats {
  readonly id: number;
  readonly type: PrimitiveType;
  /** Dotted path, for error messages. */
  readonly path: string;
  /** False for leaves inside lists/maps: no bounds are kept for those. */
  readonly trackBounds: boolean;
  valueCount: number;
  nullCount: number;
  nanCount: number;
  /** Smallest / largest non-null, non-NaN value seen; undefined when none. */
  min: IcebergValue;
  max: IcebergValue;
}

export function newLeafStats(id: number, type: PrimitiveType, path: string, trackBounds: boolean): LeafStats {
  return {
    id,
    type,
    path,
    trackBounds,
    valueCount: 0,
    nullCount: 0,
    nanCount: 0,
    min: undefined,
    max: undefined,
  };
}

/** Metrics in the shape a manifest `DataFile` wants them (longs as bigints, keyed by field id). */
export interface DataFileMetrics {
  readonly columnSizes: Map<number, bigint>;
  readonly valueCounts: Map<number, bigint>;
  readonly nullValueCounts: Map<number, bigint>;
  readonly nanValueCounts: Map<number, bigint>;
  readonly lowerBounds: Map<number, Uint8Array>;
  readonly upperBounds: Map<number, Uint8Array>;
  readonly splitOffsets: bigint[];
}

/** Byte-order min/max update for binary and fixed values. */
export function updateByteBounds(s: LeafStats, v: Uint8Array): void {
  if (s.min === undefined || compareBytes(v, s.min as Uint8Array) < 0) s.min = v;
  if (s.max === undefined || compareBytes(v, s.max as Uint8Array) > 0) s.max = v;
}

/**
 * Adds the stats of one batch of rows (`next`) to those of the batches before it (`into`), leaf by
 * leaf: counts add up, bounds widen in the metrics' total order (`compareValues`: -0.0 < +0.0,
 * strings by code point, bytes unsigned). Both must come from the same write plan.
 */
export function mergeLeafStats(into: readonly LeafStats[], next: readonly LeafStats[]): void {
  if (into.length !== next.length) throw new Error('mergeLeafStats: different write plans');
  for (let i = 0; i < into.length; i++) {
    const a = into[i]!;
    const b = next[i]!;
    if (a.id !== b.id) throw new Error('mergeLeafStats: different write plans');
    a.valueCount += b.valueCount;
    a.nullCount += b.nullCount;
    a.nanCount += b.nanCount;
    if (b.min !== undefined && (a.min === undefined || compareValues(a.type, b.min, a.min) < 0))
      a.min = b.min;
    if (b.max !== undefined && (a.max === undefined || compareValues(a.type, b.max, a.max) > 0))
      a.max = b.max;
  }
}

function isTruncatable(t: PrimitiveType): boolean {
  return t.kind === 'string' || t.kind === 'binary';
}

/**
 * Encodes collected leaf stats into manifest metric maps. `columnSizes` and `splitOffsets` come
 * from the Parquet footer.
 */
export function finishMetrics(
  leaves: readonly LeafStats[],
  footer: {
    columnSizes: Map<number, bigint>;
    splitOffsets: bigint[];
    byteStats?: Map<number, { min: Uint8Array; max: Uint8Array }>;
  },
  truncateLength = 16,
): DataFileMetrics {
  const valueCounts = new Map<number, bigint>();
  const nullValueCounts = new Map<number, bigint>();
  const nanValueCounts = new Map<number, bigint>();
  const lowerBounds = new Map<number, Uint8Array>();
  const upperBounds = new Map<number, Uint8Array>();
  for (const s of leaves) {
    valueCounts.set(s.id, BigInt(s.valueCount));
    nullValueCounts.set(s.id, BigInt(s.nullCount));
    if (s.type.kind === 'float' || s.type.kind === 'double') nanValueCounts.set(s.id, BigInt(s.nanCount));
    if (s.trackBounds && s.type.kind === 'string' && s.min === undefined) {
      // String bounds are taken from the writer's column statistics (byte order = code point order).
      const stats = footer.byteStats?.get(s.id);
      if (stats && s.valueCount > s.nullCount) {
        s.min = utf8Decoder.decode(stats.min);
        s.max = utf8Decoder.decode(stats.max);
      }
    }
    if (!s.trackBounds || s.min === undefined || s.max === undefined) continue;
    const trunc = isTruncatable(s.type);
    const lower = trunc ? truncateLowerBound(s.type, s.min, truncateLength) : s.min;
    const upper = trunc ? truncateUpperBound(s.type, s.max, truncateLength) : s.max;
    lowerBounds.set(s.id, toBinary(s.type, lower));
    if (upper !== undefined) upperBounds.set(s.id, toBinary(s.type, upper));
  }
  return {
    columnSizes: footer.columnSizes,
    valueCounts,
    nullValueCounts,
    nanValueCounts,
    lowerBounds,
    upperBounds,
    splitOffsets: footer.splitOffsets,
  };
}
