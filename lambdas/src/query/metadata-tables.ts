/**
 * Iceberg metadata tables named as Athena and Trino name them: `"t$snapshots"`, `"t$history"`,
 * `"t$refs"` (the whole table's history, from the metadata JSON) and `"t$files"`, `"t$manifests"`,
 * `"t$partitions"` (one snapshot's files: metadata-file-tables.ts, metadata-partitions.ts).
 * Columns and types follow Trino's Iceberg connector; 64-bit ids are BIGINT.
 */
import type { ReadFile } from '../iceberg/scan.ts';
import { snapshotAncestors, snapshotById, type TableMetadata } from '../iceberg/table-metadata.ts';
import { filesRows, manifestsRows } from './metadata-file-tables.ts';
import { partitionsRows } from './metadata-partitions.ts';
import { type RowSet, sqlBigint, sqlBool, sqlMap, sqlText, sqlTimestampMs } from './sql-literals.ts';
import { mainHistory } from './time-travel.ts';

export const METADATA_TABLE_KINDS = [
  'snapshots',
  'history',
  'files',
  'manifests',
  'partitions',
  'refs',
] as const;
export type MetadataTableKind = (typeof METADATA_TABLE_KINDS)[number];

/** The kinds that describe one snapshot (current, or the one time travel picks). */
export const SNAPSHOT_SCOPED: ReadonlySet<MetadataTableKind> = new Set(['files', 'manifests', 'partitions']);

/** `t$files` → { base: 't', suffix: 'files' }; undefined for a name without `$`. */
export function splitMetadataName(name: string): { base: string; suffix: string } | undefined {
  const at = name.lastIndexOf('$');
  if (at <= 0) return undefined;
  return { base: name.slice(0, at), suffix: name.slice(at + 1) };
}

export function isMetadataTableKind(s: string): s is MetadataTableKind {
  return (METADATA_TABLE_KINDS as readonly string[]).includes(s);
}

export interface MetadataTableSource {
  readonly metadata: TableMetadata;
  readonly read: ReadFile;
  /** Table name for messages. */
  readonly table: string;
  /** The snapshot the snapshot-scoped kinds describe; undefined: the current one. */
  readonly snapshotId?: bigint;
}

/** The rows of metadata table `kind` of a table. */
export async function metadataTableRows(kind: MetadataTableKind, src: MetadataTableSource): Promise<RowSet> {
  switch (kind) {
    case 'snapshots':
      return snapshotsRows(src.metadata);
    case 'history':
      return historyRows(src.metadata);
    case 'refs':
      return refsRows(src.metadata);
    case 'files':
      return filesRows(src);
    case 'manifests':
      return manifestsRows(src);
    case 'partitions':
      return partitionsRows(src);
  }
}

function snapshotsRows(m: TableMetadata): RowSet {
  return {
    columns: [
      { name: 'committed_at', type: 'TIMESTAMPTZ' },
      { name: 'snapshot_id', type: 'BIGINT' },
      { name: 'parent_id', type: 'BIGINT' },
      { name: 'operation', type: 'VARCHAR' },
      { name: 'manifest_list', type: 'VARCHAR' },
      { name: 'summary', type: 'MAP(VARCHAR, VARCHAR)' },
    ],
    rows: m.snapshots.map((s) => {
      // Java's Snapshot.summary() holds every key but `operation`, which is its own column.
      const { operation, ...summary } = s.summary;
      return [
        sqlTimestampMs(s['timestamp-ms']),
        sqlBigint(s['snapshot-id']),
        sqlBigint(s['parent-snapshot-id']),
        sqlText(operation),
        sqlText(s['manifest-list']),
        sqlMap(Object.entries(summary).map(([k, v]) => [sqlText(k), sqlText(v)] as const)),
      ];
    }),
  };
}

/** Each time the main branch moved: the snapshot log (or the current lineage when a writer kept none). */
function historyRows(m: TableMetadata): RowSet {
  const head = m.refs.main?.['snapshot-id'] ?? m['current-snapshot-id'];
  const ancestors = new Set(
    head === undefined ? [] : snapshotAncestors(m, head).map((s) => s['snapshot-id']),
  );
  return {
    columns: [
      { name: 'made_current_at', type: 'TIMESTAMPTZ' },
      { name: 'snapshot_id', type: 'BIGINT' },
      { name: 'parent_id', type: 'BIGINT' },
      { name: 'is_current_ancestor', type: 'BOOLEAN' },
    ],
    rows: mainHistory(m).map((e) => [
      sqlTimestampMs(e['timestamp-ms']),
      sqlBigint(e['snapshot-id']),
      sqlBigint(snapshotById(m, e['snapshot-id'])?.['parent-snapshot-id']),
      sqlBool(ancestors.has(e['snapshot-id'])),
    ]),
  };
}

function refsRows(m: TableMetadata): RowSet {
  return {
    columns: [
      { name: 'name', type: 'VARCHAR' },
      { name: 'type', type: 'VARCHAR' },
      { name: 'snapshot_id', type: 'BIGINT' },
      { name: 'max_reference_age_in_ms', type: 'BIGINT' },
      { name: 'min_snapshots_to_keep', type: 'INTEGER' },
      { name: 'max_snapshot_age_in_ms', type: 'BIGINT' },
    ],
    rows: Object.entries(m.refs).map(([name, r]) => [
      sqlText(name),
      sqlText(r.type.toUpperCase()),
      sqlBigint(r['snapshot-id']),
      sqlBigint(r['max-ref-age-ms']),
      sqlBigint(r['min-snapshots-to-keep']),
      sqlBigint(r['max-snapshot-age-ms']),
    ]),
  };
}
