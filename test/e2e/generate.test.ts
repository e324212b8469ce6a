/**
 * `floe generate` into the local stack's kinesalite stream, JSON and GSR-framed Avro (schemas
 * registered in the stack's registry file), then the stack's poller + ingest + committer: every
 * event in the `--record-to` file lands exactly once in its table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCommand } from '../../lambdas/src/cli/generate-command.ts';
import { openQueryEngine } from '../../lambdas/src/cli/query-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import { LocalStack } from '../../lambdas/src/local/stack.ts';
import { sorted, tempDir } from '../helpers/e2e.ts';
import { readStream } from '../helpers/kinesis-records.ts';
import { committedIdsOf } from '../helpers/pipeline.ts';

/** A Debezium envelope as `floe generate --cdc` writes it. */
interface Change {
  readonly op: string;
  readonly before: Record<string, unknown> | null;
  readonly after: Record<string, unknown> | null;
}

let tmp: ReturnType<typeof tempDir>;
let stack: LocalStack;

beforeAll(async () => {
  tmp = tempDir('floe-generate-');
  stack = await LocalStack.start({
    warehouseDir: join(tmp.dir, 'wh'),
    config: parseConfig({ format: 'avro-gsr', jsonFallback: true }),
    shards: 2,
  });
  await stack.startPoller();
});

afterAll(async () => {
  await stack?.stop();
  tmp?.cleanup();
});

describe('floe generate → local stack', () => {
  it('JSON v1, then Avro v2: every recorded event lands once in its table', async () => {
    const record = join(tmp.dir, 'sent.ndjson');
    const lines: string[] = [];
    const common = { endpoint: stack.kinesis.endpoint, stream: stack.streamName, recordTo: record };
    const r1 = await generateCommand(
      { ...common, events: '1500', version: 'v1', seed: '1' },
      (s) => lines.push(s),
      stack.kinesis.client,
    );
    const r2 = await generateCommand(
      { ...common, events: '1200', version: 'v2', seed: '2', format: 'avro', warehouse: join(tmp.dir, 'wh') },
      (s) => lines.push(s),
      stack.kinesis.client,
    );
    expect(r1.sent + r2.sent).toBe(2700);
    expect(lines.some((l) => l.includes('schema OrderEvent version 1'))).toBe(true);
    await stack.drain();
    for (let i = 0; i < 5; i++) {
      await stack.commit();
      if ((await stack.ledger.tablesWithStagedWork()).length === 0) break;
    }
    const sent = readFileSync(record, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(sent.length).toBe(2700);
    const want = new Map<string, string[]>();
    sent.forEach((e, i) => {
      const t =
        i < 1500
          ? `${String(e.event_type).toLowerCase()}_events`
          : `${String(e.event_type).toLowerCase()}event`;
      want.set(t, [...(want.get(t) ?? []), String(e.event_id)]);
    });
    const got = await committedIdsOf(stack.catalog, stack.store, 'default');
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [t, ids] of want) expect(got.get(t), t).toEqual(sorted(ids));
  });

  it('--cdc: Debezium customer changes keyed by customer id; an upsert table ends at the last state of each key', async () => {
    const cdc = await LocalStack.start({
      warehouseDir: join(tmp.dir, 'wh-cdc'),
      config: parseConfig({
        routing: { tableField: 'source.table' },
        upsert: { customers: { key: ['id'], envelope: 'debezium' } },
      }),
      shards: 3,
    });
    try {
      await cdc.startPoller();
      const record = join(tmp.dir, 'changes.ndjson');
      const lines: string[] = [];
      const opts = { stream: cdc.streamName, recordTo: record, cdc: true };
      // Two runs with one seed: the second repeats the first's keys, so its creates, updates and
      // deletes meet rows an earlier commit wrote.
      const r1 = await generateCommand(
        { ...opts, events: '400', seed: '5' },
        (s) => lines.push(s),
        cdc.kinesis.client,
      );
      await cdc.drain();
      await cdc.commit();
      const r2 = await generateCommand(
        { ...opts, events: '300', seed: '5' },
        (s) => lines.push(s),
        cdc.kinesis.client,
      );
      expect(r1.sent + r2.sent).toBe(700);
      expect(Object.keys(r1.byType).sort()).toEqual(['c', 'd', 'u']);
      expect(lines.some((l) => /^sent 400 events: .*c \d+/.test(l))).toBe(true);
      await cdc.drain();
      for (let i = 0; i < 5; i++) {
        await cdc.commit();
        if ((await cdc.ledger.tablesWithStagedWork()).length === 0) break;
      }

      const sent = readFileSync(record, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Change);
      expect(sent).toHaveLength(700);
      const keyOf = (c: Change) => String((c.op === 'd' ? c.before : c.after)!.id);
      // Every record went out keyed by its customer id.
      const stream = await readStream(cdc.kinesis.client, cdc.streamName);
      expect(sorted(stream.map((x) => `${x.partitionKey} ${Buffer.from(x.data).toString('utf8')}`))).toEqual(
        sorted(sent.map((c) => `${keyOf(c)} ${JSON.stringify(c)}`)),
      );
      // The table: the last change of each key, in the order sent.
      const want = new Map<string, string>();
      for (const c of sent) {
        const row = c.after;
        if (c.op === 'd') want.delete(keyOf(c));
        else
          want.set(
            keyOf(c),
            JSON.stringify(
              [row!.id, row!.name, row!.email, row!.tier, row!.region, row!.revision].map(String),
            ),
          );
      }
      expect(sent.filter((c) => c.op === 'd').length).toBeGreaterThan(0);
      const engine = await openQueryEngine(openWarehouse(join(tmp.dir, 'wh-cdc')));
      try {
        const got = await engine.query('SELECT id, name, email, tier, region, revision FROM customers');
        expect(
          sorted(
            got.rows.map((x) =>
              JSON.stringify([x.id, x.name, x.email, x.tier, x.region, x.revision].map(String)),
            ),
          ),
        ).toEqual(sorted(want.values()));
      } finally {
        engine.close();
      }
      expect(await cdc.deadLetters.list({ limit: 10 })).toEqual([]);
    } finally {
      await cdc.stop();
    }
  });

  it('rejects bad options with a clear message', async () => {
    await expect(generateCommand({ events: '0' }, () => undefined, stack.kinesis.client)).rejects.toThrow(
      '--events must be a positive integer, got 0',
    );
    await expect(generateCommand({ format: 'avro' }, () => undefined, stack.kinesis.client)).rejects.toThrow(
      'needs a schema registry',
    );
    await expect(
      generateCommand({ format: 'avro', cdc: true }, () => undefined, stack.kinesis.client),
    ).rejects.toThrow('--cdc sends JSON change events');
  });
});
