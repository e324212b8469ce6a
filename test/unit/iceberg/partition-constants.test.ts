import { describe, expect, it } from 'vitest';
import { identityPartitionConstants } from '../../../lambdas/src/iceberg/partition-constants.ts';
import type { PartitionSpec } from '../../../lambdas/src/iceberg/partition-spec.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import { field, struct, T } from '../../../lambdas/src/iceberg/types.ts';

describe('identityPartitionConstants', () => {
  const schema: Schema = {
    schemaId: 2,
    fields: [
      field(1, 'day', T.date),
      field(2, 'kind', T.string),
      field(3, 'n', T.long), // was an int when the partition values were written
      field(4, 'st', struct([field(5, 'region', T.string)])),
    ],
  };
  const spec: PartitionSpec = {
    'spec-id': 1,
    fields: [
      { 'source-id': 1, 'field-id': 1000, name: 'day', transform: 'identity' },
      { 'source-id': 2, 'field-id': 1001, name: 'kind_bucket', transform: 'bucket[4]' },
      { 'source-id': 3, 'field-id': 1002, name: 'n', transform: 'identity' },
      { 'source-id': 5, 'field-id': 1003, name: 'region', transform: 'identity' },
      { 'source-id': 2, 'field-id': 1004, name: 'kind', transform: 'identity' },
    ],
  };

  it('maps identity source ids to the partition values, nested sources included; other transforms skipped', () => {
    const got = identityPartitionConstants(schema, spec, [19723, 3, 7, 'eu', null]);
    expect([...got]).toEqual([
      [1, 19723],
      [3, 7n],
      [5, 'eu'],
      [2, null],
    ]);
  });
});
