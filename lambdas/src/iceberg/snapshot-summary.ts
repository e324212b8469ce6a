/**
 * Snapshot summaries (spec "Snapshots" → summary; facts doc §1.4; Java `SnapshotSummary` and
 * `SnapshotProducer.summary`). Every value is a decimal string.
 */
import { type DataFile, DataFileContent } from './manifest/types.ts';
import type { SnapshotOperation } from './snapshot.ts';

export interface SummaryChanges {
  readonly added: readonly DataFile[];
  readonly removed: readonly DataFile[];
  readonly addedDeletes?: readonly DataFile[];
  readonly removedDeletes?: readonly DataFile[];
}

interface Side {
  dataFiles: bigint;
  records: bigint;
  size: bigint;
  eqDeleteFiles: bigint;
  posDeleteFiles: bigint;
  dvs: bigint;
  posDeletes: bigint;
  eqDeletes: bigint;
}

/** The running totals and the added/removed keys that feed them (Java `updateTotal`). */
const TOTALS: ReadonlyArray<readonly [total: string, added: string, removed: string]> = [
  ['total-records', 'added-records', 'deleted-records'],
  ['total-files-size', 'added-files-size', 'removed-files-size'],
  ['total-data-files', 'added-data-files', 'deleted-data-files'],
  ['total-delete-files', 'added-delete-files', 'removed-delete-files'],
  ['total-position-deletes', 'added-position-deletes', 'removed-position-deletes'],
  ['total-equality-deletes', 'added-equality-deletes', 'removed-equality-deletes'],
];

/**
 * Builds a snapshot summary: `operation`, then `extra` (custom keys), then the added/removed
 * counts (omitted when 0), `changed-partition-count`, and the totals. A total is the previous
 * snapshot's total + added − removed; with no previous snapshot the previous totals count as 0;
 * when `previous` lacks a total (or it is not a number, or the result would be negative) that
 * total is left out, as Java does.
 *
 * `changed-partition-count` counts distinct partition tuples among all files given; tuples of
 * different specs are not told apart (DataFile carries no spec id).
 */
export function summarize(
  operation: SnapshotOperation,
  changes: SummaryChanges,
  previous?: Readonly<Record<string, string>>,
  extra?: Readonly<Record<string, string>>,
): Record<string, string> & { operation: SnapshotOperation } {
  const add = tally([...changes.added, ...(changes.addedDeletes ?? [])]);
  const rem = tally([...changes.removed, ...(changes.removedDeletes ?? [])]);
  const metrics: Array<[string, bigint]> = [
    ['added-data-files', add.dataFiles],
    ['deleted-data-files', rem.dataFiles],
    ['added-delete-files', add.eqDeleteFiles + add.posDeleteFiles + add.dvs],
    ['added-equality-delete-files', add.eqDeleteFiles],
    ['removed-equality-delete-files', rem.eqDeleteFiles],
    ['added-position-delete-files', add.posDeleteFiles],
    ['removed-position-delete-files', rem.posDeleteFiles],
    ['added-dvs', add.dvs],
    ['removed-dvs', rem.dvs],
    ['removed-delete-files', rem.eqDeleteFiles + rem.posDeleteFiles + rem.dvs],
    ['added-records', add.records],
    ['deleted-records', rem.records],
    ['added-files-size', add.size],
    ['removed-files-size', rem.size],
    ['added-position-deletes', add.posDeletes],
    ['removed-position-deletes', rem.posDeletes],
    ['added-equality-deletes', add.eqDeletes],
    ['removed-equality-deletes', rem.eqDeletes],
  ];
  const out: Record<string, string> & { operation: SnapshotOperation } = { operation };
  for (const [k, v] of Object.entries(extra ?? {})) if (k !== 'operation') out[k] = v;
  const counts = new Map<string, bigint>();
  for (const [k, v] of metrics) {
    counts.set(k, v);
    if (v > 0n) out[k] = v.toString();
  }
  out['changed-partition-count'] = String(changedPartitions(changes));
  // No previous snapshot: every total starts from 0 (Java's empty-table defaults).
  const prev = previous ?? Object.fromEntries(TOTALS.map(([t]) => [t, '0']));
  for (const [total, added, removed] of TOTALS) {
    const before = prev[total];
    if (before === undefined || !/^-?\d+$/.test(before.trim())) continue;
    const after = BigInt(before.trim()) + counts.get(added)! - counts.get(removed)!;
    if (after >= 0n) out[total] = after.toString();
  }
  return out;
}

function tally(files: readonly DataFile[]): Side {
  const s: Side = {
    dataFiles: 0n,
    records: 0n,
    size: 0n,
    eqDeleteFiles: 0n,
    posDeleteFiles: 0n,
    dvs: 0n,
    posDeletes: 0n,
    eqDeletes: 0n,
  };
  for (const f of files) {
    switch (f.content) {
      case DataFileContent.DATA:
        s.dataFiles += 1n;
        s.records += f.record_count;
        s.size += f.file_size_in_bytes;
        break;
      case DataFileContent.POSITION_DELETES:
        // A deletion vector is a blob inside a Puffin file: count its blob size, not the file's.
        if (f.file_format.toUpperCase() === 'PUFFIN') {
          s.dvs += 1n;
          s.size += f.content_size_in_bytes ?? f.file_size_in_bytes;
        } else {
          s.posDeleteFiles += 1n;
          s.size += f.file_size_in_bytes;
        }
        s.posDeletes += f.record_count;
        break;
      case DataFileContent.EQUALITY_DELETES:
        s.eqDeleteFiles += 1n;
        s.eqDeletes += f.record_count;
        s.size += f.file_size_in_bytes;
        break;
    }
  }
  return s;
}

function changedPartitions(c: SummaryChanges): number {
  const keys = new Set<string>();
  const all = [...c.added, ...c.removed, ...(c.addedDeletes ?? []), ...(c.removedDeletes ?? [])];
  for (const f of all) keys.add(partitionKey(f.partition));
  return keys.size;
}

function partitionKey(values: readonly unknown[]): string {
  return values
    .map((v) => {
      if (v === null || v === undefined) return 'null';
      if (v instanceof Uint8Array) return `b:${Array.from(v).join(',')}`;
      return `${typeof v}:${String(v)}`;
    })
    .join('\u0000');
}
