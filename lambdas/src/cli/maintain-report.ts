/** What `floe maintain` prints: per table, one line per step and the table's state after. */

import type { TableHealth } from '../app/maintain/health.ts';
import type { TableMaintenanceReport } from '../app/maintain/index.ts';
import { stringifyJson } from '../iceberg/json.ts';
import { formatBytes } from './format.ts';

export function maintenanceReport(reports: readonly TableMaintenanceReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    lines.push(`${r.table}${r.dryRun ? '  (dry run: nothing changed)' : ''}`);
    const c = r.compaction;
    if (c) {
      if (c.planned === 0) lines.push('  compaction   no small files');
      else if (r.dryRun)
        lines.push(
          `  compaction   would rewrite ${c.filesRewritten} files (${rows(c.rowsBefore)}, ${bytes(c.bytesBefore)})`,
        );
      else if (c.skipped) lines.push(`  compaction   skipped: ${c.skipped}`);
      else
        lines.push(
          `  compaction   ${c.filesRewritten} files → ${c.filesWritten} (${rows(c.rowsAfter)}, ${bytes(c.bytesBefore)} → ${bytes(c.bytesAfter)})`,
        );
    }
    const m = r.manifests;
    if (m) lines.push(`  manifests    ${m.manifestsBefore} → ${m.manifestsAfter}`);
    const e = r.expiry;
    if (e) {
      const f = e.freed;
      const verb = r.dryRun ? 'would expire' : 'expired';
      const files = f.manifestLists + f.manifests + f.dataFiles + f.deleteFiles + f.statisticsFiles;
      lines.push(
        `  expiry       ${verb} ${e.snapshotsExpired} snapshots, ${e.snapshotsRetained - (r.dryRun ? e.snapshotsExpired : 0)} kept` +
          (e.refsRemoved.length > 0 ? `, refs dropped: ${e.refsRemoved.join(', ')}` : '') +
          (files > 0
            ? `; ${r.dryRun ? 'would free' : 'freed'} ${f.dataFiles} data, ${f.deleteFiles} delete, ${f.manifests} manifest, ${f.manifestLists} manifest-list files (${bytes(f.bytes)})`
            : ''),
      );
    }
    const o = r.orphans;
    if (o) {
      lines.push(
        `  orphans      ${r.dryRun ? 'would delete' : 'deleted'} ${o.orphans} of ${o.listed} files (${formatBytes(o.bytes)})` +
          (o.young > 0 ? `; ${o.young} unreferenced but younger than the threshold: kept` : ''),
      );
    }
    for (const s of r.skipped) lines.push(`  ${pad(s.step)} skipped: ${s.reason}`);
    for (const s of r.failed) lines.push(`  ${pad(s.step)} FAILED: ${s.error}`);
    lines.push(`  before       ${health(r.before)}`);
    if (!r.dryRun) lines.push(`  after        ${health(r.after)}`);
  }
  return lines.join('\n');
}

export function maintenanceJson(reports: readonly TableMaintenanceReport[]): string {
  // Lossless: sizes and snapshot ids are JSON integers of any size (bigint), one table per line.
  return reports.map((r) => stringifyJson(r)).join('\n');
}

function health(h: TableHealth): string {
  return `${h.dataFiles} data files (avg ${formatBytes(h.averageFileBytes)}), ${h.deleteFiles} delete files, ${h.snapshots} snapshots, ${rows(h.records)}, metadata ${formatBytes(h.metadataBytes)}`;
}

function rows(n: bigint): string {
  return `${n.toLocaleString('en-US')} rows`;
}

function bytes(n: bigint): string {
  return formatBytes(Number(n));
}

function pad(step: string): string {
  const name =
    step === 'rewriteManifests'
      ? 'manifests'
      : step === 'compact'
        ? 'compaction'
        : step === 'expire'
          ? 'expiry'
          : step;
  return name.padEnd(12);
}
