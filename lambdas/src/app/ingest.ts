/**
 * The ingest app (DESIGN §1, §4): one Kinesis batch of one shard → data files and pending
 * fragments per target table, dead letters, and one ledger entry per table, written last.
 *
 * Exactly once (invariant 1): before staging, the ingest reads where each table's ledger chain on
 * this shard ends (`shardTails`) and skips every record of that table at or below it: with
 * ParallelizationFactor 1 a shard's batches are delivered in order, so such a record was handled
 * by an earlier (possibly failed, retried or bisected) delivery whose entry is in the ledger. A
 * table's entry is appended at its chain's tail only after its files are stored; files of a
 * table whose entry was never written are orphans that no commit references.
 *
 * A table whose staging fails (storage, ledger) does not fail the others: the batch reports the
 * lowest sequence number of the failed tables' records as its batch item failure, Lambda retries
 * from there, and the tables that succeeded skip what they already staged.
 */
import {
  type FloeConfig,
  hasRecordRules,
  hintsFor,
  partitionCandidatesFor,
  readerDepthLimit,
  tableId,
  typeConflictFor,
} from '../config.ts';
import { ErrorKind, isFloeError } from '../errors.ts';
import { dataFileToJson, withoutColumnMetrics } from '../iceberg/manifest/data-file-json.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import { currentSchema, defaultSpec } from '../iceberg/table-metadata.ts';
import type { IcebergType, StructType } from '../iceberg/types.ts';
import type { Row } from '../iceberg/values.ts';
import { supportsColumnar } from '../parquet/index.ts';
import type { Catalog, LoadedTable } from '../ports/catalog.ts';
import type { Clock, Ids } from '../ports/clock.ts';
import {
  type DeadLetterRecord,
  type DeadLetterStore,
  recordText,
  streamDeadLetter,
} from '../ports/dead-letters.ts';
import { compareSequence, type Ledger, type LedgerFile, padSequence } from '../ports/ledger.ts';
import { deleteQuietly, type ObjectStore } from '../ports/object-store.ts';
import type { SchemaRegistry } from '../ports/schema-registry.ts';
import { type DecodedAvro, decodeJsonRecord, decodeRecord } from '../records/decode.ts';
import { formatJsonRecord, type JsonObject } from '../records/json-line.ts';
import type { KinesisBatch, KinesisBatchRecord } from '../records/kinesis-event.ts';
import { compileConsolidation } from '../routing/consolidate.ts';
import { compileRouter, type RouteResult, type Router } from '../routing/index.ts';
import { compileSchemaNameRouter } from '../routing/route.ts';
import { StructInferrer } from '../schema/infer.ts';
import { ProjectFailure, projectRow } from '../schema/project.ts';
import { forEachBounded } from './bounded.ts';
import { type DeadLetter, DeadLetterReason } from './dead-letters.ts';
import {
  columnarFit,
  FastPath,
  fastRouting,
  mergeBySeq,
  reparse,
  writeColumnarFiles,
} from './load-columnar.ts';
import { coercionSummary, refuseAlone, screen, stage, writeRows } from './load-generic.ts';
import type { LoadDeps, PendingRecord } from './load-types.ts';
import { encodeFragment, type FragmentRecord } from './pending-fragment.ts';
import { RecordRules, schemaColumnPaths } from './record-rules.ts';
import { errorText, type ParquetEncoder } from './row-files.ts';
import type { TableCache } from './table-cache.ts';
import { evolve, UseGenericPath } from './table-staging.ts';

export interface IngestDeps {
  readonly config: FloeConfig;
  readonly catalog: Catalog;
  readonly store: ObjectStore;
  readonly ledger: Ledger;
  readonly deadLetters: DeadLetterStore;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly tables: TableCache;
  /** Required for `format: avro-gsr` (pass a `CachedSchemaRegistry`). */
  readonly registry?: SchemaRegistry;
  /** Where pending fragments go, e.g. `s3://staging-bucket/floe` (a lifecycle rule may expire them after days). */
  readonly stagingUri: string;
  readonly maxRowsPerFile?: number;
  /** Scan clean JSON records straight into columns (default true). */
  readonly fastPath?: boolean;
  /** Tables staged at once (default 4). */
  readonly concurrency?: number;
  /** The Parquet encoders (tests decorate them to inject failures; default the real ones). */
  readonly encoder?: ParquetEncoder;
}

export interface TableIngest {
  readonly table: string;
  /** Records routed to the table in this batch (skipped ones excluded). */
  readonly records: number;
  /** Rows written to data files of the table's current schema. */
  readonly rows: number;
  /** Records kept in pending fragments for the committer (the table must be created or evolved). */
  readonly pending: number;
  readonly dataFiles: number;
  readonly bytes: number;
  readonly deadLetters: number;
  readonly path: 'columnar' | 'generic' | 'avro' | 'pending' | 'none';
  /** Values converted under the `coerce` type-conflict policy (`column: from→to ×n; …`). */
  readonly coerced?: string;
}

export interface IngestFailure {
  readonly table: string;
  readonly firstSequence: string;
  readonly error: unknown;
}

export interface IngestResult {
  readonly shardId: string;
  readonly records: number;
  /** Records already staged by an earlier delivery. */
  readonly skipped: number;
  readonly deadLetters: Readonly<Record<string, number>>;
  readonly tables: readonly TableIngest[];
  readonly failures: readonly IngestFailure[];
  /** Report this as the batch item failure (the lowest sequence number not staged), if any. */
  readonly failedSequence?: string;
  readonly oldestArrivalMs?: number;
}

/** Descriptors above this size (all files of one entry) lose their column metrics (DynamoDB's 400 KB item limit). */
const MAX_DESCRIPTOR_CHARS = 150_000;

interface AvroItem {
  readonly index: number;
  readonly decoded: DecodedAvro;
}

interface TableWork {
  readonly table: string;
  json: PendingRecord[];
  avro: AvroItem[];
  /** JSON records that field lists changed: index → the record to write. */
  readonly transformed: Map<number, string>;
}

const utf8 = new TextDecoder('utf-8');

export async function ingestBatch(deps: IngestDeps, batch: KinesisBatch): Promise<IngestResult> {
  const cfg = deps.config;
  const { shardId } = batch;
  let records = batch.records;
  const deadCounts: Record<string, number> = {};
  const dead: DeadLetterRecord[] = [];
  const failures: IngestFailure[] = [];

  const letter = (
    i: number,
    reason: DeadLetter['reason'],
    detail: string,
    table?: string,
  ): DeadLetterRecord => {
    const r = records[i]!;
    return streamDeadLetter(
      { ...r, shardId },
      {
        line: i + 1,
        reason,
        detail,
        ...(table === undefined ? {} : { table }),
        ...textOf(r.data),
      },
    );
  };
  const reject = (d: DeadLetterRecord) => {
    dead.push(d);
    deadCounts[d.reason] = (deadCounts[d.reason] ?? 0) + 1;
  };

  // Read the chain tails while the records are decoded and routed (they are needed only after).
  const tailsRead = deps.ledger.shardTails(shardId);
  tailsRead.catch(() => undefined); // awaited below; no unhandled rejection meanwhile
  const router = compileRouter(cfg.routing);
  const bySchemaName = compileSchemaNameRouter(cfg.routing);
  const consolidator = compileConsolidation(cfg.consolidate ?? []);
  const rules = hasRecordRules(cfg) ? await RecordRules.create(cfg, deps.catalog) : undefined;
  const fast =
    cfg.format === 'json' && deps.fastPath !== false && fastRouting(cfg)
      ? new FastPath(cfg, router)
      : undefined;
  const work = new Map<string, TableWork>();
  const workFor = (table: string): TableWork => {
    let w = work.get(table);
    if (!w) {
      w = { table, json: [], avro: [], transformed: new Map() };
      work.set(table, w);
    }
    return w;
  };

  // 1. Decode and route every record.
  const limits = cfg.limits;
  const readerDepth = readerDepthLimit(cfg);
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    if (r.data.length > limits.maxRecordBytes) {
      reject(
        letter(
          i,
          DeadLetterReason.GuardMaxRecordBytes,
          `guard maxRecordBytes: record is ${r.data.length} bytes, limit ${limits.maxRecordBytes}`,
        ),
      );
      continue;
    }
    if (fast) {
      const route = fast.takeBytes(r.data, 0, r.data.length, i, shardId, i + 1);
      if (route === true) continue;
      if (route !== undefined) {
        reject(letter(i, routeReason(route.reason), route.detail));
        continue;
      }
    }
    let decoded: Awaited<ReturnType<typeof decodeRecord>>;
    if (cfg.format === 'json') {
      try {
        decoded = decodeJsonRecord(r.data, { maxDepth: readerDepth });
      } catch (e) {
        // Pure code that threw: a bug, isolated to this record (a retry would fail the same way).
        reject(letter(i, DeadLetterReason.WriteFailed, `reading the record: ${errorText(e)}`));
        continue;
      }
    } else {
      try {
        decoded = await decodeRecord(r.data, {
          format: cfg.format,
          jsonFallback: cfg.jsonFallback,
          lookupSchema: (id) => registryOf(deps).getSchemaVersion(id),
          json: { maxDepth: readerDepth },
        });
      } catch (e) {
        // The registry is unreachable: stage what came before, retry from this record.
        failures.push({ table: '(schema registry)', firstSequence: r.sequenceNumber, error: e });
        records = records.slice(0, i);
        break;
      }
    }
    if (decoded.kind === 'dead-letter') {
      reject(letter(i, decoded.reason as DeadLetter['reason'], decoded.detail));
      continue;
    }
    if (decoded.kind === 'avro') {
      const route =
        cfg.routing.avroRouteBy === 'fields'
          ? router(routingView(decoded.row, cfg.routing.routingField))
          : bySchemaName(decoded.recordName);
      if (!route.ok) {
        reject(letter(i, routeReason(route.reason), route.detail));
        continue;
      }
      let avro = decoded;
      if (rules) {
        const checked = await rules.checkTyped(decoded.row, decoded.struct, route.table);
        if (!checked.ok) {
          reject(letter(i, checked.reason, checked.detail, route.table));
          continue;
        }
        avro = { ...decoded, row: checked.row, struct: checked.struct };
      }
      const beyond = beyondLimits(avro, limits);
      if (beyond) {
        reject(letter(i, beyond.reason, beyond.detail, route.table));
        continue;
      }
      workFor(route.table).avro.push({ index: i, decoded: avro });
      continue;
    }
    let obj = decoded.value as JsonObject;
    let consolidated: ReturnType<NonNullable<typeof consolidator>> | undefined;
    let route: RouteResult;
    try {
      consolidated = consolidator?.(obj);
      route =
        consolidated?.ok === true
          ? { ok: true, table: consolidated.table, rule: 'consolidated' }
          : consolidated === undefined
            ? router(obj)
            : { ok: false, reason: 'no-route', detail: consolidated.detail };
    } catch (e) {
      reject(letter(i, DeadLetterReason.WriteFailed, `routing the record: ${errorText(e)}`));
      continue;
    }
    if (consolidated && !consolidated.ok) {
      reject(letter(i, DeadLetterReason.ConsolidationFailed, consolidated.detail, consolidated.table));
      continue;
    }
    let transformed = false;
    if (consolidated) {
      obj = consolidated.value;
      transformed = true;
    }
    if (!route.ok) {
      reject(letter(i, routeReason(route.reason), route.detail));
      continue;
    }
    const w = workFor(route.table);
    if (rules) {
      const checked = await rules.check(obj, route.table);
      if (!checked.ok) {
        reject(letter(i, checked.reason, checked.detail, route.table));
        continue;
      }
      if (checked.value !== obj) transformed = true;
      obj = checked.value;
    }
    if (transformed) w.transformed.set(i, formatJsonRecord(obj));
    w.json.push({ seq: i, source: shardId, line: i + 1, raw: utf8.decode(r.data), value: obj });
  }
  for (const table of fast?.tables.keys() ?? []) workFor(table);

  // 2. Skip what earlier deliveries staged.
  const tails = await tailsRead;
  let skipped = 0;
  const isStaged = (table: string, i: number) => {
    const tail = tails.get(table);
    return tail !== undefined && compareSequence(records[i]!.sequenceNumber, tail) <= 0;
  };
  for (const w of work.values()) {
    const before = w.json.length + w.avro.length;
    const columnar = fast?.tables.get(w.table);
    const keep = <T>(list: T[], index: (t: T) => number) => list.filter((x) => !isStaged(w.table, index(x)));
    let json = keep(w.json, (p) => p.seq);
    const avro = keep(w.avro, (a) => a.index);
    if (columnar && columnar.rowCount > 0) {
      if (isStaged(w.table, columnar.seqList[0]!)) {
        // A retry: rare, so the skipped table takes the generic path.
        // All its rows count as skipped; the unstaged rest joins `json`, netted out just below.
        skipped += columnar.rowCount;
        const rest = reparse(columnar).filter((p) => !isStaged(w.table, p.seq));
        json = mergeBySeq(json, rest);
        fast?.tables.delete(w.table);
      }
    }
    skipped += before - json.length - avro.length;
    w.json = json;
    w.avro = avro;
  }
  // Dead letters first (deterministic keys: a retry overwrites), so they exist before any entry.
  await putAll(deps.deadLetters, dead);

  // 3. Stage each table and append its ledger entry.
  const results: TableIngest[] = [];
  const tables = [...work.values()].sort((a, b) => (a.table < b.table ? -1 : 1));
  const runOne = async (w: TableWork) => {
    const columnar = fast?.tables.get(w.table);
    // The table's records in this batch: where its entry starts and ends, and the oldest arrival.
    let count = 0;
    let first = Number.POSITIVE_INFINITY;
    let last = -1;
    let oldestArrival = Number.POSITIVE_INFINITY;
    const see = (i: number) => {
      count++;
      if (i < first) first = i;
      if (i > last) last = i;
      if (records[i]!.arrivalMs < oldestArrival) oldestArrival = records[i]!.arrivalMs;
    };
    for (const p of w.json) see(p.seq);
    for (const a of w.avro) see(a.index);
    for (const i of columnar?.seqList ?? []) see(i);
    if (count === 0) return;
    const staged: string[] = [];
    let entryTried = false;
    try {
      const out = await stageTable(deps, shardId, records, w, columnar, staged, letter);
      await putAll(deps.deadLetters, out.rejected);
      for (const d of out.rejected) deadCounts[d.reason] = (deadCounts[d.reason] ?? 0) + 1;
      if (out.files.length > 0) {
        entryTried = true;
        await deps.ledger.appendEntry({
          table: w.table,
          shardId,
          firstSequence: records[first]!.sequenceNumber,
          lastSequence: records[last]!.sequenceNumber,
          previousLastSequence: tails.get(w.table) ?? null,
          files: out.files,
          records: out.rows + out.pending,
          oldestArrivalMs: Math.max(0, Math.floor(oldestArrival)),
          createdAtMs: deps.clock.nowMs(),
          status: 'staged',
        });
      }
      results.push({
        table: w.table,
        records: count,
        rows: out.rows,
        pending: out.pending,
        dataFiles: out.files.filter((f) => f.kind === 'data').length,
        bytes: out.files.reduce((n, f) => n + f.bytes, 0),
        deadLetters: out.rejected.length,
        path: out.path,
        ...(out.coerced === undefined ? {} : { coerced: out.coerced }),
      });
    } catch (error) {
      // Once the entry was sent, only a conflict proves it was not written: otherwise it may name
      // these files, so they stay (the retry skips the records if the entry exists).
      if (!entryTried || isFloeError(error, ErrorKind.CommitConflict)) {
        await deleteQuietly(deps.store, staged);
      }
      deps.tables.invalidate(tableId(cfg, w.table));
      failures.push({ table: w.table, firstSequence: records[first]!.sequenceNumber, error });
    }
  };
  await forEachBounded(tables, deps.concurrency ?? 4, runOne);

  const failedSequence = failures
    .map((f) => f.firstSequence)
    .reduce<string | undefined>((a, b) => (a === undefined || compareSequence(b, a) < 0 ? b : a), undefined);
  const oldest = batch.records.reduce((m, r) => Math.min(m, r.arrivalMs), Number.POSITIVE_INFINITY);
  return {
    shardId,
    records: batch.records.length,
    skipped,
    deadLetters: deadCounts,
    tables: results.sort((a, b) => (a.table < b.table ? -1 : 1)),
    failures,
    ...(failedSequence === undefined ? {} : { failedSequence }),
    ...(Number.isFinite(oldest) ? { oldestArrivalMs: oldest } : {}),
  };
}

interface StagedTable {
  readonly files: LedgerFile[];
  readonly rejected: DeadLetterRecord[];
  readonly rows: number;
  readonly pending: number;
  readonly path: TableIngest['path'];
  readonly coerced?: string;
}

async function stageTable(
  deps: IngestDeps,
  shardId: string,
  records: readonly KinesisBatchRecord[],
  w: TableWork,
  columnar: ReturnType<FastPath['tables']['get']>,
  staged: string[],
  letter: (i: number, reason: DeadLetter['reason'], detail: string, table?: string) => DeadLetterRecord,
): Promise<StagedTable> {
  const cfg = deps.config;
  const id = tableId(cfg, w.table);
  const base = await deps.tables.get(id);
  const candidates = partitionCandidatesFor(cfg, w.table);
  const ldeps = loadDeps(deps);
  const dataFiles: DataFile[] = [];
  const specOf = new Map<DataFile, { schemaId: number; specId: number }>();
  const rejected: DeadLetterRecord[] = [];
  const pending: number[] = [];
  let rows = 0;
  let coerced: string | undefined;
  let path: TableIngest['path'] = 'none';
  const toLetter = (d: DeadLetter, index: number) => letter(index, d.reason, d.detail, w.table);
  const noteFiles = (files: DataFile[], schemaId: number, specId: number) => {
    for (const f of files) {
      dataFiles.push(f);
      specOf.set(f, { schemaId, specId });
      rows += Number(f.record_count);
    }
  };

  // JSON: the columnar fast path when the batch fits the table as it is.
  let json = w.json;
  if (columnar && columnar.rowCount > 0) {
    const fitted =
      base && json.length === 0 ? await columnarFits(deps, base, columnar, candidates, staged) : undefined;
    if (fitted) {
      noteFiles(fitted.files, fitted.schemaId, fitted.specId);
      path = 'columnar';
    } else json = mergeBySeq(json, reparse(columnar));
  }
  if (json.length > 0) {
    const hints = hintsFor(cfg, w.table);
    const inferrer = () => new StructInferrer({ hints, detectTimestamps: cfg.inference.detectTimestamps });
    const screened = await screen(
      ldeps,
      id,
      json,
      inferrer(),
      inferrer,
      { base },
      {
        coerce: typeConflictFor(cfg, w.table) === 'coerce',
        maxColumns: cfg.limits.maxColumnsPerTable,
      },
    );
    coerced = coercionSummary(screened.coerced);
    const accepted = screened.accepted;
    const fits =
      accepted.length > 0 &&
      base !== undefined &&
      evolve(base, screened.batchType, candidates, screened.fit).updates.length === 0;
    if (fits && base) {
      for (const d of screened.rejected) rejected.push(toLetter(d, d.line - 1));
      const out = await stage(ldeps, base, screened.batchType, candidates, accepted, staged, screened.fit);
      for (const d of out.rejected) rejected.push(toLetter(d, d.line - 1));
      noteFiles([...out.prepared.dataFiles], base.metadata['current-schema-id'], out.prepared.specId);
      path = 'generic';
    } else if (screened.accepted.length + screened.rejected.length > 0) {
      // The table must change for them: only what can never land is refused here; the committer
      // judges the rest together with every other pending record (see refuseAlone).
      // (Under `coerce` a value that conflicts with its column may still be converted: the
      // committer decides that too.)
      const coerce = typeConflictFor(cfg, w.table) === 'coerce';
      const alone = refuseAlone(w.table, coerce ? undefined : base, json, inferrer);
      for (const d of alone.rejected) rejected.push(toLetter(d, d.line - 1));
      if (alone.kept.length > 0) {
        pending.push(...alone.kept.map((p) => p.seq));
        path = 'pending';
      }
    }
  }

  // Avro: rows already typed by the writer schema.
  if (w.avro.length > 0) {
    const fit = base ? avroFits(base, w.avro, candidates) : undefined;
    if (base && fit) {
      for (const [i, why] of fit.conflicts)
        rejected.push(letter(i, DeadLetterReason.TypeConflict, why, w.table));
      const schema = currentSchema(base.metadata);
      const spec = defaultSpec(base.metadata);
      const out: Row[] = [];
      const written: AvroItem[] = [];
      for (const a of fit.fitting) {
        const row = projectRow(a.decoded.row, { kind: 'struct', fields: schema.fields });
        if (row instanceof ProjectFailure) {
          rejected.push(
            letter(
              a.index,
              DeadLetterReason.InvalidValue,
              `table '${w.table}': column ${row.path}: ${row.why}`,
              w.table,
            ),
          );
        } else {
          out.push(row);
          written.push(a);
        }
      }
      // The table does not change here, so rows the writer fails on are simply dead letters.
      const { dataFiles: files, failed } = await writeRows(ldeps, base.metadata, schema, spec, out, staged);
      for (const [i, why] of failed) {
        rejected.push(
          letter(written[i]!.index, DeadLetterReason.WriteFailed, `table '${w.table}': ${why}`, w.table),
        );
      }
      noteFiles(files, schema.schemaId, spec['spec-id']);
      if (path === 'none') path = 'avro';
    } else {
      pending.push(...w.avro.map((a) => a.index));
      path = 'pending';
    }
  }

  const files: LedgerFile[] = [];
  const compact = dataFiles.reduce((n, f) => n + dataFileToJson(f).length, 0) > MAX_DESCRIPTOR_CHARS;
  for (const f of dataFiles) {
    const ids = specOf.get(f)!;
    files.push({
      uri: f.file_path,
      kind: 'data',
      records: Number(f.record_count),
      bytes: Number(f.file_size_in_bytes),
      schemaId: ids.schemaId,
      specId: ids.specId,
      dataFile: dataFileToJson(compact ? withoutColumnMetrics(f) : f),
    });
  }
  if (pending.length > 0) {
    pending.sort((a, b) => a - b);
    const fragment: FragmentRecord[] = pending.map((i) => {
      const r = records[i]!;
      const value = w.transformed.get(i);
      return {
        sequenceNumber: r.sequenceNumber,
        partitionKey: r.partitionKey,
        arrivalMs: r.arrivalMs,
        data: r.data,
        ...(value === undefined ? {} : { value }),
      };
    });
    const bytes = encodeFragment({ table: w.table, shardId }, fragment);
    const firstSeq = padSequence(records[pending[0]!]!.sequenceNumber).replace(/^0+(?=\d)/, '');
    const tid = tableId(cfg, w.table);
    const uri = `${deps.stagingUri}/pending/${tid.namespace}/${tid.name}/${shardId}/${firstSeq}-${deps.ids.uuid()}.jsonl.gz`;
    await deps.store.put(uri, bytes);
    staged.push(uri);
    files.push({ uri, kind: 'pending', records: pending.length, bytes: bytes.length });
  }
  return {
    files,
    rejected,
    rows,
    pending: pending.length,
    path,
    ...(coerced === undefined ? {} : { coerced }),
  };
}

/** Writes the fast path's columns as data files when the batch needs no change to the table. */
async function columnarFits(
  deps: IngestDeps,
  base: LoadedTable,
  columnar: NonNullable<ReturnType<FastPath['tables']['get']>>,
  candidates: readonly string[],
  staged: string[],
): Promise<{ files: DataFile[]; schemaId: number; specId: number } | undefined> {
  const cfg = deps.config;
  const hints = hintsFor(cfg, base.id.name);
  const batchType = columnar.inferType(hints, cfg.inference.detectTimestamps);
  if (!batchType || batchType.fields.length === 0) return undefined;
  let ev: ReturnType<typeof evolve>;
  try {
    // A promotion the values need is an evolution: those records go pending, like the generic path's.
    ev = evolve(
      base,
      batchType,
      candidates,
      columnarFit(currentSchema(base.metadata), columnar, batchType, hints),
    );
  } catch (e) {
    if (isFloeError(e, ErrorKind.SchemaIncompatible)) return undefined;
    throw e;
  }
  if (ev.updates.length > 0 || !supportsColumnar(ev.schema)) return undefined;
  const columns = columnar.toColumnar(ev.schema);
  if (!columns) return undefined;
  const before = staged.length;
  try {
    const files = await writeColumnarFiles(
      loadDeps(deps),
      base.metadata,
      ev.schema,
      ev.spec,
      columns,
      staged,
    );
    return { files, schemaId: ev.schema.schemaId, specId: ev.spec['spec-id'] };
  } catch (e) {
    if (!(e instanceof UseGenericPath)) throw e;
    // Files stored before the encoder gave up would be orphans: the generic path writes anew.
    await deleteQuietly(deps.store, staged.splice(before));
    return undefined;
  }
}

/**
 * Whether the table takes these Avro records as they are: every writer schema version joins the
 * table without a change. Versions that cannot join at all are type conflicts (dead letters);
 * undefined when some version needs the committer (new columns, a wider type, a new spec field).
 */
function avroFits(
  base: LoadedTable,
  items: readonly AvroItem[],
  candidates: readonly string[],
): { fitting: AvroItem[]; conflicts: [number, string][] } | undefined {
  const verdict = new Map<string, string | true | false>();
  const fitting: AvroItem[] = [];
  const conflicts: [number, string][] = [];
  for (const a of items) {
    const v = a.decoded.schemaVersionId;
    let ok = verdict.get(v);
    if (ok === undefined) {
      try {
        // Writer schemas declare their types: a wider one (int → long) is an evolution.
        ok = evolve(base, a.decoded.struct, candidates, { declared: true }).updates.length === 0;
      } catch (e) {
        if (!isFloeError(e, ErrorKind.SchemaIncompatible)) throw e;
        ok = `table '${base.id.name}': schema '${a.decoded.schemaName}' version ${a.decoded.versionNumber}: ${e.message}`;
      }
      verdict.set(v, ok);
    }
    if (ok === false) return undefined;
    if (ok === true) fitting.push(a);
    else conflicts.push([a.index, ok]);
  }
  return { fitting, conflicts };
}

/** The load path's deps for the staging helpers both apps share (dead letters are handled by the caller). */
export function loadDeps(
  deps: Pick<IngestDeps, 'config' | 'catalog' | 'store' | 'clock' | 'ids' | 'maxRowsPerFile' | 'encoder'>,
): LoadDeps {
  return {
    config: deps.config,
    catalog: deps.catalog,
    store: deps.store,
    clock: deps.clock,
    ids: deps.ids,
    onDeadLetter: () => undefined,
    ...(deps.maxRowsPerFile === undefined ? {} : { maxRowsPerFile: deps.maxRowsPerFile }),
    ...(deps.encoder === undefined ? {} : { encoder: deps.encoder }),
  };
}

function registryOf(deps: { readonly registry?: SchemaRegistry }): SchemaRegistry {
  if (!deps.registry) throw new Error("stream format 'avro-gsr' needs a schema registry");
  return deps.registry;
}

/** The routing field of an Avro row as the router sees JSON (a top-level or dotted path). */
function routingView(row: Row, field: string): Record<string, unknown> {
  const path = field.split('.');
  let v: unknown = row;
  for (const p of path)
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  if (typeof v === 'bigint') v = v.toString();
  const out: Record<string, unknown> = {};
  let at = out;
  for (let i = 0; i < path.length - 1; i++) {
    const next: Record<string, unknown> = {};
    at[path[i]!] = next;
    at = next;
  }
  if (v !== undefined) at[path[path.length - 1]!] = v;
  return out;
}

/** Why an Avro record's (reshaped) writer schema is beyond the column or depth limit, if it is. */
function beyondLimits(
  d: DecodedAvro,
  limits: FloeConfig['limits'],
): { reason: DeadLetter['reason']; detail: string } | undefined {
  const shape = typeShape(d.struct);
  const schema = `schema '${d.schemaName}' version ${d.versionNumber}`;
  if (shape.columns > limits.maxColumnsPerTable) {
    return {
      reason: DeadLetterReason.GuardMaxColumns,
      detail: `guard maxColumnsPerTable: ${schema} has ${shape.columns} columns, limit ${limits.maxColumnsPerTable}`,
    };
  }
  if (shape.depth > limits.maxNestingDepth) {
    return {
      reason: DeadLetterReason.GuardMaxDepth,
      detail: `guard maxNestingDepth: ${schema} nests ${shape.depth} levels, limit ${limits.maxNestingDepth}`,
    };
  }
  return undefined;
}

/**
 * A writer schema's size for the limits: its columns (nested fields count) and its levels of
 * structs and lists, as JSON nesting counts them. Cached per schema (a few per stream).
 */
/** The record's text for its dead letter, when its bytes are text (see `recordText`). */
function textOf(data: Uint8Array): { text?: string } {
  const text = recordText(data);
  return text === undefined ? {} : { text };
}

function typeShape(t: StructType): { columns: number; depth: number } {
  let shape = typeShapes.get(t);
  if (shape === undefined) {
    shape = { columns: schemaColumnPaths({ schemaId: 0, fields: t.fields }).size, depth: nestingOfType(t) };
    typeShapes.set(t, shape);
  }
  return shape;
}
const typeShapes = new WeakMap<StructType, { columns: number; depth: number }>();

function nestingOfType(t: IcebergType): number {
  if (t.kind === 'struct') return 1 + t.fields.reduce((m, f) => Math.max(m, nestingOfType(f.type)), 0);
  if (t.kind === 'list') return 1 + nestingOfType(t.element);
  if (t.kind === 'map') return 1 + Math.max(nestingOfType(t.key), nestingOfType(t.value));
  return 0;
}

export function routeReason(reason: 'no-route' | 'illegal-name' | 'not-allowed'): DeadLetter['reason'] {
  if (reason === 'illegal-name') return DeadLetterReason.IllegalTableName;
  if (reason === 'not-allowed') return DeadLetterReason.TableNotAllowed;
  return DeadLetterReason.NoRoute;
}

async function putAll(store: DeadLetterStore, letters: readonly DeadLetterRecord[]): Promise<void> {
  for (let i = 0; i < letters.length; i += 16)
    await Promise.all(letters.slice(i, i + 16).map((d) => store.put(d)));
}

export type { Router };
export { registryOf };
