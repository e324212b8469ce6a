/**
 * The live rows of an Iceberg table snapshot, row-level deletes applied, read INDEPENDENTLY of
 * lambdas/src (part of the test validator, iceberg-validator.ts, whose manifest decoding it shares).
 * Sections cited are those of apache/iceberg format/spec.md (and format/puffin-spec.md for DVs),
 * as of commit 7f879b11.
 *
 * - Scan Planning: DELETED entries are ignored; a deletion vector applies to the data file named by
 *   its `referenced_data_file` with data sequence number <= its own, in the same partition (spec id
 *   and values); a position delete file likewise (data seq <=, same partition, `referenced_data_file`
 *   if set), unless a DV applies; an equality delete file to data files with data seq strictly <
 *   its own, in the same partition or anywhere when its spec is unpartitioned (global delete).
 * - Sequence Number Inheritance: an ADDED entry with a null sequence number takes its manifest's;
 *   v1 manifests (no such column) read 0.
 * - Equality Delete Files: compared by the `equality_ids` field ids; null equals null; a column
 *   missing from a file reads by the projection rules below; a dropped column still applies.
 * - Column Projection (iceberg-projection.ts): columns by field id, else name mapping; a missing
 *   column is the identity-partition value, else `initial-default`, else null.
 *
 * Only Parquet data and delete files (and Puffin deletion vectors) are read; anything else throws.
 */

import type { Catalog } from '../../lambdas/src/ports/catalog.ts';
import type { ObjectStore } from '../../lambdas/src/ports/object-store.ts';
import {
  allFieldTypes,
  nameMappingOf,
  type ParquetFile,
  type ProjectionCtx,
  partitionValue,
  projectRow,
  readParquet,
  schemaFields,
  toCanon,
  tupleKey,
  valueById,
  valueKey,
} from './iceberg-projection.ts';
import {
  type DataFileRec,
  decodeListRecords,
  decodeManifestRecords,
  type EntryRec,
  type ManifestFileRec,
  readAvro,
  readTableModel,
  type SnapshotInfo,
  type SpecField,
} from './iceberg-validator.ts';
import { decodeDeletionVector } from './puffin-dv.ts';

// ---------------------------------------------------------------------------------------------
// API

export interface TableRowsOptions {
  /** The table metadata file's content (GZIP-compressed content is accepted). */
  readonly metadataJson: string | Uint8Array;
  /** Reads a whole file by the URI the metadata names. */
  readonly read: (uri: string) => Promise<Uint8Array>;
  /** Default: the current snapshot (rows keyed by the current schema); else that snapshot's schema. */
  readonly snapshotId?: bigint | string;
}

export interface TableRowStats {
  readonly dataFiles: number;
  readonly positionDeleteFiles: number;
  readonly equalityDeleteFiles: number;
  readonly deletionVectors: number;
  /** Rows of the live data files. */
  readonly rowsBeforeDeletes: number;
  readonly rowsAfterDeletes: number;
  /** Rows removed by position delete files or deletion vectors. */
  readonly deletedByPosition: number;
  /** Rows removed by equality deletes (and not already by position). */
  readonly deletedByEquality: number;
}

export interface TableRows {
  /** Top-level column names of the schema read, in schema order. */
  readonly columns: string[];
  /** Live rows, data file by data file in manifest order, each file's rows in file order. */
  readonly rows: Record<string, unknown>[];
  readonly stats: TableRowStats;
}

/** The live rows of the current (or given) snapshot after applying its delete files. */
export async function readTableRows(opts: TableRowsOptions): Promise<TableRows> {
  const { meta, model } = readTableModel(opts.metadataJson);
  const snap = pickSnapshot(model.snapshots, model.currentSnapshotId, opts.snapshotId);
  // Time travel reads with the snapshot's schema (as Java's SnapshotUtil.schemaFor); else the current one.
  const schemaId = opts.snapshotId !== undefined ? snap?.schemaId : undefined;
  const schema = schemaFields(meta, schemaId ?? model.currentSchemaId);
  const columns = schema.map((f) => f.name);
  const stats = {
    dataFiles: 0,
    positionDeleteFiles: 0,
    equalityDeleteFiles: 0,
    deletionVectors: 0,
    rowsBeforeDeletes: 0,
    rowsAfterDeletes: 0,
    deletedByPosition: 0,
    deletedByEquality: 0,
  };
  if (!snap) return { columns, rows: [], stats };

  const io = new CachedIo(opts.read);
  const ctx: ReadCtx = {
    read: (uri) => io.read(uri),
    memo: new Map(),
    types: allFieldTypes(meta),
    nameMapping: nameMappingOf(meta, schema),
    specs: model.specs,
  };
  const files = await liveFiles(snap, io);
  const data = files.filter((f) => f.file.content === 0);
  const dvs = files.filter((f) => f.file.content === 1 && /^puffin$/i.test(f.file.format));
  const posFiles = files.filter((f) => f.file.content === 1 && !/^puffin$/i.test(f.file.format));
  const eqFiles = files.filter((f) => f.file.content === 2);
  Object.assign(stats, {
    dataFiles: data.length,
    positionDeleteFiles: posFiles.length,
    equalityDeleteFiles: eqFiles.length,
    deletionVectors: dvs.length,
  });

  const rows: Record<string, unknown>[] = [];
  for (const d of data) {
    if (!/^parquet$/i.test(d.file.format))
      throw new Error(`${d.file.path}: ${d.file.format} data files are not read`);
    const file = await readParquet(ctx, d.file.path);
    const n = file.rows.length;
    stats.rowsBeforeDeletes += n;
    const deleted = new Set<number>();
    // Scan Planning: a DV applies when it names this file, is not older, and is in its partition.
    const myDvs = dvs.filter(
      (v) => v.file.referencedDataFile === d.file.path && d.seq <= v.seq && samePartition(d, v),
    );
    // Deletion Vectors: "there can be at most one deletion vector for a given data file in a snapshot".
    if (myDvs.length > 1) throw new Error(`${d.file.path}: ${myDvs.length} deletion vectors apply`);
    for (const v of myDvs) for (const p of await readDv(ctx, v.file)) deleted.add(Number(p));
    if (myDvs.length === 0) {
      for (const p of posFiles) {
        if (!(d.seq <= p.seq && samePartition(d, p))) continue;
        if (p.file.referencedDataFile !== null && p.file.referencedDataFile !== d.file.path) continue;
        for (const pos of (await readPositionDeletes(ctx, p.file)).get(d.file.path) ?? [])
          deleted.add(Number(pos));
      }
    }
    for (const i of deleted)
      if (i >= n) throw new Error(`${d.file.path}: deleted position ${i} >= ${n} rows`);
    stats.deletedByPosition += deleted.size;
    const eqApplicable = eqFiles.filter(
      (e) => d.seq < e.seq && (samePartition(d, e) || isUnpartitioned(ctx.specs.get(e.specId))),
    );
    const eqSets = await Promise.all(eqApplicable.map((e) => readEqualityDeletes(ctx, e.file)));
    const constants = identityConstants(ctx, d);
    for (let i = 0; i < n; i++) {
      if (deleted.has(i)) continue;
      const raw = file.rows[i] as Record<string, unknown>;
      const hit = eqSets.some(({ ids, keys }) =>
        keys.has(tupleKey(ids.map((id) => valueById(ctx, file, raw, id, constants)))),
      );
      if (hit) {
        stats.deletedByEquality++;
        continue;
      }
      rows.push(projectRow(file, raw, schema, constants));
    }
  }
  stats.rowsAfterDeletes = rows.length;
  return { columns, rows, stats };
}

/** Counts only: live data files, delete files by kind, rows before and after deletes. */
export async function tableRowStats(opts: TableRowsOptions): Promise<TableRowStats> {
  return (await readTableRows(opts)).stats;
}

// ---------------------------------------------------------------------------------------------
// Manifests

interface Live {
  readonly file: DataFileRec;
  readonly seq: bigint;
  readonly specId: number;
  /** Partition values by partition field id. */
  readonly partition: Map<number, unknown>;
}

function pickSnapshot(
  snapshots: readonly SnapshotInfo[],
  current: bigint | undefined,
  wanted: bigint | string | undefined,
): SnapshotInfo | undefined {
  const id = wanted === undefined ? current : BigInt(wanted);
  if (id === undefined) return undefined;
  const info = snapshots.find((s) => s.id === id);
  if (!info) throw new Error(`snapshot ${id} is not in the metadata`);
  return info;
}

async function liveFiles(snap: SnapshotInfo, io: CachedIo): Promise<Live[]> {
  let manifests: { path: string; rec: ManifestFileRec | undefined }[];
  if (snap.manifestList !== undefined) {
    const list = await readAvro(await io.read(snap.manifestList));
    manifests = decodeListRecords(list.rawSchema, list.records).map((rec) => ({ path: rec.path, rec }));
  } else {
    manifests = (snap.manifests ?? []).map((path) => ({ path, rec: undefined }));
  }
  const out: Live[] = [];
  for (const { path, rec } of manifests) {
    const decoded = await readAvro(await io.read(path));
    const { entries } = decodeManifestRecords(decoded.rawSchema, decoded.records);
    const specId = rec?.specId ?? Number(decoded.meta['partition-spec-id'] ?? 0);
    for (const e of entries) {
      if (e.status === 2) continue; // Scan Planning: DELETED entries are not used
      out.push({ file: e.file, seq: dataSequenceNumber(e, rec, path), specId, partition: partitionOf(e) });
    }
  }
  return out;
}

/**
 * Sequence Number Inheritance: explicit, else inherited by ADDED entries; v1 manifests read 0 (as
 * Java's InheritableMetadataFactory: a null is also 0 in a manifest of sequence number 0).
 */
function dataSequenceNumber(e: EntryRec, rec: ManifestFileRec | undefined, manifest: string): bigint {
  if (typeof e.seq === 'bigint') return e.seq;
  const manifestSeq = typeof rec?.seq === 'bigint' ? rec.seq : 0n;
  if (e.seq === undefined || e.status === 1 || manifestSeq === 0n) return manifestSeq;
  throw new Error(`${manifest}: ${e.file.path} is EXISTING without a sequence number`);
}

function partitionOf(e: EntryRec): Map<number, unknown> {
  const out = new Map<number, unknown>();
  e.file.partition.forEach((p, i) => {
    out.set(p.fieldId ?? 1000 + i, p.value);
  });
  return out;
}

function samePartition(a: Live, b: Live): boolean {
  if (a.specId !== b.specId) return false;
  if (a.partition.size !== b.partition.size) return false;
  for (const [id, v] of a.partition) {
    if (!b.partition.has(id) || valueKey(v) !== valueKey(b.partition.get(id))) return false;
  }
  return true;
}

/** Java PartitionSpec.isUnpartitioned: no fields, or only `void` ones. */
function isUnpartitioned(spec: SpecField[] | undefined): boolean {
  return spec?.every((f) => f.transform === 'void') === true;
}

// ---------------------------------------------------------------------------------------------
// Files

class CachedIo {
  private readonly cache = new Map<string, Promise<Uint8Array>>();
  constructor(private readonly reader: (uri: string) => Promise<Uint8Array>) {}
  read(uri: string): Promise<Uint8Array> {
    let p = this.cache.get(uri);
    if (!p) {
      p = this.reader(uri);
      this.cache.set(uri, p);
    }
    return p;
  }
}

interface ReadCtx extends ProjectionCtx {
  /** Decoded delete files by kind and URI (each is offered to many data files). */
  readonly memo: Map<string, Promise<unknown>>;
  readonly specs: Map<number, SpecField[]>;
}

/** Column Projection: a data file's identity-partition values, by source field id. */
function identityConstants(ctx: ReadCtx, d: Live): Map<number, unknown> {
  const out = new Map<number, unknown>();
  for (const f of ctx.specs.get(d.specId) ?? []) {
    const src = f.sourceIds[0];
    if (f.transform !== 'identity' || src === undefined || f.fieldId === undefined) continue;
    if (!d.partition.has(f.fieldId)) continue;
    const t = ctx.types.get(src);
    if (typeof t === 'string') out.set(src, partitionValue(d.partition.get(f.fieldId), t));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Delete files

function memo<T>(ctx: ReadCtx, key: string, load: () => Promise<T>): Promise<T> {
  let p = ctx.memo.get(key) as Promise<T> | undefined;
  if (!p) {
    p = load();
    ctx.memo.set(key, p);
  }
  return p;
}

const readPositionDeletes = (ctx: ReadCtx, f: DataFileRec) =>
  memo(ctx, `pos:${f.path}`, () => readPositionDeletesUncached(ctx, f));
const readEqualityDeletes = (ctx: ReadCtx, f: DataFileRec) =>
  memo(ctx, `eq:${f.path}`, () => readEqualityDeletesUncached(ctx, f));
const readDv = (ctx: ReadCtx, f: DataFileRec) =>
  memo(ctx, `dv:${f.path}#${f.contentOffset}`, () => readDvUncached(ctx, f));

const POS_FILE_PATH = 2147483546;
const POS_POS = 2147483545;

/** Position Delete Files: data file path → deleted positions. */
async function readPositionDeletesUncached(ctx: ReadCtx, f: DataFileRec): Promise<Map<string, bigint[]>> {
  if (!/^parquet$/i.test(f.format)) throw new Error(`${f.path}: ${f.format} delete files are not read`);
  const uri = f.path;
  const file = await readParquetWithFallback(ctx, uri, [POS_FILE_PATH, POS_POS], ['file_path', 'pos']);
  const pathNode = file.byId.get(POS_FILE_PATH);
  const posNode = file.byId.get(POS_POS);
  if (!pathNode || !posNode) throw new Error(`${uri}: no file_path / pos columns`);
  const out = new Map<string, bigint[]>();
  for (const r of file.rows) {
    const p = toCanon(r[pathNode.element.name], 'string') as string;
    const list = out.get(p) ?? [];
    list.push(BigInt(r[posNode.element.name] as bigint));
    out.set(p, list);
  }
  return out;
}

/** Position delete files may lack field ids: their reserved columns are then found by name. */
async function readParquetWithFallback(
  ctx: ReadCtx,
  uri: string,
  ids: number[],
  names: string[],
): Promise<ParquetFile> {
  const mapping = names.map((n, i) => ({ names: [n], id: ids[i], fields: [] }));
  return readParquet({ ...ctx, nameMapping: mapping }, uri, ids);
}

/** Equality Delete Files: the delete tuples of `equality_ids`, as keys. */
async function readEqualityDeletesUncached(
  ctx: ReadCtx,
  f: DataFileRec,
): Promise<{ ids: number[]; keys: Set<string> }> {
  const ids = f.equalityIds ?? [];
  if (ids.length === 0) throw new Error(`${f.path}: equality delete without equality_ids`);
  if (!/^parquet$/i.test(f.format)) throw new Error(`${f.path}: ${f.format} delete files are not read`);
  const file = await readParquet(ctx, f.path, ids);
  const keys = new Set<string>();
  for (const r of file.rows) keys.add(tupleKey(ids.map((id) => valueById(ctx, file, r, id, new Map()))));
  return { ids, keys };
}

/** Deletion Vectors: the blob at content_offset / content_size_in_bytes of the Puffin file. */
async function readDvUncached(ctx: ReadCtx, f: DataFileRec): Promise<bigint[]> {
  if (f.contentOffset === null || f.contentSize === null)
    throw new Error(`${f.path}: deletion vector without content_offset / content_size_in_bytes`);
  const bytes = await ctx.read(f.path);
  const start = Number(f.contentOffset);
  const blob = bytes.subarray(start, start + Number(f.contentSize));
  const positions = decodeDeletionVector(blob);
  // As Java's deserializer: the manifest's record_count is the vector's cardinality.
  if (f.recordCount !== undefined && BigInt(positions.length) !== f.recordCount)
    throw new Error(
      `${f.path}: deletion vector holds ${positions.length} positions, record_count ${f.recordCount}`,
    );
  return positions;
}

/**
 * Event ids (sorted, as text) per table of `namespace`, read by this reader from the snapshot
 * `ref` names (default: the current one); tables without that ref are left out.
 */
export async function eventIdsAt(
  wh: { readonly catalog: Catalog; readonly store: Pick<ObjectStore, 'get'> },
  namespace: string,
  ref?: string,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const name of (await wh.catalog.listTables(namespace)).sort()) {
    const t = await wh.catalog.loadTable({ namespace, name });
    const snapshotId = ref === undefined ? undefined : t.metadata.refs[ref]?.['snapshot-id'];
    if (ref !== undefined && snapshotId === undefined) continue;
    const read = (uri: string) => wh.store.get(uri);
    const { rows } = await readTableRows({
      metadataJson: await read(t.metadataLocation),
      read,
      ...(snapshotId === undefined ? {} : { snapshotId }),
    });
    out.set(name, rows.map((r) => String(r.event_id)).sort());
  }
  return out;
}
