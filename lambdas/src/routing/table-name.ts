/**
 * Table names that Glue, S3 Tables and Athena all accept (facts §3.5, §10.3): 1–255 characters of
 * `[a-z0-9_]`, starting and ending with a letter or digit. Whatever a producer sends, the result
 * is either such a name or `undefined` — never a path separator, dot, quote or upper-case letter.
 */

/** Longest table name Glue and S3 Tables accept. */
export const MAX_TABLE_NAME_LENGTH = 255;

const LEGAL_TABLE_NAME = /^[a-z0-9](?:[a-z0-9_]*[a-z0-9])?$/;

/** True when `name` is already a legal table (or namespace) name of at most `maxLength`. */
export function isLegalTableName(name: string, maxLength = MAX_TABLE_NAME_LENGTH): boolean {
  return name.length <= maxLength && LEGAL_TABLE_NAME.test(name);
}

/**
 * Lower-cases `raw`, folds accents (`é` → `e`), turns every run of other characters into one `_`
 * and trims `_` from both ends: `Order.Created` → `order_created`, `../x` → `x`.
 * Returns `undefined` when nothing legal remains or the result exceeds `maxLength` (pass
 * `255 − suffix.length` to leave room for a suffix). Over-long names are rejected rather than
 * truncated: truncation would silently merge distinct event types into one table.
 */
export function sanitizeTableName(raw: string, maxLength = MAX_TABLE_NAME_LENGTH): string | undefined {
  // Anything much longer than the limit cannot shrink into it meaningfully; skip the work.
  if (raw.length > 4 * MAX_TABLE_NAME_LENGTH) return undefined;
  const name = raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_') // runs of anything else (including `_`) → one `_`
    .replace(/^_+|_+$/g, '');
  return name.length > 0 && isLegalTableName(name, maxLength) ? name : undefined;
}
