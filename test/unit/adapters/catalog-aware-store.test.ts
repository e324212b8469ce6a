/**
 * CatalogAwareStore (adapters/catalog-aware-store.ts) around a real local store, with a recording
 * wrapper underneath: on S3 Tables a delete outside Floe's own prefixes never reaches the store; on
 * Glue every delete does, and a failure is reported before it goes back to the caller.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogAwareStore } from '../../../lambdas/src/adapters/catalog-aware-store.ts';
import { LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import { deleteQuietly, type ObjectStore } from '../../../lambdas/src/ports/object-store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A real local store whose deletes are recorded (and can be made to fail). */
function recordingStore(): { store: ObjectStore; deleted: string[]; root: string; failDeletes: () => void } {
  const root = pathToFileURL(mkdtempSync(join(tmpdir(), 'floe-cas-'))).href.replace(/\/$/, '');
  dirs.push(new URL(root).pathname);
  const inner = new LocalObjectStore();
  const deleted: string[] = [];
  let fail = false;
  const store = Object.assign(Object.create(inner) as ObjectStore, {
    delete: async (uri: string) => {
      deleted.push(uri);
      if (fail) throw new Error(`AccessDenied: ${uri}`);
      return inner.delete(uri);
    },
  });
  return { store, deleted, root, failDeletes: () => (fail = true) };
}

describe('CatalogAwareStore', () => {
  it('S3 Tables: table files are not deleted (no request), Floe’s staging and dead letters are', async () => {
    const r = recordingStore();
    const skipped: string[] = [];
    const store = new CatalogAwareStore(r.store, {
      catalogType: 's3tables',
      deletablePrefixes: [`${r.root}/staging`, `${r.root}/dead-letters/`],
      onDeleteSkipped: (u) => skipped.push(u),
    });
    const table = `${r.root}/t1--table-s3/metadata/00001-x.metadata.json`;
    const fragment = `${r.root}/staging/fragments/f.json.gz`;
    const letter = `${r.root}/dead-letters/malformed-json/k`;
    for (const u of [table, fragment, letter]) await store.put(u, 'x');
    await deleteQuietly(store, [table, fragment, letter]);
    expect(r.deleted).toEqual([fragment, letter]);
    expect(skipped).toEqual([table]);
    expect(store.skippedDeletes).toBe(1);
    expect(await store.exists(table)).toBe(true);
    expect(await store.exists(fragment)).toBe(false);
    // A look-alike of a prefix is not under it.
    expect(store.deletesAllowed(`${r.root}/staging-old/x`)).toBe(false);
  });

  it('Glue: every delete is sent; a failure is reported and still thrown', async () => {
    const r = recordingStore();
    const failed: string[] = [];
    const store = new CatalogAwareStore(r.store, {
      catalogType: 'glue',
      deletablePrefixes: [`${r.root}/staging`],
      onDeleteFailed: (u) => failed.push(u),
    });
    const file = `${r.root}/warehouse/db/t/metadata/v1.metadata.json`;
    await store.put(file, 'x');
    await store.delete(file);
    expect(r.deleted).toEqual([file]);
    r.failDeletes();
    await expect(store.delete(file)).rejects.toThrow(/AccessDenied/);
    expect(failed).toEqual([file]);
    expect(store.skippedDeletes).toBe(0);
  });
});
