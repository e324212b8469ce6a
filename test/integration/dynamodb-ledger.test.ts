import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerTable, DynamoLedger, shardPk } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { ErrorKind, FloeError, isFloeError } from '../../lambdas/src/errors.ts';
import { dataFileFromJson, dataFileToJson } from '../../lambdas/src/iceberg/manifest/data-file-json.ts';
import { DataFileContent } from '../../lambdas/src/iceberg/manifest/types.ts';
import type { Clock } from '../../lambdas/src/ports/clock.ts';
import { type LedgerEntry, padSequence, unbrokenRun } from '../../lambdas/src/ports/ledger.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';

let dynamo: LocalDynamo;
let client: DynamoDBClient;
let tableCount = 0;
const clock: Clock & { t: number } = { t: 1_700_000_000_000, nowMs: () => clock.t };

beforeAll(async () => {
  dynamo = await startDynalite();
  client = dynamo.client;
});

afterAll(async () => {
  await dynamo?.close();
});

/** A ledger on a fresh DynamoDB table (tests stay independent). */
async function freshLedger(c: DynamoDBClient = client): Promise<{ ledger: DynamoLedger; tableName: string }> {
  const tableName = `floe-ledger-${++tableCount}`;
  await createLedgerTable(client, tableName);
  return { ledger: new DynamoLedger(c, { tableName, clock }), tableName };
}

const SHARD = 'shardId-000000000001';

/** Kinesis-like sequence numbers: `k` in the high digits, a common 52-digit low part (k = 1000…9999: 56 digits). */
const LOW = '1234567890123456789012345678901234567890123456789012';
const seq = (k: number): string => `${k}${LOW}`;

function entry(table: string, first: string, last: string, previous: string | null, tag = 'a'): LedgerEntry {
  return {
    table,
    shardId: SHARD,
    firstSequence: first,
    lastSequence: last,
    previousLastSequence: previous,
    files: [
      {
        uri: `s3://bucket/${table}/${first}-${tag}.parquet`,
        kind: 'data',
        records: 2,
        bytes: 100,
        schemaId: 0,
      },
    ],
    records: 2,
    createdAtMs: clock.nowMs(),
    status: 'staged',
  };
}

/** A chain of `n` entries for `table`, entry i covering [seq(10i+1), seq(10i+5)]. */
function chain(table: string, n: number): LedgerEntry[] {
  const out: LedgerEntry[] = [];
  let previous: string | null = null;
  for (let i = 0; i < n; i++) {
    const e = entry(table, seq(10 * i + 1), seq(10 * i + 5), previous);
    out.push(e);
    previous = e.lastSequence;
  }
  return out;
}

async function rejection(p: Promise<unknown>): Promise<FloeError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof FloeError)) throw new Error(`expected a FloeError, got ${String(e)}`);
  return e;
}

describe('DynamoLedger', () => {
  it('appends a chain and re-appends idempotently', async () => {
    const { ledger } = await freshLedger();
    const [e1, e2] = chain('orders', 2) as [LedgerEntry, LedgerEntry];
    expect(await ledger.appendEntry(e1)).toBe('appended');
    expect(await ledger.appendEntry(e2)).toBe('appended');
    // Retries: same content, later time; both the tail entry and an older one.
    expect(await ledger.appendEntry({ ...e2, createdAtMs: e2.createdAtMs + 5000 })).toBe('already-present');
    expect(await ledger.appendEntry(e1)).toBe('already-present');
    const stored = await ledger.entriesAfter('orders', SHARD, null, 10);
    expect(stored.map((e) => e.firstSequence)).toEqual([e1.firstSequence, e2.firstSequence]);
    expect(stored[0]).toEqual(e1);
    expect((await ledger.shardTails(SHARD)).get('orders')).toBe(e2.lastSequence);
  });

  it('rejects a re-append with the same first sequence but different content', async () => {
    const { ledger } = await freshLedger();
    const [e1, e2] = chain('orders', 2) as [LedgerEntry, LedgerEntry];
    await ledger.appendEntry(e1);
    await ledger.appendEntry(e2);
    for (const bad of [
      { ...e2, files: [{ ...e2.files[0]!, uri: 's3://bucket/other.parquet' }] }, // the tail entry
      { ...e1, records: 3 }, // an older entry
      { ...e1, lastSequence: seq(7) }, // same start, other end
    ]) {
      const err = await rejection(ledger.appendEntry(bad));
      expect(err.kind).toBe(ErrorKind.CommitConflict);
      expect(err.context.reason).toBe('different-content');
    }
    expect(await ledger.entriesAfter('orders', SHARD, null, 10)).toEqual([e1, e2]);
  });

  it('rejects chain breaks', async () => {
    const { ledger } = await freshLedger();
    // A chain must start from null.
    let err = await rejection(ledger.appendEntry(entry('orders', seq(11), seq(15), seq(5))));
    expect(err.kind).toBe(ErrorKind.CommitConflict);
    expect(err.context.reason).toBe('chain-break');
    const [e1] = chain('orders', 1) as [LedgerEntry];
    await ledger.appendEntry(e1);
    // A second chain start, a link to a point that is not the tail, a gap-skipping link.
    for (const bad of [
      entry('orders', seq(21), seq(25), null),
      entry('orders', seq(21), seq(25), seq(3)),
      entry('orders', seq(21), seq(25), seq(9)),
    ]) {
      err = await rejection(ledger.appendEntry(bad));
      expect(err.kind).toBe(ErrorKind.CommitConflict);
      expect(err.context.reason).toBe('chain-break');
    }
    // Malformed entries are DataInvalid, not conflicts.
    err = await rejection(ledger.appendEntry(entry('orders', seq(30), seq(29), e1.lastSequence)));
    expect(err.kind).toBe(ErrorKind.DataInvalid);
    err = await rejection(ledger.appendEntry(entry('orders', seq(5), seq(29), e1.lastSequence)));
    expect(err.kind).toBe(ErrorKind.DataInvalid);
    err = await rejection(ledger.appendEntry({ ...e1, table: 'a#b' }));
    expect(err.kind).toBe(ErrorKind.DataInvalid);
    // Chains are per (table, shard): another table and another shard start their own.
    expect(await ledger.appendEntry(entry('users', seq(1), seq(2), null))).toBe('appended');
    expect(await ledger.appendEntry({ ...entry('orders', seq(1), seq(2), null), shardId: 'shardId-2' })).toBe(
      'appended',
    );
  });

  it('orders entriesAfter numerically for 56-digit sequence numbers differing in the high digits', async () => {
    const { ledger } = await freshLedger();
    // 56-digit numbers differing only in their high digits, and shorter ones whose raw strings sort
    // wrongly ("95…" > "1000…").
    const sequences = [9, 10, 95, 96, 999, 1000, 1001, 2000, 2001, 9999].map(seq);
    expect(sequences.slice(5).every((s) => s.length === 56)).toBe(true);
    expect(sequences.some((a, i) => i > 0 && a < sequences[i - 1]!)).toBe(true);
    const entries: LedgerEntry[] = [];
    let previous: string | null = null;
    for (let i = 0; i < sequences.length; i += 2) {
      const e = entry('orders', sequences[i]!, sequences[i + 1]!, previous);
      entries.push(e);
      previous = e.lastSequence;
    }
    // Appended in order (the chain demands it); a second table interleaves on the same shard.
    for (const [i, e] of entries.entries()) {
      expect(await ledger.appendEntry(e)).toBe('appended');
      if (i === 0) await ledger.appendEntry(entry('users', seq(1), seq(8000), null));
    }
    expect(await ledger.entriesAfter('orders', SHARD, null, 100)).toEqual(entries);
    expect(await ledger.entriesAfter('orders', SHARD, entries[0]!.lastSequence, 100)).toEqual(
      entries.slice(1),
    );
    expect(await ledger.entriesAfter('orders', SHARD, entries[1]!.lastSequence, 1)).toEqual([entries[2]]);
    expect(await ledger.entriesAfter('orders', SHARD, entries[3]!.lastSequence, 2)).toEqual(entries.slice(4));
    const end = entries[4]!.lastSequence;
    expect(await ledger.entriesAfter('orders', SHARD, end, 5)).toEqual([]);
    // A sequence differing only in the lowest digit (the same JS number) is a different position.
    const low = `${end.slice(0, -1)}9`;
    expect(Number(low)).toBe(Number(end));
    expect(await ledger.appendEntry(entry('orders', low, low, end))).toBe('appended');
    expect((await ledger.entriesAfter('orders', SHARD, end, 5)).map((e) => e.lastSequence)).toEqual([low]);
    expect((await ledger.entriesAfter('users', SHARD, null, 5)).map((e) => e.lastSequence)).toEqual([
      seq(8000),
    ]);
    expect(unbrokenRun(await ledger.entriesAfter('orders', SHARD, null, 100), null)).toHaveLength(6);
  });

  it('lets exactly one of two racing appenders for the same shard win', async () => {
    const { ledger } = await freshLedger();
    const [e1] = chain('orders', 1) as [LedgerEntry];
    await ledger.appendEntry(e1);
    for (let round = 0; round < 5; round++) {
      const tail = (await ledger.shardTails(SHARD)).get('orders')!;
      const base = 100 * (round + 1);
      // Different first sequences, same link: only one can extend the chain.
      const a = entry('orders', seq(base + 1), seq(base + 5), tail, 'a');
      const b = entry('orders', seq(base + 3), seq(base + 9), tail, 'b');
      const results = await Promise.allSettled([ledger.appendEntry(a), ledger.appendEntry(b)]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(isFloeError((lost[0] as PromiseRejectedResult).reason, ErrorKind.CommitConflict)).toBe(true);
      const winner = results[0]!.status === 'fulfilled' ? a : b;
      expect((await ledger.shardTails(SHARD)).get('orders')).toBe(winner.lastSequence);
    }
    const all = await ledger.entriesAfter('orders', SHARD, null, 100);
    expect(all).toHaveLength(6);
    expect(unbrokenRun(all, null)).toEqual(all); // no fork, no hole
    // Identical racing retries both succeed, exactly one of them appending.
    const tail = (await ledger.shardTails(SHARD)).get('orders')!;
    const same = entry('orders', seq(901), seq(905), tail);
    const outcomes = await Promise.all([
      ledger.appendEntry(same),
      ledger.appendEntry(same),
      ledger.appendEntry(same),
    ]);
    expect(outcomes.filter((o) => o === 'appended')).toHaveLength(1);
  });

  it('reports staged ranges across tables, including runs that started before the range', async () => {
    const { ledger } = await freshLedger();
    // Batch 1 (records 1..40) staged orders [1..30] and users [5..40].
    await ledger.appendEntry(entry('orders', seq(1), seq(30), null));
    await ledger.appendEntry(entry('users', seq(5), seq(40), null));
    // Batch 2 (records 41..60): orders [41..50], [55..60] (two runs), users none.
    await ledger.appendEntry(entry('orders', seq(41), seq(50), seq(30)));
    await ledger.appendEntry(entry('orders', seq(55), seq(60), seq(50)));
    await ledger.appendEntry({ ...entry('clicks', seq(1), seq(99), null), shardId: 'shardId-other' });

    const ranges = await ledger.stagedRanges(SHARD, seq(20), seq(52));
    expect(ranges.map((r) => [r.table, r.firstSequence, r.lastSequence])).toEqual([
      ['orders', seq(1), seq(30)],
      ['users', seq(5), seq(40)],
      ['orders', seq(41), seq(50)],
    ]);
    expect((await ledger.stagedRanges(SHARD, seq(61), seq(70))).length).toBe(0);
    expect((await ledger.stagedRanges(SHARD, seq(60), seq(60))).map((r) => r.table)).toEqual(['orders']);
    expect((await ledger.stagedRanges(SHARD, seq(31), seq(40))).map((r) => r.table)).toEqual(['users']);
    expect(await ledger.stagedRanges(SHARD, seq(52), seq(51))).toEqual([]);
    expect(Object.fromEntries(await ledger.shardTails(SHARD))).toEqual({ orders: seq(60), users: seq(40) });
  });

  it('marks entries committed, and lists tables and shards with staged work', async () => {
    const { ledger } = await freshLedger();
    const orders = chain('orders', 3);
    for (const e of orders) await ledger.appendEntry(e);
    await ledger.appendEntry(entry('users', seq(1), seq(2), null));
    await ledger.appendEntry({ ...entry('orders', seq(1), seq(2), null), shardId: 'shardId-2' });
    expect(await ledger.tablesWithStagedWork()).toEqual(['orders', 'users']);
    expect(await ledger.shardsWithStagedWork('orders')).toEqual([SHARD, 'shardId-2']);

    expect(await ledger.markCommitted('orders', SHARD, orders[1]!.lastSequence)).toBe(2);
    expect(await ledger.markCommitted('orders', SHARD, orders[1]!.lastSequence)).toBe(0); // idempotent
    const after = await ledger.entriesAfter('orders', SHARD, null, 10);
    expect(after.map((e) => e.status)).toEqual(['committed', 'committed', 'staged']);
    // The tail entry too (it is also recorded in the tail item).
    expect(await ledger.markCommitted('orders', SHARD, orders[2]!.lastSequence)).toBe(1);
    expect((await ledger.entriesAfter('orders', SHARD, null, 10)).map((e) => e.status)).toEqual([
      'committed',
      'committed',
      'committed',
    ]);
    expect(await ledger.shardsWithStagedWork('orders')).toEqual(['shardId-2']);
    expect(await ledger.markCommitted('orders', 'shardId-2', seq(2))).toBe(1);
    expect(await ledger.tablesWithStagedWork()).toEqual(['users']);
    expect(await ledger.markCommitted('users', SHARD, seq(1))).toBe(0); // entry ends above 1
    expect(await ledger.markCommitted('users', SHARD, seq(2))).toBe(1);
    expect(await ledger.tablesWithStagedWork()).toEqual([]);
    // The chain continues after everything was committed.
    expect(await ledger.appendEntry(entry('orders', seq(100), seq(101), orders[2]!.lastSequence))).toBe(
      'appended',
    );
    expect(await ledger.tablesWithStagedWork()).toEqual(['orders']);
  });

  it('survives a crash between the tail update and the entry write', async () => {
    // A client whose PutItem of one chosen entry fails: the append dies right after its commit point.
    let failFor: string | undefined;
    const crashing = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver);
        return (command: { constructor: { name: string }; input: { Item?: { sk?: { S?: string } } } }) => {
          const sk = command.input.Item?.sk?.S;
          if (
            failFor !== undefined &&
            command.constructor.name === 'PutItemCommand' &&
            sk?.endsWith(padSequence(failFor))
          ) {
            return Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
          }
          return target.send(command as never);
        };
      },
    });
    const { ledger: healthy, tableName } = await freshLedger();
    const dying = new DynamoLedger(crashing, { tableName, clock });
    const [e1, e2] = chain('orders', 2) as [LedgerEntry, LedgerEntry];
    failFor = e1.lastSequence;
    const err = await rejection(dying.appendEntry(e1));
    expect(err.retryable).toBe(true);
    // The entry is in the ledger (only as the tail's copy) and every reader sees it.
    expect(await healthy.entriesAfter('orders', SHARD, null, 10)).toEqual([e1]);
    expect(
      (await healthy.stagedRanges(SHARD, e1.firstSequence, e1.lastSequence)).map((r) => r.table),
    ).toEqual(['orders']);
    expect(await healthy.tablesWithStagedWork()).toEqual(['orders']);
    // The retry is idempotent and writes the missing item.
    failFor = undefined;
    expect(await dying.appendEntry(e1)).toBe('already-present');
    // Again the crash window, then the next append writes the previous entry's item first.
    failFor = e2.lastSequence;
    await rejection(dying.appendEntry(e2));
    failFor = undefined;
    const e3 = entry('orders', seq(50), seq(51), e2.lastSequence);
    expect(await healthy.appendEntry(e3)).toBe('appended');
    const all = await healthy.entriesAfter('orders', SHARD, null, 10);
    expect(unbrokenRun(all, null)).toEqual([e1, e2, e3]);
    // markCommitted of an entry that exists only as the tail's copy.
    const e4 = entry('orders', seq(60), seq(61), e3.lastSequence);
    failFor = e4.lastSequence;
    await rejection(dying.appendEntry(e4));
    failFor = undefined;
    expect(await healthy.markCommitted('orders', SHARD, e4.lastSequence)).toBe(4);
    expect((await healthy.entriesAfter('orders', SHARD, e3.lastSequence, 10)).map((e) => e.status)).toEqual([
      'committed',
    ]);
    expect(await healthy.tablesWithStagedWork()).toEqual([]);
  });

  it('appends entries of many chains at once: tails one by one, items 25 to a BatchWriteItem', async () => {
    const sent: string[] = [];
    const counting = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver);
        return (command: { constructor: { name: string } }) => {
          sent.push(command.constructor.name);
          return target.send(command as never);
        };
      },
    });
    const { tableName } = await freshLedger();
    const ledger = new DynamoLedger(counting, { tableName, clock });
    const tables = Array.from({ length: 60 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    const first = tables.map((t) => entry(t, seq(1001), seq(1005), null));
    const count = (name: string) => sent.filter((n) => n === name).length;
    expect(await ledger.appendEntries(first)).toEqual(first.map(() => ({ ok: true, outcome: 'appended' })));
    expect(count('BatchWriteItemCommand')).toBe(3);
    expect(count('PutItemCommand')).toBe(0);
    for (const e of first) expect(await ledger.entriesAfter(e.table, SHARD, null, 10)).toEqual([e]);
    // A retry of the same entries: every one already there, nothing written again.
    sent.length = 0;
    expect(await ledger.appendEntries(first)).toEqual(
      first.map(() => ({ ok: true, outcome: 'already-present' })),
    );
    expect(count('BatchWriteItemCommand')).toBe(0);
    // One failure is its own: a chain break and a different content beside entries that land.
    const second = tables.slice(0, 30).map((t) => entry(t, seq(1006), seq(1009), seq(1005)));
    const broken = entry('t40', seq(1020), seq(1021), seq(1010));
    const other = entry('t41', seq(1001), seq(1005), null, 'b');
    const results = await ledger.appendEntries([...second, broken, other]);
    expect(results.slice(0, 30)).toEqual(second.map(() => ({ ok: true, outcome: 'appended' })));
    for (const r of results.slice(30)) {
      expect(r.ok).toBe(false);
      expect(isFloeError((r as { error: unknown }).error, ErrorKind.CommitConflict)).toBe(true);
    }
    for (const [i, t] of tables.slice(0, 30).entries())
      expect(await ledger.entriesAfter(t, SHARD, null, 10)).toEqual([first[i], second[i]]);
    expect(await ledger.entriesAfter('t40', SHARD, null, 10)).toEqual([first[40]]);
  });

  it('a BatchWriteItem applied whose answer is lost: the entries stay visible, the retry finds them', async () => {
    let lose = true;
    const losing = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver);
        return async (command: { constructor: { name: string } }) => {
          const out = await target.send(command as never);
          if (lose && command.constructor.name === 'BatchWriteItemCommand')
            throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
          return out;
        };
      },
    });
    const { ledger: healthy, tableName } = await freshLedger();
    const dying = new DynamoLedger(losing, { tableName, clock });
    const es = ['a', 'b', 'c'].map((t) => entry(t, seq(1001), seq(1005), null));
    const results = await dying.appendEntries(es);
    for (const r of results) {
      expect(r.ok).toBe(false);
      expect(((r as { error: FloeError }).error as FloeError).retryable).toBe(true);
    }
    for (const e of es) expect(await healthy.entriesAfter(e.table, SHARD, null, 10)).toEqual([e]);
    lose = false;
    expect(await dying.appendEntries(es)).toEqual(es.map(() => ({ ok: true, outcome: 'already-present' })));
    // The chains go on from there, and each holds exactly its two entries.
    const next = es.map((e) => entry(e.table, seq(1006), seq(1007), e.lastSequence));
    expect(await healthy.appendEntries(next)).toEqual(next.map(() => ({ ok: true, outcome: 'appended' })));
    for (const [i, e] of es.entries())
      expect(unbrokenRun(await healthy.entriesAfter(e.table, SHARD, null, 10), null)).toEqual([e, next[i]]);
  });

  it('translates throttling into a retryable FloeError', async () => {
    const throttling = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver);
        return () =>
          Promise.reject(
            Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
              name: 'ProvisionedThroughputExceededException',
              $metadata: { httpStatusCode: 400 },
            }),
          );
      },
    });
    const { tableName } = await freshLedger();
    const ledger = new DynamoLedger(throttling, { tableName, clock });
    const err = await rejection(ledger.appendEntry(chain('orders', 1)[0]!));
    expect(err.kind).toBe(ErrorKind.Unexpected);
    expect(err.retryable).toBe(true);
    expect(err.context.awsError).toBe('ProvisionedThroughputExceededException');
  });

  it('carries a file DataFile descriptor through append and read', async () => {
    const { ledger } = await freshLedger();
    const [plain] = chain('orders', 1) as [LedgerEntry];
    const uri = plain.files[0]!.uri;
    const dataFile = dataFileToJson({
      content: DataFileContent.DATA,
      file_path: uri,
      file_format: 'PARQUET',
      partition: [19_000, null, 7n, Number.NaN],
      record_count: 2n,
      file_size_in_bytes: 100n,
      value_counts: new Map([
        [1, 2n],
        [2, 2n],
      ]),
      lower_bounds: new Map([[1, new Uint8Array([0x00, 0xff])]]),
    });
    const e1: LedgerEntry = { ...plain, files: [{ ...plain.files[0]!, dataFile }] };
    expect(await ledger.appendEntry(e1)).toBe('appended');
    const [stored] = await ledger.entriesAfter('orders', SHARD, null, 10);
    expect(stored!.files[0]!.dataFile).toBe(dataFile);
    expect(stored).toEqual(e1);
    expect(dataFileFromJson(stored!.files[0]!.dataFile!).file_path).toBe(uri);
    // Re-reading the entry item rather than the tail's copy: append a successor, then read both.
    const e2 = entry('orders', seq(11), seq(15), e1.lastSequence);
    expect(await ledger.appendEntry(e2)).toBe('appended');
    expect(await ledger.entriesAfter('orders', SHARD, null, 10)).toEqual([e1, e2]);
    expect((await ledger.entriesAfter('orders', SHARD, null, 10))[1]!.files[0]).not.toHaveProperty(
      'dataFile',
    );
    // Re-appending the identical entry is a retry; without the descriptor it is different content.
    expect(await ledger.appendEntry({ ...e1, createdAtMs: e1.createdAtMs + 1000 })).toBe('already-present');
    const err = await rejection(ledger.appendEntry(plain));
    expect(err.kind).toBe(ErrorKind.CommitConflict);
    expect(err.context.reason).toBe('different-content');
  });

  it('treats a tail written without the dataFile field like one with dataFile null', async () => {
    const { ledger, tableName } = await freshLedger();
    const [e1] = chain('orders', 1) as [LedgerEntry];
    await ledger.appendEntry(e1);
    // Rewrite the tail's copy in the format of a ledger from before descriptors were carried.
    const legacy = JSON.stringify({
      table: e1.table,
      shardId: e1.shardId,
      firstSequence: e1.firstSequence,
      lastSequence: e1.lastSequence,
      previousLastSequence: e1.previousLastSequence,
      records: e1.records,
      files: e1.files.map((f) => ({ ...f, schemaId: f.schemaId ?? null, specId: f.specId ?? null })),
    });
    expect(legacy).not.toContain('dataFile');
    await client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: shardPk(SHARD) }, sk: { S: 'T#orders' } },
        UpdateExpression: 'SET entry = :e',
        ExpressionAttributeValues: { ':e': { S: legacy } },
      }),
    );
    expect(await ledger.entriesAfter('orders', SHARD, null, 10)).toEqual([e1]);
    expect(await ledger.appendEntry(e1)).toBe('already-present');
  });

  it('creates the table idempotently', async () => {
    const { tableName } = await freshLedger();
    await expect(createLedgerTable(client, tableName)).resolves.toBeUndefined();
  });
});
