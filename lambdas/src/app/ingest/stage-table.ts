/**
 * Staging one table's records of the batch: data files for what fits the table as it is, a
 * pending fragment (the records' original bytes) for what needs the committer, dead letters for
 * what cannot land; and the file descriptors of its ledger entry.
 */
import { declaredTypesOf, partitionCandidatesFor, tableId, upsertFor } from '../../config.ts';
import type { ColumnarTableBatch } from '../../engine/columnar-batch.ts';
import { encodeFragment, type FragmentRecord } from '../../engine/pending-fragment.ts';
import { dataFileToJson, withoutColumnMetrics } from '../../iceberg/manifest/data-file-json.ts';
import type { DeadLetterRecord } from '../../ports/dead-letters.ts';
import { type LedgerFile, padSequence } from '../../ports/ledger.ts';
import { loadDeps } from './deps.ts';
import type { TableIngest } from './result.ts';
import { stageAvro } from './stage-avro.ts';
import { stageJson } from './stage-json.ts';
import type { StagedPart, StageInput, WrittenFile } from './staged-part.ts';

/** Descriptors above this size (all files of one entry) lose their column metrics (DynamoDB's 400 KB item limit). */
const MAX_DESCRIPTOR_CHARS = 150_000;

export interface StagedTable {
  /** The files of the table's ledger entry: data files, then the pending fragment, if any. */
  readonly files: LedgerFile[];
  readonly rejected: DeadLetterRecord[];
  readonly rows: number;
  readonly pending: number;
  readonly path: TableIngest['path'];
  readonly coerced?: string;
}

/** Stages the table's JSON records, then its Avro records, then the pending fragment of both. */
export async function stageTable(
  input: Pick<StageInput, 'deps' | 'batch' | 'work' | 'staged'>,
  columnar: ColumnarTableBatch | undefined,
): Promise<StagedTable> {
  const { deps } = input;
  const cfg = deps.config;
  const table = input.work.table;
  const id = tableId(cfg, table);
  const base = await deps.tables.get(id);
  const t: StageInput = {
    ...input,
    id,
    base,
    candidates: partitionCandidatesFor(cfg, table),
    load: loadDeps(deps),
  };
  const json = await stageJson(t, columnar);
  const avro = await stageAvro(t);
  const written = [...json.files, ...avro.files];
  const pending = [...json.pending, ...avro.pending];
  const files = entryFiles(written);
  if (pending.length > 0) files.push(await putPendingFragment(t, pending));
  return {
    files,
    rejected: [...json.rejected, ...avro.rejected],
    rows: written.reduce((n, w) => n + Number(w.file.record_count), 0),
    pending: pending.length,
    path: pathOf(json, avro),
    ...(json.coerced === undefined ? {} : { coerced: json.coerced }),
  };
}

/** Pending if any Avro record is; else the JSON records' path, or the Avro records' when JSON had none. */
function pathOf(json: StagedPart, avro: StagedPart): TableIngest['path'] {
  if (avro.path === 'pending') return 'pending';
  return json.path === 'none' ? avro.path : json.path;
}

/** The data files' descriptors for the ledger entry (without column metrics when they would be too large). */
function entryFiles(written: readonly WrittenFile[]): LedgerFile[] {
  const compact = written.reduce((n, w) => n + dataFileToJson(w.file).length, 0) > MAX_DESCRIPTOR_CHARS;
  return written.map(({ file: f, schemaId, specId }) => ({
    uri: f.file_path,
    kind: 'data',
    records: Number(f.record_count),
    bytes: Number(f.file_size_in_bytes),
    schemaId,
    specId,
    dataFile: dataFileToJson(compact ? withoutColumnMetrics(f) : f),
  }));
}

/** Stores the pending records' original bytes (and what field lists made of them) as one fragment. */
async function putPendingFragment(t: StageInput, pending: number[]): Promise<LedgerFile> {
  const { deps, batch } = t;
  const { records, shardId } = batch;
  const { table, transformed, ops, versions } = t.work;
  pending.sort((a, b) => a - b);
  const fragment: FragmentRecord[] = pending.map((i) => {
    const r = records[i]!;
    const value = transformed.get(i);
    const op = ops.get(i);
    const version = versions.get(i);
    return {
      ...(op === undefined ? {} : { op }),
      ...(version === undefined ? {} : { version }),
      sequenceNumber: r.sequenceNumber,
      partitionKey: r.partitionKey,
      arrivalMs: r.arrivalMs,
      data: r.data,
      ...(value === undefined ? {} : { value }),
    };
  });
  // A table its DynamoDB changes declared: the committer learns its key from the fragment.
  const upsert = upsertFor(deps.config, table);
  const types = declaredTypesOf(deps.config, table);
  const declared = {
    ...(upsert?.envelope === 'dynamodb' ? { upsert } : {}),
    // Types the records' schemas declared (Debezium): the committer types the rows by them.
    ...(types ? { types } : {}),
  };
  const bytes = encodeFragment({ table, shardId, ...declared }, fragment);
  const firstSeq = padSequence(records[pending[0]!]!.sequenceNumber).replace(/^0+(?=\d)/, '');
  const tid = tableId(deps.config, table);
  const uri = `${deps.stagingUri}/pending/${tid.namespace}/${tid.name}/${shardId}/${firstSeq}-${deps.ids.uuid()}.jsonl.gz`;
  await deps.store.put(uri, bytes);
  t.staged.push(uri);
  return { uri, kind: 'pending', records: pending.length, bytes: bytes.length };
}
