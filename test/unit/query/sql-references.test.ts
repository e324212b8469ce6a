import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { rewriteSql, sqlReferences } from '../../../lambdas/src/query/sql-references.ts';
import { tokenize } from '../../../lambdas/src/query/sql-tokens.ts';

const names = (sql: string) => sqlReferences(sql).chains.map((c) => c.parts.join('.'));

describe('tokenize', () => {
  it('covers the SQL exactly, token by token', () => {
    const sql = `SELECT "a""b", 'it''s' -- note\n/* x /* nested */ y */ FROM t$files, $$raw$$, E'\\'q'`;
    const tokens = tokenize(sql);
    expect(tokens.map((t) => t.text).join('')).toBe(sql);
    expect(tokens.find((t) => t.kind === 'quoted')?.value).toBe('a"b');
    expect(tokens.filter((t) => t.kind === 'string').map((t) => t.value)).toEqual(["it's", 'raw', "'q"]);
    expect(tokens.filter((t) => t.kind === 'comment')).toHaveLength(2);
    expect(tokens.find((t) => t.text === 't$files')?.kind).toBe('word');
  });
});

describe('sqlReferences: names', () => {
  it('finds dotted and quoted names, never inside literals or comments', () => {
    expect(
      names(`SELECT o.amount FROM "default"."order_events" o -- users\nWHERE x = 'click_events'`),
    ).toEqual(['SELECT', 'o.amount', 'FROM', 'default.order_events', 'o', 'WHERE', 'x']);
    expect(names('SELECT * FROM "t$snapshots" JOIN ns."t$files" ON 1=1')).toContain('ns.t$files');
    expect(names('SELECT * FROM t$history')).toContain('t$history');
  });
});

describe('sqlReferences: time travel', () => {
  it('reads FOR VERSION AS OF with an exact 64-bit id, and a branch or tag name', () => {
    const sql =
      "SELECT * FROM ns.t FOR VERSION AS OF 9158179788527662767 AS x JOIN u FOR version as of 'audit' y";
    const [a, b] = sqlReferences(sql).timeTravel;
    expect(a?.table.parts).toEqual(['ns', 't']);
    expect(a?.version).toEqual({ kind: 'snapshot-id', id: 9158179788527662767n });
    expect(sql.slice(a!.start, a!.end)).toBe('ns.t FOR VERSION AS OF 9158179788527662767');
    expect(b?.version).toEqual({ kind: 'ref', name: 'audit' });
    expect(
      rewriteSql(sql, [
        { start: a!.start, end: a!.end, text: 'V1' },
        { start: b!.start, end: b!.end, text: 'V2' },
      ]),
    ).toBe('SELECT * FROM V1 AS x JOIN V2 y');
  });

  it('reads FOR TIMESTAMP AS OF (Trino) and FOR SYSTEM_TIME AS OF (Athena) literals', () => {
    const refs = sqlReferences(
      `SELECT * FROM "t" FOR TIMESTAMP AS OF TIMESTAMP '2025-03-14 15:00:00 UTC'
       UNION ALL SELECT * FROM t FOR SYSTEM_TIME AS OF TIMESTAMP WITH TIME ZONE '2025-03-14T16:00:00+01:00'
       UNION ALL SELECT * FROM t FOR SYSTEM_VERSION AS OF -5`,
    );
    expect(refs.timeTravel.map((c) => c.version)).toEqual([
      { kind: 'timestamp', text: '2025-03-14 15:00:00 UTC' },
      { kind: 'timestamp', text: '2025-03-14T16:00:00+01:00' },
      { kind: 'snapshot-id', id: -5n },
    ]);
  });

  it('leaves a clause inside a string or comment alone', () => {
    expect(sqlReferences("SELECT 't FOR VERSION AS OF 1' -- u FOR VERSION AS OF 2").timeTravel).toEqual([]);
  });

  it('refuses clauses it cannot read exactly, naming them', () => {
    for (const sql of [
      'SELECT * FROM t FOR TIMESTAMP AS OF current_timestamp',
      'SELECT * FROM t FOR VERSION AS OF 1.5',
      'SELECT * FROM (SELECT 1) FOR VERSION AS OF 1',
    ]) {
      const err = (() => {
        try {
          sqlReferences(sql);
        } catch (e) {
          return e;
        }
      })();
      expect(isFloeError(err, ErrorKind.DataInvalid), sql).toBe(true);
      expect((err as Error).message).toMatch(/FOR (VERSION|TIMESTAMP) AS OF/);
    }
  });
});
