import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../lambdas/src/config.ts';
import { ColumnarTableBatch } from '../../../lambdas/src/engine/columnar-batch.ts';
import { FastPath } from '../../../lambdas/src/engine/fast-path.ts';
import type { Schema } from '../../../lambdas/src/iceberg/schema.ts';
import type { StructType } from '../../../lambdas/src/iceberg/types.ts';
import { compileRouter } from '../../../lambdas/src/routing/index.ts';

/** The columnar batch of `lines` (one table), with the schema inferred from it. */
function batchOf(lines: readonly string[]): { batch: ColumnarTableBatch; schema: Schema } {
  const cfg = parseConfig({ routing: { defaultTable: 't', routingField: 'none' } });
  const fast = new FastPath({
    config: cfg,
    router: compileRouter(cfg.routing),
    batchFor: () => new ColumnarTableBatch([]),
  });
  lines.forEach((l, i) => {
    expect(fast.take(l, { seq: i + 1, source: 0, line: i + 1, position: 0 })).toBe(true);
  });
  const batch = [...fast.tables.values()][0]!;
  const type = batch.inferType({}, true) as StructType;
  return { batch, schema: { schemaId: 0, fields: type.fields } };
}

describe('ColumnarTableBatch.toColumnar: dictionary columns', () => {
  it('marks string columns of few distinct values, not unique ones or numbers', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('JFK', 'LAX', 'SFO', 'ORD'), { minLength: 64, maxLength: 600 }),
        (origins) => {
          const lines = origins.map((o, i) => JSON.stringify({ origin: o, id: `id-${i}`, n: i % 3 }));
          const { batch, schema } = batchOf(lines);
          const col = batch.toColumnar(schema)!;
          const id = (name: string) => schema.fields.find((f) => f.name === name)!.id;
          expect([...(col.dictionary ?? [])]).toEqual([id('origin')]);
        },
      ),
      { numRuns: 20 },
    );
  });

  it('marks none in a small batch (a dictionary does not pay there)', () => {
    const { batch, schema } = batchOf(Array.from({ length: 10 }, () => '{"origin":"JFK"}'));
    expect(batch.toColumnar(schema)!.dictionary).toBeUndefined();
  });
});
