/**
 * Field lists and guards apply to Avro records as they do to JSON: the ingest reshapes the writer
 * schema and the rows (drop / only), checks `keep`, judges the guards, and the committer reshapes
 * pending rows the same way when it creates or evolves the table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSchemaRegistry } from '../../lambdas/src/adapters/local/local-schema-registry.ts';
import { seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { commitTable } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { currentSchema } from '../../lambdas/src/iceberg/table-metadata.ts';
import { encodeGsrFrame } from '../../lambdas/src/records/gsr.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { tempDir } from '../helpers/e2e.ts';
import { batchOf, committedIds, records, startPipeline } from '../helpers/pipeline.ts';
import {
  avscEncode,
  clickDatum,
  clickEvent,
  orderDatumV2,
  orderV2,
} from '../unit/records/avro-sample-schemas.ts';

let dynamo: LocalDynamo;
let tmp: ReturnType<typeof tempDir>;
beforeAll(async () => {
  dynamo = await startDynalite();
  tmp = tempDir('floe-avro-rules-');
});
afterAll(async () => {
  await dynamo?.close();
  tmp?.cleanup();
});

async function run(config: unknown, dir: string) {
  const registry = new LocalSchemaRegistry({ ids: seededIds(9) });
  const order = await registry.register('OrderEvent', JSON.stringify(orderV2));
  const click = await registry.register('ClickEvent', JSON.stringify(clickEvent));
  const p = await startPipeline(dynamo, dir, {
    config: { format: 'avro-gsr', ...(config as object) },
    registry,
  });
  const orders = [0, 1, 2].map((i) =>
    encodeGsrFrame(
      order.id,
      avscEncode(orderV2, { ...orderDatumV2, event_id: `O-${i}`, payment_method: i === 2 ? null : 'card' }),
    ),
  );
  const clicks = [0, 1].map((i) =>
    encodeGsrFrame(click.id, avscEncode(clickEvent, { ...clickDatum, event_id: `C-${i}` })),
  );
  const r = await ingestBatch(
    p.ingestDeps(),
    batchOf('shardId-000000000004', records([...orders, ...clicks])),
  );
  for (const t of r.tables) await commitTable(p.committerDeps(), t.table);
  return { p, r };
}

describe('field lists and guards on Avro records', () => {
  it('drop reshapes the table; allowTables dead-letters other schemas', async () => {
    const { p, r } = await run(
      {
        fields: { tables: { orderevent: { drop: ['customer_id', 'promo_code'] } } },
        guards: { allowTables: 'order.*' },
      },
      `${tmp.dir}/drop`,
    );
    expect(r.deadLetters).toEqual({ 'guard-allow-tables': 2 });
    const t = await p.wh.catalog.loadTable({ namespace: 'default', name: 'orderevent' });
    const cols = currentSchema(t.metadata).fields.map((f) => f.name);
    expect(cols).toContain('order_id');
    expect(cols).not.toContain('customer_id');
    expect(cols).not.toContain('promo_code');
    expect((await committedIds(p)).get('orderevent')).toEqual(['O-0', 'O-1', 'O-2']);
    expect(await p.wh.catalog.tableExists({ namespace: 'default', name: 'clickevent' })).toBe(false);
  });

  it('keep dead-letters rows without the kept field; only keeps just the listed fields', async () => {
    const { p, r } = await run(
      {
        fields: {
          tables: {
            orderevent: { keep: ['payment_method'] },
            clickevent: { only: ['event_id', 'page_url'] },
          },
        },
      },
      `${tmp.dir}/keep`,
    );
    expect(r.deadLetters).toEqual({ 'missing-kept-field': 1 });
    expect((await committedIds(p)).get('orderevent')).toEqual(['O-0', 'O-1']);
    const click = await p.wh.catalog.loadTable({ namespace: 'default', name: 'clickevent' });
    expect(currentSchema(click.metadata).fields.map((f) => f.name)).toEqual(['event_id', 'page_url']);
    expect((await committedIds(p)).get('clickevent')).toEqual(['C-0', 'C-1']);
  });
});
