import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileCatalog } from '../../../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../../../lambdas/src/adapters/local/local-object-store.ts';
import { fixedClock, seededIds } from '../../../lambdas/src/adapters/local/system-clock.ts';
import { commitAppend } from '../../../lambdas/src/engine/append.ts';
import { ErrorKind, FloeError, isFloeError } from '../../../lambdas/src/errors.ts';
import { DataFileContent } from '../../../lambdas/src/iceberg/manifest/types.ts';
import { newTableMetadata } from '../../../lambdas/src/iceberg/metadata/index.ts';
import { field, T } from '../../../lambdas/src/iceberg/types.ts';
import type { Catalog, LoadedTable } from '../../../lambdas/src/ports/catalog.ts';

const id = { namespace: 'db', name: 't' };

async function setup(properties: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'floe-append-'));
  const store = new LocalObjectStore();
  const catalog = new FileCatalog(store, fileUri(dir));
  const meta = newTableMetadata({
    location: catalog.defaultLocation(id),
    schema: { schemaId: 0, fields: [field(1, 'x', T.long)] },
    properties,
    formatVersion: 2,
    tableUuid: '00000000-0000-4000-8000-000000000001',
    nowMs: 1_700_000_000_000,
  });
  await catalog.createTable(id, meta);
  return {
    dir,
    store,
    catalog,
    deps: { catalog, store, clock: fixedClock(1_700_000_001_000), ids: seededIds(3), sleep: async () => {} },
  };
}

function dataFile(path: string, rows: bigint) {
  return {
    content: DataFileContent.DATA,
    file_path: path,
    file_format: 'PARQUET',
    partition: [],
    record_count: rows,
    file_size_in_bytes: 100n,
  };
}

describe('commitAppend', () => {
  it('retries a conflict by rebuilding only the manifest list: the data manifest is written once', async () => {
    const { dir, deps, catalog } = await setup();
    let conflicts = 1;
    const flaky: Catalog = Object.create(catalog);
    flaky.commitTable = async (base: LoadedTable, m) => {
      if (conflicts-- > 0) throw new FloeError(ErrorKind.CommitConflict, 'injected');
      return catalog.commitTable(base, m);
    };
    let prepares = 0;
    const prepared = { updates: [], dataFiles: [dataFile(`${fileUri(dir)}/f1.parquet`, 5n)], specId: 0 };
    const r = await commitAppend(
      { ...deps, catalog: flaky },
      {
        table: id,
        prepare: async () => {
          prepares++;
          return prepared;
        },
      },
    );
    expect(r.attempts).toBe(2);
    expect(prepares).toBe(2);
    const metaDir = join(dir, 'db', 't', 'metadata');
    const files = readdirSync(metaDir);
    expect(files.filter((f) => f.endsWith('-m0.avro'))).toHaveLength(1);
    // The failed attempt's manifest list was removed; only the committed one remains.
    expect(files.filter((f) => f.startsWith('snap-'))).toHaveLength(1);
    const t = await catalog.loadTable(id);
    expect(t.metadata.snapshots).toHaveLength(1);
    expect(t.metadata.snapshots[0]!.summary['total-records']).toBe('5');
    expect(t.metadata.snapshots[0]!['sequence-number']).toBe(1n);
  });

  it('gives up after the attempt budget with a retryable CommitConflict naming the table', async () => {
    const { deps, catalog, dir } = await setup();
    const always: Catalog = Object.create(catalog);
    always.commitTable = async () => {
      throw new FloeError(ErrorKind.CommitConflict, 'injected');
    };
    const err = await commitAppend(
      { ...deps, catalog: always },
      {
        table: id,
        maxAttempts: 3,
        prepare: async () => ({
          updates: [],
          dataFiles: [dataFile(`${fileUri(dir)}/f.parquet`, 1n)],
          specId: 0,
        }),
      },
    ).catch((e) => e);
    expect(isFloeError(err, ErrorKind.CommitConflict)).toBe(true);
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('db.t');
    expect(err.message).toContain('3 attempts');
  });

  it('deletes metadata files that fall out of the metadata log when delete-after-commit is on', async () => {
    const { deps, dir } = await setup({
      'write.metadata.delete-after-commit.enabled': 'true',
      'write.metadata.previous-versions-max': '2',
    });
    for (let i = 0; i < 5; i++) {
      await commitAppend(deps, {
        table: id,
        prepare: async () => ({
          updates: [],
          dataFiles: [dataFile(`${fileUri(dir)}/f${i}.parquet`, 1n)],
          specId: 0,
        }),
      });
    }
    const versions = readdirSync(join(dir, 'db', 't', 'metadata'))
      .filter((f) => f.endsWith('.metadata.json'))
      .sort();
    // v6 is current; the log keeps the 2 before it; v1..v3 are gone.
    expect(versions).toEqual(['v4.metadata.json', 'v5.metadata.json', 'v6.metadata.json']);
  });
});
