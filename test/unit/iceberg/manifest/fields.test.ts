import { describe, expect, it } from 'vitest';
import {
  dataFileType,
  manifestEntryType,
  manifestFileType,
} from '../../../../lambdas/src/iceberg/manifest/index.ts';
import { field, struct, T } from '../../../../lambdas/src/iceberg/types.ts';

const ids = (s: { fields: readonly { id: number }[] }) => s.fields.map((f) => f.id);
const required = (s: { fields: readonly { id: number; required: boolean }[] }) =>
  s.fields.filter((f) => f.required).map((f) => f.id);

// Orders and R/O columns transcribed from iceberg-aws-facts.md §2.3, §2.6, §2.7.
describe('field tables follow the facts doc (Java order, required flags per version)', () => {
  it('manifest_file', () => {
    expect(ids(manifestFileType(1))).toEqual([500, 501, 502, 503, 504, 505, 506, 507, 512, 513, 514, 519]);
    expect(ids(manifestFileType(2))).toEqual([
      500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519,
    ]);
    expect(ids(manifestFileType(3))).toEqual([
      500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507, 519, 520,
    ]);
    expect(required(manifestFileType(1))).toEqual([500, 501, 502, 503]);
    expect(required(manifestFileType(2))).toEqual([
      500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514,
    ]);
    const partitions = manifestFileType(2).fields.find((f) => f.id === 507)!.type;
    expect(partitions).toMatchObject({ kind: 'list', elementId: 508, elementRequired: true });
  });

  it('manifest_entry and data_file', () => {
    const p = struct([field(1000, 'x', T.int, true)]);
    expect(ids(manifestEntryType(1, p))).toEqual([0, 1, 2]);
    expect(ids(manifestEntryType(2, p))).toEqual([0, 1, 3, 4, 2]);
    expect(required(manifestEntryType(2, p))).toEqual([0, 2]);
    expect(ids(dataFileType(1, p))).toEqual([
      100, 101, 102, 103, 104, 105, 108, 109, 110, 137, 125, 128, 131, 132, 140,
    ]);
    expect(ids(dataFileType(2, p))).toEqual([
      134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 143,
    ]);
    expect(ids(dataFileType(3, p))).toEqual([
      134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 142, 143, 144, 145,
    ]);
    expect(required(dataFileType(2, p))).toEqual([134, 100, 101, 102, 103, 104]);
    // Partition fields are always optional in manifests (facts §4.5), whatever the caller passed.
    const part = dataFileType(2, p).fields.find((f) => f.id === 102)!.type;
    expect(part).toEqual(struct([field(1000, 'x', T.int, false)]));
  });
});
