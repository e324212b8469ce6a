/**
 * Fault injection for the exactly-once tests: decorators of the ports (Ledger, Catalog, ObjectStore,
 * Lock) that fail a chosen call, before it reaches the real adapter ("crash before") or after it
 * went through ("crash after": the effect happened, the caller never learns it), plus a settable
 * clock, gates to pause a call, and a seeded PRNG for random fault points.
 *
 * Rules count the calls that match them, so a fault fires on the Nth matching call, a given number
 * of times, or with a probability drawn from the plan's PRNG. A `crash` models the process dying:
 * from then on every call through any port of the plan throws until `revive()` (the next
 * invocation is a new process), so nothing the dying process would have done afterwards (cleanup
 * included) happens. Only the ports are decorated: the apps under test run unchanged.
 */
import type { Catalog } from '../../lambdas/src/ports/catalog.ts';
import type { Clock } from '../../lambdas/src/ports/clock.ts';
import type { Ledger } from '../../lambdas/src/ports/ledger.ts';
import type { Lock } from '../../lambdas/src/ports/lock.ts';
import type { ObjectStore } from '../../lambdas/src/ports/object-store.ts';

// ---------------------------------------------------------------------------------------------
// Seeded PRNG

/** mulberry32: small, fast, deterministic for a seed. */
export class Rng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from an empty list');
    return xs[Math.floor(this.next() * xs.length)] as T;
  }
}

// ---------------------------------------------------------------------------------------------
// Clock and gates

/** A clock tests move by hand; every reading also steps it by `stepMs` so time never stands still. */
export class ManualClock implements Clock {
  constructor(
    private t: number,
    private readonly stepMs = 1,
  ) {}

  nowMs(): number {
    const now = this.t;
    this.t += this.stepMs;
    return now;
  }

  advance(ms: number): void {
    this.t += ms;
  }
}

/** A call parked until the test opens the gate; `reached` resolves when the first caller arrives. */
export interface Gate {
  readonly reached: Promise<void>;
  /** Parks the caller (resolves `reached`) until `open()`. */
  wait(): Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let arrive!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => {
    arrive = r;
  });
  const opened = new Promise<void>((r) => {
    release = r;
  });
  return {
    reached,
    wait: async () => {
      arrive();
      await opened;
    },
    open: () => release(),
  };
}

// ---------------------------------------------------------------------------------------------
// Fault rules

export type Port = 'ledger' | 'catalog' | 'store' | 'lock';

/** The asynchronous methods of each port (the ones a fault can hit; anything else passes through). */
export const PORT_METHODS = {
  ledger: [
    'appendEntry',
    'appendEntries',
    'entriesAfter',
    'tablesWithStagedWork',
    'shardsWithStagedWork',
    'markCommitted',
    'stagedRanges',
    'shardTails',
  ],
  catalog: [
    'listNamespaces',
    'createNamespace',
    'listTables',
    'loadTable',
    'tableExists',
    'createTable',
    'commitTable',
  ],
  store: ['get', 'put', 'putIfAbsent', 'exists', 'delete', 'list', 'listChildren', 'size'],
  lock: ['acquire', 'renew', 'release', 'releaseOwner'],
} as const satisfies Record<Port, readonly string[]>;

export type MethodOf<P extends Port> = (typeof PORT_METHODS)[P][number];

/**
 * - `error`: the call fails with an error the caller sees (a transient failure it may handle);
 * - `crash`: the call fails and the process is dead (see `Faults.crashed`);
 * - `hook`: `action` runs at the point and the call proceeds normally (pause, move the clock, let
 *   another writer in).
 */
export type FaultKind = 'error' | 'crash' | 'hook';

export interface FaultRule<P extends Port = Port> {
  readonly port: P;
  readonly method: MethodOf<P>;
  /** `before`: instead of calling the adapter; `after`: once the adapter call succeeded. Default before. */
  readonly timing?: 'before' | 'after';
  readonly kind?: FaultKind;
  /** First matching call that may fire (1-based, default 1). */
  readonly nth?: number;
  /** How many times the rule fires at most (default 1; Infinity: every time). */
  readonly times?: number;
  /** Probability that an eligible call fires (the plan's PRNG; default 1). */
  readonly chance?: number;
  /** Only calls whose arguments satisfy this count as matching. */
  readonly when?: (args: readonly unknown[]) => boolean;
  /** The error thrown (default an `InjectedFault`). */
  readonly error?: (point: string) => unknown;
  /** For `hook` (and optionally before an `error` / `crash`): runs at the fault point. */
  readonly action?: (args: readonly unknown[]) => Promise<void> | void;
  /**
   * For an `after` `hook`: what the caller gets instead of the adapter's result (e.g. a read that
   * misses an item, as a lagging index would).
   */
  readonly result?: (out: unknown, args: readonly unknown[]) => unknown;
  /** A name for the log. */
  readonly label?: string;
}

export class InjectedFault extends Error {
  override readonly name = 'InjectedFault';
  constructor(readonly point: string) {
    super(`injected fault: ${point}`);
  }
}

/** Thrown by every call of a plan whose process crashed (until `revive`). */
export class ProcessCrashed extends Error {
  override readonly name = 'ProcessCrashed';
  constructor(readonly point: string) {
    super(`process crashed (call to ${point} after the crash)`);
  }
}

interface Armed {
  readonly rule: FaultRule;
  seen: number;
  fired: number;
  active: boolean;
}

/** A fault plan: its rules, the decorated ports, call counters and a log of what fired. */
export class Faults {
  readonly rng: Rng;
  /** True from a `crash` fault until `revive()`. */
  crashed = false;
  /** Calls per `port.method` (all, faulted or not). */
  readonly calls = new Map<string, number>();
  /** What fired, in order (`port.method timing kind [label]`). */
  readonly log: string[] = [];
  /** Calls through the plan's ports that have not settled yet (a caller that returns leaves none). */
  inFlight = 0;
  private rules: Armed[] = [];
  private enabled = true;

  constructor(seed = 1) {
    this.rng = new Rng(seed);
  }

  /** Adds a rule; returns a handle whose `fired` tells how often it fired. */
  add<P extends Port>(rule: FaultRule<P>): { readonly fired: number; remove(): void } {
    if (!(PORT_METHODS[rule.port] as readonly string[]).includes(rule.method)) {
      throw new Error(`no async method ${rule.port}.${rule.method}`);
    }
    const armed: Armed = { rule: rule as FaultRule, seen: 0, fired: 0, active: true };
    this.rules.push(armed);
    return {
      get fired() {
        return armed.fired;
      },
      remove: () => {
        armed.active = false;
      },
    };
  }

  /** Removes every rule (counters of calls stay). */
  clear(): void {
    this.rules = [];
  }

  /** Rules stop firing (and a crashed process stays crashed until `revive`). */
  disable(): void {
    this.enabled = false;
  }

  enable(): void {
    this.enabled = true;
  }

  /** The next invocation runs in a fresh process. */
  revive(): void {
    this.crashed = false;
  }

  /** How often a rule of any kind fired at `port.method` (from the log). */
  firedAt(point: string): number {
    return this.log.filter((l) => l.startsWith(`${point} `)).length;
  }

  ledger<T extends Ledger>(target: T): T {
    return this.wrap('ledger', target);
  }

  catalog<T extends Catalog>(target: T): T {
    return this.wrap('catalog', target);
  }

  store<T extends ObjectStore>(target: T): T {
    return this.wrap('store', target);
  }

  lock<T extends Lock>(target: T): T {
    return this.wrap('lock', target);
  }

  /** A decorator of `target` whose port methods go through this plan. */
  wrap<T extends object>(port: Port, target: T): T {
    const methods = new Set<string>(PORT_METHODS[port]);
    return new Proxy(target, {
      get: (t, prop) => {
        const v = Reflect.get(t, prop, t) as unknown;
        if (typeof v !== 'function') return v;
        // A batched append hides the per-entry calls the rules are about: unless a rule targets
        // the batch itself, the caller falls back to one `appendEntry` per entry.
        if (port === 'ledger' && prop === 'appendEntries' && !this.targets('ledger', prop)) return undefined;
        const fn = v as (...args: unknown[]) => unknown;
        if (typeof prop !== 'string' || !methods.has(prop)) return fn.bind(t);
        return (...args: unknown[]) => this.invoke(port, prop, args, () => fn.apply(t, args));
      },
    });
  }

  private async invoke(port: Port, method: string, args: unknown[], call: () => unknown): Promise<unknown> {
    this.inFlight++;
    try {
      return await this.invokeCounted(port, method, args, call);
    } finally {
      this.inFlight--;
    }
  }

  private async invokeCounted(
    port: Port,
    method: string,
    args: unknown[],
    call: () => unknown,
  ): Promise<unknown> {
    const point = `${port}.${method}`;
    this.calls.set(point, (this.calls.get(point) ?? 0) + 1);
    if (this.crashed) throw new ProcessCrashed(point);
    const firing = this.enabled ? this.select(port, method, args) : [];
    for (const a of firing) if ((a.rule.timing ?? 'before') === 'before') await this.fire(a, point, args);
    let out = await call();
    if (this.crashed) throw new ProcessCrashed(point); // the process died while this call was in flight
    for (const a of firing) {
      if (a.rule.timing !== 'after') continue;
      await this.fire(a, point, args);
      if (a.rule.result) out = a.rule.result(out, args);
    }
    return out;
  }

  /** True when an active rule is aimed at `port.method`. */
  private targets(port: Port, method: string): boolean {
    return this.rules.some((a) => a.active && a.rule.port === port && a.rule.method === method);
  }

  /** The rules this call triggers (counted now, so "before" and "after" rules see the same call). */
  private select(port: Port, method: string, args: readonly unknown[]): Armed[] {
    const out: Armed[] = [];
    for (const a of this.rules) {
      const r = a.rule;
      if (!a.active || r.port !== port || r.method !== method) continue;
      if (r.when && !r.when(args)) continue;
      a.seen++;
      if (a.seen < (r.nth ?? 1) || a.fired >= (r.times ?? 1)) continue;
      if (r.chance !== undefined && !this.rng.chance(r.chance)) continue;
      a.fired++;
      out.push(a);
    }
    return out;
  }

  private async fire(a: Armed, point: string, args: readonly unknown[]): Promise<void> {
    const r = a.rule;
    const kind = r.kind ?? 'error';
    this.log.push(`${point} ${r.timing ?? 'before'} ${kind}${r.label ? ` ${r.label}` : ''}`);
    if (r.action) await r.action(args);
    if (kind === 'hook') return;
    if (kind === 'crash') this.crashed = true;
    throw r.error ? r.error(point) : new InjectedFault(`${point} (${r.timing ?? 'before'})`);
  }
}
