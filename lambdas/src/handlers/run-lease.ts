/**
 * One scheduled run at a time without reserved concurrency (issue #14). Reserving concurrency needs
 * 100 unreserved executions left in the account, so an account whose quota is 10 (new accounts)
 * cannot reserve any and a stack that asks fails to deploy. The committer's and the maintenance
 * function's runs take a run lease in the ledger table instead (the same `Lock` as the per-table
 * commit leases, name `run/<function>`): a run that finds it held returns at once, as a run
 * throttled by a reservation of 1 would have been dropped. Overlapping runs would be safe anyway
 * (each table is committed under its own lease), but they would only find each other's tables
 * locked, raise `TablesLocked` and take concurrency from the ingest.
 *
 * The lease lasts as long as the invocation can (its remaining time), so a run that dies without
 * releasing it blocks nobody for longer than it could have run; it is released when the run ends.
 */
import type { Lease, Lock } from '../ports/lock.ts';

/** Lease of a run whose invocation does not say how long it may take: Lambda's 15-minute maximum. */
export const DEFAULT_RUN_LEASE_MS = 900_000;

export type RunLeaseOutcome<T> = { readonly ran: true; readonly value: T } | { readonly ran: false };

/**
 * Waiting for a run lease: a seconds-fresh committer's run ends just before the next tick, so the
 * next run asks again for a few seconds rather than give the whole minute up.
 */
export interface RunLeaseWait {
  /** How long to keep asking (0: ask once). */
  readonly waitMs: number;
  /** Time between two asks (default 1 s). */
  readonly pollMs?: number;
  readonly nowMs: () => number;
  readonly sleep: (ms: number) => Promise<void>;
}

/** Runs `run` under the run lease `run/<name>`, or returns `{ ran: false }` when another run holds it. */
export async function withRunLease<T>(
  lock: Lock,
  name: string,
  owner: string,
  leaseMs: number | undefined,
  run: () => Promise<T>,
  wait?: RunLeaseWait,
): Promise<RunLeaseOutcome<T>> {
  const ms =
    leaseMs !== undefined && Number.isFinite(leaseMs) && leaseMs > 0
      ? Math.ceil(leaseMs)
      : DEFAULT_RUN_LEASE_MS;
  let lease: Lease | undefined = await lock.acquire(`run/${name}`, owner, ms);
  if (lease === undefined && wait !== undefined && wait.waitMs > 0) {
    const until = wait.nowMs() + wait.waitMs;
    while (lease === undefined && wait.nowMs() < until) {
      await wait.sleep(Math.min(wait.pollMs ?? 1_000, Math.max(1, until - wait.nowMs())));
      lease = await lock.acquire(`run/${name}`, owner, ms);
    }
  }
  if (lease === undefined) return { ran: false };
  try {
    return { ran: true, value: await run() };
  } finally {
    // A lease lost meanwhile (expired and taken) is no error of this run's.
    await lock.release(lease).catch(() => undefined);
  }
}
