/**
 * Data-file directory names for partition tuples (Java `PartitionSpec.partitionToPath`): one
 * `escape(name)=escape(human value)` segment per partition field, joined by `/`, where `escape` is
 * `URLEncoder.encode(s, UTF_8)` and a null value is the text `null`.
 *
 * The path is only a name: readers take partition values from the manifest, never from the path
 * (Java does not parse it either), so escaping only has to make the name storable. The escaped text
 * is ASCII from `[A-Za-z0-9.*_+=%-]`, legal in every file system and S3 key, with one gap Java
 * leaves open: length. Java writes a 1,000-character value whole and the write fails on a local
 * disk or HDFS ("File name too long": 255 bytes per name) or past S3's 1,024-byte key limit.
 * `fitSegments` shortens only such overlong segments, keeping Java's names everywhere else.
 */
import { murmur3Hash32 } from './murmur3.ts';

const URL_SAFE = /^[A-Za-z0-9.\-*_]$/;
const utf8 = new TextEncoder();

/** One code point as `URLEncoder` writes it: unreserved as is, space `+`, the rest `%XX` per UTF-8 byte. */
function escapeCodePoint(ch: string): string {
  if (ch === ' ') return '+';
  if (URL_SAFE.test(ch)) return ch;
  // Java encodes a lone surrogate as '?' (its UTF-8 replacement); TextEncoder would give U+FFFD.
  if (ch.length === 1 && ch >= '\ud800' && ch <= '\udfff') return '%3F';
  let out = '';
  for (const b of utf8.encode(ch)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** The escaped pieces of `s`, one per code point, so a cut never splits a `%XX` run or a character. */
function escapedUnits(s: string): string[] {
  return Array.from(s, escapeCodePoint);
}

/** `java.net.URLEncoder.encode(s, UTF_8)`: space → `+`, unreserved `.-*_` kept, rest `%XX`. */
export function urlEncode(s: string): string {
  return escapedUnits(s).join('');
}

/**
 * Longest segment kept whole, in bytes (the text is ASCII): the 255-byte file-name limit of ext4,
 * xfs, APFS and HDFS (`dfs.namenode.fs-limits.max-component-length`).
 */
export const MAX_SEGMENT_BYTES = 255;

/**
 * Budget of the whole partition path, in bytes: S3 keys end at 1,024 bytes, which leaves 512 for
 * the table location and the file name. Many long values share it so no key outgrows S3.
 */
export const MAX_PARTITION_PATH_BYTES = 512;

/**
 * Marks a shortened segment and precedes its hash. `URLEncoder` escapes `~` (`%7E`), so a
 * shortened name can never equal the name of another value that was kept whole.
 */
const SHORTENED = '~';
const HASH_HEX = 16;

/** 64 bits of Murmur3 over the full escaped segment (two seeds): different values, different names. */
function hash64(s: string): string {
  const bytes = utf8.encode(s);
  const hex = (seed: number) => (murmur3Hash32(bytes, seed) >>> 0).toString(16).padStart(8, '0');
  return hex(0) + hex(0x5bd1e995);
}

/** `name=value` escaped, as Java writes it, in escaped units (see `shorten`). */
function segmentUnits(name: string, human: string): string[] {
  return [...escapedUnits(name), '=', ...escapedUnits(human)];
}

/** The longest whole-unit prefix of `units` that leaves room for `~hash`, then `~hash`. */
function shorten(units: readonly string[], limit: number): string {
  const room = Math.max(0, limit - SHORTENED.length - HASH_HEX);
  let head = '';
  for (const u of units) {
    if (head.length + u.length > room) break;
    head += u;
  }
  return `${head}${SHORTENED}${hash64(units.join(''))}`;
}

/**
 * Per-segment limits: each segment gets at most `MAX_SEGMENT_BYTES` and a fair share of the path
 * budget; what short segments leave unused goes to the longer ones (shortest first).
 */
function limitsOf(lengths: readonly number[]): number[] {
  const limits = new Array<number>(lengths.length).fill(MAX_SEGMENT_BYTES);
  let remaining = MAX_PARTITION_PATH_BYTES - Math.max(0, lengths.length - 1);
  let left = lengths.length;
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[a]! - lengths[b]!);
  for (const i of order) {
    const share = Math.min(MAX_SEGMENT_BYTES, Math.floor(remaining / left));
    limits[i] = share;
    remaining -= Math.min(lengths[i]!, share);
    left -= 1;
  }
  return limits;
}

/**
 * Partition path for `(name, human value)` pairs: Java's `name=value/...`, except that a segment
 * over its limit (see `limitsOf`) becomes its longest prefix of whole escaped characters plus
 * `~` and a 64-bit hash of the full segment, so it stays unique and fits the file system.
 */
export function partitionPathOf(pairs: readonly (readonly [name: string, human: string])[]): string {
  const units = pairs.map(([name, human]) => segmentUnits(name, human));
  const full = units.map((u) => u.join(''));
  const limits = limitsOf(full.map((s) => s.length));
  return full.map((s, i) => (s.length <= limits[i]! ? s : shorten(units[i]!, limits[i]!))).join('/');
}
