/**
 * The demo's change-data-capture part: Debezium change events of a `customers` table
 * (sample/sample-changes.ts) sent through the same local stream as the sample's events, keyed by
 * the customer id, into an upsert table; at the end the table's merged rows (read by `floe
 * query`'s engine, which applies the equality deletes) must equal the last state of every key in
 * what was sent.
 */
import { promises as fs } from 'node:fs';
import { type KinesisClient, putRecords } from '../adapters/aws/kinesis-producer.ts';
import {
  CHANGE_TABLE,
  type ChangeEvent,
  changeKey,
  customerChanges,
  finalState,
} from '../sample/sample-changes.ts';
import type { openQueryEngine } from './query-command.ts';

export { CHANGE_TABLE } from '../sample/sample-changes.ts';

/** What the demo's config adds for the change events: route by `source.table`, upsert by `id`. */
export const CDC_CONFIG = {
  routing: { tableField: 'source.table' },
  upsert: { [CHANGE_TABLE]: { key: ['id'], envelope: 'debezium' } },
} as const;

/** The customers query the demo prints. */
export const CDC_QUERY = `SELECT tier, count(*) AS customers, count(DISTINCT region) AS regions, max(revision) AS most_revisions FROM ${CHANGE_TABLE} GROUP BY tier ORDER BY tier`;

/** Sends the change stream in rounds, continuing it each time; records every change sent. */
export class ChangeFeed {
  private readonly changes: Generator<ChangeEvent>;
  readonly sent: ChangeEvent[] = [];

  constructor(
    seed: number,
    nowMs: number,
    private readonly client: KinesisClient,
    private readonly stream: string,
    /** NDJSON copy of every change, in the order sent. */
    readonly file: string,
  ) {
    this.changes = customerChanges({ seed, nowMs });
  }

  /** Sends the next `count` changes (partition key = customer id); returns a line saying what they were. */
  async send(count: number): Promise<string> {
    const batch: ChangeEvent[] = [];
    for (let i = 0; i < count; i++) batch.push(this.changes.next().value as ChangeEvent);
    const lines = batch.map((e) => JSON.stringify(e));
    await putRecords(
      this.client,
      this.stream,
      batch.map((e, i) => ({ data: new TextEncoder().encode(lines[i]!), partitionKey: changeKey(e) })),
    );
    this.sent.push(...batch);
    await fs.appendFile(this.file, `${lines.join('\n')}\n`);
    const ops = { c: 0, u: 0, d: 0 };
    for (const e of batch) ops[e.op]++;
    return `sent ${count} customer changes (Debezium envelopes, partition key = customer id): ${ops.c} creates, ${ops.u} updates, ${ops.d} deletes`;
  }
}

/**
 * The customers table against the last state of each key in `sent`: the verdict and the line the
 * demo prints (`customers (CDC): … → K rows, matches the change stream`).
 */
export async function checkCustomers(
  engine: Awaited<ReturnType<typeof openQueryEngine>>,
  sent: readonly ChangeEvent[],
  label = `${CHANGE_TABLE} (CDC)`,
): Promise<{ ok: boolean; line: string }> {
  const want = finalState(sent);
  const expected = [...want.rows.values()].map((r) =>
    rowText([r.id, r.name, r.email, r.tier, r.region, r.revision, Date.parse(r.updated_at)]),
  );
  const res = await engine.query(
    `SELECT id, name, email, tier, region, revision, epoch_ms(updated_at) AS updated_ms FROM ${CHANGE_TABLE}`,
  );
  const got = res.rows.map((x) =>
    rowText([x.id, x.name, x.email, x.tier, x.region, x.revision, x.updated_ms] as unknown[]),
  );
  const wantSet = new Set(expected);
  const gotSet = new Set(got);
  const missing = expected.filter((r) => !gotSet.has(r)).length;
  const unexpected = got.filter((r) => !wantSet.has(r)).length;
  const ok = missing === 0 && unexpected === 0 && got.length === expected.length;
  const counts = `${want.keys} keys, ${want.updates} updates, ${want.deletes} deletes, ${want.recreates} re-inserts after delete`;
  const verdict = ok
    ? 'matches the change stream'
    : `MISMATCH: expected ${expected.length} rows, ${missing} missing or stale, ${unexpected} unexpected${got.length === gotSet.size ? '' : ', duplicate keys'}`;
  return { ok, line: `${label}: ${counts} → ${got.length} rows, ${verdict}` };
}

function rowText(values: readonly unknown[]): string {
  return JSON.stringify(values.map((v) => (v === null || v === undefined ? null : String(v))));
}
