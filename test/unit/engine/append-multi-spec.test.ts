import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileCatalog } from '../../../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import { fixedClock, seededIds } from '../../../lambdas/src/adapters/local/system-clock.ts';
import { commitAppend, filesBySpec, type PreparedAppend } from '../../../lambdas/src/engine/append.ts';
import {
  type DataFile,
  DataFileContent,
  decodeManifest,
  decodeManifestList,
} from '../../../lambdas/src/iceberg/manifest/index.ts';
import { newTableMetadata, type TableUpdate } from '../../../lambdas/src/iceberg/metadata/index.ts';
import { planScan } from '../../../lambdas/src/iceberg/scan.ts';
import { field, T } from '../../../lambdas/src/iceberg/types.ts';
import type { LoadedTable } from '../../../lambdas/src/ports/catalog.ts';

const id = { namespace: 'db', name: 't' };

/** Spec 1: identity partition on column `x` (id 1), added to a table created unpartitioned (spec 0). */
const EVOLVE_SPEC: readonly TableUpdate[] = [
  {
    action: 'add-spec',
    spec: { 'spec-id': 1, fields: [{ name: 'x', transform: 'identity', 'source-id': 1, 'field-id': 1000 }] },
  },
  { action: 'set-default-spec', 'spec-id': -1 },
];

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'floe-append-multi-spec-'));
  const store = new LocalObjectStore();
  const catalog = new FileCatalog(store, fileUri(dir));
  const meta = newTableMetadata({
    location: catalog.defaultLocation(id),
    schema: { schemaId: 0, fields: [field(1, 'x', T.long), field(2, 'y', T.string)] },
    formatVersion: 2,
    tableUuid: '00000000-0000-4000-8000-000000000001',
    nowMs: 1_700_000_000_000,
  });
  await catalog.createTable(id, meta);
  return {
    dir,
    store,
    catalog,
    deps: { catalog, store, clock: fixedClock(1_700_000_001_000), ids: seededIds(11), sleep: async () => {} },
  };
}

function dataFile(path: string, rows: bigint, partition: readonly unknown[] = []): DataFile {
  return {
    content: DataFileContent.DATA,
    file_path: path,
    file_format: 'PARQUET',
    partition,
    record_count: rows,
    file_size_in_bytes: 100n + rows,
  };
}

async function manifestsOf(store: LocalObjectStore, t: LoadedTable) {
  const snap = t.metadata.snapshots.find((s) => s['snapshot-id'] === t.metadata['current-snapshot-id']);
  expect(snap).toBeDefined();
  return { snapshot: snap!, manifests: decodeManifestList(await store.get(snap!['manifest-list']!)) };
}

describe('filesBySpec', () => {
  const a = dataFile('a', 1n);
  const b = dataFile('b', 2n);
  const c = dataFile('c', 3n);

  it('groups the prepared files by spec id, the prepared spec first', () => {
    const p: PreparedAppend = {
      updates: [],
      specId: 2,
      dataFiles: [a],
      otherSpecFiles: new Map([
        [0, [b]],
        [1, [c]],
      ]),
    };
    const out = filesBySpec(p);
    expect([...out.keys()]).toEqual([2, 0, 1]);
    expect(out.get(2)).toEqual([a]);
    expect(out.get(0)).toEqual([b]);
    expect(out.get(1)).toEqual([c]);
  });

  it('leaves out specs without files', () => {
    const out = filesBySpec({
      updates: [],
      specId: 1,
      dataFiles: [],
      otherSpecFiles: new Map([
        [0, [a]],
        [3, []],
      ]),
    });
    expect([...out.keys()]).toEqual([0]);
    expect(filesBySpec({ updates: [], specId: 0, dataFiles: [] }).size).toBe(0);
  });

  it('merges other-spec files of the prepared spec into its group (one manifest per spec)', () => {
    const out = filesBySpec({
      updates: [],
      specId: 1,
      dataFiles: [a],
      otherSpecFiles: new Map([[1, [b, c]]]),
    });
    expect(out.size).toBe(1);
    expect(out.get(1)).toEqual([a, b, c]);
  });

  it('does not change the prepared lists', () => {
    const main = [a];
    filesBySpec({ updates: [], specId: 1, dataFiles: main, otherSpecFiles: new Map([[1, [b]]]) });
    expect(main).toEqual([a]);
  });
});

describe('commitAppend with files of several specs', () => {
  it('evolves the spec and commits old-spec and new-spec files in one snapshot, one manifest per spec', async () => {
    const { dir, store, catalog, deps } = await setup();
    const root = fileUri(dir);
    const oldFiles = [dataFile(`${root}/old-1.parquet`, 3n), dataFile(`${root}/old-2.parquet`, 4n)];
    const newFiles = [dataFile(`${root}/x=7/new-1.parquet`, 5n, [7n])];
    const prepared: PreparedAppend = {
      updates: EVOLVE_SPEC,
      specId: 1,
      dataFiles: newFiles,
      otherSpecFiles: new Map([[0, oldFiles]]),
      summary: { 'floe.watermark': `${root}/db/t/metadata/floe-watermark-1.json` },
    };
    const r = await commitAppend(deps, {
      table: id,
      summary: { 'floe.load-id': 'load-42' },
      prepare: async () => prepared,
    });
    expect(r.snapshot).toBeDefined();

    const t = await catalog.loadTable(id);
    expect(t.metadata['default-spec-id']).toBe(1);
    expect(t.metadata['partition-specs'].map((s) => s['spec-id'])).toEqual([0, 1]);

    const { snapshot, manifests } = await manifestsOf(store, t);
    expect(snapshot['snapshot-id']).toBe(r.snapshot!['snapshot-id']);
    expect(manifests).toHaveLength(2);
    const bySpec = new Map(manifests.map((m) => [m.partition_spec_id, m]));
    expect([...bySpec.keys()].sort()).toEqual([0, 1]);
    expect(bySpec.get(0)!.added_files_count).toBe(2);
    expect(bySpec.get(0)!.added_rows_count).toBe(7n);
    expect(bySpec.get(1)!.added_files_count).toBe(1);
    expect(bySpec.get(1)!.added_rows_count).toBe(5n);
    for (const m of manifests) {
      expect(m.added_snapshot_id).toBe(snapshot['snapshot-id']);
      expect(m.sequence_number).toBe(snapshot['sequence-number']);
    }

    // Each manifest file is written with its own spec and holds exactly that spec's files.
    const spec0 = decodeManifest(await store.get(bySpec.get(0)!.manifest_path));
    expect(spec0.specId).toBe(0);
    expect(spec0.partitionFields).toEqual([]);
    expect(spec0.entries.map((e) => e.data_file.file_path).sort()).toEqual(oldFiles.map((f) => f.file_path));
    const spec1 = decodeManifest(await store.get(bySpec.get(1)!.manifest_path));
    expect(spec1.specId).toBe(1);
    expect(spec1.partitionFields.map((f) => f.name)).toEqual(['x']);
    expect(spec1.entries.map((e) => e.data_file.file_path)).toEqual([newFiles[0]!.file_path]);
    expect(spec1.entries[0]!.data_file.partition).toEqual([7n]);

    // A reader sees every file live in the snapshot, each with the spec it was written with.
    const plan = await planScan(t.metadata, (uri) => store.get(uri));
    const live = plan.tasks.map((task) => [task.file.file_path, task.specId] as const);
    expect(new Map(live)).toEqual(
      new Map([
        [oldFiles[0]!.file_path, 0],
        [oldFiles[1]!.file_path, 0],
        [newFiles[0]!.file_path, 1],
      ]),
    );

    expect(snapshot.summary['added-data-files']).toBe('3');
    expect(snapshot.summary['added-records']).toBe('12');
    expect(snapshot.summary['total-data-files']).toBe('3');
    expect(snapshot.summary['total-records']).toBe('12');
    expect(snapshot.summary['manifests-created']).toBe('2');
    expect(snapshot.summary['floe.watermark']).toBe(prepared.summary!['floe.watermark']);
    expect(snapshot.summary['floe.load-id']).toBe('load-42');
  });

  it('appends older-spec files to a table whose spec was evolved by an earlier commit', async () => {
    const { dir, store, catalog, deps } = await setup();
    const root = fileUri(dir);
    // First commit: only the spec change (no files, no snapshot).
    const evolved = await commitAppend(deps, {
      table: id,
      prepare: async () => ({ updates: EVOLVE_SPEC, specId: 1, dataFiles: [] }),
    });
    expect(evolved.snapshot).toBeUndefined();
    expect(evolved.table.metadata['default-spec-id']).toBe(1);

    const staged = [dataFile(`${root}/staged-a.parquet`, 10n), dataFile(`${root}/staged-b.parquet`, 1n)];
    const fresh = [dataFile(`${root}/x=1/f.parquet`, 2n, [1n]), dataFile(`${root}/x=2/g.parquet`, 3n, [2n])];
    const r = await commitAppend(deps, {
      table: id,
      prepare: async () => ({
        updates: [],
        specId: 1,
        dataFiles: fresh,
        otherSpecFiles: new Map([[0, staged]]),
        summary: { 'floe.watermark': 'file:///w.json' },
      }),
    });
    const t = await catalog.loadTable(id);
    const { snapshot, manifests } = await manifestsOf(store, t);
    expect(snapshot['snapshot-id']).toBe(r.snapshot!['snapshot-id']);
    expect(manifests.map((m) => [m.partition_spec_id, m.added_files_count]).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    const plan = await planScan(t.metadata, (uri) => store.get(uri));
    expect(plan.tasks.map((x) => x.file.file_path).sort()).toEqual(
      [...staged, ...fresh].map((f) => f.file_path).sort(),
    );
    expect(snapshot.summary['added-data-files']).toBe('4');
    expect(snapshot.summary['added-records']).toBe('16');
    expect(snapshot.summary['floe.watermark']).toBe('file:///w.json');
  });

  it('commits a prepared append that holds only older-spec files', async () => {
    const { dir, store, catalog, deps } = await setup();
    const root = fileUri(dir);
    await commitAppend(deps, {
      table: id,
      prepare: async () => ({ updates: EVOLVE_SPEC, specId: 1, dataFiles: [] }),
    });
    const only = dataFile(`${root}/late.parquet`, 6n);
    const r = await commitAppend(deps, {
      table: id,
      prepare: async () => ({
        updates: [],
        specId: 1,
        dataFiles: [],
        otherSpecFiles: new Map([[0, [only]]]),
      }),
    });
    expect(r.snapshot).toBeDefined();
    const t = await catalog.loadTable(id);
    const { snapshot, manifests } = await manifestsOf(store, t);
    expect(manifests.map((m) => m.partition_spec_id)).toEqual([0]);
    expect(snapshot.summary['added-data-files']).toBe('1');
    expect(snapshot.summary['added-records']).toBe('6');
  });

  it('keeps both specs’ manifests live in the next snapshot', async () => {
    const { dir, store, catalog, deps } = await setup();
    const root = fileUri(dir);
    await commitAppend(deps, {
      table: id,
      prepare: async () => ({
        updates: EVOLVE_SPEC,
        specId: 1,
        dataFiles: [dataFile(`${root}/x=1/a.parquet`, 1n, [1n])],
        otherSpecFiles: new Map([[0, [dataFile(`${root}/b.parquet`, 2n)]]]),
      }),
    });
    await commitAppend(deps, {
      table: id,
      prepare: async () => ({
        updates: [],
        specId: 1,
        dataFiles: [dataFile(`${root}/x=3/c.parquet`, 4n, [3n])],
      }),
    });
    const t = await catalog.loadTable(id);
    const { snapshot, manifests } = await manifestsOf(store, t);
    expect(manifests.map((m) => m.partition_spec_id).sort()).toEqual([0, 1, 1]);
    const plan = await planScan(t.metadata, (uri) => store.get(uri));
    expect(plan.tasks.map((x) => [x.file.file_path.slice(root.length), x.specId]).sort()).toEqual([
      ['/b.parquet', 0],
      ['/x=1/a.parquet', 1],
      ['/x=3/c.parquet', 1],
    ]);
    expect(snapshot.summary['total-data-files']).toBe('3');
    expect(snapshot.summary['total-records']).toBe('7');
  });
});
