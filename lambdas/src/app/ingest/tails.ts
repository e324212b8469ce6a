/**
 * The ledger chain tails of the shard, and skipping the records at or below them (exactly once:
 * see the ingest app's module doc).
 */

import { mergeBySeq } from '../../engine/columnar-stage.ts';
import { compareSequence } from '../../ports/ledger.ts';
import type { IngestDeps } from './deps.ts';
import type { Routed, TableWork } from './routed.ts';
import { readBack } from './stage-json.ts';

/** Starts reading the chain tails of the shard (table → last sequence number); await it when needed. */
export function readTails(deps: IngestDeps, shardId: string): Promise<Map<string, string>> {
  const tails = deps.ledger.shardTails(shardId);
  tails.catch(() => undefined); // awaited later; no unhandled rejection meanwhile
  return tails;
}

/** Drops from each table's work the records its chain already covers; returns how many. */
export async function skipStaged(routed: Routed, tails: ReadonlyMap<string, string>): Promise<number> {
  let skipped = 0;
  for (const w of routed.work.values()) {
    const tail = tails.get(w.table);
    if (tail !== undefined) skipped += await skipTable(routed, w, tail);
  }
  return skipped;
}

async function skipTable(routed: Routed, w: TableWork, tail: string): Promise<number> {
  const { records } = routed.batch;
  const isStaged = (i: number) => compareSequence(records[i]!.sequenceNumber, tail) <= 0;
  const before = w.json.length + w.avro.length;
  let skipped = 0;
  let json = w.json.filter((p) => !isStaged(p.seq));
  const avro = w.avro.filter((a) => !isStaged(a.index));
  const columnar = routed.fast?.tables.get(w.table);
  if (columnar && columnar.rowCount > 0 && isStaged(columnar.seqList[0]!)) {
    // A retry: rare, so the skipped table takes the generic path.
    // All its rows count as skipped; the unstaged rest joins `json`, netted out just below.
    skipped += columnar.rowCount;
    const rest = (await readBack(w, columnar)).filter((p) => !isStaged(p.seq));
    json = mergeBySeq(json, rest);
    routed.fast?.tables.delete(w.table);
  }
  w.json = json;
  w.avro = avro;
  return skipped + before - json.length - avro.length;
}
