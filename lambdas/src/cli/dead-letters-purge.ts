/**
 * `floe dead-letters purge`: deletes the dead letters a filter selects (reason, source, table,
 * age), from the warehouse's store or a deployed pipeline's (`--store s3://…`), and reports how many
 * and how many bytes went, per reason. Deleting is for good, so a purge without any filter is
 * refused unless `--all` says so, and `--dry-run` lists what would go.
 *
 * Age: a streamed record's `arrivalTimeMs` (when it reached the stream), else the time the dead
 * letter was stored (the load run that rejected it; the store's last-modified time).
 */
import { type DeadLetterFilter, selectDeadLetters } from '../app/replay.ts';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import type { DeadLetterRecord } from '../ports/dead-letters.ts';
import {
  describeFilter,
  type FilterOptions,
  filterOf,
  type OpenedStore,
  type StoreOptions,
  shorten,
  storeFor,
} from './dead-letters-command.ts';
import { formatDuration, parseDuration } from './duration.ts';
import { formatBytes, renderTable } from './format.ts';
import { openWarehouse } from './warehouse.ts';

export interface PurgeOptions extends Omit<FilterOptions, 'limit'>, StoreOptions {
  /** Only dead letters at least this old (`30m`, `12h`, `5d`; see duration.ts). */
  readonly olderThan?: string;
  /** Allow a purge with no filter at all (every dead letter in the store). */
  readonly all?: boolean;
  readonly dryRun?: boolean;
}

/** A dead letter chosen for deletion, with what the listing knows of it. */
interface Doomed {
  readonly record: DeadLetterRecord;
  readonly bytes: number;
  /** Arrival (streamed) or stored time; undefined when neither is known. */
  readonly bornMs: number | undefined;
}

const DELETE_CONCURRENCY = 16;

/** `nowMs` is injectable so tests judge ages against a fixed instant, not the wall clock. */
export async function purgeCommand(
  opts: PurgeOptions,
  out: (s: string) => void,
  nowMs: number = Date.now(),
): Promise<void> {
  const filter = filterOf(opts);
  const olderThanMs =
    opts.olderThan === undefined ? undefined : parseDuration(opts.olderThan, '--older-than');
  const opened = await storeFor(opts, openWarehouse(opts.warehouse));
  const narrowed =
    filter.reason !== undefined ||
    filter.source !== undefined ||
    filter.table !== undefined ||
    olderThanMs !== undefined;
  if (!narrowed && !opts.all) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `refusing to purge every dead letter in ${opened.where}: select some with --reason, --source, --table or --older-than, or pass --all to delete them all (--dry-run shows what would go)`,
    );
  }

  const doomed = await choose(opened, filter, olderThanMs, nowMs);
  const scope = [describeFilter(filter), olderThanMs === undefined ? '' : `older than ${opts.olderThan}`]
    .filter(Boolean)
    .join(', ');
  const matching = scope ? ` matching ${scope}` : '';
  if (doomed.length === 0) {
    out(`no dead letters${matching} in ${opened.where}; nothing to purge`);
    return;
  }
  const total = `${doomed.length} dead letter(s) (${formatBytes(sum(doomed))})${matching}`;
  if (opts.dryRun) {
    out(
      renderTable(
        ['key', 'reason', 'source:line', 'age', 'bytes', 'detail'],
        doomed.map((d) => [
          d.record.key,
          d.record.reason,
          `${d.record.source}:${d.record.line}`,
          d.bornMs === undefined ? '?' : formatDuration(nowMs - d.bornMs),
          String(d.bytes),
          shorten(d.record.detail, 60),
        ]),
      ),
    );
    out('');
    out(`dry run: would delete ${total} from ${opened.where}; nothing was deleted`);
  } else {
    await deleteAll(opened, doomed);
    out(`deleted ${total} from ${opened.where}`);
  }
  for (const line of byReason(doomed)) out(`  ${line}`);
}

/** The selected dead letters, joined with the listing's sizes and times, age filter applied. */
async function choose(
  opened: OpenedStore,
  filter: DeadLetterFilter,
  olderThanMs: number | undefined,
  nowMs: number,
): Promise<Doomed[]> {
  const [records, entries] = await Promise.all([
    selectDeadLetters(opened.store, filter),
    opened.store.entries(),
  ]);
  const stored = new Map(entries.map((e) => [`${e.reason}/${e.key}`, e]));
  const all = records.map((record): Doomed => {
    const entry = stored.get(`${record.reason}/${record.key}`);
    const arrival = record.arrivalTimeMs;
    return {
      record,
      bytes: entry?.bytes ?? 0,
      bornMs: typeof arrival === 'number' && Number.isFinite(arrival) ? arrival : entry?.storedAtMs,
    };
  });
  if (olderThanMs === undefined) return all;
  // Unknown age (the object vanished between listing and reading) is never old enough.
  return all.filter((d) => d.bornMs !== undefined && nowMs - d.bornMs >= olderThanMs);
}

/** Deletes with a few requests in flight; a failure says how far the purge got. */
async function deleteAll(opened: OpenedStore, doomed: readonly Doomed[]): Promise<void> {
  let next = 0;
  let deleted = 0;
  const worker = async () => {
    while (next < doomed.length) {
      const d = doomed[next++]!;
      await opened.store.delete(d.record.key, d.record.reason);
      deleted++;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, doomed.length) }, worker));
  } catch (e) {
    next = doomed.length; // stop the other workers
    throw new FloeError(
      ErrorKind.Unexpected,
      `purge stopped after deleting ${deleted} of ${doomed.length} dead letter(s) from ${opened.where}: ${(e as Error).message ?? String(e)}`,
      {
        cause: e,
        retryable: isFloeError(e) && e.retryable,
        context: { deleted, selected: doomed.length, store: opened.where },
      },
    );
  }
}

function sum(ds: readonly Doomed[]): number {
  return ds.reduce((n, d) => n + d.bytes, 0);
}

/** `reason: count (bytes)`, one per reason, sorted by reason. */
function byReason(doomed: readonly Doomed[]): string[] {
  const by = new Map<string, Doomed[]>();
  for (const d of doomed) {
    const same = by.get(d.record.reason);
    if (same) same.push(d);
    else by.set(d.record.reason, [d]);
  }
  return [...by]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([reason, ds]) => `${reason}: ${ds.length} (${formatBytes(sum(ds))})`);
}
