/**
 * The generic (record by record) path of a load: the reference for every rule. Conflicting
 * batches are screened against the table, values converted per record, bad records dead-lettered.
 */

import { inferOptionsFor, partitionCandidatesFor, typeConflictFor, upsertFor } from '../config.ts';
import { ErrorKind, isFloeError } from '../errors.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import { applyUpdates, type TableUpdate } from '../iceberg/metadata/index.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { partitionKey, partitionTuple } from '../iceberg/partitioning.ts';
import type { Schema } from '../iceberg/schema.ts';
import { schemaStruct } from '../iceberg/schema.ts';
import { optionalTree, partitionSourceTransforms, unionByName } from '../iceberg/schema-evolution.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { currentSchema, defaultSpec } from '../iceberg/table-metadata.ts';
import type { StructType } from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import type { LoadedTable, TableIdentifier } from '../ports/catalog.ts';
import { deleteQuietly } from '../ports/object-store.ts';
import type { JsonValue } from '../records/json-line.ts';
import { coerceToSchema } from '../schema/coerce.ts';
import { compileRowConverter, describeConvertFailure } from '../schema/convert.ts';
import { type FitOptions, fitToExisting } from '../schema/fit.ts';
import { StructInferrer, type TypeConflict } from '../schema/infer.ts';
import { declaredNullability } from '../schema/nullability.ts';
import { columnNeeds, measureRecords } from '../schema/promote.ts';
import { settleAll } from './bounded.ts';
import { type DeadLetter, DeadLetterReason } from './dead-letters.ts';

import type { LoadDeps, PendingRecord, TableLoadResult } from './load-types.ts';
import { columnPathsOf, schemaColumnPaths } from './record-rules.ts';
import { encodeRows, errorText } from './row-files.ts';
import {
  type Committed,
  codecOf,
  commitStaged,
  createAndCommit,
  type Evolved,
  evolve,
  newTableFor,
  putDataFile,
  type Staged,
  tableResult,
} from './table-staging.ts';
import { writeChanges } from './upsert-write.ts';

export async function loadTable(
  deps: LoadDeps,
  id: TableIdentifier,
  records: PendingRecord[],
  reject: (d: DeadLetter) => Promise<void>,
): Promise<TableLoadResult> {
  const cfg = deps.config;
  const name = id.name;
  const options = inferOptionsFor(cfg, name);
  const candidates = partitionCandidatesFor(cfg, name);
  const screened = await screen(
    deps,
    id,
    records,
    new StructInferrer(options),
    () => new StructInferrer(options),
    undefined,
    { coerce: typeConflictFor(cfg, name) === 'coerce', maxColumns: cfg.limits.maxColumnsPerTable },
  );
  const coercion = coercionSummary(screened.coerced);
  let deadLetters = screened.rejected.length;
  for (const d of screened.rejected) await reject(d);
  const accepted = screened.accepted;
  const batchType = screened.batchType;
  if (accepted.length === 0) return emptyResult(name, deadLetters);

  // The coerce policy records what it converted in the snapshot that holds the rows.
  const withCoercion = (out: StagedFor): StagedFor =>
    coercion === undefined
      ? out
      : {
          ...out,
          prepared: { ...out.prepared, summary: { ...out.prepared.summary, 'floe.coerced': coercion } },
        };

  const stageFor = async (base: LoadedTable, staged: string[]) =>
    withCoercion(await stage(deps, base, batchType, candidates, accepted, staged, screened.fit));
  let committed: Committed & { readonly created?: boolean };
  if (!screened.exists) {
    // Stage for the table as it will be created, then create it from what was written.
    const uuid = deps.ids.uuid();
    const fresh = (t: StructType) => newTableFor(deps, id, t, candidates, uuid);
    const files: string[] = [];
    const out = await stage(
      deps,
      fresh(batchType),
      batchType,
      candidates,
      accepted,
      files,
      screened.fit,
      fresh,
    );
    if (out.prepared.dataFiles.length === 0) {
      for (const d of out.rejected) await reject(d);
      return { ...emptyResult(name, deadLetters + out.rejected.length) };
    }
    committed = await createAndCommit(deps, id, stageFor, {
      metadata: out.base.metadata,
      staged: withCoercion(out),
      files,
    });
  } else committed = await commitStaged(deps, id, stageFor);
  for (const d of committed.staged?.rejected ?? []) {
    deadLetters++;
    await reject(d);
  }
  return tableResult(name, committed.created === true, deadLetters, committed, 'generic');
}

/** A table load that committed nothing (every record was a dead letter). */
function emptyResult(table: string, deadLetters: number): TableLoadResult {
  return {
    table,
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

export interface Screened {
  readonly accepted: PendingRecord[];
  /** In input order. */
  readonly rejected: DeadLetter[];
  /**
   * The accepted records' type, fitted to the table's existing columns and promoted where their
   * values need it. Derived from accepted records only: a dead letter never shapes the table.
   */
  readonly batchType: StructType;
  /** What the accepted values need of the existing columns: pass it to `evolve` / `stage` with `batchType`. */
  readonly fit: FitOptions;
  readonly exists: boolean;
  /** Conversions made under the `coerce` policy: `column: from→to` → how many values. */
  readonly coerced: ReadonlyMap<string, number>;
}

/** Coercions as one snapshot summary value / log field: `amount: string→double ×3; …`. */
export function coercionSummary(coerced: ReadonlyMap<string, number>): string | undefined {
  if (coerced.size === 0) return undefined;
  const text = [...coerced].map(([what, n]) => `${what} ×${n}`).join('; ');
  return text.length > 1000 ? `${text.slice(0, 997)}...` : text;
}

/**
 * Splits a table's records into those that can share one schema with the table and the rest.
 * Fast path: one inference pass over the batch. Only when something conflicts is each record
 * checked on its own against the table's schema first, so a bad record early in a batch cannot
 * decide the column type and take the good ones down with it. Then the records are converted
 * into the schema the batch would give the table (see {@link settle}): those whose values do not
 * fit are dead letters too, and the batch type comes from the records that remain.
 */
export async function screen(
  deps: Pick<LoadDeps, 'catalog'>,
  id: TableIdentifier,
  input: readonly PendingRecord[],
  inferrer: StructInferrer,
  newInferrer: () => StructInferrer,
  /** The table as already loaded (`{ base: undefined }`: it does not exist); omitted: load it. */
  known?: { readonly base: LoadedTable | undefined },
  /**
   * `coerce`: the type-conflict policy (values are first converted to their columns' types when
   * lossless); `maxColumns`: the table's column limit (`guards.maxColumnsPerTable`).
   */
  policy: { readonly coerce?: boolean; readonly maxColumns?: number } = {},
): Promise<Screened> {
  const name = id.name;
  const exists = known ? known.base !== undefined : await deps.catalog.tableExists(id);
  const base = known ? known.base : exists ? await deps.catalog.loadTable(id) : undefined;
  const current = base ? currentSchema(base.metadata) : undefined;
  let records = input;
  const coerced = new Map<string, number>();
  if (policy.coerce && current) {
    const struct = schemaStruct(current);
    records = records.map((r) => {
      const c = coerceToSchema(r.value, struct);
      if (c.notes.length === 0) return r;
      for (const n of c.notes) {
        const what = n.replace(/\[\d+\]/g, '[]');
        coerced.set(what, (coerced.get(what) ?? 0) + 1);
      }
      return { ...r, value: c.value as Record<string, JsonValue> };
    });
  }
  const joinsTable = tableJoiner(name, base);

  /** One pass of conflict screening and the column limit over `pool`. */
  const screenRound = (
    pool: readonly PendingRecord[],
    first: StructInferrer,
  ): { accepted: PendingRecord[]; rejected: DeadLetter[]; inferred: StructType } => {
    let conflicted = false;
    for (const r of pool) {
      if (addOrThrown(first, r.value)) {
        conflicted = true;
        break;
      }
    }
    let accepted: PendingRecord[] = [...pool];
    const rejected: DeadLetter[] = [];
    let inferred = first.result();
    if (conflicted || joinsTable(inferred) !== undefined) {
      accepted = [];
      let together = newInferrer();
      for (const r of pool) {
        if (current) {
          const one = newInferrer();
          const own = addOrThrown(one, r.value);
          const why = own ? `table '${name}': ${own.message}` : joinsTable(one.result());
          if (why !== undefined) {
            rejected.push(deadLetterOf(r, reasonOf(own), why, name));
            continue;
          }
        }
        const clash = addOrThrown(together, r.value);
        if (clash?.thrown) {
          // It may have stopped half way through the record: rebuild without it.
          together = newInferrer();
          for (const a of accepted) together.add(a.value);
        }
        if (clash) rejected.push(deadLetterOf(r, reasonOf(clash), `table '${name}': ${clash.message}`, name));
        else accepted.push(r);
      }
      inferred = together.result();
    }
    if (policy.maxColumns !== undefined) {
      const within = admitColumns(name, current, accepted, inferred, policy.maxColumns);
      if (within.rejected.length > 0) {
        if (rejected.length > 0) {
          // Records refused as conflicting may have conflicted with one the column guard now
          // refuses: the rest is screened again without it (a dead letter decides nothing).
          const kept = new Set(within.accepted);
          const gone = new Set(accepted.filter((r) => !kept.has(r)));
          const again = screenRound(
            pool.filter((r) => !gone.has(r)),
            newInferrer(),
          );
          return { ...again, rejected: [...within.rejected, ...again.rejected] };
        }
        rejected.push(...within.rejected);
        accepted = within.accepted;
        inferred = inferAll(newInferrer(), accepted).result();
      }
    }
    return { accepted, rejected, inferred };
  };

  // Records whose values fit no column (settle) are refused last; if others were refused as
  // conflicting before, the refused one may be what they conflicted with: then the rest is
  // screened again without it, so a dead letter never decides the fate of another record.
  const refused: DeadLetter[] = [];
  let pool = records;
  let round = screenRound(pool, inferrer);
  let settled = settle(name, base, round.accepted, round.inferred, newInferrer, inferrer, []);
  while (settled.rejected.length > 0 && round.rejected.length > 0) {
    refused.push(...settled.rejected);
    const kept = new Set(settled.accepted);
    const gone = new Set(round.accepted.filter((r) => !kept.has(r)));
    pool = pool.filter((r) => !gone.has(r));
    round = screenRound(pool, newInferrer());
    settled = settle(name, base, round.accepted, round.inferred, newInferrer, inferrer, []);
  }
  let accepted = settled.accepted;
  const rejected = [...round.rejected, ...refused, ...settled.rejected];
  const { batchType, fit } = settled;
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
  return { accepted, rejected, batchType, fit, exists, coerced };
}

/** Why a record's type cannot join the table as it is (undefined: it can, or there is no table). */
function tableJoiner(name: string, base: LoadedTable | undefined): (t: StructType) => string | undefined {
  if (!base) return () => undefined;
  const current = currentSchema(base.metadata);
  const partitionTransforms = partitionSourceTransforms(base.metadata['partition-specs']);
  return (t) => {
    try {
      unionByName(
        current,
        fitToExisting(schemaStruct(current), t),
        base.metadata['last-column-id'],
        base.metadata['format-version'],
        { tableName: name, partitionTransforms },
      );
      return undefined;
    } catch (e) {
      if (!isFloeError(e, ErrorKind.SchemaIncompatible)) throw e;
      return e.message;
    }
  };
}

/**
 * The records that can never land, judged one by one: a conflict within the record (colliding
 * keys, a number beyond its type) or with the table's existing columns. The streaming ingest
 * leaves every other decision about records that change the table to the committer, which sees
 * all of them, in stream order, and takes out those refused for their values before it judges
 * the rest against each other — so a record never dies for conflicting with a dead letter.
 */
export function refuseAlone(
  name: string,
  base: LoadedTable | undefined,
  records: readonly PendingRecord[],
  newInferrer: () => StructInferrer,
): { kept: PendingRecord[]; rejected: DeadLetter[] } {
  const joinsTable = tableJoiner(name, base);
  const kept: PendingRecord[] = [];
  const rejected: DeadLetter[] = [];
  for (const r of records) {
    const one = newInferrer();
    const own = addOrThrown(one, r.value);
    const why = own ? `table '${name}': ${own.message}` : joinsTable(one.result());
    if (why === undefined) kept.push(r);
    else rejected.push(deadLetterOf(r, reasonOf(own), why, name));
  }
  return { kept, rejected };
}

/**
 * `guards.maxColumnsPerTable`: when the batch would take the table past the limit, records are
 * admitted in input order while their new columns (nested fields count) still fit; the rest are
 * dead letters. Within the limit (the usual case) this costs one count.
 */
function admitColumns(
  table: string,
  current: Schema | undefined,
  records: readonly PendingRecord[],
  inferred: StructType,
  limit: number,
): { accepted: PendingRecord[]; rejected: DeadLetter[] } {
  const have = current ? schemaColumnPaths(current) : new Set<string>();
  const batch = schemaColumnPaths({ schemaId: 0, fields: inferred.fields });
  let total = have.size;
  for (const p of batch) if (!have.has(p)) total++;
  if (total <= limit) return { accepted: [...records], rejected: [] };
  const accepted: PendingRecord[] = [];
  const rejected: DeadLetter[] = [];
  for (const r of records) {
    const mine = new Set<string>();
    columnPathsOf(r.value, '', mine);
    const added = [...mine].filter((p) => !have.has(p));
    if (have.size + added.length > limit) {
      const detail = `guard maxColumnsPerTable: table '${table}' would have ${have.size + added.length} columns, limit ${limit}`;
      rejected.push(deadLetterOf(r, DeadLetterReason.GuardMaxColumns, detail, table));
      continue;
    }
    for (const p of added) have.add(p);
    accepted.push(r);
  }
  return { accepted, rejected };
}

/** A conflict, or an exception inference did not foresee (isolated to its record: `thrown`). */
type AddOutcome = (TypeConflict & { readonly thrown?: true }) | undefined;

function addOrThrown(inferrer: StructInferrer, value: Record<string, JsonValue>): AddOutcome {
  try {
    return inferrer.add(value);
  } catch (e) {
    return {
      kind: 'type',
      path: '',
      existing: '',
      incoming: '',
      message: `inference: ${errorText(e)}`,
      thrown: true,
    };
  }
}

function reasonOf(o: AddOutcome): DeadLetter['reason'] {
  return o?.thrown ? DeadLetterReason.WriteFailed : DeadLetterReason.TypeConflict;
}

interface Settled {
  readonly accepted: PendingRecord[];
  readonly rejected: DeadLetter[];
  readonly batchType: StructType;
  readonly fit: FitOptions;
  /** The accepted records as rows of the evolved schema (`evolved`, or `batchType` for a new table). */
  readonly rows: Row[];
  /** The evolution of `base` (undefined when there is no table yet). */
  readonly evolved: Evolved | undefined;
}

/**
 * Converts `records` into the schema their type (`inferred`, fitted to the table and promoted
 * where values need it) gives the table. Records whose values do not convert are dead letters,
 * and the type is derived again from the rest — repeated until every remaining record converts —
 * so a dead letter never adds a column, promotes one or brings a partition field.
 */
function settle(
  name: string,
  base: LoadedTable | undefined,
  records: readonly PendingRecord[],
  inferred: StructType,
  newInferrer: () => StructInferrer,
  /** The type hints and declared-required columns the records were inferred with. */
  declared: Pick<StructInferrer, 'hints' | 'required'>,
  candidates: readonly string[],
): Settled {
  const rejected: DeadLetter[] = [];
  let accepted = [...records];
  if (accepted.length === 0) {
    const evolved = base ? unchanged(base) : undefined;
    return { accepted, rejected, batchType: inferred, fit: {}, rows: [], evolved };
  }
  for (;;) {
    const { batchType, fit } = fitBatch(base, inferred, accepted, declared);
    const evolved = base ? evolve(base, batchType, candidates, fit) : undefined;
    const c = convertRecords(name, evolved?.schema ?? batchType, accepted);
    if (c.rejected.length === 0) return { accepted, rejected, batchType, fit, rows: c.rows, evolved };
    rejected.push(...c.rejected);
    accepted = c.kept;
    // Each round drops at least one record, so this ends.
    inferred = inferAll(newInferrer(), accepted).result();
  }
}

/** `inferrer` after adding every record (they were inferred together before: none conflicts). */
function inferAll(inferrer: StructInferrer, records: readonly PendingRecord[]): StructInferrer {
  for (const r of records) inferrer.add(r.value);
  return inferrer;
}

/** The table as it is: nothing accepted, nothing to change. */
function unchanged(base: LoadedTable): Evolved {
  const m = base.metadata;
  return { schema: currentSchema(m), spec: defaultSpec(m), updates: [], changes: [], specChanged: false };
}

/**
 * `inferred` fitted to `base`'s columns, with the promotions the records' values (or hints) need,
 * and the columns declared required made so where the records keep to it.
 */
function fitBatch(
  base: LoadedTable | undefined,
  inferred: StructType,
  records: readonly PendingRecord[],
  declared: Pick<StructInferrer, 'hints' | 'required'>,
): { batchType: StructType; fit: FitOptions } {
  const nullability = (t: StructType, table: StructType | undefined) =>
    declared.required.size === 0
      ? t
      : declaredNullability(
          t,
          table,
          records.filter((r) => r.op !== 'delete').map((r) => r.value),
          declared.required,
        );
  if (!base) return { batchType: nullability(inferred, undefined), fit: {} };
  const table = schemaStruct(currentSchema(base.metadata));
  const hints = declared.hints;
  const needs = columnNeeds(table, inferred, hints, (columns) =>
    measureRecords(
      table,
      columns,
      records.map((r) => r.value),
    ),
  );
  const fit: FitOptions = needs.size === 0 ? {} : { needs };
  return { batchType: nullability(fitToExisting(table, inferred, fit), table), fit };
}

export const seqOf = new WeakMap<DeadLetter, number>();
function order(d: DeadLetter): number {
  return seqOf.get(d) ?? 0;
}

/** What `stage` staged, and the table it staged for. */
export interface StagedFor extends Staged {
  /** The base the files fit: the given one, or for a table not created yet, the one to create. */
  readonly base: LoadedTable;
}

/**
 * Evolves schema and spec against `base`, converts rows, and writes one Parquet file per
 * partition. `fresh` stages for a table that does not exist yet: `base` is `fresh(batchType)`,
 * and when records are refused the table to create is derived again from the rest, so the
 * caller creates it from what was written (a dead letter shapes nothing, new tables included).
 */
export async function stage(
  deps: LoadDeps,
  base: LoadedTable,
  batchType: StructType,
  candidates: readonly string[],
  records: readonly PendingRecord[],
  staged: string[],
  /** What `screen` found the values need (`Screened.fit`). */
  fit: FitOptions = {},
  fresh?: (type: StructType) => LoadedTable,
): Promise<StagedFor> {
  const name = base.id.name;
  let evolved = evolve(base, batchType, candidates, fit);
  const converted = convertRecords(name, evolved.schema, records);
  let { rows, kept } = converted;
  const rejected = [...converted.rejected];
  let settled = rejected.length === 0;
  for (;;) {
    if (!settled) {
      // Records were refused (the table moved since screening, or the writer failed on them):
      // settle again without them, so they shape nothing.
      const cfg = deps.config;
      const inferrer = () => new StructInferrer(inferOptionsFor(cfg, name));
      const again = inferAll(inferrer(), kept);
      const s = settle(name, fresh ? undefined : base, kept, again.result(), inferrer, again, candidates);
      rejected.push(...s.rejected);
      kept = s.accepted;
      settled = true;
      if (fresh && kept.length === 0) break;
      if (fresh) {
        base = fresh(s.batchType);
        evolved = evolve(base, s.batchType, candidates);
        rows = convertRecords(name, evolved.schema, kept).rows; // the shape settle converted for
      } else {
        evolved = s.evolved!;
        rows = s.rows;
      }
    }
    const { schema, spec, updates, changes, specChanged } = evolved;
    const before = staged.length;
    const written = await writeTableRows(deps, base, updates, schema, spec, rows, kept, staged);
    if (written.failed.size === 0) {
      return {
        base,
        prepared: {
          updates: [...updates, ...written.updates],
          dataFiles: written.dataFiles,
          specId: spec['spec-id'],
          ...(written.deleteFiles ? { deleteFiles: written.deleteFiles } : {}),
        },
        rejected,
        changes,
        specChanged,
        ...(written.changes ? { upserts: written.changes } : {}),
      };
    }
    await deleteQuietly(deps.store, staged.splice(before));
    for (const [i, why] of written.failed) {
      rejected.push(deadLetterOf(kept[i]!, DeadLetterReason.WriteFailed, `table '${name}': ${why}`, name));
    }
    kept = kept.filter((_, i) => !written.failed.has(i));
    settled = false;
  }
  const spec = defaultSpec(base.metadata);
  return {
    base,
    prepared: { updates: [], dataFiles: [], specId: spec['spec-id'] },
    rejected,
    changes: [],
    specChanged: false,
  };
}

/**
 * Writes the rows as data files, or for an upsert table (config `upsert`) the last change of each
 * key: data files and equality deletes (upsert-write.ts).
 */
export async function writeTableRows(
  deps: Pick<
    LoadDeps,
    'config' | 'store' | 'ids' | 'maxRowsPerFile' | 'encoder' | 'clock' | 'changeVersions'
  >,
  base: LoadedTable,
  /** The evolution the rows were converted for (the deletes' spec is added after it). */
  evolution: readonly TableUpdate[],
  schema: Schema,
  spec: PartitionSpec,
  rows: readonly Row[],
  records: readonly Pick<PendingRecord, 'op' | 'version'>[],
  staged: string[],
): Promise<TableRowsWritten> {
  const { namespace, name } = base.id;
  const upsert = upsertFor(deps.config, `${namespace}.${name}`);
  if (!upsert) return { ...(await writeRows(deps, base.metadata, schema, spec, rows, staged)), updates: [] };
  const ops = records.map((r) => r.op ?? 'upsert');
  const m =
    evolution.length === 0
      ? base.metadata
      : applyUpdates(base.metadata, [...evolution], { nowMs: deps.clock.nowMs() });
  const versions = upsert.envelope === 'dynamodb' ? records.map((r) => r.version) : undefined;
  const w = await writeChanges(deps, m, schema, spec, rows, ops, upsert.key, staged, name, versions);
  return {
    dataFiles: w.dataFiles,
    failed: w.failed,
    updates: w.updates,
    deleteFiles: new Map([[w.deleteSpecId, w.deleteFiles]]),
    changes: { upserted: w.upserted, deleted: w.deleted, superseded: w.superseded ?? 0 },
  };
}

export interface TableRowsWritten {
  readonly dataFiles: DataFile[];
  readonly failed: Map<number, string>;
  readonly updates: TableUpdate[];
  readonly deleteFiles?: ReadonlyMap<number, readonly DataFile[]>;
  /** Upsert tables: keys whose last change upserted / deleted a row. */
  readonly changes?: UpsertCounts;
}

export interface UpsertCounts {
  readonly upserted: number;
  readonly deleted: number;
  /** Versioned changes dropped as older than the key's newest committed change. */
  readonly superseded?: number;
}

type Converted = { rows: Row[]; kept: PendingRecord[]; rejected: DeadLetter[] };

/**
 * The last conversion of each records array, with the shape it was converted for: `screen`
 * converts its accepted records to check them, and staging the same array for a schema of the
 * same shape (names, types, required; ids do not matter to rows) reuses the rows.
 */
const lastConversion = new WeakMap<readonly PendingRecord[], { shape: string; converted: Converted }>();

/** Converts records to rows of `schema`; those whose values do not fit are dead letters. */
export function convertRecords(
  table: string,
  schema: Schema | StructType,
  records: readonly PendingRecord[],
): Converted {
  const shape = shapeKey(schema);
  const last = lastConversion.get(records);
  if (last?.shape === shape) return last.converted;
  const converted = convertAll(table, schema, records);
  lastConversion.set(records, { shape, converted });
  return converted;
}

const ID_KEYS: ReadonlySet<string> = new Set(['id', 'schemaId', 'elementId', 'keyId', 'valueId', 'doc']);

/** What conversion depends on: names, types and requiredness, without field ids. */
function shapeKey(schema: Schema | StructType): string {
  return JSON.stringify(schema.fields, (k, v) =>
    ID_KEYS.has(k) ? undefined : typeof v === 'bigint' ? `${v}n` : v,
  );
}

function convertAll(
  table: string,
  schema: Schema | StructType,
  records: readonly PendingRecord[],
): Converted {
  const convertData = compileRowConverter(schema);
  // A delete carries only its key: the other columns are not its to fill, required or not.
  let relaxed: typeof convertData | undefined;
  const convertDelete = () => {
    relaxed ??= compileRowConverter(optionalTree({ kind: 'struct', fields: schema.fields }));
    return relaxed;
  };
  const rows: Row[] = [];
  const kept: PendingRecord[] = [];
  const rejected: DeadLetter[] = [];
  for (const r of records) {
    let c: ReturnType<typeof convertData>;
    try {
      const convert = r.op === 'delete' ? convertDelete() : convertData;
      c = convert(r.value);
    } catch (e) {
      // Not a value that does not fit (those are results): a bug, isolated to this record.
      rejected.push(
        deadLetterOf(r, DeadLetterReason.WriteFailed, `table '${table}': conversion: ${errorText(e)}`, table),
      );
      continue;
    }
    if (c.ok) {
      rows.push(c.row);
      kept.push(r);
    } else
      rejected.push(deadLetterOf(r, DeadLetterReason.InvalidValue, describeConvertFailure(table, c), table));
  }
  return { rows, kept, rejected };
}

/**
 * Rows grouped by partition (`partitionTuple` of `spec`), by `partitionKey`, in first-seen order.
 * A value no partition transform takes throws, naming it as a partition value.
 */
export function groupByPartition(
  spec: PartitionSpec,
  schema: Schema,
  rows: readonly Row[],
): Map<string, { tuple: IcebergValue[]; rows: Row[] }> {
  const groups = new Map<string, { tuple: IcebergValue[]; rows: Row[] }>();
  for (const row of rows) {
    let tuple: IcebergValue[];
    try {
      tuple = partitionTuple(spec, schema, row);
    } catch (e) {
      throw new Error(`partition value: ${errorText(e)}`);
    }
    const key = partitionKey(tuple);
    let g = groups.get(key);
    if (!g) {
      g = { tuple, rows: [] };
      groups.set(key, g);
    }
    g.rows.push(row);
  }
  return groups;
}

/**
 * Encodes `rows` as one Parquet file per partition (and per `maxRowsPerFile` rows) and stores
 * each while the next is encoded (object stores are network round trips). Rows the encoder or a
 * partition transform fails on are isolated (row-files.ts) and returned in `failed`, by index.
 */
export async function writeRows(
  deps: Pick<LoadDeps, 'store' | 'ids' | 'maxRowsPerFile' | 'encoder'>,
  m: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  rows: readonly Row[],
  staged: string[],
): Promise<{ dataFiles: DataFile[]; failed: Map<number, string> }> {
  const puts: Promise<DataFile>[] = [];
  const { failed } = encodeRows(schema, spec, rows, {
    compression: codecOf(m),
    maxRows: deps.maxRowsPerFile ?? 1_000_000,
    ...(deps.encoder ? { encoder: deps.encoder } : {}),
    onFile: (f, ordinal) => {
      const put = putDataFile(deps, m, schema, spec, f.tuple, f.file, ordinal, staged);
      put.catch(() => undefined); // settled below
      puts.push(put);
    },
  });
  return { dataFiles: await settleAll(puts), failed };
}

export function deadLetterOf(
  r: PendingRecord,
  reason: DeadLetter['reason'],
  detail: string,
  table: string,
): DeadLetter {
  const d: DeadLetter = { source: r.source, line: r.line, reason, detail, table, raw: r.raw };
  seqOf.set(d, r.seq);
  return d;
}
