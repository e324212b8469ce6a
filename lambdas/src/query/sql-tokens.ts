/**
 * A lexer for DuckDB SQL that knows just enough to find names safely: it tells identifiers from
 * string literals, quoted identifiers and comments, so a table name inside `'…'` or `-- …` is never
 * taken for a reference and a rewrite never lands inside a literal. Unknown characters become
 * one-character symbols; DuckDB itself still parses (and rejects) the statement.
 */

export type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'symbol' | 'space' | 'comment';

export interface Token {
  readonly kind: TokenKind;
  /** The source text of the token. */
  readonly text: string;
  /** Offsets into the SQL: `sql.slice(start, end) === text`. */
  readonly start: number;
  readonly end: number;
  /** Identifier name (word or quoted, unescaped) or string content (unescaped). */
  readonly value: string;
}

const WORD_START = /[A-Za-z_\u0080-\uFFFF]/;
// Postgres and DuckDB allow `$` inside unquoted identifiers (`t$snapshots`), never first.
const WORD_PART = /[A-Za-z0-9_$\u0080-\uFFFF]/;
const DOLLAR_TAG = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/;

export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const push = (kind: TokenKind, end: number, value?: string) => {
    const text = sql.slice(i, end);
    out.push({ kind, text, start: i, end, value: value ?? text });
    i = end;
  };
  while (i < sql.length) {
    const c = sql[i] as string;
    const next = sql[i + 1];
    if (/\s/.test(c))
      push(
        'space',
        scanWhile(sql, i, (ch) => /\s/.test(ch)),
      );
    else if (c === '-' && next === '-') push('comment', lineEnd(sql, i));
    else if (c === '/' && next === '*') push('comment', blockCommentEnd(sql, i));
    else if (c === "'") {
      const { end, value } = quoted(sql, i, "'");
      push('string', end, value);
    } else if ((c === 'e' || c === 'E') && next === "'") {
      const { end, value } = escapeString(sql, i + 1);
      push('string', end, value);
    } else if (c === '"') {
      const { end, value } = quoted(sql, i, '"');
      push('quoted', end, value);
    } else if (c === '$' && DOLLAR_TAG.test(sql.slice(i))) {
      const { end, value } = dollarString(sql, i);
      push('string', end, value);
    } else if (/[0-9]/.test(c) || (c === '.' && next !== undefined && /[0-9]/.test(next))) {
      push(
        'number',
        scanWhile(sql, i, (ch) => /[0-9_.eE]/.test(ch)),
      );
    } else if (WORD_START.test(c))
      push(
        'word',
        scanWhile(sql, i, (ch) => WORD_PART.test(ch)),
      );
    else push('symbol', i + 1);
  }
  return out;
}

/** True for tokens that carry meaning (not whitespace or comments). */
export function isSignificant(t: Token): boolean {
  return t.kind !== 'space' && t.kind !== 'comment';
}

/** True when `t` is the unquoted keyword `word` (case-insensitive). */
export function isKeyword(t: Token | undefined, word: string): boolean {
  return t?.kind === 'word' && t.value.toUpperCase() === word;
}

function scanWhile(sql: string, from: number, ok: (ch: string) => boolean): number {
  let j = from;
  while (j < sql.length && ok(sql[j] as string)) j++;
  return j;
}

function lineEnd(sql: string, from: number): number {
  const nl = sql.indexOf('\n', from);
  return nl < 0 ? sql.length : nl;
}

/** Block comments nest in DuckDB (as in Postgres). */
function blockCommentEnd(sql: string, from: number): number {
  let depth = 0;
  let j = from;
  while (j < sql.length) {
    if (sql.startsWith('/*', j)) {
      depth++;
      j += 2;
    } else if (sql.startsWith('*/', j)) {
      depth--;
      j += 2;
      if (depth === 0) return j;
    } else j++;
  }
  return sql.length;
}

/** `'…'` or `"…"` with the quote doubled inside; unterminated runs to the end. */
function quoted(sql: string, from: number, q: string): { end: number; value: string } {
  let value = '';
  let j = from + 1;
  while (j < sql.length) {
    const ch = sql[j] as string;
    if (ch === q) {
      if (sql[j + 1] === q) {
        value += q;
        j += 2;
        continue;
      }
      return { end: j + 1, value };
    }
    value += ch;
    j++;
  }
  return { end: sql.length, value };
}

/** `E'…'`: backslash escapes as well as a doubled quote. */
function escapeString(sql: string, quoteAt: number): { end: number; value: string } {
  let value = '';
  let j = quoteAt + 1;
  while (j < sql.length) {
    const ch = sql[j] as string;
    if (ch === '\\' && j + 1 < sql.length) {
      value += sql[j + 1];
      j += 2;
    } else if (ch === "'" && sql[j + 1] === "'") {
      value += "'";
      j += 2;
    } else if (ch === "'") return { end: j + 1, value };
    else {
      value += ch;
      j++;
    }
  }
  return { end: sql.length, value };
}

/** `$$…$$` or `$tag$…$tag$`. */
function dollarString(sql: string, from: number): { end: number; value: string } {
  const tag = (DOLLAR_TAG.exec(sql.slice(from)) as RegExpExecArray)[0];
  const close = sql.indexOf(tag, from + tag.length);
  if (close < 0) return { end: sql.length, value: sql.slice(from + tag.length) };
  return { end: close + tag.length, value: sql.slice(from + tag.length, close) };
}
