/**
 * Concrete values read from the fixture tables. Expectations come from the READMEs or from reading the
 * raw Parquet files by their physical column names (an oracle independent of field-id resolution,
 * partition filling and delete handling).
 */
import { describe, expect, it } from 'vitest';
import { IcebergQueryEngine } from '../../lambdas/src/query/engine.ts';
import { loadFixtureTable, queryFixture } from '../helpers/fixtures.ts';

/** Raw rows of local Parquet files, read by physical names (hive columns off). */
async function raw(path: string, sql = 'SELECT * FROM f'): Promise<Record<string, unknown>[]> {
  const engine = new IcebergQueryEngine({ read: async () => new Uint8Array(), resolvePath: (u) => u });
  try {
    const from = `read_parquet('${path.replaceAll("'", "''")}', hive_partitioning=false, file_row_number=true)`;
    return (await engine.query(sql.replace(/\bf\b/, from))).rows;
  } finally {
    engine.close();
  }
}

describe('icebird-spark-rename-column', () => {
  const name = 'icebird-spark-rename-column';
  const dir = loadFixtureTable(name).dir;

  it('v3 exposes column 3 as event_date holding what the files store under `date`', async () => {
    const { columns, rows } = await queryFixture(name, 3, 'SELECT id, event_date FROM t ORDER BY id');
    expect(columns).toEqual(['id', 'event_date']);
    const stored = await raw(`${dir}/data/*/*/*.parquet`, 'SELECT id, "date" FROM f ORDER BY id');
    expect(rows.map((r) => [r.id, r.event_date])).toEqual(stored.map((r) => [r.id, r.date]));
    expect(rows.some((r) => r.event_date === null)).toBe(true); // the date=null partition
  });

  it('v2 still calls it `date`; v3 has no `date` column', async () => {
    const v2 = await queryFixture(name, 2, 'SELECT * FROM t LIMIT 1');
    expect(v2.columns).toContain('date');
    const v3 = await queryFixture(name, 3, 'SELECT * FROM t LIMIT 1');
    expect(v3.columns).not.toContain('date');
    expect(v3.columns).toEqual(['id', 'name', 'event_date', 'price', 'active']);
  });

  it('keeps decimals exact and non-ASCII strings intact', async () => {
    const { rows } = await queryFixture(name, 3, 'SELECT name, price FROM t ORDER BY id');
    const stored = await raw(
      `${dir}/data/*/*/*.parquet`,
      'SELECT name, price::VARCHAR AS price FROM f ORDER BY id',
    );
    expect(rows).toEqual(stored);
    expect(rows.map((r) => r.price)).toContain('99999999.99');
    expect(rows.some((r) => String(r.price).startsWith('-'))).toBe(true);
  });
});

describe('icebird-java-bunnies', () => {
  const name = 'icebird-java-bunnies';
  const dir = loadFixtureTable(name).dir;

  it('v3 adds __happy__ (null for the old file) and matches sanitised Parquet names by field id', async () => {
    const { columns, rows } = await queryFixture(name, 3, 'SELECT * FROM t');
    expect(columns).toContain('Breed Name');
    expect(columns).toContain('__happy__');
    expect(rows.every((r) => r.__happy__ === null)).toBe(true);
    expect(rows.every((r) => typeof r['Breed Name'] === 'string')).toBe(true);
  });

  it('v4 drops exactly the rows the position-delete file names', async () => {
    const positions = await raw(`${dir}/data/bunnies-pos-deletes.parquet`, 'SELECT pos FROM f');
    const initial = await raw(
      `${dir}/data/bunnies-initial.parquet`,
      'SELECT file_row_number, "Breed_x20Name" AS b FROM f',
    );
    const deleted = new Set(positions.map((p) => p.pos));
    const expected = initial.filter((r) => !deleted.has(r.file_row_number)).map((r) => r.b);
    const { rows } = await queryFixture(name, 4, 'SELECT "Breed Name" AS b FROM t');
    expect(rows.map((r) => r.b).sort()).toEqual(expected.sort());
  });

  it("v5 keeps only the updated 'New Zealand' row", async () => {
    const { rows } = await queryFixture(name, 5, `SELECT * FROM t WHERE "Breed Name" = 'New Zealand'`);
    const [updated] = await raw(`${dir}/data/bunnies-updated-new-zealand.parquet`);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.['Popularity Rank']).toBe(updated?.Popularity_x20Rank);
    expect(rows[0]?.__happy__).toBe(true);
  });
});

describe('icebird-spark-bunnies', () => {
  const name = 'icebird-spark-bunnies';
  const dir = loadFixtureTable(name).dir;

  it('v3 drops row 0 of the first data file (position delete)', async () => {
    const [row0] = await raw(
      `${dir}/data/00000-1-9acc37f2-90ae-42f5-915c-a21c3cb99690-00001.parquet`,
      'SELECT "Breed_x20Name" AS b FROM f WHERE file_row_number = 0',
    );
    const { rows } = await queryFixture(name, 3, 'SELECT "Breed Name" AS b FROM t');
    expect(rows.map((r) => r.b)).not.toContain(row0?.b);
  });

  it('v4 adds breed_name_length as null; v5 reads the rewritten values', async () => {
    const v4 = await queryFixture(name, 4, 'SELECT count(*) AS n FROM t WHERE breed_name_length IS NOT NULL');
    expect(v4.rows[0]?.n).toBe(0n);
    const v5 = await queryFixture(name, 5, 'SELECT "Breed Name" AS b, breed_name_length AS l FROM t');
    expect(v5.rows.length).toBe(20);
    expect(v5.rows.every((r) => r.l === String(r.b).length)).toBe(true);
  });
});

describe('duckdb-partition-evolution', () => {
  const name = 'duckdb-partition-evolution';

  it('v4 fills event_date and event_type from manifest partition values', async () => {
    const { rows } = await queryFixture(name, 4, 'SELECT * FROM t');
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.event_date !== null && r.event_type !== null)).toBe(true);
    // Directory names (data/event_date=…/event_type=…/) say which values each file holds.
    const pairs = new Set(rows.map((r) => `${r.event_date}/${r.event_type}`));
    for (const p of ['2024-01-03/click', '2024-01-03/view', '2024-01-04/purchase', '2024-01-04/view']) {
      expect(pairs.has(p)).toBe(true);
    }
    expect(new Set(rows.map((r) => r.event_date))).toEqual(
      new Set(['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04']),
    );
  });
});

describe('duckdb-lineitem-iceberg', () => {
  it('v2 has no row the DELETE (l_extendedprice < 10000) removed', async () => {
    const { rows } = await queryFixture(
      'duckdb-lineitem-iceberg',
      2,
      'SELECT count(*) FILTER (WHERE l_extendedprice < 10000) AS small, min(l_shipdate) AS d FROM t',
    );
    expect(rows[0]?.small).toBe(0n);
    expect(rows[0]?.d).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe('duckdb-v1-legacy-manifests-field', () => {
  it('reads the v1 inline `manifests` list with identity(category) values', async () => {
    const { rows } = await queryFixture(
      'duckdb-v1-legacy-manifests-field',
      2,
      'SELECT DISTINCT category FROM t ORDER BY 1',
    );
    expect(rows.map((r) => r.category)).toEqual(['alpha', 'beta']);
  });
});

describe('duckdb-equality-deletes-partitioned', () => {
  it('deletes are partition-scoped: every surviving row is in a written partition', async () => {
    const { rows } = await queryFixture('duckdb-equality-deletes-partitioned', 6, 'SELECT name FROM t');
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => typeof r.name === 'string')).toBe(true);
  });
});

describe('icebird-athena-example', () => {
  it('reads id int and name string', async () => {
    const { columns, rows } = await queryFixture('icebird-athena-example', 1, 'SELECT * FROM t ORDER BY id');
    expect(columns).toEqual(['id', 'name']);
    expect(rows.every((r) => typeof r.id === 'number' && typeof r.name === 'string')).toBe(true);
  });
});
