/**
 * Time travel over several tables: which table `--snapshot` and `--as-of` apply to. Two fixtures:
 * `spark` (icebird-spark-bunnies, first commit earlier) and `java` (icebird-java-bunnies).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import { IcebergQueryEngine } from '../../../lambdas/src/query/engine.ts';
import {
  prepareQuery,
  type QueryTable,
  type TimeTravelOptions,
} from '../../../lambdas/src/query/query-session.ts';
import { loadFixtureTable } from '../../helpers/fixtures.ts';

const spark = loadFixtureTable('icebird-spark-bunnies');
const java = loadFixtureTable('icebird-java-bunnies');
const tables: QueryTable[] = [
  { name: 'spark', bare: true, metadata: spark.metadata, read: spark.read, resolvePath: spark.resolvePath },
  { name: 'java', bare: true, metadata: java.metadata, read: java.read, resolvePath: java.resolvePath },
];
const javaFirst = java.metadata.snapshots[0]!;
const sparkFirst = spark.metadata.snapshots[0]!;

let engine: IcebergQueryEngine | undefined;
afterEach(() => engine?.close());

async function run(sql: string, opts: TimeTravelOptions): Promise<Record<string, unknown>[]> {
  engine = new IcebergQueryEngine({ read: java.read, resolvePath: java.resolvePath });
  return (await engine.query(await prepareQuery(engine, tables, sql, opts))).rows;
}

describe('prepareQuery: time travel over several tables', () => {
  it('--snapshot ID applies to the one table the SQL names, and asks which when it names two', async () => {
    const id = javaFirst['snapshot-id'];
    expect(
      await run('SELECT count(*) AS n FROM java', { snapshots: [{ selector: { kind: 'snapshot-id', id } }] }),
    ).toEqual([{ n: 21n }]);
    const both = 'SELECT (SELECT count(*) FROM java) AS j, (SELECT count(*) FROM spark) AS s';
    const err = await run(both, { snapshots: [{ selector: { kind: 'snapshot-id', id } }] }).catch(
      (e: unknown) => e,
    );
    expect(isFloeError(err, ErrorKind.DataInvalid)).toBe(true);
    expect((err as Error).message).toContain(
      `the SQL names java, spark; say which one: --snapshot TABLE=${id}`,
    );
    expect(
      await run(both, { snapshots: [{ table: 'java', selector: { kind: 'snapshot-id', id } }] }),
    ).toEqual([{ j: 21n, s: 20n }]);
  });

  it('--as-of leaves out a table that did not exist yet, unless the SQL reads it', async () => {
    const asOfMs = javaFirst['timestamp-ms'] - 1n;
    expect(asOfMs).toBeGreaterThan(sparkFirst['timestamp-ms']);
    // spark's last commit is older still: it reads as it is now (README: 20 rows).
    expect(await run('SELECT count(*) AS n FROM spark', { asOfMs })).toEqual([{ n: 20n }]);
    const err = await run('SELECT count(*) AS n FROM java', { asOfMs }).catch((e: unknown) => e);
    expect(isFloeError(err, ErrorKind.NotFound)).toBe(true);
    expect((err as Error).message).toMatch(/^table java has no snapshot at or before/);
    // Its history is still there to look at.
    expect((await run('SELECT count(*) AS n FROM "java$snapshots"', { asOfMs }))[0]?.n).toBe(3n);
  });

  it('FOR VERSION AS OF compares two snapshots of one table in one query', async () => {
    const [a, , c] = java.metadata.snapshots;
    const rows = await run(
      `SELECT count(*) AS n FROM java FOR VERSION AS OF ${a!['snapshot-id']} old
       WHERE NOT EXISTS (SELECT 1 FROM java FOR VERSION AS OF ${c!['snapshot-id']} cur WHERE cur."Breed Name" = old."Breed Name")`,
      {},
    );
    // Breeds of the first snapshot gone at the last one: the 6 deleted by position (New Zealand,
    // deleted by equality, came back as its updated row).
    expect(rows).toEqual([{ n: 6n }]);
  });
});
