/** `floe load FILES… --warehouse DIR [--config FILE]`. */
import { promises as fs } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { readByteChunks } from '../adapters/local/line-reader.ts';
import { randomIds, systemClock } from '../adapters/local/system-clock.ts';
import type { DeadLetter } from '../app/dead-letters.ts';
import { type LoadProgress, type LoadReport, type LoadSource, loadSources } from '../app/load.ts';
import { type FloeConfig, parseConfig } from '../config.ts';
import { ErrorKind, FloeError } from '../errors.ts';
import { renderTable } from './format.ts';
import { openWarehouse } from './warehouse.ts';

export interface LoadCommandOptions {
  readonly warehouse?: string;
  readonly config?: string;
  readonly deadLetters?: string;
  readonly quiet?: boolean;
}

export async function readConfigFile(path: string | undefined): Promise<FloeConfig> {
  if (path === undefined) return parseConfig({});
  let text: string;
  try {
    text = await fs.readFile(path, 'utf8');
  } catch (e) {
    throw new FloeError(ErrorKind.ConfigInvalid, `cannot read config file ${path}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `config file ${path} is not valid JSON: ${(e as Error).message}`,
    );
  }
  return parseConfig(json);
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
  const dlPath = resolve(
    opts.deadLetters ??
      `${wh.dir}/_floe/dead-letters/load-${new Date(startedMs).toISOString().replace(/[:.]/g, '-')}.ndjson`,
  );
  const dead: DeadLetter[] = [];
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
  const sources: LoadSource[] = files.map((f) => ({ name: f, chunks: readByteChunks(f) }));
  log(`loading ${files.length} file(s) into ${wh.dir}`);
  const report = await loadSources(
    {
      catalog: wh.catalog,
      store: wh.store,
      clock: systemClock,
      ids: randomIds,
      config,
      onProgress,
      onDeadLetter: (d) => {
        dead.push(d);
      },
      summary: { 'floe.load-id': loadId, 'engine-name': 'floe' },
    },
    sources,
  );
  if (dead.length > 0) {
    await fs.mkdir(dirname(dlPath), { recursive: true });
    await fs.writeFile(dlPath, `${dead.map((d) => JSON.stringify(d)).join('\n')}\n`);
  }
  out(renderReport(report, dead, dlPath, systemClock.nowMs() - startedMs));
  return report.failures.length > 0 ? 1 : 0;
}

const SHOWN_DEAD_LETTERS = 20;

export function renderReport(
  report: LoadReport,
  dead: readonly DeadLetter[],
  dlPath: string,
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
    lines.push(`rejected lines (${byReason}) written to ${dlPath}`);
    for (const d of dead.slice(0, SHOWN_DEAD_LETTERS))
      lines.push(`  ${d.source}:${d.line}  [${d.reason}] ${d.detail}`);
    if (total > SHOWN_DEAD_LETTERS) lines.push(`  … and ${total - SHOWN_DEAD_LETTERS} more`);
  }
  return lines.join('\n');
}
