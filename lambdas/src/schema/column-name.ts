/**
 * JSON keys → Iceberg column names. Athena lower-cases identifiers and the S3 Tables / Lake
 * Formation integration rejects upper-case column names (facts §3.5), so every inferred column
 * is lower-case `[a-z0-9_]`. Leading underscores are kept (`_id` is common and legal when quoted).
 */

/** Glue's column `Name` limit (bytes; our names are ASCII so bytes = characters). */
export const MAX_COLUMN_NAME_LENGTH = 255;

/**
 * The column name for a JSON key: lower-cased (accents folded), every other character → `_`.
 * Returns `undefined` when no legal name results (empty key, or longer than 255 characters).
 */
export function columnNameOf(key: string): string | undefined {
  if (isLegalColumnName(key)) return key; // the common case: no allocation
  const name = key
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // drop combining accents: `é` → `e`
    .toLowerCase()
    .replace(/[^a-z0-9_]/gu, '_'); // per code point, so an emoji is one `_`
  return name.length === 0 || name.length > MAX_COLUMN_NAME_LENGTH ? undefined : name;
}

/** True when `s` is already a legal column name (`[a-z0-9_]{1,255}`). */
export function isLegalColumnName(s: string): boolean {
  const n = s.length;
  if (n === 0 || n > MAX_COLUMN_NAME_LENGTH) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95)) return false;
  }
  return true;
}
