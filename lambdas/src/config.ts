/**
 * Floe's typed configuration (DESIGN §6), parsed once at start from `floe.config.json`, CDK
 * context or the environment (the caller reads it; this module only validates). Every error is a
 * `FloeError(ConfigInvalid)` naming the offending key and value; unknown keys are errors too, so
 * a typo never silently falls back to a default.
 *
 * This stage covers namespace, routing, inference, partitioning, table properties, format
 * version, target file size, field lists (keep / drop / only) and guards; later sections (stream
 * format, consolidation, type-conflict policy, commit and maintenance settings) extend
 * {@link FloeConfig}.
 */

import { ErrorKind, FloeError } from './errors.ts';
import type { Schema } from './iceberg/schema.ts';
import { isBranchName, MAIN_BRANCH } from './iceberg/snapshot.ts';
import {
  canTransform,
  defaultPartitionFieldName,
  parseTransform,
  transformToString,
} from './iceberg/transform.ts';
import { isPrimitive, parsePrimitive, type StructType } from './iceberg/types.ts';
import type { TableIdentifier } from './ports/catalog.ts';
import type { UpsertSpec } from './records/change-event.ts';
import type { DeclaredTypes } from './records/connect-schema.ts';
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from './records/framing/compression.ts';
import { FRAMINGS, type Framing } from './records/framing/deframe.ts';
import type { ConsolidationRule } from './routing/consolidate.ts';
import {
  compileRouter,
  DEFAULT_ROUTING,
  parseTemplate,
  type Router,
  type RoutingConfig,
  splitNamespace,
} from './routing/route.ts';
import { isLegalTableName } from './routing/table-name.ts';
import { isLegalColumnName } from './schema/column-name.ts';
import type { InferOptions } from './schema/infer.ts';

/** JSON inference settings. */
export interface InferenceConfig {
  /** Type hints per table (or `*` for all tables): dotted column path → Iceberg type string. */
  readonly hints: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Recognise ISO-8601 instants and dates in strings. Default true. */
  readonly detectTimestamps: boolean;
}

/** Partitioning settings. */
export interface PartitioningConfig {
  /** Each `field` or `transform(field)`: `event_date`, `day(event_time)`, `bucket[16](customer_id)`. */
  readonly candidates: readonly string[];
  /** Per-table candidate lists replacing the global one. */
  readonly tables: Readonly<Record<string, readonly string[]>>;
}

/**
 * Field lists of one scope (global, or one table). At most one of the three per scope; paths are
 * dotted column names (`metadata.source`) matched against each JSON key's column name (so
 * `Metadata.Source` in the data is matched by `metadata.source`); a path runs through arrays into
 * their object elements (`items.sku`).
 *
 * - `drop`: these paths are removed from every record before inference (no column appears).
 * - `only`: every path not listed is removed; a listed path keeps its parents and everything
 *   below it.
 * - `keep`: these paths are required. The record is not changed, but one that lacks any of them
 *   (absent, or `null`) is dead-lettered with reason `missing-kept-field`, so a table never
 *   receives a row without its key fields.
 *
 * A table's effective rules compose its scope with the global one ({@link composeFieldRules}),
 * so they may hold all three lists.
 */
export interface FieldRules {
  readonly keep?: readonly string[];
  readonly drop?: readonly string[];
  readonly only?: readonly string[];
}

/** Field lists: the global scope and per-table scopes; a table's scope adds to the global one. */
export interface FieldsConfig extends FieldRules {
  /** Per table, composed with the global scope by {@link composeFieldRules}. */
  readonly tables: Readonly<Record<string, FieldRules>>;
}

/**
 * Guards against runaway input (DESIGN §3). Whatever a guard rejects is dead-lettered with a
 * reason naming it (`guard-allow-tables`, `guard-max-tables`, `guard-max-columns`,
 * `guard-max-depth`); the detail names the table and the limit.
 */
export interface GuardsConfig {
  /**
   * A regular expression (JavaScript syntax) every table name must match in full (it is anchored:
   * `orders_.*` means `^(?:orders_.*)$`). Applies to every route, the default table included.
   */
  readonly allowTables?: string;
  /** Tables the namespace may hold: existing ones plus those a load would create. */
  readonly maxTables?: number;
  /** Columns per table, nested fields included (existing columns count). Default 1,000. */
  readonly maxColumnsPerTable?: number;
  /**
   * Deepest nesting of objects and arrays in a record: `{a: 1}` is 1, `{a: {b: 1}}` and
   * `{a: [1]}` are 2, `{a: [{b: 1}]}` is 3. Default 32.
   */
  readonly maxNestingDepth?: number;
  /** Bytes of one record (one NDJSON line, one Kinesis record's data). Default 1 MiB. */
  readonly maxRecordBytes?: number;
}

/**
 * The limits every record and table is held to, configured or not (`guards.max…`): they keep
 * each record's work bounded and every table within what Glue, S3 Tables and Athena accept
 * (README "Guards" gives the sources). A record beyond one is a dead letter naming the guard.
 */
export interface RecordLimits {
  readonly maxRecordBytes: number;
  readonly maxNestingDepth: number;
  readonly maxColumnsPerTable: number;
}

export const DEFAULT_LIMITS: RecordLimits = Object.freeze({
  // Kinesis' default maximum record size (1 MiB); a stream can be raised to 10 MiB, and so can this.
  maxRecordBytes: 1_048_576,
  // Deep enough for any event schema seen in practice, shallow enough that every recursive
  // reader (Glue's type string, Athena's planner, our own code) stays far from its stack limit.
  maxNestingDepth: 32,
  // Wide event tables have hundreds of columns; thousands usually mean an object used as a map
  // (one key per user id) exploding the table. Raise it for tables that are wide on purpose.
  maxColumnsPerTable: 1_000,
});

/** The whole configuration, defaults applied. */
export interface FloeConfig {
  /** What stream records hold: JSON objects (default), or Avro framed by the Glue Schema Registry. */
  readonly format: 'json' | 'avro-gsr';
  /**
   * `avro-gsr` streams: records without the GSR header are read as JSON instead of dead-lettered
   * (the serde library's secondary deserializer), so one stream can carry both. Default false.
   */
  readonly jsonFallback: boolean;
  /** Glue database / S3 Tables namespace. Default `default`. */
  readonly namespace: string;
  readonly routing: RoutingConfig;
  readonly inference: InferenceConfig;
  readonly partitioning: PartitioningConfig;
  /** Properties of new tables: Floe's defaults (DESIGN §5) overlaid with the configured ones. */
  readonly tableProperties: Readonly<Record<string, string>>;
  /** Iceberg format version of new tables. Default 2 (Athena reads v2 only). */
  readonly formatVersion: 2 | 3;
  /** Target data file size. Default 128 MiB. */
  readonly targetFileSizeBytes: number;
  /** Keep / drop / only field lists; absent when none is configured. */
  readonly fields?: FieldsConfig;
  /** Guards as configured; absent when none is. */
  readonly guards?: GuardsConfig;
  /** The limits in force: `guards.max…` where configured, else {@link DEFAULT_LIMITS}. */
  readonly limits: RecordLimits;
  /** Consolidated tables (DESIGN §3): rules tried in order before ordinary routing. */
  readonly consolidate?: readonly ConsolidationRule[];
  /**
   * What a value that does not fit its column's type does (DESIGN §3): `dead-letter` (default) or
   * `coerce` (converted to the column's type when lossless, the conversion recorded); per table.
   */
  readonly typeConflict: TypeConflictConfig;
  /**
   * Upsert tables by routing key (`name` or `namespace.name`): rows identified by `key`, changed by
   * each record's operation (records/change-event.ts); absent when none is configured.
   */
  readonly upsert?: Readonly<Record<string, UpsertSpec>>;
  /** What framings a stream's records may carry (records/framing/deframe.ts). Default: all, recognised. */
  readonly source: SourceConfig;
  /**
   * Write-audit-publish: per table (or `*`, every table), SQL predicates every row a branch adds
   * must satisfy before `floe branch publish` moves main to it.
   */
  readonly audits?: Readonly<Record<string, readonly string[]>>;
  /**
   * Write-audit-publish for the stream and `floe load`: the branch each table (or `*`, every
   * table) commits to instead of main; main then moves only when `floe branch publish` moves it.
   */
  readonly branches?: Readonly<Record<string, string>>;
}

/** `source`: the framings producers put on records (KPL aggregates, compression, AWS envelopes). */
export interface SourceConfig {
  /** The framings undone, each recognised by its bytes or shape (`auto`: all; `none`: none). */
  readonly framings: ReadonlySet<Framing>;
  /** Bound on one payload's decompressed bytes (past it: a `decompressed-too-large` dead letter). */
  readonly maxDecompressedBytes: number;
  /**
   * Batches the ingest stages as they arrived, for the committer to route (app/route-deferred.ts):
   * one whose records go to more than this many tables (default 32), or every batch (0); never:
   * `Infinity` (config `false`). A wide batch then costs the ingest one object and one ledger
   * entry, not a file and an entry per table.
   */
  readonly deferAboveTables: number;
}

/** Tables above which a batch is routed by the committer (`source.deferRouting`). */
export const DEFAULT_DEFER_ABOVE_TABLES = 32;

export const DEFAULT_SOURCE: SourceConfig = Object.freeze({
  framings: new Set(FRAMINGS),
  maxDecompressedBytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
  deferAboveTables: DEFAULT_DEFER_ABOVE_TABLES,
});

export type TypeConflictPolicy = 'dead-letter' | 'coerce';

export interface TypeConflictConfig {
  readonly default: TypeConflictPolicy;
  readonly tables: Readonly<Record<string, TypeConflictPolicy>>;
}

/**
 * The table a routing key names: `name` in the configured namespace, or `namespace.name` when the
 * rule that routed it has its own namespace (table names never contain a dot).
 */
export function tableId(config: FloeConfig, key: string): TableIdentifier {
  const dot = key.indexOf('.');
  return dot < 0
    ? { namespace: config.namespace, name: key }
    : { namespace: key.slice(0, dot), name: key.slice(dot + 1) };
}

/** A routing key's table name without a rule's namespace (`rides.activity` → `activity`). */
export function bareTableName(table: string): string {
  return table.slice(table.indexOf('.') + 1);
}

export function typeConflictFor(config: FloeConfig, table: string): TypeConflictPolicy {
  table = bareTableName(table);
  return ownEntry(config.typeConflict.tables, table) ?? config.typeConflict.default;
}

/** The sample's partition candidates. */
export const DEFAULT_PARTITION_CANDIDATES: readonly string[] = Object.freeze([
  'event_date',
  'region',
  'date',
]);
/** 128 MiB: the compaction target of deployed maintenance (Iceberg Java's own default is 512 MiB). */
export const DEFAULT_TARGET_FILE_SIZE_BYTES = 128 * 1024 * 1024;

/** Table properties Floe sets on new tables unless configured otherwise (DESIGN §5). */
export const DEFAULT_TABLE_PROPERTIES: Readonly<Record<string, string>> = Object.freeze({
  'write.format.default': 'parquet',
  'write.parquet.compression-codec': 'zstd',
  'write.metadata.delete-after-commit.enabled': 'true',
  'write.metadata.previous-versions-max': '100',
});

const TOP_KEYS = [
  'format',
  'jsonFallback',
  'namespace',
  'routing',
  'inference',
  'partitioning',
  'tableProperties',
  'formatVersion',
  'targetFileSizeBytes',
  'fields',
  'guards',
  'consolidate',
  'typeConflict',
  'upsert',
  'source',
  'audits',
  'branches',
] as const;
const SOURCE_KEYS = ['framings', 'maxDecompressedBytes', 'deferRouting'] as const;
const FIELD_RULE_KEYS = ['keep', 'drop', 'only'] as const;
const FIELDS_KEYS = [...FIELD_RULE_KEYS, 'tables'] as const;
const LIMIT_KEYS = ['maxColumnsPerTable', 'maxNestingDepth', 'maxRecordBytes'] as const;
const GUARDS_KEYS = ['allowTables', 'maxTables', ...LIMIT_KEYS] as const;
const ROUTING_KEYS = [
  'tableField',
  'routingField',
  'suffix',
  'template',
  'defaultTable',
  'allowList',
  'avroRouteBy',
] as const;
const INFERENCE_KEYS = ['hints', 'detectTimestamps'] as const;
const PARTITIONING_KEYS = ['candidates', 'tables'] as const;

function invalid(key: string, problem: string, value: unknown): never {
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  if (shown.length > 120) shown = `${shown.slice(0, 117)}...`;
  throw new FloeError(ErrorKind.ConfigInvalid, `config key '${key}': ${problem}, got ${shown}`, {
    context: { key, value },
  });
}

type Obj = Record<string, unknown>;

function objectAt(key: string, v: unknown, allowed?: readonly string[]): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) invalid(key, 'expected an object', v);
  if (allowed !== undefined) {
    for (const k of Object.keys(v)) {
      if (!allowed.includes(k)) {
        invalid(
          `${key === '' ? '' : `${key}.`}${k}`,
          `unknown key (expected one of ${allowed.join(', ')})`,
          (v as Obj)[k],
        );
      }
    }
  }
  return v as Obj;
}

function stringAt(key: string, v: unknown): string {
  if (typeof v !== 'string' || v.length === 0) invalid(key, 'expected a non-empty string', v);
  return v;
}

function stringListAt(key: string, v: unknown): string[] {
  if (!Array.isArray(v)) invalid(key, 'expected an array of strings', v);
  return v.map((x, i) => stringAt(`${key}[${i}]`, x));
}

function tableNameAt(key: string, v: unknown): string {
  const s = stringAt(key, v);
  if (!isLegalTableName(s))
    invalid(key, 'expected a table name of [a-z0-9_], starting and ending with a letter or digit', v);
  return s;
}

function dottedPathAt(key: string, v: unknown): string {
  const s = stringAt(key, v);
  if (s.split('.').some((p) => p === '')) invalid(key, 'expected a dotted field path like a.b', v);
  return s;
}

/**
 * Validates `json` (e.g. the parsed `floe.config.json`; `undefined` means all defaults) and
 * applies defaults. Throws `FloeError(ConfigInvalid)` naming the key and value at fault.
 */
export function parseConfig(json: unknown): FloeConfig {
  const root = objectAt('', json ?? {}, TOP_KEYS);

  let namespace = 'default';
  if (root.namespace !== undefined) {
    namespace = stringAt('namespace', root.namespace);
    if (!isLegalTableName(namespace, 252)) {
      invalid(
        'namespace',
        'expected [a-z0-9_] (1-252 chars), starting and ending with a letter or digit',
        root.namespace,
      );
    }
    if (namespace.startsWith('aws'))
      invalid('namespace', "must not start with 'aws' (reserved by S3 Tables)", root.namespace);
  }

  let format: FloeConfig['format'] = 'json';
  if (root.format !== undefined) {
    if (root.format !== 'json' && root.format !== 'avro-gsr')
      invalid('format', "expected 'json' or 'avro-gsr'", root.format);
    format = root.format;
  }

  let jsonFallback = false;
  if (root.jsonFallback !== undefined) {
    if (typeof root.jsonFallback !== 'boolean')
      invalid('jsonFallback', 'expected true or false', root.jsonFallback);
    jsonFallback = root.jsonFallback;
  }

  let formatVersion: 2 | 3 = 2;
  if (root.formatVersion !== undefined) {
    if (root.formatVersion !== 2 && root.formatVersion !== 3)
      invalid('formatVersion', 'expected 2 or 3', root.formatVersion);
    formatVersion = root.formatVersion;
  }

  let targetFileSizeBytes = DEFAULT_TARGET_FILE_SIZE_BYTES;
  if (root.targetFileSizeBytes !== undefined) {
    const v = root.targetFileSizeBytes;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
      invalid('targetFileSizeBytes', 'expected a positive integer', v);
    }
    targetFileSizeBytes = v;
  }

  const guards = parseGuards(root.guards);
  return {
    format,
    jsonFallback,
    namespace,
    routing: parseRouting(root.routing),
    inference: parseInference(root.inference),
    partitioning: parsePartitioning(root.partitioning),
    tableProperties: parseTableProperties(
      root.tableProperties,
      targetFileSizeBytes,
      root.targetFileSizeBytes !== undefined,
    ),
    formatVersion,
    targetFileSizeBytes,
    ...optional('fields', parseFields(root.fields)),
    ...optional('guards', guards),
    limits: { ...DEFAULT_LIMITS, ...definedOnly(guards ?? {}, LIMIT_KEYS) },
    ...optional('consolidate', parseConsolidate(root.consolidate)),
    typeConflict: parseTypeConflict(root.typeConflict),
    ...optional('upsert', parseUpsert(root.upsert)),
    source: parseSource(root.source),
    ...optional('audits', parseAudits(root.audits)),
    ...optional('branches', parseBranches(root.branches)),
  };
}

function parseAudits(v: unknown): Record<string, string[]> | undefined {
  if (v === undefined) return undefined;
  const out: Record<string, string[]> = {};
  for (const [table, x] of Object.entries(objectAt('audits', v))) {
    const key = `audits.${table}`;
    if (table !== '*') tableNameAt(key, table);
    const list = stringListAt(key, x);
    list.forEach((p, i) => {
      if (p.trim() === '') invalid(`${key}[${i}]`, 'expected an SQL predicate', p);
    });
    out[table] = list;
  }
  return out;
}

function parseBranches(v: unknown): Record<string, string> | undefined {
  if (v === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [table, x] of Object.entries(objectAt('branches', v))) {
    const key = `branches.${table}`;
    if (table !== '*') tableNameAt(key, table);
    const branch = stringAt(key, x);
    if (!isBranchName(branch))
      invalid(key, "expected a branch name of letters, digits, '_', '-', '.', '/' (at most 128)", branch);
    out[table] = branch;
  }
  return out;
}

/** The branch `table` (bare name) commits to: its own entry, else every table's (`*`), else main. */
export function branchFor(config: FloeConfig, table: string): string {
  const b = config.branches;
  if (b === undefined) return MAIN_BRANCH;
  return ownEntry(b, bareTableName(table)) ?? ownEntry(b, '*') ?? MAIN_BRANCH;
}

/** The audits of `table` (bare name): every table's (`*`), then its own. */
export function auditsFor(config: FloeConfig, table: string): readonly string[] {
  const a = config.audits;
  if (a === undefined) return [];
  return [...(ownEntry(a, '*') ?? []), ...(ownEntry(a, bareTableName(table)) ?? [])];
}

function parseSource(v: unknown): SourceConfig {
  if (v === undefined) return DEFAULT_SOURCE;
  const o = objectAt('source', v, SOURCE_KEYS);
  let framings = DEFAULT_SOURCE.framings;
  if (o.framings === 'none') framings = new Set();
  else if (o.framings !== undefined && o.framings !== 'auto') {
    const list = stringListAt('source.framings', o.framings);
    for (const f of list) {
      if (!(FRAMINGS as readonly string[]).includes(f))
        invalid('source.framings', `expected 'auto', 'none' or a list of ${FRAMINGS.join(', ')}`, f);
    }
    framings = new Set(list as Framing[]);
  }
  let maxDecompressedBytes = DEFAULT_SOURCE.maxDecompressedBytes;
  if (o.maxDecompressedBytes !== undefined) {
    const n = o.maxDecompressedBytes;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1024)
      invalid('source.maxDecompressedBytes', 'expected an integer of at least 1024 (bytes)', n);
    maxDecompressedBytes = n;
  }
  let deferAboveTables = DEFAULT_SOURCE.deferAboveTables;
  const d = o.deferRouting;
  if (d === false) deferAboveTables = Number.POSITIVE_INFINITY;
  else if (d === true) deferAboveTables = 0;
  else if (d !== undefined) {
    const above =
      typeof d === 'object' && d !== null ? (d as Record<string, unknown>).aboveTables : undefined;
    if (
      typeof d !== 'object' ||
      d === null ||
      Object.keys(d).some((k) => k !== 'aboveTables') ||
      typeof above !== 'number' ||
      !Number.isSafeInteger(above) ||
      above < 0
    )
      invalid(
        'source.deferRouting',
        'expected true (every batch routed by the committer), false (never) or {"aboveTables": N}',
        d,
      );
    deferAboveTables = above;
  }
  return { framings, maxDecompressedBytes, deferAboveTables };
}

const UPSERT_KEYS = ['key', 'operationField', 'envelope'] as const;

function parseUpsert(v: unknown): Record<string, UpsertSpec> | undefined {
  if (v === undefined) return undefined;
  const out: Record<string, UpsertSpec> = Object.create(null);
  for (const [table, raw] of Object.entries(objectAt('upsert', v))) {
    const key = `upsert.${table}`;
    const parts = table.split('.');
    if (parts.length > 2 || !parts.every((p) => isLegalTableName(p, 252)))
      invalid('upsert', `'${table}' is not a table name (name or namespace.name of [a-z0-9_])`, table);
    const o = objectAt(key, raw, UPSERT_KEYS);
    if (o.key === undefined) invalid(`${key}.key`, 'is required (the fields that identify a row)', o.key);
    const keyPaths = stringListAt(`${key}.key`, o.key).map((p, i) => dottedPathAt(`${key}.key[${i}]`, p));
    if (keyPaths.length === 0) invalid(`${key}.key`, 'expected at least one field path', o.key);
    if (new Set(keyPaths).size !== keyPaths.length) invalid(`${key}.key`, 'lists a field twice', o.key);
    if (o.envelope !== undefined && o.envelope !== 'debezium')
      invalid(`${key}.envelope`, "expected 'debezium'", o.envelope);
    if (o.envelope !== undefined && o.operationField !== undefined)
      invalid(
        `${key}.operationField`,
        "not with envelope 'debezium' (its 'op' is the operation)",
        o.operationField,
      );
    out[table] = {
      key: keyPaths,
      ...(o.operationField === undefined
        ? {}
        : { operationField: stringAt(`${key}.operationField`, o.operationField) }),
      ...(o.envelope === undefined ? {} : { envelope: 'debezium' as const }),
    };
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * The upsert spec of the table a routing key names (by `namespace.name`, then by name): the
 * configured one, else the one its data declared (a DynamoDB-fed table, {@link changeTableSpec}).
 */
export function upsertFor(config: FloeConfig, table: string): UpsertSpec | undefined {
  const configured = configuredUpsert(config, table);
  if (configured) return configured;
  const declared = declaredChangeTables.get(config);
  return declared?.get(table) ?? declared?.get(bareTableName(table));
}

/** The `upsert` entry of the config for `table` (by `namespace.name`, then by name). */
function configuredUpsert(config: FloeConfig, table: string): UpsertSpec | undefined {
  const u = config.upsert;
  return u === undefined ? undefined : (ownEntry(u, table) ?? ownEntry(u, bareTableName(table)));
}

/** The per-table map of `config` in `maps` (created on first use). */
function tablesOf<V>(maps: WeakMap<FloeConfig, Map<string, V>>, config: FloeConfig): Map<string, V> {
  let known = maps.get(config);
  if (!known) {
    known = new Map();
    maps.set(config, known);
  }
  return known;
}

/**
 * Upsert tables their data declares, per config object: a DynamoDB change record names its table
 * and key (records/dynamodb-change.ts), so such a table needs no config. Noted when the first
 * change is read (ingest, `floe load`) or a pending fragment says so (the committer); the table
 * itself keeps the key as its identifier fields.
 */
const declaredChangeTables = new WeakMap<FloeConfig, Map<string, UpsertSpec>>();

/**
 * The upsert spec of a DynamoDB-fed table: its configured key if the config names the table,
 * else the key the first change declared (`key`: that change's `Keys` names), noted for later
 * changes, which must agree (change-event.ts refuses one keyed otherwise).
 */
export function changeTableSpec(config: FloeConfig, table: string, key: readonly string[]): UpsertSpec {
  const configured = configuredUpsert(config, table);
  if (configured)
    return configured.envelope === 'dynamodb' ? configured : { key: configured.key, envelope: 'dynamodb' };
  return declareChangeTable(config, table, { key: [...key], envelope: 'dynamodb' });
}

/** Notes `spec` as the upsert spec `table`'s data declared (unless one is noted: that one stays). */
export function declareChangeTable(config: FloeConfig, table: string, spec: UpsertSpec): UpsertSpec {
  const known = tablesOf(declaredChangeTables, config);
  const noted = known.get(table);
  if (noted) return noted;
  if (spec.key.length > 0) known.set(table, spec);
  return spec;
}

function optional<K extends string, V>(key: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [key]: v }) as { [P in K]?: V };
}

function fieldRulesAt(scope: string, v: unknown, allowed: readonly string[]): FieldRules {
  const o = objectAt(scope, v, allowed);
  const out: { keep?: string[]; drop?: string[]; only?: string[] } = {};
  for (const k of FIELD_RULE_KEYS) if (o[k] !== undefined) out[k] = fieldPathsAt(`${scope}.${k}`, o[k]);
  const given = FIELD_RULE_KEYS.filter((k) => out[k] !== undefined);
  if (given.length > 1) {
    const [a, b] = given as [FieldRuleKey, FieldRuleKey];
    invalid(
      scope,
      `'${a}' and '${b}' are mutually exclusive (at most one of keep, drop, only per scope)${overlapNote(a, out[a]!, b, out[b]!)}`,
      Object.fromEntries(given.map((k) => [k, o[k]])),
    );
  }
  return out;
}

type FieldRuleKey = (typeof FIELD_RULE_KEYS)[number];

function fieldPathsAt(key: string, v: unknown): string[] {
  const list = stringListAt(key, v);
  if (list.length === 0) invalid(key, 'expected at least one field path', v);
  list.forEach((p, i) => {
    if (p.length > 4096 || !p.split('.').every(isLegalColumnName))
      invalid(`${key}[${i}]`, 'expected a dotted path of lower-case column names [a-z0-9_]', p);
  });
  return [...new Set(list)];
}

/** Names the field two lists of one scope both reach, so the error says which field clashes. */
function overlapNote(a: string, as: readonly string[], b: string, bs: readonly string[]): string {
  for (const p of as) {
    for (const q of bs) {
      if (p === q) return `; '${p}' is in both`;
      if (isWithin(p, q)) return `; ${a} '${p}' lies within ${b} '${q}'`;
      if (isWithin(q, p)) return `; ${b} '${q}' lies within ${a} '${p}'`;
    }
  }
  return '';
}

function parseFields(v: unknown): FieldsConfig | undefined {
  if (v === undefined) return undefined;
  const global = fieldRulesAt('fields', v, FIELDS_KEYS);
  const o = v as Obj;
  const tables: Record<string, FieldRules> = {};
  if (o.tables !== undefined) {
    for (const [table, rules] of Object.entries(objectAt('fields.tables', o.tables))) {
      const scope = `fields.tables.${table}`;
      tableNameAt(scope, table);
      tables[table] = fieldRulesAt(scope, rules, FIELD_RULE_KEYS);
      checkComposable(scope, global, tables[table]);
    }
  }
  return { ...global, tables };
}

// ---------------------------------------------------------------------------------------------
// Composing a table's field rules with the global ones

/** Whether dotted `path` is `root` or lies below it (`a.b` is within `a`; `ab` is not). */
function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}.`);
}

/** Whether one path lies within the other: a projection to one keeps part of the other. */
function isRelated(a: string, b: string): boolean {
  return isWithin(a, b) || isWithin(b, a);
}

/**
 * A table's effective field rules: its scope added to the global one (README "Field lists").
 *
 * - `keep`: the union, every listed path is required.
 * - `drop`: the union, except a global path the table names exactly in its `keep` or `only` (an
 *   explicit re-admission; naming a parent or a child re-admits nothing).
 * - `only`: the global list narrowed by the table's (of each pair of related paths, the deeper);
 *   either one alone applies as it is. A table never widens the global `only`.
 */
export function composeFieldRules(global: FieldRules, table: FieldRules): FieldRules {
  const named = new Set([...(table.keep ?? []), ...(table.only ?? [])]);
  const globalDrop = global.drop?.filter((p) => !named.has(p));
  return {
    ...optional('keep', union(global.keep, table.keep)),
    ...optional('drop', union(globalDrop, table.drop)),
    ...optional('only', narrowedOnly(global.only, table.only)),
  };
}

function union(a: readonly string[] = [], b: readonly string[] = []): readonly string[] | undefined {
  const all = new Set([...a, ...b]);
  return all.size === 0 ? undefined : [...all];
}

/** The paths both lists admit; `undefined` when neither restricts. */
function narrowedOnly(global?: readonly string[], table?: readonly string[]): readonly string[] | undefined {
  if (global === undefined || table === undefined) return table ?? global;
  const out = new Set<string>();
  for (const t of table) {
    for (const g of global) {
      if (isWithin(t, g)) out.add(t);
      else if (isWithin(g, t)) out.add(g);
    }
  }
  return [...out];
}

/**
 * Rejects a table scope that contradicts the global one once composed: a listed path that could
 * never take effect, or one that would dead-letter every record of the table.
 */
function checkComposable(scope: string, global: FieldRules, table: FieldRules): void {
  checkWholeReadmissions(scope, global.drop ?? [], table);
  checkDropsSpareGlobalKeep(scope, global.keep ?? [], table.drop ?? []);
  if (global.only !== undefined) checkWithinGlobalOnly(scope, global.only, table);
  if (table.only !== undefined) checkOnlyAdmitsGlobalKeep(scope, global.keep ?? [], table.only);
}

/** A globally dropped path is re-admitted whole or not at all: a path inside it is a mistake. */
function checkWholeReadmissions(scope: string, globalDrop: readonly string[], table: FieldRules): void {
  const named = [...(table.keep ?? []), ...(table.only ?? [])];
  const stillDropped = globalDrop.filter((d) => !named.includes(d));
  for (const k of ['keep', 'only'] as const) {
    table[k]?.forEach((p, i) => {
      const d = stillDropped.find((d) => isWithin(p, d));
      if (d !== undefined)
        invalid(
          `${scope}.${k}[${i}]`,
          `lies inside '${d}', which the global 'fields.drop' removes; a table re-admits a dropped path only whole (list '${d}' itself)`,
          p,
        );
    });
  }
}

/** A table cannot drop what the global `keep` requires: every record would be dead-lettered. */
function checkDropsSpareGlobalKeep(
  scope: string,
  globalKeep: readonly string[],
  drop: readonly string[],
): void {
  drop.forEach((d, i) => {
    const k = globalKeep.find((k) => isWithin(k, d));
    if (k !== undefined)
      invalid(
        `${scope}.drop[${i}]`,
        `removes '${k}', which the global 'fields.keep' requires (every record would be dead-lettered)`,
        d,
      );
  });
}

/** The global `only` is a ceiling: a table path outside it could never land. */
function checkWithinGlobalOnly(scope: string, globalOnly: readonly string[], table: FieldRules): void {
  for (const k of ['keep', 'only'] as const) {
    table[k]?.forEach((p, i) => {
      if (!globalOnly.some((g) => isRelated(p, g)))
        invalid(
          `${scope}.${k}[${i}]`,
          `lies outside the global 'fields.only' (${globalOnly.join(', ')}); a table can narrow it, never widen it`,
          p,
        );
    });
  }
}

/** A table's `only` must admit what the global `keep` requires, or every record is dead-lettered. */
function checkOnlyAdmitsGlobalKeep(
  scope: string,
  globalKeep: readonly string[],
  only: readonly string[],
): void {
  const left = globalKeep.find((k) => !only.some((p) => isRelated(k, p)));
  if (left !== undefined)
    invalid(`${scope}.only`, `leaves out '${left}', which the global 'fields.keep' requires (add it)`, only);
}

function positiveIntAt(key: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
    invalid(key, 'expected a positive integer', v);
  return v;
}

function policyAt(key: string, v: unknown): TypeConflictPolicy {
  if (v !== 'dead-letter' && v !== 'coerce') invalid(key, "expected 'dead-letter' or 'coerce'", v);
  return v;
}

function parseTypeConflict(v: unknown): TypeConflictConfig {
  if (v === undefined) return { default: 'dead-letter', tables: {} };
  if (typeof v === 'string') return { default: policyAt('typeConflict', v), tables: {} };
  const o = objectAt('typeConflict', v, ['default', 'tables']);
  const tables: Record<string, TypeConflictPolicy> = {};
  for (const [t, p] of Object.entries(
    o.tables === undefined ? {} : objectAt('typeConflict.tables', o.tables),
  )) {
    tableNameAt(`typeConflict.tables.${t}`, t);
    tables[t] = policyAt(`typeConflict.tables.${t}`, p);
  }
  return {
    default: o.default === undefined ? 'dead-letter' : policyAt('typeConflict.default', o.default),
    tables,
  };
}

const CONSOLIDATE_KEYS = ['table', 'namespace', 'when', 'discriminators', 'shared', 'variantColumn'] as const;

function parseConsolidate(v: unknown): ConsolidationRule[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) invalid('consolidate', 'expected an array of rules', v);
  return v.map((r, i): ConsolidationRule => {
    const key = `consolidate[${i}]`;
    const o = objectAt(key, r, CONSOLIDATE_KEYS);
    if (o.table === undefined) invalid(`${key}.table`, 'is required', o.table);
    const table = tableNameAt(`${key}.table`, o.table);
    const discriminators = stringListAt(`${key}.discriminators`, o.discriminators ?? []).map((p, j) =>
      dottedPathAt(`${key}.discriminators[${j}]`, p),
    );
    if (discriminators.length === 0)
      invalid(`${key}.discriminators`, 'expected at least one field path', o.discriminators);
    const shared = o.shared === undefined ? [] : stringListAt(`${key}.shared`, o.shared);
    let when: Record<string, string[] | '*'> | undefined;
    if (o.when !== undefined) {
      when = {};
      for (const [path, values] of Object.entries(objectAt(`${key}.when`, o.when))) {
        dottedPathAt(`${key}.when.${path}`, path);
        if (values === '*') when[path] = '*';
        else {
          const list = stringListAt(`${key}.when.${path}`, values);
          if (list.length === 0) invalid(`${key}.when.${path}`, 'expected values or "*"', values);
          when[path] = list;
        }
      }
    }
    let variantColumn: string | undefined;
    if (o.variantColumn !== undefined) {
      variantColumn = stringAt(`${key}.variantColumn`, o.variantColumn);
      if (/\{\s*\}|\{[^}]*$|\{[^}]*\{/.test(variantColumn) || !/\{[^{}]+\}/.test(variantColumn))
        invalid(
          `${key}.variantColumn`,
          'expected a template with {field} placeholders, e.g. {ride_type}_ride_attributes',
          variantColumn,
        );
    }
    let namespace: string | undefined;
    if (o.namespace !== undefined) {
      namespace = stringAt(`${key}.namespace`, o.namespace);
      if (!isLegalTableName(namespace, 252) || namespace.startsWith('aws'))
        invalid(`${key}.namespace`, "expected [a-z0-9_] (1-252 chars, not starting with 'aws')", o.namespace);
    }
    return {
      table,
      ...(namespace === undefined ? {} : { namespace }),
      discriminators,
      shared,
      ...(when === undefined ? {} : { when }),
      ...(variantColumn === undefined ? {} : { variantColumn }),
    };
  });
}

function parseGuards(v: unknown): GuardsConfig | undefined {
  if (v === undefined) return undefined;
  const o = objectAt('guards', v, GUARDS_KEYS);
  const out: {
    allowTables?: string;
    maxTables?: number;
    maxColumnsPerTable?: number;
    maxNestingDepth?: number;
    maxRecordBytes?: number;
  } = {};
  if (o.allowTables !== undefined) {
    const src = stringAt('guards.allowTables', o.allowTables);
    try {
      anchoredRegExp(src);
    } catch (e) {
      invalid('guards.allowTables', `not a valid regular expression (${(e as Error).message})`, src);
    }
    out.allowTables = src;
  }
  if (o.maxTables !== undefined) out.maxTables = positiveIntAt('guards.maxTables', o.maxTables);
  if (o.maxColumnsPerTable !== undefined)
    out.maxColumnsPerTable = positiveIntAt('guards.maxColumnsPerTable', o.maxColumnsPerTable);
  if (o.maxNestingDepth !== undefined)
    out.maxNestingDepth = positiveIntAt('guards.maxNestingDepth', o.maxNestingDepth);
  if (o.maxRecordBytes !== undefined)
    out.maxRecordBytes = positiveIntAt('guards.maxRecordBytes', o.maxRecordBytes);
  return out;
}

function definedOnly<K extends string>(
  o: Partial<Record<K, number>>,
  keys: readonly K[],
): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/**
 * How deep the JSON reader may go: the `maxNestingDepth` guard itself, unless field lists can
 * remove deep fields — then the guard judges the projected record (record-rules.ts) and the
 * reader only keeps a ceiling that protects the stack.
 */
export function readerDepthLimit(config: FloeConfig): number {
  const limit = config.limits.maxNestingDepth;
  return config.fields === undefined ? limit : Math.max(limit, READER_DEPTH_CEILING);
}
const READER_DEPTH_CEILING = 512;

/** `guards.allowTables` compiled: the whole table name must match. */
export function anchoredRegExp(source: string): RegExp {
  return new RegExp(`^(?:${source})$`);
}

/** The field rules for `table`: the global scope with the table's own added (see {@link composeFieldRules}). */
export function fieldRulesFor(config: FloeConfig, table: string): FieldRules {
  const f = config.fields;
  if (f === undefined) return {};
  const { tables, ...global } = f;
  const name = bareTableName(table);
  // Own keys only: a table named `constructor` must not pick up Object.prototype's.
  return composeFieldRules(global, Object.hasOwn(tables, name) ? tables[name]! : {});
}

/**
 * True when any field list, table guard (allowTables, maxTables) or consolidation rule is
 * configured: they judge or reshape whole records, so the load and the ingest then take the
 * generic path only. The limits (`config.limits`) are enforced on every path and do not count.
 */
export function hasRecordRules(config: FloeConfig): boolean {
  const f = config.fields;
  const g = config.guards;
  const scoped = (r: FieldRules) => r.keep !== undefined || r.drop !== undefined || r.only !== undefined;
  return (
    (f !== undefined && (scoped(f) || Object.values(f.tables).some(scoped))) ||
    (g !== undefined && (g.allowTables !== undefined || g.maxTables !== undefined)) ||
    (config.consolidate !== undefined && config.consolidate.length > 0)
  );
}

function parseRouting(v: unknown): RoutingConfig {
  if (v === undefined) return DEFAULT_ROUTING;
  const o = objectAt('routing', v, ROUTING_KEYS);
  const suffix = o.suffix === undefined ? DEFAULT_ROUTING.suffix : (o.suffix as string);
  if (typeof suffix !== 'string' || !/^([a-z0-9_]*[a-z0-9])?$/.test(suffix) || suffix.length > 64) {
    invalid(
      'routing.suffix',
      'expected [a-z0-9_] ending with a letter or digit (or empty), at most 64 chars',
      o.suffix,
    );
  }
  let template: string | undefined;
  if (o.template !== undefined) {
    template = stringAt('routing.template', o.template);
    let parts: ReturnType<typeof splitNamespace> | undefined;
    try {
      parts = splitNamespace(parseTemplate(template));
    } catch (e) {
      invalid('routing.template', (e as Error).message, o.template);
    }
    if (parts?.namespace !== undefined && (parts.namespace.length === 0 || parts.table.length === 0)) {
      invalid('routing.template', "expected 'namespace.table' with both parts non-empty", o.template);
    }
  }
  let defaultTable: string | null = DEFAULT_ROUTING.defaultTable;
  if (o.defaultTable !== undefined) {
    defaultTable = o.defaultTable === null ? null : tableNameAt('routing.defaultTable', o.defaultTable);
  }
  return {
    ...(o.tableField === undefined ? {} : { tableField: dottedPathAt('routing.tableField', o.tableField) }),
    routingField:
      o.routingField === undefined
        ? DEFAULT_ROUTING.routingField
        : dottedPathAt('routing.routingField', o.routingField),
    suffix,
    ...(template === undefined ? {} : { template }),
    defaultTable,
    ...(o.avroRouteBy === undefined
      ? {}
      : {
          avroRouteBy:
            o.avroRouteBy === 'schema-name' || o.avroRouteBy === 'fields'
              ? o.avroRouteBy
              : invalid('routing.avroRouteBy', "expected 'schema-name' or 'fields'", o.avroRouteBy),
        }),
    ...(o.allowList === undefined
      ? {}
      : {
          allowList: stringListAt('routing.allowList', o.allowList).map((t, i) =>
            tableNameAt(`routing.allowList[${i}]`, t),
          ),
        }),
  };
}

function parseInference(v: unknown): InferenceConfig {
  if (v === undefined) return { hints: {}, detectTimestamps: true };
  const o = objectAt('inference', v, INFERENCE_KEYS);
  const hints: Record<string, Record<string, string>> = {};
  if (o.hints !== undefined) {
    for (const [table, perTable] of Object.entries(objectAt('inference.hints', o.hints))) {
      const tableKey = `inference.hints.${table}`;
      if (table !== '*' && !isLegalTableName(table))
        invalid(tableKey, "expected '*' or a legal table name", table);
      const out: Record<string, string> = {};
      for (const [path, type] of Object.entries(objectAt(tableKey, perTable))) {
        const key = `${tableKey}.${path}`;
        if (!path.split('.').every(isLegalColumnName)) {
          invalid(key, 'expected a dotted path of lower-case column names [a-z0-9_]', path);
        }
        const s = stringAt(key, type);
        try {
          parsePrimitive(s);
        } catch {
          invalid(key, 'expected an Iceberg primitive type such as long, timestamptz or decimal(12,2)', type);
        }
        out[path] = s;
      }
      hints[table] = out;
    }
  }
  let detectTimestamps = true;
  if (o.detectTimestamps !== undefined) {
    if (typeof o.detectTimestamps !== 'boolean')
      invalid('inference.detectTimestamps', 'expected true or false', o.detectTimestamps);
    detectTimestamps = o.detectTimestamps;
  }
  return { hints, detectTimestamps };
}

function parsePartitioning(v: unknown): PartitioningConfig {
  if (v === undefined) return { candidates: DEFAULT_PARTITION_CANDIDATES, tables: {} };
  const o = objectAt('partitioning', v, PARTITIONING_KEYS);
  const candidatesAt = (key: string, x: unknown): string[] => {
    const list = stringListAt(key, x);
    list.forEach((c, i) => {
      try {
        parsePartitionCandidate(c);
      } catch (e) {
        invalid(`${key}[${i}]`, (e as Error).message, c);
      }
    });
    return list;
  };
  const tables: Record<string, string[]> = {};
  if (o.tables !== undefined) {
    for (const [table, list] of Object.entries(objectAt('partitioning.tables', o.tables))) {
      tableNameAt(`partitioning.tables.${table}`, table);
      tables[table] = candidatesAt(`partitioning.tables.${table}`, list);
    }
  }
  return {
    candidates:
      o.candidates === undefined
        ? DEFAULT_PARTITION_CANDIDATES
        : candidatesAt('partitioning.candidates', o.candidates),
    tables,
  };
}

function parseTableProperties(
  v: unknown,
  targetFileSize: number,
  targetGiven: boolean,
): Record<string, string> {
  const props: Record<string, string> = {
    ...DEFAULT_TABLE_PROPERTIES,
    'write.target-file-size-bytes': String(targetFileSize),
  };
  if (v === undefined) return props;
  for (const [k, x] of Object.entries(objectAt('tableProperties', v))) {
    const key = `tableProperties.${k}`;
    if (typeof x !== 'string' && typeof x !== 'number' && typeof x !== 'boolean') {
      invalid(key, 'expected a string, number or boolean', x);
    }
    // Iceberg property values are strings; numbers and booleans are written the way Java reads them.
    const s = String(x);
    if (k === 'write.target-file-size-bytes' && targetGiven && s !== String(targetFileSize)) {
      invalid(key, `conflicts with targetFileSizeBytes ${targetFileSize}`, x);
    }
    props[k] = s;
  }
  return props;
}

/**
 * Type hints for `table`: the `*` hints, overlaid with the types its data declared (a Debezium
 * schema: {@link declareTableTypes}), overlaid with the table's own hints.
 */
export function hintsFor(config: FloeConfig, table: string): Record<string, string> {
  table = bareTableName(table);
  // Without a prototype: a column named `constructor` has no hint, not Object's function.
  const hints: Record<string, string> = Object.create(null);
  Object.assign(
    hints,
    ownEntry(config.inference.hints, '*'),
    declaredTypesOf(config, table)?.hints,
    ownEntry(config.inference.hints, table),
  );
  return hints;
}

/** Column types (and nullability) the data declared per table (bare name), per config object. */
const declaredTypes = new WeakMap<
  FloeConfig,
  Map<string, { hints: Record<string, string>; required: Record<string, boolean> }>
>();

/**
 * Notes the column types a change's own schema declares for `table` (Debezium with schemas,
 * records/connect-schema.ts): a later declaration of a column wins (its type or nullability
 * changed upstream; the table's evolution rules then decide). The ingest writes them into each
 * pending fragment; the committer reads them back from there.
 */
export function declareTableTypes(config: FloeConfig, table: string, types: DeclaredTypes): void {
  table = bareTableName(table);
  const known = tablesOf(declaredTypes, config);
  let declared = known.get(table);
  if (!declared) {
    // Without prototypes: a column named `__proto__` keeps its entry.
    declared = { hints: Object.create(null), required: Object.create(null) };
    known.set(table, declared);
  }
  Object.assign(declared.hints, types.hints);
  if (types.required) Object.assign(declared.required, types.required);
}

/** The column types `table`'s data declared (undefined: none). */
export function declaredTypesOf(config: FloeConfig, table: string): DeclaredTypes | undefined {
  const declared = declaredTypes.get(config)?.get(bareTableName(table));
  if (!declared) return undefined;
  const hints = { ...declared.hints };
  return Object.keys(declared.required).length === 0
    ? { hints }
    : { hints, required: { ...declared.required } };
}

/**
 * How records of `table` are inferred: its type hints ({@link hintsFor}), the column paths its
 * data declares required (schema/nullability.ts) and the timestamp detection setting.
 */
export function inferOptionsFor(config: FloeConfig, table: string): InferOptions {
  const required = declaredTypes.get(config)?.get(bareTableName(table))?.required ?? {};
  const paths = Object.keys(required).filter((p) => required[p] === true);
  return {
    hints: hintsFor(config, table),
    detectTimestamps: config.inference.detectTimestamps,
    ...(paths.length > 0 ? { required: paths } : {}),
  };
}

/** The router of `config`: its routing rules, DynamoDB change records first unless `source.framings` leaves them out. */
export function routerFor(config: FloeConfig): Router {
  return compileRouter(config.routing, { dynamodb: config.source.framings.has('dynamodb') });
}

/** Whether an upsert table reads Debezium envelopes (so a tombstone may arrive). */
export function hasDebeziumTables(config: FloeConfig): boolean {
  return Object.values(config.upsert ?? {}).some((u) => u.envelope === 'debezium');
}

/** Partition candidates for `table`: its override, else the global list. */
export function partitionCandidatesFor(config: FloeConfig, table: string): readonly string[] {
  table = bareTableName(table);
  return ownEntry(config.partitioning.tables, table) ?? config.partitioning.candidates;
}

/** `o[key]` when `o` has it as its own key (a table may be named `constructor` or `__proto__`). */
function ownEntry<V>(o: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(o, key) ? o[key] : undefined;
}

// ---------------------------------------------------------------------------------------------
// Partition candidates

/** A parsed candidate: a top-level column and an optional explicit transform. */
export interface PartitionCandidate {
  /** Canonical transform string (`bucket[16]`, `day` …); undefined picks one by column type. */
  readonly transform?: string;
  readonly column: string;
}

const CANDIDATE_RE = /^\s*(?:([a-z]+(?:\[\s*\d+\s*\])?)\s*\(\s*([^()\s]*)\s*\)|([^()\s]+))\s*$/i;

/**
 * Parses `field` or `transform(field)`: `'bucket[16](customer_id)'` →
 * `{ transform: 'bucket[16]', column: 'customer_id' }`. Throws `FloeError(ConfigInvalid)` on an
 * unknown or `void` transform or a column that is not a legal top-level column name.
 */
export function parsePartitionCandidate(s: string): PartitionCandidate {
  const m = CANDIDATE_RE.exec(s);
  const column = m?.[2] ?? m?.[3];
  if (!m || column === undefined || !isLegalColumnName(column)) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `partition candidate '${s}' must be 'column' or 'transform(column)' with a lower-case top-level column`,
      { context: { value: s } },
    );
  }
  if (m[1] === undefined) return { column };
  let t: ReturnType<typeof parseTransform>;
  try {
    t = parseTransform(m[1]);
  } catch (e) {
    throw new FloeError(ErrorKind.ConfigInvalid, `partition candidate '${s}': ${(e as Error).message}`, {
      cause: e,
    });
  }
  if (t.kind === 'unknown' || t.kind === 'void') {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `partition candidate '${s}': transform must be identity, year, month, day, hour, bucket[N] or truncate[W]`,
      { context: { value: s } },
    );
  }
  return { transform: transformToString(t), column };
}

/** A partition field wanted for a schema. */
export interface DesiredPartition {
  readonly sourceId: number;
  readonly transform: string;
  readonly name: string;
}

const TIMESTAMP_KINDS = new Set(['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns']);
const IDENTITY_KINDS = new Set(['date', 'string', 'int', 'long']);

/**
 * The partition fields `schema` takes from `candidates` (the sample's rule, DESIGN §3): each
 * candidate whose column exists at the top level becomes a field. Without a transform a `date`,
 * `string`, `int` or `long` column is partitioned by identity and a timestamp by `day`; other
 * types are skipped. An explicit transform is kept when it applies to the column's type, else
 * skipped. Duplicates, and names that would shadow another column (Java refuses those), are
 * skipped. Field names follow Java's defaults (`event_time_day`, `customer_id_bucket`).
 */
export function partitionFieldsFor(
  schema: StructType | Schema,
  candidates: readonly (string | PartitionCandidate)[],
): DesiredPartition[] {
  const fields = schema.fields;
  const out: DesiredPartition[] = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    const cand = typeof c === 'string' ? parsePartitionCandidate(c) : c;
    const f = fields.find((x) => x.name === cand.column);
    if (f === undefined || !isPrimitive(f.type)) continue;
    let transform = cand.transform;
    if (transform === undefined) {
      if (TIMESTAMP_KINDS.has(f.type.kind)) transform = 'day';
      else if (IDENTITY_KINDS.has(f.type.kind)) transform = 'identity';
      else continue;
    }
    const t = parseTransform(transform);
    if (!canTransform(t, f.type)) continue;
    const name = defaultPartitionFieldName(t, f.name);
    if (t.kind !== 'identity' && fields.some((x) => x.name === name)) continue;
    const key = `${f.id}:${transformToString(t)}`;
    if (seen.has(key) || seen.has(`name:${name}`)) continue;
    seen.add(key);
    seen.add(`name:${name}`);
    out.push({ sourceId: f.id, transform: transformToString(t), name });
  }
  return out;
}
