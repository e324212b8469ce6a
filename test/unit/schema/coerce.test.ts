import { describe, expect, it } from 'vitest';
import { decimal, field, list, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import { JsonNumberText, type JsonObject, parseJsonRecord } from '../../../lambdas/src/records/json-line.ts';
import { coerceToSchema } from '../../../lambdas/src/schema/coerce.ts';

const schema = struct([
  field(1, 'qty', T.long),
  field(2, 'small', T.int),
  field(3, 'amount', T.double),
  field(4, 'price', decimal(12, 2)),
  field(5, 'note', T.string),
  field(6, 'flag', T.boolean),
  field(7, 'inner', struct([field(8, 'n', T.long)])),
  field(9, 'tags', list(10, T.string)),
]);
const rec = (text: string) => parseJsonRecord(text) as JsonObject;

describe('coerceToSchema', () => {
  it('converts lossless mismatches to the column type and notes each one', () => {
    const c = coerceToSchema(
      rec(
        '{"qty":"42","small":"-7","amount":"12.50","price":"19.99","note":42,"flag":"true","inner":{"n":"5"},"tags":[1,true]}',
      ),
      schema,
    );
    expect(c.value.qty).toBe(42n);
    expect(c.value.small).toBe(-7n);
    expect(c.value.amount).toEqual(new JsonNumberText('12.50', 12.5));
    expect(c.value.price).toEqual(new JsonNumberText('19.99', 19.99));
    expect(c.value.note).toBe('42');
    expect(c.value.flag).toBe(true);
    expect(c.value.inner).toEqual({ n: 5n });
    expect(c.value.tags).toEqual(['1', 'true']);
    expect(c.notes).toEqual([
      'qty: string→long',
      'small: string→int',
      'amount: string→double',
      'price: string→decimal(12,2)',
      'note: integer→string',
      'flag: string→boolean',
      'inner.n: string→long',
      'tags[0]: integer→string',
      'tags[1]: boolean→string',
    ]);
  });

  it('leaves values that would lose information, and matching values, untouched', () => {
    const input = rec(
      '{"qty":"4.5","small":"99999999999","amount":"abc","note":"x","flag":"yes","extra":"1"}',
    );
    const c = coerceToSchema(input, schema);
    expect(c.notes).toEqual([]);
    expect(c.value).toBe(input);
    // An integer beyond 2^53 into a double column would round: left alone.
    expect(coerceToSchema({ amount: 2n ** 60n }, schema).notes).toEqual([]);
    expect(coerceToSchema({ amount: 12n }, schema).value.amount).toEqual(new JsonNumberText('12.0', 12));
  });
});
