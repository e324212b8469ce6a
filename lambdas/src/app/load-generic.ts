/**
 * The generic (record by record) path of a load: the reference for every rule. Conflicting
 * batches are screened against the table, values converted per record, bad records dead-lettered.
 */

import { hintsFor, partitionCandidatesFor, typeConflictFor } from '../config.ts';
import { ErrorKind, isFloeError } from '../errors.ts';
import type { DataFile } from '../iceberg/manifest/types.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { partitionKey, partitionTuple } from '../iceberg/partitioning.ts';
import type { Schema } from '../iceberg/schema.ts';
import { schemaStruct } from '../iceberg/schema.ts';
import { partitionSourceTransforms, unionByName } from '../iceberg/schema-evolution.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { currentSchema, defaultSpec } from '../iceberg/table-metadata.ts';
import type { PrimitiveType, StructType } from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import { writeDataFile } from '../parquet/index.ts';
import type { LoadedTable, TableIdentifier } from '../ports/catalog.ts';
import type { JsonValue } from '../records/json-line.ts';
import { coerceToSchema } from '../schema/coerce.ts';
import { compileRowConverter, describeConvertFailure } from '../schema/convert.ts';
import { type FitOptions, fitToExisting } from '../schema/fit.ts';
import { StructInferrer } from '../schema/infer.ts';
import { columnNeeds, measureRecords } from '../schema/promote.ts';
import type { PreparedAppend } from './append.ts';
import { type DeadLetter, DeadLetterReason } from './dead-letters.ts';

import type { LoadDeps, PendingRecord, TableLoadResult } from './load-types.ts';
import {
  codecOf,
  commitStaged,
  createTable,
  type Evolved,
  evolve,
  putDataFile,
  settleAll,
  tableResult,
} from './table-staging.ts';

export async function loadTable(
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
    undefined,
    { coerce: typeConflictFor(cfg, name) === 'coerce' },
  );
  const coercion = coercionSummary(screened.coerced);
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

  const committed = await commitStaged(deps, id, async (base, staged) => {
    const out = await stage(deps, base, batchType, candidates, accepted, staged, screened.fit);
    // The coerce policy records what it converted in the snapshot that holds the rows.
    if (coercion === undefined) return out;
    return {
      ...out,
      prepared: { ...out.prepared, summary: { ...out.prepared.summary, 'floe.coerced': coercion } },
    };
  });
  for (const d of committed.staged?.rejected ?? []) {
    deadLetters++;
    await reject(d);
  }
  return tableResult(name, created, deadLetters, committed, 'generic');
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
  /** The `coerce` type-conflict policy: values are first converted to their columns' types when lossless. */
  policy: { readonly coerce?: boolean } = {},
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
  const fitToTable = (t: StructType) => (current ? fitToExisting(schemaStruct(current), t) : t);
  const partitionTransforms = partitionSourceTransforms(base?.metadata['partition-specs'] ?? []);
  const joinsTable = (t: StructType): string | undefined => {
    if (!base || !current) return undefined;
    try {
      unionByName(current, fitToTable(t), base.metadata['last-column-id'], base.metadata['format-version'], {
        tableName: name,
        partitionTransforms,
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
  let inferred = inferrer.result();
  if (conflicted || joinsTable(inferred) !== undefined) {
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
    inferred = together.result();
  }
  const settled = settle(name, base, accepted, inferred, newInferrer, inferrer.hints, []);
  accepted = settled.accepted;
  rejected.push(...settled.rejected);
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
  hints: ReadonlyMap<string, PrimitiveType>,
  candidates: readonly string[],
): Settled {
  const rejected: DeadLetter[] = [];
  let accepted = [...records];
  if (accepted.length === 0) {
    const evolved = base ? unchanged(base) : undefined;
    return { accepted, rejected, batchType: inferred, fit: {}, rows: [], evolved };
  }
  for (;;) {
    const { batchType, fit } = fitBatch(base, inferred, accepted, hints);
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

/** `inferred` fitted to `base`'s columns, with the promotions the records' values (or hints) need. */
function fitBatch(
  base: LoadedTable | undefined,
  inferred: StructType,
  records: readonly PendingRecord[],
  hints: ReadonlyMap<string, PrimitiveType>,
): { batchType: StructType; fit: FitOptions } {
  if (!base) return { batchType: inferred, fit: {} };
  const table = schemaStruct(currentSchema(base.metadata));
  const needs = columnNeeds(table, inferred, hints, (columns) =>
    measureRecords(
      table,
      columns,
      records.map((r) => r.value),
    ),
  );
  const fit: FitOptions = needs.size === 0 ? {} : { needs };
  return { batchType: fitToExisting(table, inferred, fit), fit };
}

export const seqOf = new WeakMap<DeadLetter, number>();
function order(d: DeadLetter): number {
  return seqOf.get(d) ?? 0;
}

/** Evolves schema and spec against `base`, converts rows, and writes one Parquet file per partition. */
export async function stage(
  deps: LoadDeps,
  base: LoadedTable,
  batchType: StructType,
  candidates: readonly string[],
  records: readonly PendingRecord[],
  staged: string[],
  /** What `screen` found the values need (`Screened.fit`). */
  fit: FitOptions = {},
): Promise<{ prepared: PreparedAppend; rejected: DeadLetter[]; changes: string[]; specChanged: boolean }> {
  const m = base.metadata;
  const name = base.id.name;
  let evolved = evolve(base, batchType, candidates, fit);
  let { rows, kept, rejected } = convertRecords(name, evolved.schema, records);
  if (rejected.length > 0) {
    // The table moved since the batch was screened: settle again, so the rejected shape nothing.
    const cfg = deps.config;
    const inferrer = () =>
      new StructInferrer({ hints: hintsFor(cfg, name), detectTimestamps: cfg.inference.detectTimestamps });
    const again = inferAll(inferrer(), kept);
    const s = settle(name, base, kept, again.result(), inferrer, again.hints, candidates);
    evolved = s.evolved!;
    rows = s.rows;
    rejected = [...rejected, ...s.rejected];
  }
  const { schema, spec, updates, changes, specChanged } = evolved;
  const dataFiles = await writeGroupFiles(
    deps,
    m,
    schema,
    spec,
    groupByPartition(spec, schema, rows),
    staged,
  );
  return { prepared: { updates, dataFiles, specId: spec['spec-id'] }, rejected, changes, specChanged };
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
  const convert = compileRowConverter(schema);
  const rows: Row[] = [];
  const kept: PendingRecord[] = [];
  const rejected: DeadLetter[] = [];
  for (const r of records) {
    const c = convert(r.value);
    if (c.ok) {
      rows.push(c.row);
      kept.push(r);
    } else
      rejected.push(deadLetterOf(r, DeadLetterReason.InvalidValue, describeConvertFailure(table, c), table));
  }
  return { rows, kept, rejected };
}

/** Rows grouped by partition (`partitionTuple` of `spec`), in first-seen order. */
export function groupByPartition(
  spec: PartitionSpec,
  schema: Schema,
  rows: readonly Row[],
): { tuple: IcebergValue[]; rows: Row[] }[] {
  const groups = new Map<string, { tuple: IcebergValue[]; rows: Row[] }>();
  for (const row of rows) {
    const tuple = partitionTuple(spec, schema, row);
    const key = partitionKey(tuple);
    let g = groups.get(key);
    if (!g) {
      g = { tuple, rows: [] };
      groups.set(key, g);
    }
    g.rows.push(row);
  }
  return [...groups.values()];
}

/** Writes one Parquet file per partition group (and per `maxRowsPerFile` rows) and stores it. */
export async function writeGroupFiles(
  deps: Pick<LoadDeps, 'store' | 'ids' | 'maxRowsPerFile'>,
  m: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  groups: Iterable<{ tuple: IcebergValue[]; rows: Row[] }>,
  staged: string[],
): Promise<DataFile[]> {
  const maxRows = deps.maxRowsPerFile ?? 1_000_000;
  const compression = codecOf(m);
  // Each file is stored while the next one is encoded (object stores are network round trips).
  const puts: Promise<DataFile>[] = [];
  for (const g of groups) {
    for (let i = 0; i < g.rows.length; i += maxRows) {
      const file = writeDataFile(schema, g.rows.slice(i, i + maxRows), { compression });
      const put = putDataFile(deps, m, schema, spec, g.tuple, file, puts.length, staged);
      put.catch(() => undefined); // settled below
      puts.push(put);
    }
  }
  return settleAll(puts);
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
