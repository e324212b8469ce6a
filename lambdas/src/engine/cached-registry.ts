/**
 * A caching {@link SchemaRegistry} wrapper for ingest. Schema versions are immutable, so a version
 * is cached by id with no expiry; the cache is a bounded LRU (a stream carries few versions, but a
 * long-lived process must not grow without limit). Concurrent requests for an id that is not
 * cached share one fetch. Failed fetches are not cached, except `NotFound` when a clock is given
 * (`notFoundTtlMs`), so a burst of records naming a bogus id costs one registry call, not one each.
 *
 * Hits return the same object every time, so callers may key derived data (compiled decoders) on
 * the returned version in a `WeakMap`.
 */
import { isFloeError } from '../errors.ts';
import type { Clock } from '../ports/clock.ts';
import type { SchemaDataFormat, SchemaRegistry, SchemaVersion } from '../ports/schema-registry.ts';

export const DEFAULT_MAX_CACHED_VERSIONS = 1000;
export const DEFAULT_NOT_FOUND_TTL_MS = 60_000;

export interface CachedRegistryOptions {
  /** Most versions kept (least recently used evicted first). Default 1000. */
  readonly maxEntries?: number;
  /** Enables caching of NotFound answers for `notFoundTtlMs` (the registry may learn the id later). */
  readonly clock?: Clock;
  /** How long a NotFound answer is reused when `clock` is set. Default 60 s. */
  readonly notFoundTtlMs?: number;
}

export interface CachedRegistryStats {
  /** Answers served from the cache (including shared in-flight fetches and cached NotFound). */
  readonly hits: number;
  /** Calls made to the wrapped registry. */
  readonly fetches: number;
  readonly size: number;
}

export class CachedSchemaRegistry implements SchemaRegistry {
  private readonly inner: SchemaRegistry;
  private readonly maxEntries: number;
  private readonly clock: Clock | undefined;
  private readonly notFoundTtlMs: number;
  /** Insertion order = recency order (a hit re-inserts): the first key is the LRU entry. */
  private readonly cache = new Map<string, SchemaVersion>();
  private readonly inflight = new Map<string, Promise<SchemaVersion>>();
  private readonly notFound = new Map<string, { error: unknown; untilMs: number }>();
  private hits = 0;
  private fetches = 0;
  readonly register?: (
    schemaName: string,
    definition: string,
    dataFormat?: SchemaDataFormat,
  ) => Promise<SchemaVersion>;

  constructor(inner: SchemaRegistry, options: CachedRegistryOptions = {}) {
    const max = options.maxEntries ?? DEFAULT_MAX_CACHED_VERSIONS;
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError(`maxEntries must be a positive integer, got ${max}`);
    this.inner = inner;
    this.maxEntries = max;
    this.clock = options.clock;
    this.notFoundTtlMs = options.notFoundTtlMs ?? DEFAULT_NOT_FOUND_TTL_MS;
    const reg = inner.register;
    if (reg !== undefined) {
      this.register = async (schemaName, definition, dataFormat) => {
        const v = await reg.call(inner, schemaName, definition, dataFormat);
        const key = v.id.toLowerCase();
        this.notFound.delete(key);
        return this.cache.get(key) ?? this.remember(key, v);
      };
    }
  }

  getSchemaVersion(id: string): Promise<SchemaVersion> {
    const key = id.toLowerCase();
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      this.hits++;
      this.cache.delete(key); // move to the most recently used end
      this.cache.set(key, hit);
      return Promise.resolve(hit);
    }
    const pending = this.inflight.get(key);
    if (pending !== undefined) {
      this.hits++;
      return pending;
    }
    const nf = this.notFound.get(key);
    if (nf !== undefined && this.clock !== undefined) {
      if (this.clock.nowMs() < nf.untilMs) {
        this.hits++;
        return Promise.reject(nf.error);
      }
      this.notFound.delete(key);
    }
    this.fetches++;
    const p = this.fetch(key, id);
    this.inflight.set(key, p);
    return p;
  }

  stats(): CachedRegistryStats {
    return { hits: this.hits, fetches: this.fetches, size: this.cache.size };
  }

  private async fetch(key: string, id: string): Promise<SchemaVersion> {
    try {
      const v = await this.inner.getSchemaVersion(id);
      return this.remember(key, v);
    } catch (e) {
      if (this.clock !== undefined && isFloeError(e, 'NotFound')) {
        this.notFound.set(key, { error: e, untilMs: this.clock.nowMs() + this.notFoundTtlMs });
        while (this.notFound.size > this.maxEntries) this.notFound.delete(this.notFound.keys().next().value!);
      }
      throw e;
    } finally {
      this.inflight.delete(key);
    }
  }

  private remember(key: string, v: SchemaVersion): SchemaVersion {
    this.cache.set(key, v);
    while (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    return v;
  }
}
