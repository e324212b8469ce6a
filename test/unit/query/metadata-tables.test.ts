/**
 * The Athena/Trino metadata tables ("t$snapshots" …) on foreign fixture tables, each compared with
 * the metadata read independently: the metadata JSON as text (64-bit ids kept as digit strings),
 * the manifest list and manifests decoded straight from the files, the data files read by DuckDB.
 */
import { readFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import {
  decodeManifest,
  decodeManifestList,
  ManifestEntryStatus,
} from '../../../lambdas/src/iceberg/manifest/index.ts';
import { IcebergQueryEngine } from '../../../lambdas/src/query/engine.ts';
import { prepareQuery, type QueryTable } from '../../../lambdas/src/query/query-session.ts';
import { type Json, openDuck, sqlString } from '../../helpers/e2e.ts';
import { type FixtureTable, loadFixtureTable } from '../../helpers/fixtures.ts';

let engine: IcebergQueryEngine | undefined;
afterEach(() => engine?.close());

function asQueryTable(fx: FixtureTable): QueryTable {
  return { name: 't', bare: true, metadata: fx.metadata, read: fx.read, resolvePath: fx.resolvePath };
}

async function query(fx: FixtureTable, sql: string): Promise<Record<string, unknown>[]> {
  engine = new IcebergQueryEngine({ read: fx.read, resolvePath: fx.resolvePath });
  return (await engine.query(await prepareQuery(engine, [asQueryTable(fx)], sql))).rows;
}

/** The metadata JSON with every integer of 16+ digits quoted, so ids survive JSON.parse exactly. */
function metadataJson(fx: FixtureTable): Json {
  return JSON.parse(readFileSync(fx.metadataPath, 'utf8').replace(/:\s*(-?\d{16,})/g, ': "$1"')) as Json;
}

const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
const isoMicros = (ms: unknown) => `${new Date(Number(ms)).toISOString().slice(0, -1)}000+00:00`;

/** Live entries of a snapshot's manifests, walked here with the codec alone. */
async function walk(fx: FixtureTable, manifestList: string) {
  const manifests = decodeManifestList(await fx.read(manifestList));
  const entries = [];
  for (const mf of manifests) {
    for (const e of decodeManifest(await fx.read(mf.manifest_path)).entries) {
      if (e.status !== ManifestEntryStatus.DELETED) entries.push({ mf, file: e.data_file });
    }
  }
  return { manifests, entries };
}

describe('metadata tables of icebird-java-bunnies (position and equality deletes, 3 snapshots)', () => {
  const fx = loadFixtureTable('icebird-java-bunnies');
  const json = metadataJson(fx);
  const snapshots = json.snapshots as Json[];

  it('$snapshots: every snapshot with exact ids, time, operation, manifest list and summary', async () => {
    const rows = await query(fx, 'SELECT * FROM "t$snapshots"');
    expect(snapshots).toHaveLength(3);
    expect(rows.map((r) => str(r.snapshot_id))).toEqual(snapshots.map((s) => s['snapshot-id']));
    expect(rows.map((r) => str(r.parent_id))).toEqual(snapshots.map((s) => str(s['parent-snapshot-id'])));
    rows.forEach((r, i) => {
      const s = snapshots[i]!;
      const { operation, ...summary } = s.summary as Record<string, string>;
      expect(r.committed_at).toBe(isoMicros(s['timestamp-ms']));
      expect(r.operation).toBe(operation);
      expect(r.manifest_list).toBe(s['manifest-list']);
      expect(
        Object.fromEntries((r.summary as { key: string; value: string }[]).map((e) => [e.key, e.value])),
      ).toEqual(summary);
    });
  });

  it('$history follows the snapshot log; $refs holds main at the current snapshot', async () => {
    const history = await query(fx, 'SELECT * FROM "t$history"');
    const log = json['snapshot-log'] as Json[];
    expect(history.map((r) => [r.made_current_at, str(r.snapshot_id), r.is_current_ancestor])).toEqual(
      log.map((e) => [isoMicros(e['timestamp-ms']), e['snapshot-id'], true]),
    );
    expect(history.map((r) => str(r.parent_id))).toEqual([
      null,
      log[0]!['snapshot-id'],
      log[1]!['snapshot-id'],
    ]);
    const refs = await query(fx, 'SELECT * FROM "t$refs"');
    expect(refs).toEqual([
      {
        name: 'main',
        type: 'BRANCH',
        snapshot_id: BigInt(json['current-snapshot-id'] as string),
        max_reference_age_in_ms: null,
        min_snapshots_to_keep: null,
        max_snapshot_age_in_ms: null,
      },
    ]);
  });

  it('$files lists the live data and delete files of the current snapshot', async () => {
    const current = snapshots.find((s) => s['snapshot-id'] === json['current-snapshot-id'])!;
    const { entries } = await walk(fx, String(current['manifest-list']));
    const rows = await query(fx, 'SELECT * FROM "t$files" ORDER BY file_path');
    const want = entries
      .map(({ file }) => [
        file.content,
        file.file_path,
        String(file.record_count),
        String(file.file_size_in_bytes),
      ])
      .sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    expect(rows.map((r) => [r.content, r.file_path, str(r.record_count), str(r.file_size_in_bytes)])).toEqual(
      want,
    );
    expect(rows.map((r) => r.content).sort()).toEqual([0, 0, 1, 2]);
    const eq = rows.find((r) => r.content === 2)!;
    expect(eq.equality_ids).toEqual([1]);
    expect(eq.lower_bounds).toEqual([{ key: 1, value: 'New Zealand' }]);
    for (const r of rows)
      expect(statSync(fx.resolvePath(String(r.file_path))).size).toBe(Number(r.file_size_in_bytes));
  });

  it('$files and $manifests time travel with FOR VERSION AS OF', async () => {
    const first = snapshots[0]!;
    const files = await query(
      fx,
      `SELECT file_path FROM "t$files" FOR VERSION AS OF ${first['snapshot-id']}`,
    );
    expect(files.map((r) => String(r.file_path).split('/').at(-1))).toEqual(['bunnies-initial.parquet']);
    const manifests = await query(
      fx,
      `SELECT added_snapshot_id FROM "t$manifests" FOR VERSION AS OF ${first['snapshot-id']}`,
    );
    expect(manifests.map((r) => str(r.added_snapshot_id))).toEqual([first['snapshot-id']]);
  });

  it('$manifests matches the manifest list, lengths matching the files', async () => {
    const current = snapshots.find((s) => s['snapshot-id'] === json['current-snapshot-id'])!;
    const { manifests } = await walk(fx, String(current['manifest-list']));
    const rows = await query(fx, 'SELECT * FROM "t$manifests"');
    expect(
      rows.map((r) => [
        r.content,
        r.path,
        str(r.length),
        str(r.added_snapshot_id),
        r.added_data_files_count,
        str(r.added_rows_count),
      ]),
    ).toEqual(
      manifests.map((m) => [
        m.content,
        m.manifest_path,
        String(m.manifest_length),
        String(m.added_snapshot_id),
        m.added_files_count,
        String(m.added_rows_count),
      ]),
    );
    for (const r of rows) expect(statSync(fx.resolvePath(String(r.path))).size).toBe(Number(r.length));
    // The delete manifests' snapshot ids: exact 64-bit values from the JSON.
    expect(
      rows
        .filter((r) => r.content === 1)
        .map((r) => str(r.added_snapshot_id))
        .sort(),
    ).toEqual([snapshots[1]!['snapshot-id'], snapshots[2]!['snapshot-id']].sort());
  });

  it('an unknown $ suffix is an error listing the metadata tables', async () => {
    const err = await query(fx, 'SELECT * FROM "t$properties"').catch((e: unknown) => e);
    expect(isFloeError(err, ErrorKind.NotFound)).toBe(true);
    expect((err as Error).message).toMatch(/t\$properties.*\$snapshots, \$history, \$files/);
  });

  it('builds metadata tables only when the SQL names one', async () => {
    const tables = 'SELECT table_name FROM information_schema.tables ORDER BY 1';
    engine = new IcebergQueryEngine({ read: fx.read, resolvePath: fx.resolvePath });
    await prepareQuery(engine, [asQueryTable(fx)], 'SELECT count(*) FROM t');
    expect((await engine.query(tables)).rows.map((r) => r.table_name)).toEqual(['t']);
    await prepareQuery(engine, [asQueryTable(fx)], 'SELECT count(*) FROM "t$files"');
    expect((await engine.query(tables)).rows.map((r) => r.table_name)).toEqual(['t', 't$files']);
  });
});

describe('metadata tables of duckdb-equality-deletes-partitioned (identity(name), deletes)', () => {
  const fx = loadFixtureTable('duckdb-equality-deletes-partitioned');

  it('$partitions: per partition the live data files, their rows and bytes, and column bounds', async () => {
    const json = metadataJson(fx);
    const current = (json.snapshots as Json[]).find((s) => s['snapshot-id'] === json['current-snapshot-id'])!;
    const { entries } = await walk(fx, String(current['manifest-list']));
    const data = entries.filter((e) => e.file.content === 0);
    const byName = new Map<string, typeof data>();
    for (const e of data)
      byName.set(String(e.file.partition[0]), [...(byName.get(String(e.file.partition[0])) ?? []), e]);

    const rows = await query(fx, 'SELECT * FROM "t$partitions" ORDER BY partition.name');
    expect(rows.map((r) => (r.partition as Json).name)).toEqual([...byName.keys()].sort());
    const duck = await openDuck();
    try {
      for (const r of rows) {
        const files = byName.get(String((r.partition as Json).name))!;
        expect(str(r.record_count)).toBe(String(files.reduce((n, e) => n + e.file.record_count, 0n)));
        expect(str(r.file_count)).toBe(String(files.length));
        expect(str(r.total_size)).toBe(String(files.reduce((n, e) => n + e.file.file_size_in_bytes, 0n)));
        // The bounds cover the files' rows before deletes: read the files themselves.
        const paths = files.map((e) => sqlString(fx.resolvePath(e.file.file_path))).join(', ');
        const [actual] = await duck.rows(`SELECT min(id) AS lo, max(id) AS hi FROM read_parquet([${paths}])`);
        const id = (r.data as Json).id as Json;
        expect([Number(id.min), Number(id.max), str(id.null_count)]).toEqual([
          Number(actual!.lo),
          Number(actual!.hi),
          '0',
        ]);
      }
    } finally {
      duck.close();
    }
  });

  it('$manifests shows each partition summary human-readable', async () => {
    const rows = await query(fx, 'SELECT content, partition_summaries FROM "t$manifests"');
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const [s] = r.partition_summaries as Json[];
      expect(typeof s?.lower_bound).toBe('string');
      expect(String(s?.lower_bound) <= String(s?.upper_bound)).toBe(true);
    }
  });
});

describe('metadata tables of duckdb-partition-evolution (spec 0 → spec 1)', () => {
  const fx = loadFixtureTable('duckdb-partition-evolution');

  it("$files: one partition struct over both specs, NULL where a file's spec lacks the field", async () => {
    const json = metadataJson(fx);
    const current = (json.snapshots as Json[]).find((s) => s['snapshot-id'] === json['current-snapshot-id'])!;
    const { entries } = await walk(fx, String(current['manifest-list']));
    const rows = await query(fx, 'SELECT file_path, spec_id, partition FROM "t$files"');
    expect(rows).toHaveLength(entries.length);
    for (const { mf, file } of entries) {
      const r = rows.find((x) => x.file_path === file.file_path)!;
      expect(r.spec_id).toBe(mf.partition_spec_id);
      const p = r.partition as Json;
      expect(Object.keys(p)).toEqual(['event_date', 'event_type']);
      expect(p.event_type).toBe(mf.partition_spec_id === 0 ? null : file.partition[1]);
      expect(p.event_date).toBe(new Date(Number(file.partition[0]) * 86_400_000).toISOString().slice(0, 10));
    }
    expect(new Set(rows.map((r) => r.spec_id))).toEqual(new Set([0, 1]));
  });
});
