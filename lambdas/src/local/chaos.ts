/**
 * `--chaos`: the faults DESIGN §4 must survive, injected at seeded random points into the local
 * stack's real parts (decorators of the ports and of the handler; the apps themselves run as is):
 *
 * - ingest crash before the ledger entry (files written, entry not) and right after it (entry
 *   written, the invocation still fails), both reported to the poller as a failed invocation;
 * - duplicate deliveries (a batch handed to the ingest twice) and function errors that make the
 *   event-source poller bisect the batch and retry the halves;
 * - committer crash before the catalog swap and right after it;
 * - lease expiry mid-commit (a committer whose lease runs out at once but who carries on, as a
 *   holder with a skewed clock would) and two committers at once.
 *
 * After any mix of these the tables must hold every record exactly once.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import type { Catalog } from '../ports/catalog.ts';
import type { Ledger } from '../ports/ledger.ts';
import type { Lease, Lock } from '../ports/lock.ts';
import { Prng } from '../sample/prng.ts';
import type { IngestHandler } from './stack.ts';

export interface ChaosCounts {
  ingestCrashBeforeEntry: number;
  ingestCrashAfterEntry: number;
  duplicateDeliveries: number;
  bisectingErrors: number;
  commitCrashBeforeSwap: number;
  commitCrashAfterSwap: number;
  leaseExpiries: number;
  concurrentCommits: number;
}

export class Chaos {
  readonly counts: ChaosCounts = {
    ingestCrashBeforeEntry: 0,
    ingestCrashAfterEntry: 0,
    duplicateDeliveries: 0,
    bisectingErrors: 0,
    commitCrashBeforeSwap: 0,
    commitCrashAfterSwap: 0,
    leaseExpiries: 0,
    concurrentCommits: 0,
  };
  private readonly rnd: Prng;

  /** `rate`: the chance of a fault at each injection point (default 0.1). */
  constructor(
    seed: number,
    private readonly rate = 0.1,
  ) {
    this.rnd = new Prng(seed);
  }

  private roll(): number {
    return this.rnd.next();
  }

  /** True with the configured rate (for callers that decide, e.g. to run two committers). */
  chance(): boolean {
    return this.roll() < this.rate;
  }

  ledger(inner: Ledger): Ledger {
    return override(inner, {
      // No batched append: each entry goes through the faulty `appendEntry` below, so a crash
      // can fall between two tables' entries.
      appendEntries: undefined,
      appendEntry: async (entry) => {
        const r = this.roll();
        if (r < this.rate / 2) {
          this.counts.ingestCrashBeforeEntry++;
          throw crash('ingest crashed after writing files, before its ledger entry');
        }
        const out = await inner.appendEntry(entry);
        if (r < this.rate) {
          this.counts.ingestCrashAfterEntry++;
          throw crash('ingest crashed right after its ledger entry');
        }
        return out;
      },
    });
  }

  catalog(inner: Catalog): Catalog {
    return override(inner, {
      commitTable: async (base, metadata) => {
        const r = this.roll();
        if (r < this.rate / 2) {
          this.counts.commitCrashBeforeSwap++;
          throw crash(`committer crashed before the catalog swap of ${base.id.name}`);
        }
        const out = await inner.commitTable(base, metadata);
        if (r < this.rate) {
          this.counts.commitCrashAfterSwap++;
          throw crash(`committer crashed right after the catalog swap of ${base.id.name}`);
        }
        return out;
      },
    });
  }

  /** Leases that expire at once while their holder carries on (renewals "succeed" for it). */
  lock(inner: Lock): Lock {
    const skewed = new WeakSet<Lease>();
    return override(inner, {
      acquire: async (name, owner, leaseMs) => {
        if (this.roll() >= this.rate) return inner.acquire(name, owner, leaseMs);
        const lease = await inner.acquire(name, owner, 1);
        if (lease) {
          this.counts.leaseExpiries++;
          skewed.add(lease);
        }
        return lease;
      },
      renew: async (lease, leaseMs) => {
        if (skewed.has(lease)) return lease; // the holder's clock says it is still valid
        return inner.renew(lease, leaseMs);
      },
      release: async (lease) => {
        if (skewed.has(lease)) return inner.release(lease).catch(() => undefined);
        return inner.release(lease);
      },
    });
  }

  /** Duplicate deliveries and function errors (the poller bisects the batch and retries). */
  handler(inner: IngestHandler): IngestHandler {
    return async (event) => {
      const r = this.roll();
      if (r < this.rate / 2 && event.Records.length > 1) {
        this.counts.bisectingErrors++;
        throw crash('ingest function error (the event source bisects the batch)');
      }
      if (r < this.rate) {
        this.counts.duplicateDeliveries++;
        await inner(event).catch(() => undefined);
      }
      return inner(event);
    };
  }

  summary(): string {
    const c = this.counts;
    return [
      `ingest crashes before/after the ledger entry ${c.ingestCrashBeforeEntry}/${c.ingestCrashAfterEntry}`,
      `duplicate deliveries ${c.duplicateDeliveries}`,
      `bisecting function errors ${c.bisectingErrors}`,
      `committer crashes before/after the swap ${c.commitCrashBeforeSwap}/${c.commitCrashAfterSwap}`,
      `expired leases ${c.leaseExpiries}`,
      `two committers at once ${c.concurrentCommits}`,
    ].join(', ');
  }
}

function crash(message: string): FloeError {
  return new FloeError(ErrorKind.Unexpected, `chaos: ${message}`, { retryable: true });
}

/** `inner` with some methods replaced (the rest bound to it). */
function override<T extends object>(inner: T, methods: Partial<T>): T {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop in methods) return (methods as Record<string | symbol, unknown>)[prop];
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
