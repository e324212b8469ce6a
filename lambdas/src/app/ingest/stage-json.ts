/** Staging a table's JSON records: columns straight to Parquet, rows through the generic path, or pending. */
import { inferOptionsFor, typeConflictFor, upsertFor } from '../../config.ts';
import type { ColumnarTableBatch } from '../../engine/columnar-batch.ts';
import { LocalPart } from '../../engine/columnar-part.ts';
import { decideColumnar, mergeBySeq, reparse, writeParts } from '../../engine/columnar-stage.ts';
import type { DeadLetter } from '../../engine/dead-letters.ts';
import { coercionSummary, refuseAlone, screen, stage } from '../../engine/generic-stage.ts';
import type { PendingRecord } from '../../engine/load-types.ts';
import { evolve, UseGenericPath } from '../../engine/table-staging.ts';
import type { LoadedTable } from '../../ports/catalog.ts';
import type { DeadLetterRecord } from '../../ports/dead-letters.ts';
import { deleteQuietly } from '../../ports/object-store.ts';
import { formatJsonRecord } from '../../records/json-line.ts';
import { StructInferrer } from '../../schema/infer.ts';
import { letter } from './letters.ts';
import type { TableWork } from './routed.ts';
import { NOTHING_STAGED, type StagedPart, type StageInput, type WrittenFile } from './staged-part.ts';

/** The JSON records: the columnar fast path when the batch fits the table as it is, else the generic path. */
export async function stageJson(
  t: StageInput,
  columnar: ColumnarTableBatch | undefined,
): Promise<StagedPart> {
  let json = t.work.json;
  // Upsert tables: the committer orders every change of a commit by key, so all of them wait for it.
  if (upsertFor(t.deps.config, t.work.table)) {
    return json.length === 0
      ? NOTHING_STAGED
      : { files: [], rejected: [], pending: json.map((p) => p.seq), path: 'pending' };
  }
  if (columnar && columnar.rowCount > 0) {
    const fitted = t.base && json.length === 0 ? await columnarFits(t, t.base, columnar) : undefined;
    if (fitted) return { files: fitted, rejected: [], pending: [], path: 'columnar' };
    json = mergeBySeq(json, await readBack(t.work, columnar));
  }
  return json.length > 0 ? await stageGeneric(t, json) : NOTHING_STAGED;
}

/**
 * The fast path's records of a table as JSON records, shaped by its field lists as the fast path
 * took them (a reshaped record is written as reshaped: `transformed`).
 */
export async function readBack(w: TableWork, columnar: ColumnarTableBatch): Promise<PendingRecord[]> {
  const reshape = w.reshape;
  if (!reshape) return reparse(columnar);
  const records = await reparse(columnar, reshape);
  for (const p of records) w.transformed.set(p.seq, formatJsonRecord(p.value));
  return records;
}

/** Writes the fast path's columns as data files when the batch needs no change to the table. */
async function columnarFits(
  t: StageInput,
  base: LoadedTable,
  columnar: ColumnarTableBatch,
): Promise<WrittenFile[] | undefined> {
  const parts = [new LocalPart(columnar, t.load.encoder)];
  // A promotion the values need is an evolution: those records go pending, like the generic path's.
  const decided = await decideColumnar(t.deps, t.id, parts, base);
  if (!decided) return undefined;
  const ev = evolve(base, decided.batchType, t.candidates, decided.fit);
  if (ev.updates.length > 0) return undefined;
  const before = t.staged.length;
  try {
    const files = await writeParts(t.load, base.metadata, ev.schema, ev.spec, parts, t.staged);
    const schemaId = ev.schema.schemaId;
    const specId = ev.spec['spec-id'];
    return files.map((file) => ({ file, schemaId, specId }));
  } catch (e) {
    if (!(e instanceof UseGenericPath)) throw e;
    // Files stored before the encoder gave up would be orphans: the generic path writes anew.
    await deleteQuietly(t.deps.store, t.staged.splice(before));
    return undefined;
  }
}

/** The generic path: rows screened and written when they fit the table as it is, else kept pending. */
async function stageGeneric(t: StageInput, json: PendingRecord[]): Promise<StagedPart> {
  const cfg = t.deps.config;
  const { table } = t.work;
  const { base } = t;
  const options = inferOptionsFor(cfg, table);
  const inferrer = () => new StructInferrer(options);
  const coerce = typeConflictFor(cfg, table) === 'coerce';
  const screened = await screen(
    t.load,
    t.id,
    json,
    inferrer(),
    inferrer,
    { base },
    {
      coerce,
      maxColumns: cfg.limits.maxColumnsPerTable,
    },
  );
  const coerced = coercionSummary(screened.coerced);
  const rejected: DeadLetterRecord[] = [];
  let files: WrittenFile[] = [];
  let pending: number[] = [];
  let path: StagedPart['path'] = 'none';
  const accepted = screened.accepted;
  const fits =
    accepted.length > 0 &&
    base !== undefined &&
    evolve(base, screened.batchType, t.candidates, screened.fit).updates.length === 0;
  if (fits && base) {
    for (const d of screened.rejected) rejected.push(tableLetter(t, d));
    const out = await stage(t.load, base, screened.batchType, t.candidates, accepted, t.staged, screened.fit);
    for (const d of out.rejected) rejected.push(tableLetter(t, d));
    const schemaId = base.metadata['current-schema-id'];
    const specId = out.prepared.specId;
    files = out.prepared.dataFiles.map((file) => ({ file, schemaId, specId }));
    path = 'generic';
  } else if (screened.accepted.length + screened.rejected.length > 0) {
    // The table must change for them: only what can never land is refused here; the committer
    // judges the rest together with every other pending record (see refuseAlone).
    // (Under `coerce` a value that conflicts with its column may still be converted: the
    // committer decides that too.)
    const alone = refuseAlone(table, coerce ? undefined : base, json, inferrer);
    for (const d of alone.rejected) rejected.push(tableLetter(t, d));
    if (alone.kept.length > 0) {
      pending = alone.kept.map((p) => p.seq);
      path = 'pending';
    }
  }
  return { files, rejected, pending, path, ...(coerced === undefined ? {} : { coerced }) };
}

/** A dead letter of the load helpers, as the stream's record it came from. */
function tableLetter(t: StageInput, d: DeadLetter): DeadLetterRecord {
  return letter(t.batch, d.line - 1, d.reason, d.detail, t.work.table);
}
