/** `floe tables`, `floe describe`, `floe snapshots`: read-only views of a warehouse. */
import { ErrorKind, isFloeError } from '../errors.ts';
import type { Snapshot } from '../iceberg/snapshot.ts';
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { currentSchema, currentSnapshot } from '../iceberg/table-metadata.ts';
import type { LoadedTable } from '../ports/catalog.ts';
import type { IcebergQueryEngine } from '../query/engine.ts';
import type { TableIo } from '../query/live-rows.ts';
import { type RowCounts, rowCountsFromSummary, rowsWrittenFromSummary } from '../query/summary-rows.ts';
import { formatTimestampMs, renderSchema, renderTable } from './format.ts';
import { listAllTables, type Warehouse } from './warehouse.ts';

/** Rows written by the current snapshot (`total-records`), deletes not subtracted. */
export function totalRecords(meta: TableMetadata): string {
  return currentSnapshot(meta)?.summary['total-records'] ?? '0';
}

/** Live rows, or why they are unknown: counted rows written when deletes cannot be applied here. */
export type LiveRowCount =
  | { readonly rows: RowCounts }
  | { readonly written: bigint | undefined; readonly why: string };

/**
 * Counts a table's live rows. The summary settles tables without deletes; otherwise the count runs
 * through the query engine (loaded only then, so `floe tables` stays light). Deletes this reader
 * cannot apply (deletion vectors, ORC) leave the rows written, labelled as such.
 */
async function countLiveRows(
  m: TableMetadata,
  io: TableIo,
  shared: { engine?: IcebergQueryEngine },
): Promise<LiveRowCount> {
  const fromSummary = rowCountsFromSummary(m);
  if (fromSummary) return { rows: fromSummary };
  const { countRows } = await import('../query/live-rows.ts');
  const { IcebergQueryEngine } = await import('../query/engine.ts');
  shared.engine ??= new IcebergQueryEngine(io);
  try {
    return { rows: await countRows(m, io, shared.engine) };
  } catch (e) {
    if (!isFloeError(e, ErrorKind.FeatureUnsupported)) throw e;
    return { written: rowsWrittenFromSummary(m), why: e.message };
  }
}

function liveRowsCell(c: LiveRowCount): string {
  if ('rows' in c) return String(c.rows.live);
  return c.written === undefined ? '?' : `${c.written} written`;
}

export async function tablesReport(wh: Warehouse): Promise<string> {
  const rows: string[][] = [];
  const io: TableIo = { read: (uri) => wh.store.get(uri), resolvePath: (uri) => wh.store.pathOf(uri) };
  const shared: { engine?: IcebergQueryEngine } = {};
  try {
    for (const id of await listAllTables(wh)) {
      const t = await wh.catalog.loadTable(id);
      const m = t.metadata;
      const current = currentSnapshot(m);
      rows.push([
        id.namespace,
        id.name,
        String(m['format-version']),
        String(currentSchema(m).fields.length),
        String(m.snapshots.length),
        liveRowsCell(await countLiveRows(m, io, shared)),
        current ? formatTimestampMs(current['timestamp-ms']) : '-',
      ]);
    }
  } finally {
    shared.engine?.close();
  }
  if (rows.length === 0) return `no tables in ${wh.dir}`;
  return renderTable(
    ['namespace', 'table', 'format', 'columns', 'snapshots', 'live rows', 'last commit'],
    rows,
  );
}

/** `describe` with the live rows counted (position and equality deletes applied). */
export async function describeTable(t: LoadedTable, io: TableIo): Promise<string> {
  const shared: { engine?: IcebergQueryEngine } = {};
  try {
    return describeReport(t, undefined, await countLiveRows(t.metadata, io, shared));
  } finally {
    shared.engine?.close();
  }
}

function rowsLine(m: TableMetadata, counted: LiveRowCount | undefined): string {
  const c = counted ?? (rowCountsFromSummary(m) ? { rows: rowCountsFromSummary(m) as RowCounts } : undefined);
  if (c === undefined) return `rows written ${totalRecords(m)} (before deletes; not counted here)`;
  if (!('rows' in c)) return `rows written ${c.written ?? '?'} (before deletes: ${c.why})`;
  const { live, written } = c.rows;
  return live === written
    ? `live rows    ${live}`
    : `live rows    ${live} (${written} written, ${written - live} removed by deletes)`;
}

export function describeReport(
  t: LoadedTable,
  newFieldIds?: ReadonlySet<number>,
  counted?: LiveRowCount,
): string {
  const m = t.metadata;
  const schema = currentSchema(m);
  const spec = m['partition-specs'].find((s) => s['spec-id'] === m['default-spec-id']);
  const byId = new Map<number, string>();
  for (const f of schema.fields) byId.set(f.id, f.name);
  const specText =
    spec && spec.fields.length > 0
      ? spec.fields
          .map(
            (f) =>
              `${f.transform}(${byId.get(f['source-id']) ?? `#${f['source-id']}`}) → ${f.name} [${f['field-id']}]`,
          )
          .join(', ')
      : 'unpartitioned';
  const props = Object.entries(m.properties)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `  ${k} = ${v}`);
  return [
    `table        ${t.id.namespace}.${t.id.name}`,
    `location     ${m.location}`,
    `metadata     ${t.metadataLocation}`,
    `format       v${m['format-version']}   uuid ${m['table-uuid']}`,
    `schema id    ${schema.schemaId} (of ${m.schemas.length})   last column id ${m['last-column-id']}`,
    `partition    spec ${m['default-spec-id']}: ${specText}`,
    `snapshots    ${m.snapshots.length}   current ${m['current-snapshot-id'] ?? 'none'}`,
    rowsLine(m, counted),
    '',
    'columns (id  name: type)',
    renderSchema(schema, (f) => (newFieldIds?.has(f.id) ? '← new' : undefined)),
    '',
    'properties',
    ...props,
  ].join('\n');
}

function byCommitTime(m: TableMetadata): Snapshot[] {
  return [...m.snapshots].sort((a, b) =>
    a['timestamp-ms'] < b['timestamp-ms'] ? -1 : a['timestamp-ms'] > b['timestamp-ms'] ? 1 : 0,
  );
}

export interface SnapshotsReportOptions {
  /** Also print every snapshot's summary (Floe's `floe.*` keys first). */
  readonly summaries?: boolean;
}

export function snapshotsReport(t: LoadedTable, opts: SnapshotsReportOptions = {}): string {
  const snapshots = byCommitTime(t.metadata);
  if (snapshots.length === 0) return `${t.id.namespace}.${t.id.name} has no snapshots`;
  const table = renderTable(
    ['snapshot id', 'parent', 'seq', 'committed at', 'operation', 'files+', 'rows+', 'total rows', 'schema'],
    snapshots.map((s) => [
      String(s['snapshot-id']),
      s['parent-snapshot-id'] === undefined ? '-' : String(s['parent-snapshot-id']),
      String(s['sequence-number'] ?? 0n),
      formatTimestampMs(s['timestamp-ms']),
      s.summary.operation,
      s.summary['added-data-files'] ?? '0',
      s.summary['added-records'] ?? '0',
      s.summary['total-records'] ?? '?',
      s['schema-id'] === undefined ? '-' : String(s['schema-id']),
    ]),
  );
  if (!opts.summaries) return table;
  return [table, '', ...snapshots.flatMap(summaryBlock)].join('\n');
}

/** Summary keys, Floe's own (`floe.load-id`, `floe.coerced`, `floe.watermark` …) first. */
function summaryEntries(s: Snapshot): [string, string][] {
  const entries = Object.entries(s.summary).filter(([k]) => k !== 'operation');
  const floe = entries.filter(([k]) => k.startsWith('floe.')).sort(([a], [b]) => a.localeCompare(b));
  return [...floe, ...entries.filter(([k]) => !k.startsWith('floe.'))];
}

function summaryBlock(s: Snapshot): string[] {
  const entries = summaryEntries(s);
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return [
    `summary of snapshot ${s['snapshot-id']} (${s.summary.operation}, ${formatTimestampMs(s['timestamp-ms'])})`,
    ...(entries.length === 0 ? ['  (empty)'] : entries.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)),
    '',
  ];
}

/**
 * One JSON object per snapshot, oldest first. Ids and sequence numbers are strings (64-bit, exact),
 * as `floe query --json` writes BIGINT values; `summary` is the snapshot's summary verbatim.
 */
export function snapshotsJsonLines(t: LoadedTable): string[] {
  return byCommitTime(t.metadata).map((s) =>
    JSON.stringify({
      table: `${t.id.namespace}.${t.id.name}`,
      snapshot_id: String(s['snapshot-id']),
      parent_id: s['parent-snapshot-id'] === undefined ? null : String(s['parent-snapshot-id']),
      sequence_number: String(s['sequence-number'] ?? 0n),
      committed_at: formatTimestampMs(s['timestamp-ms']),
      operation: s.summary.operation,
      manifest_list: s['manifest-list'] ?? null,
      schema_id: s['schema-id'] ?? null,
      summary: s.summary,
    }),
  );
}
