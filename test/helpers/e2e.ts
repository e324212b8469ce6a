/**
 * Shared plumbing for the end-to-end tests (test/e2e): temp warehouses, generated sample input,
 * expectations derived from that input, and an independent walk of a table's current snapshot
 * (manifest list → manifests → live data files) that does not go through the scan planner.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { FileCatalog } from '../../lambdas/src/adapters/local/file-catalog.ts';
import { fileUri, LocalObjectStore } from '../../lambdas/src/adapters/local/local-object-store.ts';
import { fixedClock, seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { type LoadDeps, type LoadReport, loadSources } from '../../lambdas/src/app/load.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import type { DeadLetter } from '../../lambdas/src/engine/dead-letters.ts';
import {
  type DataFile,
  decodeManifest,
  decodeManifestList,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestFile,
} from '../../lambdas/src/iceberg/manifest/index.ts';
import type { Snapshot } from '../../lambdas/src/iceberg/snapshot.ts';
import type { TableMetadata } from '../../lambdas/src/iceberg/table-metadata.ts';
import type { IcebergType } from '../../lambdas/src/iceberg/types.ts';
import type { Catalog } from '../../lambdas/src/ports/catalog.ts';
import type { Clock, Ids } from '../../lambdas/src/ports/clock.ts';
import type { ObjectStore } from '../../lambdas/src/ports/object-store.ts';
import { type SchemaVersion, sampleEvents, toNdjsonLine } from '../../lambdas/src/sample/sample-events.ts';

/** A fixed "now" for generated events: 2025-03-14T15:00:00Z (events straddle no day boundary issues). */
export const NOW_MS = Date.UTC(2025, 2, 14, 15, 0, 0);

export type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Temp dirs

export function tempDir(prefix = 'floe-e2e-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// ---------------------------------------------------------------------------------------------
// Warehouses

export interface TestWarehouse {
  readonly dir: string;
  readonly uri: string;
  readonly store: LocalObjectStore;
  readonly catalog: FileCatalog;
}

/** A `file://` warehouse in `dir` (as the CLI opens one). */
export function fileWarehouse(dir: string): TestWarehouse {
  const store = new LocalObjectStore();
  const uri = fileUri(dir);
  return { dir, uri, store, catalog: new FileCatalog(store, uri) };
}

export interface LoadOptions {
  readonly catalog?: Catalog;
  readonly store?: ObjectStore;
  readonly clock?: Clock;
  readonly ids?: Ids;
  readonly config?: LoadDeps['config'];
  readonly maxRowsPerFile?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly fastPath?: boolean;
  readonly encoder?: LoadDeps['encoder'];
}

export interface LoadRun {
  readonly report: LoadReport;
  readonly dead: DeadLetter[];
}

let seedCounter = 1000;
/** One clock for every load in a test file: time moves forward across loads, as it would for real. */
const sharedClock = fixedClock(NOW_MS + 60_000);

/** `loadSources` with test deps (deterministic ids and clock unless given); collects dead letters. */
export async function load(
  wh: { store: ObjectStore; catalog: Catalog },
  sources: readonly { name: string; lines: Iterable<string> | AsyncIterable<string> }[],
  opts: LoadOptions = {},
): Promise<LoadRun> {
  const dead: DeadLetter[] = [];
  const report = await loadSources(
    {
      catalog: opts.catalog ?? wh.catalog,
      store: opts.store ?? wh.store,
      clock: opts.clock ?? sharedClock,
      // A fresh seed per call so two loads never mint the same file names or snapshot ids.
      ids: opts.ids ?? seededIds(seedCounter++),
      config: opts.config ?? parseConfig({}),
      onDeadLetter: (d) => {
        dead.push(d);
      },
      sleep: opts.sleep ?? (async () => undefined),
      ...(opts.maxRowsPerFile === undefined ? {} : { maxRowsPerFile: opts.maxRowsPerFile }),
      ...(opts.fastPath === undefined ? {} : { fastPath: opts.fastPath }),
      ...(opts.encoder === undefined ? {} : { encoder: opts.encoder }),
    },
    sources,
  );
  return { report, dead };
}

// ---------------------------------------------------------------------------------------------
// Generated input

export interface Generated {
  /** NDJSON lines exactly as loaded. */
  readonly lines: string[];
  /** The same events, parsed back from the lines (what a reader must return). */
  readonly events: Json[];
}

export function generate(n: number, version: SchemaVersion, seed: number, nowMs = NOW_MS): Generated {
  const it = sampleEvents({ seed, nowMs, version });
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(toNdjsonLine(it.next().value as Json));
  return { lines, events: lines.map((l) => JSON.parse(l) as Json) };
}

/** The table the default routing sends an event to (`event_type` lower-cased + `_events`). */
export function tableOf(ev: Json): string {
  return `${String(ev.event_type).toLowerCase()}_events`;
}

/** Event ids (as text) per table of `events`, each list sorted, the tables in name order. */
export function idsByTable(events: readonly Json[]): Map<string, string[]> {
  return new Map(
    [...groupByTable(events)]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([t, evs]) => [t, sorted(evs.map((e) => String(e.event_id)))]),
  );
}

export function groupByTable(events: readonly Json[]): Map<string, Json[]> {
  const out = new Map<string, Json[]>();
  for (const ev of events) {
    const t = tableOf(ev);
    const list = out.get(t);
    if (list) list.push(ev);
    else out.set(t, [ev]);
  }
  return out;
}

/** Multiset of strings as sorted array (compare with toEqual). */
export function sorted(xs: Iterable<string>): string[] {
  return [...xs].sort();
}

// ---------------------------------------------------------------------------------------------
// Independent snapshot walk

export interface LiveFile {
  readonly manifest: ManifestFile;
  readonly entry: ManifestEntry;
  readonly file: DataFile;
}

export function currentSnapshotOf(m: TableMetadata): Snapshot | undefined {
  const id = m.refs.main?.['snapshot-id'] ?? m['current-snapshot-id'];
  return id === undefined ? undefined : m.snapshots.find((s) => s['snapshot-id'] === id);
}

/** Manifests of a snapshot, read straight from its manifest list. */
export async function manifestsOf(store: ObjectStore, snap: Snapshot): Promise<ManifestFile[]> {
  if (!snap['manifest-list']) throw new Error(`snapshot ${snap['snapshot-id']} has no manifest list`);
  return decodeManifestList(await store.get(snap['manifest-list']));
}

/** Live (ADDED or EXISTING) data files of a snapshot. */
export async function liveFiles(store: ObjectStore, snap: Snapshot): Promise<LiveFile[]> {
  const out: LiveFile[] = [];
  for (const manifest of await manifestsOf(store, snap)) {
    const decoded = decodeManifest(await store.get(manifest.manifest_path));
    for (const entry of decoded.entries) {
      if (entry.status === ManifestEntryStatus.DELETED) continue;
      out.push({ manifest, entry, file: entry.data_file });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// DuckDB

export interface Duck {
  readonly conn: DuckDBConnection;
  /** Rows as JS values (BIGINT → bigint, DOUBLE → number, VARCHAR → string). */
  rows(sql: string): Promise<Record<string, unknown>[]>;
  close(): void;
}

export async function openDuck(): Promise<Duck> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  return {
    conn,
    async rows(sql) {
      return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
    },
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/**
 * DuckDB type for an Iceberg type, written here independently of lambdas/src/query (the point is
 * to check our files against DuckDB without our own SQL generation in the loop).
 */
export function duckType(t: IcebergType): string {
  switch (t.kind) {
    case 'boolean':
      return 'BOOLEAN';
    case 'int':
      return 'INTEGER';
    case 'long':
      return 'BIGINT';
    case 'float':
      return 'FLOAT';
    case 'double':
      return 'DOUBLE';
    case 'date':
      return 'DATE';
    case 'timestamp':
      return 'TIMESTAMP';
    case 'timestamptz':
      return 'TIMESTAMPTZ';
    case 'string':
      return 'VARCHAR';
    case 'binary':
      return 'BLOB';
    case 'decimal':
      return `DECIMAL(${t.precision}, ${t.scale})`;
    case 'struct':
      return `STRUCT(${t.fields.map((f) => `"${f.name}" ${duckType(f.type)}`).join(', ')})`;
    case 'list':
      return `${duckType(t.element)}[]`;
    case 'map':
      return `MAP(${duckType(t.key)}, ${duckType(t.value)})`;
    default:
      throw new Error(`no DuckDB type for ${t.kind} in this test helper`);
  }
}

// ---------------------------------------------------------------------------------------------
// Field ids: the Iceberg schema's ids by Parquet column path, and what a Parquet footer says

interface FieldLike {
  readonly id: number;
  readonly name: string;
  readonly type: IcebergType;
}

/**
 * Iceberg field id expected at each Parquet schema path (spec "Parquet" appendix: lists are
 * `name.list.element`, maps `name.key_value.key|value`; the repeated middle groups carry no id,
 * shown here as `undefined`).
 */
export function expectedParquetIds(
  fields: readonly FieldLike[],
  prefix = '',
): Map<string, number | undefined> {
  const out = new Map<string, number | undefined>();
  const visitType = (t: IcebergType, path: string) => {
    if (t.kind === 'struct') {
      for (const [k, v] of expectedParquetIds(t.fields, `${path}.`)) out.set(k, v);
    } else if (t.kind === 'list') {
      out.set(`${path}.list`, undefined);
      out.set(`${path}.list.element`, t.elementId);
      visitType(t.element, `${path}.list.element`);
    } else if (t.kind === 'map') {
      out.set(`${path}.key_value`, undefined);
      out.set(`${path}.key_value.key`, t.keyId);
      out.set(`${path}.key_value.value`, t.valueId);
      visitType(t.key, `${path}.key_value.key`);
      visitType(t.value, `${path}.key_value.value`);
    }
  };
  for (const f of fields) {
    const path = `${prefix}${f.name}`;
    out.set(path, f.id);
    visitType(f.type, path);
  }
  return out;
}

export interface ParquetSchemaRow {
  readonly name: string;
  readonly num_children: bigint | null;
  readonly field_id: bigint | null;
  readonly logical_type: string | null;
  readonly type: string | null;
  /** `REQUIRED`, `OPTIONAL` or `REPEATED`, when the query selects it. */
  readonly repetition_type?: string | null;
}

/** Rebuilds dotted paths from DuckDB's flat, pre-order `parquet_schema()` rows (root excluded). */
export function parquetPaths(rows: readonly ParquetSchemaRow[]): Map<string, ParquetSchemaRow> {
  const out = new Map<string, ParquetSchemaRow>();
  let i = 1; // rows[0] is the root
  const walk = (prefix: string, count: number) => {
    for (let k = 0; k < count; k++) {
      const row = rows[i++];
      if (!row) throw new Error('parquet_schema ended early');
      const path = `${prefix}${row.name}`;
      out.set(path, row);
      const children = Number(row.num_children ?? 0);
      if (children > 0) walk(`${path}.`, children);
    }
  };
  walk('', Number(rows[0]?.num_children ?? 0));
  if (i !== rows.length) throw new Error(`parquet_schema has ${rows.length - i} unvisited rows`);
  return out;
}
