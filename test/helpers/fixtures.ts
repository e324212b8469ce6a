/**
 * Loading the checked-in Iceberg fixture tables (test/fixtures/iceberg/<name>/).
 *
 * Their metadata points at the writer's original locations: absolute (`s3a://hyperparam-iceberg/...`,
 * `s3://...`) or relative to the upstream repository root (`data/persistent/...`, `lineitem_iceberg/...`).
 * `resolvePath` re-roots any of those onto the local fixture folder.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseTableMetadata, type TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import { IcebergQueryEngine } from '../../lambdas/src/query/engine.ts';

import { FIXTURES_ROOT } from './fixture-root.ts';

export { FIXTURES_ROOT };

export interface FixtureTable {
  readonly name: string;
  readonly dir: string;
  readonly metadataPath: string;
  readonly metadata: TableMetadata;
  /** Table file URI → local path under `dir`. */
  readonly resolvePath: (uri: string) => string;
  /** Reads a table file by URI (re-rooted). */
  readonly read: (uri: string) => Promise<Uint8Array>;
}

/** Every fixture folder holding a table (one with a `metadata/` directory). */
export function fixtureTableNames(): string[] {
  return readdirSync(FIXTURES_ROOT)
    .filter((n) => existsSync(join(FIXTURES_ROOT, n, 'metadata')))
    .sort();
}

/** Metadata file names of a fixture table, oldest first (`v1.metadata.json` … or `00000-….metadata.json` …). */
export function metadataFiles(name: string): string[] {
  return readdirSync(join(FIXTURES_ROOT, name, 'metadata'))
    .filter((f) => f.endsWith('.metadata.json'))
    .sort((a, b) => versionOf(a) - versionOf(b) || a.localeCompare(b));
}

function versionOf(file: string): number {
  const m = /^v(\d+)\.metadata\.json$/.exec(file) ?? /^(\d+)-/.exec(file);
  return m ? Number(m[1]) : Number.MAX_SAFE_INTEGER;
}

/**
 * The metadata file for `version`: a number N picks `vN.metadata.json` or `0000N-*.metadata.json`, a string
 * is a file name; by default `version-hint.text` is followed, else the newest file is taken.
 */
export function findMetadataFile(name: string, version?: number | string): string {
  const dir = join(FIXTURES_ROOT, name, 'metadata');
  const files = metadataFiles(name);
  if (typeof version === 'string') return join(dir, version);
  let wanted = version;
  const hint = join(dir, 'version-hint.text');
  if (wanted === undefined && existsSync(hint)) wanted = Number(readFileSync(hint, 'utf8').trim());
  const match =
    wanted === undefined
      ? files.at(-1)
      : files.find((f) => f === `v${wanted}.metadata.json` || versionOf(f) === wanted);
  if (!match) throw new Error(`fixture ${name}: no metadata file for version ${String(version)}`);
  return join(dir, match);
}

/** Loads a fixture table at a metadata version (see findMetadataFile). */
export function loadFixtureTable(name: string, version?: number | string): FixtureTable {
  const dir = join(FIXTURES_ROOT, name);
  const metadataPath = findMetadataFile(name, version);
  const metadata = parseTableMetadata(readFileSync(metadataPath, 'utf8'));
  const resolvePath = fixtureResolver(dir, metadata.location);
  return {
    name,
    dir,
    metadataPath,
    metadata,
    resolvePath,
    read: async (uri) => new Uint8Array(await readFile(resolvePath(uri))),
  };
}

/**
 * Re-roots a table file URI onto `dir`: strips the table `location` prefix when the URI starts with it
 * (ignoring a leading `./`), otherwise keeps everything from the first `/metadata/` or `/data/` segment.
 */
export function fixtureResolver(dir: string, location: string): (uri: string) => string {
  const base = trimDotSlash(location).replace(/\/+$/, '');
  return (uri) => {
    const path = trimDotSlash(uri);
    if (path.startsWith(`${base}/`)) return join(dir, path.slice(base.length + 1));
    const m = /(?:^|\/)((?:metadata|data)\/.*)$/.exec(path.replace(/^[a-z0-9]+:\/\/[^/]*/i, ''));
    if (!m?.[1]) throw new Error(`cannot re-root ${uri} (table location ${location}) onto ${dir}`);
    return join(dir, m[1]);
  };
}

function trimDotSlash(p: string): string {
  return p.startsWith('./') ? p.slice(2) : p;
}

/** Registers fixture `name` at `version` as view `t` in a fresh engine, runs `sql`, closes the engine. */
export async function queryFixture(
  name: string,
  version: number | string | undefined,
  sql: string,
): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
  const table = loadFixtureTable(name, version);
  const engine = new IcebergQueryEngine({ read: table.read, resolvePath: table.resolvePath });
  try {
    await engine.registerTable('t', table.metadata);
    return await engine.query(sql);
  } finally {
    engine.close();
  }
}
