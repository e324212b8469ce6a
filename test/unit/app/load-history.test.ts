/**
 * The load history (app/load-history.ts): the `floe.loaded-files` summary value, the walk through a
 * table's lineage, and which sources a table is told to skip.
 */
import { describe, expect, it } from 'vitest';
import {
  displayName,
  FileLoadHistory,
  formatLoadedFiles,
  type HistoryEvent,
  LOADED_FILES_KEY,
  type LoadedFile,
  parseLoadedFiles,
  pastLoads,
} from '../../../lambdas/src/app/load-history.ts';
import type { Snapshot } from '../../../lambdas/src/iceberg/snapshot.ts';
import type { TableMetadata } from '../../../lambdas/src/iceberg/table-metadata.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../../../lambdas/src/ports/catalog.ts';

const hash = (c: string) => c.repeat(32);
const file = (c: string, name: string, size = 100): LoadedFile => ({ hash: hash(c), size, name });

function snapshot(id: bigint, parent: bigint | undefined, files?: readonly LoadedFile[]): Snapshot {
  return {
    'snapshot-id': id,
    ...(parent === undefined ? {} : { 'parent-snapshot-id': parent }),
    'timestamp-ms': 1_700_000_000_000n + id,
    summary: {
      operation: 'append',
      ...(files === undefined ? {} : { [LOADED_FILES_KEY]: formatLoadedFiles(files) }),
    },
  };
}

/** Only what the history reads: the snapshots and the current one. */
function metadata(snapshots: readonly Snapshot[], current: bigint): TableMetadata {
  return { snapshots, 'current-snapshot-id': current } as unknown as TableMetadata;
}

/** A catalog of fixed tables (read-only: the history never writes). */
function catalogOf(tables: Record<string, TableMetadata>): Catalog {
  const key = (id: TableIdentifier) => `${id.namespace}.${id.name}`;
  const unused = () => Promise.reject(new Error('not used'));
  return {
    listNamespaces: async () => [...new Set(Object.keys(tables).map((k) => k.split('.')[0]!))],
    listTables: async (ns) =>
      Object.keys(tables)
        .filter((k) => k.startsWith(`${ns}.`))
        .map((k) => k.slice(ns.length + 1)),
    tableExists: async (id) => key(id) in tables,
    loadTable: async (id): Promise<LoadedTable> => ({
      id,
      metadata: tables[key(id)]!,
      metadataLocation: '',
      versionToken: '1',
    }),
    createNamespace: async () => undefined,
    defaultLocation: () => '',
    createTable: unused,
    commitTable: unused,
  };
}

describe('the floe.loaded-files summary value', () => {
  it('is one line per file, hash size name, and reads back; other lines are ignored', () => {
    const files = [file('a', 'events.ndjson', 12), file('b', 'two words.ndjson', 0)];
    const text = formatLoadedFiles(files);
    expect(text).toBe(`${hash('a')} 12 events.ndjson\n${hash('b')} 0 two words.ndjson`);
    expect(parseLoadedFiles(text)).toEqual(files);
    expect(parseLoadedFiles(`junk\n${text}\n\nxyz 1 a`)).toEqual(files);
    expect(parseLoadedFiles(undefined)).toEqual([]);
  });

  it('keeps names to one short line: control characters replaced, the end kept', () => {
    expect(displayName('a\nb\tc.ndjson')).toBe('a?b?c.ndjson');
    const long = `${'x'.repeat(100)}.ndjson`;
    expect(displayName(long)).toHaveLength(60);
    expect(displayName(long).endsWith('x.ndjson')).toBe(true);
  });

  it('stays small: about 60 bytes per file for a 1,000-file load', () => {
    const files = Array.from({ length: 1000 }, (_, i) => ({
      hash: i.toString(16).padStart(32, '0'),
      size: 123_456_789,
      name: `events-2025-03-14-${String(i).padStart(4, '0')}.ndjson`,
    }));
    expect(formatLoadedFiles(files).length).toBeLessThan(1000 * 90);
  });
});

describe('pastLoads: the table lineage, newest first', () => {
  it('walks parents through snapshots other engines wrote, and skips snapshots off the lineage', () => {
    const m = metadata(
      [
        snapshot(1n, undefined, [file('a', 'a.ndjson')]),
        snapshot(2n, 1n), // another engine: no record
        snapshot(3n, 2n, [file('b', 'b.ndjson'), file('c', 'c.ndjson')]),
        snapshot(4n, 1n, [file('d', 'd.ndjson')]), // rolled back: not an ancestor of 3
      ],
      3n,
    );
    expect(pastLoads(m).map((p) => [p.name, p.snapshotId])).toEqual([
      ['b.ndjson', 3n],
      ['c.ndjson', 3n],
      ['a.ndjson', 1n],
    ]);
  });

  it('stops where expired snapshots broke the chain, and is empty without snapshots', () => {
    const m = metadata([snapshot(5n, 4n, [file('e', 'e.ndjson')])], 5n);
    expect(pastLoads(m).map((p) => p.name)).toEqual(['e.ndjson']);
    expect(pastLoads(metadata([], 0n))).toEqual([]);
  });
});

describe('FileLoadHistory.planTable', () => {
  const orders = { namespace: 'default', name: 'order_events' };
  const catalog = catalogOf({
    'default.order_events': metadata(
      [snapshot(10n, undefined, [file('a', 'a.ndjson')]), snapshot(11n, 10n, [file('b', 'b.ndjson')])],
      11n,
    ),
  });
  const plan = (files: Record<string, LoadedFile>, sources: string[], force = false) => {
    const events: HistoryEvent[] = [];
    const history = new FileLoadHistory(catalog, new Map(Object.entries(files)), {
      force,
      onEvent: (e) => events.push(e),
    });
    return { history, events, result: history.planTable(orders, sources) };
  };

  it('skips a file the table holds, also under another name, and records only the rest', async () => {
    const { result, events } = plan(
      {
        '/in/a.ndjson': file('a', 'a.ndjson'),
        '/in/copy.ndjson': file('b', 'copy.ndjson'),
        '/in/new.ndjson': file('9', 'new.ndjson'),
      },
      ['/in/a.ndjson', '/in/copy.ndjson', '/in/new.ndjson'],
    );
    const r = await result;
    expect([...r.skip]).toEqual(['/in/a.ndjson', '/in/copy.ndjson']);
    expect(parseLoadedFiles(r.summary[LOADED_FILES_KEY])).toEqual([file('9', 'new.ndjson')]);
    expect(
      events.map((e) => (e.kind === 'already-loaded' ? [e.source, e.past.name, e.past.snapshotId] : e)),
    ).toEqual([
      ['/in/a.ndjson', 'a.ndjson', 10n],
      ['/in/copy.ndjson', 'b.ndjson', 11n],
    ]);
  });

  it('loads a repeated input of the same load once', async () => {
    const { result, events } = plan(
      { '/in/x.ndjson': file('7', 'x.ndjson'), '/in/y.ndjson': file('7', 'y.ndjson') },
      ['/in/x.ndjson', '/in/y.ndjson'],
    );
    const r = await result;
    expect([...r.skip]).toEqual(['/in/y.ndjson']);
    expect(parseLoadedFiles(r.summary[LOADED_FILES_KEY])).toEqual([file('7', 'x.ndjson')]);
    expect(events).toEqual([{ kind: 'duplicate', source: '/in/y.ndjson', sameAs: '/in/x.ndjson' }]);
  });

  it('says when a file of the same name now has other content, and loads it', async () => {
    const { result, events } = plan({ '/in/a.ndjson': file('f', 'a.ndjson', 150) }, ['/in/a.ndjson']);
    const r = await result;
    expect(r.skip.size).toBe(0);
    expect(events).toMatchObject([
      { kind: 'changed', source: '/in/a.ndjson', past: { name: 'a.ndjson', size: 100 } },
    ]);
  });

  it('--force skips nothing and records everything', async () => {
    const { result, events } = plan({ '/in/a.ndjson': file('a', 'a.ndjson') }, ['/in/a.ndjson'], true);
    const r = await result;
    expect(r.skip.size).toBe(0);
    expect(parseLoadedFiles(r.summary[LOADED_FILES_KEY])).toEqual([file('a', 'a.ndjson')]);
    expect(events).toEqual([]);
  });

  it('a new table holds nothing; loadedAnywhere looks through every table', async () => {
    const { history } = plan({}, []);
    const fresh = await history.planTable({ namespace: 'default', name: 'new_events' }, []);
    expect(fresh).toEqual({ skip: new Set(), summary: {} });
    expect((await history.loadedAnywhere(hash('b')))?.snapshotId).toBe(11n);
    expect(await history.loadedAnywhere(hash('8'))).toBeUndefined();
  });

  it('loadedAnywhere passes over a table it cannot read', async () => {
    const good = metadata([snapshot(20n, undefined, [file('c', 'c.ndjson')])], 20n);
    const base = catalogOf({ 'a.broken': good, 'b.good': good });
    const catalog: Catalog = {
      ...base,
      loadTable: (id) => (id.name === 'broken' ? Promise.reject(new Error('not JSON')) : base.loadTable(id)),
    };
    const history = new FileLoadHistory(catalog, new Map(), { force: false, onEvent: () => undefined });
    expect((await history.loadedAnywhere(hash('c')))?.snapshotId).toBe(20n);
  });
});
