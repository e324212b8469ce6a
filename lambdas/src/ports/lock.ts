/**
 * A lease lock with fencing tokens (one committer per table at a time). A lease is valid until
 * `expiresAtMs` on the lock's clock; after that anyone may acquire the lock, and every acquisition
 * gets a strictly higher `token` for that name than any earlier one. The token is what makes a
 * stale holder harmless: whatever the holder writes can carry it, and a store that has seen a higher
 * token refuses the lower one. (The committer's real arbiter is the catalog's compare-and-swap; the
 * lock only keeps committers from wasting work on each other.)
 *
 * Times come from an injected Clock; holders on different machines see the same expiry only up to
 * clock skew, so leases should be long compared with the skew and renewed well before they end.
 */
import { ErrorKind, FloeError } from '../errors.ts';

export interface Lease {
  readonly name: string;
  readonly owner: string;
  /** Fencing token: strictly increasing per lock name across all acquisitions, never reused. */
  readonly token: bigint;
  /** The lease ends at this instant (epoch ms on the lock's clock). */
  readonly expiresAtMs: number;
  /** The duration asked for at acquisition; `renew` extends by this much unless told otherwise. */
  readonly leaseMs: number;
}

export interface Lock {
  /**
   * Takes the lock for `leaseMs`. Resolves undefined when someone else holds a lease that is still
   * valid. Re-acquiring a lock one already holds (same owner) supersedes the old lease with a new
   * token.
   */
  acquire(name: string, owner: string, leaseMs: number): Promise<Lease | undefined>;
  /**
   * Extends a lease that is still valid (same owner, same token, not expired) to now + `leaseMs`
   * (default: the lease's own duration). Throws FloeError LockHeld when the lease was lost: expired,
   * released, or taken over.
   */
  renew(lease: Lease, leaseMs?: number): Promise<Lease>;
  /**
   * Gives the lock up so the next acquirer need not wait for expiry. Throws FloeError LockHeld when
   * the lock is no longer this lease's (another owner, or the same owner under a newer token).
   * Releasing an expired lease that nobody took over is allowed.
   */
  release(lease: Lease): Promise<void>;
  /**
   * Gives up whatever lease `owner` holds on `name`, whatever its token: for an acquire whose
   * outcome is unknown (applied, its answer lost), so the lease does not block others until it
   * expires. Owners are unique per run (a request id), so this never releases someone else's lease.
   * Resolves whether or not `owner` held it. Optional: `releaseOwned` does nothing without it.
   */
  releaseOwner?(name: string, owner: string): Promise<void>;
}

/**
 * Best effort after an acquire that threw: `lock.releaseOwner(name, owner)`, errors swallowed (the
 * lease then expires by itself).
 */
export async function releaseOwned(lock: Lock, name: string, owner: string): Promise<void> {
  await lock.releaseOwner?.(name, owner).catch(() => undefined);
}

/**
 * `lock.acquire`, and when it throws, whatever `owner` may hold on `name` given up before the error
 * goes on: the acquire may have been applied with its answer lost, and would otherwise keep
 * everyone out until the lease expires.
 */
export async function acquireLease(
  lock: Lock,
  name: string,
  owner: string,
  leaseMs: number,
): Promise<Lease | undefined> {
  try {
    return await lock.acquire(name, owner, leaseMs);
  } catch (e) {
    await releaseOwned(lock, name, owner);
    throw e;
  }
}

/** Attempts `releaseLease` makes before it gives the owner's hold up (`releaseOwned`). */
export const RELEASE_ATTEMPTS = 3;

/**
 * Releases `lease`, asked again when the release fails (its request or its answer lost: a release
 * that is not made keeps every other holder out until the lease expires); after the last failure,
 * whatever the lease's owner holds is given up (`releaseOwned`). A lease another holder has taken
 * (LockHeld) is not ours to release. Never throws; `pause` waits between attempts (default none:
 * the SDK already backs off within each).
 */
export async function releaseLease(
  lock: Lock,
  lease: Lease,
  pause?: (attempt: number) => Promise<void>,
): Promise<void> {
  for (let attempt = 1; attempt <= RELEASE_ATTEMPTS; attempt++) {
    try {
      await lock.release(lease);
      return;
    } catch (e) {
      if (e instanceof FloeError && e.kind === ErrorKind.LockHeld) return;
      if (attempt < RELEASE_ATTEMPTS) await pause?.(attempt);
    }
  }
  await releaseOwned(lock, lease.name, lease.owner);
}

/** True while `lease` has not expired at `nowMs`. */
export function leaseValid(lease: Lease, nowMs: number): boolean {
  return nowMs < lease.expiresAtMs;
}

/** Milliseconds left on `lease` at `nowMs` (0 once expired). */
export function leaseRemainingMs(lease: Lease, nowMs: number): number {
  return Math.max(0, lease.expiresAtMs - nowMs);
}

/** Throws ConfigInvalid unless `leaseMs` is a positive safe integer. */
export function checkLeaseMs(leaseMs: number): number {
  if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `lease duration must be a positive integer of ms, got ${leaseMs}`,
    );
  }
  return leaseMs;
}

export function lockLost(lease: Lease, why: string): FloeError {
  return new FloeError(
    ErrorKind.LockHeld,
    `lock ${lease.name}: lease of ${lease.owner} (token ${lease.token}) ${why}`,
    {
      retryable: false,
      context: { lock: lease.name, owner: lease.owner, token: lease.token.toString() },
    },
  );
}
