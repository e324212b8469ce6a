/**
 * Holding a table's commit lease while a long maintenance runs on it: renewed on a heartbeat and
 * right before anything that must happen under it (every catalog commit, the orphan step's
 * decision). A renewal succeeds only while the lease is still this holder's (same token, not
 * expired), so a successful renewal proves no committer took the table since it was acquired;
 * once lost, every later renewal fails with LockHeld and the steps that need it fail instead of
 * acting without it.
 */

import { ErrorKind, isFloeError } from '../../errors.ts';
import type { TableMetadata } from '../../iceberg/table-metadata.ts';
import type { Catalog, LoadedTable, TableIdentifier } from '../../ports/catalog.ts';
import { type Lease, type Lock, releaseLease } from '../../ports/lock.ts';

export class LeaseKeeper {
  private lease: Lease;
  private lost: unknown;
  private pending: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly lock: Lock,
    lease: Lease,
    heartbeatMs: number = Math.max(1_000, Math.floor(lease.leaseMs / 3)),
  ) {
    this.lease = lease;
    if (heartbeatMs > 0 && Number.isFinite(heartbeatMs)) {
      this.timer = setInterval(() => void this.renew().catch(() => undefined), heartbeatMs);
      this.timer.unref?.();
    }
  }

  /** Extends the lease (renewals never overlap); throws LockHeld once it is lost. */
  renew(): Promise<void> {
    const next = this.pending.then(async () => {
      if (this.lost !== undefined) throw this.lost;
      try {
        this.lease = await this.lock.renew(this.lease);
      } catch (e) {
        // A throttled or failed call may be retried; a lease another holder took is gone for good.
        if (isFloeError(e, ErrorKind.LockHeld)) this.lost = e;
        throw e;
      }
    });
    this.pending = next.catch(() => undefined);
    return next;
  }

  /** Stops the heartbeat and gives the lease back (quietly: it may be gone already). */
  async release(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.pending;
    if (this.lost === undefined) await releaseLease(this.lock, this.lease);
  }
}

/** `inner`, with the lease renewed before every write (a commit never lands without the lease). */
export function fencedCatalog(inner: Catalog, keeper: LeaseKeeper): Catalog {
  return {
    listNamespaces: () => inner.listNamespaces(),
    createNamespace: (ns: string) => inner.createNamespace(ns),
    listTables: (ns: string) => inner.listTables(ns),
    loadTable: (id: TableIdentifier) => inner.loadTable(id),
    tableExists: (id: TableIdentifier) => inner.tableExists(id),
    defaultLocation: (id: TableIdentifier) => inner.defaultLocation(id),
    createTable: async (id: TableIdentifier, m: TableMetadata): Promise<LoadedTable> => {
      await keeper.renew();
      return inner.createTable(id, m);
    },
    commitTable: async (base: LoadedTable, m: TableMetadata): Promise<LoadedTable> => {
      await keeper.renew();
      return inner.commitTable(base, m);
    },
  };
}
