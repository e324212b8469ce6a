import { describe, expect, it } from 'vitest';
import { isFloeError } from '../../../lambdas/src/errors.ts';
import { assertReadOnly } from '../../../lambdas/src/query/read-only.ts';

function refusal(sql: string): string | undefined {
  try {
    assertReadOnly(sql);
    return undefined;
  } catch (e) {
    expect(isFloeError(e)).toBe(true);
    return (e as Error).message;
  }
}

describe('assertReadOnly', () => {
  it('lets queries and in-memory tables through', () => {
    for (const sql of [
      'SELECT * FROM order_events',
      'WITH x AS (SELECT 1) SELECT * FROM x',
      "SELECT 'COPY t TO x' AS s -- ATTACH 'y'",
      'CREATE TEMP TABLE t AS SELECT 1; SELECT * FROM t',
      'SET threads = 1; SELECT 1',
      "SET TimeZone = 'UTC'",
      'DESCRIBE order_events',
      'EXPLAIN SELECT 1',
    ]) {
      expect(refusal(sql), sql).toBeUndefined();
    }
  });

  it('refuses what writes files or changes the engine, naming it, also after a harmless statement', () => {
    const cases: [string, RegExp][] = [
      ["COPY (SELECT 1) TO '/tmp/x.csv'", /'COPY' writes files/],
      ["copy order_events to 'out.parquet' (format parquet)", /'COPY'/],
      ["EXPORT DATABASE '/tmp/db'", /'EXPORT'/],
      ["ATTACH 'other.duckdb' AS o", /'ATTACH'/],
      ['INSTALL httpfs', /'INSTALL'/],
      ['LOAD httpfs', /'LOAD'/],
      ['FORCE INSTALL httpfs', /'FORCE'/],
      ["SET temp_directory = '/tmp/x'", /'SET temp_directory'/],
      ["SET GLOBAL allowed_directories = ['/']", /'SET allowed_directories'/],
      ['RESET enable_external_access', /'RESET enable_external_access'/],
      ["PRAGMA enable_profiling = 'json'", /'PRAGMA enable_profiling'/],
      ["CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 's')", /CREATE SECRET/],
      ["SELECT 1; COPY (SELECT 1) TO 'x.csv'", /'COPY'/],
    ];
    for (const [sql, want] of cases) {
      const why = refusal(sql);
      expect(why, sql).toMatch(want);
      expect(why).toContain('--allow-writes');
    }
  });
});
