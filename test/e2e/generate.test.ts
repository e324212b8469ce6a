/**
 * `floe generate` into the local stack's kinesalite stream, JSON and GSR-framed Avro (schemas
 * registered in the stack's registry file), then the stack's poller + ingest + committer: every
 * event in the `--record-to` file lands exactly once in its table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCommand } from '../../lambdas/src/cli/generate-command.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import { LocalStack } from '../../lambdas/src/local/stack.ts';
import { sorted, tempDir } from '../helpers/e2e.ts';
import { committedIdsOf } from '../helpers/pipeline.ts';

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

  it('rejects bad options with a clear message', async () => {
    await expect(generateCommand({ events: '0' }, () => undefined, stack.kinesis.client)).rejects.toThrow(
      '--events must be a positive integer, got 0',
    );
    await expect(generateCommand({ format: 'avro' }, () => undefined, stack.kinesis.client)).rejects.toThrow(
      'needs a schema registry',
    );
  });
});
