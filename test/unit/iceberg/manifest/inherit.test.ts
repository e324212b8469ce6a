import { describe, expect, it } from 'vitest';
import {
  inheritManifestEntries,
  inheritManifestEntry,
  type ManifestEntry,
} from '../../../../lambdas/src/iceberg/manifest/index.ts';
import { BIG_SNAPSHOT, dataFile } from './samples.ts';

const manifest = { added_snapshot_id: BIG_SNAPSHOT, sequence_number: 42n };
const df = dataFile('s3://b/t/f.parquet', []);

describe('inheritManifestEntry (spec: Sequence Number Inheritance)', () => {
  it('ADDED entries with nulls inherit snapshot id and both sequence numbers', () => {
    const e = inheritManifestEntry({ status: 1, data_file: df }, manifest);
    expect(e.snapshot_id).toBe(BIG_SNAPSHOT);
    expect(e.sequence_number).toBe(42n);
    expect(e.file_sequence_number).toBe(42n);
  });

  it('explicit values are kept, and only ADDED entries inherit sequence numbers', () => {
    const kept = inheritManifestEntry(
      { status: 1, snapshot_id: 5n, sequence_number: 3n, file_sequence_number: 4n, data_file: df },
      manifest,
    );
    expect([kept.snapshot_id, kept.sequence_number, kept.file_sequence_number]).toEqual([5n, 3n, 4n]);
    const existing = inheritManifestEntry({ status: 0, data_file: df }, manifest);
    expect(existing.snapshot_id).toBe(BIG_SNAPSHOT); // snapshot id inherits for any status (Java)
    expect(existing.sequence_number).toBeUndefined();
    expect(existing.file_sequence_number).toBeUndefined();
  });

  it('v1 manifests (list sequence number 0) give every entry sequence number 0', () => {
    const e = inheritManifestEntry(
      { status: 0, data_file: df },
      { added_snapshot_id: 1n, sequence_number: 0n },
    );
    expect(e.sequence_number).toBe(0n);
    expect(e.file_sequence_number).toBe(0n);
  });
});

describe('inheritManifestEntries (spec: First Row ID Inheritance)', () => {
  it('assigns first_row_id to live data files lacking one, in manifest order', () => {
    const entries: ManifestEntry[] = [
      { status: 1, data_file: { ...df, record_count: 10n } },
      { status: 2, sequence_number: 1n, file_sequence_number: 1n, data_file: { ...df, record_count: 100n } },
      { status: 0, sequence_number: 1n, file_sequence_number: 1n, data_file: { ...df, first_row_id: 7n } },
      { status: 0, sequence_number: 1n, file_sequence_number: 1n, data_file: { ...df, record_count: 4n } },
      { status: 1, data_file: { ...df, record_count: 1n } },
    ];
    const out = inheritManifestEntries(entries, { ...manifest, first_row_id: 1000n });
    // 1000 (+10); DELETED skipped; explicit 7 kept; 1010 (+4); 1014.
    expect(out.map((e) => e.data_file.first_row_id)).toEqual([1000n, undefined, 7n, 1010n, 1014n]);
    expect(inheritManifestEntries(entries, manifest).map((e) => e.data_file.first_row_id)).toEqual([
      undefined,
      undefined,
      7n,
      undefined,
      undefined,
    ]);
  });
});
