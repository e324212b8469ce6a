/**
 * Folds REST-style `TableUpdate`s over table metadata (Java `TableMetadata.Builder`; spec "Table
 * Metadata", "Snapshots", "Snapshot References", "Row Lineage"). Pure: time and the base file's
 * location come in through `ctx`.
 */
import { ErrorKind, FloeError } from '../../errors.ts';
import { lastAssignedPartitionId, type PartitionSpec, specsEquivalent } from '../partition-spec.ts';
import { highestFieldId, indexById, type Schema, schemaStruct } from '../schema.ts';
import { findV3OnlyType } from '../schema-evolution.ts';
import { MAIN_BRANCH, type Snapshot, type SnapshotRef } from '../snapshot.ts';
import { INITIAL_SORT_ORDER_ID, type SortOrder, sameOrder } from '../sort-order.ts';
import {
  type FormatVersion,
  SUPPORTED_FORMAT_VERSION,
  type TableMetadata,
  validateTableMetadata,
} from '../table-metadata.ts';
import { fieldToJson } from '../types.ts';
import { LAST_ADDED, type TableUpdate } from './updates.ts';

export interface ApplyContext {
  /** Commit time: `last-updated-ms` unless a snapshot added in this commit supplies it. */
  readonly nowMs: number;
  /** Location of the base's metadata file; appended to `metadata-log` when given. */
  readonly metadataLocation?: string;
  /** Overrides `write.metadata.previous-versions-max` (default 100, at least 1). */
  readonly maxPreviousVersions?: number;
}

export const PREVIOUS_VERSIONS_MAX_PROP = 'write.metadata.previous-versions-max';
export const PREVIOUS_VERSIONS_MAX_DEFAULT = 100;

/** Table properties that describe metadata and are never stored (Java `RESERVED_PROPERTIES`). */
export const RESERVED_PROPERTIES: ReadonlySet<string> = new Set([
  'format-version',
  'uuid',
  'snapshot-count',
  'current-snapshot-id',
  'current-snapshot-summary',
  'current-snapshot-timestamp-ms',
  'current-schema',
  'default-partition-spec',
  'default-sort-order',
]);

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

interface State {
  readonly m: Mutable<TableMetadata> & {
    schemas: Schema[];
    'partition-specs': PartitionSpec[];
    'sort-orders': SortOrder[];
    snapshots: Snapshot[];
    'snapshot-log': { 'timestamp-ms': bigint; 'snapshot-id': bigint }[];
    refs: Record<string, SnapshotRef>;
    properties: Record<string, string>;
  };
  readonly nowMs: bigint;
  lastUpdated?: bigint;
  lastAddedSchemaId?: number;
  lastAddedSpecId?: number;
  lastAddedOrderId?: number;
  readonly addedSnapshots: Set<bigint>;
  /** Snapshots added in this commit and then set as main (candidates for intermediate entries). */
  readonly mainSetToAdded: bigint[];
  removedSnapshots: boolean;
}

/**
 * Applies `updates` in order to `base` and returns new metadata (the base is not modified; an
 * empty list returns `base`). Maintains last-sequence-number (a v2+ snapshot must carry
 * last + 1), snapshot-log, metadata-log (trimmed), refs.main ⇄ current-snapshot-id,
 * last-column-id, last-partition-id and v3 next-row-id (+= added-rows); an added schema, spec or
 * sort order identical to an existing one reuses its id.
 *
 * Errors: CommitConflict (retryable) when a snapshot is stale against `base` (its sequence number
 * or first-row-id was taken by another commit); AlreadyExists when the snapshot id is already in
 * the table; DataInvalid for updates that can never apply.
 */
export function applyUpdates(
  base: TableMetadata,
  updates: readonly TableUpdate[],
  ctx: ApplyContext,
): TableMetadata {
  if (updates.length === 0) return base;
  const s: State = {
    m: {
      ...base,
      schemas: [...base.schemas],
      'partition-specs': [...base['partition-specs']],
      'sort-orders': [...base['sort-orders']],
      snapshots: [...base.snapshots],
      'snapshot-log': [...base['snapshot-log']],
      'metadata-log': [...base['metadata-log']],
      refs: { ...base.refs },
      properties: { ...base.properties },
    },
    nowMs: BigInt(ctx.nowMs),
    addedSnapshots: new Set(),
    mainSetToAdded: [],
    removedSnapshots: false,
  };
  for (const u of updates) applyOne(s, u);
  const m = s.m;
  m['last-updated-ms'] = s.lastUpdated ?? s.nowMs;
  m['snapshot-log'] = updateSnapshotLog(s);
  if (ctx.metadataLocation !== undefined) {
    const max = Math.max(1, ctx.maxPreviousVersions ?? previousVersionsMax(m.properties));
    const log = [
      ...base['metadata-log'],
      { 'timestamp-ms': base['last-updated-ms'], 'metadata-file': ctx.metadataLocation },
    ];
    m['metadata-log'] = log.slice(Math.max(0, log.length - max));
  }
  validateTableMetadata(m, `table ${m.location}`);
  return m;
}

function previousVersionsMax(props: Readonly<Record<string, string>>): number {
  const raw = props[PREVIOUS_VERSIONS_MAX_PROP];
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isInteger(n) ? n : PREVIOUS_VERSIONS_MAX_DEFAULT;
}

function applyOne(s: State, u: TableUpdate): void {
  const m = s.m;
  switch (u.action) {
    case 'assign-uuid':
      m['table-uuid'] = u.uuid;
      return;
    case 'upgrade-format-version':
      upgradeFormatVersion(s, u['format-version']);
      return;
    case 'add-schema':
      addSchema(s, u.schema, u['last-column-id']);
      return;
    case 'set-current-schema': {
      const id = resolveLastAdded(u['schema-id'], s.lastAddedSchemaId, 'schema', m);
      if (!m.schemas.some((x) => x.schemaId === id))
        throw bad(m, `cannot set current schema to unknown schema id ${id}`);
      m['current-schema-id'] = id;
      return;
    }
    case 'add-spec':
      addSpec(s, u.spec);
      return;
    case 'set-default-spec': {
      const id = resolveLastAdded(u['spec-id'], s.lastAddedSpecId, 'partition spec', m);
      if (!m['partition-specs'].some((x) => x['spec-id'] === id))
        throw bad(m, `cannot set default spec to unknown spec id ${id}`);
      m['default-spec-id'] = id;
      return;
    }
    case 'add-sort-order':
      addSortOrder(s, u['sort-order']);
      return;
    case 'set-default-sort-order': {
      const id = resolveLastAdded(u['sort-order-id'], s.lastAddedOrderId, 'sort order', m);
      if (!m['sort-orders'].some((x) => x['order-id'] === id)) {
        throw bad(m, `cannot set default sort order to unknown order id ${id}`);
      }
      m['default-sort-order-id'] = id;
      return;
    }
    case 'add-snapshot':
      addSnapshot(s, u.snapshot);
      return;
    case 'set-snapshot-ref': {
      const { action: _a, 'ref-name': name, ...ref } = u;
      setRef(s, name, ref);
      return;
    }
    case 'remove-snapshots':
      removeSnapshots(s, new Set(u['snapshot-ids']));
      return;
    case 'remove-snapshot-ref':
      if (u['ref-name'] === MAIN_BRANCH) delete m['current-snapshot-id'];
      delete m.refs[u['ref-name']];
      return;
    case 'set-location':
      m.location = stripTrailingSlash(u.location);
      return;
    case 'set-properties':
      for (const [k, v] of Object.entries(u.updates)) {
        if (RESERVED_PROPERTIES.has(k)) throw bad(m, `table property '${k}' is reserved and cannot be set`);
        m.properties[k] = v;
      }
      return;
    case 'remove-properties':
      for (const k of u.removals) delete m.properties[k];
      return;
    default: {
      const never: never = u;
      throw new FloeError(
        ErrorKind.DataInvalid,
        `unknown table update ${JSON.stringify((never as { action: unknown }).action)}`,
      );
    }
  }
}

function upgradeFormatVersion(s: State, v: FormatVersion): void {
  const m = s.m;
  if (v > SUPPORTED_FORMAT_VERSION) throw bad(m, `cannot upgrade to unsupported format version ${v}`);
  if (v < m['format-version']) throw bad(m, `cannot downgrade from format v${m['format-version']} to v${v}`);
  if (v === m['format-version']) return;
  // Row lineage starts at 0 on upgrade to v3 (spec "Row Lineage").
  if (v >= 3 && m['next-row-id'] === undefined) m['next-row-id'] = 0n;
  m['format-version'] = v;
}

function addSchema(s: State, schema: Schema, lastColumnId: number | undefined): void {
  const m = s.m;
  const v3 = m['format-version'] < 3 ? findV3OnlyType(schemaStruct(schema)) : undefined;
  if (v3 !== undefined)
    throw bad(m, `schema column ${v3} requires format version 3, table is v${m['format-version']}`);
  if (m['format-version'] < 3) {
    for (const { field, path } of indexById(schema).values()) {
      if (field.initialDefault !== undefined && field.initialDefault !== null) {
        throw bad(m, `column ${path.join('.')} has an initial-default, which requires format version 3`);
      }
    }
  }
  if (lastColumnId !== undefined && lastColumnId < m['last-column-id']) {
    throw bad(m, `invalid last-column-id ${lastColumnId} < current ${m['last-column-id']}`);
  }
  m['last-column-id'] = Math.max(m['last-column-id'], lastColumnId ?? 0, highestFieldId(schema));
  const same = m.schemas.find((x) => sameSchema(x, schema));
  if (same) {
    s.lastAddedSchemaId = same.schemaId;
    return;
  }
  const id = m.schemas.reduce((max, x) => Math.max(max, x.schemaId + 1), 0);
  m.schemas.push({ ...schema, schemaId: id });
  s.lastAddedSchemaId = id;
}

/** Java `Schema.sameSchema`: same struct (ids, names, types, docs, defaults) and identifier ids. */
function sameSchema(a: Schema, b: Schema): boolean {
  const ids = (x: Schema) => [...(x.identifierFieldIds ?? [])].sort((p, q) => p - q).join(',');
  return (
    ids(a) === ids(b) &&
    JSON.stringify(a.fields.map(fieldToJson)) === JSON.stringify(b.fields.map(fieldToJson))
  );
}

function addSpec(s: State, spec: PartitionSpec): void {
  const m = s.m;
  const columns = indexById(currentSchemaOf(m));
  for (const f of spec.fields) {
    if (!columns.has(f['source-id'])) {
      throw bad(m, `partition field '${f.name}' references unknown source column id ${f['source-id']}`);
    }
  }
  const same = m['partition-specs'].find((x) => specsEquivalent(x, spec));
  if (same) {
    s.lastAddedSpecId = same['spec-id'];
    return;
  }
  const id = m['partition-specs'].reduce((max, x) => Math.max(max, x['spec-id'] + 1), 0);
  m['partition-specs'].push({ ...spec, 'spec-id': id });
  m['last-partition-id'] = Math.max(m['last-partition-id'], lastAssignedPartitionId(spec));
  s.lastAddedSpecId = id;
}

function addSortOrder(s: State, order: SortOrder): void {
  const m = s.m;
  const columns = indexById(currentSchemaOf(m));
  for (const f of order.fields) {
    if (!columns.has(f['source-id']))
      throw bad(m, `sort field references unknown source column id ${f['source-id']}`);
  }
  const same = m['sort-orders'].find((x) => sameOrder(x, order));
  if (same) {
    s.lastAddedOrderId = same['order-id'];
    return;
  }
  // Order id 0 is reserved for the unsorted order; real orders start at 1.
  const id =
    order.fields.length === 0
      ? 0
      : m['sort-orders'].reduce((max, x) => Math.max(max, x['order-id'] + 1), INITIAL_SORT_ORDER_ID);
  m['sort-orders'].push({ ...order, 'order-id': id });
  s.lastAddedOrderId = id;
}

function addSnapshot(s: State, snap: Snapshot): void {
  const m = s.m;
  const id = snap['snapshot-id'];
  if (m.snapshots.some((x) => x['snapshot-id'] === id)) {
    throw new FloeError(ErrorKind.AlreadyExists, `table ${m.location}: snapshot ${id} already exists`);
  }
  if (snap['schema-id'] !== undefined && !m.schemas.some((x) => x.schemaId === snap['schema-id'])) {
    throw bad(m, `snapshot ${id} references unknown schema id ${snap['schema-id']}`);
  }
  if (m['format-version'] >= 2) {
    const seq = snap['sequence-number'];
    const last = m['last-sequence-number'];
    if (seq === undefined) throw bad(m, `snapshot ${id} has no sequence-number (required in format v2+)`);
    if (seq <= last) {
      throw conflict(
        m,
        `snapshot ${id} has sequence-number ${seq} but the table's last-sequence-number is already ${last}`,
      );
    }
    if (seq !== last + 1n) throw bad(m, `snapshot ${id} has sequence-number ${seq}, expected ${last + 1n}`);
    m['last-sequence-number'] = seq;
  } else if ((snap['sequence-number'] ?? 0n) !== 0n) {
    throw bad(m, `snapshot ${id} has a sequence-number, which format v1 does not allow`);
  }
  if (m['format-version'] >= 3) {
    const first = snap['first-row-id'];
    const added = snap['added-rows'];
    const next = m['next-row-id'] ?? 0n;
    if (first === undefined || added === undefined) {
      throw bad(m, `snapshot ${id} needs first-row-id and added-rows (required in format v3)`);
    }
    if (first < next)
      throw conflict(m, `snapshot ${id} has first-row-id ${first} behind table next-row-id ${next}`);
    m['next-row-id'] = next + added;
  }
  m.snapshots.push(snap);
  s.addedSnapshots.add(id);
  s.lastUpdated = snap['timestamp-ms'];
}

function setRef(s: State, name: string, ref: SnapshotRef): void {
  const m = s.m;
  const existing = m.refs[name];
  if (existing && sameRef(existing, ref)) return;
  const id = ref['snapshot-id'];
  const snap = m.snapshots.find((x) => x['snapshot-id'] === id);
  if (!snap) throw bad(m, `cannot set ref '${name}' to unknown snapshot ${id}`);
  if (name === MAIN_BRANCH && ref.type !== 'branch') throw bad(m, `ref '${MAIN_BRANCH}' must be a branch`);
  if (s.addedSnapshots.has(id)) s.lastUpdated = snap['timestamp-ms'];
  m.refs[name] = ref;
  if (name === MAIN_BRANCH) {
    m['current-snapshot-id'] = id;
    s.lastUpdated ??= s.nowMs;
    m['snapshot-log'].push({ 'timestamp-ms': s.lastUpdated, 'snapshot-id': id });
    if (s.addedSnapshots.has(id)) s.mainSetToAdded.push(id);
  }
}

function sameRef(a: SnapshotRef, b: SnapshotRef): boolean {
  return (
    a['snapshot-id'] === b['snapshot-id'] &&
    a.type === b.type &&
    a['min-snapshots-to-keep'] === b['min-snapshots-to-keep'] &&
    a['max-snapshot-age-ms'] === b['max-snapshot-age-ms'] &&
    a['max-ref-age-ms'] === b['max-ref-age-ms']
  );
}

function removeSnapshots(s: State, ids: ReadonlySet<bigint>): void {
  const m = s.m;
  m.snapshots = m.snapshots.filter((x) => !ids.has(x['snapshot-id']));
  const keep = (e: unknown) => !ids.has(statisticsSnapshotId(e) ?? -1n);
  m.statistics = m.statistics.filter(keep);
  m['partition-statistics'] = m['partition-statistics'].filter(keep);
  // Refs to removed snapshots go too (Java `removeSnapshots` drops dangling refs).
  for (const [name, ref] of Object.entries(m.refs)) {
    if (ids.has(ref['snapshot-id'])) {
      delete m.refs[name];
      if (name === MAIN_BRANCH) delete m['current-snapshot-id'];
    }
  }
  s.removedSnapshots = true;
}

function statisticsSnapshotId(e: unknown): bigint | undefined {
  const v = e !== null && typeof e === 'object' ? (e as Record<string, unknown>)['snapshot-id'] : undefined;
  return typeof v === 'bigint' ? v : typeof v === 'number' ? BigInt(v) : undefined;
}

/**
 * Java `updateSnapshotLog`: entries for snapshots that were added and then superseded as main
 * within this commit are dropped; after an expiry, everything up to the last entry whose snapshot
 * is gone is dropped, so the log never implies a snapshot was current when it was not.
 */
function updateSnapshotLog(s: State): State['m']['snapshot-log'] {
  const m = s.m;
  const current = m['current-snapshot-id'];
  const intermediate = new Set(s.mainSetToAdded.filter((id) => id !== current));
  if (intermediate.size === 0 && !s.removedSnapshots) return m['snapshot-log'];
  const live = new Set(m.snapshots.map((x) => x['snapshot-id']));
  let out: State['m']['snapshot-log'] = [];
  for (const e of m['snapshot-log']) {
    if (live.has(e['snapshot-id'])) {
      if (!intermediate.has(e['snapshot-id'])) out.push(e);
    } else if (s.removedSnapshots) {
      out = [];
    }
  }
  if (current !== undefined && out.length > 0 && out[out.length - 1]!['snapshot-id'] !== current) {
    throw bad(m, 'invalid snapshot log: latest entry is not the current snapshot');
  }
  return out;
}

function resolveLastAdded(id: number, lastAdded: number | undefined, what: string, m: TableMetadata): number {
  if (id !== LAST_ADDED) return id;
  if (lastAdded === undefined)
    throw bad(m, `cannot use the last added ${what}: none was added in this commit`);
  return lastAdded;
}

function currentSchemaOf(m: TableMetadata): Schema {
  const schema = m.schemas.find((x) => x.schemaId === m['current-schema-id']);
  if (!schema) throw bad(m, `current schema ${m['current-schema-id']} not found`);
  return schema;
}

/** Java `LocationUtil.stripTrailingSlash`: `s3://b/t/` → `s3://b/t`, but `s3://` stays. */
export function stripTrailingSlash(location: string): string {
  let out = location;
  while (out.endsWith('/') && !out.endsWith('://')) out = out.slice(0, -1);
  return out;
}

function bad(m: TableMetadata, msg: string): FloeError {
  return new FloeError(ErrorKind.DataInvalid, `table ${m.location}: ${msg}`);
}

function conflict(m: TableMetadata, msg: string): FloeError {
  return new FloeError(ErrorKind.CommitConflict, `table ${m.location}: ${msg}`, { retryable: true });
}
