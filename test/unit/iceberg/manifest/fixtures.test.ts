/**
 * Decodes every manifest and manifest list of the foreign-engine fixtures (Spark, Java, PyIceberg,
 * Athena) and checks facts stated by the fixture READMEs and metadata JSON, or cross-checked between
 * files written independently by those engines (summaries vs. entries, paths vs. partition values).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type DecodedManifest,
  decodeManifest,
  inheritManifestEntries,
  type ManifestFile,
  readManifestList,
} from '../../../../lambdas/src/iceberg/manifest/index.ts';
import { FIXTURES_ROOT } from '../../../helpers/fixture-root.ts';

const ROOT = FIXTURES_ROOT;
const tables = readdirSync(ROOT).filter((t) => existsSync(join(ROOT, t, 'metadata')));
const avroFiles = tables.flatMap((t) =>
  readdirSync(join(ROOT, t, 'metadata'))
    .filter((f) => f.endsWith('.avro'))
    .map((f) => ({ table: t, file: f, path: join(ROOT, t, 'metadata', f) })),
);
const read = (table: string, file: string) => readFileSync(join(ROOT, table, 'metadata', file));
const base = (p: string) => p.split('/').pop()!;
const manifestOf = (table: string, m: ManifestFile): DecodedManifest =>
  decodeManifest(read(table, base(m.manifest_path)));
const isoDay = (days: number) => new Date(days * 86_400_000).toISOString().slice(0, 10);

describe('every fixture Avro file decodes', () => {
  it('finds the fixture files', () => {
    expect(avroFiles.length).toBeGreaterThanOrEqual(60);
  });

  it.each(avroFiles.map((f) => [`${f.table}/${f.file}`, f] as const))('%s', (_name, f) => {
    const bytes = readFileSync(f.path);
    if (f.file.startsWith('snap-')) {
      const list = readManifestList(bytes);
      expect(list.manifests.length).toBeGreaterThan(0);
      const idInName = /^snap-(\d+)-/.exec(f.file)?.[1];
      if (idInName) expect(list.snapshotId).toBe(BigInt(idInName));
      for (const m of list.manifests) {
        expect(typeof m.added_snapshot_id).toBe('bigint');
        expect(m.manifest_length).toBeGreaterThan(0n);
        if (list.formatVersion === 1) expect(m.sequence_number).toBe(0n);
      }
    } else {
      const m = decodeManifest(bytes);
      expect(m.entries.length).toBeGreaterThan(0);
      for (const e of m.entries) {
        expect(e.data_file.partition).toHaveLength(m.partitionFields.length);
        expect(e.data_file.file_path).toMatch(/\.(parquet|puffin|avro|orc)$/);
        expect(typeof e.data_file.record_count).toBe('bigint');
        expect(e.data_file.file_format.toUpperCase()).toBe('PARQUET');
        expect(m.content === 1).toBe(e.data_file.content !== 0);
        if (m.formatVersion === 1) expect(e.sequence_number).toBeUndefined();
      }
    }
  });
});

describe('snapshot summaries agree with the manifests they point to', () => {
  const cases: [string, string, bigint | string, Record<string, string>][] = [];
  for (const t of tables) {
    for (const mf of readdirSync(join(ROOT, t, 'metadata')).filter((f) => f.endsWith('.metadata.json'))) {
      const meta = JSON.parse(readFileSync(join(ROOT, t, 'metadata', mf), 'utf8'));
      for (const s of meta.snapshots ?? []) {
        const list = s['manifest-list'] as string | undefined;
        // duckdb-equality-deletes' README: one manifest list is missing on purpose; v1 inline lists have none.
        if (list && existsSync(join(ROOT, t, 'metadata', base(list))))
          cases.push([t, base(list), mf, s.summary]);
      }
    }
  }

  it('covers the snapshots of every table with manifest lists', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
  });

  it.each(cases)('%s %s (%s)', (table, listFile, _mf, summary) => {
    let records = 0n;
    let dataFiles = 0;
    let deleteFiles = 0;
    for (const m of readManifestList(read(table, listFile)).manifests) {
      for (const e of inheritManifestEntries(manifestOf(table, m).entries, m)) {
        if (e.status === 2) continue;
        if (e.data_file.content === 0) {
          records += e.data_file.record_count;
          dataFiles++;
        } else deleteFiles++;
      }
    }
    expect(String(records)).toBe(summary['total-records']);
    expect(String(dataFiles)).toBe(summary['total-data-files']);
    expect(String(deleteFiles)).toBe(summary['total-delete-files'] ?? '0');
  });
});

describe('facts from the fixture READMEs', () => {
  it('icebird-spark-rename-column: bucket[4](id) + identity(date), values match the Hive-style paths', () => {
    const t = 'icebird-spark-rename-column';
    const m = decodeManifest(read(t, 'abf62b15-903b-40b6-9e6b-26bcdceac9b3-m0.avro'));
    expect(m.partitionFields).toEqual([
      { fieldId: 1000, name: 'id_bucket' },
      { fieldId: 1001, name: 'date' },
    ]);
    expect(m.partitionSpecFields?.map((f) => f.transform)).toEqual(['bucket[4]', 'identity']);
    for (const e of m.entries) {
      const [bucket, day] = e.data_file.partition as [number, number | null];
      expect(bucket).toBeGreaterThanOrEqual(0);
      expect(bucket).toBeLessThan(4);
      expect(e.data_file.file_path).toContain(
        `/id_bucket=${bucket}/date=${day === null ? 'null' : isoDay(day)}/`,
      );
    }
    const nullDate = m.entries.filter((e) => e.data_file.partition[1] === null);
    expect(nullDate.map((e) => e.data_file.partition[0])).toEqual([3]); // data/id_bucket=3/date=null/
    expect(m.entries.reduce((n, e) => n + e.data_file.record_count, 0n)).toBe(4n); // "Expected rows: 4"
  });

  it('icebird-java-bunnies: equality delete on field 1 ("Breed Name"), position delete of 6 rows', () => {
    const t = 'icebird-java-bunnies';
    const list = readManifestList(
      read(t, 'snap-9158179788527662767-1-a01399a1-e864-4562-b921-c8cb56e6e4a9.avro'),
    );
    expect(list.sequenceNumber).toBe(3n);
    expect(list.parentSnapshotId).toBe(6458828015811002920n);
    const entries = list.manifests.flatMap((m) => inheritManifestEntries(manifestOf(t, m).entries, m));
    const eq = entries.find((e) => e.data_file.content === 2)!;
    expect(base(eq.data_file.file_path)).toBe('bunnies-eq-delete-new-zealand.parquet');
    expect(eq.data_file.equality_ids).toEqual([1]);
    expect(eq.sequence_number).toBe(3n); // ADDED in sequence 3, inherited
    const pos = entries.find((e) => e.data_file.content === 1)!;
    expect(base(pos.data_file.file_path)).toBe('bunnies-pos-deletes.parquet');
    expect(pos.data_file.record_count).toBe(6n);
    expect(pos.sequence_number).toBe(2n);
    expect(entries.map((e) => base(e.data_file.file_path))).toContain('bunnies-updated-new-zealand.parquet');
  });

  it('duckdb-lineitem-iceberg: 60,175 rows, then an overwrite leaving 51,793 and a DELETED entry', () => {
    const t = 'duckdb-lineitem-iceberg';
    const list = readManifestList(
      read(t, 'snap-2354745328521181395-1-179b4fb1-0366-4f7d-ad35-99ee8da0abf5.avro'),
    );
    const entries = list.manifests.flatMap((m) => inheritManifestEntries(manifestOf(t, m).entries, m));
    const deleted = entries.find((e) => e.status === 2)!;
    expect(deleted.data_file.record_count).toBe(60175n);
    expect(deleted.sequence_number).toBe(1n); // DELETED entries carry their original sequence number
    expect(entries.find((e) => e.status === 1)!.data_file.record_count).toBe(51793n);
    const lower = entries[0]!.data_file.lower_bounds;
    expect(lower instanceof Map && [...lower.keys()].every((k) => typeof k === 'number')).toBe(true);
  });

  it('duckdb-partition-evolution: spec 0 identity(event_date), spec 1 adds identity(event_type)', () => {
    const t = 'duckdb-partition-evolution';
    const list = readManifestList(
      read(t, 'snap-5128628767169163501-1-fee93099-6425-4d83-bd7c-0aa646533090.avro'),
    );
    expect(list.manifests.map((m) => m.partition_spec_id).sort()).toEqual([0, 1]);
    const spec1 = manifestOf(t, list.manifests.find((m) => m.partition_spec_id === 1)!);
    expect(spec1.specId).toBe(1);
    expect(spec1.partitionFields.map((f) => f.name)).toEqual(['event_date', 'event_type']);
    for (const e of spec1.entries) {
      expect(typeof e.data_file.partition[0]).toBe('number');
      expect(typeof e.data_file.partition[1]).toBe('string');
    }
  });

  it('duckdb-v1-legacy-manifests-field: v1 identity(category), 3 rows in 2 files', () => {
    const t = 'duckdb-v1-legacy-manifests-field';
    const m = decodeManifest(read(t, 'd65f86b0-b799-467f-b1f4-9c697e4c4fc7-m0.avro'));
    expect(m.formatVersion).toBe(1);
    expect(m.content).toBe(0);
    expect(m.entries.map((e) => e.data_file.partition[0]).sort()).toEqual(['alpha', 'beta']);
    expect(m.entries.reduce((n, e) => n + e.data_file.record_count, 0n)).toBe(3n);
    const list = readManifestList(
      read(t, 'snap-2456114553637229296-1-d65f86b0-b799-467f-b1f4-9c697e4c4fc7.avro'),
    );
    expect(list.formatVersion).toBe(1);
    expect(list.manifests[0]).toMatchObject({ content: 0, sequence_number: 0n, min_sequence_number: 0n });
  });

  it('duckdb-v1-pyiceberg-merch: PyIceberg v1, null counts read as 0, sequence numbers inherit 0', () => {
    const t = 'duckdb-v1-pyiceberg-merch';
    const nulls = readManifestList(read(t, 'snap-v1-null-counts.avro'));
    expect(nulls.manifests).toHaveLength(2);
    expect(nulls.manifests.map((m) => [m.added_files_count, m.existing_rows_count])).toEqual([
      [0, 0n],
      [0, 0n],
    ]);
    // README: the overwrite manifest lists its 2 new files as EXISTING, the other has 2 DELETED entries.
    const counted = readManifestList(
      read(t, 'snap-5191822260710938731-0-ccab0b80-739e-4dc6-a95d-306d70e93d65.avro'),
    );
    expect(counted.manifests.map((m) => [m.existing_files_count, m.deleted_files_count])).toEqual([
      [2, 0],
      [0, 2],
    ]);
    const entries = counted.manifests.flatMap((m) => inheritManifestEntries(manifestOf(t, m).entries, m));
    expect(entries.map((e) => e.status)).toEqual([0, 0, 2, 2]);
    expect(entries.every((e) => e.sequence_number === 0n && e.file_sequence_number === 0n)).toBe(true);
  });
});

describe('manifest-list partition summaries agree with the manifests’ partition values', () => {
  const le32 = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, 4).getInt32(0, true);
  const lists = avroFiles.filter((f) => f.file.startsWith('snap-'));
  it.each(lists.map((f) => [`${f.table}/${f.file}`, f] as const))('%s', (_n, f) => {
    for (const m of readManifestList(readFileSync(f.path)).manifests) {
      if (!m.partitions?.length) continue;
      const dm = manifestOf(f.table, m);
      m.partitions.forEach((s, i) => {
        const kind = dm.partitionType.fields[i]!.type.kind;
        const values = dm.entries.map((e) => e.data_file.partition[i]);
        expect(s.contains_null).toBe(values.some((v) => v === null));
        const present = values.filter((v) => v !== null) as (string | number)[];
        if (!s.lower_bound || !s.upper_bound) return;
        const decode = (b: Uint8Array) => (kind === 'string' ? Buffer.from(b).toString('utf8') : le32(b));
        const sorted = [...present].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(['string', 'int', 'date']).toContain(kind);
        expect(decode(s.lower_bound)).toBe(sorted[0]);
        expect(decode(s.upper_bound)).toBe(sorted[sorted.length - 1]);
      });
    }
  });
});
