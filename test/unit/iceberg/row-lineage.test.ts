import { describe, expect, it } from 'vitest';
import {
  inheritRowLineage,
  LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID,
  ROW_ID_FIELD_ID,
  ROW_LINEAGE_FIELDS,
  rowLineageNameClash,
  withRowLineage,
} from '../../../lambdas/src/iceberg/row-lineage.ts';
import { field, T } from '../../../lambdas/src/iceberg/types.ts';

describe('row lineage (spec §Row Lineage)', () => {
  it('keeps values a file holds and inherits the rest: first_row_id + position, the data sequence number', () => {
    const rows = [
      { id: 1n, _row_id: null, _last_updated_sequence_number: null },
      { id: 2n, _row_id: 7n, _last_updated_sequence_number: 3n },
      { id: 3n, _row_id: null, _last_updated_sequence_number: 4n },
      { id: 4n },
    ];
    expect(inheritRowLineage(rows, { firstRowId: 100n, dataSequenceNumber: 9n })).toEqual([
      { id: 1n, _row_id: 100n, _last_updated_sequence_number: 9n },
      { id: 2n, _row_id: 7n, _last_updated_sequence_number: 3n },
      { id: 3n, _row_id: 102n, _last_updated_sequence_number: 4n },
      { id: 4n, _row_id: 103n, _last_updated_sequence_number: 9n },
    ]);
  });

  it('reads null for both when the file has no first_row_id (upgraded table), whatever it holds', () => {
    const rows = [{ id: 1n, _row_id: 5n, _last_updated_sequence_number: 2n }, { id: 2n }];
    expect(inheritRowLineage(rows, { firstRowId: undefined, dataSequenceNumber: 9n })).toEqual([
      { id: 1n, _row_id: null, _last_updated_sequence_number: null },
      { id: 2n, _row_id: null, _last_updated_sequence_number: null },
    ]);
  });

  it('the reserved columns: optional longs with the reserved ids, after the table columns', () => {
    expect(ROW_LINEAGE_FIELDS).toEqual([
      { id: 2147483540, name: '_row_id', required: false, type: T.long },
      { id: 2147483539, name: '_last_updated_sequence_number', required: false, type: T.long },
    ]);
    expect([ROW_ID_FIELD_ID, LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID]).toEqual([2147483540, 2147483539]);
    const schema = { schemaId: 0, fields: [field(1, 'id', T.long, true)] };
    expect(withRowLineage(schema).fields.map((f) => f.id)).toEqual([1, 2147483540, 2147483539]);
    expect(rowLineageNameClash(schema)).toBeUndefined();
    expect(rowLineageNameClash({ schemaId: 0, fields: [field(1, '_row_id', T.string)] })).toMatch(/_row_id/);
  });
});
