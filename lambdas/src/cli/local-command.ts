/**
 * `floe local up`: the embedded stack kept running for experiments — kinesalite and dynalite on
 * fixed ports, the event-source poller driving the ingest handler, the committer on an interval —
 * until interrupted. Point `floe generate --endpoint …` at it and inspect the warehouse with
 * `floe tables|describe|snapshots|query -w DIR`.
 */
import { resolve } from 'node:path';
import { runCommitLoop } from '../app/commit-loop.ts';
import type { TableCommitResult } from '../app/committer.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import { LocalStack } from '../local/stack.ts';
import { readConfigFile } from './config-file.ts';
import { DEFAULT_WAREHOUSE } from './warehouse.ts';

export interface LocalUpOptions {
  readonly warehouse?: string;
  readonly config?: string;
  readonly kinesisPort?: string;
  readonly dynamoPort?: string;
  readonly shards?: string;
  readonly commitInterval?: string;
}

function intOption(name: string, v: string | undefined, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min)
    throw new FloeError(ErrorKind.ConfigInvalid, `--${name} must be an integer ≥ ${min}, got ${v}`);
  return n;
}

export async function localUpCommand(
  opts: LocalUpOptions,
  out: (s: string) => void,
  until: Promise<void> = interrupted(),
): Promise<void> {
  const dir = resolve(opts.warehouse ?? process.env.FLOE_WAREHOUSE ?? DEFAULT_WAREHOUSE);
  const config = await readConfigFile(opts.config, { format: 'avro-gsr', jsonFallback: true });
  const stack = await LocalStack.start({
    warehouseDir: dir,
    config,
    shards: intOption('shards', opts.shards, 2, 1),
    kinesisPort: intOption('kinesis-port', opts.kinesisPort, 4567, 0),
    dynamoPort: intOption('dynamo-port', opts.dynamoPort, 4568, 0),
  });
  const intervalMs = intOption('commit-interval', opts.commitInterval, 5, 1) * 1000;
  await stack.startPoller();
  out('Floe local stack is up (Ctrl-C to stop)');
  out(`  Kinesis   ${stack.kinesis.endpoint}   stream ${stack.streamName}`);
  out(`  DynamoDB  ${stack.dynamo.endpoint}   table ${stack.ledgerTable}`);
  out(`  warehouse ${dir}   format ${config.format}${config.jsonFallback ? ' (+ JSON)' : ''}`);
  out(`  committer every ${intervalMs / 1000} s`);
  out('');
  out(`  npx floe generate --endpoint ${stack.kinesis.endpoint} -n 1000`);
  out(
    `  npx floe generate --endpoint ${stack.kinesis.endpoint} -n 1000 --version v2 --format avro -w ${dir}`,
  );
  out(`  npx floe tables -w ${dir}`);
  let running = true;
  const report = (r: TableCommitResult) => {
    if (r.status === 'committed')
      out(
        `  committed ${r.table}: +${r.rows} rows${r.created ? ' (table created)' : ''}${r.schemaChanges.length ? ` (schema: ${r.schemaChanges.join('; ')})` : ''}`,
      );
    else if (r.status === 'failed')
      out(`  commit of ${r.table} failed: ${(r.error as Error).message} (retried next run)`);
  };
  // The committer's seconds-fresh loop (app/commit-loop.ts), as a deployed committer runs it with
  // commitIntervalSeconds, without an end: a pass every interval until Ctrl-C.
  const loop = runCommitLoop(stack.committerDeps(), {
    intervalMs,
    untilMs: Number.POSITIVE_INFINITY,
    sleep: (ms) => Promise.race([new Promise<void>((r) => setTimeout(r, ms)), until]),
    stopped: () => !running,
    onTable: report,
    // Deferred batches (over `source.deferRouting` tables) are routed before the tables commit.
    onPass: (run) => {
      for (const r of run.routed ?? []) {
        if (r.status === 'routed')
          out(
            `  routed ${r.records} deferred records of ${r.shardId} (${r.batches} batches) to ${r.tables.length} tables`,
          );
        else if (r.status === 'failed')
          out(
            `  routing the deferred batches of ${r.shardId || 'the shards'} failed: ${(r.error as Error)?.message ?? String(r.error)} (retried next run)`,
          );
      }
    },
    keepRuns: false,
  });
  await until;
  running = false;
  await loop;
  out('stopping…');
  await stack.stop();
}

function interrupted(): Promise<void> {
  return new Promise((resolveStop) => {
    process.once('SIGINT', () => resolveStop());
    process.once('SIGTERM', () => resolveStop());
  });
}
