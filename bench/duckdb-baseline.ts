/** DuckDB converting the same NDJSON to Parquet on one thread: the yardstick for Floe's ingest. */
import { DuckDBInstance } from '@duckdb/node-api';

export interface BaselineResult {
  readonly seconds: number;
  readonly rows: number;
}

export async function duckdbNdjsonToParquet(input: string, output: string): Promise<BaselineResult> {
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  try {
    const esc = (s: string) => s.replaceAll("'", "''");
    const t0 = performance.now();
    await conn.run(
      `COPY (SELECT * FROM read_json_auto('${esc(input)}', format='newline_delimited')) TO '${esc(output)}' (FORMAT parquet, COMPRESSION zstd)`,
    );
    const seconds = (performance.now() - t0) / 1000;
    const r = await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM read_parquet('${esc(output)}')`);
    return { seconds, rows: Number(r.getRowObjects()[0]!.n) };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}
