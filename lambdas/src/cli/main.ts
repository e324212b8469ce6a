/**
 * The `floe` command line. Each command is a thin shell over app/ and adapters/; errors print
 * one clear line (kind + message) and set a non-zero exit code.
 */
import { Command, CommanderError } from 'commander';
import { isFloeError } from '../errors.ts';
import type { LoadedTable } from '../ports/catalog.ts';
import { describeReport, snapshotsReport, tablesReport } from './inspect.ts';
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
      'where rejected lines go (default: <warehouse>/_floe/dead-letters/load-<time>.ndjson)',
    )
    .option('-q, --quiet', 'no progress output')
    .action(async (files: string[], opts) => {
      const { loadCommand } = await import('./load-command.ts');
      const code = await loadCommand(files, opts, out);
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
    .command('demo')
    .description('run the pipeline end to end on sample events and show the tables it made')
    .option('-w, --warehouse <dir>', 'keep the tables in this folder (default: a temporary folder)')
    .option('-n, --events <n>', 'events per phase (v1, then v2)', '2000')
    .option('-s, --seed <s>', 'random seed for the sample events', '42')
    .option('--record-to <file>', 'also write every event sent as NDJSON')
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
