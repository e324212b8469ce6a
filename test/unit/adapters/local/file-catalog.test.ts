/**
 * FileCatalog: the Hadoop-style `metadata/v<N>.metadata.json` + `version-hint.text` layout, with
 * the exclusive create of v<N+1> as the commit point.
 */
import { promises as fs, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileCatalog } from '../../../../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../../../../lambdas/src/adapters/local/local-object-store.ts';
import { openWarehouse } from '../../../../lambdas/src/cli/warehouse.ts';
import { ErrorKind, isFloeError } from '../../../../lambdas/src/errors.ts';
import { applyUpdates, newTableMetadata } from '../../../../lambdas/src/iceberg/metadata/index.ts';
import type { TableMetadata } from '../../../../lambdas/src/iceberg/table-metadata.ts';
import { serializeTableMetadata } from '../../../../lambdas/src/iceberg/table-metadata.ts';
import { field, T } from '../../../../lambdas/src/iceberg/types.ts';
import type { LoadedTable, TableIdentifier } from '../../../../lambdas/src/ports/catalog.ts';

const T0 = 1_735_689_600_000;
const UUID = '0b6f3f1e-8a59-4c77-b1f0-2f6f0c1d9e11';
const ID: TableIdentifier = { namespace: 'default', name: 'order_events' };

interface Fixture {
  readonly dir: string;
  readonly root: string;
  readonly store: LocalObjectStore;
  readonly catalog: FileCatalog;
  readonly relocations: [string, string][];
}

function setup(): Fixture {
  const dir = mkdtempSync(join(tmpdir(), 'floe-file-catalog-'));
  const root = fileUri(dir);
  const store = new LocalObjectStore();
  const relocations: [string, string][] = [];
  const catalog = new FileCatalog(store, `${root}/`, {
    relocate: (foreign, own) => relocations.push([foreign, own]),
  });
  return { dir, root, store, catalog, relocations };
}

function tableMetadata(location: string, properties: Record<string, string> = {}): TableMetadata {
  return newTableMetadata({
    location,
    schema: { schemaId: 0, fields: [field(1, 'event_id', T.string, true), field(2, 'qty', T.long)] },
    properties,
    formatVersion: 2,
    tableUuid: UUID,
    nowMs: T0,
  });
}

/** The successor of `base` with a property naming its writer (so versions are told apart). */
function successor(base: LoadedTable, writer: string): TableMetadata {
  return applyUpdates(base.metadata, [{ action: 'set-properties', updates: { writer } }], {
    nowMs: T0 + 1000,
    metadataLocation: base.metadataLocation,
  });
}

async function readText(f: Fixture, ...parts: string[]): Promise<string> {
  return fs.readFile(join(f.dir, ...parts), 'utf8');
}

function metadataDir(f: Fixture, id: TableIdentifier = ID): string {
  return `${f.root}/${id.namespace}/${id.name}/metadata`;
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

describe('FileCatalog', () => {
  it('creates a table as v1 + version hint and loads it back', async () => {
    const f = setup();
    expect(f.catalog.warehouse).toBe(f.root); // trailing slash dropped
    const location = f.catalog.defaultLocation(ID);
    expect(location).toBe(`${f.root}/default/order_events`);
    const metadata = tableMetadata(location);

    expect(await f.catalog.tableExists(ID)).toBe(false);
    const created = await f.catalog.createTable(ID, metadata);
    expect(created).toEqual({
      id: ID,
      metadata,
      metadataLocation: `${metadataDir(f)}/v1.metadata.json`,
      versionToken: '1',
    });
    expect((await readText(f, 'default', 'order_events', 'metadata', 'version-hint.text')).trim()).toBe('1');
    expect(await fs.readdir(join(f.dir, 'default', 'order_events', 'metadata'))).toEqual([
      'v1.metadata.json',
      'version-hint.text',
    ]);

    const loaded = await f.catalog.loadTable(ID);
    expect(loaded.id).toEqual(ID);
    expect(loaded.versionToken).toBe('1');
    expect(loaded.metadataLocation).toBe(created.metadataLocation);
    expect(loaded.metadata).toEqual(metadata);
    expect(serializeTableMetadata(loaded.metadata)).toBe(serializeTableMetadata(metadata));
    expect(await f.catalog.tableExists(ID)).toBe(true);
    // The table lives in its own folder: nothing to relocate.
    expect(f.relocations).toEqual([]);
  });

  it('refuses to create a table twice (AlreadyExists) and keeps the first', async () => {
    const f = setup();
    const first = tableMetadata(f.catalog.defaultLocation(ID), { writer: 'first' });
    await f.catalog.createTable(ID, first);
    const err = await rejection(
      f.catalog.createTable(ID, tableMetadata(f.catalog.defaultLocation(ID), { writer: 'second' })),
    );
    expect(isFloeError(err, ErrorKind.AlreadyExists)).toBe(true);
    expect((await f.catalog.loadTable(ID)).metadata.properties.writer).toBe('first');
  });

  it('commits v<N+1>, moves the hint, and the next load sees it', async () => {
    const f = setup();
    const base = await f.catalog.createTable(ID, tableMetadata(f.catalog.defaultLocation(ID)));
    const next = successor(base, 'a');
    const committed = await f.catalog.commitTable(base, next);
    expect(committed).toEqual({
      id: ID,
      metadata: next,
      metadataLocation: `${metadataDir(f)}/v2.metadata.json`,
      versionToken: '2',
    });
    expect((await readText(f, 'default', 'order_events', 'metadata', 'version-hint.text')).trim()).toBe('2');
    const loaded = await f.catalog.loadTable(ID);
    expect(loaded.versionToken).toBe('2');
    expect(loaded.metadata.properties.writer).toBe('a');
    expect(loaded.metadata['metadata-log'].map((e) => e['metadata-file'])).toEqual([base.metadataLocation]);
  });

  it('rejects a commit on a stale base with CommitConflict and overwrites nothing', async () => {
    const f = setup();
    const base = await f.catalog.createTable(ID, tableMetadata(f.catalog.defaultLocation(ID)));
    await f.catalog.commitTable(base, successor(base, 'winner'));
    const v2Before = await readText(f, 'default', 'order_events', 'metadata', 'v2.metadata.json');

    const err = await rejection(f.catalog.commitTable(base, successor(base, 'stale')));
    expect(isFloeError(err, ErrorKind.CommitConflict)).toBe(true);
    expect((err as { retryable: boolean }).retryable).toBe(true);
    expect((err as Error).message).toContain('default.order_events');

    expect(await readText(f, 'default', 'order_events', 'metadata', 'v2.metadata.json')).toBe(v2Before);
    expect((await readText(f, 'default', 'order_events', 'metadata', 'version-hint.text')).trim()).toBe('2');
    expect((await fs.readdir(join(f.dir, 'default', 'order_events', 'metadata'))).sort()).toEqual([
      'v1.metadata.json',
      'v2.metadata.json',
      'version-hint.text',
    ]);
    const loaded = await f.catalog.loadTable(ID);
    expect(loaded.versionToken).toBe('2');
    expect(loaded.metadata.properties.writer).toBe('winner');
  });

  it('lets exactly one of two concurrent commits on the same base win', async () => {
    for (let round = 0; round < 5; round++) {
      const f = setup();
      const base = await f.catalog.createTable(ID, tableMetadata(f.catalog.defaultLocation(ID)));
      // Two catalogs over one folder, as two processes would have.
      const other = new FileCatalog(new LocalObjectStore(), f.root);
      const results = await Promise.allSettled([
        f.catalog.commitTable(base, successor(base, 'left')),
        other.commitTable(base, successor(base, 'right')),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(isFloeError(lost[0]?.reason, ErrorKind.CommitConflict)).toBe(true);
      const winner = results[0]?.status === 'fulfilled' ? 'left' : 'right';
      const loaded = await f.catalog.loadTable(ID);
      expect(loaded.versionToken).toBe('2');
      expect(loaded.metadata.properties.writer).toBe(winner);
      const files = await fs.readdir(join(f.dir, 'default', 'order_events', 'metadata'));
      expect(files.filter((n) => n.endsWith('.tmp'))).toEqual([]);
      expect(files.filter((n) => n.endsWith('.metadata.json')).sort()).toEqual([
        'v1.metadata.json',
        'v2.metadata.json',
      ]);
    }
  });

  it('after a crash between v<N+1> and the hint, loads v<N+1> and commits after it', async () => {
    const f = setup();
    const base = await f.catalog.createTable(ID, tableMetadata(f.catalog.defaultLocation(ID)));
    // The crashed writer got v2 in but never moved the hint.
    await f.store.put(
      `${metadataDir(f)}/v2.metadata.json`,
      serializeTableMetadata(successor(base, 'crashed')),
    );
    expect((await readText(f, 'default', 'order_events', 'metadata', 'version-hint.text')).trim()).toBe('1');

    const loaded = await f.catalog.loadTable(ID);
    expect(loaded.versionToken).toBe('2');
    expect(loaded.metadataLocation).toBe(`${metadataDir(f)}/v2.metadata.json`);
    expect(loaded.metadata.properties.writer).toBe('crashed');

    // A commit on the (stale) v1 base conflicts; one on the v2 base writes v3.
    expect(
      isFloeError(
        await rejection(f.catalog.commitTable(base, successor(base, 'stale'))),
        ErrorKind.CommitConflict,
      ),
    ).toBe(true);
    const v3 = await f.catalog.commitTable(loaded, successor(loaded, 'after-crash'));
    expect(v3.metadataLocation).toBe(`${metadataDir(f)}/v3.metadata.json`);
    expect((await readText(f, 'default', 'order_events', 'metadata', 'version-hint.text')).trim()).toBe('3');
    expect((await f.catalog.loadTable(ID)).metadata.properties.writer).toBe('after-crash');
  });

  it('without any hint, loads the highest v<N>', async () => {
    const f = setup();
    const base = await f.catalog.createTable(ID, tableMetadata(f.catalog.defaultLocation(ID)));
    const v2 = await f.catalog.commitTable(base, successor(base, 'two'));
    await f.catalog.commitTable(v2, successor(v2, 'three'));
    await fs.rm(join(f.dir, 'default', 'order_events', 'metadata', 'version-hint.text'));
    const loaded = await f.catalog.loadTable(ID);
    expect(loaded.versionToken).toBe('3');
    expect(loaded.metadata.properties.writer).toBe('three');
  });

  it('loads the highest Java-named 0000N-<uuid>.metadata.json and commits v<N+1> after it', async () => {
    const f = setup();
    const location = f.catalog.defaultLocation(ID);
    const dir = metadataDir(f);
    const v0 = tableMetadata(location, { writer: 'java-0' });
    const j0 = `${dir}/00000-4f1e9c1a-1d2b-4a53-9d0e-7a1c2b3d4e5f.metadata.json`;
    await f.store.put(j0, serializeTableMetadata(v0));
    const v1 = applyUpdates(v0, [{ action: 'set-properties', updates: { writer: 'java-1' } }], {
      nowMs: T0 + 1,
      metadataLocation: j0,
    });
    const j1 = `${dir}/00001-9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d.metadata.json`;
    await f.store.put(j1, serializeTableMetadata(v1));
    const v2 = applyUpdates(v1, [{ action: 'set-properties', updates: { writer: 'java-2' } }], {
      nowMs: T0 + 2,
      metadataLocation: j1,
    });
    const j2 = `${dir}/00002-0a1b2c3d-4e5f-4a6b-9c7d-8e9f0a1b2c3d.metadata.json`;
    await f.store.put(j2, serializeTableMetadata(v2));

    expect(await f.catalog.tableExists(ID)).toBe(true);
    expect(await f.catalog.listTables('default')).toEqual(['order_events']);
    const loaded = await f.catalog.loadTable(ID);
    expect(loaded.metadataLocation).toBe(j2);
    expect(loaded.versionToken).toBe('2');
    expect(loaded.metadata.properties.writer).toBe('java-2');

    const committed = await f.catalog.commitTable(loaded, successor(loaded, 'floe'));
    expect(committed.metadataLocation).toBe(`${dir}/v3.metadata.json`);
    expect(committed.versionToken).toBe('3');
    const again = await f.catalog.loadTable(ID);
    expect(again.metadataLocation).toBe(`${dir}/v3.metadata.json`);
    expect(again.metadata.properties.writer).toBe('floe');
    expect(again.metadata['metadata-log'].map((e) => e['metadata-file'])).toEqual([j0, j1, j2]);
    // The Java-named files are left as they were.
    expect(serializeTableMetadata((await f.catalog.loadTable(ID)).metadata)).not.toBe(
      serializeTableMetadata(v2),
    );
    expect(new TextDecoder().decode(await f.store.get(j2))).toBe(serializeTableMetadata(v2));
  });

  it('loads a table whose only metadata file is 00000-<uuid>.metadata.json and commits after it', async () => {
    const f = setup();
    const dir = metadataDir(f);
    const j0 = `${dir}/00000-4f1e9c1a-1d2b-4a53-9d0e-7a1c2b3d4e5f.metadata.json`;
    await f.store.put(
      j0,
      serializeTableMetadata(tableMetadata(f.catalog.defaultLocation(ID), { writer: 'java-0' })),
    );
    expect(await f.catalog.tableExists(ID)).toBe(true);
    const loaded = await f.catalog.loadTable(ID);
    expect(loaded.metadataLocation).toBe(j0);
    expect(loaded.metadata.properties.writer).toBe('java-0');
    const committed = await f.catalog.commitTable(loaded, successor(loaded, 'floe'));
    expect(committed.metadataLocation).toMatch(/\/metadata\/v\d+\.metadata\.json$/);
    const again = await f.catalog.loadTable(ID);
    expect(again.metadataLocation).toBe(committed.metadataLocation);
    expect(again.metadata.properties.writer).toBe('floe');
  });

  /** A warehouse with three tables plus what `floe load` and people leave beside them. */
  async function clutteredWarehouse(): Promise<Fixture> {
    const f = setup();
    const create = async (id: TableIdentifier) =>
      f.catalog.createTable(id, tableMetadata(f.catalog.defaultLocation(id)));
    await create({ namespace: 'default', name: 'order_events' });
    await create({ namespace: 'default', name: 'user_events' });
    await create({ namespace: 'analytics', name: 'clicks' });
    await f.store.put(`${f.root}/_floe/dead-letters/load-1.ndjson`, '{}\n');
    await f.store.put(`${f.root}/.cache/x`, 'x');
    await f.store.put(`${f.root}/default/not_a_table/data/00000-x.parquet`, 'PAR1');
    await f.store.put(`${f.root}/default/not_a_table/metadata/readme.txt`, 'x');
    await fs.mkdir(join(f.dir, 'default', 'empty_folder'));
    await f.store.put(`${f.root}/default/stray-file.txt`, 'x');
    return f;
  }

  it('lists namespaces holding tables, ignoring _floe and dot folders', async () => {
    const f = await clutteredWarehouse();
    expect((await f.catalog.listNamespaces()).sort()).toEqual(['analytics', 'default']);
  });

  it('lists tables, ignoring folders without a table and stray files', async () => {
    const f = await clutteredWarehouse();
    expect((await f.catalog.listTables('default')).sort()).toEqual(['order_events', 'user_events']);
    expect(await f.catalog.listTables('analytics')).toEqual(['clicks']);
    expect(await f.catalog.listTables('no_such_namespace')).toEqual([]);
  });

  // KNOWN BUG (reported): listNamespaces returns every non-hidden child of the warehouse, folders
  // without tables and plain files included. Drop `.fails` once it is fixed.
  it('listNamespaces ignores folders without tables and plain files', async () => {
    const f = await clutteredWarehouse();
    await fs.mkdir(join(f.dir, 'empty_namespace'));
    await f.store.put(`${f.root}/floe.config.json`, '{}');
    await f.store.put(`${f.root}/no_tables/some_folder/x.txt`, 'x');
    expect((await f.catalog.listNamespaces()).sort()).toEqual(['analytics', 'default']);
  });

  // KNOWN BUG (reported): listTables does not apply the `_` / `.` rule listNamespaces applies.
  // Drop `.fails` once it is fixed.
  it('listTables ignores table folders whose names start with _ or .', async () => {
    const f = await clutteredWarehouse();
    for (const name of ['_staging', '.trash']) {
      const id = { namespace: 'default', name };
      await f.catalog.createTable(id, tableMetadata(f.catalog.defaultLocation(id)));
    }
    expect((await f.catalog.listTables('default')).sort()).toEqual(['order_events', 'user_events']);
  });

  it('lists nothing in an empty or missing warehouse', async () => {
    const f = setup();
    expect(await f.catalog.listNamespaces()).toEqual([]);
    const missing = new FileCatalog(new LocalObjectStore(), `${f.root}/does/not/exist`);
    expect(await missing.listNamespaces()).toEqual([]);
  });

  it('tableExists is false for missing tables and non-table folders', async () => {
    const f = setup();
    await f.catalog.createTable(ID, tableMetadata(f.catalog.defaultLocation(ID)));
    await f.store.put(`${f.root}/default/not_a_table/metadata/readme.txt`, 'x');
    expect(await f.catalog.tableExists(ID)).toBe(true);
    expect(await f.catalog.tableExists({ namespace: 'default', name: 'missing' })).toBe(false);
    expect(await f.catalog.tableExists({ namespace: 'default', name: 'not_a_table' })).toBe(false);
    expect(await f.catalog.tableExists({ namespace: 'nowhere', name: 'order_events' })).toBe(false);
  });

  it('loadTable on a missing table throws NotFound naming the table', async () => {
    const f = setup();
    const err = await rejection(f.catalog.loadTable({ namespace: 'default', name: 'missing' }));
    expect(isFloeError(err, ErrorKind.NotFound)).toBe(true);
    expect((err as Error).message).toContain('default.missing');
  });

  it('calls relocate for a table whose metadata names a foreign location, and only then', async () => {
    const f = setup();
    const foreign = 's3a://hyperparam-iceberg/spark/bunnies';
    await f.catalog.createTable(ID, tableMetadata(foreign));
    const own = { namespace: 'default', name: 'own' };
    await f.catalog.createTable(own, tableMetadata(`${f.catalog.defaultLocation(own)}/`));

    await f.catalog.loadTable(ID);
    expect(f.relocations).toEqual([[foreign, f.catalog.defaultLocation(ID)]]);
    await f.catalog.loadTable(own); // its own folder (a trailing slash does not matter)
    expect(f.relocations).toHaveLength(1);
    // A relative location (as DuckDB's test tables have) is foreign too.
    const rel = { namespace: 'default', name: 'relative' };
    await f.catalog.createTable(rel, tableMetadata('./lineitem_iceberg'));
    await f.catalog.loadTable(rel);
    expect(f.relocations[1]).toEqual(['./lineitem_iceberg', f.catalog.defaultLocation(rel)]);
  });

  it('with openWarehouse, a relocated table’s files are served from its folder', async () => {
    const f = setup();
    const foreign = 's3a://hyperparam-iceberg/spark/bunnies';
    await f.catalog.createTable(ID, tableMetadata(foreign));
    await f.store.put(`${f.root}/default/order_events/data/00000-a.parquet`, 'PAR1');

    const wh = openWarehouse(f.dir);
    expect(() => wh.store.pathOf(`${foreign}/data/00000-a.parquet`)).toThrow();
    await wh.catalog.loadTable(ID);
    expect(wh.store.pathOf(`${foreign}/data/00000-a.parquet`)).toBe(
      join(f.dir, 'default', 'order_events', 'data', '00000-a.parquet'),
    );
    expect(new TextDecoder().decode(await wh.store.get(`${foreign}/data/00000-a.parquet`))).toBe('PAR1');
  });
});
