/**
 * The `floe` command line. Each command is a thin shell over app/ and adapters/; errors print
 * one clear line (kind + message) and set a non-zero exit code.
 */
import { Command, CommanderError } from 'commander';
import { isFloeError } from '../errors.ts';
import type { LoadedTable } from '../ports/catalog.ts';
import { describeReport, snapshotsReport, tablesReport } from './inspect.ts';
import { EXIT_LINES_SKIPPED } from './send-report.ts';
import { DEFAULT_WAREHOUSE, looksLikePath, openTablePath, openWarehouse, resolveTable } from './warehouse.ts';

const WAREHOUSE_HELP = `warehouse folder (default: $FLOE_WAREHOUSE or ${DEFAULT_WAREHOUSE})`;

export function buildProgram(out: (s: string) => void = (s) => process.stdout.write(`${s}\n`)): Command {
  const program = new Command('floe')
    .description('Floe: a dynamic streaming data lake on Apache Iceberg')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('load')
    .description('load NDJSON files into Iceberg tables: route, infer, evolve, commit once per table')
    .argument('<files...>', 'NDJSON files (one JSON object per line)')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('-c, --config <file>', 'floe.config.json with routing, inference and partitioning rules')
    .option(
      '--dead-letters <file>',
      'also export the rejected lines as NDJSON to this file (they are always recorded in the warehouse: floe dead-letters list)',
    )
    .option('-q, --quiet', 'no progress output')
    .action(async (files: string[], opts) => {
      const { loadCommand } = await import('./load-command.ts');
      const code = await loadCommand(files, opts, out);
      if (code !== 0) process.exitCode = code;
    });

  const deadLetters = program
    .command('dead-letters')
    .description('list, show and replay the rejected lines (dead letters) kept in the warehouse');
  const REASON_HELP = 'only this reason (malformed-json, no-route, type-conflict, …)';
  const SOURCE_HELP = 'only this source file (its path, or the end of it, e.g. events.ndjson)';
  deadLetters
    .command('list')
    .description('list dead letters: key, reason, source:line, table, detail')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('--reason <reason>', REASON_HELP)
    .option('--source <source>', SOURCE_HELP)
    .option('--table <table>', 'only dead letters naming this table')
    .option('--limit <n>', 'show at most N (the first in source and line order)')
    .option('--json', 'print the full records as JSON lines instead of a table')
    .option(
      '--store <s3uri>',
      "a deployed pipeline's dead-letter store (s3://bucket/prefix) instead of the warehouse's",
    )
    .option('--s3-endpoint <url>', 'S3 endpoint for --store (e.g. a local S3 emulator)')
    .action(async (opts) => {
      const { listCommand } = await import('./dead-letters-command.ts');
      await listCommand(opts, out);
    });
  deadLetters
    .command('show')
    .description('show one dead letter in full: reason, detail, source, line and the raw text')
    .argument('<key>', 'the dead letter key (from floe dead-letters list)')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('--json', 'print the record as one JSON line')
    .option(
      '--store <s3uri>',
      "a deployed pipeline's dead-letter store (s3://bucket/prefix) instead of the warehouse's",
    )
    .option('--s3-endpoint <url>', 'S3 endpoint for --store (e.g. a local S3 emulator)')
    .action(async (key: string, opts) => {
      const { showCommand } = await import('./dead-letters-command.ts');
      await showCommand(key, opts, out);
    });
  deadLetters
    .command('replay')
    .description(
      'load dead letters again (one commit per table) under the given config, e.g. after adding a hint or a default table; landed records leave the store, the rest are kept with their new reason',
    )
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('-c, --config <file>', 'floe.config.json to replay under (typically fixed since the failure)')
    .option('--reason <reason>', REASON_HELP)
    .option('--source <source>', SOURCE_HELP)
    .option('--table <table>', 'only dead letters naming this table')
    .option('--key <keys...>', 'only these dead letters (repeatable)')
    .option(
      '--store <s3uri>',
      "a deployed pipeline's dead-letter store (s3://bucket/prefix); needs --to-stream",
    )
    .option('--s3-endpoint <url>', 'S3 endpoint for --store (e.g. a local S3 emulator)')
    .option(
      '--to-stream <name>',
      'put the records back into this Kinesis stream instead of loading them here',
    )
    .option('--endpoint <url>', 'Kinesis endpoint for --to-stream (a local stack); default: AWS')
    .option('--region <region>', 'AWS region for --to-stream / --store')
    .option('--limit <n>', 'replay at most N (the first in source and line order)')
    .option(
      '--dry-run',
      'stage and commit into a throw-away copy and report what would happen; change nothing',
    )
    .option('-q, --quiet', 'no progress output')
    .action(async (opts) => {
      const { replayCommand } = await import('./dead-letters-command.ts');
      const code = await replayCommand(opts, out);
      if (code !== 0) process.exitCode = code;
    });

  program
    .command('tables')
    .description('list the tables in a warehouse with their row and snapshot counts')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .action(async (opts) => {
      out(await tablesReport(openWarehouse(opts.warehouse)));
    });

  program
    .command('describe')
    .description('show a table: schema with field ids, partition spec, properties, snapshots, rows')
    .argument('<table>', 'table name, namespace.table, or a path to a table folder or metadata.json')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .action(async (table: string, opts) => {
      out(describeReport(await loadTableArg(table, opts.warehouse)));
    });

  program
    .command('snapshots')
    .description("list a table's snapshots (id, parent, sequence number, operation, rows)")
    .argument('<table>', 'table name, namespace.table, or a path to a table folder or metadata.json')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .action(async (table: string, opts) => {
      out(snapshotsReport(await loadTableArg(table, opts.warehouse)));
    });

  program
    .command('query')
    .description(
      'run SQL in DuckDB over the current snapshot of every table (columns read by field id, deletes applied)',
    )
    .argument('<sql>', 'SQL; tables are views named after the table (also namespace.table)')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('--json', 'print rows as JSON lines instead of a table')
    .option(
      '-t, --table <name=path>',
      'also query a table folder outside the warehouse (e.g. one Spark wrote) under a view name; repeatable',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .action(async (sql: string, opts) => {
      const { queryCommand } = await import('./query-command.ts');
      await queryCommand(sql, opts, out);
    });

  program
    .command('generate')
    .description(
      "write the sample's events to a Kinesis stream (local kinesalite or AWS), as JSON or GSR-framed Avro",
    )
    .option('--stream <name>', 'stream name', 'floe-events')
    .option('--endpoint <url>', 'Kinesis endpoint of a local stack (see `floe local up`); default: AWS')
    .option('--region <region>', 'AWS region (default: $AWS_REGION)')
    .option('-n, --events <n>', 'how many events', '1000')
    .option(
      '--version <v>',
      'v1 (no optional fields) or v2 (adds user_agent, scroll_depth, payment_method …)',
      'v1',
    )
    .option('--format <f>', 'json or avro (GSR-framed, schemas registered)', 'json')
    .option(
      '-w, --warehouse <dir>',
      'local stack warehouse (its schema registry is <dir>/_floe/registry.json)',
    )
    .option('--registry-file <file>', 'local schema registry file (avro)')
    .option('--registry-name <name>', 'Glue Schema Registry name (avro on AWS)')
    .option('--rate <n>', 'events per second (0: as fast as possible)', '0')
    .option('-s, --seed <s>', 'random seed', '42')
    .option('--record-to <file>', 'append every event sent to this NDJSON file')
    .action(async (opts) => {
      const { generateCommand } = await import('./generate-command.ts');
      await generateCommand(opts, out);
    });

  program
    .command('send')
    .description(
      'put each line of NDJSON files, byte for byte, as one record into a Kinesis stream (local or AWS)',
    )
    .argument('<files...>', 'NDJSON files (one event per line; malformed lines are sent too)')
    .option('--stream <name>', 'stream name (default: floe-events, the stream `floe local up` creates)')
    .option('--endpoint <url>', 'Kinesis endpoint of a local stack (see `floe local up`); default: AWS')
    .option('--region <region>', 'AWS region (default: $AWS_REGION)')
    .option(
      '--partition-key-field <field>',
      "partition key: this top-level field's value when a line has it (1–256 characters), else a hash of the line",
    )
    .option('-q, --quiet', 'no progress output')
    .addHelpText(
      'after',
      `
Blank lines are skipped. Without --partition-key-field (or when a line lacks a usable value) the
key is the first 32 hex digits of the SHA-256 of the line's bytes, so equal lines share a shard.
A line over the 1 MiB record limit (data + partition key) is reported with its file and line,
skipped, and the rest are sent.

Exit codes: 0 every line sent; ${EXIT_LINES_SKIPPED} some lines skipped (the rest were sent); 1 an error.

Examples:
  floe send events.ndjson --endpoint http://127.0.0.1:4567          # into \`floe local up\`
  floe send day1.ndjson day2.ndjson --partition-key-field event_id --endpoint http://127.0.0.1:4567
  AWS_REGION=eu-west-1 floe send events.ndjson --stream <StreamName>  # a deployed stack`,
    )
    .action(async (files: string[], opts) => {
      const { sendCommand } = await import('./send-command.ts');
      const report = await sendCommand(files, opts, out);
      if (report.exitCode !== 0) process.exitCode = report.exitCode;
    });

  const local = program
    .command('local')
    .description('the embedded local stack (kinesalite, dynalite, local warehouse)');
  local
    .command('up')
    .description(
      'start the local stack and keep it running (poller → ingest, committer on an interval) until Ctrl-C',
    )
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('-c, --config <file>', 'floe.config.json (default: an avro-gsr stream that also takes JSON)')
    .option('--kinesis-port <port>', 'Kinesis (kinesalite) port', '4567')
    .option('--dynamo-port <port>', 'DynamoDB (dynalite) port', '4568')
    .option('--shards <n>', 'shards of the stream', '2')
    .option('--commit-interval <seconds>', 'seconds between committer runs', '5')
    .action(async (opts) => {
      const { localUpCommand } = await import('./local-command.ts');
      await localUpCommand(opts, out);
    });

  program
    .command('demo')
    .description(
      'run the streaming pipeline on an embedded local stack with sample events and show the tables it made',
    )
    .option('-w, --warehouse <dir>', 'keep the tables in this folder (default: a temporary folder)')
    .option('-n, --events <n>', 'events per phase (v1, then v2)', '2000')
    .option('-s, --seed <s>', 'random seed for the sample events', '42')
    .option('--record-to <file>', 'also write every event sent as NDJSON')
    .option(
      '--chaos',
      'inject crashes, duplicate and bisected deliveries, lease expiry and concurrent committers at seeded random points',
    )
    .action(async (opts) => {
      const { demoCommand } = await import('./demo-command.ts');
      const code = await demoCommand(opts, out);
      if (code !== 0) process.exitCode = code;
    });

  return program;
}

async function loadTableArg(ref: string, warehouse: string | undefined): Promise<LoadedTable> {
  if (looksLikePath(ref)) return (await openTablePath(ref)).table;
  const wh = openWarehouse(warehouse);
  return wh.catalog.loadTable(await resolveTable(wh, ref));
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode;
    if (isFloeError(e)) {
      process.stderr.write(`floe: ${e.message} [${e.kind}]\n`);
      return 1;
    }
    process.stderr.write(`floe: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 2;
  }
}
