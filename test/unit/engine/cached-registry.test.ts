import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../../lambdas/src/adapters/local/system-clock.ts';
import { CachedSchemaRegistry } from '../../../lambdas/src/engine/cached-registry.ts';
import { ErrorKind, FloeError, isFloeError } from '../../../lambdas/src/errors.ts';
import type { Clock } from '../../../lambdas/src/ports/clock.ts';
import type { SchemaRegistry, SchemaVersion } from '../../../lambdas/src/ports/schema-registry.ts';

const idOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function version(id: string): SchemaVersion {
  return {
    id,
    schemaName: 'S',
    definition: '{"type":"record","name":"S","fields":[]}',
    dataFormat: 'AVRO',
    versionNumber: 1,
  };
}

/** A registry whose answers are released by the test; counts calls per id. */
class SlowRegistry implements SchemaRegistry {
  readonly calls: string[] = [];
  private readonly waiting: (() => void)[] = [];
  known = new Set<string>();
  failNext: unknown;

  getSchemaVersion(id: string): Promise<SchemaVersion> {
    this.calls.push(id);
    const fail = this.failNext;
    this.failNext = undefined;
    return new Promise((resolve, reject) => {
      this.waiting.push(() => {
        if (fail !== undefined) reject(fail);
        else if (this.known.has(id)) resolve(version(id));
        else reject(new FloeError(ErrorKind.NotFound, `schema version ${id} not found`));
      });
    });
  }

  release(): void {
    for (const w of this.waiting.splice(0)) w();
  }
}

describe('CachedSchemaRegistry', () => {
  it('shares one fetch among concurrent requests for the same id, then serves from cache', async () => {
    const inner = new SlowRegistry();
    inner.known.add(idOf(1));
    inner.known.add(idOf(2));
    const cached = new CachedSchemaRegistry(inner);
    const ps = [
      ...Array.from({ length: 50 }, () => cached.getSchemaVersion(idOf(1))),
      ...Array.from({ length: 10 }, () => cached.getSchemaVersion(idOf(2).toUpperCase())),
    ];
    inner.release();
    const got = await Promise.all(ps);
    expect(inner.calls).toEqual([idOf(1), idOf(2).toUpperCase()]);
    // Every caller gets the very same object (derived decoders are cached on it).
    expect(new Set(got.slice(0, 50)).size).toBe(1);
    expect(new Set(got.slice(50)).size).toBe(1);
    const again = await cached.getSchemaVersion(idOf(1));
    expect(again).toBe(got[0]);
    expect(inner.calls.length).toBe(2);
    expect(cached.stats()).toEqual({ hits: 59, fetches: 2, size: 2 });
  });

  it('evicts the least recently used version beyond maxEntries', async () => {
    const inner = new SlowRegistry();
    for (let i = 1; i <= 4; i++) inner.known.add(idOf(i));
    const cached = new CachedSchemaRegistry(inner, { maxEntries: 2 });
    const get = async (n: number) => {
      const p = cached.getSchemaVersion(idOf(n));
      inner.release();
      return p;
    };
    await get(1);
    await get(2);
    await get(1); // 1 is now most recently used; 2 is the LRU entry
    await get(3); // evicts 2
    expect(cached.stats().size).toBe(2);
    expect(inner.calls).toEqual([idOf(1), idOf(2), idOf(3)]);
    await get(1); // still cached
    expect(inner.calls.length).toBe(3);
    await get(2); // evicted: fetched again (evicts 3)
    expect(inner.calls).toEqual([idOf(1), idOf(2), idOf(3), idOf(2)]);
    await get(3);
    expect(inner.calls.length).toBe(5);
  });

  it('does not cache failures; a later request fetches again', async () => {
    const inner = new SlowRegistry();
    inner.known.add(idOf(1));
    const cached = new CachedSchemaRegistry(inner);
    inner.failNext = new FloeError(ErrorKind.Unexpected, 'throttled', { retryable: true });
    const a = cached.getSchemaVersion(idOf(1));
    const b = cached.getSchemaVersion(idOf(1));
    inner.release();
    await expect(a).rejects.toThrow('throttled');
    await expect(b).rejects.toThrow('throttled');
    expect(inner.calls.length).toBe(1);
    const c = cached.getSchemaVersion(idOf(1));
    inner.release();
    await expect(c).resolves.toMatchObject({ id: idOf(1) });
    expect(inner.calls.length).toBe(2);
  });

  it('without a clock, NotFound is not cached', async () => {
    const inner = new SlowRegistry();
    const cached = new CachedSchemaRegistry(inner);
    for (let i = 0; i < 2; i++) {
      const p = cached.getSchemaVersion(idOf(9));
      inner.release();
      await expect(p).rejects.toSatisfy((e) => isFloeError(e, ErrorKind.NotFound));
    }
    expect(inner.calls.length).toBe(2);
  });

  it('with a clock, NotFound is reused for notFoundTtlMs', async () => {
    const inner = new SlowRegistry();
    let now = 0;
    const clock: Clock = { nowMs: () => now };
    const cached = new CachedSchemaRegistry(inner, { clock, notFoundTtlMs: 1000 });
    const get = () => {
      const p = cached.getSchemaVersion(idOf(9));
      inner.release();
      return p;
    };
    await expect(get()).rejects.toSatisfy((e) => isFloeError(e, ErrorKind.NotFound));
    now = 999;
    await expect(get()).rejects.toSatisfy((e) => isFloeError(e, ErrorKind.NotFound));
    expect(inner.calls.length).toBe(1);
    now = 1000;
    inner.known.add(idOf(9)); // registered meanwhile
    await expect(get()).resolves.toMatchObject({ id: idOf(9) });
    expect(inner.calls.length).toBe(2);
  });

  it('passes register through and caches the version it returns', async () => {
    const registered = version(idOf(5));
    const inner: SchemaRegistry = {
      getSchemaVersion: () => Promise.reject(new Error('should be cached')),
      register: async () => registered,
    };
    const cached = new CachedSchemaRegistry(inner, { clock: fixedClock(0) });
    expect(await cached.register!('S', '{}')).toBe(registered);
    expect(await cached.getSchemaVersion(idOf(5))).toBe(registered);
    expect(new CachedSchemaRegistry({ getSchemaVersion: inner.getSchemaVersion }).register).toBeUndefined();
  });

  it('rejects a non-positive maxEntries', () => {
    expect(() => new CachedSchemaRegistry(new SlowRegistry(), { maxEntries: 0 })).toThrow(/maxEntries/);
  });
});
