/**
 * The files a streaming ingest staged for a table that its committed metadata does not name yet:
 * the ingest writes data files into the table's own folder before the committer references them,
 * so orphan cleanup must spare them however old they are (a committer outage may last days).
 *
 * Every ledger entry above the table's commit watermark is taken, whatever its status: an entry
 * marked committed above the watermark of `metadata` was committed after `metadata` was read, so
 * its files are referenced by metadata orphan cleanup does not see. Only shards with staged work
 * are read (the sparse index); the scheduled maintenance holds the table's commit lease while it
 * cleans, so no commit can move a shard's entries from staged to committed meanwhile.
 */

import { readWatermark } from '../../engine/watermark.ts';
import type { TableMetadata } from '../../iceberg/table-metadata.ts';
import type { Ledger } from '../../ports/ledger.ts';
import type { ObjectStore } from '../../ports/object-store.ts';

/** Entries read per ledger query. */
const PAGE = 500;

/**
 * URIs of every file named by `table`'s ledger entries above the watermark of `branch` (the one
 * the table commits to, default main) in `metadata`.
 */
export async function stagedFiles(
  ledger: Pick<Ledger, 'shardsWithStagedWork' | 'entriesAfter'>,
  store: ObjectStore,
  table: string,
  metadata: TableMetadata,
  branch?: string,
): Promise<Set<string>> {
  const watermark = await readWatermark(store, metadata, branch);
  const out = new Set<string>();
  for (const shard of await ledger.shardsWithStagedWork(table)) {
    let after = watermark.get(shard) ?? null;
    for (;;) {
      const page = await ledger.entriesAfter(table, shard, after, PAGE);
      for (const e of page) for (const f of e.files) out.add(f.uri);
      if (page.length < PAGE) break;
      after = page[page.length - 1]!.lastSequence;
    }
  }
  return out;
}
