#!/usr/bin/env node
/**
 * DuckDB's side of bench/width.ts, as a process of its own (run it under bench/child.mjs):
 *
 *   node bench/duckdb-child.mjs INPUT.ndjson OUTPUT [--threads N|default] [--partition-by COL]
 *                               [--expect ROWS]
 *
 * `COPY (SELECT * FROM read_json_auto(INPUT, format='newline_delimited')) TO OUTPUT (FORMAT
 * parquet, COMPRESSION zstd[, PARTITION_BY COL, OVERWRITE_OR_IGNORE])` in an in-memory
 * `@duckdb/node-api` instance (`threads` as given; `default`: DuckDB's own choice, one per core),
 * then counts the output's rows (`read_parquet`, footers only) and prints one JSON line
 * `{"rows":…,"copyMs":…,"countMs":…,"threads":…}` to stdout. Exit 1 when --expect is given and the
 * count differs.
 */
import { DuckDBInstance } from '@duckdb/node-api';

function usage(msg) {
  process.stderr.write(`duckdb-child: ${msg}\n`);
  process.exit(2);
}

const positional = [];
const opts = { threads: '1', partitionBy: undefined, expect: undefined };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--threads') opts.threads = argv[++i] ?? usage('--threads needs a value');
  else if (a === '--partition-by') opts.partitionBy = argv[++i] ?? usage('--partition-by needs a column');
  else if (a === '--expect') opts.expect = Number(argv[++i] ?? usage('--expect needs a number'));
  else if (a.startsWith('--')) usage(`unknown option ${a}`);
  else positional.push(a);
}
if (positional.length !== 2) usage('expected INPUT and OUTPUT');
const [input, output] = positional;
const esc = (s) => s.replaceAll("'", "''");
const ident = (s) => `"${s.replaceAll('"', '""')}"`;

const db = await DuckDBInstance.create(
  ':memory:',
  opts.threads === 'default' ? {} : { threads: opts.threads },
);
const conn = await db.connect();
try {
  const threads = (await conn.runAndReadAll("SELECT current_setting('threads') AS t")).getRowObjects()[0].t;
  const to =
    opts.partitionBy === undefined
      ? '(FORMAT parquet, COMPRESSION zstd)'
      : `(FORMAT parquet, COMPRESSION zstd, PARTITION_BY (${ident(opts.partitionBy)}), OVERWRITE_OR_IGNORE)`;
  const t0 = performance.now();
  await conn.run(
    `COPY (SELECT * FROM read_json_auto('${esc(input)}', format='newline_delimited')) TO '${esc(output)}' ${to}`,
  );
  const t1 = performance.now();
  const files = opts.partitionBy === undefined ? output : `${output}/**/*.parquet`;
  const r = await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM read_parquet('${esc(files)}')`);
  const rows = Number(r.getRowObjects()[0].n);
  const t2 = performance.now();
  process.stdout.write(
    `${JSON.stringify({ rows, copyMs: Math.round(t1 - t0), countMs: Math.round(t2 - t1), threads: Number(threads) })}\n`,
  );
  if (opts.expect !== undefined && rows !== opts.expect) {
    process.stderr.write(`duckdb-child: wrote ${rows} rows, expected ${opts.expect}\n`);
    process.exitCode = 1;
  }
} finally {
  conn.closeSync();
  db.closeSync();
}
