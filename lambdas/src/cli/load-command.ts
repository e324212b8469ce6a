/**
 * `floe load FILES… --warehouse DIR [--config FILE] [--dead-letters FILE] [--force]`. Every
 * rejected line is recorded in the warehouse's dead-letter store (`floe dead-letters
 * list|show|replay`) under a key made from its file and line, so loading the same file again
 * overwrites rather than duplicates; `--dead-letters` also exports them as NDJSON.
 *
 * Running a load again is safe: each file is fingerprinted while it is read, every commit records
 * the files it took (app/load-history.ts), and a table that already holds a file does not get it
 * again (unless `--force`); nor are that file's rejected lines recorded again.
 */
import { constants, promises as fs } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { framedLines, sniffFraming } from '../adapters/local/framed-source.ts';
import { readByteChunks } from '../adapters/local/line-reader.ts';
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import { type LoadProgress, type LoadSource, loadSources, type TableLoadResult } from '../app/load.ts';
import {
  type FileFingerprint,
  FileLoadHistory,
  type HistoryEvent,
  type LoadedFile,
  type PastLoad,
} from '../app/load-history.ts';
import { deadLetterWriter } from '../app/replay.ts';
import { branchFor, tableId } from '../config.ts';
import type { DeadLetter } from '../engine/dead-letters.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import { isBranchName } from '../iceberg/snapshot.ts';
import type { TableIdentifier } from '../ports/catalog.ts';
import { deadLetterRecord } from '../ports/dead-letters.ts';
import { readConfigFile } from './config-file.ts';
import { deadLetterStoreDir, openDeadLetterStore, shellQuote } from './dead-letters-command.ts';
import { ExitCode } from './exit-codes.ts';
import { fingerprinted, prefixFingerprint } from './file-fingerprint.ts';
import { formatTimestampMs } from './format.ts';
import { type DeadLetterLocation, renderReport } from './load-report.ts';
import { markWarehouse, openWarehouse } from './warehouse.ts';

export interface LoadCommandOptions {
  readonly warehouse?: string;
  readonly config?: string;
  readonly deadLetters?: string;
  readonly quiet?: boolean;
  /** Load every file again, even into tables that already hold it. */
  readonly force?: boolean;
  /** Commit to this branch of every table instead of main (write-audit-publish). */
  readonly branch?: string;
  /** Threads that scan and encode (default: every core). */
  readonly threads?: number;
  /** MiB of unwritten records held before the largest tables are written as parts. */
  readonly memory?: number;
}

/** Returns the exit code (exit-codes.ts): 0, 3 when lines were dead-lettered, 4 when a table failed. */
export async function loadCommand(
  files: string[],
  opts: LoadCommandOptions,
  out: (s: string) => void,
): Promise<number> {
  const config = await readConfigFile(opts.config);
  for (const f of files) await checkInputFile(f);
  const wh = openWarehouse(opts.warehouse);
  await markWarehouse(wh);
  const startedMs = systemClock.nowMs();
  const loadId = randomIds.uuid();
  const force = opts.force === true;
  const exportPath = opts.deadLetters === undefined ? undefined : resolve(opts.deadLetters);
  // Absolute paths: the same file gives the same dead-letter keys from any working directory.
  const given = new Map<string, string>();
  for (const f of files) if (!given.has(resolve(f))) given.set(resolve(f), f);
  const shown = (source: string) => given.get(source) ?? source;

  const fingerprints = new Map<string, LoadedFile>();
  const events: HistoryEvent[] = [];
  const branch = opts.branch === undefined ? undefined : branchName(opts.branch);
  const history = new FileLoadHistory(wh.catalog, fingerprints, {
    force,
    branchOf: (id) => branch ?? branchFor(config, id.name),
    onEvent: (e) => events.push(e),
    sizeOf: async (source) => (await fs.stat(source)).size,
    fingerprint: async (source) => ({
      ...(await prefixFingerprint(source, (await fs.stat(source)).size)),
      name: basename(source),
    }),
  });

  // Recorded while the load runs (a few writes in flight), keyed by source + line. A file's own
  // rejected lines wait until it is read: those of a file loaded before are not recorded again.
  const recorder = deadLetterWriter(openDeadLetterStore(wh));
  const dead: DeadLetter[] = [];
  const waiting = new Map<string, DeadLetter[]>();
  let notRecorded = 0;
  const record = async (d: DeadLetter) => {
    dead.push(d);
    await recorder.add(deadLetterRecord(d));
  };
  // Sources read to their end (their fingerprint known from the bytes the load read).
  const read = new Set<string>();
  const onDeadLetter = async (d: DeadLetter) => {
    if (read.has(d.source)) return record(d);
    const held = waiting.get(d.source);
    if (held) held.push(d);
    else waiting.set(d.source, [d]);
  };
  const fileRead = async (source: string, fp: FileFingerprint) => {
    const sameBytes = [...fingerprints].some(([s, f]) => s !== source && read.has(s) && f.hash === fp.hash);
    fingerprints.set(source, { ...fp, name: basename(source) });
    read.add(source);
    const held = waiting.get(source) ?? [];
    waiting.delete(source);
    if (held.length === 0) return;
    const loadedBefore = !force && (sameBytes || (await history.loadedAnywhere(fp.hash)) !== undefined);
    if (loadedBefore) notRecorded += held.length;
    else for (const d of held) await record(d);
  };

  const log = (s: string) => {
    if (!opts.quiet) process.stderr.write(`${s}\n`);
  };
  const keyOf = new Map<TableLoadResult, string>();
  const onProgress = (p: LoadProgress) => {
    if (p.kind === 'read') log(`  read ${p.lines.toLocaleString('en-US')} lines of ${p.source}`);
    else if (p.kind === 'table-start')
      log(`  ${p.table}: ${p.records.toLocaleString('en-US')} records → staging`);
    else if (p.kind === 'table-failed')
      log(`  ${p.table}: FAILED: ${(p.error as Error).message ?? String(p.error)}`);
    else {
      const r = p.result;
      keyOf.set(r, p.table);
      log(
        `  ${r.table}: committed ${r.rows.toLocaleString('en-US')} rows in ${r.files} file(s)${r.created ? ' (new table)' : ''}${
          r.schemaChanges.length > 0 ? `, ${r.schemaChanges.length} schema change(s)` : ''
        }${r.specChanged ? ', partition spec evolved' : ''}`,
      );
    }
  };
  const ranges = new FileRanges();
  const sources: LoadSource[] = [];
  for (const name of given.keys()) {
    const framing = await sniffFraming(name, config);
    if (framing) {
      // Compressed, or lines that are framed documents: records as text, on the main thread.
      const chunks = fingerprinted(readByteChunks(name), (fp) => fileRead(name, fp));
      sources.push({ name, lines: framedLines(chunks, framing, config, name, onDeadLetter) });
      continue;
    }
    sources.push({
      name,
      path: name,
      size: (await fs.stat(name)).size,
      chunks: fingerprinted(readByteChunks(name), (fp) => fileRead(name, fp)),
      readRange: (start, end) => ranges.read(name, start, end),
    });
  }
  log(`loading ${sources.length} file(s) into ${wh.dir}${branch === undefined ? '' : `, branch ${branch}`}`);
  const report = await loadSources(
    {
      catalog: wh.catalog,
      store: wh.store,
      clock: systemClock,
      ids: randomIds,
      config,
      onProgress,
      onDeadLetter,
      history,
      summary: { 'floe.load-id': loadId, 'engine-name': 'floe' },
      ...(branch === undefined ? {} : { branch }),
      ...(opts.threads === undefined ? {} : { threads: opts.threads }),
      ...(opts.memory === undefined ? {} : { memoryBudgetBytes: opts.memory * 1024 * 1024 }),
    },
    sources,
  ).finally(() => ranges.close());
  if (exportPath !== undefined && dead.length > 0) {
    await fs.mkdir(dirname(exportPath), { recursive: true });
    await fs.writeFile(exportPath, `${dead.map((d) => JSON.stringify(d)).join('\n')}\n`);
  }
  // A dead letter that could not be stored is an error (after the report, so nothing is hidden).
  const stored = await recorder.flush().then(
    () => undefined,
    (e: unknown) => e,
  );
  const notes: string[] = [];
  for (const e of events) notes.push(await historyNote(e, shown, fingerprints));
  const w = `-w ${shellQuote(wh.dir)}`;
  const where: DeadLetterLocation = {
    store: deadLetterStoreDir(wh),
    listCommand: `floe dead-letters list ${w}${
      given.size === 1 ? ` --source ${shellQuote([...given.keys()][0]!)}` : ''
    }`,
    // Only a config that was given is suggested: there may be none to fix yet.
    replayCommand: `floe dead-letters replay ${w}${opts.config ? ` -c ${shellQuote(opts.config)}` : ''}`,
    replayWhen: opts.config
      ? '(after fixing the config)'
      : 'after fixing the input or writing a config (then add -c CONFIG)',
    ...(exportPath !== undefined ? { exportPath } : {}),
  };
  const idOfKey = (key: string): TableIdentifier => tableId(config, key);
  const outcome = {
    idOfResult: (r: TableLoadResult) => idOfKey(keyOf.get(r) ?? r.table),
    idOfKey,
    dead,
    notes,
    deadLettersNotRecorded: notRecorded,
  };
  out(renderReport(report, outcome, where, systemClock.nowMs() - startedMs));
  if (stored !== undefined) throw stored;
  if (report.failures.length > 0) return ExitCode.TableFailed;
  return dead.length > 0 ? ExitCode.Partial : ExitCode.Ok;
}

/** Byte ranges of the input files, read again (one open handle per file, for the whole load). */
class FileRanges {
  private readonly handles = new Map<string, Promise<fs.FileHandle>>();

  async read(path: string, start: number, end: number): Promise<Uint8Array> {
    let h = this.handles.get(path);
    if (!h) {
      h = fs.open(path, 'r');
      this.handles.set(path, h);
    }
    const fh = await h;
    const out = Buffer.alloc(end - start);
    let at = 0;
    while (at < out.length) {
      const { bytesRead } = await fh.read(out, at, out.length - at, start + at);
      if (bytesRead === 0)
        throw new FloeError(
          ErrorKind.DataInvalid,
          `${path} changed while it was loaded: bytes ${start}-${end} are gone`,
        );
      at += bytesRead;
    }
    return out;
  }

  async close(): Promise<void> {
    for (const h of this.handles.values()) await h.then((fh) => fh.close()).catch(() => undefined);
    this.handles.clear();
  }
}

/** One clear error for an input that cannot be loaded; a warning for an empty one. */
async function checkInputFile(f: string): Promise<void> {
  const st = await fs.stat(f).catch(() => undefined);
  if (!st) throw new FloeError(ErrorKind.NotFound, `input file ${f} does not exist`);
  if (st.isDirectory()) {
    throw new FloeError(
      ErrorKind.DataInvalid,
      `${f} is a directory, not an NDJSON file (to load the files in it: floe load ${join(f, '*.ndjson')})`,
    );
  }
  if (!st.isFile()) throw new FloeError(ErrorKind.DataInvalid, `${f} is not a regular file`);
  await fs.access(f, constants.R_OK).catch((e: NodeJS.ErrnoException) => {
    throw new FloeError(ErrorKind.DataInvalid, `cannot read input file ${f} (${e.code ?? e.message})`);
  });
  if (st.size === 0) process.stderr.write(`floe: warning: ${f} is empty: nothing to load from it\n`);
}

/** What the load history decided about a file, in one line. */
async function historyNote(
  e: HistoryEvent,
  shown: (source: string) => string,
  fingerprints: ReadonlyMap<string, FileFingerprint>,
): Promise<string> {
  const when = (p: PastLoad) => `snapshot ${p.snapshotId} (${formatTimestampMs(p.timestampMs)})`;
  const name = (id: TableIdentifier) => `${id.namespace}.${id.name}`;
  if (e.kind === 'duplicate')
    return `skipped ${shown(e.source)}: same content as ${shown(e.sameAs)} in this load, loaded once`;
  if (e.kind === 'already-loaded') {
    const as = e.past.name === basename(e.source) ? '' : ` as ${e.past.name}`;
    return `skipped ${shown(e.source)} for ${name(e.table)}: already loaded${as} in ${when(e.past)}; use --force to load it again`;
  }
  const size = fingerprints.get(e.source)?.size ?? 0;
  const appended =
    e.past.size < size && (await prefixFingerprint(e.source, e.past.size)).hash === e.past.hash;
  if (!appended)
    return `note: ${shown(e.source)} differs from the ${e.past.name} loaded into ${name(e.table)} in ${when(e.past)}: loaded as a new file`;
  return `note: ${shown(e.source)} was appended to since its first ${e.past.size} bytes were loaded (${when(e.past)} of ${name(e.table)}): as a different file it was loaded in full, so the records of those bytes are now loaded twice (to add only new lines, load them as a file of their own: tail -c +${e.past.size + 1} ${shellQuote(shown(e.source))})`;
}

/** A branch name as `--branch` takes it: letters, digits, `_`, `-`, `.`, `/`. */
export function branchName(text: string): string {
  if (!isBranchName(text))
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `--branch wants a branch name of letters, digits, '_', '-', '.', '/' (at most 128), got '${text}'`,
      { context: { branch: text } },
    );
  return text;
}
