/**
 * Row lineage of a table's rows, read INDEPENDENTLY of lambdas/src: the manifest list and
 * manifests with avsc (test/unit/avro/avsc-reader.ts), the data files with hyparquet, and the spec's
 * rules applied here (apache/iceberg format/spec.md, §Row Lineage, §First Row ID Inheritance,
 * §Sequence Number Inheritance; Appendix E "Version 3"):
 *
 * - a data file's `first_row_id` is its own, else (in a manifest with a `first_row_id`) the
 *   manifest's plus the record counts of the preceding live data files without one;
 * - a row's `_row_id` is the file's non-null `_row_id` value (field id 2147483540), else
 *   `first_row_id` + the row's position; its `_last_updated_sequence_number` the file's non-null
 *   value (field id 2147483539), else the file's data sequence number;
 * - both are null when the file has no `first_row_id`.
 */
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { readTableModel } from '../../../helpers/iceberg-validator.ts';
import { readWithAvsc } from '../../avro/avsc-reader.ts';

export const ROW_ID_FIELD_ID = 2147483540;
export const LAST_UPDATED_FIELD_ID = 2147483539;

export interface RowLineage {
  readonly rowId: bigint | null;
  readonly seq: bigint | null;
}

export interface FileLineage {
  readonly path: string;
  readonly status: number;
  readonly firstRowId: bigint | null;
  readonly dataSequenceNumber: bigint;
  readonly recordCount: bigint;
  /** Whether the file holds the lineage columns (by field id), and with no null value. */
  readonly materialized: { rowId: boolean; seq: boolean };
  /** The value of the key column → the row's lineage (every row of the file, deleted or not). */
  readonly rows: Map<string, RowLineage>;
}

export interface ManifestListEntry {
  readonly path: string;
  readonly content: number;
  readonly firstRowId: bigint | null;
  readonly addedRows: bigint;
  readonly existingRows: bigint;
}

export interface TableLineage {
  readonly manifests: ManifestListEntry[];
  /** Live (ADDED / EXISTING) data files of the snapshot. */
  readonly files: FileLineage[];
  /** Key → lineage over every live data file. */
  readonly byKey: Map<string, RowLineage & { readonly path: string }>;
}

type Rec = Record<string, unknown>;

const long = (v: unknown): bigint | null =>
  v === null || v === undefined ? null : typeof v === 'bigint' ? v : BigInt(v as number);

/**
 * The lineage of every row of the current snapshot's live data files, keyed by the value of the
 * top-level column `keyColumn` (rendered with String()).
 */
export async function tableLineage(
  metadataJson: Uint8Array | string,
  read: (uri: string) => Promise<Uint8Array>,
  keyColumn: string,
): Promise<TableLineage> {
  const { model } = readTableModel(metadataJson);
  const snap = model.snapshots.find((s) => s.id === model.currentSnapshotId);
  if (!snap?.manifestList) throw new Error('no current snapshot with a manifest list');
  const list = await readWithAvsc(await read(snap.manifestList));
  const manifests: ManifestListEntry[] = list.records.map((m) => ({
    path: String(m.manifest_path),
    content: Number(m.content ?? 0),
    firstRowId: long(m.first_row_id),
    addedRows: long(m.added_rows_count) ?? 0n,
    existingRows: long(m.existing_rows_count) ?? 0n,
  }));
  const files: FileLineage[] = [];
  for (const [i, m] of manifests.entries()) {
    if (m.content !== 0) continue;
    const manifestSeq = long(list.records[i]!.sequence_number) ?? 0n;
    let next = m.firstRowId;
    for (const e of (await readWithAvsc(await read(m.path))).records) {
      const df = e.data_file as Rec;
      const status = Number(e.status);
      const count = long(df.record_count)!;
      let first = long(df.first_row_id);
      if (first === null && next !== null && status !== 2) {
        first = next;
        next += count;
      }
      if (status === 2) continue;
      // An ADDED entry with a null sequence number takes the manifest's.
      const seq = long(e.sequence_number) ?? (status === 1 ? manifestSeq : 0n);
      files.push(await fileLineage(read, String(df.file_path), status, first, seq, count, keyColumn));
    }
  }
  const byKey = new Map<string, RowLineage & { path: string }>();
  for (const f of files)
    for (const [k, l] of f.rows) {
      if (byKey.has(k)) throw new Error(`key ${k} is in two live data files`);
      byKey.set(k, { ...l, path: f.path });
    }
  return { manifests, files, byKey };
}

async function fileLineage(
  read: (uri: string) => Promise<Uint8Array>,
  path: string,
  status: number,
  firstRowId: bigint | null,
  dataSequenceNumber: bigint,
  recordCount: bigint,
  keyColumn: string,
): Promise<FileLineage> {
  const bytes = await read(path);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const meta = parquetMetadata(file);
  const nameOf = (id: number) => meta.schema.find((e) => e.field_id === id)?.name;
  const rowIdCol = nameOf(ROW_ID_FIELD_ID);
  const seqCol = nameOf(LAST_UPDATED_FIELD_ID);
  const columns = [keyColumn, ...(rowIdCol ? [rowIdCol] : []), ...(seqCol ? [seqCol] : [])];
  const rows = (await parquetReadObjects({ file, columns, compressors })) as Rec[];
  const out = new Map<string, RowLineage>();
  let allRowIds = rowIdCol !== undefined;
  let allSeqs = seqCol !== undefined;
  rows.forEach((r, pos) => {
    const storedId = rowIdCol ? long(r[rowIdCol]) : null;
    const storedSeq = seqCol ? long(r[seqCol]) : null;
    if (storedId === null) allRowIds = false;
    if (storedSeq === null) allSeqs = false;
    const lineage: RowLineage =
      firstRowId === null
        ? { rowId: null, seq: null }
        : { rowId: storedId ?? firstRowId + BigInt(pos), seq: storedSeq ?? dataSequenceNumber };
    out.set(String(r[keyColumn]), lineage);
  });
  return {
    path,
    status,
    firstRowId,
    dataSequenceNumber,
    recordCount,
    materialized: { rowId: allRowIds, seq: allSeqs },
    rows: out,
  };
}

/** The Parquet schema elements (name, field id, repetition) of a data file's top-level columns. */
export async function topLevelColumns(
  bytes: Uint8Array,
): Promise<
  { name: string; fieldId: number | undefined; repetition: string | undefined; type: string | undefined }[]
> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const meta = parquetMetadata(file);
  // Top-level columns of these flat tables: every element after the root.
  return meta.schema.slice(1).map((e) => ({
    name: e.name,
    fieldId: e.field_id,
    repetition: e.repetition_type,
    type: e.type,
  }));
}
