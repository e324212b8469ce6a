/**
 * Freshness, end to end (issue 19): on the embedded local stack (kinesalite, dynalite, the
 * event-source poller running the ingest handler, the committer handler invoked by a one-minute
 * "schedule" as EventBridge does), a producer puts events for `BENCH_FR_SECONDS` (60) at a steady
 * rate, each event carrying its own put time (`put_ms`, taken just before its `PutRecords` call).
 * Afterwards every table is read independently of Floe: each snapshot's manifest list and
 * manifests with avsc (the test suite's independent validator), the data files a snapshot added
 * with DuckDB `read_parquet`. A record's freshness is the `timestamp-ms` of the snapshot that added
 * it minus its `put_ms`: p50, p99 and max, for
 *
 *   5 s      `commitIntervalSeconds=5`: the poller's batching window 5 s (what the stack then
 *            deploys), the committer committing in passes 5 s apart inside each minute
 *   default  one commit a minute, the batching window 15 s (the stack's defaults)
 *
 * Targets (5 s): p50 ≤ 10 s, p99 ≤ 20 s. Knobs: BENCH_FR_MODES (`5s,default`), BENCH_FR_SECONDS
 * (60), BENCH_FR_RATE (records per second, 200).
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { PutRecordsCommand } from '@aws-sdk/client-kinesis';
import { DuckDBInstance } from '@duckdb/node-api';
import { LocalObjectStore } from '../lambdas/src/adapters/local/local-object-store.ts';
import { parseConfig } from '../lambdas/src/config.ts';
import { LocalStack } from '../lambdas/src/local/stack.ts';
import { decodeListRecords, decodeManifestRecords, readAvro } from '../test/helpers/iceberg-validator.ts';
import { envInt, fmtInt, quantile, type SummaryRow } from './common.ts';

const SECONDS = envInt('BENCH_FR_SECONDS', 60);
const RATE = envInt('BENCH_FR_RATE', 200);
const MODES = (process.env.BENCH_FR_MODES ?? '5s,default').split(',').map((s) => s.trim());
const SCHEDULE_MS = 60_000;
const SCHEDULED = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };
const TYPES = ['ORDER', 'USER', 'CLICK'] as const;

interface Mode {
  readonly name: string;
  readonly intervalMs: number;
  readonly batchWindowMs: number;
}
const ALL_MODES: Record<string, Mode> = {
  '5s': { name: 'commitIntervalSeconds=5', intervalMs: 5_000, batchWindowMs: 5_000 },
  default: { name: 'default (one commit a minute)', intervalMs: SCHEDULE_MS, batchWindowMs: 15_000 },
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function benchFreshness(work: string): Promise<SummaryRow[]> {
  console.log(
    `\n## Freshness: put → visible in a snapshot, local stack, ${SECONDS} s of ${fmtInt(RATE)} records/s`,
  );
  const rows: SummaryRow[] = [];
  for (const key of MODES) {
    const mode = ALL_MODES[key];
    if (mode === undefined) throw new Error(`BENCH_FR_MODES: unknown mode '${key}' (5s, default)`);
    const dir = join(work, `freshness-${key}`);
    await fs.mkdir(dir, { recursive: true });
    const sent = await run(dir, mode);
    const latencies = await visibleAfter(dir, sent);
    const q = quantiles(latencies);
    console.log(
      `${mode.name}: ${fmtInt(latencies.length)} records (of ${fmtInt(sent)} sent) p50 ${s(q.p50)}, p99 ${s(q.p99)}, max ${s(q.max)}`,
    );
    const five = key === '5s';
    rows.push({
      measure: `freshness p50, ${mode.name}`,
      value: s(q.p50),
      target: five ? '≤ 10 s' : '(reference)',
      ...(five ? { pass: q.p50 <= 10_000 } : {}),
    });
    rows.push({
      measure: `freshness p99 / max, ${mode.name}`,
      value: `${s(q.p99)} / ${s(q.max)}`,
      target: five ? 'p99 ≤ 20 s' : '(reference)',
      ...(five ? { pass: q.p99 <= 20_000 && latencies.length === sent } : {}),
    });
    await fs.rm(dir, { recursive: true, force: true });
  }
  return rows;
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Runs the stack for SECONDS of puts, then until every record is committed; the count sent. */
async function run(dir: string, mode: Mode): Promise<number> {
  const stack = await LocalStack.start({ warehouseDir: dir, config: parseConfig({}), shards: 2 });
  let sent = 0;
  try {
    await stack.startPoller(undefined, { batchSize: 10_000, batchWindowMs: mode.batchWindowMs });
    const commit = stack.committerHandler({ scheduleMs: SCHEDULE_MS, intervalMs: mode.intervalMs });
    // The schedule: a tick now and every minute (EventBridge's rate(1 minute)).
    let ticks = 0;
    const inFlight: Promise<unknown>[] = [];
    const fire = () =>
      inFlight.push(
        commit(SCHEDULED, { awsRequestId: `tick-${++ticks}`, getRemainingTimeInMillis: () => 300_000 }),
      );
    fire();
    const timer = setInterval(fire, SCHEDULE_MS);
    try {
      // The producer: a PutRecords call every 100 ms.
      const perCall = Math.max(1, Math.round(RATE / 10));
      const t0 = Date.now();
      let k = 0;
      while (Date.now() - t0 < SECONDS * 1000) {
        const putMs = Date.now();
        const Records = Array.from({ length: perCall }, () => {
          const id = k++;
          const event = {
            event_type: TYPES[id % 3],
            event_id: `f-${id}`,
            put_ms: putMs,
            region: 'eu',
          };
          return { Data: new TextEncoder().encode(JSON.stringify(event)), PartitionKey: `pk-${id % 31}` };
        });
        const out = await stack.kinesis.client.send(
          new PutRecordsCommand({ StreamName: stack.streamName, Records }),
        );
        if ((out.FailedRecordCount ?? 0) > 0) throw new Error(`PutRecords: ${out.FailedRecordCount} failed`);
        sent += perCall;
        await sleep(Math.max(0, t0 + (k / RATE) * 1000 - Date.now()));
      }
      // Until everything is staged and committed (at most a few more ticks).
      await stack.drain();
      const deadline = Date.now() + 4 * SCHEDULE_MS;
      while ((await stack.ledger.tablesWithStagedWork()).length > 0 && Date.now() < deadline)
        await sleep(500);
    } finally {
      clearInterval(timer);
    }
    await Promise.all(inFlight);
  } finally {
    await stack.stop();
  }
  return sent;
}

/** Each committed record's snapshot time − put time, read independently of Floe. */
async function visibleAfter(dir: string, sent: number): Promise<number[]> {
  const namespace = parseConfig({}).namespace;
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  const out: number[] = [];
  const seen = new Set<string>();
  // The warehouse's files by the URIs the metadata names (storage only: no Iceberg reading).
  const store = new LocalObjectStore();
  try {
    const ns = join(dir, namespace);
    for (const table of await fs.readdir(ns).catch(() => [] as string[])) {
      const meta = join(ns, table, 'metadata');
      const files = (await fs.readdir(meta)).filter((f) => f.endsWith('.metadata.json'));
      // The newest metadata file holds every snapshot.
      const newest = files.sort((a, b) => version(a) - version(b)).pop()!;
      const md = JSON.parse(await fs.readFile(join(meta, newest), 'utf8')) as {
        snapshots?: { 'sequence-number': number; 'timestamp-ms': number; 'manifest-list': string }[];
      };
      for (const snap of md.snapshots ?? []) {
        // The manifests this snapshot added carry its sequence number (a JSON number is exact
        // for it, unlike the 63-bit snapshot id).
        const seq = BigInt(snap['sequence-number']);
        const list = await readAvro(await store.get(snap['manifest-list']));
        for (const m of decodeListRecords(list.rawSchema, list.records)) {
          if (m.seq !== seq) continue;
          const man = await readAvro(await store.get(m.path));
          for (const e of decodeManifestRecords(man.rawSchema, man.records).entries) {
            if (e.status !== 1 || e.file.content !== 0) continue;
            const r = await conn.runAndReadAll(
              `SELECT event_id, put_ms FROM read_parquet('${store.pathOf(e.file.path).replaceAll("'", "''")}')`,
            );
            for (const [eventId, putMs] of r.getRows()) {
              const key = String(eventId);
              if (seen.has(key)) throw new Error(`${table}: ${key} committed twice`);
              seen.add(key);
              out.push(snap['timestamp-ms'] - Number(putMs));
            }
          }
        }
      }
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
  if (seen.size !== sent) throw new Error(`${seen.size} of ${sent} records committed`);
  return out;
}

const version = (f: string) => Number(/^v?(\d+)/.exec(f)?.[1] ?? /(\d+)-/.exec(f)?.[1] ?? 0);

function quantiles(xs: readonly number[]): { p50: number; p99: number; max: number } {
  return { p50: quantile(xs, 0.5), p99: quantile(xs, 0.99), max: quantile(xs, 1) };
}
