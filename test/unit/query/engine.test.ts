import { afterEach, describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { IcebergQueryEngine } from '../../../lambdas/src/query/engine.ts';
import { loadFixtureTable } from '../../helpers/fixtures.ts';

// The athena example's first metadata file has no snapshot: registering it touches no data file.
const empty = loadFixtureTable('icebird-athena-example', 0);
let engine: IcebergQueryEngine | undefined;
afterEach(() => engine?.close());

describe('IcebergQueryEngine', () => {
  it('quotes view names safely', async () => {
    engine = new IcebergQueryEngine({ read: empty.read, resolvePath: empty.resolvePath });
    await engine.registerTable('we"ird; DROP', empty.metadata);
    const { columns, rows } = await engine.query('SELECT * FROM "we""ird; DROP"');
    expect(columns).toEqual(['id', 'name']);
    expect(rows).toEqual([]);
  });

  it('converts results: bigint, exact decimals, ISO timestamps', async () => {
    engine = new IcebergQueryEngine({ read: empty.read, resolvePath: empty.resolvePath });
    const { rows } = await engine.query(
      `SELECT 9007199254740993::BIGINT AS b, 1.10::DECIMAL(5,2) AS d, DATE '2024-02-29' AS dt,
              TIMESTAMP '2024-01-01 12:34:56.789' AS ts, TIMESTAMPTZ '2024-01-01 00:00:00+02' AS tz,
              '00000000-0000-0000-0000-000000000001'::UUID AS u, {'a': 1::BIGINT} AS s, [1, 2] AS l`,
    );
    expect(rows[0]).toEqual({
      b: 9007199254740993n,
      d: '1.10',
      dt: '2024-02-29',
      ts: '2024-01-01T12:34:56.789000',
      tz: '2023-12-31T22:00:00.000000+00:00',
      u: '00000000-0000-0000-0000-000000000001',
      s: { a: 1n },
      l: [1, 2],
    });
  });

  it('reports bad SQL as DataInvalid and unknown tables as NotFound', async () => {
    engine = new IcebergQueryEngine({ read: empty.read, resolvePath: empty.resolvePath });
    const syntax = await engine.query('SELEC 1').catch((e: unknown) => e);
    expect(isFloeError(syntax, ErrorKind.DataInvalid)).toBe(true);
    const missing = await engine.query('SELECT * FROM no_such_table').catch((e: unknown) => e);
    expect(isFloeError(missing, ErrorKind.NotFound)).toBe(true);
  });
});
