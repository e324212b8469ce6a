/**
 * Writing one commit's changes to an upsert table (config `upsert`; spec: "Equality Delete Files",
 * "Scan Planning").
 *
 * Within one commit every file gets the same data sequence number, and an equality delete only
 * applies to data files with a smaller one, so a key written twice in one commit cannot be fixed by
 * an equality delete. Flink's writer removes the earlier row with a position delete; here the whole
 * commit's rows are in memory, so only the last change of each key (in stream order) is written at
 * all, and an equality delete on the key's field ids removes every older row of every touched key.
 *
 * Partitions: an equality delete applies only to data files of its own spec and partition, unless
 * its spec is unpartitioned. A key's row may have moved partitions (an event time changed), so the
 * deletes of a partitioned table are global (written under an unpartitioned spec, added to the
 * table if it has none) — unless the table has only ever had one spec and the key determines the
 * partition (every partition source is a key column), where partitioned deletes are exact.
 */
import { type DataFile, DataFileContent } from '../iceberg/manifest/types.ts';
import type { TableUpdate } from '../iceberg/metadata/index.ts';
import type { PartitionSpec } from '../iceberg/partition-spec.ts';
import { fieldsAlong, pruneToIds, type Schema } from '../iceberg/schema.ts';
import { MAIN_BRANCH } from '../iceberg/snapshot.ts';
import { branchHead, type TableMetadata } from '../iceberg/table-metadata.ts';
import { type IcebergType, isPrimitive } from '../iceberg/types.ts';
import type { IcebergValue, Row } from '../iceberg/values.ts';
import { type KeyVersion, raises, supersedes } from '../ports/change-versions.ts';
import type { ChangeOp } from '../records/change-event.ts';
import { type ColumnarTableBatch, gatherRows, RowOp, valueAt } from './columnar-batch.ts';
import { type EncodedFile, encodeColumns } from './columnar-part.ts';
import { writeRows } from './generic-stage.ts';
import { KeyVersionFiles } from './key-versions.ts';
import type { LoadDeps } from './load-types.ts';
import { codecOf, putDataFile, UseGenericPath } from './table-staging.ts';

export interface ChangeWrite {
  readonly dataFiles: DataFile[];
  /** Equality delete files, all under `deleteSpecId`. */
  readonly deleteFiles: DataFile[];
  readonly deleteSpecId: number;
  /** Metadata changes the deletes need (an unpartitioned spec for global deletes). */
  readonly updates: TableUpdate[];
  /** Index into the rows → why that row could not be written (its record becomes a dead letter). */
  readonly failed: Map<number, string>;
  /** Keys whose last change upserts a row / deletes it. */
  readonly upserted: number;
  readonly deleted: number;
  /** Versioned changes: keys whose changes were all older than the key's newest committed one. */
  readonly superseded?: number;
}

/** A key column: where it is in a row and its field id. */
interface KeyColumn {
  readonly path: readonly string[];
  readonly id: number;
}

/**
 * Writes the last change of each key: its row (upserts) as data files, and one equality delete
 * row per touched key. `ops[i]` is what `rows[i]` does; rows are in stream order.
 *
 * Versioned changes (`versions`, DynamoDB's change times): a key's change is its newest one, not
 * its last, and it is dropped when the key already has a newer committed change
 * (ports/change-versions.ts, kept in `deps.changeVersions`, by default files beside the table);
 * the versions written are recorded before the caller commits.
 */
export async function writeChanges(
  deps: Pick<LoadDeps, 'store' | 'ids' | 'maxRowsPerFile' | 'encoder' | 'changeVersions' | 'branch'>,
  m: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  rows: readonly Row[],
  ops: readonly (ChangeOp | undefined)[],
  keyPaths: readonly string[],
  staged: string[],
  table: string,
  versions?: readonly (bigint | undefined)[],
): Promise<ChangeWrite> {
  const branch = deps.branch ?? MAIN_BRANCH;
  const key = keyColumns(schema, keyPaths, table);
  const failed = new Map<number, string>();
  if (typeof key === 'string') {
    for (let i = 0; i < rows.length; i++) failed.set(i, key);
    return {
      dataFiles: [],
      deleteFiles: [],
      deleteSpecId: spec['spec-id'],
      updates: [],
      failed,
      upserted: 0,
      deleted: 0,
    };
  }
  const versioned = versions?.some((v) => v !== undefined) === true;
  const last = versioned ? newestChangeOfEachKey(rows, key, ops, versions!) : lastChangeOfEachKey(rows, key);
  const store = versioned ? (deps.changeVersions ?? new KeyVersionFiles(deps.store)) : undefined;
  const stored = store
    ? await store.get(m.location, [...last.keys()], branch)
    : new Map<string, KeyVersion>();
  const superseded = store ? dropSuperseded(stored, last, ops, versions!) : 0;
  const survivors = [...last.values()].filter((i) => ops[i] !== 'delete').sort((a, b) => a - b);
  const record = async () => {
    if (store) await store.put(m.location, versionsWritten(last, ops, versions!, failed, stored), branch);
  };
  const written = await writeRows(
    deps,
    m,
    schema,
    spec,
    survivors.map((i) => rows[i]!),
    staged,
  );
  for (const [j, why] of written.failed) failed.set(survivors[j]!, why);

  // A branch without a snapshot has no older row for a delete to remove.
  if (branchHead(m, branch) === undefined) {
    await record();
    return {
      dataFiles: written.dataFiles,
      deleteFiles: [],
      deleteSpecId: spec['spec-id'],
      updates: [],
      failed,
      upserted: survivors.length,
      deleted: last.size - survivors.length,
      superseded,
    };
  }
  const target = deleteTarget(m, spec, key);
  const keySchema = keyOnlySchema(schema, key);
  const keyRows = [...last.values()].map((i) => keyOnlyRow(rows[i]!, key));
  const deletes = await writeRows(deps, m, keySchema, target.spec, keyRows, staged);
  if (deletes.failed.size > 0) {
    // A key the writer refuses as a delete is refused as a row too: nothing of it lands.
    const reps = [...last.values()];
    for (const [j, why] of deletes.failed) failed.set(reps[j]!, `equality delete: ${why}`);
  }
  const equalityIds = key.map((k) => k.id);
  await record();
  return {
    dataFiles: written.dataFiles,
    deleteFiles: deletes.dataFiles.map((f) => asEqualityDeletes(f, equalityIds)),
    deleteSpecId: target.spec['spec-id'],
    updates: target.updates,
    failed,
    upserted: survivors.length,
    deleted: last.size - survivors.length,
    superseded,
  };
}

/**
 * `writeChanges` over a table's columns (the fast path's): the last change of each key (`ops`,
 * `RowOp` per row, in stream order) written as data files, an equality delete row per touched key.
 * Throws `UseGenericPath` when a value does not convert or the encoder fails: the generic path
 * then writes the changes (and isolates what cannot be written).
 */
export async function writeChangesColumnar(
  deps: Pick<LoadDeps, 'store' | 'ids' | 'maxRowsPerFile' | 'encoder' | 'branch'>,
  m: TableMetadata,
  schema: Schema,
  spec: PartitionSpec,
  batch: ColumnarTableBatch,
  keyPaths: readonly string[],
  staged: string[],
  table: string,
): Promise<ChangeWrite> {
  const key = keyColumns(schema, keyPaths, table);
  if (typeof key === 'string') throw new UseGenericPath();
  const columns = batch.toColumnar(schema);
  if (!columns) throw new UseGenericPath();
  const leaves = key.map((k) => columns.leaves.get(k.id));
  const last = new Map<string, number>();
  // The last change of a key is the last in input order (the rows may hold several threads').
  const order = batch.inputOrder();
  for (let i = 0; i < columns.rowCount; i++) {
    const r = order === undefined ? i : order[i]!;
    let text = '';
    for (let k = 0; k < leaves.length; k++) {
      const v = valueAt(leaves[k], r);
      text +=
        (k === 0 ? '' : '\u0000') +
        (v === null || v === undefined
          ? 'n'
          : v instanceof Uint8Array
            ? `x${Buffer.from(v).toString('hex')}`
            : `${typeof v}:${String(v)}`);
    }
    last.delete(text); // re-inserted: the map's order is the order of last changes
    last.set(text, r);
  }
  const survivors = [...last.values()]
    .filter((r) => batch.opAt(r) !== RowOp.Delete)
    .sort((a, b) => batch.seqAt(a) - batch.seqAt(b));
  const options = { compression: codecOf(m), maxRows: deps.maxRowsPerFile ?? 1_000_000 };
  const put = async (files: EncodedFile[] | undefined, s: Schema, sp: PartitionSpec) => {
    if (files === undefined) throw new UseGenericPath();
    const out: DataFile[] = [];
    for (const f of files)
      out.push(await putDataFile(deps, m, s, sp, f.tuple, f.file, staged.length, staged));
    return out;
  };
  const dataFiles =
    survivors.length === 0
      ? []
      : await put(
          await encodeColumns(gatherRows(columns, survivors), schema, spec, options, deps.encoder),
          schema,
          spec,
        );
  const upserted = survivors.length;
  const deleted = last.size - survivors.length;
  // A branch without a snapshot has no older row for a delete to remove.
  if (branchHead(m, deps.branch ?? MAIN_BRANCH) === undefined) {
    return {
      dataFiles,
      deleteFiles: [],
      deleteSpecId: spec['spec-id'],
      updates: [],
      failed: new Map(),
      upserted,
      deleted,
    };
  }
  const target = deleteTarget(m, spec, key);
  const keySchema = keyOnlySchema(schema, key);
  const keyBatch = gatherRows(
    {
      rowCount: columns.rowCount,
      leaves: new Map(key.map((k) => [k.id, columns.leaves.get(k.id)!])),
      structValid: new Map(),
    },
    [...last.values()],
  );
  const deletes = await put(
    await encodeColumns(keyBatch, keySchema, target.spec, options, deps.encoder),
    keySchema,
    target.spec,
  );
  const equalityIds = key.map((k) => k.id);
  return {
    dataFiles,
    deleteFiles: deletes.map((f) => asEqualityDeletes(f, equalityIds)),
    deleteSpecId: target.spec['spec-id'],
    updates: target.updates,
    failed: new Map(),
    upserted,
    deleted,
  };
}

/** Key → index of its last row. */
function lastChangeOfEachKey(rows: readonly Row[], key: readonly KeyColumn[]): Map<string, number> {
  const last = new Map<string, number>();
  for (let i = 0; i < rows.length; i++) {
    const k = keyString(rows[i]!, key);
    last.delete(k); // re-inserted: the map's order is the order of last changes
    last.set(k, i);
  }
  return last;
}

/**
 * Key → index of its newest change (the largest version; at the same version a delete wins, then
 * the later row). A row without a version is older than any with one.
 */
function newestChangeOfEachKey(
  rows: readonly Row[],
  key: readonly KeyColumn[],
  ops: readonly (ChangeOp | undefined)[],
  versions: readonly (bigint | undefined)[],
): Map<string, number> {
  const newest = new Map<string, number>();
  for (let i = 0; i < rows.length; i++) {
    const k = keyString(rows[i]!, key);
    const j = newest.get(k);
    if (j === undefined || !olderThan(i, j, ops, versions)) newest.set(k, i);
  }
  return newest;
}

/** Whether change `i` (later in the stream) loses to change `j` of the same key. */
function olderThan(
  i: number,
  j: number,
  ops: readonly (ChangeOp | undefined)[],
  versions: readonly (bigint | undefined)[],
): boolean {
  const vi = versions[i] ?? -1n;
  const vj = versions[j] ?? -1n;
  if (vi !== vj) return vi < vj;
  return ops[j] === 'delete' && ops[i] !== 'delete';
}

/**
 * Drops from `newest` each key whose change is older than the key's stored version (a late or
 * repeated change of a key that has moved on); returns how many were dropped.
 */
function dropSuperseded(
  stored: ReadonlyMap<string, KeyVersion>,
  newest: Map<string, number>,
  ops: readonly (ChangeOp | undefined)[],
  versions: readonly (bigint | undefined)[],
): number {
  let dropped = 0;
  for (const [k, i] of newest) {
    if (supersedes(versions[i] ?? -1n, ops[i] === 'delete', stored.get(k))) continue;
    newest.delete(k);
    dropped++;
  }
  return dropped;
}

/**
 * The versions the written changes raise: a change that became a dead letter raises nothing, and
 * one the store already holds (a duplicate, a retried commit) needs no write.
 */
function versionsWritten(
  newest: ReadonlyMap<string, number>,
  ops: readonly (ChangeOp | undefined)[],
  versions: readonly (bigint | undefined)[],
  failed: ReadonlyMap<number, string>,
  stored: ReadonlyMap<string, KeyVersion>,
): Map<string, KeyVersion> {
  const out = new Map<string, KeyVersion>();
  for (const [k, i] of newest) {
    const version = versions[i];
    if (version === undefined || failed.has(i)) continue;
    const next = { version, deleted: ops[i] === 'delete' };
    if (raises(next, stored.get(k))) out.set(k, next);
  }
  return out;
}

/** An exact, type-tagged text of a row's key values (1 and "1" differ; bytes as hex). */
export function keyString(row: Row, key: readonly KeyColumn[]): string {
  return key
    .map((k) => {
      const v = valueAtPath(row, k.path);
      if (v === null || v === undefined) return 'n';
      if (v instanceof Uint8Array) return `x${Buffer.from(v).toString('hex')}`;
      return `${typeof v}:${String(v)}`;
    })
    .join('\u0000');
}

function valueAtPath(row: Row, path: readonly string[]): IcebergValue {
  let v: IcebergValue = row;
  for (const p of path) {
    if (v === null || v === undefined || typeof v !== 'object') return undefined;
    v = (v as Row)[p];
  }
  return v;
}

/** The key's columns in `schema`, or why they cannot be a key (every record is then refused). */
function keyColumns(schema: Schema, keyPaths: readonly string[], table: string): KeyColumn[] | string {
  const out: KeyColumn[] = [];
  for (const dotted of keyPaths) {
    const path = dotted.split('.');
    const field = fieldsAlong(schema.fields, path)?.at(-1);
    // Only when a field list dropped it after the key was read: each record is refused, naming it.
    if (!field)
      return `table '${table}': key column '${dotted}' is not in the table (a field list drops it?)`;
    if (!allowedKeyType(field.type))
      return `table '${table}': key column '${dotted}' is ${typeName(field.type)}; an equality delete column must be a primitive other than float or double`;
    out.push({ path, id: field.id });
  }
  return out;
}

function allowedKeyType(t: IcebergType): boolean {
  return isPrimitive(t) && t.kind !== 'float' && t.kind !== 'double';
}

function typeName(t: IcebergType): string {
  return isPrimitive(t) ? t.kind : `a ${t.kind}`;
}

/** The schema of equality delete files: the key columns, nested in their (pruned) structs. */
function keyOnlySchema(schema: Schema, key: readonly KeyColumn[]): Schema {
  return { schemaId: schema.schemaId, fields: pruneToIds(schema.fields, new Set(key.map((k) => k.id))) };
}

function keyOnlyRow(row: Row, key: readonly KeyColumn[]): Row {
  const out: Row = {};
  for (const k of key) {
    let dst: Record<string, IcebergValue> = out;
    for (let i = 0; i < k.path.length - 1; i++) {
      const p = k.path[i]!;
      dst[p] ??= {};
      dst = dst[p] as Record<string, IcebergValue>;
    }
    dst[k.path[k.path.length - 1]!] = valueAtPath(row, k.path);
  }
  return out;
}

/** The spec the deletes are written under, and the update that adds it if the table lacks it. */
function deleteTarget(
  m: TableMetadata,
  spec: PartitionSpec,
  key: readonly KeyColumn[],
): { spec: PartitionSpec; updates: TableUpdate[] } {
  if (spec.fields.length === 0) return { spec, updates: [] };
  const keyIds = new Set(key.map((k) => k.id));
  const onlySpec =
    m['partition-specs'].length === 1 && m['partition-specs'][0]!['spec-id'] === spec['spec-id'];
  if (onlySpec && spec.fields.every((f) => keyIds.has(f['source-id']))) return { spec, updates: [] };
  const unpartitioned = m['partition-specs'].find((s) => s.fields.length === 0);
  if (unpartitioned) return { spec: unpartitioned, updates: [] };
  const id = Math.max(...m['partition-specs'].map((s) => s['spec-id'])) + 1;
  const added: PartitionSpec = { 'spec-id': id, fields: [] };
  return { spec: added, updates: [{ action: 'add-spec', spec: added }] };
}

function asEqualityDeletes(f: DataFile, equalityIds: readonly number[]): DataFile {
  // Sort order ids belong to data files and equality deletes alike; Floe writes unsorted files.
  return { ...f, content: DataFileContent.EQUALITY_DELETES, equality_ids: [...equalityIds] };
}
