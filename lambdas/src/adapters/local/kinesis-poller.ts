/**
 * A local stand-in for Lambda's Kinesis event source mapping (ESM), for ONE stream, over an
 * injected KinesisClient (kinesalite in tests and the demo, or a real stream).
 *
 * Semantics mirrored from the ESM as configured in DESIGN §4:
 * - ParallelizationFactor 1: at most one in-flight batch per shard; shards run in parallel.
 * - StartingPosition TRIM_HORIZON (or after the stored checkpoint).
 * - BatchSize (`batchSize`, default 100) and MaximumBatchingWindowInSeconds (`batchWindowMs`,
 *   default 0): a batch is invoked once full, or once the shard is caught up and the window that
 *   opened with the batch's first record has expired.
 * - ReportBatchItemFailures: the handler may return `{ batchItemFailures: [{ itemIdentifier }] }`;
 *   the shard is checkpointed just BEFORE the lowest reported sequence number and everything from
 *   it on is re-delivered (records after it are replayed even if they succeeded). An identifier
 *   that is not a sequence number of the batch counts as a function error (as in Lambda).
 * - Function errors (a thrown handler, or a partial failure that reports the batch's FIRST record,
 *   i.e. no progress): with `bisectOnError` (default true) a batch of more than one record is split
 *   in half and each half retried on its own (splits do not count as retries); a batch that
 *   cannot be split is retried up to `maxRetries` (default 3) times, then handed to
 *   `onFailure(event, error)` (the on-failure destination) and skipped: the checkpoint moves past it.
 *
 * Not mirrored: resharding (shards are listed once, at `start()`; parent/child ordering is not
 * enforced), MaximumRecordAgeInSeconds, tumbling windows, the 6 MB payload limit, KPL de-aggregation.
 *
 * Checkpoints (last fully processed sequence number per shard) live in memory and, with
 * `checkpointFile`, in a JSON file `{ "<shardId>": "<sequence>" }` rewritten atomically on every
 * advance, so a restarted poller resumes AFTER_SEQUENCE_NUMBER of the checkpoint.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type KinesisClient,
  ListShardsCommand,
  type Shard,
} from '@aws-sdk/client-kinesis';
import { ErrorKind, FloeError } from '../../errors.ts';
import { compareSequence } from '../../ports/ledger.ts';
import {
  buildKinesisEvent,
  type KinesisBatchRecord,
  type KinesisBatchResponse,
  type KinesisEvent,
} from '../../records/kinesis-event.ts';

// biome-ignore lint/suspicious/noConfusingVoidType: lets a plain `async (event) => {…}` be a handler
export type KinesisHandler = (event: KinesisEvent) => Promise<KinesisBatchResponse | undefined | void>;

export interface KinesisPollerOptions {
  readonly client: KinesisClient;
  readonly streamName: string;
  readonly handler: KinesisHandler;
  /** Where batches go after retries are exhausted (Lambda's on-failure destination). Default: dropped. */
  readonly onFailure?: (event: KinesisEvent, error: unknown) => Promise<void> | void;
  /** Records per invocation, 1–10,000. Default 100. */
  readonly batchSize?: number;
  /** How long to gather records for a batch that is not full. Default 0. */
  readonly batchWindowMs?: number;
  /** Retries of an unsplittable failing batch before `onFailure`. Default 3. */
  readonly maxRetries?: number;
  /** BisectBatchOnFunctionError. Default true. */
  readonly bisectOnError?: boolean;
  /** Pause between reads of a caught-up shard. Default 200 ms. */
  readonly pollIntervalMs?: number;
  /** Pause after a failed Kinesis call before trying again. Default 500 ms. */
  readonly readErrorBackoffMs?: number;
  /** Persist checkpoints here (JSON). Default: memory only. */
  readonly checkpointFile?: string;
  /** awsRegion in events. Default: the client's region. */
  readonly region?: string;
  /** Called on Kinesis read errors (which are retried). Default: ignored (see `stats().readErrors`). */
  readonly onReadError?: (shardId: string, error: unknown) => void;
}

export interface ShardStats {
  readonly shardId: string;
  /** Last fully processed sequence number (null: nothing yet). */
  readonly checkpoint: string | null;
  /** Records read but not yet checkpointed. */
  readonly buffered: number;
  /** Handler invocations, including retries and bisected halves. */
  readonly invocations: number;
  /** Records delivered, counting re-deliveries. */
  readonly recordsDelivered: number;
  readonly partialFailures: number;
  readonly functionErrors: number;
  readonly bisections: number;
  /** Batches / records handed to `onFailure`. */
  readonly batchesFailed: number;
  readonly recordsFailed: number;
  readonly readErrors: number;
  /** The shard is closed and fully processed. */
  readonly finished: boolean;
}

export interface PollerStats {
  readonly running: boolean;
  readonly shards: ShardStats[];
}

interface DrainWaiter {
  /** The target is taken from the first caught-up read that starts after this read count. */
  readonly afterRead: number;
  /** undefined: not known yet; null: the shard was empty. */
  target: string | null | undefined;
}

interface ShardState {
  readonly shardId: string;
  checkpoint: string | null;
  /** Highest sequence number read (buffer end). */
  lastFetched: string | null;
  buffer: KinesisBatchRecord[];
  /** When the current (not yet full) batch's first record was buffered. */
  windowStart: number;
  iterator: string | undefined;
  /** The shard is closed and every record was read. */
  ended: boolean;
  readsStarted: number;
  waiters: DrainWaiter[];
  stats: {
    -readonly [K in keyof Omit<ShardStats, 'shardId' | 'checkpoint' | 'buffered' | 'finished'>]: number;
  };
}

interface Attempt {
  /** How many leading records of the batch are done (processed, or handed to onFailure). */
  readonly completed: number;
}

export class KinesisPoller {
  private readonly o: Required<
    Omit<KinesisPollerOptions, 'onFailure' | 'checkpointFile' | 'region' | 'onReadError'>
  > &
    Pick<KinesisPollerOptions, 'onFailure' | 'checkpointFile' | 'region' | 'onReadError'>;
  private shards: ShardState[] = [];
  private loops: Promise<void>[] = [];
  private running = false;
  private stopping = false;
  private wake: (() => void)[] = [];
  private streamArn = '';
  private region = '';
  private persist: Promise<void> = Promise.resolve();
  private fatal: unknown;

  constructor(options: KinesisPollerOptions) {
    const batchSize = options.batchSize ?? 100;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
      throw new FloeError(ErrorKind.ConfigInvalid, `batchSize ${batchSize} is not an integer in 1..10000`);
    }
    const maxRetries = options.maxRetries ?? 3;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) {
      throw new FloeError(ErrorKind.ConfigInvalid, `maxRetries ${maxRetries} is not a non-negative integer`);
    }
    this.o = {
      ...options,
      batchSize,
      maxRetries,
      batchWindowMs: options.batchWindowMs ?? 0,
      bisectOnError: options.bisectOnError ?? true,
      pollIntervalMs: options.pollIntervalMs ?? 200,
      readErrorBackoffMs: options.readErrorBackoffMs ?? 500,
    };
  }

  /** Lists the shards, loads checkpoints and starts one polling loop per shard. */
  async start(): Promise<void> {
    if (this.running) throw new FloeError(ErrorKind.Unexpected, 'Kinesis poller already started');
    const { client, streamName } = this.o;
    const summary = await client.send(new DescribeStreamSummaryCommand({ StreamName: streamName }));
    this.streamArn = summary.StreamDescriptionSummary?.StreamARN ?? '';
    this.region = this.o.region ?? (await client.config.region());
    const shards: Shard[] = [];
    let nextToken: string | undefined;
    do {
      const page = await client.send(
        new ListShardsCommand(nextToken ? { NextToken: nextToken } : { StreamName: streamName }),
      );
      shards.push(...(page.Shards ?? []));
      nextToken = page.NextToken;
    } while (nextToken);
    const saved = await this.loadCheckpoints();
    this.shards = shards
      .map((s) => s.ShardId as string)
      .sort()
      .map((shardId) => ({
        shardId,
        checkpoint: saved[shardId] ?? null,
        lastFetched: saved[shardId] ?? null,
        buffer: [],
        windowStart: 0,
        iterator: undefined,
        ended: false,
        readsStarted: 0,
        waiters: [],
        stats: {
          invocations: 0,
          recordsDelivered: 0,
          partialFailures: 0,
          functionErrors: 0,
          bisections: 0,
          batchesFailed: 0,
          recordsFailed: 0,
          readErrors: 0,
        },
      }));
    this.running = true;
    this.stopping = false;
    this.fatal = undefined;
    this.loops = this.shards.map((s) =>
      this.shardLoop(s).catch((e: unknown) => {
        this.fatal ??= e;
      }),
    );
  }

  /** Stops polling; resolves once in-flight batches have finished and checkpoints are written. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.wakeAll();
    await Promise.all(this.loops);
    await this.persist;
    this.running = false;
  }

  /**
   * Resolves when every shard's checkpoint has reached the shard's tip as of this call (records
   * put before the call are processed or handed to onFailure). Rejects if a shard loop died.
   */
  async drain(): Promise<void> {
    if (!this.running || this.stopping) {
      throw new FloeError(ErrorKind.Unexpected, 'Kinesis poller is not running');
    }
    const mine = this.shards.map((s) => {
      const w: DrainWaiter = { afterRead: s.readsStarted, target: undefined };
      s.waiters.push(w);
      return { s, w };
    });
    this.wakeAll();
    try {
      for (;;) {
        if (this.fatal !== undefined) throw this.fatal;
        if (mine.every(({ s, w }) => drained(s, w))) break;
        if (this.stopping)
          throw new FloeError(ErrorKind.Unexpected, 'Kinesis poller stopped before draining');
        await sleep(5);
      }
      await this.persist;
    } finally {
      for (const { s, w } of mine) s.waiters = s.waiters.filter((x) => x !== w);
    }
  }

  stats(): PollerStats {
    return {
      running: this.running,
      shards: this.shards.map((s) => ({
        shardId: s.shardId,
        checkpoint: s.checkpoint,
        buffered: s.buffer.length,
        finished: s.ended && s.buffer.length === 0,
        ...s.stats,
      })),
    };
  }

  // -------------------------------------------------------------------------------------------

  private async shardLoop(s: ShardState): Promise<void> {
    while (!this.stopping) {
      if (!s.ended && s.buffer.length < this.o.batchSize) {
        const progressed = await this.read(s);
        if (this.stopping) break;
        if (!progressed.caughtUp) continue;
      }
      const windowOpen = Date.now() < s.windowStart + this.o.batchWindowMs;
      if (s.buffer.length > 0 && (s.buffer.length >= this.o.batchSize || s.ended || !windowOpen)) {
        await this.deliver(s);
        continue;
      }
      if (s.ended && s.buffer.length === 0) {
        for (const w of s.waiters) w.target ??= s.lastFetched;
        return;
      }
      const wait = s.buffer.length > 0 ? s.windowStart + this.o.batchWindowMs - Date.now() : Infinity;
      await this.pause(Math.max(1, Math.min(this.o.pollIntervalMs, wait)));
    }
  }

  /** One GetRecords call into the buffer. `caughtUp`: nothing more to read right now. */
  private async read(s: ShardState): Promise<{ caughtUp: boolean }> {
    const readNo = ++s.readsStarted;
    try {
      if (s.iterator === undefined) {
        const it = await this.o.client.send(
          new GetShardIteratorCommand({
            StreamName: this.o.streamName,
            ShardId: s.shardId,
            ...(s.lastFetched === null
              ? { ShardIteratorType: 'TRIM_HORIZON' }
              : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', StartingSequenceNumber: s.lastFetched }),
          }),
        );
        s.iterator = it.ShardIterator;
        if (s.iterator === undefined) {
          s.ended = true;
          return { caughtUp: true };
        }
      }
      const res = await this.o.client.send(
        new GetRecordsCommand({ ShardIterator: s.iterator, Limit: this.o.batchSize - s.buffer.length }),
      );
      const records = res.Records ?? [];
      for (const r of records) {
        const sequenceNumber = r.SequenceNumber as string;
        if (s.lastFetched !== null && compareSequence(sequenceNumber, s.lastFetched) <= 0) continue;
        if (s.buffer.length === 0) s.windowStart = Date.now();
        s.buffer.push({
          sequenceNumber,
          partitionKey: r.PartitionKey ?? '',
          arrivalMs: r.ApproximateArrivalTimestamp?.getTime() ?? Date.now(),
          data: r.Data ?? new Uint8Array(0),
        });
        s.lastFetched = sequenceNumber;
      }
      s.iterator = res.NextShardIterator;
      if (s.iterator === undefined) s.ended = true;
      const caughtUp = s.ended || (records.length === 0 && (res.MillisBehindLatest ?? 0) === 0);
      if (caughtUp) {
        // Everything put before this read started has now been read.
        for (const w of s.waiters)
          if (w.target === undefined && readNo > w.afterRead) w.target = s.lastFetched;
      }
      return { caughtUp };
    } catch (e) {
      s.stats.readErrors++;
      this.o.onReadError?.(s.shardId, e);
      s.iterator = undefined; // e.g. an expired iterator: re-open after what was read
      await this.pause(this.o.readErrorBackoffMs);
      return { caughtUp: false };
    }
  }

  /** Invokes the handler on the head of the buffer and advances the checkpoint by what completed. */
  private async deliver(s: ShardState): Promise<void> {
    const batch = s.buffer.slice(0, this.o.batchSize);
    const { completed } = await this.attempt(s, batch);
    if (completed === 0) return; // re-delivered from the same record on the next turn
    s.buffer.splice(0, completed);
    s.windowStart = Date.now();
    s.checkpoint = (batch[completed - 1] as KinesisBatchRecord).sequenceNumber;
    this.saveCheckpoints();
  }

  /**
   * Runs `batch` through the handler with retries and bisection. Returns how many leading records
   * are done; fewer than `batch.length` means a partial failure asked for re-delivery from there.
   */
  private async attempt(s: ShardState, batch: KinesisBatchRecord[]): Promise<Attempt> {
    let retries = 0;
    for (;;) {
      const event = this.event(s, batch);
      let error: unknown;
      s.stats.invocations++;
      s.stats.recordsDelivered += batch.length;
      try {
        const response = await this.o.handler(event);
        const failedAt = lowestFailure(response, batch);
        if (failedAt === -1) return { completed: batch.length };
        s.stats.partialFailures++;
        if (failedAt > 0) return { completed: failedAt };
        error = new FloeError(ErrorKind.Unexpected, `partial failure at the batch's first record`, {
          context: { shardId: s.shardId, sequenceNumber: batch[0]?.sequenceNumber },
        });
      } catch (e) {
        error = e;
      }
      s.stats.functionErrors++;
      if (this.o.bisectOnError && batch.length > 1) {
        s.stats.bisections++;
        const half = Math.ceil(batch.length / 2);
        const first = await this.attempt(s, batch.slice(0, half));
        if (first.completed < half) return first;
        const second = await this.attempt(s, batch.slice(half));
        return { completed: half + second.completed };
      }
      if (retries < this.o.maxRetries && !this.stopping) {
        retries++;
        continue;
      }
      if (retries < this.o.maxRetries) return { completed: 0 }; // stopping: leave it for next time
      s.stats.batchesFailed++;
      s.stats.recordsFailed += batch.length;
      await this.o.onFailure?.(event, error);
      return { completed: batch.length };
    }
  }

  private event(s: ShardState, batch: readonly KinesisBatchRecord[]): KinesisEvent {
    return buildKinesisEvent(s.shardId, this.streamArn, this.region, batch);
  }

  private pause(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = this.wake.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake.push(done);
    });
  }

  private wakeAll(): void {
    for (const w of [...this.wake]) w();
  }

  private async loadCheckpoints(): Promise<Record<string, string>> {
    const file = this.o.checkpointFile;
    if (file === undefined) return {};
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw e;
    }
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new FloeError(ErrorKind.DataInvalid, `checkpoint file ${file} is not a JSON object`);
    }
    const out: Record<string, string> = {};
    for (const [shardId, seq] of Object.entries(parsed)) {
      if (typeof seq !== 'string' || !/^\d+$/.test(seq)) {
        throw new FloeError(ErrorKind.DataInvalid, `checkpoint file ${file}: ${shardId} is not a sequence`);
      }
      out[shardId] = seq;
    }
    return out;
  }

  /** Queues an atomic rewrite of the checkpoint file (writes are serialized). */
  private saveCheckpoints(): void {
    const file = this.o.checkpointFile;
    if (file === undefined) return;
    this.persist = this.persist.then(async () => {
      const data: Record<string, string> = {};
      for (const s of this.shards) if (s.checkpoint !== null) data[s.shardId] = s.checkpoint;
      await mkdir(dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, `${JSON.stringify(data, null, 2)}\n`);
      await rename(tmp, file);
    });
  }
}

/** Index in `batch` of the lowest reported failure; -1 for full success. Bad identifiers throw. */
function lowestFailure(
  // biome-ignore lint/suspicious/noConfusingVoidType: what a KinesisHandler resolves to
  response: KinesisBatchResponse | undefined | void,
  batch: KinesisBatchRecord[],
): number {
  const failures = response?.batchItemFailures;
  if (failures === undefined || failures === null || failures.length === 0) return -1;
  let lowest = -1;
  for (const f of failures) {
    const id = f?.itemIdentifier;
    const index = typeof id === 'string' && id !== '' ? batch.findIndex((r) => r.sequenceNumber === id) : -1;
    if (index === -1) {
      throw new FloeError(
        ErrorKind.DataInvalid,
        `batchItemFailures names ${JSON.stringify(id)}, not in the batch`,
      );
    }
    if (lowest === -1 || index < lowest) lowest = index;
  }
  return lowest;
}

function drained(s: ShardState, w: DrainWaiter): boolean {
  if (s.ended && s.buffer.length === 0) return true;
  if (w.target === undefined) return false;
  if (w.target === null) return true;
  return s.checkpoint !== null && compareSequence(s.checkpoint, w.target) >= 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
