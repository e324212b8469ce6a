import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalSchemaRegistry } from '../../../../lambdas/src/adapters/local/local-schema-registry.ts';
import { seededIds } from '../../../../lambdas/src/adapters/local/system-clock.ts';
import { ErrorKind, isFloeError } from '../../../../lambdas/src/errors.ts';
import { orderV1, orderV2, userEvent } from '../../records/avro-sample-schemas.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('LocalSchemaRegistry', () => {
  it('numbers versions per schema and reuses the id of an identical definition', async () => {
    const reg = new LocalSchemaRegistry({ ids: seededIds(7) });
    const o1 = await reg.register('OrderEvent', JSON.stringify(orderV1));
    const u1 = await reg.register('UserEvent', JSON.stringify(userEvent));
    const o2 = await reg.register('OrderEvent', JSON.stringify(orderV2));
    // Same definition, other whitespace and key order: the existing version.
    const reordered = {
      fields: orderV1.fields,
      namespace: orderV1.namespace,
      name: orderV1.name,
      type: 'record',
    };
    const again = await reg.register('OrderEvent', JSON.stringify(reordered, null, 2));
    expect(again.id).toBe(o1.id);
    expect([o1.versionNumber, o2.versionNumber, u1.versionNumber]).toEqual([1, 2, 1]);
    expect(new Set([o1.id, o2.id, u1.id]).size).toBe(3);
    expect(o1).toMatchObject({ schemaName: 'OrderEvent', dataFormat: 'AVRO' });
    expect(await reg.getSchemaVersion(o2.id.toUpperCase())).toBe(o2);
    expect((await reg.versions('OrderEvent')).map((v) => v.id)).toEqual([o1.id, o2.id]);
    expect(await reg.latest('OrderEvent')).toBe(o2);
    expect(await reg.latest('Nope')).toBeUndefined();
  });

  it('serialises concurrent registrations of one definition into one version', async () => {
    const reg = new LocalSchemaRegistry({ ids: seededIds(1) });
    const vs = await Promise.all(
      Array.from({ length: 5 }, () => reg.register('OrderEvent', JSON.stringify(orderV1))),
    );
    expect(new Set(vs.map((v) => v.id)).size).toBe(1);
  });

  it('rejects an unknown id with NotFound', async () => {
    const reg = new LocalSchemaRegistry({ ids: seededIds(1) });
    await expect(reg.getSchemaVersion('00000000-0000-4000-8000-000000000000')).rejects.toSatisfy((e) =>
      isFloeError(e, ErrorKind.NotFound),
    );
  });

  it('persists to a file shared by several instances', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'floe-gsr-'));
    dirs.push(dir);
    const file = join(dir, 'nested', 'registry.json');
    const a = new LocalSchemaRegistry({ ids: seededIds(1), file });
    const b = new LocalSchemaRegistry({ ids: seededIds(2), file });
    const o1 = await a.register('OrderEvent', JSON.stringify(orderV1));
    // b loads lazily, and looks in the file again for an id it does not know.
    expect(await b.getSchemaVersion(o1.id)).toEqual(o1);
    const o2 = await a.register('OrderEvent', JSON.stringify(orderV2));
    expect(await b.getSchemaVersion(o2.id)).toEqual(o2);
    // b registers against what the file holds: v1 again is the existing version, a new one is v3.
    expect((await b.register('OrderEvent', JSON.stringify(orderV1))).id).toBe(o1.id);
    const o3 = await b.register('OrderEvent', JSON.stringify({ ...orderV2, doc: 'v3' }));
    expect(o3.versionNumber).toBe(3);
    const saved = JSON.parse(await readFile(file, 'utf8')) as { versions: unknown[] };
    expect(saved.versions.length).toBe(3);
    await writeFile(file, 'not json');
    const c = new LocalSchemaRegistry({ ids: seededIds(3), file });
    await expect(c.getSchemaVersion(o1.id)).rejects.toThrow(/is corrupt/);
  });

  it('rejects an empty schema name and a change of data format', async () => {
    const reg = new LocalSchemaRegistry({ ids: seededIds(1) });
    await expect(reg.register(' ', '{}')).rejects.toThrow(/must not be empty/);
    await reg.register('S', '{"type":"object"}', 'JSON');
    await expect(reg.register('S', JSON.stringify(orderV1))).rejects.toThrow(
      /is JSON, cannot register a AVRO/,
    );
  });
});
