/**
 * `floe load FILES… --warehouse DIR [--config FILE] [--dead-letters FILE]`. Every rejected line is
 * recorded in the warehouse's dead-letter store (`floe dead-letters list|show|replay`) under a key
 * made from its file and line, so loading the same file again overwrites rather than duplicates;
 * `--dead-letters` also exports them as NDJSON.
 */
import { promises as fs } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { readByteChunks } from '../adapters/local/line-reader.ts';
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import type { DeadLetter } from '../app/dead-letters.ts';
import { type LoadProgress, type LoadReport, type LoadSource, loadSources } from '../app/load.ts';
import { deadLetterWriter } from '../app/replay.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import { deadLetterRecord } from '../ports/dead-letters.ts';
import { readConfigFile } from './config-file.ts';
import { deadLetterStoreDir, openDeadLetterStore, shellQuote } from './dead-letters-command.ts';
import { renderTable } from './format.ts';
import { openWarehouse } from './warehouse.ts';

export interface LoadCommandOptions {
  readonly warehouse?: string;
  readonly config?: string;
  readonly deadLetters?: string;
  readonly quiet?: boolean;
}

export async function loadCommand(
  files: string[],
  opts: LoadCommandOptions,
  out: (s: string) => void,
): Promise<number> {
  const config = await readConfigFile(opts.config);
  for (const f of files) {
    const st = await fs.stat(f).catch(() => undefined);
    if (!st?.isFile()) throw new FloeError(ErrorKind.NotFound, `input file ${f} does not exist`);
  }
  const wh = openWarehouse(opts.warehouse);
  await fs.mkdir(wh.dir, { recursive: true });
  const startedMs = systemClock.nowMs();
  const loadId = randomIds.uuid();
  const exportPath = opts.deadLetters === undefined ? undefined : resolve(opts.deadLetters);
  const dead: DeadLetter[] = [];
  // Recorded while the load runs (a few writes in flight), keyed by source + line.
  const recorder = deadLetterWriter(openDeadLetterStore(wh));
  const log = (s: string) => {
    if (!opts.quiet) process.stderr.write(`${s}\n`);
  };
  const onProgress = (p: LoadProgress) => {
    if (p.kind === 'read') log(`  read ${p.lines.toLocaleString('en-US')} lines of ${p.source}`);
    else if (p.kind === 'table-start')
      log(`  ${p.table}: ${p.records.toLocaleString('en-US')} records → staging`);
    else if (p.kind === 'table-failed')
      log(`  ${p.table}: FAILED: ${(p.error as Error).message ?? String(p.error)}`);
    else {
      const r = p.result;
      log(
        `  ${r.table}: committed ${r.rows.toLocaleString('en-US')} rows in ${r.files} file(s)${r.created ? ' (new table)' : ''}${
          r.schemaChanges.length > 0 ? `, ${r.schemaChanges.length} schema change(s)` : ''
        }${r.specChanged ? ', partition spec evolved' : ''}`,
      );
    }
  };
  // Absolute paths: the same file gives the same dead-letter keys from any working directory.
  const sources: LoadSource[] = files.map((f) => ({ name: resolve(f), chunks: readByteChunks(f) }));
  log(`loading ${files.length} file(s) into ${wh.dir}`);
  const report = await loadSources(
    {
      catalog: wh.catalog,
      store: wh.store,
      clock: systemClock,
      ids: randomIds,
      config,
      onProgress,
      onDeadLetter: async (d) => {
        dead.push(d);
        await recorder.add(deadLetterRecord(d));
      },
      summary: { 'floe.load-id': loadId, 'engine-name': 'floe' },
    },
    sources,
  );
  if (exportPath !== undefined && dead.length > 0) {
    await fs.mkdir(dirname(exportPath), { recursive: true });
    await fs.writeFile(exportPath, `${dead.map((d) => JSON.stringify(d)).join('\n')}\n`);
  }
  // A dead letter that could not be stored is an error (after the report, so nothing is hidden).
  const stored = await recorder.flush().then(
    () => undefined,
    (e: unknown) => e,
  );
  const w = `-w ${shellQuote(wh.dir)}`;
  const where: DeadLetterLocation = {
    store: deadLetterStoreDir(wh),
    listCommand: `floe dead-letters list ${w}${
      files.length === 1 ? ` --source ${shellQuote(resolve(files[0]!))}` : ''
    }`,
    replayCommand: `floe dead-letters replay ${w}${opts.config ? ` -c ${shellQuote(opts.config)}` : ' -c floe.config.json'}`,
    ...(exportPath !== undefined ? { exportPath } : {}),
  };
  out(renderReport(report, dead, where, systemClock.nowMs() - startedMs));
  if (stored !== undefined) throw stored;
  return report.failures.length > 0 ? 1 : 0;
}

const SHOWN_DEAD_LETTERS = 20;

/** Where a load's dead letters went. */
export interface DeadLetterLocation {
  /** The dead-letter store's folder. */
  readonly store: string;
  /** The command that lists them. */
  readonly listCommand: string;
  /** The command that replays them (after fixing the config). */
  readonly replayCommand: string;
  /** The NDJSON export (`--dead-letters`), when asked for. */
  readonly exportPath?: string;
}

export function renderReport(
  report: LoadReport,
  dead: readonly DeadLetter[],
  where: DeadLetterLocation,
  ms: number,
): string {
  const lines: string[] = [];
  lines.push(
    renderTable(
      ['table', 'rows', 'files', 'new', 'schema changes', 'rejected'],
      report.tables.map((t) => [
        t.table,
        String(t.rows),
        String(t.files),
        t.created ? 'yes' : '',
        t.schemaChanges.join('; ') || '-',
        String(t.deadLetters),
      ]),
    ),
  );
  const total = dead.length;
  for (const f of report.failures) {
    const e = f.error as { message?: string; kind?: string };
    lines.push(
      `table ${f.table}: NOT LOADED (${f.records} records): ${e.message ?? String(f.error)}${e.kind ? ` [${e.kind}]` : ''}`,
    );
  }
  lines.push('');
  lines.push(
    `${report.lines.toLocaleString('en-US')} lines read, ${report.rows.toLocaleString('en-US')} rows committed to ${report.tables.length} table(s), ${total} rejected in ${(ms / 1000).toFixed(1)} s`,
  );
  if (total > 0) {
    const byReason = Object.entries(report.deadLetters)
      .map(([r, n]) => `${r}: ${n}`)
      .join(', ');
    lines.push(`rejected lines (${byReason}) recorded as dead letters in ${where.store}`);
    if (where.exportPath !== undefined) lines.push(`  also exported as NDJSON to ${where.exportPath}`);
    for (const d of dead.slice(0, SHOWN_DEAD_LETTERS))
      lines.push(`  ${d.source}:${d.line}  [${d.reason}] ${d.detail}`);
    if (total > SHOWN_DEAD_LETTERS) lines.push(`  … and ${total - SHOWN_DEAD_LETTERS} more`);
    lines.push(`list them: ${where.listCommand}`);
    lines.push(`replay them (after fixing the config): ${where.replayCommand}`);
  }
  return lines.join('\n');
}
