import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DataFile, DataFileContent } from '../../../../lambdas/src/iceberg/manifest/types.ts';
import { applyUpdates } from '../../../../lambdas/src/iceberg/metadata/index.ts';
import { summarize } from '../../../../lambdas/src/iceberg/snapshot-summary.ts';
import {
  parseTableMetadata,
  serializeTableMetadata,
} from '../../../../lambdas/src/iceberg/table-metadata.ts';
import { LOCATION, newEventTable, snapshot, T0 } from './helpers.ts';

const GOLDEN = join(import.meta.dirname, '../../../golden/metadata/new-table-one-append.metadata.json');

function dataFile(path: string, day: number, records: bigint, size: bigint): DataFile {
  return {
    content: DataFileContent.DATA,
    file_path: path,
    file_format: 'PARQUET',
    partition: [day],
    record_count: records,
    file_size_in_bytes: size,
  };
}

/** newTableMetadata (v2) + one append, with uuid, ids and clock injected. */
function build(): string {
  const created = newEventTable(2);
  const files = [
    dataFile(`${LOCATION}/data/ts_day=2025-01-01/a.parquet`, 20089, 10n, 4096n),
    dataFile(`${LOCATION}/data/ts_day=2025-01-02/b.parquet`, 20090, 5n, 2048n),
  ];
  const summary = summarize('append', { added: files, removed: [] }, undefined, {
    'floe.load-id': 'load-0001',
  });
  const snap = snapshot(7342794868382145167n, 1n, T0 + 1000, undefined, { summary });
  const m = applyUpdates(
    created,
    [
      { action: 'add-snapshot', snapshot: snap },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snap['snapshot-id'] },
    ],
    {
      nowMs: T0 + 2000,
      metadataLocation: `${LOCATION}/metadata/00000-6d3c8a4e-2f1b-4c8e-9a7d-5b0e1f2a3c4d.metadata.json`,
    },
  );
  return `${serializeTableMetadata(m)}\n`;
}

describe('golden metadata', () => {
  it('matches test/golden/metadata/new-table-one-append.metadata.json', () => {
    const actual = build();
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(GOLDEN, actual);
    expect(existsSync(GOLDEN), `missing ${GOLDEN}: run with UPDATE_GOLDEN=1`).toBe(true);
    expect(actual).toBe(readFileSync(GOLDEN, 'utf8'));
    // The golden file is itself valid metadata that round-trips.
    expect(serializeTableMetadata(parseTableMetadata(actual))).toBe(actual.trimEnd());
  });
});
