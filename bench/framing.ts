/**
 * Producers' framings (issue 20): what the ingest handler pays to undo them. One shard's batch of
 * the same 10,000 sample events three ways — 10,000 plain Kinesis records; 500 KPL aggregates of
 * 20 user records each (what the KPL writes; aggregated with `floe send --aggregate`'s encoder,
 * which the tests check against the awslabs module); 100 gzip CloudWatch Logs subscription
 * batches of 100 structured log events; 10,000 DynamoDB change records of the same events (one
 * source table per event type, staged as versioned upserts) — each as a genuine Lambda event (JSON text), timed from
 * the runtime's `JSON.parse` through `ingestBatch`, alternating, medians. Wiring as the ingest
 * bench: local-disk warehouse, the DynamoDB ledger on dynalite over HTTP. See bench/README.md.
 */
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DynamoChangeVersions } from '../lambdas/src/adapters/aws/dynamodb-change-versions.ts';
import { runCommitter } from '../lambdas/src/app/committer.ts';
import { type IngestResult, ingestBatch } from '../lambdas/src/app/ingest.ts';
import { aggregate } from '../lambdas/src/records/framing/kpl.ts';
import {
  buildKinesisEvent,
  type KinesisBatchRecord,
  parseKinesisEvent,
} from '../lambdas/src/records/kinesis-event.ts';
import { envInt, fmtInt, median, type SummaryRow, sampleLines } from './common.ts';
import {
  createLedger,
  type Dynamo,
  INGEST_CONFIG,
  kinesisRecords,
  pipeline,
  SHARD,
  STREAM_ARN,
} from './wiring.ts';

const EVENTS = envInt('BENCH_FRAMING_EVENTS', 10_000);
const PER_AGGREGATE = envInt('BENCH_FRAMING_PER_AGGREGATE', 20);
const PER_LOG_BATCH = envInt('BENCH_FRAMING_PER_LOG_BATCH', 100);
const RUNS = envInt('BENCH_FRAMING_RUNS', 7);

type Shape = 'plain' | 'kpl' | 'logs' | 'dynamodb';
const SHAPES: readonly Shape[] = ['plain', 'kpl', 'logs', 'dynamodb'];

/** A JSON value as a DynamoDB attribute value (what Kinesis Data Streams for DynamoDB writes). */
function marshal(v: unknown): unknown {
  if (v === null || v === undefined) return { NULL: true };
  if (typeof v === 'string') return { S: v };
  if (typeof v === 'number') return { N: String(v) };
  if (typeof v === 'boolean') return { BOOL: v };
  if (Array.isArray(v)) return { L: v.map(marshal) };
  return { M: Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, marshal(x)])) };
}

/** The sample event as a change record of the DynamoDB table named after its type, keyed by position. */
function changeRecord(line: string, i: number, base: number): string {
  const o = JSON.parse(line) as Record<string, unknown>;
  const image = Object.fromEntries(Object.entries(o).map(([k, x]) => [k, marshal(x)]));
  const id = { S: `e-${i}` };
  return JSON.stringify({
    awsRegion: 'eu-west-1',
    eventID: `ev-${i}`,
    eventName: i % 10 === 9 ? 'MODIFY' : 'INSERT',
    userIdentity: null,
    recordFormat: 'application/json',
    tableName: `Shop${String(o.event_type ?? 'Other')}`,
    dynamodb: {
      // Each batch's changes newer than the last batch's (`base`: records built so far).
      ApproximateCreationDateTime: 1_764_700_000_000_000 + base + i,
      ApproximateCreationDateTimePrecision: 'MICROSECOND',
      Keys: { ItemId: id },
      NewImage: { ...image, ItemId: id },
      SizeBytes: line.length,
    },
    eventSource: 'aws:dynamodb',
  });
}

let next = 0;
/** The payloads as one shard's records, each batch with fresh sequence numbers. */
function records(payloads: readonly Uint8Array[]): KinesisBatchRecord[] {
  const start = next;
  next += payloads.length;
  return kinesisRecords(payloads, start);
}

function payloads(shape: Shape, lines: readonly string[]): Uint8Array[] {
  const enc = new TextEncoder();
  if (shape === 'plain') return lines.map((l) => enc.encode(l));
  if (shape === 'dynamodb') {
    const base = next;
    return lines.map((l, i) => enc.encode(changeRecord(l, i, base)));
  }
  const out: Uint8Array[] = [];
  const n = shape === 'kpl' ? PER_AGGREGATE : PER_LOG_BATCH;
  for (let i = 0; i < lines.length; i += n) {
    const group = lines.slice(i, i + n);
    if (shape === 'kpl') {
      out.push(
        aggregate(group.map((l, k) => ({ partitionKey: `user-${(i + k) % 97}`, data: enc.encode(l) }))),
      );
    } else {
      const batch = {
        messageType: 'DATA_MESSAGE',
        owner: '123456789012',
        logGroup: '/aws/lambda/shop',
        logStream: `2026/12/02/[$LATEST]${i % 7}`,
        subscriptionFilters: ['floe'],
        logEvents: group.map((l, k) => ({
          id: String(37_000_000 + i + k),
          timestamp: 1764700000000 + i + k,
          message: l,
        })),
      };
      out.push(gzipSync(JSON.stringify(batch)));
    }
  }
  return out;
}

function eventText(shape: Shape, lines: readonly string[]): { text: string; records: number } {
  const recs = records(payloads(shape, lines));
  return {
    text: JSON.stringify(buildKinesisEvent(SHARD, STREAM_ARN, 'us-east-1', recs)),
    records: recs.length,
  };
}

async function timed(
  p: ReturnType<typeof pipeline>,
  tables: ReturnType<ReturnType<typeof pipeline>['newTableCache']>,
  text: string,
): Promise<{ s: number; result: IngestResult }> {
  const t0 = performance.now();
  const result = await ingestBatch(p.ingestDeps(tables), parseKinesisEvent(JSON.parse(text)));
  return { s: (performance.now() - t0) / 1000, result };
}

function check(r: IngestResult, shape: Shape): void {
  const staged = r.tables.reduce((n, t) => n + t.rows + t.pending, 0);
  const failed = r.failures.map((f) => `${f.table}: ${String(f.error)}`);
  if (failed.length > 0 || staged !== EVENTS) {
    throw new Error(`${shape}: staged ${staged} of ${EVENTS} events; failures ${failed.join('; ')}`);
  }
}

export async function benchFraming(dynamo: Dynamo, work: string): Promise<SummaryRow[]> {
  console.log(
    `\n## Producers' framings: ${fmtInt(EVENTS)} events as plain records, KPL aggregates of ${PER_AGGREGATE}, ` +
      `gzip CloudWatch Logs batches of ${PER_LOG_BATCH}, DynamoDB change records; ${RUNS} alternating runs`,
  );
  const rows: SummaryRow[] = [];
  const pipes = new Map<Shape, ReturnType<typeof pipeline>>();
  const caches = new Map<Shape, ReturnType<ReturnType<typeof pipeline>['newTableCache']>>();
  for (const shape of SHAPES) {
    const dir = join(work, `framing-${shape}`);
    await fs.mkdir(dir, { recursive: true });
    const p = pipeline(dynamo.client, dir, await createLedger(dynamo.client), { config: INGEST_CONFIG });
    // Warm-up: tables created by a first batch and a commit, then two untimed batches.
    check((await timed(p, p.newTableCache(), eventText(shape, sampleLines(EVENTS, 1)).text)).result, shape);
    await runCommitter(p.committerDeps());
    const cache = p.newTableCache();
    for (let w = 0; w < 2; w++)
      check((await timed(p, cache, eventText(shape, sampleLines(EVENTS, 2 + w)).text)).result, shape);
    pipes.set(shape, p);
    caches.set(shape, cache);
  }
  const times = new Map<Shape, number[]>(SHAPES.map((s) => [s, []]));
  const sizes = new Map<Shape, { records: number; mib: number }>();
  for (let run = 0; run < RUNS; run++) {
    const lines = sampleLines(EVENTS, 100 + run);
    const order = SHAPES.map((_, i) => SHAPES[(i + run) % SHAPES.length]!);
    const built = new Map(order.map((s) => [s, eventText(s, lines)]));
    for (const shape of order) {
      const b = built.get(shape)!;
      sizes.set(shape, { records: b.records, mib: Buffer.byteLength(b.text) / 1048576 });
      const t = await timed(pipes.get(shape)!, caches.get(shape)!, b.text);
      check(t.result, shape);
      times.get(shape)!.push(t.s);
    }
    console.log(
      `run ${run + 1}: ${order.map((s) => `${s} ${(times.get(s)!.at(-1)! * 1000).toFixed(0)} ms`).join(', ')}`,
    );
  }
  rows.push(...(await commitCosts(dynamo, pipes.get('dynamodb')!, caches.get('dynamodb')!)));
  const plain = median(times.get('plain')!);
  for (const shape of SHAPES) {
    const m = median(times.get(shape)!);
    const z = sizes.get(shape)!;
    console.log(
      `${shape}: median ${(m * 1000).toFixed(0)} ms for ${fmtInt(z.records)} Kinesis records (${z.mib.toFixed(1)} MiB of event JSON), ${fmtInt(EVENTS / m)} events/s`,
    );
    rows.push({
      measure: `framing: ${describeShape(shape, z.records)}`,
      value: `${(m * 1000).toFixed(0)} ms${shape === 'plain' ? '' : ` (${(m / plain).toFixed(2)} × plain)`}`,
      target: '(info)',
    });
  }
  return rows;
}

function describeShape(shape: Shape, records: number): string {
  if (shape === 'plain') return `${fmtInt(EVENTS)} plain records`;
  if (shape === 'kpl') return `${fmtInt(records)} KPL aggregates (${fmtInt(EVENTS)} user records)`;
  if (shape === 'logs') return `${fmtInt(records)} CloudWatch Logs batches (${fmtInt(EVENTS)} log events)`;
  return `${fmtInt(records)} DynamoDB change records (upserts into versioned tables)`;
}

/**
 * What the committer pays for DynamoDB-fed tables: a commit of one batch of 10,000 changes (its
 * backlog committed first), each key's newest version read and raised in the files beside the
 * table (the default), then in the ledger table through the DynamoDB adapter (as on AWS; dynalite).
 */
async function commitCosts(
  dynamo: Dynamo,
  p: ReturnType<typeof pipeline>,
  cache: ReturnType<ReturnType<typeof pipeline>['newTableCache']>,
): Promise<SummaryRow[]> {
  await runCommitter(p.committerDeps());
  const out: SummaryRow[] = [];
  const tableName = await createLedger(dynamo.client);
  for (const where of ['files', 'dynamodb'] as const) {
    check(
      (await timed(p, cache, eventText('dynamodb', sampleLines(EVENTS, 900 + out.length)).text)).result,
      'dynamodb',
    );
    const deps = p.committerDeps();
    const t0 = performance.now();
    const run = await runCommitter(
      where === 'files'
        ? deps
        : { ...deps, changeVersions: new DynamoChangeVersions(dynamo.client, { tableName }) },
    );
    const ms = performance.now() - t0;
    const failed = run.tables.filter((t) => t.status === 'failed');
    if (failed.length > 0)
      throw new Error(`dynamodb commit (${where}): ${failed.map((t) => t.table).join(', ')} failed`);
    console.log(`commit of ${fmtInt(EVENTS)} DynamoDB changes, versions in ${where}: ${ms.toFixed(0)} ms`);
    out.push({
      measure: `framing: commit of ${fmtInt(EVENTS)} DynamoDB changes, versions in ${where === 'files' ? 'files beside the table' : 'the ledger table (dynalite)'}`,
      value: `${ms.toFixed(0)} ms`,
      target: '(info)',
    });
  }
  return out;
}
