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
 *
 * An acquire that throws may still have been applied (its answer lost). It is asked again, as the
 * same owner, which the lock grants whether or not the first one landed. If the acquire still
 * fails, whatever this owner may hold is given up before the error is thrown, so one lost answer
 * does not keep the next runs out until the lease expires.
 */
import { acquireLease, type Lease, type Lock, releaseLease } from '../ports/lock.ts';

/** Attempts of a run-lease acquire whose outcome is unknown, and the pause between them. */
const ACQUIRE_ATTEMPTS = 3;
const ACQUIRE_PAUSE_MS = 200;

/** `lock.acquire`, asked again (same owner) when it throws; on a last failure the owner's hold is released. */
async function acquireResolving(
  lock: Lock,
  name: string,
  owner: string,
  ms: number,
): Promise<Lease | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      // The last attempt gives up what the owner may hold when it throws (`acquireLease`).
      return attempt >= ACQUIRE_ATTEMPTS
        ? await acquireLease(lock, name, owner, ms)
        : await lock.acquire(name, owner, ms);
    } catch (e) {
      if (attempt >= ACQUIRE_ATTEMPTS) throw e;
      await new Promise((r) => setTimeout(r, ACQUIRE_PAUSE_MS * attempt));
    }
  }
}

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
  const lockName = `run/${name}`;
  let lease: Lease | undefined = await acquireResolving(lock, lockName, owner, ms);
  if (lease === undefined && wait !== undefined && wait.waitMs > 0) {
    const until = wait.nowMs() + wait.waitMs;
    while (lease === undefined && wait.nowMs() < until) {
      await wait.sleep(Math.min(wait.pollMs ?? 1_000, Math.max(1, until - wait.nowMs())));
      lease = await acquireResolving(lock, lockName, owner, ms);
    }
  }
  if (lease === undefined) return { ran: false };
  try {
    return { ran: true, value: await run() };
  } finally {
    // A lease lost meanwhile (expired and taken) is no error of this run's; a release that fails
    // (request or answer lost) is asked again, so the next run is not kept out until expiry.
    await releaseLease(
      lock,
      lease,
      (attempt) => new Promise((r) => setTimeout(r, ACQUIRE_PAUSE_MS * attempt)),
    );
  }
}
