/**
 * Batch load (`floe load`): NDJSON lines → route → infer → evolve → Parquet → one append commit
 * per table. The same routing, inference, conversion, staging and commit code the streaming
 * pipeline uses, run once over whole files. Bad lines become dead letters; good lines still land.
 */
import { type FloeConfig, hintsFor, partitionCandidatesFor, partitionFieldsFor } from '../config.ts';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import { DataFileContent } from '../iceberg/manifest/types.ts';
import { LAST_ADDED, newTableMetadata, type TableUpdate } from '../iceberg/metadata/index.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import {
  type DesiredPartitionField,
  evolveSpec,
  partitionKey,
  partitionPath,
  partitionTuple,
} from '../iceberg/partitioning.ts';
import { indexById, type Schema, schemaStruct } from '../iceberg/schema.ts';
import { assignFreshIds, unionByName } from '../iceberg/schema-evolution.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { currentSchema, defaultSpec } from '../iceberg/table-metadata.ts';
import { parseTransform } from '../iceberg/transform.ts';
import { isPrimitive, type StructType } from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import {
  type ColumnarBatch,
  type DataFileResult,
  supportsColumnar,
  writeColumnarDataFile,
  writeDataFile,
} from '../parquet/index.ts';
import type { LoadedTable, TableIdentifier } from '../ports/catalog.ts';
import { JsonNumberText, type JsonValue, parseJsonRecord } from '../records/json-line.ts';
import { type Shape, ShapeScanner, SlotKind } from '../records/shape-scanner.ts';
import { compileRouter, type RouteResult, type Router } from '../routing/index.ts';
import { compileRowConverter, describeConvertFailure } from '../schema/convert.ts';
import { fitToExisting } from '../schema/fit.ts';
import { StructInferrer } from '../schema/infer.ts';
import { type AppendResult, type CommitDeps, commitAppend, type PreparedAppend } from './append.ts';
import { ColumnarTableBatch, gatherRows, partitionGroups } from './columnar-batch.ts';
import { type DeadLetter, DeadLetterReason } from './dead-letters.ts';

export interface LoadSource {
  /** Shown in progress output and dead letters (a file path). */
  readonly name: string;
  /** Lines one by one, or in batches (cheaper: one await per batch instead of per line). */
  readonly lines?: Iterable<string> | AsyncIterable<string | readonly string[]>;
  /**
   * Or UTF-8 bytes in chunks that each end at a line boundary (the cheapest: clean records are
   * scanned straight from the bytes, and only lines that need the generic path are decoded).
   */
  readonly chunks?: AsyncIterable<Uint8Array>;
}

const utf8Decoder = new TextDecoder('utf-8');

function isBlank(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

async function* batchesOf(lines: NonNullable<LoadSource['lines']>): AsyncGenerator<readonly string[]> {
  if (Symbol.iterator in lines) {
    const all = Array.isArray(lines) ? (lines as readonly string[]) : [...(lines as Iterable<string>)];
    yield all;
    return;
  }
  for await (const item of lines) yield typeof item === 'string' ? [item] : item;
}

export type LoadProgress =
  | { readonly kind: 'read'; readonly source: string; readonly lines: number }
  | { readonly kind: 'table-start'; readonly table: string; readonly records: number }
  | { readonly kind: 'table-done'; readonly table: string; readonly result: TableLoadResult }
  | { readonly kind: 'table-failed'; readonly table: string; readonly error: unknown };

export interface LoadDeps extends CommitDeps {
  readonly config: FloeConfig;
  readonly onProgress?: (p: LoadProgress) => void;
  /** Called for every rejected line, in input order within each table. */
  readonly onDeadLetter: (d: DeadLetter) => void | Promise<void>;
  /** Extra snapshot summary keys (e.g. `floe.load-id`). */
  readonly summary?: Readonly<Record<string, string>>;
  /** Rows per Parquet file within one partition (default 1,000,000). */
  readonly maxRowsPerFile?: number;
  /**
   * Scan clean records straight into columns (default true). Off: every record takes the generic
   * path. Both give the same tables; the switch exists for tests and as a safety valve.
   */
  readonly fastPath?: boolean;
}

export interface TableLoadResult {
  readonly table: string;
  readonly created: boolean;
  readonly rows: number;
  readonly files: number;
  readonly bytes: number;
  readonly deadLetters: number;
  readonly schemaChanges: readonly string[];
  readonly specChanged: boolean;
  readonly snapshotId?: bigint;
  readonly attempts: number;
  /** Which ingest path staged the table: columnar (fast) or record by record (generic). */
  readonly path: 'columnar' | 'generic';
}

export interface TableFailure {
  readonly table: string;
  /** Records routed to the table that were not committed. */
  readonly records: number;
  readonly error: unknown;
}

export interface LoadReport {
  readonly lines: number;
  readonly rows: number;
  readonly deadLetters: Readonly<Record<string, number>>;
  readonly tables: readonly TableLoadResult[];
  /** Tables whose commit failed; empty when everything landed. */
  readonly failures: readonly TableFailure[];
}

interface PendingRecord {
  /** Position in the whole input, for keeping dead letters in input order. */
  readonly seq: number;
  readonly source: string;
  readonly line: number;
  readonly raw: string;
  readonly value: Record<string, JsonValue>;
}

export async function loadSources(deps: LoadDeps, sources: readonly LoadSource[]): Promise<LoadReport> {
  const byTable = new Map<string, PendingRecord[]>();
  const dead: Record<string, number> = {};
  const reject = async (d: DeadLetter) => {
    dead[d.reason] = (dead[d.reason] ?? 0) + 1;
    await deps.onDeadLetter(d);
  };
  const router = compileRouter(deps.config.routing);
  const fast =
    deps.fastPath !== false && fastRouting(deps.config) ? new FastPath(deps.config, router) : undefined;
  let lines = 0;
  for (const src of sources) {
    let n = 0;
    /** The generic path for one line: parse, check, route, keep the record. */
    const generic = async (raw: string): Promise<void> => {
      if (raw.trim() === '') return;
      let value: JsonValue;
      try {
        value = parseJsonRecord(raw);
      } catch (e) {
        await reject({
          source: src.name,
          line: n,
          reason: DeadLetterReason.MalformedJson,
          detail: errText(e),
          raw,
        });
        return;
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        await reject({
          source: src.name,
          line: n,
          reason: DeadLetterReason.NotAnObject,
          detail: `expected a JSON object, got ${jsonKindOf(value)}`,
          raw,
        });
        return;
      }
      const obj = value as Record<string, JsonValue>;
      const route = router(obj);
      if (!route.ok) {
        await reject({ source: src.name, line: n, reason: routeReason(route), detail: route.detail, raw });
        return;
      }
      let bucket = byTable.get(route.table);
      if (!bucket) {
        bucket = [];
        byTable.set(route.table, bucket);
      }
      bucket.push({ seq: lines, source: src.name, line: n, raw, value: obj });
    };
    const progress = () => {
      if (n % 50_000 === 0) deps.onProgress?.({ kind: 'read', source: src.name, lines: n });
    };
    if (src.chunks) {
      for await (const chunk of src.chunks) {
        const len = chunk.length;
        let pos = 0;
        while (pos < len) {
          let nl = chunk.indexOf(10, pos);
          if (nl < 0) nl = len;
          const end = nl > pos && chunk[nl - 1] === 13 ? nl - 1 : nl;
          n++;
          lines++;
          progress();
          if (!isBlank(chunk, pos, end)) {
            const route = fast?.takeBytes(chunk, pos, end, lines, src.name, n);
            if (route !== true) {
              const raw = utf8Decoder.decode(chunk.subarray(pos, end));
              if (route === undefined) await generic(raw);
              else
                await reject({
                  source: src.name,
                  line: n,
                  reason: routeReason(route),
                  detail: route.detail,
                  raw,
                });
            }
          }
          pos = nl + 1;
        }
      }
    } else {
      for await (const batch of batchesOf(src.lines ?? [])) {
        for (const raw of batch) {
          n++;
          lines++;
          progress();
          if (raw.trim() === '') continue;
          const route = fast?.take(raw, lines, src.name, n);
          if (route === true) continue;
          if (route !== undefined) {
            await reject({
              source: src.name,
              line: n,
              reason: routeReason(route),
              detail: route.detail,
              raw,
            });
            continue;
          }
          await generic(raw);
        }
      }
    }
    deps.onProgress?.({ kind: 'read', source: src.name, lines: n });
  }

  const tables: TableLoadResult[] = [];
  const failures: TableFailure[] = [];
  const names = [...new Set([...byTable.keys(), ...(fast?.tables.keys() ?? [])])].sort();
  for (const table of names) {
    const records = byTable.get(table) ?? [];
    const columnar = fast?.tables.get(table);
    const count = records.length + (columnar?.rowCount ?? 0);
    deps.onProgress?.({ kind: 'table-start', table, records: count });
    try {
      const id = { namespace: deps.config.namespace, name: table };
      const result =
        (columnar && records.length === 0 ? await loadTableColumnar(deps, id, columnar) : undefined) ??
        (await loadTable(deps, id, mergeBySeq(records, columnar ? reparse(columnar) : []), reject));
      tables.push(result);
      deps.onProgress?.({ kind: 'table-done', table, result });
    } catch (error) {
      // One table's failure (I/O, a conflict budget spent) must not stop the others; its records
      // are not bad input, so they are reported as not loaded rather than dead-lettered.
      failures.push({ table, records: count, error });
      deps.onProgress?.({ kind: 'table-failed', table, error });
    }
  }
  return { lines, rows: tables.reduce((n, t) => n + t.rows, 0), deadLetters: dead, tables, failures };
}

async function loadTable(
  deps: LoadDeps,
  id: TableIdentifier,
  records: PendingRecord[],
  reject: (d: DeadLetter) => Promise<void>,
): Promise<TableLoadResult> {
  const cfg = deps.config;
  const name = id.name;
  const hints = hintsFor(cfg, name);
  const candidates = partitionCandidatesFor(cfg, name);
  const screened = await screen(
    deps,
    id,
    records,
    new StructInferrer({ hints, detectTimestamps: cfg.inference.detectTimestamps }),
    () => new StructInferrer({ hints, detectTimestamps: cfg.inference.detectTimestamps }),
  );
  let deadLetters = screened.rejected.length;
  for (const d of screened.rejected) await reject(d);
  const accepted = screened.accepted;
  const batchType = screened.batchType;
  if (accepted.length === 0) {
    return {
      table: name,
      created: false,
      rows: 0,
      files: 0,
      bytes: 0,
      deadLetters,
      schemaChanges: [],
      specChanged: false,
      attempts: 0,
      path: 'generic',
    };
  }

  let created = false;
  if (!screened.exists) created = await createTable(deps, id, batchType, candidates);

  const committed = await commitStaged(deps, id, (base, staged) =>
    stage(deps, base, batchType, candidates, accepted, staged),
  );
  for (const d of committed.staged?.rejected ?? []) {
    deadLetters++;
    await reject(d);
  }
  return tableResult(name, created, deadLetters, committed, 'generic');
}

interface Staged {
  readonly prepared: PreparedAppend;
  readonly rejected: readonly DeadLetter[];
  readonly changes: readonly string[];
  readonly specChanged: boolean;
}

interface Committed {
  readonly result: AppendResult;
  /** What the winning attempt staged. */
  readonly staged?: Staged;
}

/**
 * Commits what `stageFor` writes against the freshly loaded base. The staged files are reused
 * while the base's schema and spec stay the same; when they move (another writer evolved the
 * table) the old files are deleted as orphans and the batch is staged again.
 */
async function commitStaged(
  deps: LoadDeps,
  id: TableIdentifier,
  stageFor: (base: LoadedTable, files: string[]) => Promise<Staged>,
): Promise<Committed> {
  let last: (Staged & { key: string }) | undefined;
  const files: string[] = [];
  try {
    const result = await commitAppend(deps, {
      table: id,
      summary: deps.summary,
      prepare: async (base: LoadedTable) => {
        const m = base.metadata;
        const key = `${m['current-schema-id']}/${m['last-column-id']}/${m['default-spec-id']}/${m['last-partition-id']}`;
        if (last?.key === key) return last.prepared;
        await Promise.all(files.splice(0).map((f) => deps.store.delete(f).catch(() => undefined)));
        last = { key, ...(await stageFor(base, files)) };
        return last.prepared;
      },
    });
    return { result, ...(last ? { staged: last } : {}) };
  } catch (e) {
    if (e instanceof UseGenericPath)
      await Promise.all(files.splice(0).map((f) => deps.store.delete(f).catch(() => undefined)));
    throw e;
  }
}

function tableResult(
  name: string,
  created: boolean,
  deadLetters: number,
  c: Committed,
  path: TableLoadResult['path'],
): TableLoadResult {
  const files = c.staged?.prepared.dataFiles ?? [];
  return {
    table: name,
    created,
    rows: Number(files.reduce((n, f) => n + f.record_count, 0n)),
    files: files.length,
    bytes: Number(files.reduce((n, f) => n + f.file_size_in_bytes, 0n)),
    deadLetters,
    schemaChanges: c.staged?.changes ?? [],
    specChanged: c.staged?.specChanged ?? false,
    ...(c.result.snapshot ? { snapshotId: c.result.snapshot['snapshot-id'] } : {}),
    attempts: c.result.attempts,
    path,
  };
}

interface Screened {
  readonly accepted: PendingRecord[];
  /** In input order. */
  readonly rejected: DeadLetter[];
  /** The accepted records' type, fitted to the table's existing columns. */
  readonly batchType: StructType;
  readonly exists: boolean;
}

/**
 * Splits a table's records into those that can share one schema with the table and the rest.
 * Fast path: one inference pass over the batch. Only when something conflicts is each record
 * checked on its own against the table's schema first, so a bad record early in a batch cannot
 * decide the column type and take the good ones down with it.
 */
async function screen(
  deps: LoadDeps,
  id: TableIdentifier,
  records: readonly PendingRecord[],
  inferrer: StructInferrer,
  newInferrer: () => StructInferrer,
): Promise<Screened> {
  const name = id.name;
  const exists = await deps.catalog.tableExists(id);
  const base = exists ? await deps.catalog.loadTable(id) : undefined;
  const current = base ? currentSchema(base.metadata) : undefined;
  const fitToTable = (t: StructType) => (current ? fitToExisting(schemaStruct(current), t) : t);
  const joinsTable = (t: StructType): string | undefined => {
    if (!base || !current) return undefined;
    try {
      unionByName(current, fitToTable(t), base.metadata['last-column-id'], base.metadata['format-version'], {
        tableName: name,
      });
      return undefined;
    } catch (e) {
      if (!isFloeError(e, ErrorKind.SchemaIncompatible)) throw e;
      return e.message;
    }
  };

  let conflicted = false;
  for (const r of records) {
    if (inferrer.add(r.value)) {
      conflicted = true;
      break;
    }
  }
  let accepted: PendingRecord[] = [...records];
  const rejected: DeadLetter[] = [];
  let batchType = fitToTable(inferrer.result());
  if (conflicted || joinsTable(batchType) !== undefined) {
    accepted = [];
    const together = newInferrer();
    for (const r of records) {
      if (current) {
        const one = newInferrer();
        const own = one.add(r.value);
        const why = own ? `table '${name}': ${own.message}` : joinsTable(one.result());
        if (why !== undefined) {
          rejected.push(deadLetterOf(r, DeadLetterReason.TypeConflict, why, name));
          continue;
        }
      }
      const clash = together.add(r.value);
      if (clash)
        rejected.push(
          deadLetterOf(r, DeadLetterReason.TypeConflict, `table '${name}': ${clash.message}`, name),
        );
      else accepted.push(r);
    }
    batchType = fitToTable(together.result());
  }
  const columns = (current?.fields.length ?? 0) + batchType.fields.length;
  if (columns === 0) {
    // Nothing typed to write (only nulls / empty arrays / empty objects): keep the records.
    for (const r of accepted) {
      rejected.push(
        deadLetterOf(
          r,
          DeadLetterReason.NoTypedValues,
          `table '${name}': the record has no typed value to form a column`,
          name,
        ),
      );
    }
    accepted = [];
  }
  rejected.sort((a, b) => order(a) - order(b));
  return { accepted, rejected, batchType, exists };
}

const seqOf = new WeakMap<DeadLetter, number>();
function order(d: DeadLetter): number {
  return seqOf.get(d) ?? 0;
}

/** Creates the table with the batch's schema and partition spec; false if someone else won. */
async function createTable(
  deps: LoadDeps,
  id: TableIdentifier,
  batchType: StructType,
  candidates: readonly string[],
): Promise<boolean> {
  let next = 0;
  const fields = assignFreshIds(batchType, () => ++next).fields;
  const schema: Schema = { schemaId: 0, fields };
  const desired = partitionFieldsFor(schemaStruct(schema), candidates);
  const spec: PartitionSpec = {
    'spec-id': 0,
    fields: desired.map((d, i) => ({
      'source-id': d.sourceId,
      'field-id': 1000 + i,
      name: d.name,
      transform: d.transform,
    })),
  };
  const metadata = newTableMetadata({
    location: deps.catalog.defaultLocation(id),
    schema,
    spec,
    properties: deps.config.tableProperties,
    formatVersion: deps.config.formatVersion,
    tableUuid: deps.ids.uuid(),
    nowMs: deps.clock.nowMs(),
  });
  await deps.catalog.createNamespace(id.namespace);
  try {
    await deps.catalog.createTable(id, metadata);
    return true;
  } catch (e) {
    if (isFloeError(e, ErrorKind.AlreadyExists)) return false;
    throw e;
  }
}

interface Evolved {
  readonly schema: Schema;
  readonly spec: PartitionSpec;
  readonly updates: TableUpdate[];
  readonly changes: string[];
  readonly specChanged: boolean;
}

/** Schema and spec evolution of `base` for a batch (metadata-only updates). */
function evolve(base: LoadedTable, batchType: StructType, candidates: readonly string[]): Evolved {
  const m = base.metadata;
  const updates: TableUpdate[] = [];
  const current = currentSchema(m);
  const maxSchemaId = Math.max(...m.schemas.map((s) => s.schemaId));
  // The base may have moved on since the batch was fitted: fit again to what is there now.
  const fitted = fitToExisting(schemaStruct(current), batchType);
  const evolved = unionByName(current, fitted, m['last-column-id'], m['format-version'], {
    tableName: base.id.name,
    maxSchemaId,
  });
  const schema = evolved.schema ?? current;
  if (evolved.schema) {
    updates.push({ action: 'add-schema', schema: evolved.schema, 'last-column-id': evolved.lastColumnId });
    updates.push({ action: 'set-current-schema', 'schema-id': LAST_ADDED });
  }
  const spec = evolveSpec(
    m['partition-specs'],
    m['default-spec-id'],
    m['last-partition-id'],
    desiredPartitioning(defaultSpec(m), schema, candidates),
    schema,
  );
  if (spec.changed) {
    if (m['partition-specs'].some((s) => s['spec-id'] === spec.spec['spec-id'])) {
      updates.push({ action: 'set-default-spec', 'spec-id': spec.spec['spec-id'] });
    } else {
      updates.push({ action: 'add-spec', spec: spec.spec });
      updates.push({ action: 'set-default-spec', 'spec-id': LAST_ADDED });
    }
  }
  return { schema, spec: spec.spec, updates, changes: evolved.changes, specChanged: spec.changed };
}

/** Evolves schema and spec against `base`, converts rows, and writes one Parquet file per partition. */
async function stage(
  deps: LoadDeps,
  base: LoadedTable,
  batchType: StructType,
  candidates: readonly string[],
  records: readonly PendingRecord[],
  staged: string[],
): Promise<{ prepared: PreparedAppend; rejected: DeadLetter[]; changes: string[]; specChanged: boolean }> {
  const m = base.metadata;
  const name = base.id.name;
  const { schema, spec, updates, changes, specChanged } = evolve(base, batchType, candidates);
  const convert = compileRowConverter(schema);
  const rejected: DeadLetter[] = [];
  const groups = new Map<string, { tuple: IcebergValue[]; rows: Row[] }>();
  for (const r of records) {
    const c = convert(r.value);
    if (!c.ok) {
      rejected.push(deadLetterOf(r, DeadLetterReason.InvalidValue, describeConvertFailure(name, c), name));
      continue;
    }
    const tuple = partitionTuple(spec, schema, c.row);
    const key = partitionKey(tuple);
    let g = groups.get(key);
    if (!g) {
      g = { tuple, rows: [] };
      groups.set(key, g);
    }
    g.rows.push(c.row);
  }
  const maxRows = deps.maxRowsPerFile ?? 1_000_000;
  const dataFiles: DataFile[] = [];
  const compression = codecOf(m);
  for (const g of groups.values()) {
    for (let i = 0; i < g.rows.length; i += maxRows) {
      const file = writeDataFile(schema, g.rows.slice(i, i + maxRows), { compression });
      dataFiles.push(await putDataFile(deps, m, schema, spec, g.tuple, file, dataFiles.length, staged));
    }
  }
  return { prepared: { updates, dataFiles, specId: spec['spec-id'] }, rejected, changes, specChanged };
}

/** Stores one written Parquet file and describes it for the manifest. */
async function putDataFile(
  deps: LoadDeps,
  m: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  tuple: IcebergValue[],
  file: DataFileResult,
  ordinal: number,
  staged: string[],
): Promise<DataFile> {
  const dir = partitionPath(spec, schema, tuple);
  const uri = `${dataLocation(m)}/${dir ? `${dir}/` : ''}${String(ordinal).padStart(5, '0')}-${deps.ids.uuid()}.parquet`;
  await deps.store.put(uri, file.bytes);
  staged.push(uri);
  return {
    content: DataFileContent.DATA,
    file_path: uri,
    file_format: 'PARQUET',
    partition: tuple,
    record_count: BigInt(file.recordCount),
    file_size_in_bytes: BigInt(file.bytes.length),
    column_sizes: file.metrics.columnSizes,
    value_counts: file.metrics.valueCounts,
    null_value_counts: file.metrics.nullValueCounts,
    nan_value_counts: file.metrics.nanValueCounts,
    lower_bounds: file.metrics.lowerBounds,
    upper_bounds: file.metrics.upperBounds,
    split_offsets: file.metrics.splitOffsets,
    sort_order_id: 0,
  };
}

/**
 * The spec a table should have: its current fields, plus each candidate that its schema now has
 * and the spec lacks. Specs only grow: a table's existing partitioning (Floe's or another
 * engine's) is never dropped behind the user's back.
 */
function desiredPartitioning(
  current: PartitionSpec,
  schema: Schema,
  candidates: readonly string[],
): DesiredPartitionField[] {
  const out: DesiredPartitionField[] = current.fields.map((f) => ({
    sourceId: f['source-id'],
    transform: f.transform,
    name: f.name,
  }));
  const have = new Set(out.map((f) => `${f.sourceId}/${f.transform}`));
  for (const d of partitionFieldsFor(schemaStruct(schema), candidates)) {
    if (have.has(`${d.sourceId}/${d.transform}`) || out.some((f) => f.name === d.name)) continue;
    out.push(d);
  }
  return out;
}

function dataLocation(m: TableMetadata): string {
  return m.properties['write.data.path'] ?? `${m.location}/data`;
}

function codecOf(m: TableMetadata): 'zstd' | 'snappy' | 'gzip' | 'uncompressed' {
  const c = (m.properties['write.parquet.compression-codec'] ?? 'zstd').toLowerCase();
  if (c === 'zstd' || c === 'snappy' || c === 'gzip' || c === 'uncompressed') return c;
  throw new FloeError(
    ErrorKind.ConfigInvalid,
    `table ${m.location}: unsupported write.parquet.compression-codec '${c}'`,
  );
}

function deadLetterOf(
  r: PendingRecord,
  reason: DeadLetter['reason'],
  detail: string,
  table: string,
): DeadLetter {
  const d: DeadLetter = { source: r.source, line: r.line, reason, detail, table, raw: r.raw };
  seqOf.set(d, r.seq);
  return d;
}

function jsonKindOf(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'bigint' || typeof v === 'number' || v instanceof JsonNumberText) return 'a number';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return 'a boolean';
  return typeof v;
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function routeReason(route: { reason: 'no-route' | 'illegal-name' | 'not-allowed' }): DeadLetter['reason'] {
  if (route.reason === 'illegal-name') return DeadLetterReason.IllegalTableName;
  if (route.reason === 'not-allowed') return DeadLetterReason.TableNotAllowed;
  return DeadLetterReason.NoRoute;
}

// ---- The fast path: scanned records accumulated column by column -------------------------------

/** The fast path routes by a plain top-level routing field only (templates need whole records). */
function fastRouting(cfg: FloeConfig): boolean {
  return (
    cfg.routing.tableField === undefined &&
    cfg.routing.template === undefined &&
    !cfg.routing.routingField.includes('.')
  );
}

type FailedRoute = Extract<RouteResult, { ok: false }>;

class FastPath {
  readonly tables = new Map<string, ColumnarTableBatch>();
  private readonly scanner = new ShapeScanner();
  private readonly routes = new Map<string, RouteResult>();
  /** Routing values seen, as UTF-8 bytes, with their route (a handful of event types). */
  private readonly byteRoutes: { readonly bytes: Uint8Array; readonly route: RouteResult }[] = [];

  private byBytes(buf: Uint8Array, start: number, end: number): RouteResult | undefined {
    const n = end - start;
    outer: for (const r of this.byteRoutes) {
      const b = r.bytes;
      if (b.length !== n) continue;
      for (let i = 0; i < n; i++) if (b[i] !== buf[start + i]) continue outer;
      return r.route;
    }
    return undefined;
  }

  private rememberBytes(buf: Uint8Array, start: number, end: number, route: RouteResult): void {
    if (this.byBytes(buf, start, end) === undefined)
      this.byteRoutes.push({ bytes: buf.slice(start, end), route });
  }
  private readonly routingSlot = new Map<number, number>();
  private readonly field: string;

  constructor(
    cfg: FloeConfig,
    private readonly router: Router,
  ) {
    this.field = cfg.routing.routingField;
  }

  /** true: taken; a failed route: dead-letter it; undefined: use the generic path. */
  take(raw: string, seq: number, source: string, line: number): true | FailedRoute | undefined {
    const shape = this.scanner.scan(raw);
    return shape ? this.place(shape, seq, source, line, raw) : undefined;
  }

  /** As `take`, for the record at `chunk[start..end)`. */
  takeBytes(
    chunk: Uint8Array,
    start: number,
    end: number,
    seq: number,
    source: string,
    line: number,
  ): true | FailedRoute | undefined {
    const shape = this.scanner.scanBytes(chunk, start, end);
    return shape ? this.place(shape, seq, source, line, chunk, start, end) : undefined;
  }

  private place(
    shape: Shape,
    seq: number,
    source: string,
    line: number,
    raw: string | Uint8Array,
    rawStart = 0,
    rawEnd = 0,
  ): true | FailedRoute {
    let slot = this.routingSlot.get(shape.id);
    if (slot === undefined) {
      slot = shape.slots.findIndex((s) => s.path === this.field);
      this.routingSlot.set(shape.id, slot);
    }
    let route: RouteResult | undefined;
    const sc = this.scanner;
    if (slot >= 0 && sc.kinds[slot] === SlotKind.String) {
      // Recognise the routing value by its bytes: no string per record for the common values.
      route = this.byBytes(sc.bytes, sc.byteStart[slot]!, sc.byteEnd[slot]!);
    }
    const v =
      route !== undefined || slot < 0
        ? undefined
        : sc.kinds[slot] === SlotKind.String
          ? sc.stringAt(slot)
          : sc.values[slot];
    if (route !== undefined) {
      // found by bytes
    } else if (typeof v === 'string') {
      let cached = this.routes.get(v);
      if (!cached) {
        cached = this.router({ [this.field]: v });
        this.routes.set(v, cached);
      }
      route = cached;
    } else {
      route = this.router(slot >= 0 ? { [this.field]: v } : {});
    }
    if (!route.ok) return route;
    if (slot >= 0 && sc.kinds[slot] === SlotKind.String && this.byteRoutes.length < 64) {
      this.rememberBytes(sc.bytes, sc.byteStart[slot]!, sc.byteEnd[slot]!, route);
    }
    let batch = this.tables.get(route.table);
    if (!batch) {
      batch = new ColumnarTableBatch();
      this.tables.set(route.table, batch);
    }
    batch.append(this.scanner, shape, seq, source, line, raw, rawStart, rawEnd);
    return true;
  }
}

/** Thrown inside a commit attempt when the fast path meets something only the generic path handles. */
class UseGenericPath extends Error {}

/**
 * Loads a table whose records all came through the fast path, or returns undefined (having
 * written nothing that stays) when any rule needs the generic path.
 */
async function loadTableColumnar(
  deps: LoadDeps,
  id: TableIdentifier,
  batch: ColumnarTableBatch,
): Promise<TableLoadResult | undefined> {
  const cfg = deps.config;
  const name = id.name;
  const candidates = partitionCandidatesFor(cfg, name);
  const batchType = batch.inferType(hintsFor(cfg, name), cfg.inference.detectTimestamps);
  if (!batchType || batchType.fields.length === 0) return undefined;
  const exists = await deps.catalog.tableExists(id);
  if (exists) {
    const base = await deps.catalog.loadTable(id);
    const current = currentSchema(base.metadata);
    try {
      unionByName(
        current,
        fitToExisting(schemaStruct(current), batchType),
        base.metadata['last-column-id'],
        base.metadata['format-version'],
      );
    } catch (e) {
      if (isFloeError(e, ErrorKind.SchemaIncompatible)) return undefined;
      throw e;
    }
  }
  const created = exists ? false : await createTable(deps, id, batchType, candidates);
  try {
    const committed = await commitStaged(deps, id, async (base, files) => {
      const ev = evolve(base, batchType, candidates);
      if (!supportsColumnar(ev.schema)) throw new UseGenericPath();
      const columns = batch.toColumnar(ev.schema);
      if (!columns) throw new UseGenericPath();
      const dataFiles = await writeColumnarFiles(deps, base.metadata, ev.schema, ev.spec, columns, files);
      return {
        prepared: { updates: ev.updates, dataFiles, specId: ev.spec['spec-id'] },
        rejected: [],
        changes: ev.changes,
        specChanged: ev.specChanged,
      };
    });
    return tableResult(name, created, 0, committed, 'columnar');
  } catch (e) {
    if (e instanceof UseGenericPath) return undefined;
    throw e;
  }
}

/** Splits converted columns by partition and writes one Parquet file per partition (and size). */
async function writeColumnarFiles(
  deps: LoadDeps,
  m: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  columns: ColumnarBatch,
  staged: string[],
): Promise<DataFile[]> {
  const n = columns.rowCount;
  const byId = indexById(schema);
  const fields = spec.fields.map((f) => {
    const source = byId.get(f['source-id'])?.field;
    if (!source || !isPrimitive(source.type)) throw new UseGenericPath();
    return {
      transform: parseTransform(f.transform),
      type: source.type,
      leaf: columns.leaves.get(f['source-id']),
    };
  });
  const groups = partitionGroups(fields, n);
  const maxRows = deps.maxRowsPerFile ?? 1_000_000;
  const compression = codecOf(m);
  const dataFiles: DataFile[] = [];
  for (const g of groups) {
    for (let i = 0; i < g.rows.length; i += maxRows) {
      const rows = g.rows.slice(i, i + maxRows);
      const part = groups.length === 1 && rows.length === n ? columns : gatherRows(columns, rows);
      const file = writeColumnarDataFile(schema, part, { compression });
      dataFiles.push(await putDataFile(deps, m, schema, spec, g.tuple, file, dataFiles.length, staged));
    }
  }
  return dataFiles;
}

/** The fast path's records as generic records (re-parsed), when a table needs the generic path. */
function reparse(batch: ColumnarTableBatch): PendingRecord[] {
  return batch.provenance.map((p) => ({ ...p, value: parseJsonRecord(p.raw) as Record<string, JsonValue> }));
}

function mergeBySeq(a: PendingRecord[], b: PendingRecord[]): PendingRecord[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  return [...a, ...b].sort((x, y) => x.seq - y.seq);
}
