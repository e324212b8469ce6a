/**
 * Our Parquet reader (lambdas/src/parquet/reader.ts) on every live data file of the foreign-engine
 * fixture tables (Spark, Iceberg Java, PyIceberg, Athena, DuckDB), at every metadata version, read
 * with that version's schema and compared value by value with DuckDB reading the same file by
 * field id (identity partition values given to both as constants / default values).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityPartitionConstants } from '../../lambdas/src/iceberg/partition-constants.ts';
import { planScan, type ScanPlan } from '../../lambdas/src/iceberg/scan.ts';
import { currentSnapshot } from '../../lambdas/src/iceberg/table-metadata.ts';
import type { IcebergValue, Row } from '../../lambdas/src/iceberg/values.ts';
import { readDataFile } from '../../lambdas/src/parquet/index.ts';
import {
  type FixtureTable,
  fixtureTableNames,
  loadFixtureTable,
  metadataFiles,
} from '../helpers/fixtures.ts';
import { canonicalRow, duckCanonicalSql, fromDuckJson } from '../helpers/parquet-canon.ts';
import { type Duck, openDuck } from '../unit/parquet/duck.ts';

/** Current snapshots whose manifest list is not checked in (fixture README "Known defect"). */
const MISSING_MANIFEST_LIST: Record<string, string[]> = { 'duckdb-equality-deletes': ['v3.metadata.json'] };

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck.close());

interface ReadFile {
  readonly path: string;
  readonly rows: Row[];
  readonly constants: Map<number, IcebergValue>;
}

/** Every live data file of the plan, read with the plan's schema and its identity partition constants. */
async function readAll(table: FixtureTable, plan: ScanPlan): Promise<ReadFile[]> {
  const out: ReadFile[] = [];
  for (const task of plan.tasks) {
    const spec = plan.specs.find((s) => s['spec-id'] === task.specId)!;
    const constants = identityPartitionConstants(plan.schema, spec, task.file.partition);
    const bytes = await table.read(task.file.file_path);
    const rows = readDataFile(bytes, plan.schema, { constants, filePath: task.file.file_path });
    expect(rows, task.file.file_path).toHaveLength(Number(task.file.record_count));
    out.push({ path: table.resolvePath(task.file.file_path), rows, constants });
  }
  return out;
}

async function expectSameAsDuckDB(plan: ScanPlan, files: readonly ReadFile[]): Promise<void> {
  const fields = plan.schema.fields;
  for (const f of files) {
    const duckRows = await duck.rows(duckCanonicalSql(f.path, fields, f.constants));
    expect(
      f.rows.map((r) => canonicalRow(r, fields)),
      f.path,
    ).toEqual(duckRows.map((r) => fromDuckJson(String(r.j), fields)));
  }
}

describe.each(fixtureTableNames())('%s', (name) => {
  const versions = metadataFiles(name).filter(
    (file) =>
      !MISSING_MANIFEST_LIST[name]?.includes(file) && currentSnapshot(loadFixtureTable(name, file).metadata),
  );

  it('has a version with data to read', () => {
    expect(versions.length).toBeGreaterThan(0);
  });

  it.each(versions)('%s: every live data file reads like DuckDB by field id', async (file) => {
    const table = loadFixtureTable(name, file);
    const plan = await planScan(table.metadata, table.read);
    expect(plan.tasks.length).toBeGreaterThan(0);
    await expectSameAsDuckDB(plan, await readAll(table, plan));
  });
});

describe('values the comparison relies on', () => {
  async function current(name: string, version?: number) {
    const table = loadFixtureTable(name, version);
    const plan = await planScan(table.metadata, table.read);
    return { plan, files: await readAll(table, plan) };
  }

  it('icebird-spark-rename-column v3: `event_date` read from the files’ `date` column; decimals exact', async () => {
    const { files } = await current('icebird-spark-rename-column', 3);
    const rows = files.flatMap((f) => f.rows);
    expect(rows).toHaveLength(4);
    expect(rows.every((r) => !Object.hasOwn(r, 'date'))).toBe(true);
    expect(rows.filter((r) => typeof r.event_date === 'number')).toHaveLength(3);
    expect(rows.map((r) => r.price)).toContain(9999999999n); // 99999999.99 as decimal(10,2)
    expect(rows.some((r) => typeof r.price === 'bigint' && r.price < 0n)).toBe(true);
  });

  it('icebird-java-bunnies: Avro-sanitised Parquet names (Breed_x20Name) matched by id', async () => {
    const { files } = await current('icebird-java-bunnies', 3);
    const rows = files.flatMap((f) => f.rows);
    expect(rows).toHaveLength(21);
    expect(
      rows.every((r) => typeof r['Breed Name'] === 'string' && typeof r['Popularity Rank'] === 'bigint'),
    ).toBe(true);
    expect(rows.every((r) => r.__happy__ === null)).toBe(true);
  });

  it('duckdb-partition-evolution: files without their partition columns take them from the manifest', async () => {
    const table = loadFixtureTable('duckdb-partition-evolution', 4);
    const plan = await planScan(table.metadata, table.read);
    const withConstants = (await readAll(table, plan)).flatMap((f) => f.rows);
    expect(withConstants).toHaveLength(6);
    expect(new Set(withConstants.map((r) => `${r.event_date}/${r.event_type}`))).toEqual(
      new Set(['19723/click', '19724/purchase', '19725/view', '19725/click', '19726/purchase', '19726/view']),
    );
    // Without the constants those columns are null in the files that lack them.
    const bare = await Promise.all(
      plan.tasks.map(async (t) => readDataFile(await table.read(t.file.file_path), plan.schema)),
    );
    expect(bare.flat().every((r) => r.event_date === null)).toBe(true);
    expect(bare.flat().filter((r) => r.event_type === null)).toHaveLength(4);
  });

  it('duckdb-lineitem-iceberg: 60,175 and 51,793 rows of decimal(15,2), dates and strings', async () => {
    const v1 = (await current('duckdb-lineitem-iceberg', 1)).files.flatMap((f) => f.rows);
    const v2 = (await current('duckdb-lineitem-iceberg', 2)).files.flatMap((f) => f.rows);
    expect(v1).toHaveLength(60175);
    expect(v2).toHaveLength(51793);
    expect(v2.every((r) => (r.l_extendedprice as bigint) >= 1_000_000n)).toBe(true); // DELETE … < 10000.00
    expect(v1.some((r) => (r.l_extendedprice as bigint) < 1_000_000n)).toBe(true);
  });
});
