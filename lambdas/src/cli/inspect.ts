/** `floe tables`, `floe describe`, `floe snapshots`: read-only views of a warehouse. */
import type { TableMetadata } from '../iceberg/table-metadata.ts';
import { currentSchema, currentSnapshot } from '../iceberg/table-metadata.ts';
import type { LoadedTable } from '../ports/catalog.ts';
import { formatTimestampMs, renderSchema, renderTable } from './format.ts';
import { listAllTables, type Warehouse } from './warehouse.ts';

export function totalRecords(meta: TableMetadata): string {
  return currentSnapshot(meta)?.summary['total-records'] ?? '0';
}

export async function tablesReport(wh: Warehouse): Promise<string> {
  const rows: string[][] = [];
  for (const id of await listAllTables(wh)) {
    const t = await wh.catalog.loadTable(id);
    const m = t.metadata;
    rows.push([
      id.namespace,
      id.name,
      String(m['format-version']),
      String(currentSchema(m).fields.length),
      String(m.snapshots.length),
      totalRecords(m),
      currentSnapshot(m) ? formatTimestampMs(currentSnapshot(m)!['timestamp-ms']) : '-',
    ]);
  }
  if (rows.length === 0) return `no tables in ${wh.dir}`;
  return renderTable(['namespace', 'table', 'format', 'columns', 'snapshots', 'rows', 'last commit'], rows);
}

export function describeReport(t: LoadedTable, newFieldIds?: ReadonlySet<number>): string {
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
    `rows         ${totalRecords(m)}`,
    '',
    'columns (id  name: type)',
    renderSchema(schema, (f) => (newFieldIds?.has(f.id) ? '← new' : undefined)),
    '',
    'properties',
    ...props,
  ].join('\n');
}

export function snapshotsReport(t: LoadedTable): string {
  const m = t.metadata;
  const rows = [...m.snapshots]
    .sort((a, b) =>
      a['timestamp-ms'] < b['timestamp-ms'] ? -1 : a['timestamp-ms'] > b['timestamp-ms'] ? 1 : 0,
    )
    .map((s) => [
      String(s['snapshot-id']),
      s['parent-snapshot-id'] === undefined ? '-' : String(s['parent-snapshot-id']),
      String(s['sequence-number'] ?? 0n),
      formatTimestampMs(s['timestamp-ms']),
      s.summary.operation,
      s.summary['added-data-files'] ?? '0',
      s.summary['added-records'] ?? '0',
      s.summary['total-records'] ?? '?',
      s['schema-id'] === undefined ? '-' : String(s['schema-id']),
    ]);
  if (rows.length === 0) return `${t.id.namespace}.${t.id.name} has no snapshots`;
  return renderTable(
    ['snapshot id', 'parent', 'seq', 'committed at', 'operation', 'files+', 'rows+', 'total rows', 'schema'],
    rows,
  );
}
