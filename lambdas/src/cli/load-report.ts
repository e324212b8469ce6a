/** What `floe load` prints when it is done: per-table summary, skipped files, dead letters, hints. */

import type { LoadReport, TableLoadResult } from '../app/load.ts';
import type { DeadLetter } from '../engine/dead-letters.ts';
import type { TableIdentifier } from '../ports/catalog.ts';
import { renderTable } from './format.ts';

const SHOWN_DEAD_LETTERS = 20;

/** Where a load's dead letters went. */
export interface DeadLetterLocation {
  /** The dead-letter store's folder. */
  readonly store: string;
  /** The command that lists them. */
  readonly listCommand: string;
  /** The command that replays them. */
  readonly replayCommand: string;
  /** When to replay them (`after fixing the config`, …). */
  readonly replayWhen: string;
  /** The NDJSON export (`--dead-letters`), when asked for. */
  readonly exportPath?: string;
}

/** What the CLI adds to the app's report. */
export interface LoadOutcome {
  /** A committed table's identifier. */
  readonly idOfResult: (result: TableLoadResult) => TableIdentifier;
  /** A table's identifier from its routing key (`orders`, `rides.activity`). */
  readonly idOfKey: (key: string) => TableIdentifier;
  /** Dead letters recorded by this run. */
  readonly dead: readonly DeadLetter[];
  /** Lines about files left out or loaded again (load history). */
  readonly notes: readonly string[];
  /** Rejected lines of already loaded files, not recorded again. */
  readonly deadLettersNotRecorded: number;
}

export function renderReport(
  report: LoadReport,
  outcome: LoadOutcome,
  where: DeadLetterLocation,
  ms: number,
): string {
  const lines: string[] = [];
  const dead = outcome.dead;
  if (report.tables.length > 0 || outcome.notes.length === 0) {
    lines.push(
      renderTable(
        ['namespace', 'table', 'rows', 'files', 'new', 'schema changes', 'rejected'],
        report.tables.map((t) => [
          outcome.idOfResult(t).namespace,
          t.table,
          String(t.rows),
          String(t.files),
          t.created ? 'yes' : '',
          t.schemaChanges.join('; ') || '-',
          String(t.deadLetters),
        ]),
      ),
    );
  }
  for (const t of report.tables) {
    if (!t.upserts) continue;
    const id = outcome.idOfResult(t);
    lines.push(
      `upsert table ${id.namespace}.${t.table}: ${t.upserts.upserted} key(s) inserted or replaced, ${t.upserts.deleted} deleted (the last change of each key)${t.upserts.superseded ? `; ${t.upserts.superseded} change(s) older than the key's newest committed one dropped` : ''}`,
    );
  }
  for (const f of report.failures) {
    const e = f.error as { message?: string; kind?: string };
    const id = outcome.idOfKey(f.table);
    lines.push(
      `table ${id.namespace}.${id.name}: NOT LOADED (${f.records} records): ${e.message ?? String(f.error)}${e.kind ? ` [${e.kind}]` : ''}`,
    );
  }
  lines.push(...outcome.notes);
  if (outcome.deadLettersNotRecorded > 0) {
    lines.push(
      `${outcome.deadLettersNotRecorded} rejected line(s) of already loaded files not recorded again (the earlier load recorded them)`,
    );
  }
  lines.push('');
  lines.push(
    `${report.lines.toLocaleString('en-US')} lines read, ${report.rows.toLocaleString('en-US')} rows committed to ${report.tables.length} table(s), ${dead.length} rejected in ${(ms / 1000).toFixed(1)} s`,
  );
  if (report.noRowChanges) {
    lines.push(
      `${report.noRowChanges.toLocaleString('en-US')} change(s) that change no rows (Debezium truncates and tombstones) counted and skipped`,
    );
  }
  if (report.genericRecords > 0) {
    const share = ((100 * report.genericRecords) / Math.max(1, report.lines)).toFixed(1);
    lines.push(
      `${report.genericRecords.toLocaleString('en-US')} record(s) (${share} %) parsed one by one (the generic path: lists with elements, envelopes, conflicting types, invalid JSON); the rest were scanned as bytes`,
    );
  }
  if (dead.length > 0) {
    const byReason = new Map<string, number>();
    for (const d of dead) byReason.set(d.reason, (byReason.get(d.reason) ?? 0) + 1);
    const reasons = [...byReason].map(([r, n]) => `${r}: ${n}`).join(', ');
    lines.push(`rejected lines (${reasons}) recorded as dead letters in ${where.store}`);
    if (where.exportPath !== undefined) lines.push(`  also exported as NDJSON to ${where.exportPath}`);
    for (const d of dead.slice(0, SHOWN_DEAD_LETTERS))
      lines.push(`  ${d.source}:${d.line}  [${d.reason}] ${d.detail}`);
    if (dead.length > SHOWN_DEAD_LETTERS) lines.push(`  … and ${dead.length - SHOWN_DEAD_LETTERS} more`);
    lines.push(`list them: ${where.listCommand}`);
    lines.push(`replay them ${where.replayWhen}: ${where.replayCommand}`);
  }
  return lines.join('\n');
}
