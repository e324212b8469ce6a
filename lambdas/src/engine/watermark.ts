/**
 * The commit watermark (DESIGN §4, invariant 2): per shard, the last ledger position whose records
 * a table's commits already hold, and when a commit last moved it.
 *
 * **Where it lives.** Inline, as compact JSON, in the table property `floe.watermark`, set by the
 * same metadata commit that adds the data, so it changes atomically with it. Table properties are
 * part of metadata.json itself: every engine carries them into its own commits (S3 Tables
 * compaction, Glue optimizers, Spark), snapshot expiry does not touch them, and no cleaner of
 * unreferenced or orphan files can delete them. Floe's snapshot summary gets the same text under
 * the same key: an audit copy, and the fallback when the property is gone.
 *
 * **Older tables.** Earlier Floe versions wrote the map to an immutable side file
 * (`metadata/floe-watermark-<uuid>.json`) and put its URI in the property. No snapshot references
 * that file, so S3 Tables' unreferenced-file removal and orphan cleaners delete it. It is still read
 * while it exists; when it is gone the newest inline summary copy is used if it is current,
 * otherwise the table fails loudly (`watermarkLost`) instead of committing records a second time.
 *
 * **Bounded size.** A shard costs about 95 bytes. Shards no commit moved for `idleMs` whose ledger
 * chain is settled are pruned (`pruneSettledShards`: the ledger alone then gives the same floor),
 * and an encoding over `MAX_WATERMARK_BYTES` (below Glue's 512,000-byte parameter values) fails
 * the commit rather than write a property some catalog would refuse or truncate.
 */
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import { MAIN_BRANCH } from '../iceberg/snapshot.ts';
import { branchHead, snapshotAncestors, type TableMetadata } from '../iceberg/table-metadata.ts';
import { canonicalSequence, compareSequence, type Ledger, type LedgerEntry } from '../ports/ledger.ts';
import type { ObjectStore } from '../ports/object-store.ts';
import { settleAll } from './bounded.ts';

export const WATERMARK_KEY = 'floe.watermark';

/**
 * The table property holding what a branch's commits hold: `floe.watermark` for main,
 * `floe.watermark@<branch>` for another branch. (A snapshot's summary copy is always under
 * `floe.watermark`: it describes the snapshot's own lineage, whichever ref points at it.)
 */
export function watermarkKey(branch: string = MAIN_BRANCH): string {
  return branch === MAIN_BRANCH ? WATERMARK_KEY : `${WATERMARK_KEY}@${branch}`;
}

/** Shard id → sequence number (decimal string) of the last committed ledger position. */
export type Positions = ReadonlyMap<string, string>;

/** One shard's last committed ledger position, and when (epoch ms) a commit last moved it. */
export interface ShardMark {
  readonly sequence: string;
  readonly movedAtMs: number;
}

export type Watermark = ReadonlyMap<string, ShardMark>;

const FORMAT = 'floe-commit-watermark';
/** Inline encoding: `{"format":…,"version":2,"shards":{"<shard>":["<sequence>",<moved at, epoch s>]}}`. */
const INLINE_VERSION = 2;
/** The side files of older versions: `{"format":…,"version":1,"shards":{"<shard>":"<sequence>"}}`. */
const LEGACY_VERSION = 1;

/** Glue parameter values hold at most 512,000 characters; stay clear of it (about 4,200 shards). */
export const MAX_WATERMARK_BYTES = 400_000;
/** Ledger reads a commit spends at most on pruning (the oldest idle shards first). */
export const MAX_PRUNE_CHECKS = 16;
/** Default idle time before a shard may be pruned: the ledger's default committed retention. */
export const DEFAULT_PRUNE_IDLE_MS = 8 * 24 * 3600 * 1000;

// ---------------------------------------------------------------------------------------------
// Encoding

export function encodeWatermark(w: Watermark): string {
  const shards: Record<string, [string, number]> = {};
  for (const id of [...w.keys()].sort()) {
    const mark = w.get(id) as ShardMark;
    shards[id] = [mark.sequence, Math.floor(mark.movedAtMs / 1000)];
  }
  return JSON.stringify({ format: FORMAT, version: INLINE_VERSION, shards });
}

/**
 * Decodes an inline watermark or a legacy side file (`where` names it in errors). Legacy files
 * carry no times: their shards count as moved at `legacyMovedAtMs`.
 */
export function decodeWatermark(text: string, where: string, legacyMovedAtMs = 0): Map<string, ShardMark> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw bad(where, `not JSON (${(e as Error).message})`);
  }
  const o = doc as { format?: unknown; version?: unknown; shards?: unknown };
  const known = o?.version === INLINE_VERSION || o?.version === LEGACY_VERSION;
  if (o?.format !== FORMAT || !known || !isRecord(o.shards)) {
    throw bad(where, `expected {"format":"${FORMAT}","version":${INLINE_VERSION},"shards":{…}}`);
  }
  const out = new Map<string, ShardMark>();
  for (const [shard, value] of Object.entries(o.shards)) {
    const mark =
      o.version === LEGACY_VERSION
        ? { sequence: value, movedAtSeconds: Math.floor(legacyMovedAtMs / 1000) }
        : inlineMark(value);
    out.set(shard, checkedMark(mark, shard, where));
  }
  return out;
}

function inlineMark(value: unknown): { sequence: unknown; movedAtSeconds: unknown } {
  return Array.isArray(value) && value.length === 2
    ? { sequence: value[0], movedAtSeconds: value[1] }
    : { sequence: undefined, movedAtSeconds: undefined };
}

function checkedMark(
  mark: { sequence: unknown; movedAtSeconds: unknown },
  shard: string,
  where: string,
): ShardMark {
  const { sequence, movedAtSeconds } = mark;
  if (typeof sequence !== 'string' || !/^\d+(?:\.\d+)?$/.test(sequence))
    throw bad(where, `shard ${shard}: bad sequence ${JSON.stringify(sequence)}`);
  if (typeof movedAtSeconds !== 'number' || !Number.isSafeInteger(movedAtSeconds) || movedAtSeconds < 0)
    throw bad(where, `shard ${shard}: bad time ${JSON.stringify(movedAtSeconds)}`);
  return { sequence: canonicalSequence(sequence), movedAtMs: movedAtSeconds * 1000 };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(where: string, why: string): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `commit watermark ${where}: ${why}`, { context: { where } });
}

/** An inline watermark is JSON; anything else in the property is a legacy side file's URI. */
export function isInlineWatermark(value: string): boolean {
  return value.trimStart().startsWith('{');
}

/** The encoding of `w`, refused (DataInvalid) when it would outgrow `MAX_WATERMARK_BYTES`. */
export function encodeWithinLimit(w: Watermark, table: string): string {
  const text = encodeWatermark(w);
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > MAX_WATERMARK_BYTES) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `table '${table}': the commit watermark would hold ${w.size} shards (${bytes} bytes), over the ` +
        `${MAX_WATERMARK_BYTES}-byte limit that keeps it within catalog property limits; shards are ` +
        'pruned once idle and settled in the ledger, so this many shards are still open or unsettled',
      { context: { table, shards: w.size, bytes, limit: MAX_WATERMARK_BYTES } },
    );
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Reading

/** Shard → sequence of `w` (what runs are read above and entries marked committed up to). */
export function positionsOf(w: Watermark): Map<string, string> {
  return new Map([...w].map(([shard, mark]) => [shard, mark.sequence]));
}

/** The committed positions `branch` of the table holds (see `loadWatermark`). */
export async function readWatermark(
  store: ObjectStore,
  m: TableMetadata,
  branch: string = MAIN_BRANCH,
): Promise<Map<string, string>> {
  return positionsOf(await loadWatermark(store, m, branch));
}

/**
 * The watermark of `branch` (default main) of the table `m` describes: the inline property; a
 * legacy side file the property names; or, without a property, the newest inline copy in the
 * branch's lineage's summaries (empty when Floe never committed). A branch that does not exist yet
 * starts at main's head when first committed to, so it holds what main holds: main's watermark.
 * Throws DataInvalid when a legacy side file is gone and nothing current replaces it.
 */
export async function loadWatermark(
  store: ObjectStore,
  m: TableMetadata,
  branch: string = MAIN_BRANCH,
): Promise<Map<string, ShardMark>> {
  const key = watermarkKey(branch);
  const value = m.properties[key];
  if (value === undefined) {
    if (branch !== MAIN_BRANCH && m.refs[branch] === undefined) return loadWatermark(store, m);
    return watermarkFromSnapshots(m, branch) ?? new Map();
  }
  if (isInlineWatermark(value)) return decodeWatermark(value, `table property ${key}`);
  return readLegacyFile(store, m, value);
}

/**
 * Per shard, the further of the two positions (with the time it moved there): what a ref holds
 * once it holds both lineages' commits, as main does when it fast-forwards to a branch.
 */
export function furthest(a: Watermark, b: Watermark): Map<string, ShardMark> {
  const out = new Map(a);
  for (const [shard, mark] of b) {
    const old = out.get(shard);
    if (old === undefined || compareSequence(mark.sequence, old.sequence) > 0) out.set(shard, mark);
  }
  return out;
}

async function readLegacyFile(
  store: ObjectStore,
  m: TableMetadata,
  uri: string,
): Promise<Map<string, ShardMark>> {
  let bytes: Uint8Array;
  try {
    bytes = await store.get(uri);
  } catch (e) {
    if (!isFloeError(e, ErrorKind.NotFound)) throw e;
    const copy = watermarkFromSnapshots(m);
    if (copy) return copy;
    throw watermarkLost(m, uri, e);
  }
  return decodeWatermark(new TextDecoder().decode(bytes), uri, Number(m['last-updated-ms']));
}

/**
 * The inline copy in the newest snapshot of the current lineage that carries one. A URI copy there
 * means an older Floe version committed last, so any older inline copy is stale: none then.
 * (A commit that added no file moved the property without a snapshot, so a copy may lag the lost
 * property by such commits: their records were all dead letters, and are dead-lettered again.)
 */
export function watermarkFromSnapshots(
  m: TableMetadata,
  branch: string = MAIN_BRANCH,
): Map<string, ShardMark> | undefined {
  const head = branchHead(m, branch);
  if (head === undefined) return undefined;
  for (const snapshot of snapshotAncestors(m, head['snapshot-id'])) {
    const copy = snapshot.summary[WATERMARK_KEY];
    if (copy === undefined) continue;
    if (!isInlineWatermark(copy)) return undefined;
    return decodeWatermark(copy, `snapshot ${snapshot['snapshot-id']} summary ${WATERMARK_KEY}`);
  }
  return undefined;
}

function watermarkLost(m: TableMetadata, uri: string, cause: unknown): FloeError {
  const empty = encodeWatermark(new Map());
  return new FloeError(
    ErrorKind.DataInvalid,
    `commit watermark of table ${m.location} is lost: its property ${WATERMARK_KEY} names the file ${uri} ` +
      '(written by an earlier Floe version), which no longer exists — removed as unreferenced by S3 ' +
      'Tables or an orphan-file cleanup — and no snapshot carries a current inline copy. Committing ' +
      'without it could commit staged records a second time, so this table is not committed. To ' +
      `resume, restore the file, or set ${WATERMARK_KEY} to the positions the table holds, e.g. ${empty} ` +
      'with each shard as "<shard>":["<last committed sequence>",<epoch seconds>]',
    { cause, retryable: false, context: { where: uri, table: m.location, reason: 'watermark-file-missing' } },
  );
}

// ---------------------------------------------------------------------------------------------
// Moving and pruning

/** `w` moved forward to `positions` at `nowMs` (a position never moves back). */
export function advance(w: Watermark, positions: Positions, nowMs: number): Map<string, ShardMark> {
  const out = new Map(w);
  for (const [shard, sequence] of positions) {
    const old = out.get(shard);
    if (old === undefined || compareSequence(sequence, old.sequence) > 0)
      out.set(shard, { sequence: canonicalSequence(sequence), movedAtMs: nowMs });
  }
  return out;
}

/**
 * Where the leading run of committed entries of one chain ends, or `from` if that is higher.
 * Entries marked committed were in some commit, so this is a floor for the watermark: what the
 * committer reads runs above when a shard is absent from the watermark (pruned, or a table
 * re-created outside Floe). `entries` are in sequence order, as `Ledger.entriesAfter` returns them.
 */
export function committedFloor(entries: readonly LedgerEntry[], from: string | null): string | null {
  let floor = from;
  for (const e of entries) {
    if (e.status !== 'committed') break;
    if (floor === null || compareSequence(e.lastSequence, floor) > 0) floor = e.lastSequence;
  }
  return floor;
}

export interface PruneScope {
  readonly ledger: Pick<Ledger, 'entriesAfter'>;
  readonly table: string;
  readonly nowMs: number;
  /** Only shards no commit moved for this long are considered. */
  readonly idleMs: number;
  /** Entries the committer reads per shard: the prune check sees the floor it would see. */
  readonly maxEntries: number;
}

/**
 * `w` without its settled idle shards (at most `MAX_PRUNE_CHECKS` checked, oldest first). A shard
 * is settled when every entry of its ledger chain is committed and their committed floor reaches
 * its position: statuses only move forward and new entries link above the tail, so the committer
 * never takes an entry at or below that position again, with or without the mark. (Should the
 * committed start of a resumed chain expire before its next commit, the shard waits: README.)
 */
export async function pruneSettledShards(w: Watermark, scope: PruneScope): Promise<Map<string, ShardMark>> {
  const idle = [...w]
    .filter(([, mark]) => scope.nowMs - mark.movedAtMs >= scope.idleMs)
    .sort(([, a], [, b]) => a.movedAtMs - b.movedAtMs)
    .slice(0, MAX_PRUNE_CHECKS);
  const settled = await settleAll(idle.map(([shard, mark]) => isSettled(scope, shard, mark)));
  const out = new Map(w);
  idle.forEach(([shard], i) => {
    if (settled[i]) out.delete(shard);
  });
  return out;
}

async function isSettled(scope: PruneScope, shard: string, mark: ShardMark): Promise<boolean> {
  try {
    const entries = await scope.ledger.entriesAfter(scope.table, shard, null, scope.maxEntries);
    if (entries.some((e) => e.status !== 'committed')) return false;
    const floor = committedFloor(entries, null);
    return floor !== null && compareSequence(floor, mark.sequence) >= 0;
  } catch {
    return false; // pruning is an economy: a failed read keeps the shard for a later commit
  }
}
