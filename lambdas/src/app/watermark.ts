/**
 * The commit watermark (DESIGN §4, invariant 2): per shard, the last ledger position whose records
 * a table's commits already hold. It is written as a small immutable JSON file before the catalog
 * swap and referenced from the committed metadata, so it changes atomically with the data.
 *
 * Where the reference lives: the table property `floe.watermark` (read back as the source of truth)
 * and the snapshot summary key of the same name (for audits, as Kafka Connect keeps its offsets).
 * The property survives snapshot expiry and lets a commit that adds no file (every staged record
 * dead-lettered) still move the watermark; reading it costs one small GET however long the history.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import type { Ids } from '../ports/clock.ts';
import { canonicalSequence, compareSequence } from '../ports/ledger.ts';
import type { ObjectStore } from '../ports/object-store.ts';

export const WATERMARK_KEY = 'floe.watermark';

/** Shard id → sequence number (decimal string) of the last committed ledger position. */
export type Watermark = ReadonlyMap<string, string>;

const FORMAT = 'floe-commit-watermark';

export function encodeWatermark(w: Watermark): string {
  const shards: Record<string, string> = {};
  for (const id of [...w.keys()].sort()) shards[id] = w.get(id) as string;
  return JSON.stringify({ format: FORMAT, version: 1, shards });
}

export function decodeWatermark(text: string, where: string): Map<string, string> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw bad(where, `not JSON (${(e as Error).message})`);
  }
  const o = doc as { format?: unknown; version?: unknown; shards?: unknown };
  if (
    o?.format !== FORMAT ||
    o.version !== 1 ||
    typeof o.shards !== 'object' ||
    o.shards === null ||
    Array.isArray(o.shards)
  ) {
    throw bad(where, `expected {"format":"${FORMAT}","version":1,"shards":{…}}`);
  }
  const out = new Map<string, string>();
  for (const [shard, seq] of Object.entries(o.shards as Record<string, unknown>)) {
    if (typeof seq !== 'string' || !/^\d+$/.test(seq))
      throw bad(where, `shard ${shard}: bad sequence ${String(seq)}`);
    out.set(shard, canonicalSequence(seq));
  }
  return out;
}

function bad(where: string, why: string): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `commit watermark ${where}: ${why}`, { context: { where } });
}

/** Immutable files: cache their content by location. */
const cache = new Map<string, Map<string, string>>();
const CACHE_MAX = 512;

/** The watermark the table's metadata references (empty when none: nothing committed by Floe yet). */
export async function readWatermark(store: ObjectStore, m: TableMetadata): Promise<Map<string, string>> {
  const uri = m.properties[WATERMARK_KEY];
  if (uri === undefined) return new Map();
  const hit = cache.get(uri);
  if (hit) return new Map(hit);
  const w = decodeWatermark(new TextDecoder().decode(await store.get(uri)), uri);
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(uri, w);
  return new Map(w);
}

/** Writes `w` as a new immutable file beside the table's metadata; returns its location. */
export async function writeWatermark(
  store: ObjectStore,
  ids: Ids,
  m: TableMetadata,
  w: Watermark,
): Promise<string> {
  const dir = m.properties['write.metadata.path'] ?? `${m.location}/metadata`;
  const uri = `${dir}/floe-watermark-${ids.uuid()}.json`;
  await store.put(uri, encodeWatermark(w));
  return uri;
}

/** `w` moved forward to `positions` (a position never moves back). */
export function advance(w: Watermark, positions: ReadonlyMap<string, string>): Map<string, string> {
  const out = new Map(w);
  for (const [shard, seq] of positions) {
    const old = out.get(shard);
    if (old === undefined || compareSequence(seq, old) > 0) out.set(shard, seq);
  }
  return out;
}
