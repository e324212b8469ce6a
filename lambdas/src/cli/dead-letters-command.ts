/**
 * `floe dead-letters list|show|replay` (and `purge`, in dead-letters-purge.ts): the warehouse's
 * dead-letter store (`<warehouse>/_floe/dead-letters/<reason>/<key>.json`), where `floe load`
 * records every rejected line with its reason, and from where fixed records are replayed through the
 * load pipeline; or, with `--store s3://…`, a deployed pipeline's. Every message names the store
 * it read (`where`), never the warehouse folder when the store was S3.
 */
import { join } from 'node:path';
import { FileCatalog } from '../adapters/local/file-catalog.ts';
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import { ObjectStoreDeadLetterStore } from '../adapters/object-dead-letter-store.ts';
import {
  type DeadLetterFilter,
  type ReplayProgress,
  type ReplayResult,
  replayDeadLetters,
  selectDeadLetters,
} from '../app/replay.ts';
import { DeadLetterReason } from '../engine/dead-letters.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import type { DeadLetterRecord, DeadLetterStore } from '../ports/dead-letters.ts';
import { readConfigFile } from './config-file.ts';
import { renderTable } from './format.ts';
import { openWarehouse, type Warehouse } from './warehouse.ts';

/** The dead-letter store of a warehouse (the one `floe load` and the local stack write). */
export function openDeadLetterStore(wh: Warehouse): DeadLetterStore {
  return new ObjectStoreDeadLetterStore(wh.store, `${wh.uri}/_floe/dead-letters`);
}

export interface StoreOptions {
  /** `s3://bucket/prefix` of a deployed pipeline's dead letters (its `DEAD_LETTER_URI`). */
  readonly store?: string;
  /**
   * S3 endpoint (e.g. a local s3rver; implies path style). Default: the SDK's resolution
   * (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, a profile's `endpoint_url`), else AWS.
   */
  readonly s3Endpoint?: string;
  /** Path-style S3 requests; default: `$FLOE_S3_FORCE_PATH_STYLE` (adapters/aws/endpoints.ts). */
  readonly s3PathStyle?: boolean;
  /** AWS region of the `--store` bucket; default: `$AWS_REGION`, `$AWS_DEFAULT_REGION`. */
  readonly region?: string;
}

/** A dead-letter store and how messages name it: the S3 URI or the folder on disk. */
export interface OpenedStore {
  readonly store: DeadLetterStore;
  readonly where: string;
  /** The options that name this store again, for commands shown to the user. */
  readonly args: string;
}

/** The store the options name: an S3 dead-letter store, or the warehouse's. */
export async function storeFor(opts: StoreOptions, wh: Warehouse): Promise<OpenedStore> {
  if (opts.store === undefined) {
    return {
      store: openDeadLetterStore(wh),
      where: deadLetterStoreDir(wh),
      args: `-w ${shellQuote(wh.dir)}`,
    };
  }
  if (!opts.store.startsWith('s3://')) {
    throw new FloeError(ErrorKind.ConfigInvalid, `--store must be an s3:// URI, got ${opts.store}`);
  }
  const { S3ObjectStore, createS3Client } = await import('../adapters/aws/s3-object-store.ts');
  const client = createS3Client({
    ...(opts.region === undefined ? {} : { region: opts.region }),
    ...(opts.s3Endpoint === undefined ? {} : { endpoint: opts.s3Endpoint, forcePathStyle: true }),
    // Unset: createS3Client falls back to $FLOE_S3_FORCE_PATH_STYLE.
    ...(opts.s3PathStyle ? { forcePathStyle: true } : {}),
  });
  return {
    store: new ObjectStoreDeadLetterStore(new S3ObjectStore(client), opts.store),
    where: opts.store,
    args: `--store ${shellQuote(opts.store)}`,
  };
}

/** The store's folder on disk (for messages). */
export function deadLetterStoreDir(wh: Warehouse): string {
  return join(wh.dir, '_floe', 'dead-letters');
}

/** `s` quoted for a POSIX shell when it needs it (for commands shown to the user). */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface FilterOptions {
  readonly warehouse?: string;
  readonly reason?: string;
  readonly source?: string;
  readonly table?: string;
  readonly limit?: string;
}

const KNOWN_REASONS: readonly string[] = Object.values(DeadLetterReason);

export function filterOf(opts: FilterOptions & { readonly key?: readonly string[] }): DeadLetterFilter {
  if (opts.reason !== undefined && !KNOWN_REASONS.includes(opts.reason)) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `unknown dead-letter reason '${opts.reason}' (one of: ${KNOWN_REASONS.join(', ')})`,
      { context: { reason: opts.reason } },
    );
  }
  let limit: number | undefined;
  if (opts.limit !== undefined) {
    limit = /^\d+$/.test(opts.limit) ? Number(opts.limit) : Number.NaN;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new FloeError(ErrorKind.DataInvalid, `--limit must be a whole number ≥ 1, got '${opts.limit}'`, {
        context: { limit: opts.limit },
      });
    }
  }
  return {
    ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
    ...(opts.source !== undefined ? { source: opts.source } : {}),
    ...(opts.table !== undefined ? { table: opts.table } : {}),
    ...(opts.key !== undefined && opts.key.length > 0 ? { keys: opts.key } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
}

export function describeFilter(f: DeadLetterFilter): string {
  const parts: string[] = [];
  if (f.reason !== undefined) parts.push(`reason ${f.reason}`);
  if (f.source !== undefined) parts.push(`source ${f.source}`);
  if (f.table !== undefined) parts.push(`table ${f.table}`);
  if (f.keys !== undefined) parts.push(`${f.keys.length} key(s)`);
  return parts.join(', ');
}

function countByReason(records: readonly { reason?: string }[]): string {
  const by = new Map<string, number>();
  for (const r of records) by.set(r.reason ?? '-', (by.get(r.reason ?? '-') ?? 0) + 1);
  return [...by]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([r, n]) => `${r}: ${n}`)
    .join(', ');
}

export function shorten(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ');
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

// ---- list ---------------------------------------------------------------------------------------

export interface ListOptions extends FilterOptions, StoreOptions {
  readonly json?: boolean;
}

export async function listCommand(opts: ListOptions, out: (s: string) => void): Promise<void> {
  const wh = openWarehouse(opts.warehouse);
  const { limit, ...filter } = filterOf(opts);
  const { store, where } = await storeFor(opts, wh);
  const all = await selectDeadLetters(store, filter);
  const shown = limit === undefined ? all : all.slice(0, limit);
  if (opts.json) {
    for (const d of shown) out(JSON.stringify(d));
    return;
  }
  const filtered = describeFilter(filter);
  if (all.length === 0) {
    out(`no dead letters${filtered ? ` matching ${filtered}` : ''} in ${where}`);
    return;
  }
  out(
    renderTable(
      ['key', 'reason', 'source:line', 'table', 'detail'],
      shown.map((d) => [d.key, d.reason, `${d.source}:${d.line}`, d.table ?? '-', shorten(d.detail, 72)]),
    ),
  );
  out('');
  out(
    `${all.length} dead letter(s)${filtered ? ` matching ${filtered}` : ''} (${countByReason(all)})${
      shown.length < all.length ? `, first ${shown.length} shown` : ''
    } in ${where}`,
  );
}

// ---- show ---------------------------------------------------------------------------------------

export interface ShowOptions extends StoreOptions {
  readonly warehouse?: string;
  readonly json?: boolean;
}

export async function showCommand(key: string, opts: ShowOptions, out: (s: string) => void): Promise<void> {
  const { store, where, args } = await storeFor(opts, openWarehouse(opts.warehouse));
  const d = await store.get(key);
  if (d === undefined) {
    throw new FloeError(
      ErrorKind.NotFound,
      `no dead letter with key '${key}' in ${where} (floe dead-letters list ${args} shows the keys)`,
      { context: { key, store: where } },
    );
  }
  if (opts.json) {
    out(JSON.stringify(d));
    return;
  }
  out(renderRecord(d));
}

export function renderRecord(d: DeadLetterRecord): string {
  const fields: [string, string][] = [
    ['key', d.key],
    ['reason', d.reason],
    ['source', d.source],
    ['line', String(d.line)],
    ['table', d.table ?? '-'],
  ];
  const known = new Set(['key', 'reason', 'source', 'line', 'table', 'detail', 'raw', 'rawBase64']);
  for (const [k, v] of Object.entries(d)) {
    if (!known.has(k) && v !== undefined) fields.push([k, typeof v === 'string' ? v : JSON.stringify(v)]);
  }
  const width = Math.max(...fields.map(([k]) => k.length), 'detail'.length);
  const lines = fields.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  lines.push(`${'detail'.padEnd(width)}  ${d.detail}`);
  if (d.rawBase64 !== undefined) lines.push(`${'rawBase64'.padEnd(width)}  ${d.rawBase64}`);
  lines.push(`raw (${new TextEncoder().encode(d.raw).length} bytes):`);
  lines.push(d.raw);
  return lines.join('\n');
}

// ---- replay -------------------------------------------------------------------------------------

export interface ReplayCommandOptions extends FilterOptions, StoreOptions {
  readonly config?: string;
  readonly key?: readonly string[];
  readonly dryRun?: boolean;
  readonly quiet?: boolean;
  /** Put the records back into this Kinesis stream (the deployed pipeline re-processes them). */
  readonly toStream?: string;
  /** Kinesis endpoint for `toStream` (a local stack); default: AWS. */
  readonly endpoint?: string;
  readonly region?: string;
}

const SHOWN_FAILURES = 20;

/**
 * `replay --to-stream`: the streaming way to replay. Each selected dead letter's original bytes go
 * back into the stream with their partition key (so they keep their shard's order relative to each
 * other), and leave the store once the stream accepted them; the running pipeline, with its
 * configuration fixed, decides again. A record may come back as a new dead letter if it still fails.
 */
async function replayToStream(opts: ReplayCommandOptions, out: (s: string) => void): Promise<number> {
  const filter = filterOf(opts);
  const { store, where } = await storeFor(opts, openWarehouse(opts.warehouse));
  const selected = await selectDeadLetters(store, filter);
  if (selected.length === 0) {
    out(`no dead letters${describeFilter(filter) ? ` matching ${describeFilter(filter)}` : ''} in ${where}`);
    return 0;
  }
  const records = selected.map((d) => ({
    data:
      d.rawBase64 !== undefined
        ? new Uint8Array(Buffer.from(d.rawBase64, 'base64'))
        : new TextEncoder().encode(d.raw),
    partitionKey: d.partitionKey ?? d.key,
  }));
  if (opts.dryRun) {
    out(
      `dry run: would put ${selected.length} dead letter(s) from ${where} back into stream ${opts.toStream}`,
    );
    return 0;
  }
  const { createKinesisClient, putRecords } = await import('../adapters/aws/kinesis-producer.ts');
  const client = createKinesisClient({
    ...(opts.endpoint === undefined ? {} : { endpoint: opts.endpoint }),
    ...(opts.region === undefined ? {} : { region: opts.region }),
  });
  try {
    await putRecords(client, opts.toStream as string, records);
  } finally {
    client.destroy();
  }
  for (const d of selected) await store.delete(d.key);
  out(
    `put ${selected.length} dead letter(s) from ${where} back into stream ${opts.toStream}; removed them from ${where}`,
  );
  return 0;
}

export async function replayCommand(opts: ReplayCommandOptions, out: (s: string) => void): Promise<number> {
  if (opts.toStream !== undefined) return replayToStream(opts, out);
  if (opts.store !== undefined) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      "--store holds a deployed pipeline's dead letters: replay them with --to-stream STREAM (the pipeline re-processes them)",
    );
  }
  const config = await readConfigFile(opts.config);
  const filter = filterOf(opts);
  const wh = openWarehouse(opts.warehouse);
  const log = (s: string) => {
    if (!opts.quiet) process.stderr.write(`${s}\n`);
  };
  const onProgress = (p: ReplayProgress) => {
    if (p.kind === 'selected')
      log(
        `${opts.dryRun ? 'dry run: would replay' : 'replaying'} ${p.records} dead letter(s) from ${p.sources} source(s)`,
      );
    else if (p.kind === 'skipped') log(`  ${p.key}: skipped (${p.why})`);
    else if (p.kind === 'stored')
      log(`  dead-letter store: ${p.landed} removed (landed), ${p.failing} stored again (still failing)`);
    else {
      const lp = p.progress;
      if (lp.kind === 'table-start') log(`  ${lp.table}: ${lp.records} record(s) → staging`);
      else if (lp.kind === 'table-done')
        log(
          `  ${lp.table}: ${opts.dryRun ? 'would commit' : 'committed'} ${lp.result.rows} row(s)${lp.result.created ? ' (new table)' : ''}`,
        );
      else if (lp.kind === 'table-failed')
        log(`  ${lp.table}: FAILED: ${(lp.error as Error).message ?? String(lp.error)}`);
    }
  };
  const result = await replayDeadLetters(
    {
      catalog: wh.catalog,
      store: wh.store,
      clock: systemClock,
      ids: randomIds,
      config,
      deadLetters: openDeadLetterStore(wh),
      onProgress,
      summary: { 'floe.replay-id': randomIds.uuid(), 'engine-name': 'floe' },
      scratchCatalog: (store) =>
        new FileCatalog(store, wh.uri, {
          relocate: (foreign, tableUri) => wh.store.addRoot(foreign, wh.store.pathOf(tableUri)),
        }),
    },
    { ...filter, dryRun: opts.dryRun === true },
  );
  out(renderReplay(result, filter, deadLetterStoreDir(wh)));
  return result.notLoaded > 0 ? 1 : 0;
}

export function renderReplay(r: ReplayResult, filter: DeadLetterFilter, store: string): string {
  const filtered = describeFilter(filter);
  if (r.selected === 0) return `no dead letters${filtered ? ` matching ${filtered}` : ''} in ${store}`;
  const lines: string[] = [];
  if (r.dryRun) {
    lines.push(
      r.mode === 'staged'
        ? 'dry run: every record went through routing, inference, conversion and a scratch commit; nothing was written'
        : 'dry run: records were parsed and routed only; nothing was written',
    );
  }
  lines.push(
    `${r.dryRun ? 'would replay' : 'replayed'} ${r.selected} dead letter(s) from ${r.sources} source(s)${
      filtered ? ` (${filtered})` : ''
    }`,
  );
  const byTable = (m: Readonly<Record<string, number>>) =>
    Object.entries(m)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([t, n]) => `${t}: ${n}`)
      .join(', ');
  if (r.mode === 'staged') {
    lines.push(
      `  ${r.dryRun ? 'would land' : 'landed'}: ${r.landed}${r.landed > 0 ? ` (${byTable(r.landedByTable)})` : ''}${
        r.landed > 0 && !r.dryRun ? ', removed from the dead-letter store' : ''
      }`,
    );
  } else {
    const routable = Object.values(r.routableByTable).reduce((a, b) => a + b, 0);
    lines.push(
      `  route to a table: ${routable}${routable > 0 ? ` (${byTable(r.routableByTable)}; type checks not run)` : ''}`,
    );
  }
  const failing = r.outcomes.filter((o) => o.status === 'failing');
  lines.push(
    `  ${r.dryRun ? 'would still fail' : 'still failing'}: ${failing.length}${
      failing.length > 0
        ? ` (${byTable(r.failingByReason)})${r.dryRun ? '' : ', kept in the dead-letter store'}`
        : ''
    }`,
  );
  if (r.notLoaded > 0) lines.push(`  not loaded (table commit failed, left as they were): ${r.notLoaded}`);
  if (r.skipped > 0) lines.push(`  skipped (not replayable as text): ${r.skipped}`);
  for (const o of failing.slice(0, SHOWN_FAILURES)) {
    const moved = o.newKey !== undefined && o.newKey !== o.key ? ` (now ${o.newKey})` : '';
    const reason = o.previousReason === o.reason ? o.reason : `${o.previousReason} → ${o.reason}`;
    lines.push(`    ${o.key}${moved}  [${reason}] ${shorten(o.detail ?? '', 100)}`);
  }
  if (failing.length > SHOWN_FAILURES) lines.push(`    … and ${failing.length - SHOWN_FAILURES} more`);
  for (const o of r.outcomes.filter((x) => x.status === 'not-loaded').slice(0, SHOWN_FAILURES))
    lines.push(`    ${o.key}  ${o.detail ?? ''}`);
  return lines.join('\n');
}
