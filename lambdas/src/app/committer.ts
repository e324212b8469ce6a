/**
 * The commit app (DESIGN §1, §4, §5): per table with staged work, under the table's lease: read
 * the commit watermark, take each shard's unbroken run of ledger entries above it, create or evolve
 * the table, rewrite pending fragments with the evolved field ids, and commit one append snapshot
 * that carries the new watermark; then mark the entries committed and release the lease. Before
 * the tables, a run routes the batches the ingest deferred (route-deferred.ts), so their tables
 * are committed in the same run. A table commits to the branch the configuration names for it
 * (`branches`; main by default), with that branch's own watermark.
 *
 * Exactly once (invariant 2): every attempt, including retries after a catalog conflict, reads the
 * watermark from the metadata it commits against, so entries another committer (or an earlier
 * crashed attempt) already committed are never taken twice; the catalog's compare-and-swap is the
 * only arbiter. The lease only keeps committers from wasting work on each other.
 */

import {
  branchFor,
  declareChangeTable,
  declareTableTypes,
  type FloeConfig,
  hasRecordRules,
  inferOptionsFor,
  partitionCandidatesFor,
  tableId,
  typeConflictFor,
} from '../config.ts';
import { type CommitDeps, commitAppend, committingTo } from '../engine/append.ts';
import { forEachBounded, inGroups, settleAll } from '../engine/bounded.ts';
import { type DeadLetter, DeadLetterReason } from '../engine/dead-letters.ts';
import { isDeferralChain } from '../engine/deferred-batch.ts';
import type { UpsertCounts } from '../engine/generic-stage.ts';
import {
  coercionSummary,
  convertRecords,
  screen,
  type TableRowsWritten,
  writeTableRows,
} from '../engine/generic-stage.ts';
import type { PendingRecord } from '../engine/load-types.ts';
import { decodeFragment, type FragmentRecord } from '../engine/pending-fragment.ts';
import { RecordRules, schemaColumnPaths } from '../engine/record-rules.ts';
import { encodeRows, type ParquetEncoder } from '../engine/row-files.ts';
import type { TableCache } from '../engine/table-cache.ts';
import { codecOf, createTable, evolve, newTableFor } from '../engine/table-staging.ts';
import {
  advance,
  committedFloor,
  DEFAULT_PRUNE_IDLE_MS,
  encodeWatermark,
  encodeWithinLimit,
  loadWatermark,
  positionsOf,
  pruneSettledShards,
  readWatermark,
  WATERMARK_KEY,
  type Watermark,
  watermarkKey,
} from '../engine/watermark.ts';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import { dataFileFromJson } from '../iceberg/manifest/data-file-json.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import { applyUpdates, type TableUpdate } from '../iceberg/metadata/index.ts';
import { schemaStruct } from '../iceberg/schema.ts';
import { currentSchema, defaultSpec } from '../iceberg/table-metadata.ts';
import type { StructType } from '../iceberg/types.ts';
import type { Row } from '../iceberg/values.ts';
import type { LoadedTable } from '../ports/catalog.ts';
import type { ChangeVersions } from '../ports/change-versions.ts';
import {
  type DeadLetterRecord,
  type DeadLetterStore,
  recordText,
  streamDeadLetter,
} from '../ports/dead-letters.ts';
import { type Ledger, type LedgerEntry, unbrokenRun } from '../ports/ledger.ts';
import { acquireLease, type Lease, type Lock, releaseLease } from '../ports/lock.ts';
import { deleteQuietly } from '../ports/object-store.ts';
import type { SchemaRegistry } from '../ports/schema-registry.ts';
import { type DecodedAvro, decodeJsonRecord, decodeRecord } from '../records/decode.ts';
import { type JsonObject, parseJsonRecord } from '../records/json-line.ts';
import type { FitOptions } from '../schema/fit.ts';
import { StructInferrer } from '../schema/infer.ts';
import { ProjectFailure, projectRow } from '../schema/project.ts';
import { type SliceSet, tablesInSlices } from './commit-slices.ts';
import { type IngestDeps, loadDeps, registryOf } from './ingest.ts';
import { routeDeferred, type ShardRouting } from './route-deferred.ts';

/** Tables a run commits at once unless told otherwise. */
export const DEFAULT_RUN_CONCURRENCY = 4;
/** Pending records one commit rewrites unless told otherwise (`maxPendingRecordsPerCommit`). */
export const DEFAULT_MAX_PENDING_RECORDS = 500_000;

export interface CommitterDeps extends CommitDeps {
  readonly config: FloeConfig;
  /** The Parquet encoders (tests decorate them to inject failures; default the real ones). */
  readonly encoder?: ParquetEncoder;
  readonly ledger: Ledger;
  readonly lock: Lock;
  readonly deadLetters: DeadLetterStore;
  /** Required for `format: avro-gsr`. */
  readonly registry?: SchemaRegistry;
  /**
   * Where versioned change tables (DynamoDB change records) keep each key's newest version
   * (default: files beside the table, engine/key-versions.ts; on AWS the ledger table).
   */
  readonly changeVersions?: ChangeVersions;
  /** Who holds leases (e.g. the Lambda request id). */
  readonly owner: string;
  /** Lease per table (default 120 s); renewed before every commit attempt. */
  readonly leaseMs?: number;
  /** Ledger entries read per shard per commit (default 1000). */
  readonly maxEntriesPerShard?: number;
  /**
   * Pending records rewritten per commit (default 500,000), shared among the shards: a backlog of
   * evolution (e.g. after a committer outage) is committed over several runs instead of exhausting
   * the committer's memory. Ingest data files cost no memory and are not counted.
   */
  readonly maxPendingRecordsPerCommit?: number;
  readonly maxRowsPerFile?: number;
  /** Catalog commit attempts per table (default 8). */
  readonly maxAttempts?: number;
  /**
   * A shard no commit moved for this long (default 8 days) leaves the watermark once its ledger
   * chain is settled (watermark.ts `pruneSettledShards`); `Infinity` keeps every shard.
   */
  readonly pruneIdleShardsAfterMs?: number;
  /**
   * What routing deferred batches needs beyond these deps (app/route-deferred.ts): the run routes
   * them through the ingest before it commits. Without it they wait for a committer that has it.
   */
  readonly route?: RouteSettings;
}

export interface RouteSettings {
  readonly tables: TableCache;
  /** Where pending fragments of tables first seen go (the ingest's `stagingUri`). */
  readonly stagingUri: string;
}

/** The ingest deps routing runs on: the committer's own ports, with `route`'s settings. */
function routingIngest(deps: CommitterDeps, route: RouteSettings): IngestDeps {
  return {
    config: deps.config,
    catalog: deps.catalog,
    store: deps.store,
    ledger: deps.ledger,
    deadLetters: deps.deadLetters,
    clock: deps.clock,
    ids: deps.ids,
    tables: route.tables,
    stagingUri: route.stagingUri,
    ...(deps.registry === undefined ? {} : { registry: deps.registry }),
    ...(deps.maxRowsPerFile === undefined ? {} : { maxRowsPerFile: deps.maxRowsPerFile }),
    ...(deps.encoder === undefined ? {} : { encoder: deps.encoder }),
  };
}

export interface TableCommitResult {
  readonly table: string;
  readonly status: 'committed' | 'nothing-to-commit' | 'locked' | 'failed';
  readonly created: boolean;
  readonly entries: number;
  /** Rows added by the snapshot (data files from the ingest plus rewritten pending records). */
  readonly rows: number;
  readonly dataFiles: number;
  /** Pending records rewritten with the evolved field ids. */
  readonly rewritten: number;
  /** Upsert tables: keys whose last change in this commit upserted a row / deleted it. */
  readonly upserts?: UpsertCounts;
  readonly deadLetters: Readonly<Record<string, number>>;
  readonly schemaChanges: readonly string[];
  readonly snapshotId?: bigint;
  /** After the commit (its snapshot summary's totals): data files and their bytes. */
  readonly totalDataFiles?: number;
  readonly totalFilesBytes?: number;
  readonly attempts: number;
  /** Earliest arrival time of the committed records (freshness = commit time − this). */
  readonly oldestArrivalMs?: number;
  readonly durationMs: number;
  readonly error?: unknown;
}

interface Prepared {
  readonly key: string;
  readonly entries: number;
  readonly positions: Map<string, string>;
  readonly watermark: Map<string, string>;
  readonly rows: number;
  readonly files: number;
  readonly rewritten: number;
  readonly deadLetters: Record<string, number>;
  readonly changes: string[];
  readonly upserts?: UpsertCounts;
  readonly oldestArrivalMs?: number;
  readonly pendingFiles: string[];
  /** Files this attempt wrote (rewritten data): orphans if the attempt loses. */
  readonly written: string[];
}

export function lockName(cfg: FloeConfig, table: string): string {
  const id = tableId(cfg, table);
  return `commit/${id.namespace}.${id.name}`;
}

/** Commits one table's staged work. Never throws for the table's own failures: see `status`. */
export async function commitTable(all: CommitterDeps, table: string): Promise<TableCommitResult> {
  const started = all.clock.nowMs();
  const cfg = all.config;
  // The branch this table commits to (config `branches`); its own watermark says what it holds.
  const branch = all.branch ?? branchFor(cfg, table);
  const deps = committingTo(all, branch);
  const id = tableId(cfg, table);
  const empty = {
    table,
    created: false,
    entries: 0,
    rows: 0,
    dataFiles: 0,
    rewritten: 0,
    deadLetters: {},
    schemaChanges: [],
    attempts: 0,
  };
  const lock = lockName(cfg, table);
  let lease0: Lease | undefined;
  try {
    lease0 = await acquireLease(deps.lock, lock, deps.owner, deps.leaseMs ?? 120_000);
  } catch (error) {
    // This table's failure, not the run's: the other tables' commits go on, the next run retries.
    return { ...empty, status: 'failed', error, durationMs: deps.clock.nowMs() - started };
  }
  if (!lease0) return { ...empty, status: 'locked', durationMs: deps.clock.nowMs() - started };
  let lease: Lease = lease0;
  let created = false;
  let last: (Prepared & { prepared: Awaited<ReturnType<typeof build>>['prepared'] }) | undefined;
  try {
    const pending: PendingSource = {
      fragments: new Map(),
      rules: hasRecordRules(cfg) ? await RecordRules.create(cfg, deps.catalog) : undefined,
    };
    const shards = await deps.ledger.shardsWithStagedWork(table);
    if (shards.length === 0)
      return { ...empty, status: 'nothing-to-commit', durationMs: deps.clock.nowMs() - started };
    if (!(await deps.catalog.tableExists(id))) {
      const runs = await readRuns(deps, table, shards, new Map());
      const decoded = await decodePending(deps, table, runs, pending);
      const refused = new Map<Decoded, { reason: DeadLetter['reason']; detail: string }>();
      const type = await creationType(deps, table, decoded, refused);
      if (type) created = await createTable(loadDeps(deps), id, type, partitionCandidatesFor(cfg, table));
      else {
        const settled = await settleWithoutTable(deps, table, runs, decoded, refused);
        if (settled) return { ...empty, ...settled, durationMs: deps.clock.nowMs() - started };
      }
    }
    const result = await commitAppend(deps, {
      table: id,
      ...(deps.maxAttempts === undefined ? {} : { maxAttempts: deps.maxAttempts }),
      prepare: async (base) => {
        lease = await deps.lock.renew(lease);
        const watermark = await loadWatermark(deps.store, base.metadata, branch);
        const runs = await readRuns(deps, table, shards, positionsOf(watermark));
        const key = `${runsKey(runs)}|${base.metadata['current-schema-id']}/${base.metadata['last-column-id']}/${base.metadata['default-spec-id']}|${encodeWatermark(watermark)}`;
        if (last?.key === key) return last.prepared;
        if (last) await deleteQuietly(deps.store, last.written);
        const built = await build(deps, base, runs, watermark, pending);
        last = { ...built.info, key, prepared: built.prepared };
        return built.prepared;
      },
    });
    // What the table now holds (an attempt with entries always commits: it moves the watermark).
    const committedWm = last?.watermark ?? (await readWatermark(deps.store, result.table.metadata, branch));
    await markDone(deps, table, shards, committedWm);
    if (last && (result.snapshot || last.entries > 0)) await deleteQuietly(deps.store, last.pendingFiles);
    const status = last && last.entries > 0 ? 'committed' : 'nothing-to-commit';
    return {
      table,
      status,
      created,
      entries: last?.entries ?? 0,
      rows: last?.rows ?? 0,
      dataFiles: last?.files ?? 0,
      rewritten: last?.rewritten ?? 0,
      ...(last?.upserts ? { upserts: last.upserts } : {}),
      deadLetters: last?.deadLetters ?? {},
      schemaChanges: last?.changes ?? [],
      ...(result.snapshot ? { snapshotId: result.snapshot['snapshot-id'] } : {}),
      ...(result.snapshot ? tableTotals(result.snapshot.summary) : {}),
      attempts: result.attempts,
      ...(last?.oldestArrivalMs === undefined ? {} : { oldestArrivalMs: last.oldestArrivalMs }),
      durationMs: deps.clock.nowMs() - started,
    };
  } catch (error) {
    // A conflict budget spent or a lost lease: whatever this run wrote is referenced by no commit.
    if (last && !isUncertain(error)) await deleteQuietly(deps.store, last.written);
    return { ...empty, created, status: 'failed', error, durationMs: deps.clock.nowMs() - started };
  } finally {
    await releaseLease(deps.lock, lease);
  }
}

/** The data files a snapshot's summary counts in the table, when it says. */
function tableTotals(summary: Readonly<Record<string, string>> | undefined): {
  totalDataFiles?: number;
  totalFilesBytes?: number;
} {
  const n = (k: string) => {
    const v = Number(summary?.[k]);
    return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  };
  const files = n('total-data-files');
  const bytes = n('total-files-size');
  return {
    ...(files === undefined ? {} : { totalDataFiles: files }),
    ...(bytes === undefined ? {} : { totalFilesBytes: bytes }),
  };
}

/** Whether a failed commit may nevertheless have been applied (then its files must stay). */
function isUncertain(e: unknown): boolean {
  return !(
    isFloeError(e, ErrorKind.CommitConflict) ||
    isFloeError(e, ErrorKind.LockHeld) ||
    isFloeError(e, ErrorKind.DataInvalid)
  );
}

export interface CommitterRun {
  /** The shards whose deferred batches this run routed (or tried to), before committing. */
  readonly routed?: readonly ShardRouting[];
  readonly tables: readonly TableCommitResult[];
  /** Tables not started because the time budget ran out (the next run takes them). */
  readonly deferred: readonly string[];
}

export interface RunOptions {
  /** Tables committed at once (default 4). */
  readonly concurrency?: number;
  /** Epoch ms (on `deps.clock`) after which no further table is started (e.g. Lambda deadline − margin). */
  readonly startDeadlineMs?: number;
  /** Only the tables of these slices (commit-slices.ts); default every table. */
  readonly slices?: SliceSet;
  /** The tables with staged work, when the caller has just listed them (default: listed here). */
  readonly tablesWithStagedWork?: readonly string[];
  readonly onTable?: (r: TableCommitResult) => void;
}

/**
 * One committer run: every table with staged work (of `slices`, when given), in parallel up to
 * `concurrency`.
 */
export async function runCommitter(deps: CommitterDeps, opts: RunOptions = {}): Promise<CommitterRun> {
  // Deferred batches first (by the run that has the first slice), so their tables commit now.
  const routes = deps.route !== undefined && (opts.slices?.indexes.includes(0) ?? true);
  const routed = routes
    ? await routeDeferred({
        route: routingIngest(deps, deps.route!),
        lock: deps.lock,
        owner: deps.owner,
        ...(deps.leaseMs === undefined ? {} : { leaseMs: deps.leaseMs }),
      })
    : undefined;
  const listed = opts.tablesWithStagedWork ?? (await deps.ledger.tablesWithStagedWork());
  const all = [...new Set([...listed, ...(routed ?? []).flatMap((r) => r.tables)])]
    .filter((t) => !isDeferralChain(t))
    .sort();
  const tables = opts.slices === undefined ? all : tablesInSlices(all, opts.slices);
  const results: TableCommitResult[] = [];
  const deferred: string[] = [];
  await forEachBounded(tables, opts.concurrency ?? DEFAULT_RUN_CONCURRENCY, async (t) => {
    if (opts.startDeadlineMs !== undefined && deps.clock.nowMs() >= opts.startDeadlineMs) {
      deferred.push(t);
      return;
    }
    const r = await commitTable(deps, t);
    results.push(r);
    opts.onTable?.(r);
  });
  return {
    ...(routed === undefined ? {} : { routed }),
    tables: results.sort((a, b) => (a.table < b.table ? -1 : 1)),
    deferred: deferred.sort(),
  };
}

// ---------------------------------------------------------------------------------------------

/** Per shard, the unbroken run of entries above the watermark (shards with nothing are absent). */
async function readRuns(
  deps: CommitterDeps,
  table: string,
  shards: readonly string[],
  watermark: ReadonlyMap<string, string>,
): Promise<Map<string, LedgerEntry[]>> {
  const limit = deps.maxEntriesPerShard ?? 1000;
  const pendingCap = Math.max(
    1,
    Math.floor((deps.maxPendingRecordsPerCommit ?? DEFAULT_MAX_PENDING_RECORDS) / Math.max(1, shards.length)),
  );
  const out = new Map<string, LedgerEntry[]>();
  await settleAll(
    shards.map(async (shard) => {
      const from = watermark.get(shard) ?? null;
      const entries = await deps.ledger.entriesAfter(table, shard, from, limit);
      // Entries marked committed were in a commit: a floor for a shard the watermark lacks (pruned
      // once settled, or a table dropped and re-created outside Floe).
      const run = capPending(unbrokenRun(entries, committedFloor(entries, from)), pendingCap);
      if (run.length > 0) out.set(shard, run);
    }),
  );
  return out;
}

/** The longest prefix of `run` whose pending records stay within `cap` (at least one entry). */
function capPending(run: LedgerEntry[], cap: number): LedgerEntry[] {
  let pending = 0;
  for (let i = 0; i < run.length; i++) {
    pending += run[i]!.files.reduce((n, f) => n + (f.kind === 'pending' ? f.records : 0), 0);
    if (pending > cap && i > 0) return run.slice(0, i);
  }
  return run;
}

function runsKey(runs: ReadonlyMap<string, LedgerEntry[]>): string {
  return [...runs.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([shard, run]) => `${shard}:${run[0]!.firstSequence}-${run[run.length - 1]!.lastSequence}`)
    .join(',');
}

interface PendingItem {
  readonly shardId: string;
  readonly record: FragmentRecord;
}

type Decoded =
  | { readonly kind: 'json'; readonly item: PendingItem; readonly value: JsonObject }
  | { readonly kind: 'avro'; readonly item: PendingItem; readonly decoded: DecodedAvro }
  | {
      readonly kind: 'bad';
      readonly item: PendingItem;
      readonly reason: DeadLetter['reason'];
      readonly detail: string;
    };

/** What one table's commit reads pending records with, kept across its attempts. */
interface PendingSource {
  /** Fragments by location (immutable: read once). */
  readonly fragments: Map<string, Promise<FragmentRecord[]>>;
  /** Field lists, to reshape Avro rows as the ingest did (undefined: none configured). */
  readonly rules: RecordRules | undefined;
}

async function decodePending(
  deps: CommitterDeps,
  table: string,
  runs: ReadonlyMap<string, LedgerEntry[]>,
  source: PendingSource,
): Promise<Decoded[]> {
  const cache = source.fragments;
  const rules = source.rules;
  const items: PendingItem[] = [];
  for (const [shardId, run] of runs) {
    for (const e of run) {
      for (const f of e.files) {
        if (f.kind !== 'pending') continue;
        let p = cache.get(f.uri);
        if (!p) {
          p = deps.store.get(f.uri).then((b) => {
            const { header, records } = decodeFragment(b, f.uri);
            // A table its data declared an upsert table (DynamoDB changes): its key, from the ingest.
            if (header.upsert) declareChangeTable(deps.config, table, header.upsert);
            // Column types the records' own schemas declared (Debezium with schemas).
            if (header.types) declareTableTypes(deps.config, table, header.types);
            return records;
          });
          cache.set(f.uri, p);
        }
        for (const record of await p) items.push({ shardId, record });
      }
    }
  }
  const out: Decoded[] = [];
  for (const item of items) {
    const r = item.record;
    if (r.value !== undefined) {
      out.push({ kind: 'json', item, value: parseJsonRecord(r.value) as JsonObject });
      continue;
    }
    const d =
      deps.config.format === 'json'
        ? decodeJsonRecord(r.data)
        : await decodeRecord(r.data, {
            format: deps.config.format,
            jsonFallback: deps.config.jsonFallback,
            lookupSchema: (id) => registryOf(deps).getSchemaVersion(id),
          });
    if (d.kind === 'json') out.push({ kind: 'json', item, value: d.value });
    else if (d.kind === 'avro') {
      // Field lists reshape Avro rows as the ingest did when it admitted them.
      const shaped = rules?.shapeTyped(d.row, d.struct, table);
      out.push({ kind: 'avro', item, decoded: shaped ? { ...d, ...shaped } : d });
    } else
      out.push({
        kind: 'bad',
        item,
        reason: d.reason as DeadLetter['reason'],
        detail: `table '${table}': ${d.detail}`,
      });
  }
  return out;
}

/** The type a new table is created with: the pending records' (JSON inferred, Avro writer schemas). */
async function creationType(
  deps: CommitterDeps,
  table: string,
  decoded: readonly Decoded[],
  /** Filled with why screening refused records (for their dead letters if nothing can be created). */
  refused: Map<Decoded, { reason: DeadLetter['reason']; detail: string }>,
): Promise<StructType | undefined> {
  const cfg = deps.config;
  const options = inferOptionsFor(cfg, table);
  const inferrer = () => new StructInferrer(options);
  const jsonDecoded = decoded.filter((d) => d.kind === 'json');
  const json = jsonDecoded.map((d, i) => pendingRecord(d as Extract<Decoded, { kind: 'json' }>, i));
  let type: StructType | undefined;
  let records = json;
  while (records.length > 0) {
    const s = await screen(
      loadDeps(deps),
      tableId(cfg, table),
      records,
      inferrer(),
      inferrer,
      { base: undefined },
      { maxColumns: cfg.limits.maxColumnsPerTable },
    );
    for (const d of s.rejected) refused.set(jsonDecoded[d.line - 1]!, { reason: d.reason, detail: d.detail });
    if (s.accepted.length === 0 || s.batchType.fields.length === 0) break;
    // Encode once for the table this would create (nothing is stored): records the writer fails
    // on (row-files.ts) are dead-lettered by the build, so they must not shape the table either.
    const failed = unwritable(deps, table, s.batchType, s.accepted);
    if (failed.length === 0) {
      type = s.batchType;
      break;
    }
    records = s.accepted.filter((r) => !failed.includes(r));
  }
  if (!type) {
    const avro = decoded.find((d) => d.kind === 'avro') as Extract<Decoded, { kind: 'avro' }> | undefined;
    type = avro?.decoded.struct;
  }
  return type && type.fields.length > 0 ? type : undefined;
}

/** The records the Parquet writer fails on in a new table of `type` (a dry run: nothing stored). */
function unwritable(
  deps: CommitterDeps,
  table: string,
  type: StructType,
  records: readonly PendingRecord[],
): PendingRecord[] {
  const cfg = deps.config;
  const fresh = newTableFor(
    loadDeps(deps),
    tableId(cfg, table),
    type,
    partitionCandidatesFor(cfg, table),
    'dry-run',
  );
  const schema = currentSchema(fresh.metadata);
  const { rows, kept } = convertRecords(table, schema, records);
  const { failed } = encodeRows(schema, defaultSpec(fresh.metadata), rows, {
    compression: codecOf(fresh.metadata),
    maxRows: deps.maxRowsPerFile ?? 1_000_000,
    ...(deps.encoder ? { encoder: deps.encoder } : {}),
  });
  return [...failed.keys()].map((i) => kept[i]!);
}

function pendingRecord(d: Extract<Decoded, { kind: 'json' }>, ordinal: number): PendingRecord {
  return {
    seq: ordinal,
    source: d.item.shardId,
    line: ordinal + 1,
    raw: d.item.record.value ?? new TextDecoder().decode(d.item.record.data),
    value: d.value,
    ...(d.item.record.op === undefined ? {} : { op: d.item.record.op }),
    ...(d.item.record.version === undefined ? {} : { version: d.item.record.version }),
  };
}

async function build(
  deps: CommitterDeps,
  base: LoadedTable,
  runs: ReadonlyMap<string, LedgerEntry[]>,
  watermark: Watermark,
  pending: PendingSource,
) {
  const cfg = deps.config;
  const table = base.id.name;
  const candidates = partitionCandidatesFor(cfg, table);
  const nowMs = deps.clock.nowMs();
  const written: string[] = [];
  const entries = [...runs.values()].flat();
  const positions = new Map([...runs].map(([shard, run]) => [shard, run[run.length - 1]!.lastSequence]));
  const oldest = entries.reduce<number | undefined>(
    (m, e) =>
      e.oldestArrivalMs === undefined
        ? m
        : m === undefined
          ? e.oldestArrivalMs
          : Math.min(m, e.oldestArrivalMs),
    undefined,
  );
  const dead: DeadLetterRecord[] = [];
  const letter = (item: PendingItem, reason: DeadLetter['reason'], detail: string) => {
    dead.push(pendingDeadLetter(table, item, reason, detail));
  };

  // Pending records: decode, screen, evolve the table for them.
  const decoded = await decodePending(deps, table, runs, pending);
  const jsonItems = decoded.filter((d): d is Extract<Decoded, { kind: 'json' }> => d.kind === 'json');
  const avroItems = decoded.filter((d): d is Extract<Decoded, { kind: 'avro' }> => d.kind === 'avro');
  for (const d of decoded) if (d.kind === 'bad') letter(d.item, d.reason, d.detail);
  const updates: TableUpdate[] = [];
  const changes: string[] = [];
  let meta = base.metadata;
  const evolveFor = (type: StructType, fit: FitOptions, maxColumns?: number) => {
    const ev = evolve({ ...base, metadata: meta }, type, candidates, fit);
    if (maxColumns !== undefined && ev.updates.length > 0) {
      const columns = schemaColumnPaths(ev.schema).size;
      if (columns > maxColumns) throw new ColumnLimit(columns, maxColumns);
    }
    if (ev.updates.length > 0) {
      updates.push(...ev.updates);
      changes.push(...ev.changes);
      meta = applyUpdates(meta, ev.updates, { nowMs });
    }
  };
  let coercion: string | undefined;
  /** Screens JSON records (conflicts and values that do not convert become dead letters). */
  const screenJson = async (records: readonly PendingRecord[]) => {
    const options = inferOptionsFor(cfg, table);
    const inferrer = () => new StructInferrer(options);
    const s = await screen(
      loadDeps(deps),
      base.id,
      records,
      inferrer(),
      inferrer,
      { base },
      {
        coerce: typeConflictFor(cfg, table) === 'coerce',
        maxColumns: cfg.limits.maxColumnsPerTable,
      },
    );
    coercion ??= coercionSummary(s.coerced);
    for (const d of s.rejected) letter(jsonItems[d.line - 1]!.item, d.reason, d.detail);
    return s;
  };
  let json =
    jsonItems.length > 0 ? await screenJson(jsonItems.map((d, i) => pendingRecord(d, i))) : undefined;
  let avro = avroItems;

  // Evolve for the accepted records, then convert them into the evolved schema. A record that
  // still fails is a dead letter and the evolution is redone without it: dead letters never
  // shape the table. (Screening converts against the table already, so this rarely repeats.)
  // A record the writer then fails on (row-files.ts: nobody foresaw it) is a dead letter too,
  // and the round is redone without it, its files deleted.
  let schema = currentSchema(meta);
  let spec = defaultSpec(meta);
  let rewritten: DataFile[] = [];
  let changed: Pick<TableRowsWritten, 'updates' | 'deleteFiles' | 'changes'> | undefined;
  for (;;) {
    meta = base.metadata;
    updates.length = 0;
    changes.length = 0;
    if (json && json.accepted.length > 0) evolveFor(json.batchType, json.fit);
    avro = evolveForAvro(
      table,
      avro,
      (struct) => evolveFor(struct, { declared: true }, cfg.limits.maxColumnsPerTable),
      letter,
    );
    schema = currentSchema(meta);
    spec = defaultSpec(meta);
    const converted = json ? convertRecords(table, schema, json.accepted) : undefined;
    const struct = schemaStruct(schema);
    const rows: Row[] = [...(converted?.rows ?? [])];
    const projected: AvroDecoded[] = [];
    for (const d of avro) {
      const row = projectRow(d.decoded.row, struct);
      if (row instanceof ProjectFailure)
        letter(d.item, DeadLetterReason.InvalidValue, `table '${table}': column ${row.path}: ${row.why}`);
      else {
        rows.push(row);
        projected.push(d);
      }
    }
    const failedJson = converted?.rejected ?? [];
    for (const d of failedJson) letter(jsonItems[d.line - 1]!.item, d.reason, d.detail);
    const avroFailed = projected.length !== avro.length;
    avro = projected;
    if (converted && failedJson.length > 0) {
      json = await screenJson(converted.kept);
      continue;
    }
    if (avroFailed) continue;
    const before = written.length;
    const ops = [...(converted?.kept ?? []), ...projected.map(() => ({}))];
    const out = await writeTableRows(deps, { ...base, metadata: meta }, [], schema, spec, rows, ops, written);
    if (out.failed.size === 0) {
      rewritten = out.dataFiles;
      changed = out;
      break;
    }
    await deleteQuietly(deps.store, written.splice(before));
    const jsonRows = converted?.kept ?? [];
    const keepJson: PendingRecord[] = [];
    jsonRows.forEach((r, i) => {
      const why = out.failed.get(i);
      if (why === undefined) keepJson.push(r);
      else letter(jsonItems[r.line - 1]!.item, DeadLetterReason.WriteFailed, `table '${table}': ${why}`);
    });
    avro = avro.filter((d, i) => {
      const why = out.failed.get(jsonRows.length + i);
      if (why !== undefined) letter(d.item, DeadLetterReason.WriteFailed, `table '${table}': ${why}`);
      return why === undefined;
    });
    if (json) json = await screenJson(keepJson);
  }

  // Data files the ingest wrote, under whatever spec was current then.
  const otherSpecFiles = new Map<number, DataFile[]>();
  const sameSpec: DataFile[] = [];
  for (const e of entries) {
    for (const f of e.files) {
      if (f.kind !== 'data') continue;
      if (f.dataFile === undefined) {
        throw new FloeError(
          ErrorKind.DataInvalid,
          `ledger entry ${table}/${e.shardId}@${e.firstSequence}: data file ${f.uri} has no descriptor`,
        );
      }
      const df = dataFileFromJson(f.dataFile);
      const specId = f.specId ?? spec['spec-id'];
      if (!meta['partition-specs'].some((s) => s['spec-id'] === specId)) {
        // The ingest saw a newer table than this attempt's base: reload and try again.
        throw new FloeError(
          ErrorKind.CommitConflict,
          `table '${table}': staged file ${f.uri} names partition spec ${specId}, which the loaded table does not have yet`,
        );
      }
      if (specId === spec['spec-id']) sameSpec.push(df);
      else otherSpecFiles.set(specId, [...(otherSpecFiles.get(specId) ?? []), df]);
    }
  }

  // Dead letters before the commit (deterministic keys: a retry overwrites them).
  await inGroups(dead, 16, (d) => deps.deadLetters.put(d));
  const deadLetters: Record<string, number> = {};
  for (const d of dead) deadLetters[d.reason] = (deadLetters[d.reason] ?? 0) + 1;

  // The watermark goes inline into the table property (and the summary), in the same commit.
  const next = entries.length > 0 ? await nextWatermark(deps, table, watermark, positions, nowMs) : watermark;
  const files = [...rewritten, ...sameSpec, ...[...otherSpecFiles.values()].flat()];
  let wmText: string | undefined;
  if (entries.length > 0) {
    wmText = encodeWithinLimit(next, table);
    updates.push({ action: 'set-properties', updates: { [watermarkKey(deps.branch)]: wmText } });
  }
  updates.push(...(changed?.updates ?? []));
  return {
    prepared: {
      updates,
      dataFiles: [...rewritten, ...sameSpec],
      specId: spec['spec-id'],
      otherSpecFiles,
      ...(changed?.deleteFiles ? { deleteFiles: changed.deleteFiles } : {}),
      ...(wmText === undefined
        ? {}
        : {
            summary: {
              [WATERMARK_KEY]: wmText,
              'floe.ledger-entries': String(entries.length),
              ...(coercion === undefined ? {} : { 'floe.coerced': coercion }),
            },
          }),
    },
    info: {
      entries: entries.length,
      positions,
      watermark: positionsOf(next),
      rows: files.reduce((n, f) => n + Number(f.record_count), 0),
      files: files.length,
      rewritten: rewritten.reduce((n, f) => n + Number(f.record_count), 0),
      deadLetters,
      changes,
      ...(changed?.changes ? { upserts: changed.changes } : {}),
      ...(oldest === undefined ? {} : { oldestArrivalMs: oldest }),
      pendingFiles: entries.flatMap((e) => e.files.filter((f) => f.kind === 'pending').map((f) => f.uri)),
      written,
    },
  };
}

/** `watermark` moved to this commit's positions, without the idle shards the ledger shows settled. */
async function nextWatermark(
  deps: CommitterDeps,
  table: string,
  watermark: Watermark,
  positions: ReadonlyMap<string, string>,
  nowMs: number,
): Promise<Watermark> {
  return pruneSettledShards(advance(watermark, positions, nowMs), {
    ledger: deps.ledger,
    table,
    nowMs,
    idleMs: deps.pruneIdleShardsAfterMs ?? DEFAULT_PRUNE_IDLE_MS,
    maxEntries: deps.maxEntriesPerShard ?? 1000,
  });
}

type AvroDecoded = Extract<Decoded, { kind: 'avro' }>;

/**
 * Evolves the table for each writer schema version of `items` (once per version; its types are
 * declared, so a wider one promotes the column) and returns the items whose version joined; the
 * records of a version that cannot join are type conflicts.
 */
/** A writer schema that would take the table past `guards.maxColumnsPerTable`. */
class ColumnLimit extends Error {
  constructor(columns: number, limit: number) {
    super(`the table would have ${columns} columns, limit ${limit}`);
  }
}

function evolveForAvro(
  table: string,
  items: readonly AvroDecoded[],
  evolveFor: (struct: StructType) => void,
  letter: (item: PendingItem, reason: DeadLetter['reason'], detail: string) => void,
): AvroDecoded[] {
  const joined: AvroDecoded[] = [];
  const verdict = new Map<string, string | undefined>();
  for (const d of items) {
    const v = d.decoded.schemaVersionId;
    if (!verdict.has(v)) {
      try {
        evolveFor(d.decoded.struct);
        verdict.set(v, undefined);
      } catch (e) {
        if (!(e instanceof ColumnLimit) && !isFloeError(e, ErrorKind.SchemaIncompatible)) throw e;
        verdict.set(
          v,
          `${e instanceof ColumnLimit ? 'guard maxColumnsPerTable: ' : ''}table '${table}': schema '${d.decoded.schemaName}' version ${d.decoded.versionNumber}: ${e.message}`,
        );
      }
    }
    const why = verdict.get(v);
    if (why === undefined) joined.push(d);
    else
      letter(
        d.item,
        why.startsWith('guard ') ? DeadLetterReason.GuardMaxColumns : DeadLetterReason.TypeConflict,
        why,
      );
  }
  return joined;
}

/**
 * A table that does not exist and whose staged records cannot create it (none has a typed value,
 * e.g. every field dropped by field lists): every record is dead-lettered and the entries are
 * marked committed, as no commit could ever hold them. Only when the runs name no data file.
 */
async function settleWithoutTable(
  deps: CommitterDeps,
  table: string,
  runs: ReadonlyMap<string, LedgerEntry[]>,
  decoded: readonly Decoded[],
  refused: ReadonlyMap<Decoded, { reason: DeadLetter['reason']; detail: string }>,
): Promise<Pick<TableCommitResult, 'status' | 'entries' | 'deadLetters'> | undefined> {
  const entries = [...runs.values()].flat();
  if (entries.length === 0 || entries.some((e) => e.files.some((f) => f.kind !== 'pending')))
    return undefined;
  const counts: Record<string, number> = {};
  const letters = decoded.map((d) => {
    // A record screening refused keeps its own reason; the rest had nothing to create a table from.
    const why = d.kind === 'bad' ? { reason: d.reason, detail: d.detail } : refused.get(d);
    const reason = why?.reason ?? DeadLetterReason.NoTypedValues;
    const detail = why?.detail ?? `table '${table}': no record has a typed value to create the table from`;
    counts[reason] = (counts[reason] ?? 0) + 1;
    return pendingDeadLetter(table, d.item, reason, detail);
  });
  await inGroups(letters, 16, (d) => deps.deadLetters.put(d));
  await settleAll(
    [...runs].map(([shard, run]) =>
      deps.ledger.markCommitted(table, shard, run[run.length - 1]!.lastSequence),
    ),
  );
  await deleteQuietly(
    deps.store,
    entries.flatMap((e) => e.files.map((f) => f.uri)),
  );
  return { status: 'nothing-to-commit', entries: entries.length, deadLetters: counts };
}

async function markDone(
  deps: CommitterDeps,
  table: string,
  shards: readonly string[],
  watermark: ReadonlyMap<string, string>,
): Promise<void> {
  await settleAll(
    shards.map(async (shard) => {
      const upTo = watermark.get(shard);
      if (upTo !== undefined) await deps.ledger.markCommitted(table, shard, upTo);
    }),
  );
}

/** A pending record's dead letter: its original bytes (text, or base64) and stream position. */
function pendingDeadLetter(
  table: string,
  item: PendingItem,
  reason: DeadLetter['reason'],
  detail: string,
): DeadLetterRecord {
  const r = item.record;
  // The original bytes, not `r.value` (the record as field lists reshaped it): a replay must
  // put back what was sent.
  const text = recordText(r.data);
  return streamDeadLetter(
    { ...r, shardId: item.shardId },
    { line: 0, reason, detail, table, ...(text === undefined ? {} : { text }) },
  );
}
