import { describe, expect, it } from 'vitest';
import { ErrorKind, isFloeError } from '../../../lambdas/src/errors.ts';
import {
  findMapped,
  NAME_MAPPING_PROPERTY,
  parseNameMapping,
  tableNameMapping,
} from '../../../lambdas/src/iceberg/name-mapping.ts';

// The example of spec Appendix C (Name Mapping Serialization).
const SPEC_EXAMPLE = `[ { "field-id": 1, "names": ["id", "record_id"] },
   { "field-id": 2, "names": ["data"] },
   { "field-id": 3, "names": ["location"], "fields": [
       { "field-id": 4, "names": ["latitude", "lat"] },
       { "field-id": 5, "names": ["longitude", "long"] }
     ] } ]`;

describe('name mapping (spec Appendix C)', () => {
  it('parses the spec example', () => {
    expect(parseNameMapping(SPEC_EXAMPLE)).toEqual([
      { fieldId: 1, names: ['id', 'record_id'] },
      { fieldId: 2, names: ['data'] },
      {
        fieldId: 3,
        names: ['location'],
        fields: [
          { fieldId: 4, names: ['latitude', 'lat'] },
          { fieldId: 5, names: ['longitude', 'long'] },
        ],
      },
    ]);
  });

  it('allows an entry without a field id and finds entries by any of their names', () => {
    const m = parseNameMapping([{ names: ['x'] }, { 'field-id': 7, names: ['a', 'b'] }]);
    expect(findMapped(m, 'x')).toEqual({ names: ['x'] });
    expect(findMapped(m, 'b')?.fieldId).toBe(7);
    expect(findMapped(m, 'c')).toBeUndefined();
  });

  it('reads the table property, or nothing when it is unset', () => {
    expect(tableNameMapping({ [NAME_MAPPING_PROPERTY]: SPEC_EXAMPLE })?.[0]?.fieldId).toBe(1);
    expect(tableNameMapping({})).toBeUndefined();
  });

  it.each([
    ['not an array', '{"names": ["a"]}'],
    ['names missing', '[{"field-id": 1}]'],
    ['a non-string name', '[{"field-id": 1, "names": [1]}]'],
    ['a fractional id', '[{"field-id": 1.5, "names": ["a"]}]'],
    ['nested fields not an array', '[{"field-id": 1, "names": ["a"], "fields": {}}]'],
    ['invalid JSON', '[{'],
  ])('refuses %s with DataInvalid', (_, text) => {
    let caught: unknown;
    try {
      parseNameMapping(text);
    } catch (e) {
      caught = e;
    }
    expect(isFloeError(caught, ErrorKind.DataInvalid), String(caught)).toBe(true);
  });
});
