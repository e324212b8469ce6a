/** The dead letters of a batch's records: built with the record's key, counted, written. */

import { inGroups } from '../../engine/bounded.ts';
import type { DeadLetter } from '../../engine/dead-letters.ts';
import {
  type DeadLetterRecord,
  type DeadLetterStore,
  recordText,
  streamDeadLetter,
} from '../../ports/dead-letters.ts';
import type { KinesisBatch } from '../../records/kinesis-event.ts';

/** Record `i`'s dead letter (its key is deterministic: shard + sequence number). */
export function letter(
  batch: Pick<KinesisBatch, 'shardId' | 'records'>,
  i: number,
  reason: DeadLetter['reason'],
  detail: string,
  table?: string,
): DeadLetterRecord {
  const r = batch.records[i]!;
  return streamDeadLetter(
    { ...r, shardId: batch.shardId },
    {
      line: i + 1,
      reason,
      detail,
      ...(table === undefined ? {} : { table }),
      ...textOf(r.data),
    },
  );
}

/** Adds the letters to the counts by reason. */
export function countDeadLetters(counts: Record<string, number>, letters: readonly DeadLetterRecord[]): void {
  for (const d of letters) counts[d.reason] = (counts[d.reason] ?? 0) + 1;
}

/** Adds counts by reason to `into` (keys new to it in the order they come). */
export function addCounts(
  into: Record<string, number>,
  counts: Readonly<Record<string, number>>,
): Record<string, number> {
  for (const [reason, n] of Object.entries(counts)) into[reason] = (into[reason] ?? 0) + n;
  return into;
}

/** Stores the letters, 16 at a time. */
export async function putDeadLetters(
  store: DeadLetterStore,
  letters: readonly DeadLetterRecord[],
): Promise<void> {
  await inGroups(letters, 16, (d) => store.put(d));
}

/** The record's text for its dead letter, when its bytes are text (see `recordText`). */
function textOf(data: Uint8Array): { text?: string } {
  const text = recordText(data);
  return text === undefined ? {} : { text };
}
