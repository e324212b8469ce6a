/**
 * Row-level deletes of the fixture tables applied by our own code, as compaction will: data files
 * and position / equality delete files decoded by lambdas/src/parquet/reader.ts, deletes applied by
 * lambdas/src/iceberg/row-deletes.ts. Live row counts must equal the fixture READMEs and the
 * `floe query` engine (DuckDB) on the same version.
 *
 * Each data file is offered every live delete file of the snapshot in its partition (and every
 * global equality delete), read from the delete manifests here rather than from scan planning's
 * assignment, so the sequence-number and file-path rules of `liveRows` decide which apply.
 */
import { describe, expect, it } from 'vitest';
import {
  DataFileContent,
  decodeManifest,
  decodeManifestList,
  inheritManifestEntry,
  ManifestContent,
  ManifestEntryStatus,
} from '../../lambdas/src/iceberg/manifest/index.ts';
import { identityPartitionConstants } from '../../lambdas/src/iceberg/partition-constants.ts';
import { isUnpartitioned } from '../../lambdas/src/iceberg/partition-spec.ts';
import {
  type EqualityDeleteFile,
  liveRows,
  type PositionDeleteFile,
} from '../../lambdas/src/iceberg/row-deletes.ts';
import { type PlannedFile, planScan } from '../../lambdas/src/iceberg/scan.ts';
import { currentSnapshot } from '../../lambdas/src/iceberg/table-metadata.ts';
import type { Row } from '../../lambdas/src/iceberg/values.ts';
import { readDataFile, readEqualityDeletes, readPositionDeletes } from '../../lambdas/src/parquet/index.ts';
import { type FixtureTable, loadFixtureTable, queryFixture } from '../helpers/fixtures.ts';

/** README "Expected rows" of the tables with delete files, by metadata version. */
const EXPECTED: Record<string, Record<number, number>> = {
  'icebird-java-bunnies': { 2: 21, 3: 21, 4: 15, 5: 15 },
  'icebird-spark-bunnies': { 2: 21, 3: 20, 4: 20, 5: 20 },
  'duckdb-equality-deletes-partitioned': { 2: 4, 3: 3, 4: 2, 5: 4, 6: 3 },
  // "4 live equality-delete files at v7, 2 rows left of 6"; v4..v6 checked against DuckDB only.
  'duckdb-equality-deletes': { 4: -1, 5: -1, 6: -1, 7: 2 },
};

interface Decoded {
  readonly ref: PlannedFile;
  readonly position?: PositionDeleteFile;
  readonly equality?: EqualityDeleteFile;
}

function partitionKey(f: PlannedFile): string {
  return `${f.specId}|${JSON.stringify(f.file.partition, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`;
}

/** Every live delete file of the current snapshot, from its delete manifests. */
async function liveDeleteFiles(table: FixtureTable): Promise<PlannedFile[]> {
  const snapshot = currentSnapshot(table.metadata);
  const list = snapshot?.['manifest-list'];
  if (list === undefined) return [];
  const out: PlannedFile[] = [];
  for (const mf of decodeManifestList(await table.read(list))) {
    if (mf.content !== ManifestContent.DELETES) continue;
    for (const raw of decodeManifest(await table.read(mf.manifest_path)).entries) {
      if (raw.status === ManifestEntryStatus.DELETED) continue;
      const entry = inheritManifestEntry(raw, mf);
      out.push({
        file: entry.data_file,
        dataSequenceNumber: entry.sequence_number ?? 0n,
        specId: mf.partition_spec_id,
      });
    }
  }
  return out;
}

/** The live rows of a fixture table version, and how many delete files it has. */
async function liveRowsOf(name: string, version: number): Promise<{ rows: Row[]; deleteFiles: number }> {
  const table = loadFixtureTable(name, version);
  const plan = await planScan(table.metadata, table.read);
  const decoded: Decoded[] = [];
  for (const ref of await liveDeleteFiles(table)) {
    const bytes = await table.read(ref.file.file_path);
    const seq = ref.dataSequenceNumber;
    if (ref.file.content === DataFileContent.POSITION_DELETES) {
      decoded.push({ ref, position: { dataSequenceNumber: seq, deletes: readPositionDeletes(bytes) } });
    } else {
      const equalityIds = ref.file.equality_ids ?? [];
      const rows = readEqualityDeletes(bytes, plan.schema, equalityIds, { filePath: ref.file.file_path });
      decoded.push({ ref, equality: { dataSequenceNumber: seq, equalityIds, rows } });
    }
  }
  const unpartitioned = new Set(plan.specs.filter(isUnpartitioned).map((s) => s['spec-id']));
  const live: Row[] = [];
  for (const task of plan.tasks) {
    const spec = plan.specs.find((s) => s['spec-id'] === task.specId)!;
    const constants = identityPartitionConstants(plan.schema, spec, task.file.partition);
    const rows = readDataFile(await table.read(task.file.file_path), plan.schema, { constants });
    const candidates = decoded.filter(
      (d) => partitionKey(d.ref) === partitionKey(task) || (d.equality && unpartitioned.has(d.ref.specId)),
    );
    live.push(
      ...liveRows(
        plan.schema,
        { filePath: task.file.file_path, dataSequenceNumber: task.dataSequenceNumber, rows },
        {
          position: candidates.flatMap((d) => (d.position ? [d.position] : [])),
          equality: candidates.flatMap((d) => (d.equality ? [d.equality] : [])),
        },
      ),
    );
  }
  return { rows: live, deleteFiles: decoded.length };
}

describe.each(Object.entries(EXPECTED))('%s', (name, versions) => {
  it.each(Object.entries(versions).map(([v, n]) => [Number(v), n]))(
    'v%i: live rows after our deletes equal the README and the query engine',
    async (version, readme) => {
      const { rows } = await liveRowsOf(name, version);
      if (readme >= 0) expect(rows).toHaveLength(readme);
      const { rows: counted } = await queryFixture(name, version, 'SELECT count(*) AS n FROM t');
      expect(rows).toHaveLength(Number(counted[0]?.n));
    },
  );
});

describe('what the deletes remove', () => {
  it('icebird-java-bunnies v5: the position deletes and the equality delete both apply', async () => {
    const { rows, deleteFiles } = await liveRowsOf('icebird-java-bunnies', 5);
    expect(deleteFiles).toBe(2);
    const nz = rows.filter((r) => r['Breed Name'] === 'New Zealand');
    // The old 'New Zealand' row is deleted by equality; only the updated one (with __happy__) is left.
    expect(nz).toHaveLength(1);
    expect(nz[0]?.__happy__).toBe(true);
  });

  it('icebird-spark-bunnies v5: the dangling position delete (for a replaced file) removes nothing', async () => {
    const { rows, deleteFiles } = await liveRowsOf('icebird-spark-bunnies', 5);
    expect(deleteFiles).toBe(1);
    expect(rows).toHaveLength(20);
  });

  it('duckdb-equality-deletes v7: matches the rows the engine returns', async () => {
    const { rows } = await liveRowsOf('duckdb-equality-deletes', 7);
    const { rows: expected } = await queryFixture(
      'duckdb-equality-deletes',
      7,
      'SELECT id, name FROM t ORDER BY id',
    );
    expect(rows.map((r) => [r.id, r.name]).sort()).toEqual(expected.map((r) => [r.id, r.name]).sort());
  });
});
