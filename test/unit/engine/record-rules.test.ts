/**
 * RecordRules applies a table's composed field lists (global + its own) on every path: `check`
 * (JSON: load, ingest), `checkTyped` (Avro ingest) and `shapeTyped` (the committer's reshaping).
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../lambdas/src/config.ts';
import { DeadLetterReason } from '../../../lambdas/src/engine/dead-letters.ts';
import { RecordRules } from '../../../lambdas/src/engine/record-rules.ts';
import { field, struct, T } from '../../../lambdas/src/iceberg/types.ts';
import type { Catalog } from '../../../lambdas/src/ports/catalog.ts';

// No guard needs the catalog here: any call to it is a test failure.
const noCatalog = new Proxy({} as Catalog, {
  get: (_t, name) => {
    throw new Error(`catalog.${String(name)} called`);
  },
});

const config = parseConfig({
  fields: {
    drop: ['secret', 'payload.token'],
    tables: {
      orders: { keep: ['id'] },
      audit: { only: ['secret', 'who', 'payload'] },
      vault: { keep: ['secret'] },
    },
  },
});

const rules = () => RecordRules.create(config, noCatalog);

const writer = struct([
  field(1, 'id', T.long),
  field(2, 'secret', T.string),
  field(3, 'who', T.string),
  field(4, 'payload', struct([field(5, 'token', T.string), field(6, 'note', T.string)])),
]);
const row = { id: 1n, secret: 's', who: 'me', payload: { token: 't', note: 'n' } };
const json = { id: 1, secret: 's', who: 'me', payload: { token: 't', note: 'n' } };

describe('composed field lists in RecordRules', () => {
  it('JSON: the global drop applies beside a table keep or only; a table keep naming it re-admits it', async () => {
    const r = await rules();
    expect(await r.check(json, 'orders')).toEqual({
      ok: true,
      value: { id: 1, who: 'me', payload: { note: 'n' } },
    });
    // `only` naming `payload` does not re-admit the globally dropped `payload.token`.
    expect(await r.check(json, 'audit')).toEqual({
      ok: true,
      value: { secret: 's', who: 'me', payload: { note: 'n' } },
    });
    expect(await r.check(json, 'vault')).toEqual({
      ok: true,
      value: { id: 1, secret: 's', who: 'me', payload: { note: 'n' } },
    });
    // A table without a scope gets the global rules.
    expect(await r.check(json, 'other')).toEqual({
      ok: true,
      value: { id: 1, who: 'me', payload: { note: 'n' } },
    });
  });

  it('JSON: keep keeps its meaning: a record lacking a kept field is dead-lettered', async () => {
    const r = await rules();
    const noId = await r.check({ secret: 's', who: 'me' }, 'orders');
    expect(noId).toMatchObject({ ok: false, reason: DeadLetterReason.MissingKeptField });
    const noSecret = await r.check({ id: 2, secret: null }, 'vault');
    expect(noSecret).toMatchObject({ ok: false, reason: DeadLetterReason.MissingKeptField });
    expect(noSecret.ok ? '' : noSecret.detail).toContain("'vault'");
    expect(noSecret.ok ? '' : noSecret.detail).toContain('secret');
  });

  it('Avro (checkTyped) and the committer (shapeTyped) reshape the struct and the row alike', async () => {
    const r = await rules();
    const names = (t: typeof writer) => t.fields.map((f) => f.name);
    const orders = await r.checkTyped(row, writer, 'orders');
    if (!orders.ok) throw new Error(orders.detail);
    expect(names(orders.struct)).toEqual(['id', 'who', 'payload']);
    expect(orders.row).toEqual({ id: 1n, who: 'me', payload: { note: 'n' } });

    const vault = r.shapeTyped(row, writer, 'vault');
    expect(names(vault.struct)).toEqual(['id', 'secret', 'who', 'payload']);
    expect(vault.row).toEqual({ id: 1n, secret: 's', who: 'me', payload: { note: 'n' } });

    const audit = r.shapeTyped(row, writer, 'audit');
    expect(names(audit.struct)).toEqual(['secret', 'who', 'payload']);
    expect(audit.row).toEqual({ secret: 's', who: 'me', payload: { note: 'n' } });

    const missing = await r.checkTyped({ ...row, secret: null }, writer, 'vault');
    expect(missing).toMatchObject({ ok: false, reason: DeadLetterReason.MissingKeptField });
  });
});
