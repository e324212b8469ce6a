/**
 * The small parts of scheduled maintenance: visiting order, the namespaces visited and the keys a
 * table goes by in each (routing key, lock name, ledger keys), the lease keeper and the fenced
 * catalog (a commit never lands without the lease), the "covered by" comparison of managed
 * configurations, the maintenance environment and what each catalog × MAINTENANCE runs.
 */
import { describe, expect, it } from 'vitest';
import { lockName } from '../../../../lambdas/src/app/committer.ts';
import { fencedCatalog, LeaseKeeper } from '../../../../lambdas/src/app/maintain/lease-keeper.ts';
import { withManagedSetUp } from '../../../../lambdas/src/app/maintain/managed-setup.ts';
import {
  ledgerKeys,
  namespacesToVisit,
  routingKeyOf,
} from '../../../../lambdas/src/app/maintain/namespaces.ts';
import { parseConfig } from '../../../../lambdas/src/config.ts';
import { ErrorKind, FloeError } from '../../../../lambdas/src/errors.ts';
import { readSettings } from '../../../../lambdas/src/handlers/env.ts';
import { maxBinBytesFor, maxInputFileBytesFor } from '../../../../lambdas/src/handlers/maintenance-env.ts';
import { scheduledOptions } from '../../../../lambdas/src/handlers/runtime.ts';
import type { Catalog, LoadedTable } from '../../../../lambdas/src/ports/catalog.ts';
import { type Lease, type Lock, lockLost } from '../../../../lambdas/src/ports/lock.ts';
import { visitingOrder } from '../../../../lambdas/src/ports/maintenance-log.ts';
import { coveredBy, type ManagedMaintenance } from '../../../../lambdas/src/ports/managed-maintenance.ts';
import { ManualClock } from '../../../helpers/faults.ts';

/** A lease lock in memory with the DynamoDB lock's rules (token per acquisition, expiry). */
class MemoryLock implements Lock {
  private readonly held = new Map<string, { owner: string; token: bigint; expiresAtMs: number }>();
  private tokens = 0n;
  releases = 0;
  constructor(private readonly clock: ManualClock) {}
  async acquire(name: string, owner: string, leaseMs: number): Promise<Lease | undefined> {
    const now = this.clock.nowMs();
    const h = this.held.get(name);
    if (h && h.expiresAtMs > now && h.owner !== owner) return undefined;
    const token = ++this.tokens;
    this.held.set(name, { owner, token, expiresAtMs: now + leaseMs });
    return { name, owner, token, expiresAtMs: now + leaseMs, leaseMs };
  }
  async renew(lease: Lease): Promise<Lease> {
    const now = this.clock.nowMs();
    const h = this.held.get(lease.name);
    if (!h || h.token !== lease.token || h.expiresAtMs <= now) throw lockLost(lease, 'was lost');
    h.expiresAtMs = now + lease.leaseMs;
    return { ...lease, expiresAtMs: h.expiresAtMs };
  }
  async release(lease: Lease): Promise<void> {
    const h = this.held.get(lease.name);
    if (!h || h.token !== lease.token) throw lockLost(lease, 'is no longer the holder');
    h.expiresAtMs = 0;
    this.releases++;
  }
}

function recordingCatalog(): Catalog & { commits: number; creates: number } {
  const table = {
    id: { namespace: 'ns', name: 't' },
    metadataLocation: 'x',
    versionToken: '1',
  } as LoadedTable;
  const c = {
    commits: 0,
    creates: 0,
    listNamespaces: async () => ['ns'],
    createNamespace: async () => undefined,
    listTables: async () => ['t'],
    loadTable: async () => table,
    tableExists: async () => true,
    defaultLocation: () => 'file:///wh/ns/t',
    createTable: async () => {
      c.creates++;
      return table;
    },
    commitTable: async () => {
      c.commits++;
      return table;
    },
  };
  return c;
}

describe('visitingOrder', () => {
  it('never visited first, then the oldest visit; ties by name', () => {
    const visits = new Map([
      ['a', 300],
      ['b', 100],
      ['c', 100],
    ]);
    expect(visitingOrder(['a', 'b', 'c', 'e', 'd'], visits)).toEqual(['d', 'e', 'b', 'c', 'a']);
  });
});

describe('the namespaces maintenance visits', () => {
  it('the stack’s first, then names and the catalog’s namespaces matching a prefix; nothing else', async () => {
    let listed = 0;
    const catalog = {
      listNamespaces: async () => {
        listed++;
        return ['floe', 'analytics', 'tenant_a', 'tenant_b', 'tenant', 'other', 'tenant-c', 'Tenant_D'];
      },
    };
    expect(
      await namespacesToVisit(catalog, 'floe', {
        names: ['floe', 'analytics', 'acme'],
        prefixes: ['tenant_'],
      }),
    ).toEqual(['floe', 'acme', 'analytics', 'tenant_a', 'tenant_b']);
    expect(listed).toBe(1);
    // Names only: the catalog is not asked (a named namespace without tables simply has none).
    expect(await namespacesToVisit(catalog, 'floe', { names: ['analytics'], prefixes: [] })).toEqual([
      'floe',
      'analytics',
    ]);
    // Unset: the stack's only.
    expect(await namespacesToVisit(catalog, 'floe', undefined)).toEqual(['floe']);
    expect(listed).toBe(1);
  });

  it('a table goes by the committer’s routing key, lock name and ledger keys', () => {
    const cfg = parseConfig({ namespace: 'floe' });
    const own = { namespace: 'floe', name: 'click_events' };
    const other = { namespace: 'analytics', name: 'x' };
    expect(routingKeyOf('floe', own)).toBe('click_events');
    expect(routingKeyOf('floe', other)).toBe('analytics.x');
    expect(lockName(cfg, routingKeyOf('floe', other))).toBe('commit/analytics.x');
    expect(lockName(cfg, routingKeyOf('floe', own))).toBe('commit/floe.click_events');
    // A template naming the stack's namespace stages `floe.click_events`: both are read.
    expect(ledgerKeys('floe', own)).toEqual(['click_events', 'floe.click_events']);
    expect(ledgerKeys('floe', other)).toEqual(['analytics.x']);
  });
});

describe('LeaseKeeper + fencedCatalog', () => {
  it('commits while the lease is held; once another holder took it, no commit lands and it is not released', async () => {
    const clock = new ManualClock(1_000_000, 0);
    const lock = new MemoryLock(clock);
    const lease = (await lock.acquire('commit/ns.t', 'maintenance', 60_000))!;
    const keeper = new LeaseKeeper(lock, lease, 0);
    const inner = recordingCatalog();
    const fenced = fencedCatalog(inner, keeper);
    const base = await fenced.loadTable({ namespace: 'ns', name: 't' });
    await fenced.commitTable(base, base.metadata);
    expect(inner.commits).toBe(1);
    // Maintenance stalls past its lease; the committer takes the table.
    clock.advance(61_000);
    expect(await lock.acquire('commit/ns.t', 'committer', 60_000)).toBeDefined();
    const e = await fenced.commitTable(base, base.metadata).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(FloeError);
    expect((e as FloeError).kind).toBe(ErrorKind.LockHeld);
    expect(inner.commits).toBe(1);
    await expect(keeper.renew()).rejects.toMatchObject({ kind: ErrorKind.LockHeld });
    await keeper.release();
    expect(lock.releases).toBe(0);
  });

  it('renewals extend the lease, and release gives it back', async () => {
    const clock = new ManualClock(0, 0);
    const lock = new MemoryLock(clock);
    const keeper = new LeaseKeeper(lock, (await lock.acquire('l', 'me', 10_000))!, 0);
    for (let i = 0; i < 5; i++) {
      clock.advance(8_000);
      await keeper.renew();
    }
    await keeper.release();
    expect(lock.releases).toBe(1);
    expect(await lock.acquire('l', 'other', 10_000)).toBeDefined();
  });
});

describe('withManagedSetUp', () => {
  it('sets up a table the catalog created; a failed setup is reported, the creation stands', async () => {
    const inner = recordingCatalog();
    const calls: string[] = [];
    const managed: ManagedMaintenance = {
      setUp: async (id) => {
        calls.push(id.name);
        if (id.name === 'bad') throw new Error('denied');
        return { created: ['compaction'], updated: [] };
      },
      ensure: async () => ({ created: [], updated: [] }),
    };
    const reports: unknown[] = [];
    const c = withManagedSetUp(inner, managed, (r) => reports.push(r));
    await c.createTable({ namespace: 'ns', name: 'good' }, {} as never);
    await c.createTable({ namespace: 'ns', name: 'bad' }, {} as never);
    expect(inner.creates).toBe(2);
    expect(calls).toEqual(['good', 'bad']);
    expect(reports).toEqual([
      { table: { namespace: 'ns', name: 'good' }, outcome: { created: ['compaction'], updated: [] } },
      { table: { namespace: 'ns', name: 'bad' }, error: new Error('denied') },
    ]);
    // Commits pass straight through (no setup).
    await c.commitTable({} as LoadedTable, {} as never);
    expect(calls).toHaveLength(2);
  });
});

describe('coveredBy', () => {
  it('every value Floe sets must match; values the service adds are ignored', () => {
    const want = { enabled: true, c: { d: 1, e: 'x' } };
    expect(coveredBy(want, { enabled: true, c: { d: 1, e: 'x', f: 9 }, g: 1 })).toBe(true);
    expect(coveredBy(want, { enabled: false, c: { d: 1, e: 'x' } })).toBe(false);
    expect(coveredBy(want, { enabled: true, c: { d: 2, e: 'x' } })).toBe(false);
    expect(coveredBy(want, undefined)).toBe(false);
  });
});

describe('maintenance environment and what runs', () => {
  const BASE = {
    WAREHOUSE_URI: 's3://lake/warehouse',
    STAGING_URI: 's3://staging/staging',
    DEAD_LETTER_URI: 's3://staging/dead-letters',
    LEDGER_TABLE: 'floe-ledger',
    AWS_REGION: 'eu-west-1',
  };

  it('reads the variables: defaults, never, memory-bounded bins, the Glue optimizer role', () => {
    expect(readSettings(BASE).maintenance).toEqual({
      mode: 'off',
      configured: false,
      orphansOlderThanMs: 259_200_000,
    });
    const m = readSettings({
      ...BASE,
      MAINTENANCE: 'glue',
      GLUE_OPTIMIZER_ROLE_ARN: 'arn:aws:iam::123456789012:role/Floe-Optimizers',
      GLUE_CATALOG_ID: '123456789012',
      MAINTENANCE_ORPHANS_OLDER_THAN_MS: 'never',
      MAINTENANCE_RETAIN_LAST: '4',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '2048',
    }).maintenance;
    expect(m).toEqual({
      mode: 'glue',
      configured: true,
      retainLast: 4,
      glueOptimizers: {
        roleArn: 'arn:aws:iam::123456789012:role/Floe-Optimizers',
        catalogId: '123456789012',
      },
      maxBinBytes: maxBinBytesFor(2048),
      maxInputFileBytes: maxInputFileBytesFor(2048),
    });
    const MiB = 1024 * 1024;
    // Streaming compaction's measured peaks (bench/compact-memory.ts: 354 MiB at 15.1 MiB of input,
    // 603 at 63.6, 758 at 127.2) lie under 354 MiB + 5.3 × (input − 15.1 MiB): a full bin leaves at
    // least a quarter of the function's memory, and at 2 GiB reaches Floe's 128 MiB target.
    const peak = (bin: number) => 354 * MiB + 5.3 * (bin - 15.1 * MiB);
    for (const mb of [1024, 2048, 3008]) expect(peak(maxBinBytesFor(mb))).toBeLessThan(mb * MiB * 0.75);
    expect(maxBinBytesFor(2048)).toBeGreaterThanOrEqual(128 * MiB);
    // One input file is decoded at once (≤ 54 MiB of RSS per input MiB): it fits too.
    expect(maxInputFileBytesFor(2048) * 54).toBeLessThan(2048 * MiB * 0.75);
    expect(maxInputFileBytesFor(2048)).toBeGreaterThan(16 * MiB);
  });

  it('MAINTENANCE_NAMESPACES: names and prefix* patterns; unset, none', () => {
    expect(readSettings(BASE).maintenance.namespaces).toBeUndefined();
    expect(
      readSettings({ ...BASE, MAINTENANCE_NAMESPACES: 'floe,analytics,tenant_*' }).maintenance.namespaces,
    ).toEqual({ names: ['floe', 'analytics'], prefixes: ['tenant_'] });
    expect(readSettings({ ...BASE, MAINTENANCE_NAMESPACES: ' floe , acme ' }).maintenance.namespaces).toEqual(
      { names: ['floe', 'acme'], prefixes: [] },
    );
    const bad = (value: string) => {
      try {
        readSettings({ ...BASE, MAINTENANCE_NAMESPACES: value });
      } catch (x) {
        expect((x as FloeError).kind).toBe(ErrorKind.ConfigInvalid);
        expect((x as FloeError).context).toMatchObject({ variables: ['MAINTENANCE_NAMESPACES'] });
        return (x as FloeError).message;
      }
      throw new Error(`${value} accepted`);
    };
    expect(bad('floe,Bad-Name,*,aws_x')).toContain(
      `MAINTENANCE_NAMESPACES="floe,Bad-Name,*,aws_x": "Bad-Name", "*", "aws_x" are neither a namespace`,
    );
    expect(bad('floe,,acme')).toContain('"" is neither a namespace');
    expect(bad('aws*')).toContain('prefix ending in * (tenant_*)');
  });

  it('names every bad variable at once', () => {
    const e = (() => {
      try {
        readSettings({ ...BASE, MAINTENANCE: 'glue', GLUE_CATALOG_ID: 'acct', MAINTENANCE_RETAIN_LAST: '0' });
      } catch (x) {
        return x as FloeError;
      }
      throw new Error('accepted');
    })();
    expect(e.kind).toBe(ErrorKind.ConfigInvalid);
    expect(e.message).toContain('MAINTENANCE_RETAIN_LAST="0" is not an integer between 1 and 100000');
    expect(e.message).toContain('GLUE_OPTIMIZER_ROLE_ARN is required when MAINTENANCE=glue');
    expect(e.message).toContain('GLUE_CATALOG_ID="acct" is not an AWS account id');
    const s3tables = () =>
      readSettings({
        ...BASE,
        CATALOG_TYPE: 's3tables',
        TABLE_BUCKET_ARN: 'arn:aws:s3tables:eu-west-1:123456789012:bucket/t',
        MAINTENANCE: 'glue',
      });
    expect(s3tables).toThrow(/MAINTENANCE=glue needs CATALOG_TYPE=glue/);
  });

  it('Glue + floe runs every step (orphans only with an age); glue and S3 Tables run metrics; off nothing', () => {
    const managed: ManagedMaintenance = {
      setUp: async () => ({ created: [], updated: [] }),
      ensure: async () => ({ created: [], updated: [] }),
    };
    const floe = scheduledOptions(
      'glue',
      { mode: 'floe', configured: true, orphansOlderThanMs: 1, retainLast: 2 },
      undefined,
    );
    expect(floe).toEqual({
      mode: 'floe',
      maintenance: {
        steps: { compact: true, rewriteManifests: true, expire: true, orphans: true },
        orphansOlderThanMs: 1,
        retainLast: 2,
      },
    });
    expect(
      scheduledOptions('glue', { mode: 'floe', configured: true }, undefined)?.maintenance.steps.orphans,
    ).toBe(false);
    const glue = scheduledOptions('glue', { mode: 'glue', configured: true }, managed);
    expect(glue).toMatchObject({ mode: 'metrics', managed });
    expect(glue?.maintenance.steps).toEqual({
      compact: false,
      rewriteManifests: false,
      expire: false,
      orphans: false,
    });
    expect(scheduledOptions('s3tables', { mode: 'floe', configured: true }, managed)).toMatchObject({
      mode: 'metrics',
      managedStorage: true,
      managed,
    });
    expect(scheduledOptions('s3tables', { mode: 'off', configured: true }, managed)).toBeUndefined();
    expect(scheduledOptions('glue', { mode: 'off', configured: true }, undefined)).toBeUndefined();
    // Every mode visits the namespaces MAINTENANCE_NAMESPACES names.
    const namespaces = { names: ['floe', 'analytics'], prefixes: ['tenant_'] };
    for (const [catalog, mode] of [
      ['glue', 'floe'],
      ['glue', 'glue'],
      ['s3tables', 'floe'],
    ] as const)
      expect(scheduledOptions(catalog, { mode, configured: true, namespaces }, managed)?.namespaces).toEqual(
        namespaces,
      );
  });
});
