/**
 * Dead-letter replay: the stored raw text of selected dead letters goes back through the same load
 * pipeline (`loadSources`: routing, inference, evolution, Parquet, one commit per table) under the
 * configuration given now, typically fixed after the failure (a hint, a default table).
 *
 * - Records that land are deleted from the dead-letter store, after their table committed.
 * - Records that fail again are stored again with their new reason and detail under their original
 *   identity (source and line, or shard and sequence number), so they are never lost and never
 *   doubled; should that identity give a different key than the stored one, the old entry goes.
 * - Records whose table could not commit (I/O, conflicts) stay in the store untouched.
 * - A dry run changes nothing: with `scratchCatalog` the records are staged and committed into an
 *   in-memory overlay of the store (a real run of every rule, type conflicts included) that is then
 *   thrown away; without it each record is only parsed and routed.
 *
 * Ports only (DeadLetterStore, Catalog, ObjectStore, Clock, Ids): the CLI and, later, the streaming
 * pipeline drive it.
 *
 * Not atomic across the commit and the store update: if the process dies after a table committed
 * and before its records were deleted from the store, a later replay would append them again.
 */
import { type FloeConfig, routerFor } from '../config.ts';
import type { CommitDeps } from '../engine/append.ts';
import { inGroups, settleAll } from '../engine/bounded.ts';
import { type DeadLetter, DeadLetterReason } from '../engine/dead-letters.ts';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import type { Catalog } from '../ports/catalog.ts';
import { type DeadLetterRecord, type DeadLetterStore, deadLetterRecord } from '../ports/dead-letters.ts';
import type { ObjectStore } from '../ports/object-store.ts';
import { JsonNumberText, type JsonValue, parseJsonRecord } from '../records/json-line.ts';
import type { RouteResult } from '../routing/index.ts';
import { type LoadProgress, type LoadReport, type LoadSource, loadSources } from './load.ts';

// ---- Selecting dead letters ---------------------------------------------------------------------

export interface DeadLetterFilter {
  /** Only this reason (e.g. `no-route`). */
  readonly reason?: string;
  /** Only this source: the exact source, or a path that ends with it (`events.ndjson`). */
  readonly source?: string;
  /** Only dead letters naming this table. */
  readonly table?: string;
  /** Exactly these keys (each must exist). */
  readonly keys?: readonly string[];
  /** At most this many (the first in key order, after the other filters). */
  readonly limit?: number;
}

/** True when `source` is `wanted` or a path ending in it (`/data/events.ndjson` ← `events.ndjson`). */
export function sourceMatches(source: string, wanted: string): boolean {
  if (source === wanted) return true;
  const tail = wanted.replace(/^(\.\/)+/, '');
  return tail !== '' && (source === tail || source.endsWith(`/${tail}`) || source.endsWith(`\\${tail}`));
}

function matches(d: DeadLetterRecord, f: DeadLetterFilter): boolean {
  return (
    (f.reason === undefined || d.reason === f.reason) &&
    (f.source === undefined || sourceMatches(d.source, f.source)) &&
    (f.table === undefined || d.table === f.table)
  );
}

/**
 * The dead letters the filter selects, in key order (source, then line). Named keys that are not
 * in the store are an error naming them.
 */
export async function selectDeadLetters(
  store: DeadLetterStore,
  filter: DeadLetterFilter = {},
): Promise<DeadLetterRecord[]> {
  if (filter.limit !== undefined && (!Number.isSafeInteger(filter.limit) || filter.limit < 0)) {
    throw new FloeError(ErrorKind.DataInvalid, `limit must be a whole number ≥ 0, got ${filter.limit}`, {
      context: { limit: filter.limit },
    });
  }
  let found: DeadLetterRecord[];
  if (filter.keys !== undefined && filter.keys.length > 0) {
    const keys = [...new Set(filter.keys)];
    const got = await settleAll(keys.map((k) => store.get(k)));
    const missing = keys.filter((_, i) => got[i] === undefined);
    if (missing.length > 0) {
      throw new FloeError(
        ErrorKind.NotFound,
        `no dead letter with key ${missing.map((k) => `'${k}'`).join(', ')}`,
        { context: { keys: missing } },
      );
    }
    found = (got as DeadLetterRecord[]).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  } else {
    found = await store.list();
  }
  const out = found.filter((d) => matches(d, filter));
  return filter.limit === undefined ? out : out.slice(0, filter.limit);
}

// ---- Writing dead letters -----------------------------------------------------------------------

/**
 * Puts dead letters with a few writes in flight (a put costs several object operations). `add`
 * returns once the record is in flight; `flush` waits for every write and throws the first failure
 * (naming the key) after all have settled.
 */
export function deadLetterWriter(
  store: DeadLetterStore,
  concurrency = 16,
): { add(d: DeadLetterRecord): Promise<void>; flush(): Promise<number> } {
  const inFlight = new Set<Promise<void>>();
  const errors: unknown[] = [];
  let written = 0;
  return {
    async add(d) {
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
      const p: Promise<void> = store.put(d).then(
        () => {
          written++;
          inFlight.delete(p);
        },
        (e: unknown) => {
          errors.push(
            new FloeError(
              isFloeError(e) ? e.kind : ErrorKind.Unexpected,
              `could not store dead letter '${d.key}' (${d.source}:${d.line}): ${(e as Error).message ?? String(e)}`,
              { cause: e, context: { key: d.key } },
            ),
          );
          inFlight.delete(p);
        },
      );
      inFlight.add(p);
    },
    async flush() {
      while (inFlight.size > 0) await settleAll([...inFlight]);
      if (errors.length > 0) throw errors[0];
      return written;
    },
  };
}

// ---- Replay -------------------------------------------------------------------------------------

export interface ReplayDeps extends CommitDeps {
  /** The configuration to replay under (typically fixed since the records failed). */
  readonly config: FloeConfig;
  readonly deadLetters: DeadLetterStore;
  readonly onProgress?: (p: ReplayProgress) => void;
  /** Extra snapshot summary keys (e.g. `floe.replay-id`). */
  readonly summary?: Readonly<Record<string, string>>;
  readonly maxRowsPerFile?: number;
  readonly fastPath?: boolean;
  /**
   * The same catalog over another object store, for a full dry run (stage and commit into a
   * throw-away overlay). Without it a dry run only parses and routes each record.
   */
  readonly scratchCatalog?: (store: ObjectStore) => Catalog;
}

export interface ReplayOptions extends DeadLetterFilter {
  /** Change nothing: report what a replay would do. */
  readonly dryRun?: boolean;
}

export type ReplayProgress =
  | { readonly kind: 'selected'; readonly records: number; readonly sources: number }
  | { readonly kind: 'skipped'; readonly key: string; readonly why: string }
  | { readonly kind: 'load'; readonly progress: LoadProgress }
  | { readonly kind: 'stored'; readonly landed: number; readonly failing: number };

export type ReplayStatus =
  /** Committed to `table` (dry run: would be). */
  | 'landed'
  /** Rejected again; stored again under its new reason (dry run: would be). */
  | 'failing'
  /** Its table's commit failed; left in the store as it was. */
  | 'not-loaded'
  /** Cannot be replayed as text (binary record, or no text); left in the store as it was. */
  | 'skipped'
  /** Route-only dry run: parses and routes to `table`; the table's checks were not run. */
  | 'routable';

export interface ReplayOutcome {
  /** The key the record had when selected. */
  readonly key: string;
  readonly source: string;
  readonly line: number;
  readonly previousReason: string;
  readonly status: ReplayStatus;
  readonly table?: string;
  /** For `failing`: the new reason and detail; for `not-loaded` and `skipped`: why. */
  readonly reason?: string;
  readonly detail?: string;
  /** For `failing`: the key it is stored under now (the same unless its identity's key changed). */
  readonly newKey?: string;
}

export interface ReplayResult {
  readonly dryRun: boolean;
  /** `staged`: the full pipeline ran (for real, or into a scratch overlay); `routed`: parse + route only. */
  readonly mode: 'staged' | 'routed';
  readonly selected: number;
  /** Distinct sources the selected records came from. */
  readonly sources: number;
  readonly landed: number;
  /** Landed records per table. */
  readonly landedByTable: Readonly<Record<string, number>>;
  /** Records rejected again, per (new) reason. */
  readonly failingByReason: Readonly<Record<string, number>>;
  readonly notLoaded: number;
  readonly skipped: number;
  /** Route-only dry run: records that parse and route, per table. */
  readonly routableByTable: Readonly<Record<string, number>>;
  /** One outcome per selected record, in key order. */
  readonly outcomes: readonly ReplayOutcome[];
  /** The load run's report (absent for a route-only dry run or when nothing was selected). */
  readonly load?: LoadReport;
}

export async function replayDeadLetters(deps: ReplayDeps, opts: ReplayOptions = {}): Promise<ReplayResult> {
  const dryRun = opts.dryRun === true;
  /** Records rejected again, by the key they were selected under. */
  const pendingPuts = new Map<string, DeadLetterRecord>();
  const selected = await selectDeadLetters(deps.deadLetters, opts);
  const sources = new Map<string, DeadLetterRecord[]>();
  const outcomes = new Map<string, ReplayOutcome>();
  for (const d of selected) {
    const why = unreplayable(d);
    if (why !== undefined) {
      outcomes.set(d.key, { ...base(d), status: 'skipped', detail: why });
      deps.onProgress?.({ kind: 'skipped', key: d.key, why });
      continue;
    }
    let group = sources.get(d.source);
    if (!group) {
      group = [];
      sources.set(d.source, group);
    }
    group.push(d);
  }
  deps.onProgress?.({ kind: 'selected', records: selected.length, sources: sources.size });

  const routing = routeEach(deps.config, [...sources.values()].flat());
  let load: LoadReport | undefined;
  const mode = dryRun && deps.scratchCatalog === undefined ? 'routed' : 'staged';
  if (mode === 'routed') {
    for (const [key, r] of routing) {
      const d = r.record;
      outcomes.set(
        key,
        r.ok
          ? { ...base(d), status: 'routable', table: r.table }
          : { ...base(d), status: 'failing', reason: r.reason, detail: r.detail, newKey: d.key },
      );
    }
  } else if (routing.size > 0) {
    // One load source per original source; line i of it is the group's i-th record.
    const groups = [...sources];
    const loadSourcesIn: LoadSource[] = groups.map(([name, records]) => ({
      name,
      lines: records.map((r) => r.raw),
    }));
    const byPosition = new Map<string, DeadLetterRecord>();
    for (const [name, records] of groups) {
      records.forEach((r, i) => {
        byPosition.set(`${i + 1}\u0000${name}`, r);
      });
    }
    const again = new Map<string, DeadLetter>();
    const scratch = dryRun ? new OverlayObjectStore(deps.store) : undefined;
    load = await loadSources(
      {
        catalog: scratch ? deps.scratchCatalog!(scratch) : deps.catalog,
        store: scratch ?? deps.store,
        clock: deps.clock,
        ids: deps.ids,
        ...(deps.sleep ? { sleep: deps.sleep } : {}),
        config: deps.config,
        ...(deps.summary ? { summary: deps.summary } : {}),
        ...(deps.maxRowsPerFile !== undefined ? { maxRowsPerFile: deps.maxRowsPerFile } : {}),
        ...(deps.fastPath !== undefined ? { fastPath: deps.fastPath } : {}),
        onProgress: (progress) => deps.onProgress?.({ kind: 'load', progress }),
        onDeadLetter: (d) => {
          const orig = byPosition.get(`${d.line}\u0000${d.source}`);
          if (orig) again.set(orig.key, d);
        },
      },
      loadSourcesIn,
    );
    const failedTables = new Map(load.failures.map((f) => [f.table, f.error]));
    for (const [key, r] of routing) {
      const d = r.record;
      const dl = again.get(key);
      if (dl !== undefined) {
        const stored = deadLetterRecord(
          { ...dl, source: d.source, line: d.line, raw: d.raw },
          streamFields(d),
        );
        outcomes.set(key, {
          ...base(d),
          status: 'failing',
          ...(dl.table !== undefined ? { table: dl.table } : {}),
          reason: dl.reason,
          detail: dl.detail,
          newKey: stored.key,
        });
        if (!dryRun) pendingPuts.set(key, stored);
      } else if (r.ok && failedTables.has(r.table)) {
        const e = failedTables.get(r.table) as { message?: string } | undefined;
        outcomes.set(key, {
          ...base(d),
          status: 'not-loaded',
          table: r.table,
          detail: `table ${r.table} did not commit: ${e?.message ?? String(e)}`,
        });
      } else {
        outcomes.set(key, { ...base(d), status: 'landed', ...(r.ok ? { table: r.table } : {}) });
      }
    }
  }

  // Store updates (never in a dry run): failing records stored again, then landed ones removed.
  if (!dryRun && outcomes.size > 0) {
    const writer = deadLetterWriter(deps.deadLetters);
    const stale: string[] = [];
    for (const [key, rec] of pendingPuts) {
      await writer.add(rec);
      if (rec.key !== key) stale.push(key);
    }
    await writer.flush();
    const landedKeys = [...outcomes.values()].filter((o) => o.status === 'landed').map((o) => o.key);
    await inGroups([...landedKeys, ...stale], 16, (k) => deps.deadLetters.delete(k));
    deps.onProgress?.({ kind: 'stored', landed: landedKeys.length, failing: pendingPuts.size });
  }

  const ordered = selected.map((d) => outcomes.get(d.key)!);
  const count = (status: ReplayStatus, by: (o: ReplayOutcome) => string | undefined) => {
    const out: Record<string, number> = {};
    for (const o of ordered) {
      if (o.status !== status) continue;
      const k = by(o) ?? '-';
      out[k] = (out[k] ?? 0) + 1;
    }
    return out;
  };
  return {
    dryRun,
    mode,
    selected: selected.length,
    sources: sources.size,
    landed: ordered.filter((o) => o.status === 'landed').length,
    landedByTable: count('landed', (o) => o.table),
    failingByReason: count('failing', (o) => o.reason),
    notLoaded: ordered.filter((o) => o.status === 'not-loaded').length,
    skipped: ordered.filter((o) => o.status === 'skipped').length,
    routableByTable: count('routable', (o) => o.table),
    outcomes: ordered,
    ...(load ? { load } : {}),
  };
}

function base(d: DeadLetterRecord): Pick<ReplayOutcome, 'key' | 'source' | 'line' | 'previousReason'> {
  return { key: d.key, source: d.source, line: d.line, previousReason: d.reason };
}

/** Why a stored record cannot go through the NDJSON pipeline, or undefined when it can. */
function unreplayable(d: DeadLetterRecord): string | undefined {
  if (d.rawBase64 !== undefined) return 'binary record (rawBase64): not replayable as JSON text';
  if (d.raw.trim() === '') return 'no text to replay';
  return undefined;
}

/** The stream fields a record keeps when it is stored again. */
function streamFields(d: DeadLetterRecord): Omit<Partial<DeadLetterRecord>, keyof DeadLetter | 'key'> {
  const out: { -readonly [K in keyof DeadLetterRecord]?: DeadLetterRecord[K] } = {};
  if (d.shardId !== undefined) out.shardId = d.shardId;
  if (d.sequenceNumber !== undefined) out.sequenceNumber = d.sequenceNumber;
  if (d.partitionKey !== undefined) out.partitionKey = d.partitionKey;
  if (d.arrivalTimeMs !== undefined) out.arrivalTimeMs = d.arrivalTimeMs;
  return out;
}

type Routed = { readonly record: DeadLetterRecord } & (
  | { readonly ok: true; readonly table: string }
  | { readonly ok: false; readonly reason: string; readonly detail: string }
);

/**
 * Parses and routes each record as the load's generic path does (for the route-only dry run, and to
 * know which table each record went to).
 */
function routeEach(config: FloeConfig, records: readonly DeadLetterRecord[]): Map<string, Routed> {
  const router = routerFor(config);
  const out = new Map<string, Routed>();
  for (const record of records) {
    let value: JsonValue;
    try {
      value = parseJsonRecord(record.raw);
    } catch (e) {
      const detail = e instanceof Error ? e.message : String(e);
      out.set(record.key, { record, ok: false, reason: DeadLetterReason.MalformedJson, detail });
      continue;
    }
    if (
      value === null ||
      typeof value !== 'object' ||
      Array.isArray(value) ||
      value instanceof JsonNumberText
    ) {
      const detail = `expected a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`;
      out.set(record.key, { record, ok: false, reason: DeadLetterReason.NotAnObject, detail });
      continue;
    }
    const route = routeOutcome(router(value));
    out.set(record.key, route.ok ? { record, ok: true, table: route.table } : { record, ...route });
  }
  return out;
}

function routeOutcome(
  r: RouteResult,
): { ok: true; table: string } | { ok: false; reason: string; detail: string } {
  if (r.ok) return { ok: true, table: r.table };
  const reason =
    r.reason === 'illegal-name'
      ? DeadLetterReason.IllegalTableName
      : r.reason === 'not-allowed'
        ? DeadLetterReason.TableNotAllowed
        : DeadLetterReason.NoRoute;
  return { ok: false, reason, detail: r.detail };
}

// ---- A throw-away overlay store (dry runs) ------------------------------------------------------

/**
 * Reads fall through to `base`; writes and deletes stay in memory and are never applied. A catalog
 * built over it commits into the overlay, so a dry run exercises every rule and changes nothing.
 */
export class OverlayObjectStore implements ObjectStore {
  private readonly written = new Map<string, Uint8Array>();
  private readonly deleted = new Set<string>();

  constructor(private readonly base: ObjectStore) {}

  async get(uri: string): Promise<Uint8Array> {
    const w = this.written.get(uri);
    if (w) return w;
    if (this.deleted.has(uri)) throw new FloeError(ErrorKind.NotFound, `no object at ${uri}`);
    return this.base.get(uri);
  }

  async put(uri: string, bytes: Uint8Array | string): Promise<void> {
    this.written.set(uri, typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes.slice());
    this.deleted.delete(uri);
  }

  async putIfAbsent(uri: string, bytes: Uint8Array | string): Promise<boolean> {
    if (await this.exists(uri)) return false;
    await this.put(uri, bytes);
    return true;
  }

  async exists(uri: string): Promise<boolean> {
    if (this.written.has(uri)) return true;
    if (this.deleted.has(uri)) return false;
    return this.base.exists(uri);
  }

  async delete(uri: string): Promise<void> {
    this.written.delete(uri);
    this.deleted.add(uri);
  }

  async list(prefix: string): Promise<string[]> {
    const out = new Set((await this.base.list(prefix)).filter((u) => !this.deleted.has(u)));
    const under = prefix.endsWith('/') ? prefix : `${prefix}/`;
    for (const u of this.written.keys()) if (u.startsWith(under)) out.add(u);
    return [...out].sort();
  }

  async listChildren(prefix: string): Promise<string[]> {
    const under = prefix.endsWith('/') ? prefix : `${prefix}/`;
    const names = new Set(
      (await this.base.listChildren(prefix)).filter((n) => !this.deleted.has(`${under}${n}`)),
    );
    for (const u of this.written.keys()) {
      if (u.startsWith(under)) names.add(u.slice(under.length).split('/')[0]!);
    }
    return [...names].sort();
  }

  async size(uri: string): Promise<number> {
    const w = this.written.get(uri);
    if (w) return w.length;
    if (this.deleted.has(uri)) throw new FloeError(ErrorKind.NotFound, `no object at ${uri}`);
    return this.base.size(uri);
  }
}
