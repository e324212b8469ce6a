/**
 * Deframing a batch (records/framing/deframe.ts): KPL aggregates, compressed payloads,
 * CloudWatch Logs batches and EventBridge events become the records routing sees, each at its
 * own position; what cannot be deframed is a dead letter holding the bytes as they came.
 */
import type { DeadLetterRecord } from '../../ports/dead-letters.ts';
import { streamDeadLetter } from '../../ports/dead-letters.ts';
import { type DeframeCounts, deframe, deframeOptionsOf } from '../../records/framing/deframe.ts';
import type { KinesisBatch } from '../../records/kinesis-event.ts';
import type { IngestDeps } from './deps.ts';
import { countDeadLetters } from './letters.ts';

export interface DeframedBatch {
  /** The batch of records to route (the input batch itself when none was framed). */
  readonly batch: KinesisBatch;
  readonly dead: DeadLetterRecord[];
  readonly deadCounts: Record<string, number>;
  readonly counts: DeframeCounts;
}

export function deframeBatch(deps: Pick<IngestDeps, 'config'>, batch: KinesisBatch): DeframedBatch {
  const out = deframe(batch.records, deframeOptionsOf(deps.config));
  const dead = out.rejected.map((x, i) =>
    streamDeadLetter(
      { ...x.record, shardId: batch.shardId },
      // No text: the dead letter keeps the bytes as base64, so a replay puts back what was sent.
      { line: i + 1, reason: x.reason, detail: x.detail },
    ),
  );
  const deadCounts: Record<string, number> = {};
  countDeadLetters(deadCounts, dead);
  return {
    batch: out.records === batch.records ? batch : { ...batch, records: out.records },
    dead,
    deadCounts,
    counts: out.counts,
  };
}
