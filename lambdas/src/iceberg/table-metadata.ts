/**
 * Table metadata (spec: "Table Metadata"), in the spec's kebab-case shape with parsed schemas.
 * Format versions 1, 2 and 3 are read; Floe creates v2/v3 tables, and a v1 file is re-written in
 * the v1 layout so a parse → serialise round trip is exact.
 */
import { ErrorKind, FloeError } from '../errors.ts';
import { parseJson, stringifyJson } from './json.ts';
import {
  asArray,
  asObject,
  invalid,
  isMissing,
  type JsonObject,
  optInt,
  optLong,
  optString,
  reqInt,
  reqLong,
  reqString,
  stringMap,
} from './metadata/json-fields.ts';
import {
  lastAssignedPartitionId,
  type PartitionSpec,
  partitionFieldsFromJson,
  partitionSpecFromJson,
  partitionSpecToJson,
  UNPARTITIONED_LAST_ASSIGNED_ID,
} from './partition-spec.ts';
import { type Schema, schemaFromJson, schemaToJson } from './schema.ts';
import {
  MAIN_BRANCH,
  type MetadataLogEntry,
  refFromJson,
  refToJson,
  type Snapshot,
  type SnapshotLogEntry,
  type SnapshotRef,
  snapshotFromJson,
  snapshotToJson,
} from './snapshot.ts';
import { type SortOrder, sortOrderFromJson, sortOrderToJson, UNSORTED_ORDER } from './sort-order.ts';
import { typeEquals } from './types.ts';

export type FormatVersion = 1 | 2 | 3;

export interface TableMetadata {
  readonly 'format-version': FormatVersion;
  readonly 'table-uuid': string;
  readonly location: string;
  readonly 'last-sequence-number': bigint;
  readonly 'last-updated-ms': bigint;
  readonly 'last-column-id': number;
  readonly schemas: readonly Schema[];
  readonly 'current-schema-id': number;
  readonly 'partition-specs': readonly PartitionSpec[];
  readonly 'default-spec-id': number;
  readonly 'last-partition-id': number;
  readonly properties: Readonly<Record<string, string>>;
  /** Undefined when the table has no current snapshot (JSON -1 / null / absent). */
  readonly 'current-snapshot-id'?: bigint;
  readonly snapshots: readonly Snapshot[];
  readonly 'snapshot-log': readonly SnapshotLogEntry[];
  readonly 'metadata-log': readonly MetadataLogEntry[];
  readonly 'sort-orders': readonly SortOrder[];
  readonly 'default-sort-order-id': number;
  readonly refs: Readonly<Record<string, SnapshotRef>>;
  /** Kept verbatim (informational Puffin statistics). */
  readonly statistics: readonly unknown[];
  readonly 'partition-statistics': readonly unknown[];
  /** v3 row lineage. */
  readonly 'next-row-id'?: bigint;
  /** v3, kept verbatim. */
  readonly 'encryption-keys'?: readonly unknown[];
}

/** Highest format version Floe reads (Java `SUPPORTED_TABLE_FORMAT_VERSION` is 3 from 1.8). */
export const SUPPORTED_FORMAT_VERSION = 3;
/** Java's clock-skew tolerance when checking that log entries are time-ordered. */
const ONE_MINUTE_MS = 60_000n;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

// ---- accessors ----

export function schemaById(m: TableMetadata, id: number): Schema | undefined {
  return m.schemas.find((s) => s.schemaId === id);
}

/** The schema writers use (`current-schema-id`). Parsed metadata always has it. */
export function currentSchema(m: TableMetadata): Schema {
  const s = schemaById(m, m['current-schema-id']);
  if (!s) throw notFound(m, `current schema ${m['current-schema-id']}`);
  return s;
}

/**
 * The partition spec with this id. Every manifest names a spec the table defines, so a missing
 * one is an error (FloeError NotFound) rather than undefined.
 */
export function specById(m: TableMetadata, id: number): PartitionSpec {
  const s = m['partition-specs'].find((x) => x['spec-id'] === id);
  if (!s) throw notFound(m, `partition spec ${id}`);
  return s;
}

/** The spec writers use (`default-spec-id`). */
export function defaultSpec(m: TableMetadata): PartitionSpec {
  return specById(m, m['default-spec-id']);
}

export function sortOrderById(m: TableMetadata, id: number): SortOrder | undefined {
  return m['sort-orders'].find((o) => o['order-id'] === id);
}

export function snapshotById(m: TableMetadata, id: bigint): Snapshot | undefined {
  return m.snapshots.find((s) => s['snapshot-id'] === id);
}

export function currentSnapshot(m: TableMetadata): Snapshot | undefined {
  const id = m['current-snapshot-id'];
  return id === undefined ? undefined : snapshotById(m, id);
}

/**
 * The head of `branch`: its ref's snapshot, or — for a branch that does not exist yet, which a
 * first commit creates from there — the main branch's current snapshot.
 */
export function branchHead(m: TableMetadata, branch: string): Snapshot | undefined {
  const ref = branch === MAIN_BRANCH ? undefined : m.refs[branch];
  return ref === undefined ? currentSnapshot(m) : snapshotById(m, ref['snapshot-id']);
}

/**
 * The table as a writer of `branch` sees it: its current snapshot is the branch's head (as Java's
 * `table.snapshot(branch)` planning does), so code that reads "the current snapshot" reads the
 * branch. Main, or a branch that does not exist (it would start at main's head): `m` as it is.
 * Only for reading: updates are applied to the real metadata.
 */
export function asSeenFromBranch(m: TableMetadata, branch: string): TableMetadata {
  const ref = branch === MAIN_BRANCH ? undefined : m.refs[branch];
  if (ref === undefined || ref.type !== 'branch') return m;
  return { ...m, 'current-snapshot-id': ref['snapshot-id'], refs: { ...m.refs, [MAIN_BRANCH]: ref } };
}

/**
 * The snapshot `id` followed by its parents, newest first, stopping at the first parent that is
 * no longer in the table (expired) — spec "Snapshots": lineage is the parent-snapshot-id chain.
 */
export function snapshotAncestors(m: TableMetadata, id: bigint): Snapshot[] {
  const byId = new Map(m.snapshots.map((s) => [s['snapshot-id'], s]));
  const out: Snapshot[] = [];
  const seen = new Set<bigint>();
  let next: bigint | undefined = id;
  while (next !== undefined && !seen.has(next)) {
    const s = byId.get(next);
    if (!s) break;
    seen.add(next);
    out.push(s);
    next = s['parent-snapshot-id'];
  }
  return out;
}

function notFound(m: TableMetadata, what: string): FloeError {
  return new FloeError(ErrorKind.NotFound, `table ${m.location}: ${what} not found`);
}

// ---- parsing (spec "Table Metadata", Appendix C; rules from Java TableMetadataParser) ----

/**
 * Parses a metadata JSON file of format v1, v2 or v3. Longs become bigints, a missing/null/-1
 * `current-snapshot-id` becomes undefined, and `refs.main` is implied from `current-snapshot-id`
 * when absent. Rejects (FloeError DataInvalid) what Java rejects: unsupported format versions,
 * v2+ files without schemas / partition-specs / last-partition-id / sort-orders, a current schema
 * or default spec that is not listed, schemas that are not structs, inconsistent refs and logs.
 * `source` (usually the file's URI) only appears in error messages.
 */
export function parseTableMetadata(text: string, source = 'table metadata'): TableMetadata {
  const j = asObject(parseJson(text), source);
  const v = reqInt(j, 'format-version', source);
  if (v < 1 || v > SUPPORTED_FORMAT_VERSION) {
    throw invalid(source, `unsupported format-version ${v} (supported: 1..${SUPPORTED_FORMAT_VERSION})`);
  }
  const version = v as FormatVersion;
  const need = (key: string) =>
    invalid(source, `missing required field '${key}' (required in format v${version})`);
  const uuid = optString(j, 'table-uuid', source);
  if (uuid === undefined && version > 1) throw need('table-uuid');

  const { schemas, currentSchemaId } = parseSchemas(j, version, source, need);
  const { specs, defaultSpecId } = parseSpecs(j, version, source, need);
  let lastPartitionId = optInt(j, 'last-partition-id', source);
  if (lastPartitionId === undefined) {
    if (version > 1) throw need('last-partition-id');
    lastPartitionId = Math.max(UNPARTITIONED_LAST_ASSIGNED_ID, ...specs.map(lastAssignedPartitionId));
  }
  let sortOrders: SortOrder[] = [UNSORTED_ORDER];
  let defaultSortOrderId = 0;
  if (!isMissing(j, 'sort-orders')) {
    sortOrders = asArray(j['sort-orders'], `${source} sort-orders`).map((o) => sortOrderFromJson(o));
    defaultSortOrderId = reqInt(j, 'default-sort-order-id', source);
    if (!sortOrders.some((o) => o['order-id'] === defaultSortOrderId)) {
      throw invalid(source, `default-sort-order-id ${defaultSortOrderId} not found in sort-orders`);
    }
  } else if (version > 1) throw need('sort-orders');

  const snapshots = isMissing(j, 'snapshots')
    ? []
    : asArray(j.snapshots, `${source} snapshots`).map((s) => snapshotFromJson(s, `${source} snapshot`));
  const rawCurrent = optLong(j, 'current-snapshot-id', source);
  const currentId = rawCurrent === undefined || rawCurrent === -1n ? undefined : rawCurrent;
  const m: Mutable<TableMetadata> = {
    'format-version': version,
    'table-uuid': uuid ?? '',
    location: reqString(j, 'location', source),
    'last-sequence-number': version > 1 ? reqLong(j, 'last-sequence-number', source) : 0n,
    'last-updated-ms': reqLong(j, 'last-updated-ms', source),
    'last-column-id': reqInt(j, 'last-column-id', source),
    schemas,
    'current-schema-id': currentSchemaId,
    'partition-specs': specs,
    'default-spec-id': defaultSpecId,
    'last-partition-id': lastPartitionId,
    properties: stringMap(j.properties, `${source} properties`),
    snapshots,
    'snapshot-log': logEntries(j, 'snapshot-log', source).map((e, i) => ({
      'timestamp-ms': reqLong(e, 'timestamp-ms', `${source} snapshot-log[${i}]`),
      'snapshot-id': reqLong(e, 'snapshot-id', `${source} snapshot-log[${i}]`),
    })),
    'metadata-log': logEntries(j, 'metadata-log', source).map((e, i) => ({
      'timestamp-ms': reqLong(e, 'timestamp-ms', `${source} metadata-log[${i}]`),
      'metadata-file': reqString(e, 'metadata-file', `${source} metadata-log[${i}]`),
    })),
    'sort-orders': sortOrders,
    'default-sort-order-id': defaultSortOrderId,
    refs: {},
    statistics: isMissing(j, 'statistics') ? [] : asArray(j.statistics, `${source} statistics`),
    'partition-statistics': isMissing(j, 'partition-statistics')
      ? []
      : asArray(j['partition-statistics'], `${source} partition-statistics`),
  };
  if (currentId !== undefined) m['current-snapshot-id'] = currentId;
  if (version >= 3) m['next-row-id'] = reqLong(j, 'next-row-id', source);
  if (!isMissing(j, 'encryption-keys'))
    m['encryption-keys'] = asArray(j['encryption-keys'], `${source} encryption-keys`);
  m.refs = parseRefs(j, currentId, source);
  validateTableMetadata(m, source);
  return m;
}

type Need = (key: string) => FloeError;

function parseSchema(v: unknown, what: string): Schema {
  const o = asObject(v, what);
  // Java's SchemaParser requires the struct tag; a bare {fields: [...]} is rejected.
  if (o.type !== 'struct')
    throw invalid(what, `schema must have "type": "struct", got ${JSON.stringify(o.type)}`);
  return schemaFromJson(o, 0);
}

function parseSchemas(j: JsonObject, version: FormatVersion, source: string, need: Need) {
  if (isMissing(j, 'schemas')) {
    if (version > 1) throw need('schemas');
    if (isMissing(j, 'schema')) throw need('schema');
    const schema = parseSchema(j.schema, `${source} schema`);
    return { schemas: [schema], currentSchemaId: schema.schemaId };
  }
  const schemas = asArray(j.schemas, `${source} schemas`).map((s, i) =>
    parseSchema(s, `${source} schemas[${i}]`),
  );
  let currentSchemaId = optInt(j, 'current-schema-id', source);
  if (currentSchemaId === undefined) {
    // Lenient like iceberg-rust: a v1 file may carry both lists and the deprecated `schema`.
    if (version > 1 || isMissing(j, 'schema')) throw need('current-schema-id');
    const legacy = parseSchema(j.schema, `${source} schema`);
    const same = schemas.find((s) =>
      typeEquals({ kind: 'struct', fields: s.fields }, { kind: 'struct', fields: legacy.fields }),
    );
    if (!same)
      throw invalid(
        source,
        "v1 'schema' does not match any entry of 'schemas' and 'current-schema-id' is missing",
      );
    currentSchemaId = same.schemaId;
  }
  const id = currentSchemaId;
  if (!schemas.some((s) => s.schemaId === id)) {
    throw invalid(
      source,
      `current-schema-id ${id} not found in schemas [${schemas.map((s) => s.schemaId).join(', ')}]`,
    );
  }
  return { schemas, currentSchemaId: id };
}

function parseSpecs(j: JsonObject, version: FormatVersion, source: string, need: Need) {
  if (isMissing(j, 'partition-specs')) {
    if (version > 1) throw need('partition-specs');
    if (isMissing(j, 'partition-spec')) throw need('partition-spec');
    const fields = partitionFieldsFromJson(j['partition-spec'], `${source} partition-spec`);
    return { specs: [{ 'spec-id': 0, fields }], defaultSpecId: 0 };
  }
  const specs = asArray(j['partition-specs'], `${source} partition-specs`).map((s) =>
    partitionSpecFromJson(s),
  );
  let defaultSpecId = optInt(j, 'default-spec-id', source);
  if (defaultSpecId === undefined) {
    if (version > 1 || isMissing(j, 'partition-spec')) throw need('default-spec-id');
    const legacy = JSON.stringify(partitionFieldsFromJson(j['partition-spec'], `${source} partition-spec`));
    const same = specs.find((s) => JSON.stringify(s.fields) === legacy);
    if (!same)
      throw invalid(
        source,
        "v1 'partition-spec' matches no entry of 'partition-specs' and 'default-spec-id' is missing",
      );
    defaultSpecId = same['spec-id'];
  }
  const id = defaultSpecId;
  if (!specs.some((s) => s['spec-id'] === id)) {
    throw invalid(
      source,
      `default-spec-id ${id} not found in partition-specs [${specs.map((s) => s['spec-id']).join(', ')}]`,
    );
  }
  return { specs, defaultSpecId: id };
}

function logEntries(j: JsonObject, key: string, source: string): JsonObject[] {
  if (isMissing(j, key)) return [];
  return asArray(j[key], `${source} ${key}`).map((e, i) => asObject(e, `${source} ${key}[${i}]`));
}

function parseRefs(
  j: JsonObject,
  currentId: bigint | undefined,
  source: string,
): Record<string, SnapshotRef> {
  const refs: Record<string, SnapshotRef> = {};
  if (!isMissing(j, 'refs')) {
    for (const [name, r] of Object.entries(asObject(j.refs, `${source} refs`)))
      refs[name] = refFromJson(r, name);
  }
  const main = refs[MAIN_BRANCH];
  if (currentId !== undefined && main === undefined) {
    // Spec: when refs (or refs.main) are absent, main is implied from current-snapshot-id.
    refs[MAIN_BRANCH] = { 'snapshot-id': currentId, type: 'branch' };
  } else if (currentId !== undefined && main !== undefined && main['snapshot-id'] !== currentId) {
    throw invalid(source, `current-snapshot-id ${currentId} does not match refs.main ${main['snapshot-id']}`);
  } else if (currentId === undefined && main !== undefined) {
    throw invalid(source, `current-snapshot-id is not set, but refs.main points at ${main['snapshot-id']}`);
  }
  return refs;
}

/** Java's TableMetadata constructor checks, applied to parsed (and newly built) metadata. */
export function validateTableMetadata(m: TableMetadata, source = `table ${m.location}`): void {
  const ids = new Set<bigint>();
  for (const s of m.snapshots) {
    const id = s['snapshot-id'];
    if (ids.has(id)) throw invalid(source, `duplicate snapshot id ${id}`);
    ids.add(id);
    const seq = s['sequence-number'] ?? 0n;
    if (seq > m['last-sequence-number']) {
      throw invalid(
        source,
        `snapshot ${id} has sequence-number ${seq} > last-sequence-number ${m['last-sequence-number']}`,
      );
    }
  }
  const current = m['current-snapshot-id'];
  if (current !== undefined && !ids.has(current)) {
    throw invalid(source, `current-snapshot-id ${current} not found in snapshots`);
  }
  for (const [name, r] of Object.entries(m.refs)) {
    if (!ids.has(r['snapshot-id']))
      throw invalid(source, `ref '${name}' points at unknown snapshot ${r['snapshot-id']}`);
  }
  checkLog(m['snapshot-log'], m['last-updated-ms'], 'snapshot-log', source);
  checkLog(m['metadata-log'], m['last-updated-ms'], 'metadata-log', source);
}

function checkLog(
  log: readonly { 'timestamp-ms': bigint }[],
  lastUpdated: bigint,
  key: string,
  source: string,
) {
  for (let i = 1; i < log.length; i++) {
    if (log[i]!['timestamp-ms'] - log[i - 1]!['timestamp-ms'] < -ONE_MINUTE_MS) {
      throw invalid(source, `${key} is not time-ordered at entry ${i}`);
    }
  }
  const last = log[log.length - 1];
  if (last && lastUpdated - last['timestamp-ms'] < -ONE_MINUTE_MS) {
    throw invalid(
      source,
      `last-updated-ms ${lastUpdated} is before the last ${key} entry at ${last['timestamp-ms']}`,
    );
  }
}

// ---- serialisation ----

/**
 * Writes metadata JSON with Java's key order (TableMetadataParser.toJson). v1 metadata keeps the
 * v1 layout (deprecated `schema`/`partition-spec`, no `last-sequence-number`); with no current
 * snapshot, `current-snapshot-id` is -1 up to v2 and null from v3. `indent` 0 ⇒ compact.
 */
export function serializeTableMetadata(m: TableMetadata, indent = 2): string {
  const v = m['format-version'];
  const out: JsonObject = { 'format-version': v, 'table-uuid': m['table-uuid'], location: m.location };
  if (v > 1) out['last-sequence-number'] = m['last-sequence-number'];
  out['last-updated-ms'] = m['last-updated-ms'];
  out['last-column-id'] = m['last-column-id'];
  if (v === 1) out.schema = schemaToJson(currentSchema(m));
  out['current-schema-id'] = m['current-schema-id'];
  out.schemas = m.schemas.map(schemaToJson);
  if (v === 1) out['partition-spec'] = partitionSpecToJson(defaultSpec(m)).fields;
  out['default-spec-id'] = m['default-spec-id'];
  out['partition-specs'] = m['partition-specs'].map(partitionSpecToJson);
  out['last-partition-id'] = m['last-partition-id'];
  out['default-sort-order-id'] = m['default-sort-order-id'];
  out['sort-orders'] = m['sort-orders'].map(sortOrderToJson);
  out.properties = { ...m.properties };
  out['current-snapshot-id'] = m['current-snapshot-id'] ?? (v >= 3 ? null : -1);
  if (v >= 3) out['next-row-id'] = m['next-row-id'] ?? 0n;
  if (m['encryption-keys'] && m['encryption-keys'].length > 0) out['encryption-keys'] = m['encryption-keys'];
  out.refs = Object.fromEntries(Object.entries(m.refs).map(([k, r]) => [k, refToJson(r)]));
  // Snapshots are immutable and dominate long histories: each is written once and its text reused.
  const snapshotTexts = m.snapshots.map((sn) => snapshotText(sn, indent));
  out.snapshots = SNAPSHOTS_MARK;
  out.statistics = m.statistics;
  out['partition-statistics'] = m['partition-statistics'];
  out['snapshot-log'] = m['snapshot-log'].map((e) => ({
    'timestamp-ms': e['timestamp-ms'],
    'snapshot-id': e['snapshot-id'],
  }));
  out['metadata-log'] = m['metadata-log'].map((e) => ({
    'timestamp-ms': e['timestamp-ms'],
    'metadata-file': e['metadata-file'],
  }));
  const text = stringifyJson(out, indent);
  const quoted = JSON.stringify(SNAPSHOTS_MARK);
  const at = text.indexOf(quoted);
  // A string of the metadata that looks like the marker: write the snapshots the plain way.
  if (at >= 0 && text.lastIndexOf(quoted) === at) {
    const gap = indent > 0 ? ' '.repeat(Math.min(indent, 10)) : '';
    const array =
      snapshotTexts.length === 0
        ? '[]'
        : gap
          ? `[\n${gap}${gap}${snapshotTexts.join(`,\n${gap}${gap}`)}\n${gap}]`
          : `[${snapshotTexts.join(',')}]`;
    return text.slice(0, at) + array + text.slice(at + quoted.length);
  }
  out.snapshots = m.snapshots.map(snapshotToJson);
  return stringifyJson(out, indent);
}

const SNAPSHOTS_MARK = '\u0000floe-snapshots';
const snapshotTextCache = new WeakMap<Snapshot, Map<number, string>>();

/** One snapshot's JSON as it appears inside `snapshots` (indented for depth 2). */
function snapshotText(s: Snapshot, indent: number): string {
  let byIndent = snapshotTextCache.get(s);
  if (!byIndent) {
    byIndent = new Map();
    snapshotTextCache.set(s, byIndent);
  }
  let text = byIndent.get(indent);
  if (text === undefined) {
    const gap = indent > 0 ? ' '.repeat(Math.min(indent, 10)) : '';
    text = stringifyJson(snapshotToJson(s), indent);
    if (gap) text = text.replace(/\n/g, `\n${gap}${gap}`);
    byIndent.set(indent, text);
  }
  return text;
}
