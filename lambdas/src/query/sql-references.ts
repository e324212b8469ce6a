/**
 * What a SQL statement names, found from its tokens (sql-tokens.ts): dotted name chains
 * (`ns.t`, `"t$files"`, `o.amount`) and Trino/Athena time-travel clauses after a table name
 * (`t FOR VERSION AS OF 123`, `t FOR TIMESTAMP AS OF TIMESTAMP '2025-03-14 15:00:00 UTC'`).
 * Over-matching a chain is harmless (it only registers a view the query does not use); a
 * time-travel clause is matched exactly or refused.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { isKeyword, isSignificant, type Token, tokenize } from './sql-tokens.ts';

/** `a.b.c`: identifiers joined by dots, as written (quotes removed, case kept). */
export interface NameChain {
  readonly parts: readonly string[];
  /** Character offsets of the whole chain in the SQL. */
  readonly start: number;
  readonly end: number;
}

/** What a time-travel clause asks for. */
export type VersionSpec =
  | { readonly kind: 'snapshot-id'; readonly id: bigint }
  | { readonly kind: 'ref'; readonly name: string }
  | { readonly kind: 'timestamp'; readonly text: string };

export interface TimeTravelClause {
  readonly table: NameChain;
  readonly version: VersionSpec;
  /** Character offsets from the table name to the end of the clause (what a rewrite replaces). */
  readonly start: number;
  readonly end: number;
  /** The clause as written, for messages. */
  readonly text: string;
}

export interface SqlReferences {
  readonly chains: readonly NameChain[];
  readonly timeTravel: readonly TimeTravelClause[];
}

const VERSION_WORDS = new Set(['VERSION', 'SYSTEM_VERSION']);
const TIME_WORDS = new Set(['TIMESTAMP', 'SYSTEM_TIME']);

export function sqlReferences(sql: string): SqlReferences {
  const tokens = tokenize(sql).filter(isSignificant);
  const chains = nameChains(tokens);
  const chainEndingAt = new Map<number, NameChain>();
  for (const c of chains) chainEndingAt.set(c.end, c);
  const timeTravel: TimeTravelClause[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (!isTimeTravelStart(tokens, i)) continue;
    const before = tokens[i - 1];
    const table = before === undefined ? undefined : chainEndingAt.get(before.end);
    const clause = sql.slice(tokens[i]!.start, clauseEnd(tokens, i + 4));
    if (!table) {
      throw new FloeError(ErrorKind.DataInvalid, `'${clause}' must follow a table name`);
    }
    const { version, next } = versionSpec(tokens, i + 4, tokens[i + 1]!.value.toUpperCase(), clause);
    const end = tokens[next - 1]!.end;
    timeTravel.push({ table, version, start: table.start, end, text: sql.slice(tokens[i]!.start, end) });
    i = next - 1;
  }
  return { chains, timeTravel };
}

/** Replaces `[start, end)` ranges (non-overlapping) of `sql` with new text. */
export function rewriteSql(
  sql: string,
  edits: readonly { readonly start: number; readonly end: number; readonly text: string }[],
): string {
  let out = '';
  let at = 0;
  for (const e of [...edits].sort((a, b) => a.start - b.start)) {
    out += sql.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + sql.slice(at);
}

function isName(t: Token | undefined): boolean {
  return t !== undefined && (t.kind === 'word' || t.kind === 'quoted');
}

function isDot(t: Token | undefined): boolean {
  return t?.kind === 'symbol' && t.text === '.';
}

function nameChains(tokens: readonly Token[]): NameChain[] {
  const out: NameChain[] = [];
  let i = 0;
  while (i < tokens.length) {
    if (!isName(tokens[i]) || isDot(tokens[i - 1])) {
      i++;
      continue;
    }
    const parts = [tokens[i]!.value];
    let j = i;
    while (isDot(tokens[j + 1]) && isName(tokens[j + 2])) {
      parts.push(tokens[j + 2]!.value);
      j += 2;
    }
    out.push({ parts, start: tokens[i]!.start, end: tokens[j]!.end });
    i = j + 1;
  }
  return out;
}

/** `FOR VERSION|SYSTEM_VERSION|TIMESTAMP|SYSTEM_TIME AS OF` at token `i`. */
function isTimeTravelStart(tokens: readonly Token[], i: number): boolean {
  const kind = tokens[i + 1];
  return (
    isKeyword(tokens[i], 'FOR') &&
    kind?.kind === 'word' &&
    (VERSION_WORDS.has(kind.value.toUpperCase()) || TIME_WORDS.has(kind.value.toUpperCase())) &&
    isKeyword(tokens[i + 2], 'AS') &&
    isKeyword(tokens[i + 3], 'OF')
  );
}

function clauseEnd(tokens: readonly Token[], from: number): number {
  const t = tokens[Math.min(from, tokens.length - 1)];
  return t ? t.end : 0;
}

/** Parses the literal after `AS OF`, starting at token `i`; returns it and the next token index. */
function versionSpec(
  tokens: readonly Token[],
  i: number,
  kind: string,
  clause: string,
): { version: VersionSpec; next: number } {
  if (VERSION_WORDS.has(kind)) {
    const negative = tokens[i]?.kind === 'symbol' && tokens[i]!.text === '-';
    const t = tokens[negative ? i + 1 : i];
    if (t?.kind === 'number' && /^\d+$/.test(t.text)) {
      const id = BigInt(`${negative ? '-' : ''}${t.text}`);
      return { version: { kind: 'snapshot-id', id }, next: (negative ? i + 1 : i) + 1 };
    }
    if (t?.kind === 'string' && !negative) return { version: { kind: 'ref', name: t.value }, next: i + 1 };
    throw new FloeError(
      ErrorKind.DataInvalid,
      `'${clause}' takes a snapshot id (FOR VERSION AS OF 4951213507629824583) or a branch or tag name in quotes`,
    );
  }
  let j = i;
  if (isKeyword(tokens[j], 'TIMESTAMP')) {
    j++;
    if (isKeyword(tokens[j], 'WITH') && isKeyword(tokens[j + 1], 'TIME') && isKeyword(tokens[j + 2], 'ZONE'))
      j += 3;
  }
  const t = tokens[j];
  if (t?.kind === 'string') return { version: { kind: 'timestamp', text: t.value }, next: j + 1 };
  throw new FloeError(
    ErrorKind.DataInvalid,
    `'${clause}' takes a timestamp literal, e.g. FOR TIMESTAMP AS OF TIMESTAMP '2025-03-14 15:00:00 UTC'`,
  );
}
