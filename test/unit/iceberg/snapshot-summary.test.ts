import { describe, expect, it } from 'vitest';
import { type DataFile, DataFileContent } from '../../../lambdas/src/iceberg/manifest/types.ts';
import { summarize } from '../../../lambdas/src/iceberg/snapshot-summary.ts';

function file(
  content: DataFileContent,
  records: bigint,
  size: bigint,
  partition: unknown[] = [],
  extra: Partial<DataFile> = {},
): DataFile {
  return {
    content,
    file_path: `s3://b/t/data/${records}-${size}.parquet`,
    file_format: 'PARQUET',
    partition,
    record_count: records,
    file_size_in_bytes: size,
    ...extra,
  };
}
const data = (records: bigint, size: bigint, partition: unknown[] = []) =>
  file(DataFileContent.DATA, records, size, partition);

describe('summarize', () => {
  it('first append: added-* keys, zero deletes omitted, totals from 0', () => {
    const s = summarize('append', { added: [data(10n, 4096n, [1]), data(5n, 100n, [2])], removed: [] });
    expect(s).toEqual({
      operation: 'append',
      'added-data-files': '2',
      'added-records': '15',
      'added-files-size': '4196',
      'changed-partition-count': '2',
      'total-records': '15',
      'total-files-size': '4196',
      'total-data-files': '2',
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    });
    expect(Object.keys(s)[0]).toBe('operation');
  });

  it('adds to and subtracts from the previous totals', () => {
    const previous = {
      operation: 'append',
      'total-records': '100',
      'total-files-size': '1000',
      'total-data-files': '4',
      'total-delete-files': '1',
      'total-position-deletes': '7',
      'total-equality-deletes': '0',
    };
    const s = summarize(
      'overwrite',
      { added: [data(3n, 30n)], removed: [data(10n, 200n), data(2n, 20n)] },
      previous,
    );
    expect(s['added-data-files']).toBe('1');
    expect(s['deleted-data-files']).toBe('2');
    expect(s['deleted-records']).toBe('12');
    expect(s['removed-files-size']).toBe('220');
    expect(s['total-records']).toBe('91');
    expect(s['total-files-size']).toBe('810');
    expect(s['total-data-files']).toBe('3');
    expect(s['total-delete-files']).toBe('1');
    expect(s['total-position-deletes']).toBe('7');
  });

  it('omits a total the previous summary lacks or cannot be parsed, or that would go negative', () => {
    const s = summarize(
      'append',
      { added: [data(1n, 10n)], removed: [] },
      { operation: 'append', 'total-records': 'lots', 'total-data-files': '0' },
    );
    expect(s['total-records']).toBeUndefined();
    expect(s['total-files-size']).toBeUndefined();
    expect(s['total-data-files']).toBe('1');
    const neg = summarize(
      'delete',
      { added: [], removed: [data(5n, 10n)] },
      { operation: 'append', 'total-records': '2' },
    );
    expect(neg['total-records']).toBeUndefined();
  });

  it('counts position, equality and DV deletes separately (DV size = blob size)', () => {
    const pos = file(DataFileContent.POSITION_DELETES, 4n, 50n);
    const eq = file(DataFileContent.EQUALITY_DELETES, 2n, 60n);
    const dv = file(DataFileContent.POSITION_DELETES, 3n, 9999n, [], {
      file_format: 'puffin',
      content_size_in_bytes: 40n,
    });
    const s = summarize(
      'overwrite',
      { added: [], removed: [], addedDeletes: [pos, eq, dv], removedDeletes: [eq] },
      undefined,
    );
    expect(s).toMatchObject({
      'added-delete-files': '3',
      'added-position-delete-files': '1',
      'added-equality-delete-files': '1',
      'added-dvs': '1',
      'removed-equality-delete-files': '1',
      'removed-delete-files': '1',
      'added-position-deletes': '7',
      'added-equality-deletes': '2',
      'removed-equality-deletes': '2',
      'added-files-size': '150',
      'removed-files-size': '60',
      'total-delete-files': '2',
      'total-position-deletes': '7',
      'total-equality-deletes': '0',
      'total-files-size': '90',
    });
    expect(s['added-data-files']).toBeUndefined();
    expect(s['removed-position-delete-files']).toBeUndefined();
  });

  it('puts extra keys after operation and never lets them replace it', () => {
    const s = summarize('append', { added: [], removed: [] }, undefined, {
      operation: 'delete',
      'floe.load-id': 'x',
    });
    expect(s.operation).toBe('append');
    expect(Object.keys(s).slice(0, 2)).toEqual(['operation', 'floe.load-id']);
    expect(s['changed-partition-count']).toBe('0');
  });

  it('counts distinct partition tuples, bigint and binary values included', () => {
    const s = summarize('append', {
      added: [
        data(1n, 1n, [1n, new Uint8Array([1])]),
        data(1n, 1n, [1n, new Uint8Array([1])]),
        data(1n, 1n, [1n, new Uint8Array([2])]),
        data(1n, 1n, [null, null]),
      ],
      removed: [],
    });
    expect(s['changed-partition-count']).toBe('3');
  });
});
