/**
 * Producers as they really write (issue 20), through `floe local up` (kinesalite, the ingest and
 * committer handlers, dynalite): KPL aggregates (`floe send --aggregate`), gzip payloads
 * (`--gzip`), CloudWatch Logs subscription batches (gzip JSON, control messages among them),
 * EventBridge events and a DynamoDB table's change log (shuffled, some twice), all on one stream
 * with no configuration. Every user record lands exactly
 * once, read back with `floe query`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createKinesisClient } from '../../lambdas/src/adapters/aws/kinesis-producer.ts';
import { openQueryEngine } from '../../lambdas/src/cli/query-command.ts';
import { sendCommand } from '../../lambdas/src/cli/send-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { isAggregate } from '../../lambdas/src/records/framing/kpl.ts';
import { dynamoDbStreamArb, finalState, itemKey, itemState, rowState } from '../fuzz/dynamodb-streams.ts';
import { tempDir } from '../helpers/e2e.ts';
import { Rng } from '../helpers/faults.ts';
import { readStream } from '../helpers/kinesis-records.ts';
import { startLocalUp } from '../helpers/local-up.ts';

const LOG_GROUP = '/aws/lambda/checkout';

function files(dir: string, rng: Rng) {
  const orders = Array.from({ length: 1500 }, (_, i) =>
    JSON.stringify({
      event_type: 'order',
      event_id: `o-${i}`,
      amount: rng.int(1, 500),
      note: 'x'.repeat(rng.int(0, 80)),
    }),
  );
  const users = Array.from({ length: 300 }, (_, i) =>
    JSON.stringify({ event_type: 'user', event_id: `u-${i}` }),
  );
  // CloudWatch Logs batches as a subscription filter writes them (gzip-compressed by `--gzip`):
  // structured Powertools-style lines, plain text lines, and control messages between them.
  const batches: string[] = [];
  let logId = 0;
  for (let b = 0; b < 40; b++) {
    if (b % 10 === 0) {
      batches.push(
        JSON.stringify({
          messageType: 'CONTROL_MESSAGE',
          owner: 'CloudwatchLogs',
          logGroup: '',
          logStream: '',
          subscriptionFilters: [],
          logEvents: [
            {
              id: '',
              timestamp: 1764700000000,
              message: 'CWL CONTROL MESSAGE: Checking health of destination Kinesis stream.',
            },
          ],
        }),
      );
    }
    const events = Array.from({ length: rng.int(1, 30) }, () => {
      const id = logId++;
      const message =
        id % 4 === 0
          ? `REPORT RequestId: r-${id} Duration: 12.5 ms`
          : JSON.stringify({ level: 'INFO', message: 'order placed', service: 'checkout', log_seq: id });
      return { id: `3${String(id).padStart(10, '0')}`, timestamp: 1764700000000 + id, message };
    });
    batches.push(
      JSON.stringify({
        messageType: 'DATA_MESSAGE',
        owner: '123456789012',
        logGroup: LOG_GROUP,
        logStream: `2026/12/02/[$LATEST]${b % 3}`,
        subscriptionFilters: ['floe'],
        logEvents: events,
      }),
    );
  }
  const bridge = Array.from({ length: 200 }, (_, i) =>
    JSON.stringify({
      version: '0',
      id: `eb-${i}`,
      'detail-type': 'Shipment Sent',
      source: 'com.shop.shipping',
      account: '123456789012',
      time: '2026-12-02T10:00:00Z',
      region: 'eu-west-1',
      resources: [],
      detail: { event_type: 'shipment', shipment_id: i, carrier: i % 2 ? 'ups' : 'dhl' },
    }),
  );
  // A DynamoDB table's change log as Kinesis Data Streams for DynamoDB writes it, shuffled and
  // with duplicates (as that stream may deliver it).
  const [changes] = fc.sample(dynamoDbStreamArb({ maxKeys: 10, minHistories: 40, maxHistories: 60 }), {
    seed: 20,
    numRuns: 1,
  });
  if (!changes) throw new Error('no change stream');
  const write = (name: string, lines: string[]) => {
    const path = join(dir, name);
    writeFileSync(path, `${lines.join('\n')}\n`);
    return path;
  };
  return {
    orders: write('orders.ndjson', orders),
    users: write('users.ndjson', users),
    logs: write('logs.ndjson', batches),
    bridge: write('bridge.ndjson', bridge),
    changes: write('dynamodb-changes.ndjson', [...changes.lines]),
    finalState: new Map([...finalState(changes.changes)].map(([k, item]) => [k, itemState(item)])),
    logEvents: logId,
  };
}

describe('producers as they write, through floe local up', () => {
  it('KPL aggregates, gzip, CloudWatch Logs batches, EventBridge events and DynamoDB changes land exactly once', async () => {
    const tmp = tempDir('floe-framings-');
    const dir = join(tmp.dir, 'wh');
    const input = files(tmp.dir, new Rng(20));
    const up = await startLocalUp(dir);
    const { endpoint } = up;
    try {
      const quiet = { endpoint, quiet: true } as const;
      const sent = await sendCommand(
        [input.orders],
        { ...quiet, aggregate: '4096', partitionKeyField: 'event_id' },
        () => undefined,
      );
      expect(sent.files[0]!.userRecords).toBe(1500);
      expect(sent.sent).toBeLessThan(200); // aggregated: far fewer Kinesis records than lines
      await sendCommand([input.users], { ...quiet, gzip: true }, () => undefined);
      await sendCommand([input.logs], { ...quiet, gzip: true }, () => undefined);
      await sendCommand([input.bridge], { ...quiet, aggregate: true, gzip: true }, () => undefined);
      await sendCommand([input.changes], quiet, () => undefined);
      // What went on the wire is framed as producers frame it.
      const client = createKinesisClient({ endpoint: endpoint! });
      const onWire = await readStream(client, 'floe-events').finally(() => client.destroy());
      expect(onWire.filter((r) => isAggregate(r.data)).length).toBeGreaterThan(0);
      expect(onWire.filter((r) => r.data[0] === 0x1f && r.data[1] === 0x8b).length).toBe(300 + 44);

      const expected: Record<string, number> = {
        order_events: 1500,
        user_events: 300,
        unknown_events: input.logEvents, // log events carry no event_type
        shipment_events: 200,
      };
      const wh = openWarehouse(dir);
      let counts: Record<string, number> = {};
      for (let i = 0; i < 150; i++) {
        await new Promise((r) => setTimeout(r, 200));
        counts = await countsOf(wh, Object.keys(expected));
        if (Object.entries(expected).every(([t, n]) => (counts[t] ?? 0) >= n)) break;
      }
      expect(counts).toEqual(expected);
      // The DynamoDB-fed table: the source table's final state, whatever order the changes took.
      let state = new Map<string, string>();
      for (let i = 0; i < 100; i++) {
        state = await musicState(wh);
        if (isDeepStrictEqual(state, input.finalState)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(state).toEqual(input.finalState);
      const engine = await openQueryEngine(wh);
      try {
        const q = async (sql: string) => (await engine.query(sql)).rows;
        // Exactly once: every id once.
        expect(await q('SELECT count(DISTINCT event_id) AS n FROM order_events')).toEqual([{ n: 1500n }]);
        expect(
          await q('SELECT count(DISTINCT shipment_id) AS n, min(source) AS s FROM shipment_events'),
        ).toEqual([{ n: 200n, s: 'com.shop.shipping' }]);
        // Log events: structured lines give their fields, text lines their message; each carries
        // its group, stream and time.
        const logs = await q(
          "SELECT count(*) AS n, count(log_seq) AS structured, count(DISTINCT log_event_id) AS ids, min(log_group) AS g, count(*) FILTER (WHERE message LIKE 'REPORT%') AS text FROM unknown_events",
        );
        expect(logs[0]).toMatchObject({
          n: BigInt(input.logEvents),
          ids: BigInt(input.logEvents),
          g: LOG_GROUP,
        });
        expect(Number(logs[0]!.structured) + Number(logs[0]!.text)).toBe(input.logEvents);
        const types = await q(
          "SELECT data_type AS t FROM information_schema.columns WHERE table_name = 'unknown_events' AND column_name = 'log_time'",
        );
        expect(String(types[0]?.t)).toMatch(/TIMESTAMP WITH TIME ZONE/i);
      } finally {
        engine.close();
      }
    } finally {
      await up.stop();
      tmp.cleanup();
    }
  }, 120_000);
});

async function musicState(wh: ReturnType<typeof openWarehouse>): Promise<Map<string, string>> {
  const engine = await openQueryEngine(wh);
  try {
    const tables = (await engine.query('SELECT table_name AS t FROM information_schema.tables')).rows;
    if (!tables.some((r) => r.t === 'music_catalog')) return new Map();
    const rows = (await engine.query('SELECT * FROM music_catalog')).rows;
    return new Map(rows.map((r) => [itemKey(String(r.artist), BigInt(r.songid as bigint)), rowState(r)]));
  } finally {
    engine.close();
  }
}

async function countsOf(
  wh: ReturnType<typeof openWarehouse>,
  tables: readonly string[],
): Promise<Record<string, number>> {
  const engine = await openQueryEngine(wh);
  try {
    const seen = new Set(
      (await engine.query('SELECT table_name AS t FROM information_schema.tables')).rows.map((r) => r.t),
    );
    const out: Record<string, number> = {};
    for (const t of tables) {
      if (seen.has(t)) out[t] = Number((await engine.query(`SELECT count(*) AS n FROM ${t}`)).rows[0]!.n);
    }
    return out;
  } finally {
    engine.close();
  }
}
