/**
 * Test helper: write Parquet bytes to a temp file and query them with DuckDB.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

export interface Duck {
  /** Writes `bytes` to a fresh temp file and returns its path (quoted-safe: no quotes in it). */
  file(bytes: Uint8Array): string;
  rows(sql: string): Promise<Record<string, unknown>[]>;
  close(): void;
}

export async function openDuck(): Promise<Duck> {
  const dir = mkdtempSync(join(tmpdir(), 'floe-parquet-'));
  const instance = await DuckDBInstance.create(':memory:');
  const conn: DuckDBConnection = await instance.connect();
  let n = 0;
  return {
    file(bytes) {
      const p = join(dir, `f${n++}.parquet`);
      writeFileSync(p, bytes);
      return p;
    },
    async rows(sql) {
      return (await conn.runAndReadAll(sql)).getRowObjects() as Record<string, unknown>[];
    },
    close() {
      conn.closeSync();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
