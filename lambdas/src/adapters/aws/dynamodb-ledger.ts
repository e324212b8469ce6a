/**
 * The ingest ledger on DynamoDB (DESIGN §4), with single-item conditional writes only (no
 * TransactWriteItems, so dynalite runs the very same protocol). The lease lock
 * (`dynamodb-lock.ts`) shares the table.
 *
 * ## Key schema (one table, string keys `pk`, `sk`)
 *
 * | item  | pk                 | sk                            | notes                                      |
 * |-------|--------------------|-------------------------------|--------------------------------------------|
 * | entry | `SHARD#<shardId>`  | `E#<table>#<pad(last)>`       | immutable content + status; TTL once committed |
 * | tail  | `SHARD#<shardId>`  | `T#<table>`                   | end of the (table, shard) chain + a copy of its newest entry; never expires |
 * | lock  | `LOCK#<name>`      | `LOCK`                        | owner, fencing token, expiry (see dynamodb-lock.ts) |
 *
 * `pad(x)` is the sequence number zero-padded to 129 digits, so lexical order is numeric order.
 * Table names and shard ids never contain `#` (checked), so `E#<table>#` is an exact prefix.
 * Attributes: `table`, `shardId`, `firstPad`, `lastPad`, `entry` (canonical JSON of the content),
 * `status`, `createdAtMs`, `records`; `expiresAt` (epoch seconds, the table's TTL attribute) on
 * committed entries; `stagedTable` + `stagedKey` (`<shardId>#<pad(last)>`) only while staged.
 *
 * Sparse GSI `staged` (hash `stagedTable`, range `stagedKey`, keys only) holds exactly the staged
 * entries (and tails whose newest entry is staged): `tablesWithStagedWork` scans it,
 * `shardsWithStagedWork` and `markCommitted` query it. It is eventually consistent, which is fine
 * for "where is there work": no chain is ever read through it (§4: a GSI may not show an entry
 * yet, which is why the committer reads chains from the base table and takes only unbroken runs).
 *
 * Reads that decide correctness are strongly consistent base-table reads:
 * - `entriesAfter(table, shard, w)`: Query `E#<table>#<pad(w+1)>` … `E#<table>#:` plus the tail.
 * - `shardTails(shard)`: Query `begins_with(sk, 'T#')`, one item per table.
 * - `stagedRanges(shard, from, to)`: the tails Query; each tail carries the newest entry of its
 *   chain, and older entries can overlap [from, to] only when that newest entry links from at or
 *   after `from` (a retried batch), so only then one more Query `E#<table>#<pad(from)>` … for that
 *   table. The common case (a new batch beyond every tail) is a single Query.
 *
 * ## Append protocol (tail first)
 *
 * 1. GetItem tail (consistent). The append is legal only when the tail ends at
 *    `entry.previousLastSequence` (no tail item ⇔ null). Otherwise the entry is either already in
 *    the chain (identical → `already-present`; same first sequence but other content →
 *    CommitConflict) or links to the wrong place (CommitConflict, a chain break).
 * 2. Materialize the tail's copy of the previous entry (PutItem if absent; usually a no-op).
 * 3. UpdateItem tail: end := entry.last, copy := entry, on condition "the tail still ends at
 *    entry.previousLastSequence". This single conditional write is the commit point of the append:
 *    of racing appenders linking to the same place exactly one passes; the others re-read and get
 *    `already-present` (same content) or CommitConflict.
 * 4. PutItem the entry item (if absent).
 *
 * Crash windows: before 3, nothing is in the ledger (the staged files are orphans, cleaned up;
 * the retry restages). Between 3 and 4, the entry exists only as the tail's copy: every reader
 * reads the tail first and merges its copy (so the entry is visible at once and never missed), and
 * the next append of that chain (step 2) or `markCommitted` writes the item before the copy can be
 * replaced. The tail moves only by step 3, and only onto an entry that is thereby recorded, so the
 * chain never has a hole and never forks. (The converse order, entry first and tail after, lets two
 * appenders with different first sequences both write entries linking to the same place, a fork
 * whose loser would look staged to the ingest yet never be committed; keying entries by their
 * link instead would fix that but leave no index on which `stagedRanges` is a Query.)
 *
 * Entries of a chain are appended in increasing sequence order: the ingest stages a shard's records
 * of a table in order, so a record of that table at or below the tail is staged.
 *
 * Committed entries expire (`expiresAt`) after `committedRetentionMs`, which must exceed the
 * stream's retention, so that a replay of any record still in the stream finds its entry. Tail
 * items never expire (the chain's end must survive idle periods). If a chain stays idle for longer
 * than the retention, its next append re-writes the newest entry's item from the tail's copy, with
 * the copy's status (committed once `markCommitted` saw it) and a fresh expiry: harmless.
 *
 * `markCommitted` and the two "with staged work" listings read the sparse GSI, so an entry written
 * moments ago may be missed once; the committer calls `markCommitted` on every run (also when it
 * had nothing to commit), which catches up.
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  ScanCommand,
  type ScanCommandInput,
  UpdateItemCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { forEachBounded, settleAll } from '../../engine/bounded.ts';
import { ErrorKind, FloeError, isFloeError } from '../../errors.ts';
import type { Clock } from '../../ports/clock.ts';
import {
  APPEND_CONCURRENCY,
  type AppendOutcome,
  type AppendResult,
  canonicalSequence,
  compareSequence,
  entryContent,
  type Ledger,
  type LedgerEntry,
  type LedgerFile,
  type LedgerStatus,
  nextSequence,
  normalizeEntry,
  padSequence,
  type StagedRange,
  sameSequence,
  sortEntries,
} from '../../ports/ledger.ts';

export const STAGED_INDEX = 'staged';
/** Items per BatchWriteItem (DynamoDB's limit). */
const BATCH_WRITE_ITEMS = 25;
export const TTL_ATTRIBUTE = 'expiresAt';
/** Default retention of committed entries: longer than Kinesis' 7-day extended retention. */
export const DEFAULT_COMMITTED_RETENTION_MS = 8 * 24 * 3600 * 1000;

export interface DynamoLedgerOptions {
  readonly tableName: string;
  readonly clock: Clock;
  /** How long committed entries stay (must exceed the stream's retention). */
  readonly committedRetentionMs?: number;
}

type Item = Record<string, AttributeValue>;

export const shardPk = (shardId: string): string => `SHARD#${shardId}`;
const entrySk = (table: string, lastPad: string): string => `E#${table}#${lastPad}`;
/** Upper bound of every `E#<table>#<digits>` key (':' sorts right after '9'). */
const entrySkEnd = (table: string): string => `E#${table}#:`;
const tailSk = (table: string): string => `T#${table}`;
const entryKeyOf = (e: LedgerEntry): string => `${e.shardId}\u0000${e.table}\u0000${e.lastSequence}`;
const stagedKey = (shardId: string, lastPad: string): string => `${shardId}#${lastPad}`;

/** The newest entry of a chain as its tail item records it. */
interface Tail {
  readonly table: string;
  readonly shardId: string;
  readonly last: string;
  readonly lastPad: string;
  readonly entry: LedgerEntry;
  readonly content: string;
}

export class DynamoLedger implements Ledger {
  private readonly table: string;
  private readonly clock: Clock;
  private readonly retentionMs: number;

  constructor(
    private readonly client: DynamoDBClient,
    options: DynamoLedgerOptions,
  ) {
    this.table = options.tableName;
    this.clock = options.clock;
    this.retentionMs = options.committedRetentionMs ?? DEFAULT_COMMITTED_RETENTION_MS;
  }

  async appendEntry(raw: LedgerEntry): Promise<AppendOutcome> {
    const tail = await this.appendTail(raw);
    if (tail === 'already-present') return tail;
    await this.putEntryItem(tail);
    return 'appended';
  }

  /**
   * Entries of different chains: each chain's tail advanced on its own (steps 1–3, a conditional
   * write each, `APPEND_CONCURRENCY` at a time), then the new entries' items written together,
   * 25 to a `BatchWriteItem` (step 4). Those puts are unconditional, which is safe: an entry whose
   * tail this call advanced ends beyond every entry of its chain, so no item has its key yet
   * (a racing appender of the very same entry that lost writes the same item). A failure of step
   * 4 leaves those entries as their tails' copies, as a crash there would: retryable, and the
   * retry finds them `already-present`.
   */
  async appendEntries(raws: readonly LedgerEntry[]): Promise<AppendResult[]> {
    const results: AppendResult[] = new Array(raws.length);
    const fresh: { index: number; entry: LedgerEntry }[] = [];
    await forEachBounded([...raws.keys()], APPEND_CONCURRENCY, async (i) => {
      try {
        const tail = await this.appendTail(raws[i]!);
        if (tail === 'already-present') results[i] = { ok: true, outcome: tail };
        else fresh.push({ index: i, entry: tail });
      } catch (error) {
        results[i] = { ok: false, error };
      }
    });
    fresh.sort((a, b) => a.index - b.index);
    for (let g = 0; g < fresh.length; g += BATCH_WRITE_ITEMS) {
      const group = fresh.slice(g, g + BATCH_WRITE_ITEMS);
      try {
        await this.batchPut(group.map((f) => this.entryItem(f.entry)));
        for (const f of group) {
          this.noteWritten(f.entry);
          results[f.index] = { ok: true, outcome: 'appended' };
        }
      } catch (e) {
        for (const f of group) {
          results[f.index] = {
            ok: false,
            error: dynamoError(e, 'putEntries', { table: f.entry.table, shardId: f.entry.shardId }),
          };
        }
      }
    }
    return results;
  }

  /** Puts `items` with BatchWriteItem, again for what DynamoDB left unprocessed (with backoff). */
  private async batchPut(items: readonly Item[]): Promise<void> {
    let requests = items.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt > 0) {
        if (attempt > 8) {
          throw new FloeError(
            ErrorKind.Unexpected,
            `DynamoDB BatchWriteItem left ${requests.length} item(s) unprocessed after ${attempt} attempts`,
            { retryable: true, context: { operation: 'putEntries', unprocessed: requests.length } },
          );
        }
        await new Promise((r) => setTimeout(r, Math.min(1000, 10 * 2 ** attempt)));
      }
      const out = await this.client.send(
        new BatchWriteItemCommand({ RequestItems: { [this.table]: requests } }),
      );
      requests = (out.UnprocessedItems?.[this.table] ?? []).flatMap((w) =>
        w.PutRequest?.Item ? [{ PutRequest: { Item: w.PutRequest.Item } }] : [],
      );
    }
  }

  /**
   * Steps 1–3 of the append protocol: resolves `already-present`, or the normalized entry once
   * its chain's tail holds it (its item still to be written, step 4).
   */
  private async appendTail(raw: LedgerEntry): Promise<'already-present' | LedgerEntry> {
    const entry: LedgerEntry = { ...normalizeEntry(raw), status: 'staged' };
    const content = entryContent(entry);
    // Two rounds: a lost race in step 3 re-reads the tail once, which then tells the outcome.
    for (let round = 0; ; round++) {
      // Round 0 may use the tail `shardTails` just read (the ingest reads them first): step 3's
      // condition still guards the chain, and a stale hint only costs the second round.
      const hint = round === 0 ? this.takeTailHint(entry.table, entry.shardId) : undefined;
      const tail = hint !== undefined ? hint.tail : await this.getTail(entry.table, entry.shardId);
      if (tail?.content === content) {
        await this.materialize(tail);
        return 'already-present';
      }
      if (!sameSequence(tail?.last ?? null, entry.previousLastSequence)) {
        if (hint !== undefined) continue; // judge conflicts on a fresh read only
        return this.notAtTail(entry, content, tail);
      }
      if (tail && !this.written.has(entryKeyOf(tail.entry))) await this.materialize(tail);
      try {
        await this.advanceTail(entry, content, tail);
      } catch (e) {
        if (isConditionFailed(e) && round === 0) continue;
        if (isConditionFailed(e))
          throw chainConflict(entry, 'the chain moved while appending', tail?.last ?? null);
        throw dynamoError(e, 'appendEntry', { table: entry.table, shardId: entry.shardId });
      }
      return entry;
    }
  }

  /** `entry` does not link to the tail: an earlier append of it, a conflicting one, or a chain break. */
  private async notAtTail(
    entry: LedgerEntry,
    content: string,
    tail: Tail | undefined,
  ): Promise<'already-present'> {
    let same: { entry: LedgerEntry; content: string } | undefined;
    if (tail && compareSequence(tail.entry.firstSequence, entry.firstSequence) === 0) {
      same = tail;
    } else if (tail && compareSequence(entry.firstSequence, tail.last) <= 0) {
      // The first stored entry ending at or after entry.first is the one that could start there.
      const items = await this.queryAll(
        {
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
          ExpressionAttributeValues: {
            ':pk': s(shardPk(entry.shardId)),
            ':lo': s(entrySk(entry.table, padSequence(entry.firstSequence))),
            ':hi': s(entrySkEnd(entry.table)),
          },
          Limit: 1,
        },
        1,
      );
      const found = items[0] === undefined ? undefined : itemToEntry(items[0]);
      if (found && compareSequence(found.firstSequence, entry.firstSequence) === 0) {
        same = { entry: found, content: entryContent(found) };
      }
    }
    if (same?.content === content) return 'already-present';
    if (same) {
      throw new FloeError(
        ErrorKind.CommitConflict,
        `ledger ${entry.table}/${entry.shardId}: an entry starting at ${entry.firstSequence} already exists with different content`,
        {
          context: {
            reason: 'different-content',
            table: entry.table,
            shardId: entry.shardId,
            firstSequence: entry.firstSequence,
          },
        },
      );
    }
    throw chainConflict(entry, 'the entry does not link to the end of the chain', tail?.last ?? null);
  }

  private async advanceTail(entry: LedgerEntry, content: string, tail: Tail | undefined): Promise<void> {
    const lastPad = padSequence(entry.lastSequence);
    const values: Item = {
      ':table': s(entry.table),
      ':shard': s(entry.shardId),
      ':last': s(entry.lastSequence),
      ':lastPad': s(lastPad),
      ':entry': s(content),
      ':staged': s('staged'),
      ':created': n(entry.createdAtMs),
      ':sk': s(stagedKey(entry.shardId, lastPad)),
    };
    let condition = 'attribute_not_exists(pk)';
    if (tail) {
      condition = 'lastPad = :prevPad';
      values[':prevPad'] = s(tail.lastPad);
    }
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: { pk: s(shardPk(entry.shardId)), sk: s(tailSk(entry.table)) },
        UpdateExpression:
          'SET #table = :table, shardId = :shard, #last = :last, lastPad = :lastPad, entry = :entry, ' +
          'entryStatus = :staged, entryCreatedAtMs = :created, stagedTable = :table, stagedKey = :sk',
        ConditionExpression: condition,
        ExpressionAttributeNames: { '#table': 'table', '#last': 'last' },
        ExpressionAttributeValues: values,
      }),
    );
  }

  /** Writes the entry item unless it exists (entries are immutable; status only moves forward). */
  private async putEntryItem(entry: LedgerEntry): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.table,
          Item: this.entryItem(entry),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (e) {
      if (!isConditionFailed(e))
        throw dynamoError(e, 'putEntry', { table: entry.table, shardId: entry.shardId });
    }
    this.noteWritten(entry);
  }

  /** Known to exist: the next append of this chain need not materialize it again. */
  private noteWritten(entry: LedgerEntry): void {
    if (this.written.size >= 10_000) this.written.clear();
    this.written.add(entryKeyOf(entry));
  }

  /** Tails read by `shardTails`, for the next `appendEntry` of each chain (used once). */
  private readonly tailHints = new Map<string, { tail: Tail | undefined }>();
  /** Entry items this ledger wrote or found (they need no materializing). */
  private readonly written = new Set<string>();

  private takeTailHint(table: string, shardId: string): { tail: Tail | undefined } | undefined {
    const key = `${shardId}\u0000${table}`;
    const hint = this.tailHints.get(key);
    this.tailHints.delete(key);
    return hint;
  }

  private materialize(tail: Tail): Promise<void> {
    return this.putEntryItem(tail.entry);
  }

  private entryItem(entry: LedgerEntry): Item {
    const lastPad = padSequence(entry.lastSequence);
    const item: Item = {
      pk: s(shardPk(entry.shardId)),
      sk: s(entrySk(entry.table, lastPad)),
      table: s(entry.table),
      shardId: s(entry.shardId),
      firstPad: s(padSequence(entry.firstSequence)),
      lastPad: s(lastPad),
      entry: s(entryContent(entry)),
      status: s(entry.status),
      createdAtMs: n(entry.createdAtMs),
      records: n(entry.records),
    };
    if (entry.status === 'staged') {
      item.stagedTable = s(entry.table);
      item.stagedKey = s(stagedKey(entry.shardId, lastPad));
    } else {
      item[TTL_ATTRIBUTE] = n(this.expiresAt());
    }
    return item;
  }

  private expiresAt(): number {
    return Math.ceil((this.clock.nowMs() + this.retentionMs) / 1000);
  }

  private async getTail(table: string, shardId: string): Promise<Tail | undefined> {
    try {
      const out = await this.client.send(
        new GetItemCommand({
          TableName: this.table,
          Key: { pk: s(shardPk(shardId)), sk: s(tailSk(table)) },
          ConsistentRead: true,
        }),
      );
      return out.Item ? itemToTail(out.Item) : undefined;
    } catch (e) {
      throw dynamoError(e, 'getTail', { table, shardId });
    }
  }

  private async tails(shardId: string): Promise<Tail[]> {
    const items = await this.queryAll({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
      ExpressionAttributeValues: { ':pk': s(shardPk(shardId)), ':t': s('T#') },
    });
    return items.map(itemToTail);
  }

  async entriesAfter(
    table: string,
    shardId: string,
    afterSequence: string | null,
    limit: number,
  ): Promise<LedgerEntry[]> {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `entriesAfter: limit must be a positive integer, got ${limit}`,
      );
    }
    // The tail first: an entry not yet written as an item is then either in the tail's copy or,
    // if a later append wrote it meanwhile, in the Query below.
    const tail = await this.getTail(table, shardId);
    const from = afterSequence === null ? '0' : nextSequence(afterSequence);
    const items = await this.queryAll(
      {
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
        ExpressionAttributeValues: {
          ':pk': s(shardPk(shardId)),
          ':lo': s(entrySk(table, padSequence(from))),
          ':hi': s(entrySkEnd(table)),
        },
      },
      limit,
    );
    const entries = items.map(itemToEntry);
    if (
      tail &&
      entries.length < limit &&
      compareSequence(tail.last, from) >= 0 &&
      !entries.some((e) => compareSequence(e.lastSequence, tail.last) === 0)
    ) {
      entries.push(tail.entry);
    }
    return sortEntries(entries).slice(0, limit);
  }

  async stagedRanges(shardId: string, fromSequence: string, toSequence: string): Promise<StagedRange[]> {
    const from = canonicalSequence(fromSequence);
    const to = canonicalSequence(toSequence);
    if (compareSequence(from, to) > 0) return [];
    const overlaps = (e: LedgerEntry) =>
      compareSequence(e.lastSequence, from) >= 0 && compareSequence(e.firstSequence, to) <= 0;
    const found = new Map<string, LedgerEntry>();
    const add = (e: LedgerEntry) => {
      if (overlaps(e)) found.set(`${e.table}#${e.lastSequence}`, e);
    };
    const deeper: string[] = [];
    for (const tail of await this.tails(shardId)) {
      if (compareSequence(tail.last, from) < 0) continue; // the whole chain ends before the range
      add(tail.entry);
      const previous = tail.entry.previousLastSequence;
      if (previous !== null && compareSequence(previous, from) >= 0) deeper.push(tail.table);
    }
    const toPad = padSequence(to);
    await settleAll(
      deeper.map(async (table) => {
        const items = await this.queryAll({
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
          FilterExpression: 'firstPad <= :toPad',
          ExpressionAttributeValues: {
            ':pk': s(shardPk(shardId)),
            ':lo': s(entrySk(table, padSequence(from))),
            ':hi': s(entrySkEnd(table)),
            ':toPad': s(toPad),
          },
        });
        for (const item of items) add(itemToEntry(item));
      }),
    );
    return [...found.values()]
      .sort(
        (a, b) =>
          compareSequence(a.firstSequence, b.firstSequence) ||
          (a.table < b.table ? -1 : a.table > b.table ? 1 : 0),
      )
      .map((e) => ({
        table: e.table,
        shardId: e.shardId,
        firstSequence: e.firstSequence,
        lastSequence: e.lastSequence,
        previousLastSequence: e.previousLastSequence,
        status: e.status,
      }));
  }

  async shardTails(shardId: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const key of this.tailHints.keys())
      if (key.startsWith(`${shardId}\u0000`)) this.tailHints.delete(key);
    for (const tail of await this.tails(shardId)) {
      out.set(tail.table, tail.last);
      this.tailHints.set(`${shardId}\u0000${tail.table}`, { tail });
    }
    return out;
  }

  async tablesWithStagedWork(): Promise<string[]> {
    const tables = new Set<string>();
    let start: Item | undefined;
    do {
      const input: ScanCommandInput = {
        TableName: this.table,
        IndexName: STAGED_INDEX,
        ProjectionExpression: 'stagedTable',
        ...(start ? { ExclusiveStartKey: start } : {}),
      };
      let out: { Items?: Item[]; LastEvaluatedKey?: Item };
      try {
        out = await this.client.send(new ScanCommand(input));
      } catch (e) {
        throw dynamoError(e, 'tablesWithStagedWork', {});
      }
      for (const item of out.Items ?? []) {
        const t = item.stagedTable?.S;
        if (t !== undefined) tables.add(t);
      }
      start = out.LastEvaluatedKey;
    } while (start);
    return [...tables].sort();
  }

  async shardsWithStagedWork(table: string): Promise<string[]> {
    const items = await this.queryAll(
      {
        IndexName: STAGED_INDEX,
        KeyConditionExpression: 'stagedTable = :t',
        ExpressionAttributeValues: { ':t': s(table) },
      },
      Number.POSITIVE_INFINITY,
      false,
    );
    const shards = new Set<string>();
    for (const item of items) {
      const key = item.stagedKey?.S;
      if (key !== undefined) shards.add(key.slice(0, key.lastIndexOf('#')));
    }
    return [...shards].sort();
  }

  async markCommitted(table: string, shardId: string, upToSequence: string): Promise<number> {
    const upTo = canonicalSequence(upToSequence);
    let changed = 0;
    // The tail's copy first (strongly consistent): it may be the only record of the newest entry.
    const tail = await this.getTail(table, shardId);
    if (tail && compareSequence(tail.last, upTo) <= 0 && tail.entry.status === 'staged') {
      await this.materialize(tail);
      if (await this.markItem(shardId, entrySk(table, tail.lastPad))) changed++;
      await this.markTailCopy(tail);
    }
    // Older staged entries through the sparse index (it may lag; a later call catches up).
    const upToPad = padSequence(upTo);
    const items = await this.queryAll(
      {
        IndexName: STAGED_INDEX,
        KeyConditionExpression: 'stagedTable = :t AND stagedKey BETWEEN :lo AND :hi',
        ExpressionAttributeValues: {
          ':t': s(table),
          ':lo': s(stagedKey(shardId, padSequence('0'))),
          ':hi': s(stagedKey(shardId, upToPad)),
        },
      },
      Number.POSITIVE_INFINITY,
      false,
    );
    // The index also holds tail items (sk `T#…`): their copy was handled above.
    const keys = items.map((i) => i.sk?.S ?? '').filter((sk) => sk.startsWith('E#'));
    for (let i = 0; i < keys.length; i += 16) {
      const done = await settleAll(keys.slice(i, i + 16).map((sk) => this.markItem(shardId, sk)));
      changed += done.filter(Boolean).length;
    }
    return changed;
  }

  /** staged → committed, once; never recreates an item that expired meanwhile. */
  private async markItem(shardId: string, sk: string): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: { pk: s(shardPk(shardId)), sk: s(sk) },
          UpdateExpression: 'SET #status = :committed, #ttl = :ttl REMOVE stagedTable, stagedKey',
          ConditionExpression: 'attribute_exists(pk) AND #status = :staged',
          ExpressionAttributeNames: { '#status': 'status', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: {
            ':committed': s('committed'),
            ':staged': s('staged'),
            ':ttl': n(this.expiresAt()),
          },
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailed(e)) return false;
      throw dynamoError(e, 'markCommitted', { shardId, sk });
    }
  }

  private async markTailCopy(tail: Tail): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: { pk: s(shardPk(tail.shardId)), sk: s(tailSk(tail.table)) },
          UpdateExpression: 'SET entryStatus = :committed REMOVE stagedTable, stagedKey',
          ConditionExpression: 'lastPad = :lastPad AND entryStatus = :staged',
          ExpressionAttributeValues: {
            ':committed': s('committed'),
            ':staged': s('staged'),
            ':lastPad': s(tail.lastPad),
          },
        }),
      );
    } catch (e) {
      // The chain moved on (its next append wrote this entry's item, which markItem has marked).
      if (isConditionFailed(e)) return;
      throw dynamoError(e, 'markCommitted', { table: tail.table, shardId: tail.shardId });
    }
  }

  /** All items of a Query (consistent on the base table), following pages until `max` items. */
  private async queryAll(
    input: Omit<QueryCommandInput, 'TableName'>,
    max = Number.POSITIVE_INFINITY,
    consistent = true,
  ): Promise<Item[]> {
    const out: Item[] = [];
    let start: Item | undefined;
    do {
      let page: { Items?: Item[]; LastEvaluatedKey?: Item };
      try {
        page = await this.client.send(
          new QueryCommand({
            ...input,
            TableName: this.table,
            ConsistentRead: consistent,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
      } catch (e) {
        throw dynamoError(e, 'query', {});
      }
      out.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start && out.length < max);
    return out;
  }
}

function chainConflict(entry: LedgerEntry, why: string, tail: string | null): FloeError {
  return new FloeError(
    ErrorKind.CommitConflict,
    `ledger ${entry.table}/${entry.shardId}: ${why} (chain ends at ${tail ?? 'its start'}, entry links to ${
      entry.previousLastSequence ?? 'the start'
    })`,
    {
      context: {
        reason: 'chain-break',
        table: entry.table,
        shardId: entry.shardId,
        firstSequence: entry.firstSequence,
        previousLastSequence: entry.previousLastSequence,
        tail,
      },
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Items

const s = (value: string): AttributeValue => ({ S: value });
const n = (value: number): AttributeValue => ({ N: String(value) });

function str(item: Item, name: string): string {
  const v = item[name]?.S;
  if (v === undefined) {
    throw new FloeError(ErrorKind.Unexpected, `ledger item ${item.pk?.S}/${item.sk?.S} lacks ${name}`);
  }
  return v;
}

function num(item: Item, name: string): number {
  const v = item[name]?.N;
  return v === undefined ? 0 : Number(v);
}

interface StoredContent {
  table: string;
  shardId: string;
  firstSequence: string;
  lastSequence: string;
  previousLastSequence: string | null;
  records: number;
  oldestArrivalMs?: number;
  files: {
    uri: string;
    kind: 'data' | 'pending';
    records: number;
    bytes: number;
    schemaId: number | null;
    specId: number | null;
    /** Absent in entries written before descriptors were carried. */
    dataFile?: string | null;
  }[];
}

function parseContent(json: string, status: LedgerStatus, createdAtMs: number): LedgerEntry {
  const c = JSON.parse(json) as StoredContent;
  return {
    table: c.table,
    shardId: c.shardId,
    firstSequence: c.firstSequence,
    lastSequence: c.lastSequence,
    previousLastSequence: c.previousLastSequence,
    records: c.records,
    ...(c.oldestArrivalMs === undefined ? {} : { oldestArrivalMs: c.oldestArrivalMs }),
    createdAtMs,
    status,
    files: c.files.map(
      (f): LedgerFile => ({
        uri: f.uri,
        kind: f.kind,
        records: f.records,
        bytes: f.bytes,
        ...(f.schemaId === null ? {} : { schemaId: f.schemaId }),
        ...(f.specId === null ? {} : { specId: f.specId }),
        ...(f.dataFile === null || f.dataFile === undefined ? {} : { dataFile: f.dataFile }),
      }),
    ),
  };
}

function asStatus(v: string): LedgerStatus {
  return v === 'committed' ? 'committed' : 'staged';
}

function itemToEntry(item: Item): LedgerEntry {
  return parseContent(str(item, 'entry'), asStatus(str(item, 'status')), num(item, 'createdAtMs'));
}

function itemToTail(item: Item): Tail {
  const entry = parseContent(
    str(item, 'entry'),
    asStatus(str(item, 'entryStatus')),
    num(item, 'entryCreatedAtMs'),
  );
  return {
    table: str(item, 'table'),
    shardId: str(item, 'shardId'),
    last: str(item, 'last'),
    lastPad: str(item, 'lastPad'),
    entry,
    // Re-derived rather than the stored text, so content written by an older version (e.g. without
    // `dataFile`) compares equal to the same entry's current canonical form.
    content: entryContent(entry),
  };
}

// ---------------------------------------------------------------------------------------------
// Errors

const RETRYABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'LimitExceededException',
  'TransactionConflictException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN']);

export function isConditionFailed(e: unknown): boolean {
  return (
    e instanceof ConditionalCheckFailedException ||
    (e instanceof Error && e.name === 'ConditionalCheckFailedException')
  );
}

/** An AWS SDK error as a FloeError: throttling, 5xx and network errors are retryable. */
export function dynamoError(e: unknown, operation: string, context: Record<string, unknown>): FloeError {
  if (isFloeError(e)) return e;
  const err = e as {
    name?: string;
    code?: string;
    message?: string;
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: number };
  };
  const name = err?.name ?? 'Error';
  const status = err?.$metadata?.httpStatusCode;
  const ctx = { ...context, operation, awsError: name };
  if (name === 'ResourceNotFoundException') {
    return new FloeError(ErrorKind.NotFound, `DynamoDB ${operation}: ${err.message ?? name}`, {
      cause: e,
      context: ctx,
    });
  }
  const retryable =
    RETRYABLE.has(name) ||
    err?.$retryable !== undefined ||
    (status !== undefined && status >= 500) ||
    (err?.code !== undefined && NETWORK_CODES.has(err.code));
  return new FloeError(ErrorKind.Unexpected, `DynamoDB ${operation} failed: ${name}: ${err?.message ?? ''}`, {
    cause: e,
    retryable,
    context: ctx,
  });
}

// ---------------------------------------------------------------------------------------------
// Table

export interface CreateLedgerTableOptions {
  /** Give up waiting for the table to become ACTIVE after this long (default 5 minutes). */
  readonly timeoutMs?: number;
}

/**
 * Creates the ledger + lock table (on-demand billing, the sparse `staged` GSI, TTL on
 * `expiresAt`) and waits until it is ACTIVE. Idempotent: an existing table is awaited, not
 * recreated. TTL is skipped where the endpoint does not implement it (dynalite).
 */
export async function createLedgerTable(
  client: DynamoDBClient,
  tableName: string,
  options: CreateLedgerTableOptions = {},
): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
          { AttributeName: 'stagedTable', AttributeType: 'S' },
          { AttributeName: 'stagedKey', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: STAGED_INDEX,
            KeySchema: [
              { AttributeName: 'stagedTable', KeyType: 'HASH' },
              { AttributeName: 'stagedKey', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      }),
    );
  } catch (e) {
    if (!(e instanceof Error && e.name === 'ResourceInUseException'))
      throw dynamoError(e, 'createTable', { tableName });
  }
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  for (let delay = 20; ; delay = Math.min(delay * 2, 2000)) {
    let active = false;
    try {
      const t = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
      active =
        t?.TableStatus === 'ACTIVE' &&
        (t.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE');
    } catch (e) {
      if (!(e instanceof Error && e.name === 'ResourceNotFoundException'))
        throw dynamoError(e, 'describeTable', { tableName });
    }
    if (active) break;
    if (Date.now() > deadline) {
      throw new FloeError(ErrorKind.Unexpected, `DynamoDB table ${tableName} did not become ACTIVE`, {
        retryable: true,
        context: { tableName },
      });
    }
    await new Promise((r) => setTimeout(r, delay));
  }
  try {
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    const status = ttl.TimeToLiveDescription?.TimeToLiveStatus;
    if (status === 'ENABLED' || status === 'ENABLING') return;
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    );
  } catch (e) {
    if (e instanceof Error && e.name === 'UnknownOperationException') return; // dynalite: no TTL
    throw dynamoError(e, 'updateTimeToLive', { tableName });
  }
}
