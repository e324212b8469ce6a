/**
 * The `floe` command line. Each command is a thin shell over app/ and adapters/; errors print
 * one clear line (kind + message) and set a non-zero exit code.
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { isFloeError } from '../errors.ts';
import type { LoadedTable } from '../ports/catalog.ts';
import type { TableIo } from '../query/live-rows.ts';
import { EXIT_CODES_HELP, ExitCode } from './exit-codes.ts';
import { describeTable, snapshotsJsonLines, snapshotsReport, tablesReport } from './inspect.ts';
import { EXIT_LINES_SKIPPED } from './send-report.ts';
import {
  checkReadCommandWarehouse,
  DEFAULT_WAREHOUSE,
  looksLikePath,
  openTablePath,
  openWarehouse,
  resolveTable,
} from './warehouse.ts';

const WAREHOUSE_HELP = `warehouse folder (default: $FLOE_WAREHOUSE or ${DEFAULT_WAREHOUSE})`;

const QUERY_HELP = `
Time travel (Iceberg: the snapshot current at a time is the last one committed at or before it on
the main branch; a time before a table's first snapshot is an error naming it):
  floe query --as-of 2025-03-14T15:00:00Z "SELECT count(*) FROM order_events"
  floe query --snapshot 4951213507629824583 "SELECT * FROM order_events"
  floe query --snapshot order_events=4951213507629824583 "SELECT … FROM order_events JOIN user_events …"
  floe query "SELECT * FROM order_events FOR VERSION AS OF 4951213507629824583"
  floe query "SELECT * FROM order_events FOR TIMESTAMP AS OF TIMESTAMP '2025-03-14 15:00:00 UTC'"

Metadata tables, as Athena and Trino name them (quote them: the name holds a $):
  "t$snapshots"  committed_at, snapshot_id, parent_id, operation, manifest_list, summary
  "t$history"    made_current_at, snapshot_id, parent_id, is_current_ancestor
  "t$refs"       name, type, snapshot_id, max_reference_age_in_ms, min_snapshots_to_keep, max_snapshot_age_in_ms
  "t$files"      content, file_path, file_format, spec_id, partition, record_count, file_size_in_bytes,
                 column_sizes, value_counts, null_value_counts, nan_value_counts, lower_bounds,
                 upper_bounds, key_metadata, split_offsets, equality_ids, sort_order_id, readable_metrics
  "t$manifests"  content, path, length, partition_spec_id, added_snapshot_id, added/existing/deleted
                 _data_files_count and _rows_count, partition_summaries
  "t$partitions" partition, record_count, file_count, total_size, data (per column min, max, null_count, nan_count)
  $files, $manifests and $partitions describe the snapshot the query reads (time travel included).
  floe query 'SELECT snapshot_id, summary FROM "order_events$snapshots"'

Read-only: statements that write files or change the engine (COPY … TO, EXPORT/IMPORT DATABASE,
ATTACH/DETACH, INSTALL/LOAD, CALL, CREATE SECRET, SET/RESET/PRAGMA of anything but threads,
memory_limit, TimeZone and a few display settings) are refused unless --allow-writes is given.`;

export function buildProgram(out: (s: string) => void = (s) => process.stdout.write(`${s}\n`)): Command {
  const program = new Command('floe')
    .description('Floe: a dynamic streaming data lake on Apache Iceberg')
    .showHelpAfterError()
    .exitOverride()
    .addHelpText('after', `\n${EXIT_CODES_HELP}`);
  // Read commands refuse a folder that is no warehouse (an error naming it, not "no tables").
  program.hook('preAction', (_program, command) => checkReadCommandWarehouse(command));

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
    .option('--force', 'load every file again, even into tables that already hold it')
    .option(
      '--branch <name>',
      "commit to this branch of every table instead of main (write-audit-publish): readers of main do not see it until 'floe branch publish'; without it, the config's 'branches' choose per table",
    )
    .option(
      '--threads <n>',
      'threads that scan and encode (default: every core; 1: one thread). Inputs under 128 MiB use one',
      positiveInt('--threads'),
    )
    .option(
      '--memory <mib>',
      'MiB of unwritten records the load holds before it writes its largest tables as parts (default 192 in one thread, 128 across worker threads; the process stays within 512 MiB with up to two workers)',
      positiveInt('--memory'),
    )
    .addHelpText(
      'after',
      `
Memory stays bounded whatever the input: a table's records are written as Parquet files (parts)
whenever the load holds more than --memory of them, the largest tables first, and every table is
committed once at the end. A load that stops half-way commits nothing to the tables it had not
finished; the files it wrote for them are orphans that floe maintain removes.

Running a load again is safe: every commit records the files it loaded (content hash, size,
name) in its snapshot summary (floe.loaded-files), and a file a table already holds (by
content, so also a renamed copy) is skipped for that table and said so; the other tables still
get it (a load that failed half-way is simply run again). A file that was appended to is a
different file and loads in full. --force loads everything again.

Exit codes: ${ExitCode.Ok} everything landed (or every file was already loaded); ${ExitCode.Partial} some lines were
dead-lettered, every table committed; ${ExitCode.TableFailed} a table's commit failed (its records are not loaded,
the other tables are; run the load again); ${ExitCode.Error} an error (bad input file, config); ${ExitCode.Usage} usage.`,
    )
    .action(async (files: string[], opts) => {
      const { loadCommand } = await import('./load-command.ts');
      const code = await loadCommand(files, opts, out);
      if (code !== 0) process.exitCode = code;
    });

  const deadLetters = program
    .command('dead-letters')
    .description('list, show, replay and purge the rejected lines (dead letters) kept in the warehouse');
  const REASON_HELP = 'only this reason (malformed-json, no-route, type-conflict, …)';
  const S3_ENDPOINT_HELP =
    'S3 endpoint for --store, e.g. a local S3 emulator; implies --s3-path-style (default: $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS)';
  const S3_PATH_STYLE_HELP =
    'path-style S3 requests (endpoint/bucket/key) for --store, as emulators reached by host name need (also: FLOE_S3_FORCE_PATH_STYLE=1)';
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
    .option('--s3-endpoint <url>', S3_ENDPOINT_HELP)
    .option('--s3-path-style', S3_PATH_STYLE_HELP)
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
    .option('--s3-endpoint <url>', S3_ENDPOINT_HELP)
    .option('--s3-path-style', S3_PATH_STYLE_HELP)
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
    .option('--s3-endpoint <url>', S3_ENDPOINT_HELP)
    .option('--s3-path-style', S3_PATH_STYLE_HELP)
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
      // replayCommand's 1 means a table's commit failed: the table of exit codes calls that 4.
      if (code !== 0) process.exitCode = code === 1 ? ExitCode.TableFailed : code;
    });

  deadLetters
    .command('purge')
    .description(
      'delete the selected dead letters for good, reporting how many (and bytes) per reason; a purge without a filter needs --all',
    )
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('--reason <reason>', REASON_HELP)
    .option('--source <source>', SOURCE_HELP)
    .option('--table <table>', 'only dead letters naming this table')
    .option(
      '--older-than <duration>',
      'only dead letters at least this old: 0s, 30m, 12h, 5d, 2w (arrival in the stream, else when stored)',
    )
    .option('--all', 'allow a purge with no filter: every dead letter in the store')
    .option('--dry-run', 'list what would be deleted; delete nothing')
    .option(
      '--store <s3uri>',
      "a deployed pipeline's dead-letter store (s3://bucket/prefix) instead of the warehouse's",
    )
    .option('--s3-endpoint <url>', S3_ENDPOINT_HELP)
    .option('--s3-path-style', S3_PATH_STYLE_HELP)
    .option('--region <region>', 'AWS region of --store (default: $AWS_REGION)')
    .action(async (opts) => {
      const { purgeCommand } = await import('./dead-letters-purge.ts');
      await purgeCommand(opts, out);
    });

  program
    .command('maintain')
    .description(
      'keep tables healthy: compact small files, merge manifests, expire old snapshots, delete orphan files (no step flag: all four)',
    )
    .argument(
      '[tables...]',
      'tables (name or namespace.name) or table folders; default: every table of the warehouse',
    )
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('--compact', 'rewrite each partition’s small files into files near the target size')
    .option('--rewrite-manifests', 'merge small manifests')
    .option('--expire', 'expire old snapshots and delete the files only they reached')
    .option('--orphans', 'delete files under the table location that no metadata reaches')
    .option(
      '--retain-last <n>',
      'keep at least this many newest snapshots (default: history.expire.min-snapshots-to-keep, else 1)',
    )
    .option(
      '--expire-older-than <duration>',
      'expire snapshots older than this: 0s, 30m, 12h, 5d (default: history.expire.max-snapshot-age-ms, else 5d)',
    )
    .option('--orphans-older-than <duration>', 'delete orphan files older than this only (default: 3d)')
    .option(
      '--target-file-size <bytes>',
      'compaction target (default: write.target-file-size-bytes; files below 75 % of it are compacted)',
    )
    .option(
      '--rewrite-locations',
      'move the tables of a warehouse written before local file names were literal: an escaped location is respelled, and compaction rewrites the files stored under percent-decoded names (implies --compact)',
    )
    .option(
      '-c, --config <file>',
      "floe.config.json: a table its 'branches' send to a branch is compacted on that branch (main moves only at publish)",
    )
    .option('--dry-run', 'plan and report; change nothing')
    .option('--json', 'one JSON report per table (sizes and ids as exact integers)')
    .option('-q, --quiet', 'no progress output')
    .addHelpText(
      'after',
      `
Each step commits on its own and optimistically: a load or stream committing meanwhile loses
nothing (the step is rebuilt on the newer snapshot, or skipped when its inputs changed). Rows,
values and field ids are the same before and after compaction; deletes are applied while
rewriting. Files younger than --orphans-older-than are never deleted: a commit may be in flight.

Examples:
  floe maintain                                   every table, every step, table defaults
  floe maintain click_events --compact --dry-run  what compaction would rewrite
  floe maintain --expire --retain-last 10 --expire-older-than 1d
  floe maintain ./copy/of/a/spark_table           a table folder outside the warehouse
  floe maintain --rewrite-locations               files of an older warehouse under literal names

Exit codes: ${ExitCode.Ok} done; ${ExitCode.Error} error; ${ExitCode.TableFailed} a step failed on some table (reported; the other steps and tables ran).`,
    )
    .action(async (tables: string[], opts) => {
      const { maintainCommand } = await import('./maintain-command.ts');
      process.exitCode = await maintainCommand(tables, opts, out);
    });

  program
    .command('tables')
    .description(
      'list the tables in a warehouse with their snapshot counts and live rows (position and equality deletes applied)',
    )
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .action(async (opts) => {
      out(await tablesReport(openWarehouse(opts.warehouse)));
    });

  program
    .command('describe')
    .description(
      'show a table: schema with field ids, partition spec, properties, snapshots, live rows (deletes applied)',
    )
    .argument('<table>', 'table name, namespace.table, or a path to a table folder or metadata.json')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .action(async (table: string, opts) => {
      const { table: t, io } = await loadTableArg(table, opts.warehouse);
      out(await describeTable(t, io));
    });

  const branch = program
    .command('branch')
    .description('branches of a table: publish one onto main (write-audit-publish)');
  branch
    .command('publish')
    .description(
      "fast-forward a table's main to a branch (floe load --branch or the config's 'branches' wrote it), or say why it cannot",
    )
    .argument('<table>', 'table name or namespace.table')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('--from <branch>', 'the branch to publish', 'audit')
    .option(
      '-c, --config <file>',
      "floe.config.json: its 'audits' (SQL predicates per table) must hold for every row the branch adds",
    )
    .addHelpText(
      'after',
      `
Examples:
  floe load events.ndjson --branch audit          write; main does not move
  floe query --snapshot orders=audit "SELECT count(*) FROM orders WHERE amount < 0"
  floe branch publish orders --from audit         main := audit (a fast-forward only)
  floe branch publish orders -c floe.config.json  … once {"audits": {"orders": ["amount >= 0"]}} holds for the new rows`,
    )
    .action(async (table: string, opts) => {
      const { publishCommand } = await import('./branch-command.ts');
      await publishCommand(table, opts, out);
    });

  program
    .command('snapshots')
    .description(
      "list a table's snapshots (id, parent, sequence number, operation, rows) and each one's summary (floe.load-id, floe.coerced …)",
    )
    .argument('<table>', 'table name, namespace.table, or a path to a table folder or metadata.json')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('--json', 'one JSON object per snapshot per line (ids as strings: 64-bit, exact)')
    .action(async (table: string, opts) => {
      const { table: t } = await loadTableArg(table, opts.warehouse);
      if (opts.json) for (const line of snapshotsJsonLines(t)) out(line);
      else out(snapshotsReport(t, { summaries: true }));
    });

  const collect = (v: string, prev: string[]) => [...prev, v];
  program
    .command('query')
    .description(
      'run SQL in DuckDB over every table (columns read by field id, deletes applied): current snapshot, or time travel; metadata tables "t$snapshots" … too',
    )
    .argument('<sql>', 'SQL; tables are views named after the table (also namespace.table)')
    .option('-w, --warehouse <dir>', WAREHOUSE_HELP)
    .option('--json', 'print rows as JSON lines instead of a table')
    .option(
      '-t, --table <name=path>',
      'also query a table folder outside the warehouse (e.g. one Spark wrote) under a view name; repeatable',
      collect,
      [] as string[],
    )
    .option(
      '--as-of <time>',
      'read every table as it was at this time: ISO 8601 (2025-03-14T15:00:00Z; no zone = UTC) or epoch ms',
    )
    .option(
      '--snapshot <[table=]id>',
      'read a table at a snapshot id (or branch/tag); without TABLE= it applies to the one table the SQL names; repeatable',
      collect,
      [] as string[],
    )
    .option(
      '--allow-writes',
      'also run statements that write files or change the engine (COPY … TO, EXPORT, ATTACH, INSTALL/LOAD, SET of paths); refused by default',
    )
    .addHelpText('after', QUERY_HELP)
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
    .option(
      '--cdc',
      'send Debezium change events of a customers table instead (creates, updates, deletes, re-creates; JSON; partition key = customer id)',
    )
    .addHelpText(
      'after',
      `
--cdc events are Debezium envelopes {before, after, op, ts_ms, source} with source.table
"customers"; the table holds the last state of each customer when the stack's config routes and
upserts them:
  {"routing": {"tableField": "source.table"},
   "upsert": {"customers": {"key": ["id"], "envelope": "debezium"}}}`,
    )
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
      '--partition-key-field <fields>',
      "partition key: this field's value when a line has it (1–256 characters), else a hash of the line; a top-level name, a dotted path (after.id), or comma-separated candidates tried in order (after.id,before.id)",
    )
    .option(
      '--aggregate [bytes]',
      "pack lines into KPL aggregated records of at most this many bytes (default 51200, the KPL's), as producers using the Kinesis Producer Library write them; each line stays a record of its own",
    )
    .option('--gzip', 'gzip each line before it is sent (inside an aggregate: each user record)')
    .option('-q, --quiet', 'no progress output')
    .addHelpText(
      'after',
      `
Blank lines are skipped. Without --partition-key-field (or when a line lacks a usable value) the
key is the first 32 hex digits of the SHA-256 of the line's bytes, so equal lines share a shard.
The key is a string as it is, a number or boolean as its JSON text (an integer in decimal); null,
objects and lists are not usable. A field named exactly F (dots included) is taken before the path
F. Upsert tables need every change of a key on one shard, in order: key the records by the table's
key, for Debezium envelopes after.id,before.id (a delete has only a before image), or
payload.after.id,payload.before.id for Kafka Connect's {schema, payload} form.
A line over the 1 MiB record limit (data + partition key) is reported with its file and line,
skipped, and the rest are sent.

Exit codes: 0 every line sent; ${EXIT_LINES_SKIPPED} some lines skipped (the rest were sent); 1 an error.

Examples:
  floe send events.ndjson --endpoint http://127.0.0.1:4567          # into \`floe local up\`
  floe send day1.ndjson day2.ndjson --partition-key-field event_id --endpoint http://127.0.0.1:4567
  floe send cdc.ndjson --partition-key-field after.id,before.id --endpoint http://127.0.0.1:4567
  floe send events.ndjson --aggregate --endpoint http://127.0.0.1:4567  # as the KPL writes them
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

/** A table argument, with how to read its files (for counting live rows). */
async function loadTableArg(
  ref: string,
  warehouse: string | undefined,
): Promise<{ table: LoadedTable; io: TableIo }> {
  const { table, store } = looksLikePath(ref)
    ? await openTablePath(ref)
    : await (async () => {
        const wh = openWarehouse(warehouse);
        return { table: await wh.catalog.loadTable(await resolveTable(wh, ref)), store: wh.store };
      })();
  return { table, io: { read: (uri) => store.get(uri), resolvePath: (uri) => store.pathOf(uri) } };
}

/** A commander parser for a whole number ≥ 1 that names the option in its error. */
function positiveInt(option: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new InvalidArgumentError(`${option} must be a whole number ≥ 1, got '${v}'`);
    return n;
  };
}

export async function main(argv: string[]): Promise<number> {
  endQuietlyWhenReaderLeaves();
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.Ok;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
    if (isFloeError(e)) {
      process.stderr.write(`floe: ${e.message} [${e.kind}]\n`);
      return ExitCode.Error;
    }
    process.stderr.write(`floe: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return ExitCode.Error;
  }
}

/**
 * `floe tables | head -1`: once the reader is gone, writes fail with EPIPE. Without a listener
 * that is an uncaught error with a stack trace; the rest of the output is dropped instead and the
 * command ends with its own exit code.
 */
function endQuietlyWhenReaderLeaves(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
    });
  }
}
