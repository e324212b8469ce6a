import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileCatalog } from '../../../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import { TableCache } from '../../../lambdas/src/engine/table-cache.ts';
import { ErrorKind, FloeError } from '../../../lambdas/src/errors.ts';
import { newTableMetadata } from '../../../lambdas/src/iceberg/metadata/index.ts';
import type { TableMetadata } from '../../../lambdas/src/iceberg/table-metadata.ts';
import { field, T } from '../../../lambdas/src/iceberg/types.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../../../lambdas/src/ports/catalog.ts';
import { tableIdToString } from '../../../lambdas/src/ports/catalog.ts';
import type { Clock } from '../../../lambdas/src/ports/clock.ts';

/** Counts `loadTable` calls per table, delegating everything to a real catalog. */
class CountingCatalog implements Catalog {
  readonly loadsOf = new Map<string, number>();
  total = 0;
  /** When set, `loadTable` throws this instead of loading. */
  failWith: unknown;

  constructor(private readonly inner: Catalog) {}

  loads(id: TableIdentifier): number {
    return this.loadsOf.get(tableIdToString(id)) ?? 0;
  }

  listNamespaces(): Promise<string[]> {
    return this.inner.listNamespaces();
  }
  createNamespace(namespace: string): Promise<void> {
    return this.inner.createNamespace(namespace);
  }
  listTables(namespace: string): Promise<string[]> {
    return this.inner.listTables(namespace);
  }
  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    this.total++;
    this.loadsOf.set(tableIdToString(id), this.loads(id) + 1);
    if (this.failWith !== undefined) throw this.failWith;
    return this.inner.loadTable(id);
  }
  tableExists(id: TableIdentifier): Promise<boolean> {
    return this.inner.tableExists(id);
  }
  defaultLocation(id: TableIdentifier): string {
    return this.inner.defaultLocation(id);
  }
  createTable(id: TableIdentifier, metadata: TableMetadata): Promise<LoadedTable> {
    return this.inner.createTable(id, metadata);
  }
  commitTable(base: LoadedTable, metadata: TableMetadata): Promise<LoadedTable> {
    return this.inner.commitTable(base, metadata);
  }
}

class ManualClock implements Clock {
  constructor(public t = 1_000_000) {}
  nowMs(): number {
    return this.t;
  }
}

const A = { namespace: 'db', name: 'a' };
const B = { namespace: 'db', name: 'b' };
const C = { namespace: 'db', name: 'c' };

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'floe-table-cache-'));
  const files = new FileCatalog(new LocalObjectStore(), fileUri(dir));
  const catalog = new CountingCatalog(files);
  const clock = new ManualClock();
  const create = (id: TableIdentifier) =>
    files.createTable(
      id,
      newTableMetadata({
        location: files.defaultLocation(id),
        schema: { schemaId: 0, fields: [field(1, 'x', T.long)] },
        formatVersion: 2,
        tableUuid: `00000000-0000-4000-8000-00000000000${id.name.charCodeAt(0) % 10}`,
        nowMs: 1_700_000_000_000,
      }),
    );
  return { files, catalog, clock, create };
}

describe('TableCache', () => {
  it('serves repeated gets within refreshMs without loading again', async () => {
    const { catalog, clock, create } = setup();
    await create(A);
    const cache = new TableCache(catalog, clock, { refreshMs: 10_000 });
    const first = await cache.get(A);
    expect(first?.id).toEqual(A);
    clock.t += 5_000;
    const second = await cache.get(A);
    clock.t += 4_999;
    const third = await cache.get(A);
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(catalog.loads(A)).toBe(1);
    expect(cache.loads).toBe(1);
    expect(cache.hits).toBe(2);
  });

  it('reloads once refreshMs has passed and then sees the newer version', async () => {
    const { files, catalog, clock, create } = setup();
    const created = await create(A);
    const cache = new TableCache(catalog, clock, { refreshMs: 10_000 });
    const first = await cache.get(A);
    expect(first?.versionToken).toBe('1');
    // Someone else commits a new version.
    await files.commitTable(created, {
      ...created.metadata,
      properties: { ...created.metadata.properties, changed: 'yes' },
    });
    clock.t += 9_999;
    expect((await cache.get(A))?.versionToken).toBe('1'); // still cached: stale is fine
    clock.t += 1;
    const reloaded = await cache.get(A);
    expect(reloaded?.versionToken).toBe('2');
    expect(reloaded?.metadata.properties.changed).toBe('yes');
    expect(catalog.loads(A)).toBe(2);
    // The reload restarts the refresh period.
    clock.t += 9_999;
    expect(await cache.get(A)).toBe(reloaded);
    expect(catalog.loads(A)).toBe(2);
  });

  it('refreshes after 30 s by default', async () => {
    const { catalog, clock, create } = setup();
    await create(A);
    const cache = new TableCache(catalog, clock);
    await cache.get(A);
    clock.t += 29_999;
    await cache.get(A);
    expect(catalog.loads(A)).toBe(1);
    clock.t += 1;
    await cache.get(A);
    expect(catalog.loads(A)).toBe(2);
  });

  it('caches a missing table as undefined and finds it after a refresh once created', async () => {
    const { catalog, clock, create } = setup();
    const cache = new TableCache(catalog, clock, { refreshMs: 1_000 });
    expect(await cache.get(A)).toBeUndefined();
    expect(catalog.loads(A)).toBe(1);
    await create(A);
    clock.t += 999;
    expect(await cache.get(A)).toBeUndefined(); // the negative entry is still fresh
    expect(catalog.loads(A)).toBe(1);
    clock.t += 1;
    const found = await cache.get(A);
    expect(found?.id).toEqual(A);
    expect(found?.metadata.schemas[0]?.fields[0]?.name).toBe('x');
    expect(catalog.loads(A)).toBe(2);
  });

  it('evicts the least recently used table beyond maxTables', async () => {
    const { catalog, clock, create } = setup();
    await Promise.all([create(A), create(B), create(C)]);
    const cache = new TableCache(catalog, clock, { refreshMs: 60_000, maxTables: 2 });
    await cache.get(A);
    await cache.get(B);
    await cache.get(A); // A is now the most recently used; B the least
    expect(catalog.loads(A)).toBe(1);
    await cache.get(C); // over the limit: B goes
    await cache.get(A);
    await cache.get(C);
    expect(catalog.loads(A)).toBe(1);
    expect(catalog.loads(C)).toBe(1);
    expect(catalog.loads(B)).toBe(1);
    await cache.get(B); // evicted: loads again (and evicts A, now the least recently used)
    expect(catalog.loads(B)).toBe(2);
    await cache.get(C);
    expect(catalog.loads(C)).toBe(1);
    await cache.get(A);
    expect(catalog.loads(A)).toBe(2);
  });

  it('counts missing tables towards maxTables as well', async () => {
    const { catalog, clock, create } = setup();
    await create(A);
    const cache = new TableCache(catalog, clock, { refreshMs: 60_000, maxTables: 1 });
    await cache.get(A);
    expect(await cache.get(B)).toBeUndefined();
    await cache.get(A);
    expect(catalog.loads(A)).toBe(2);
  });

  it('invalidate forces the next get to reload, for that table only', async () => {
    const { catalog, clock, create } = setup();
    await Promise.all([create(A), create(B)]);
    const cache = new TableCache(catalog, clock, { refreshMs: 60_000 });
    await cache.get(A);
    await cache.get(B);
    cache.invalidate(A);
    await cache.get(A);
    await cache.get(B);
    expect(catalog.loads(A)).toBe(2);
    expect(catalog.loads(B)).toBe(1);
  });

  it('invalidate also forgets a cached missing table', async () => {
    const { catalog, clock, create } = setup();
    const cache = new TableCache(catalog, clock, { refreshMs: 60_000 });
    expect(await cache.get(A)).toBeUndefined();
    await create(A);
    cache.invalidate(A);
    expect((await cache.get(A))?.id).toEqual(A);
  });

  it('propagates errors other than NotFound and caches nothing for them', async () => {
    const { catalog, clock, create } = setup();
    await create(A);
    const cache = new TableCache(catalog, clock, { refreshMs: 60_000 });
    const boom = new FloeError(ErrorKind.Unexpected, 'catalog unavailable');
    catalog.failWith = boom;
    await expect(cache.get(A)).rejects.toBe(boom);
    const plain = new Error('socket hang up');
    catalog.failWith = plain;
    await expect(cache.get(A)).rejects.toBe(plain);
    catalog.failWith = undefined;
    const t = await cache.get(A);
    expect(t?.id).toEqual(A);
    expect(catalog.loads(A)).toBe(3);
  });
});
