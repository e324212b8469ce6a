/**
 * `floe send` into kinesalite, through the runner and as a real process (`node bin/floe.mjs`),
 * then every record read back with GetShardIterator/GetRecords: each non-blank line arrives once,
 * byte for byte, keyed by its field or by a stable hash; lines over 1 MiB are reported and skipped.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KinesisClient, PutRecordsCommand, type PutRecordsRequestEntry } from '@aws-sdk/client-kinesis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKinesisClient, createStream } from '../../lambdas/src/adapters/aws/kinesis-producer.ts';
import { type KinesisEmulator, startKinesalite } from '../../lambdas/src/adapters/local/emulators.ts';
import { DEFAULT_STREAM, EXIT_LINES_SKIPPED, sendCommand } from '../../lambdas/src/cli/send-command.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import { tempDir } from '../helpers/e2e.ts';
import { readStream } from '../helpers/kinesis-records.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIB = 1024 * 1024;

let kinesis: KinesisEmulator;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir('floe-send-');
  kinesis = await startKinesalite();
});

afterAll(async () => {
  await kinesis?.close();
  tmp?.cleanup();
});

// ---------------------------------------------------------------------------------------------
// Input files, each line with the partition key it must arrive with

const HASH = Symbol('hash');
const BLANK = Symbol('blank');
const SKIP = Symbol('skip');
type Expect = string | typeof HASH | typeof BLANK | typeof SKIP;
interface Line {
  readonly bytes: Buffer;
  readonly key: Expect;
  /** Line terminator written after it (none for a file's last line without one). */
  readonly eol?: string;
}

const text = (s: string, key: Expect, eol = '\n'): Line => ({ bytes: Buffer.from(s, 'utf8'), key, eol });
const hashOf = (b: Uint8Array) => createHash('sha256').update(b).digest('hex').slice(0, 32);
const pad = (n: number, c = 'x') => c.repeat(n);

/** A line of exactly `size` bytes: `{"id":"<id>","pad":"xxx…"}`. */
function sized(id: string, size: number): string {
  const head = `{"id":"${id}","pad":"`;
  return `${head}${pad(size - head.length - 2)}"}`;
}

/** With `--partition-key-field id`. */
const MIXED: readonly Line[] = [
  text('{"id":"a-1","event_type":"ORDER","note":"plain"}', 'a-1'),
  text('', BLANK),
  text('{"id":"b-ü-日本-🎉","text":"emoji 🎉, \\u00e9, \\" \\\\ \\n \\t \\ud83d\\ude00"}', 'b-ü-日本-🎉'),
  text('{"id":"esc\\u0041\\n"}', 'escA\n'),
  text('{"id":42,"n":1}', '42'),
  text('{"id":true}', 'true'),
  text('{"id":12345678901234567890123}', '12345678901234567890123'),
  text('{"id":2.5}', '2.5'),
  text('{not json at all', HASH),
  text('   \t ', BLANK),
  text('{"id":"crlf"}', 'crlf', '\r\n'),
  {
    bytes: Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    key: HASH,
    eol: '\n',
  },
  text('{"id":""}', HASH),
  text(`{"id":"${pad(257, 'k')}"}`, HASH),
  text(`{"id":"${pad(256, 'k')}"}`, pad(256, 'k')),
  text('{"id":{"nested":1}}', HASH),
  text('[1,2,3]', HASH),
  text('{"other":"no id"}', HASH),
  text('{not json at all', HASH),
  // ~900 KB lines: seven of them do not fit one 5 MiB request.
  ...[1, 2, 3, 4, 5, 6, 7].map((i) => text(sized(`big-${i}`, 900_000 + i), `big-${i}`)),
  text(sized('huge', MIB + 100_000), SKIP),
  // Fits the 1 MiB alone, not with its partition key (data + key is what counts).
  text(sized('edge', MIB - 3), SKIP),
  text(sized('fits', MIB - 4), 'fits'),
  text('{"id":"last"}', 'last', ''),
];

/** Without a usable key field most of the time: many records, repeated keys. */
const MANY: readonly Line[] = Array.from({ length: 1234 }, (_, i) =>
  i % 3 === 0 ? text(`{"n":${i % 40}}`, HASH) : text(`{"id":"m-${i % 50}","i":${i}}`, `m-${i % 50}`),
);

/**
 * Debezium change events, with `--partition-key-field after.id,before.id`: a create or update is
 * keyed by `after`, a delete by `before`; what has neither falls back to the hash.
 */
const CDC: readonly Line[] = [
  text('{"op":"c","before":null,"after":{"id":1,"name":"a"},"source":{"table":"customers"}}', '1'),
  text('{"op":"u","before":{"id":1,"name":"a"},"after":{"id":1,"name":"b"}}', '1'),
  text('{"op":"d","before":{"id":1,"name":"b"},"after":null}', '1'),
  text('{"op":"c","before":null,"after":{"id":"k-ü"}}', 'k-ü'),
  text('{"op":"r","before":null,"after":{"id":12345678901234567890123}}', '12345678901234567890123'),
  text('{"op":"d","before":{"id":""},"after":null}', HASH),
  text('{"op":"u","before":{"id":7},"after":{"id":{"nested":1}}}', '7'),
  text('{"after.id":"flat","after":{"id":5}}', 'flat'),
  // Kafka Connect's wrapped form is not among these candidates (see PAYLOAD).
  text('{"schema":{},"payload":{"op":"c","before":null,"after":{"id":3}}}', HASH),
  text('{"op":"t","before":null,"after":null}', HASH),
  text('{"id":6}', HASH),
  text('{not json', HASH),
  text('', BLANK),
  // Keys changed over and over: all of a key's changes must reach one shard, in order.
  ...Array.from({ length: 400 }, (_, i) => {
    const id = `c-${(i * 7) % 23}`;
    return i % 5 === 4
      ? text(`{"op":"d","before":{"id":"${id}","seq":${i}},"after":null}`, id)
      : text(`{"op":"u","before":null,"after":{"id":"${id}","seq":${i}}}`, id);
  }),
];

/** The same in Kafka Connect's `{schema, payload}` form, with `payload.after.id,payload.before.id`. */
const PAYLOAD: readonly Line[] = [
  text('{"schema":{"type":"struct"},"payload":{"op":"c","before":null,"after":{"id":3}}}', '3'),
  text('{"schema":{"type":"struct"},"payload":{"op":"d","before":{"id":3},"after":null}}', '3'),
  text('{"op":"c","before":null,"after":{"id":4}}', HASH),
  text('{"payload":{"after":{"id":"no-schema"}}}', 'no-schema'),
];

function writeLines(name: string, lines: readonly Line[]): string {
  const path = join(tmp.dir, name);
  writeFileSync(path, Buffer.concat(lines.flatMap((l) => [l.bytes, Buffer.from(l.eol ?? '\n')])));
  return path;
}

/** What the stream must hold: one `key base64(data)` entry per sent line, sorted. */
function expectedRecords(...files: (readonly Line[])[]): string[] {
  return files
    .flat()
    .filter((l) => l.key !== BLANK && l.key !== SKIP)
    .map((l) => `${l.key === HASH ? hashOf(l.bytes) : String(l.key)} ${l.bytes.toString('base64')}`)
    .sort();
}

async function streamContent(client: KinesisClient, stream: string): Promise<string[]> {
  return (await readStream(client, stream))
    .map((r) => `${r.partitionKey} ${Buffer.from(r.data).toString('base64')}`)
    .sort();
}

/** 1-based numbers of the lines that must be skipped. */
function skippedLineNumbers(lines: readonly Line[]): number[] {
  return lines.flatMap((l, i) => (l.key === SKIP ? [i + 1] : []));
}

/** A client that records every PutRecords request it sends. */
function recordingClient(requests: PutRecordsRequestEntry[][]): KinesisClient {
  const client = createKinesisClient({ endpoint: kinesis.endpoint });
  const send = client.send.bind(client) as (c: unknown) => Promise<unknown>;
  client.send = ((command: unknown) => {
    if (command instanceof PutRecordsCommand) requests.push(command.input.Records ?? []);
    return send(command);
  }) as unknown as KinesisClient['send'];
  return client;
}

/** A client whose first PutRecords request has every other entry rejected as throttled. */
function throttlingClient(): { client: KinesisClient; throttled: () => number } {
  const client = createKinesisClient({ endpoint: kinesis.endpoint });
  const send = client.send.bind(client) as (c: unknown) => Promise<unknown>;
  let throttled = -1;
  client.send = (async (command: unknown) => {
    if (!(command instanceof PutRecordsCommand) || throttled >= 0) return send(command);
    const entries = command.input.Records ?? [];
    const passed = entries.filter((_, i) => i % 2 === 0);
    throttled = entries.length - passed.length;
    const res = (await send(new PutRecordsCommand({ ...command.input, Records: passed }))) as {
      Records: unknown[];
    };
    const accepted = res.Records[Symbol.iterator]();
    return {
      ...res,
      FailedRecordCount: throttled,
      Records: entries.map((_, i) =>
        i % 2 === 0
          ? accepted.next().value
          : { ErrorCode: 'ProvisionedThroughputExceededException', ErrorMessage: 'Rate exceeded for shard' },
      ),
    };
  }) as unknown as KinesisClient['send'];
  return { client, throttled: () => throttled };
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function floe(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/floe.mjs', ...args],
      { cwd: ROOT, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------

describe('floe send (runner)', () => {
  it('sends every non-blank line of every file byte for byte, keyed by the field or a stable hash, in requests within the limits', async () => {
    const stream = 'send-runner';
    await createStream(kinesis.client, stream, 2);
    const mixed = writeLines('mixed.ndjson', MIXED);
    const many = writeLines('many.ndjson', MANY);
    const requests: PutRecordsRequestEntry[][] = [];
    const client = recordingClient(requests);
    const err: string[] = [];
    const out: string[] = [];
    const report = await sendCommand(
      [mixed, many],
      { stream, partitionKeyField: 'id', quiet: true },
      (s) => out.push(s),
      { client, err: (s) => err.push(s) },
    );
    client.destroy();

    expect(await streamContent(kinesis.client, stream)).toEqual(expectedRecords(MIXED, MANY));

    const sent = expectedRecords(MIXED, MANY).length;
    expect(report.sent).toBe(sent);
    expect(report.exitCode).toBe(EXIT_LINES_SKIPPED);
    expect(report.blank).toBe(MIXED.filter((l) => l.key === BLANK).length);
    expect(report.skipped.map((s) => [s.file, s.line])).toEqual(
      skippedLineNumbers(MIXED).map((n) => [mixed, n]),
    );
    for (const n of skippedLineNumbers(MIXED))
      expect(err.some((l) => l.startsWith(`skipped ${mixed}:${n}: `) && l.includes('1 MiB'))).toBe(true);
    expect(report.files.map((f) => [f.file, f.sent, f.skipped])).toEqual([
      [mixed, expectedRecords(MIXED).length, 2],
      [many, MANY.length, 0],
    ]);
    const summary = out.join('\n');
    expect(summary).toContain(`sent ${sent.toLocaleString('en-US')} records`);
    expect(summary).toContain(basename(many));

    // Every request within the PutRecords limits, and the lines all went out through them.
    expect(requests.flat().length).toBe(sent);
    for (const r of requests) {
      expect(r.length).toBeLessThanOrEqual(500);
      const bytes = r.reduce((n, e) => n + e.Data!.length + Buffer.byteLength(e.PartitionKey!), 0);
      expect(bytes).toBeLessThanOrEqual(5 * MIB);
    }
  });

  it('resends the entries the stream throttled exactly once, reports them, and shows progress', async () => {
    const stream = 'send-throttled';
    await createStream(kinesis.client, stream, 1);
    const many = writeLines('throttled.ndjson', MANY);
    const { client, throttled } = throttlingClient();
    const err: string[] = [];
    const out: string[] = [];
    let now = 0;
    const report = await sendCommand([many], { stream }, (s) => out.push(s), {
      client,
      err: (s) => err.push(s),
      // Every reading of the clock is a second later: a progress line after every request.
      nowMs: () => (now += 1000),
    });
    client.destroy();

    expect(throttled()).toBeGreaterThan(0);
    expect(report.resent).toBe(throttled());
    expect(out.join('\n')).toContain(`${throttled()} resent after throttling`);
    expect(report.exitCode).toBe(0);
    expect(await streamContent(kinesis.client, stream)).toEqual(
      expectedRecords(MANY.map((l) => ({ ...l, key: HASH }))),
    );
    expect(
      err.filter((l) => /throttled\.ndjson: [\d,]+ records \([\d.]+ MiB\) sent, [\d,]+ records\/s/.test(l))
        .length,
    ).toBeGreaterThan(0);
  });

  it('checks every file before sending anything', async () => {
    const stream = 'send-missing';
    await createStream(kinesis.client, stream, 1);
    const good = writeLines('good.ndjson', MANY.slice(0, 10));
    await expect(
      sendCommand([good, join(tmp.dir, 'missing.ndjson')], { stream }, () => undefined, {
        client: kinesis.client,
        err: () => undefined,
      }),
    ).rejects.toThrow('missing.ndjson does not exist');
    expect(await readStream(kinesis.client, stream)).toEqual([]);
  });

  it('names a missing stream in one typed error, and where sending stopped', async () => {
    const file = writeLines('nowhere.ndjson', MANY.slice(0, 5));
    const err: string[] = [];
    const failure = await sendCommand([file], { stream: 'no-such-stream' }, () => undefined, {
      client: kinesis.client,
      err: (s) => err.push(s),
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(FloeError);
    expect(failure).toMatchObject({ kind: ErrorKind.NotFound });
    expect((failure as Error).message).toContain('Kinesis stream no-such-stream does not exist');
    expect(err).toContain(
      `stopped at ${file}:1: every line before it was sent (0 records), it and later lines may not have been`,
    );
  });
});

describe('floe send --partition-key-field with paths and candidates', () => {
  it('keys Debezium envelopes by after.id, else before.id: every change of a key on one shard, in order', async () => {
    const stream = 'send-cdc';
    await createStream(kinesis.client, stream, 4);
    const cdc = writeLines('cdc.ndjson', CDC);
    const report = await sendCommand(
      [cdc],
      { stream, partitionKeyField: 'after.id,before.id', quiet: true },
      () => undefined,
      { client: kinesis.client, err: () => undefined },
    );
    expect(report.exitCode).toBe(0);
    expect(await streamContent(kinesis.client, stream)).toEqual(expectedRecords(CDC));

    // Read back per shard in sequence order: each key's `seq` values on one shard, ascending.
    const records = await readStream(kinesis.client, stream);
    const shardsOf = new Map<string, Set<string>>();
    const seqsOf = new Map<string, number[]>();
    for (const r of records) {
      const m = /"id":"(c-\d+)","seq":(\d+)/.exec(Buffer.from(r.data).toString('utf8'));
      if (!m) continue;
      expect(r.partitionKey).toBe(m[1]);
      shardsOf.set(m[1]!, (shardsOf.get(m[1]!) ?? new Set()).add(r.shardId));
      seqsOf.set(m[1]!, [...(seqsOf.get(m[1]!) ?? []), Number(m[2])]);
    }
    expect(shardsOf.size).toBe(23);
    expect(new Set([...shardsOf.values()].flatMap((s) => [...s])).size).toBeGreaterThan(1);
    for (const [id, shards] of shardsOf) {
      expect(shards.size, id).toBe(1);
      const seqs = seqsOf.get(id)!;
      expect(seqs, id).toEqual([...seqs].sort((a, b) => a - b));
    }
  });

  it('refuses an empty candidate before sending anything', async () => {
    const stream = 'send-bad-candidates';
    await createStream(kinesis.client, stream, 1);
    const file = writeLines('bad-candidates.ndjson', CDC.slice(0, 3));
    for (const spec of ['after.id,,before.id', 'after.id,', ',id']) {
      const failure = await sendCommand([file], { stream, partitionKeyField: spec }, () => undefined, {
        client: kinesis.client,
        err: () => undefined,
      }).catch((e: unknown) => e);
      expect(failure, spec).toBeInstanceOf(FloeError);
      expect(failure, spec).toMatchObject({ kind: ErrorKind.ConfigInvalid });
      expect((failure as Error).message).toContain(`--partition-key-field '${spec}' has an empty field name`);
    }
    expect(await readStream(kinesis.client, stream)).toEqual([]);
  });
});

describe('floe send (the real command)', () => {
  it('node bin/floe.mjs send: same records and keys as the runner, skipped lines named on stderr, exit code 3', async () => {
    const stream = 'send-binary';
    await createStream(kinesis.client, stream, 2);
    const mixed = writeLines('mixed-bin.ndjson', MIXED);
    const many = writeLines('many-bin.ndjson', MANY);
    const r = await floe(
      'send',
      mixed,
      many,
      '--endpoint',
      kinesis.endpoint,
      '--region',
      'us-east-1',
      '--stream',
      stream,
      '--partition-key-field',
      'id',
    );
    expect(r.code, r.stderr).toBe(EXIT_LINES_SKIPPED);
    for (const n of skippedLineNumbers(MIXED)) expect(r.stderr).toContain(`skipped ${mixed}:${n}: `);
    expect(r.stdout).toContain(`sent ${expectedRecords(MIXED, MANY).length.toLocaleString('en-US')} records`);
    expect(await streamContent(kinesis.client, stream)).toEqual(expectedRecords(MIXED, MANY));
  });

  it('node bin/floe.mjs send --partition-key-field payload.after.id,payload.before.id: wrapped envelopes keyed by their row key; an empty candidate is one clear error', async () => {
    const stream = 'send-binary-payload';
    await createStream(kinesis.client, stream, 2);
    const file = writeLines('payload.ndjson', PAYLOAD);
    const args = ['send', file, '--endpoint', kinesis.endpoint, '--region', 'us-east-1', '--stream', stream];
    const r = await floe(...args, '--partition-key-field', 'payload.after.id,payload.before.id');
    expect(r.code, r.stderr).toBe(0);
    expect(await streamContent(kinesis.client, stream)).toEqual(expectedRecords(PAYLOAD));
    const bad = await floe(...args, '--partition-key-field', 'payload.after.id,');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^floe: --partition-key-field 'payload\.after\.id,' has an empty field name/m);
    expect(await streamContent(kinesis.client, stream)).toEqual(expectedRecords(PAYLOAD));
  });

  it("defaults to `floe local up`'s stream, exits 0 when every line was sent, and documents itself", async () => {
    await createStream(kinesis.client, DEFAULT_STREAM, 1);
    const file = writeLines('clean.ndjson', MANY.slice(0, 300));
    const r = await floe('send', file, '--endpoint', kinesis.endpoint);
    expect(r.code, r.stderr).toBe(0);
    expect(await streamContent(kinesis.client, DEFAULT_STREAM)).toEqual(
      expectedRecords(MANY.slice(0, 300).map((l) => ({ ...l, key: HASH }))),
    );
    const help = await floe('send', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: floe send \[options\] <files\.\.\.>/m);
    expect(help.stdout).toContain('--partition-key-field');
    expect(help.stdout).toContain('after.id,before.id');
    expect(help.stdout).toContain('Examples:');
    expect(help.stdout).toContain(`${EXIT_LINES_SKIPPED} some lines skipped`);
  });
});
