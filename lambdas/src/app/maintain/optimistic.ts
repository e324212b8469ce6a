/**
 * The optimistic loop every maintenance commit shares: load the table, build the updates from what
 * it holds now, let the catalog's compare-and-swap decide. A conflict deletes the attempt's files
 * and tries again (bounded, with backoff, as appends do); any other failure leaves them, since the
 * new metadata may be live and name them (an orphan is harmless, a missing file is not).
 */

import { backoffMs, type CommitDeps, cleanUpOldMetadata, defaultSleep } from '../../engine/append.ts';
import { ErrorKind, FloeError, isFloeError } from '../../errors.ts';
import { applyUpdates, type TableUpdate } from '../../iceberg/metadata/index.ts';
import { type LoadedTable, type TableIdentifier, tableIdToString } from '../../ports/catalog.ts';
import { deleteQuietly } from '../../ports/object-store.ts';

/** One attempt's changes: metadata updates, and the files written for them. */
export interface Attempt<T> {
  readonly updates: readonly TableUpdate[];
  readonly written: readonly string[];
  readonly result: T;
}

export interface Committed<T> {
  readonly table: LoadedTable;
  /** Undefined when `build` gave up (nothing was committed). */
  readonly result?: T;
  readonly attempts: number;
}

const ATTEMPTS = 8;

export async function commitOptimistically<T>(
  deps: CommitDeps,
  id: TableIdentifier,
  build: (base: LoadedTable, attempt: number) => Promise<Attempt<T> | undefined>,
  maxAttempts = ATTEMPTS,
): Promise<Committed<T>> {
  for (let attempt = 1; ; attempt++) {
    const base = await deps.catalog.loadTable(id);
    let written: readonly string[] = [];
    try {
      const a = await build(base, attempt);
      if (a === undefined) return { table: base, attempts: attempt };
      written = a.written;
      const next = applyUpdates(base.metadata, a.updates, {
        nowMs: deps.clock.nowMs(),
        metadataLocation: base.metadataLocation,
      });
      const committed = await deps.catalog.commitTable(base, next);
      await cleanUpOldMetadata(deps.store, base, committed);
      return { table: committed, result: a.result, attempts: attempt };
    } catch (e) {
      if (!isFloeError(e, ErrorKind.CommitConflict)) throw e;
      await deleteQuietly(deps.store, written);
      if (attempt >= maxAttempts) {
        throw new FloeError(
          ErrorKind.CommitConflict,
          `gave up committing to ${tableIdToString(id)} after ${attempt} attempts: ${e.message}`,
          { cause: e, retryable: true, context: { table: tableIdToString(id) } },
        );
      }
      await (deps.sleep ?? defaultSleep)(backoffMs(attempt));
    }
  }
}
