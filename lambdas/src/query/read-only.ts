/**
 * `floe query` reads; it does not write. DuckDB can write files (`COPY … TO`, `EXPORT DATABASE`),
 * open or create other databases (`ATTACH`), fetch and run code (`INSTALL`, `LOAD`) and change
 * where it reads and writes (`SET temp_directory`, `allowed_directories` …). A statement that can
 * do any of that is refused, naming the statement, unless the user passes `--allow-writes`.
 *
 * Tables and views created inside the query's in-memory database are fine: they vanish with it.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { isSignificant, type Token, tokenize } from './sql-tokens.ts';

/** Statements that write outside the in-memory database or change the engine. */
const REFUSED = new Set([
  'COPY',
  'EXPORT',
  'IMPORT',
  'ATTACH',
  'DETACH',
  'INSTALL',
  'LOAD',
  'FORCE',
  'CALL',
  'CHECKPOINT',
]);

/** Settings that are only about how results look or how hard DuckDB works: harmless to change. */
const HARMLESS_SETTINGS = new Set([
  'threads',
  'memory_limit',
  'max_memory',
  'timezone',
  'calendar',
  'default_order',
  'default_null_order',
  'preserve_insertion_order',
  'enable_progress_bar',
  'enable_progress_bar_print',
  'errors_as_json',
  'order_by_non_integer_literal',
]);

/** Throws `ConfigInvalid` naming the first statement of `sql` that is not read-only. */
export function assertReadOnly(sql: string): void {
  for (const statement of statements(tokenize(sql).filter(isSignificant))) {
    const why = refusal(statement);
    if (why !== undefined) {
      throw new FloeError(
        ErrorKind.ConfigInvalid,
        `floe query reads and does not write: ${why} (pass --allow-writes to run it anyway)`,
        { context: { statement: statement.map((t) => t.text).join(' ') } },
      );
    }
  }
}

function refusal(s: readonly Token[]): string | undefined {
  const first = s[0]?.kind === 'word' ? s[0].value.toUpperCase() : undefined;
  if (first === undefined) return undefined;
  if (REFUSED.has(first)) return `'${first}' writes files or changes the engine`;
  if (first === 'CREATE' && s.some((t) => t.kind === 'word' && /^(SECRET|MACRO)$/i.test(t.value)))
    return `'CREATE ${s[1]?.text.toUpperCase() ?? ''}' changes the engine`;
  if (first === 'SET' || first === 'RESET' || first === 'PRAGMA') {
    const name = settingName(s);
    if (name === undefined || !HARMLESS_SETTINGS.has(name.toLowerCase()))
      return `'${[first, name].filter(Boolean).join(' ')}' can change where DuckDB reads and writes`;
  }
  return undefined;
}

/** The setting a SET / RESET / PRAGMA names (`SET GLOBAL x = …`, `SET x TO …`, `PRAGMA x(…)`). */
function settingName(s: readonly Token[]): string | undefined {
  let i = 1;
  while (s[i]?.kind === 'word' && /^(GLOBAL|SESSION|LOCAL|VARIABLE)$/i.test(s[i]!.value)) i++;
  const t = s[i];
  return t && (t.kind === 'word' || t.kind === 'quoted') ? t.value : undefined;
}

/** Tokens split at top-level `;`. */
function statements(tokens: readonly Token[]): Token[][] {
  const out: Token[][] = [[]];
  for (const t of tokens) {
    if (t.kind === 'symbol' && t.text === ';') out.push([]);
    else out.at(-1)!.push(t);
  }
  return out.filter((s) => s.length > 0);
}
