/**
 * `floe demo` (what `npm run demo` runs): the whole streaming pipeline on one laptop. It starts the
 * embedded stack (kinesalite + dynalite in-process, a local-disk warehouse, a local schema registry),
 * lets the event-source poller drive the real ingest handler and runs the real committer on an
 * interval; sends the sample's v1 events, then v2 events with new fields, then GSR-framed Avro; shows
 * the tables appear and their schemas evolve; prints every table and one SQL query per table; and
 * checks that every table holds exactly the events sent (by event id, duplicates in the stream
 * included). Alongside, Debezium change events of a `customers` table (creates, updates, deletes,
 * re-creates; partition key = customer id) go into an upsert table, which must end up holding the
 * last state of every key (demo-cdc.ts). `--chaos` injects the faults of DESIGN §4 at seeded
 * random points on the way.
 */
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TableCommitResult } from '../app/committer.ts';
import { parseConfig } from '../config.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import { currentSchema } from '../iceberg/table-metadata.ts';
import { Chaos } from '../local/chaos.ts';
import { LocalStack } from '../local/stack.ts';
import { CDC_CONFIG, CDC_QUERY, CHANGE_TABLE, ChangeFeed, checkCustomers } from './demo-cdc.ts';
import { maintainDemoTables } from './demo-maintenance.ts';
import { renderTable } from './format.ts';
import { generateCommand } from './generate-command.ts';
import { describeReport, snapshotsReport } from './inspect.ts';
import { openQueryEngine } from './query-command.ts';
import { listAllTables, openWarehouse } from './warehouse.ts';

export interface DemoOptions {
  readonly warehouse?: string;
  readonly events?: string;
  readonly seed?: string;
  readonly recordTo?: string;
  readonly chaos?: boolean;
}

/** One query per table, chosen by what the table holds. */
const QUERIES: Readonly<Record<string, string>> = {
  order_events:
    'SELECT region, count(*) AS orders, round(sum(amount), 2) AS revenue FROM order_events GROUP BY region ORDER BY region',
  user_events:
    'SELECT action, count(*) AS events, count(user_agent) AS with_user_agent FROM user_events GROUP BY action ORDER BY action',
  click_events:
    'SELECT referrer, count(*) AS clicks, round(avg(scroll_depth), 1) AS avg_scroll FROM click_events GROUP BY referrer ORDER BY referrer',
  orderevent:
    'SELECT payment_method, count(*) AS orders, round(sum(amount), 2) AS revenue FROM orderevent GROUP BY payment_method ORDER BY payment_method',
};

export async function demoCommand(opts: DemoOptions, out: (s: string) => void): Promise<number> {
  const t0 = Date.now();
  const n = Number(opts.events ?? 2000);
  const seed = Number(opts.seed ?? 42);
  if (!Number.isInteger(n) || n < 1)
    throw new FloeError(ErrorKind.ConfigInvalid, `--events must be a positive integer, got ${opts.events}`);
  if (!Number.isInteger(seed) || seed < 0)
    throw new FloeError(ErrorKind.ConfigInvalid, `--seed must be a non-negative integer, got ${opts.seed}`);
  const dir = opts.warehouse ? resolve(opts.warehouse) : await fs.mkdtemp(join(tmpdir(), 'floe-demo-'));
  if (opts.warehouse && (await listAllTables(openWarehouse(dir)).catch(() => [])).length > 0) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `--warehouse ${dir} already holds tables: the demo checks its tables against what it sends, so give it an empty folder`,
    );
  }
  const step = (s: string) => out(`\n▶ ${s}`);
  const chaos = opts.chaos ? new Chaos(seed, 0.25) : undefined;

  step('starting the local stack (kinesalite and dynalite in-process, no Docker, no cloud)');
  const stack = await LocalStack.start({
    warehouseDir: dir,
    config: parseConfig({ format: 'avro-gsr', jsonFallback: true, ...CDC_CONFIG }),
    shards: 2,
  });
  out(`  Kinesis  ${stack.kinesis.endpoint}  stream ${stack.streamName} (2 shards)`);
  out(`  DynamoDB ${stack.dynamo.endpoint}  ledger + lock table ${stack.ledgerTable}`);
  out(`  warehouse ${dir}`);
  if (chaos) out(`  chaos: faults injected at seeded random points (seed ${seed})`);

  const recordFile = opts.recordTo ? resolve(opts.recordTo) : join(dir, '_floe', 'demo-sent.ndjson');
  await fs.rm(recordFile, { force: true });
  const cdcFile = join(dir, '_floe', 'demo-cdc-sent.ndjson');
  await fs.rm(cdcFile, { force: true });
  const ingestDeps = stack.ingestDeps(chaos ? { ledger: chaos.ledger(stack.ledger) } : {});
  const baseHandler = stack.ingestHandler(ingestDeps);
  await stack.startPoller(chaos ? chaos.handler(baseHandler) : baseHandler, {
    batchSize: 500,
    batchWindowMs: 100,
    maxRetries: 10,
    onFailure: (event, error) => {
      out(`  ✘ a batch of ${event.Records.length} records failed for good: ${(error as Error).message}`);
    },
  });

  // The committer on an interval, as the schedule runs it in AWS.
  let committing = true;
  const log: TableCommitResult[] = [];
  let runs = 0;
  const commitOnce = async () => {
    const deps = stack.committerDeps({ owner: `committer-${runs}` });
    const chaosDeps = chaos
      ? stack.committerDeps({
          owner: `committer-${runs}`,
          catalog: chaos.catalog(stack.catalog),
          lock: chaos.lock(stack.lock),
        })
      : deps;
    runs++;
    if (chaos?.chance()) {
      chaos.counts.concurrentCommits++;
      const [a, b] = await Promise.all([
        stack.commit(chaosDeps),
        stack.commit(stack.committerDeps({ owner: `committer-${runs}-twin` })),
      ]);
      log.push(...a.tables, ...b.tables);
    } else log.push(...(await stack.commit(chaosDeps)).tables);
  };
  const committer = (async () => {
    while (committing) {
      await commitOnce();
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const settle = async () => {
    await stack.drain();
    // Let the interval committer catch up, then make sure nothing is left staged.
    for (let i = 0; i < 40; i++) {
      if ((await stack.ledger.tablesWithStagedWork()).length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const reportCommits = () => {
    for (const r of log.splice(0)) {
      if (r.status === 'committed' && r.upserts) {
        out(
          `  ${r.table}: ${r.upserts.upserted} key(s) inserted or replaced, ${r.upserts.deleted} deleted, from ${r.entries} ledger entr${r.entries === 1 ? 'y' : 'ies'}${r.created ? '  [table created]' : ''}${r.schemaChanges.length ? `  [schema evolved: ${r.schemaChanges.join('; ')}]` : ''}`,
        );
      } else if (r.status === 'committed') {
        out(
          `  ${r.table}: +${r.rows} rows from ${r.entries} ledger entr${r.entries === 1 ? 'y' : 'ies'}${
            r.created ? '  [table created]' : ''
          }${r.schemaChanges.length ? `  [schema evolved: ${r.schemaChanges.join('; ')}]` : ''}`,
        );
      } else if (r.status === 'failed')
        out(`  ${r.table}: commit failed (${(r.error as Error).message}); retried next run`);
    }
  };

  const columnsBefore = new Map<string, Set<number>>();
  let ok = true;
  // Change events in every phase: each round updates and deletes keys earlier rounds created.
  const feed = new ChangeFeed(seed + 3, Date.now(), stack.kinesis.client, stack.streamName, cdcFile);
  const changesPerPhase = Math.max(60, Math.ceil(n / 4));
  try {
    const phases = [
      { label: `${n} v1 JSON events`, opts: { events: String(n), version: 'v1', seed: String(seed) } },
      {
        label: `${n} v2 JSON events (new fields: user_agent, scroll_depth)`,
        opts: { events: String(n), version: 'v2', seed: String(seed + 1) },
      },
      {
        label: `${Math.ceil(n / 2)} v2 Avro events (GSR-framed; OrderEvent v2 adds payment_method, promo_code)`,
        opts: { events: String(Math.ceil(n / 2)), version: 'v2', seed: String(seed + 2), format: 'avro' },
      },
    ];
    for (const [i, phase] of phases.entries()) {
      step(`sending ${phase.label}, and ${changesPerPhase} customer change events (CDC)`);
      await generateCommand(
        { ...phase.opts, stream: stack.streamName, recordTo: recordFile },
        (s) => out(`  ${s}`),
        stack.kinesis.client,
        stack.registry,
      );
      out(`  ${await feed.send(changesPerPhase)}`);
      await settle();
      reportCommits();
      if (i === 0) {
        for (const id of await listAllTables(openWarehouse(dir))) {
          const t = await stack.catalog.loadTable(id);
          columnsBefore.set(id.name, new Set(fieldIds(currentSchema(t.metadata).fields)));
        }
      }
    }
    committing = false;
    await committer;
    await commitOnce();
    reportCommits();

    const wh = openWarehouse(dir);
    const sent = (await fs.readFile(recordFile, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const expected = new Map<string, string[]>();
    sent.forEach((e, i) => {
      const avro = i >= 2 * n;
      const table = avro
        ? `${String(e.event_type).toLowerCase()}event`
        : `${String(e.event_type).toLowerCase()}_events`;
      expected.set(table, [...(expected.get(table) ?? []), String(e.event_id)]);
    });

    for (const id of await listAllTables(wh)) {
      const t = await stack.catalog.loadTable(id);
      const before = columnsBefore.get(id.name);
      const fresh = before
        ? new Set(fieldIds(currentSchema(t.metadata).fields).filter((x) => !before.has(x)))
        : undefined;
      step(
        `${id.namespace}.${id.name}${fresh && fresh.size > 0 ? ` (${fresh.size} new column(s) marked ← new)` : ''}`,
      );
      out(describeReport(t, fresh));
      out('');
      out(snapshotsReport(t));
    }

    step('querying every table in DuckDB (columns read by Parquet field id), checking every event id');
    const engine = await openQueryEngine(wh);
    const rows: string[][] = [];
    try {
      const cdc: string[] = [];
      for (const id of await listAllTables(wh)) {
        if (id.name === CHANGE_TABLE) {
          const c = await checkCustomers(engine, feed.sent);
          ok &&= c.ok;
          cdc.push(c.line);
        } else {
          const row = await idCheck(engine, id.name, expected);
          ok &&= row[4] === 'ok';
          rows.push(row);
        }
        const q =
          (id.name === CHANGE_TABLE ? CDC_QUERY : QUERIES[id.name]) ??
          `SELECT region, count(*) AS events, min(event_time) AS first, max(event_time) AS last FROM "${id.name}" GROUP BY region ORDER BY region`;
        {
          const res = await engine.query(q);
          out(`\n${q}`);
          out(
            renderTable(
              res.columns,
              res.rows.map((x) => res.columns.map((c) => String(x[c]))),
            ),
          );
        }
      }
      for (const table of expected.keys()) {
        if (!rows.some((r) => r[0] === table)) {
          ok = false;
          rows.push([table, String(expected.get(table)!.length), '0', '0', 'MISSING']);
        }
      }
      if (cdc.length === 0) {
        ok = false;
        cdc.push(`${CHANGE_TABLE} (CDC): MISSING, no table`);
      }
      out('');
      out(renderTable(['table', 'sent', 'committed', 'distinct ids', 'exactly once'], rows));
      for (const line of cdc) out(`  ${line}`);
    } finally {
      engine.close();
    }
    step(
      'maintaining every table as a deployment does: compaction, manifest rewrite, expiry (newest snapshot kept), orphan files (the stream is stopped; files the ledger names are spared)',
    );
    const maintained = await maintainDemoTables(stack, await listAllTables(wh));
    out(maintained.table);
    const after = await openQueryEngine(openWarehouse(dir));
    try {
      const checks = [];
      let cdc: { ok: boolean; line: string } | undefined;
      for (const id of await listAllTables(wh)) {
        if (id.name === CHANGE_TABLE)
          cdc = await checkCustomers(after, feed.sent, `${CHANGE_TABLE} (CDC) after compaction`);
        else checks.push(await idCheck(after, id.name, expected));
      }
      const same =
        checks.every((r) => r[4] === 'ok') && maintained.reports.every((r) => r.failed.length === 0);
      ok &&= same && cdc?.ok === true;
      out(`  ${same ? 'every event id is still there exactly once' : 'MISMATCH after maintenance'}`);
      out(`  ${cdc?.line ?? `${CHANGE_TABLE} (CDC) after compaction: MISSING, no table`}`);
    } finally {
      after.close();
    }
    const dead = await stack.deadLetters.list({ limit: 10 });
    for (const d of dead) out(`  dead letter ${d.key} [${d.reason}] ${d.detail}`);
    if (dead.length > 0) ok = false;
    if (chaos) out(`\nchaos injected: ${chaos.summary()}`);
    out(
      `\n${ok ? `✔ every table holds exactly the events sent, each exactly once; ${CHANGE_TABLE} holds the last state of every key` : '✘ tables disagree with what was sent'} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
    );
    out(`warehouse: ${dir}   sent: ${recordFile}   changes: ${cdcFile}   try: npx floe tables -w ${dir}`);
  } finally {
    committing = false;
    await committer.catch(() => undefined);
    await stack.stop();
  }
  return ok ? 0 : 1;
}

/** [table, sent, committed, distinct ids, verdict]: the table's event ids against those sent. */
async function idCheck(
  engine: Awaited<ReturnType<typeof openQueryEngine>>,
  table: string,
  expected: ReadonlyMap<string, string[]>,
): Promise<string[]> {
  const want = [...(expected.get(table) ?? [])].sort();
  const r = await engine.query(`SELECT CAST(event_id AS VARCHAR) AS id FROM "${table}"`);
  const got = r.rows.map((x) => String(x.id)).sort();
  const same = got.length === want.length && got.every((g, j) => g === want[j]);
  return [
    table,
    String(want.length),
    String(got.length),
    String(new Set(got).size),
    same ? 'ok' : 'MISMATCH',
  ];
}

function fieldIds(fields: readonly { id: number; type: unknown }[]): number[] {
  const out: number[] = [];
  for (const f of fields) {
    out.push(f.id);
    const t = f.type as { kind: string; fields?: { id: number; type: unknown }[] };
    if (t.kind === 'struct' && t.fields) out.push(...fieldIds(t.fields));
  }
  return out;
}
