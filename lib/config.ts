/**
 * The CDK app's settings, read from `-c key=value` context (and `cdk.json`'s `context` block) and
 * validated before any construct is built (DESIGN §6): every problem is collected and reported in
 * one `FloeError(ConfigInvalid)` whose message names each context key and the value it had, so
 * `cdk synth -c appType=dynamo` fails at once with a readable error instead of a half-built stack.
 *
 * Values given with `-c` arrive as strings; values in `cdk.json` may be numbers, booleans, arrays or
 * objects. Both are accepted. A context key that looks like a Floe key but is not one (`apptype`,
 * `app-type`, `batchsize` …) is an error too, so a typo never silently falls back to a default.
 *
 * The Floe configuration the Lambdas run with (`FLOE_CONFIG`) is built here: the optional
 * `floeConfig` (JSON) or `floeConfigFile` document, overlaid with what the stack decides
 * (`format` from `appType`, `formatVersion` from `tableFormatVersion`, `namespace`) and with the
 * routing / partitioning context keys, then validated by the very parser the handlers use
 * (`lambdas/src/config.ts` `parseConfig`).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_COMMITTED_RETENTION_MS } from '../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import {
  S3TABLES_MAX_TARGET_MB,
  S3TABLES_MIN_TARGET_MB,
} from '../lambdas/src/adapters/aws/s3tables-maintenance.ts';
import { DEFAULT_MAX_SLICES, DEFAULT_TABLES_PER_SLICE } from '../lambdas/src/app/commit-slices.ts';
import { parseDuration } from '../lambdas/src/cli/duration.ts';
import { type FloeConfig, parseConfig } from '../lambdas/src/config.ts';
import { ErrorKind, FloeError, isFloeError } from '../lambdas/src/errors.ts';
import { DEFAULT_COMMIT_CONCURRENCY } from '../lambdas/src/handlers/env.ts';
import {
  formatPerTableMetrics,
  MAX_TOP_TABLES,
  type PerTableMetrics,
  parsePerTableMetrics,
} from '../lambdas/src/handlers/table-metrics.ts';
import { maintenanceEnvBytes } from './maintenance-env.ts';
import {
  type NamespaceScope,
  namespacePatterns,
  parseAllowedNamespaces,
  reachableNamespaces,
} from './namespaces.ts';

export const APP_TYPES = ['dynamic', 'dynamic-avro'] as const;
export type AppType = (typeof APP_TYPES)[number];
export const CATALOG_TYPES = ['glue', 's3tables'] as const;
export type CatalogType = (typeof CATALOG_TYPES)[number];
export const STREAM_MODES = ['on-demand', 'provisioned'] as const;
export type StreamMode = (typeof STREAM_MODES)[number];
export const STREAM_ENCRYPTIONS = ['aws-managed', 'customer-managed'] as const;
export type StreamEncryptionSetting = (typeof STREAM_ENCRYPTIONS)[number];
export const REMOVAL_POLICIES = ['retain', 'destroy'] as const;
export type RemovalSetting = (typeof REMOVAL_POLICIES)[number];
export const MAINTENANCE_SETTINGS = ['floe', 'glue', 'off'] as const;
export type MaintenanceSetting = (typeof MAINTENANCE_SETTINGS)[number];
export const S3_TABLES_CATALOG_SETTINGS = ['ensure', 'skip'] as const;
/**
 * `strict`: what a regulated account's baseline controls ask for (AWS Control Tower's proactive
 * controls): a customer-managed KMS key of the stack's own for the buckets, the ledger table, the
 * log groups, the failed-batch queue, the stream and the Athena results; bucket versioning; a year
 * of logs.
 */
export const COMPLIANCE_SETTINGS = ['default', 'strict'] as const;
export type ComplianceSetting = (typeof COMPLIANCE_SETTINGS)[number];
export type S3TablesCatalogSetting = (typeof S3_TABLES_CATALOG_SETTINGS)[number];

/** Retention periods CloudWatch Logs accepts (days). */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

/**
 * Lambda allows 4 KB for all environment variables of a function together; the other variables
 * (bucket URIs, table names, ARNs) take well under 800 bytes.
 */
export const MAX_FLOE_CONFIG_BYTES = 3_300;

/** Every context key the app reads, with its default (as shown in the README table). */
export const CONTEXT_KEYS = [
  'appType',
  'catalogType',
  'tableFormatVersion',
  'stackName',
  'namespace',
  'floeConfig',
  'floeConfigFile',
  'routingField',
  'tableField',
  'tableTemplate',
  'tableSuffix',
  'defaultTable',
  'allowList',
  'allowedNamespaces',
  'avroRouteBy',
  'partitionCandidates',
  'jsonFallback',
  'streamMode',
  'shardCount',
  'streamEncryption',
  'compliance',
  'streamRetentionHours',
  'batchSize',
  'batchingWindowSeconds',
  'retryAttempts',
  'maxRecordAgeSeconds',
  'ingestMemoryMb',
  'ingestTimeoutSeconds',
  'tableCacheRefreshSeconds',
  'commitIntervalMinutes',
  'commitIntervalSeconds',
  'commitTablesPerSlice',
  'commitMaxSlices',
  'committerMemoryMb',
  'committerTimeoutSeconds',
  'commitConcurrency',
  'committerReservedConcurrency',
  'leaseSeconds',
  'stagingExpirationDays',
  'deadLetterExpirationDays',
  'failedBatchRetentionDays',
  'logRetentionDays',
  'iteratorAgeAlarmMinutes',
  'freshnessAlarmMinutes',
  'alarmTopicArn',
  'vpcId',
  'vpcSubnets',
  'vpcRouteTables',
  'removalPolicy',
  'tableBucketName',
  'registryName',
  'maintenance',
  'maintenanceSchedule',
  'maintenanceRetainLast',
  'maintenanceExpireOlderThan',
  'maintenanceOrphansOlderThan',
  'maintenanceTargetFileSize',
  'maintenanceMemoryMb',
  'maintenanceTimeoutSeconds',
  'smallFilesAlarmFiles',
  'perTableMetrics',
  'athenaResultsExpirationDays',
  's3TablesCatalog',
] as const;
export type ContextKey = (typeof CONTEXT_KEYS)[number];

export interface StreamSettings {
  readonly mode: StreamMode;
  /** Set exactly when `mode` is `provisioned`. */
  readonly shardCount?: number;
  readonly retentionHours: number;
  /** KMS server-side encryption with `aws/kinesis`, or with a key of the stack's own (rotated). */
  readonly encryption: StreamEncryptionSetting;
}

export interface IngestSettings {
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  readonly retryAttempts: number;
  /** -1: records never expire from the mapping (only from the stream). */
  readonly maxRecordAgeSeconds: number;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  /** Unset: the handler's default (30 s). */
  readonly tableCacheRefreshSeconds?: number;
}

export interface CommitterSettings {
  /** The schedule's period: `rate(N minutes)`. */
  readonly intervalMinutes: number;
  /**
   * How soon a table is committed after its data is staged (`commitIntervalSeconds`, default the
   * schedule's period). Below 60, each scheduled run commits in passes this far apart for its minute.
   */
  readonly intervalSeconds: number;
  /** Fan-out: one slice (an asynchronous invocation) per this many tables with staged work. */
  readonly tablesPerSlice: number;
  /** Fan-out ceiling (1: no fan-out). */
  readonly maxSlices: number;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly commitConcurrency: number;
  /**
   * 0 (default): no reservation (runs are serialized by a run lease in the ledger table, so the
   * deploy works in accounts whose concurrency quota cannot spare one); 1: reserved as well.
   */
  readonly reservedConcurrency: 0 | 1;
  /** Unset: the handler's default (120 s). */
  readonly leaseSeconds?: number;
}

export interface StorageSettings {
  /** Days after which objects under `staging/` expire (0: never). */
  readonly stagingExpirationDays: number;
  /** Days after which dead letters expire (0: never). */
  readonly deadLetterExpirationDays: number;
  readonly failedBatchRetentionDays: number;
  readonly logRetentionDays: number;
  readonly removal: RemovalSetting;
  /** Set exactly when `catalogType` is `s3tables`. */
  readonly tableBucketName?: string;
  /** `strict`: the stack's own KMS key for everything it stores, and versioned buckets. */
  readonly compliance: ComplianceSetting;
}

/**
 * Table maintenance (`-c maintenance=floe|glue|off`): `floe` (default) deploys the maintenance
 * function — on Glue it compacts, rewrites manifests, expires snapshots and deletes orphans itself;
 * on S3 Tables, whose storage refuses Floe's deletes, it only publishes the tables' metrics and
 * keeps the service's own maintenance configured. `glue` turns on the Glue Data Catalog's table
 * optimizers (Glue catalog only). `off`: nothing scheduled. On S3 Tables the service's table
 * maintenance is always configured from the thresholds below.
 */
export interface MaintenanceContextSettings {
  readonly mode: MaintenanceSetting;
  /** A maintenance function is deployed (every mode but `off`). */
  readonly deployFunction: boolean;
  /** EventBridge schedule expression. */
  readonly schedule: string;
  /** Minutes between runs of a `rate(…)` schedule (undefined for `cron(…)`). */
  readonly intervalMinutes?: number;
  /** Unset: each table's property, else Java's default (1). */
  readonly retainLast?: number;
  /** Unset: each table's property, else Java's default (5 days). */
  readonly expireOlderThanMs?: number;
  /** Floe's orphan cleanup spares younger files (it reads the ledger for staged ones). */
  readonly orphansOlderThanMs: number;
  /**
   * Days unreferenced files are kept by the services that cannot see the ledger (Glue's orphan
   * file deletion, S3 Tables' unreferenced-file removal): at least `stagingExpirationDays`, since
   * staged work may wait that long. Undefined when staging never expires: nothing is removed.
   */
  readonly unreferencedDays?: number;
  /** Unset: each table's `write.target-file-size-bytes` (floeConfig `targetFileSizeBytes`). */
  readonly targetFileSizeBytes?: number;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  /** SmallFiles alarm: a table with at least this many data files compaction would merge. */
  readonly smallFilesAlarmFiles: number;
}

/** Athena for analysts (lib/athena.ts). */
export interface AthenaSettings {
  /** Days query results are kept in the results bucket. */
  readonly resultsExpirationDays: number;
  /**
   * S3 Tables: `ensure` creates the account's `s3tablescatalog` federated catalog (Glue
   * CreateCatalog) unless it exists; `skip` leaves the integration to the account. Glue: undefined.
   */
  readonly s3TablesCatalog?: S3TablesCatalogSetting;
}

/**
 * Lambda placement in the subnets of a VPC of the account's (`-c vpcId`, `-c vpcSubnets`): a
 * security group of the stack's own allows only HTTPS out, and, given the subnets' route tables
 * (`-c vpcRouteTables`), gateway endpoints for S3 and DynamoDB carry what the functions store.
 */
export interface VpcSettings {
  readonly vpcId: string;
  readonly subnetIds: readonly string[];
  readonly routeTableIds: readonly string[];
}

export interface AlarmSettings {
  readonly iteratorAgeMinutes: number;
  readonly freshnessMinutes: number;
  readonly topicArn?: string;
}

/** Everything the stack is built from, validated. */
export interface FloeSettings {
  readonly appType: AppType;
  readonly catalogType: CatalogType;
  readonly tableFormatVersion: 2 | 3;
  readonly stackName: string;
  /** Glue database / S3 Tables namespace. */
  readonly namespace: string;
  /**
   * Every namespace the configuration can route to (the stack's, a template's literal one,
   * consolidation rules', `allowedNamespaces`): what IAM grants (lib/namespaces.ts).
   */
  readonly namespaces: NamespaceScope;
  /** The parsed configuration (what the handlers will see). */
  readonly floeConfig: FloeConfig;
  /** `FLOE_CONFIG`: the JSON text the Lambdas get. */
  readonly floeConfigJson: string;
  /** Set exactly when `appType` is `dynamic-avro`. */
  readonly registryName?: string;
  readonly stream: StreamSettings;
  readonly ingest: IngestSettings;
  readonly committer: CommitterSettings;
  readonly storage: StorageSettings;
  readonly alarms: AlarmSettings;
  readonly maintenance: MaintenanceContextSettings;
  /** Per-table EMF metrics (`PER_TABLE_METRICS`): on, off, or the top N tables per invocation. */
  readonly perTableMetrics: PerTableMetrics;
  readonly athena: AthenaSettings;
  /** Absent: the functions run outside any VPC. */
  readonly vpc?: VpcSettings;
  /** Non-fatal remarks (e.g. format version 3 is not readable by Athena), shown at synth. */
  readonly warnings: readonly string[];
}

/** Reads one context value (`app.node.tryGetContext`). */
export type ContextReader = (key: string) => unknown;

const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;
const TABLE_BUCKET_NAME = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
const REGISTRY_NAME = /^[A-Za-z0-9_$#.-]{1,255}$/;
const DELETE_AFTER_COMMIT = 'write.metadata.delete-after-commit.enabled';
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;
const INTEGER = /^-?\d+$/;
const COMMITTED_RETENTION_HOURS = Math.floor(DEFAULT_COMMITTED_RETENTION_MS / 3_600_000);
/** Kinesis' extended retention without long-term retention pricing: 7 days. */
const MAX_STREAM_RETENTION_HOURS = 168;

/**
 * Validates the context and returns the settings, or throws one `FloeError(ConfigInvalid)` that
 * lists every problem (each naming its context key and value).
 *
 * @param read  one context value by key (`(k) => app.node.tryGetContext(k)`)
 * @param allKeys  every context key present (for the typo check); optional
 * @param cwd  where a relative `floeConfigFile` is resolved (default `process.cwd()`)
 */
export function readFloeSettings(
  read: ContextReader,
  allKeys: readonly string[] = [],
  cwd: string = process.cwd(),
): FloeSettings {
  const problems: string[] = [];
  const warnings: string[] = [];
  const problem = (key: string, message: string, ...value: unknown[]) =>
    problems.push(
      value.length > 0
        ? `context '${key}': ${message}, got ${show(value[0])}`
        : `context '${key}': ${message}`,
    );
  const raw = (key: ContextKey): unknown => {
    const v = read(key);
    return v === undefined || v === null || (typeof v === 'string' && v.trim() === '') ? undefined : v;
  };
  const given = (key: ContextKey): boolean => raw(key) !== undefined;

  // Typos: a key that normalises to a Floe key but is not spelled like one, or an unknown
  // camelCase key. CDK's own keys contain ':' or '/' or start with '@'; the CLI's few plain ones
  // are kebab-case (`acknowledged-issue-numbers`).
  const known = new Map(CONTEXT_KEYS.map((k) => [normalizeKey(k), k]));
  for (const key of allKeys) {
    if ((CONTEXT_KEYS as readonly string[]).includes(key)) continue;
    const near = known.get(normalizeKey(key));
    if (near !== undefined) problems.push(`context '${key}': unknown key (did you mean '${near}'?)`);
    else if (/^[a-z][A-Za-z0-9]*$/.test(key))
      problems.push(`context '${key}': unknown key (Floe reads ${CONTEXT_KEYS.join(', ')})`);
  }

  const oneOf = <T extends string>(key: ContextKey, values: readonly T[], fallback: T): T => {
    const v = raw(key);
    if (v === undefined) return fallback;
    const s = String(v).trim();
    if (!(values as readonly string[]).includes(s)) {
      problem(key, `expected one of ${values.join(', ')}`, v);
      return fallback;
    }
    return s as T;
  };
  const int = (key: ContextKey, fallback: number, min: number, max: number, extra?: number): number => {
    const v = raw(key);
    if (v === undefined) return fallback;
    const s = String(v).trim();
    const n = (typeof v === 'number' || typeof v === 'string') && INTEGER.test(s) ? Number(s) : Number.NaN;
    if (!Number.isSafeInteger(n) || ((n < min || n > max) && n !== extra)) {
      const also = extra === undefined ? '' : ` (or ${extra})`;
      problem(key, `expected an integer from ${min} to ${max}${also}`, v);
      return fallback;
    }
    return n;
  };
  const optInt = (key: ContextKey, min: number, max: number): number | undefined =>
    given(key) ? int(key, min, min, max) : undefined;
  const bool = (key: ContextKey): boolean | undefined => {
    const v = raw(key);
    if (v === undefined) return undefined;
    if (v === true || v === 'true') return true;
    if (v === false || v === 'false') return false;
    problem(key, 'expected true or false', v);
    return undefined;
  };
  const str = (key: ContextKey): string | undefined => {
    const v = raw(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'string') {
      problem(key, 'expected a string', v);
      return undefined;
    }
    return v.trim();
  };
  const list = (key: ContextKey): string[] | undefined => {
    const v = raw(key);
    if (v === undefined) return undefined;
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.map((x) => x.trim());
    if (typeof v === 'string')
      return v
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
    problem(key, 'expected a comma-separated list (or an array of strings)', v);
    return undefined;
  };

  // ---- what is deployed
  const appType = oneOf('appType', APP_TYPES, 'dynamic');
  const catalogType = oneOf('catalogType', CATALOG_TYPES, 'glue');
  const tableFormatVersion = oneOf('tableFormatVersion', ['2', '3'], '2') === '3' ? 3 : 2;
  const avro = appType === 'dynamic-avro';

  const stackName = str('stackName') ?? 'Floe';
  if (!STACK_NAME.test(stackName))
    problem(
      'stackName',
      'expected a CloudFormation stack name ([A-Za-z][A-Za-z0-9-]*, at most 128)',
      stackName,
    );

  // ---- the Floe configuration
  let document: Record<string, unknown> = {};
  if (given('floeConfig') && given('floeConfigFile')) {
    problem(
      'floeConfigFile',
      "give either 'floeConfig' or 'floeConfigFile', not both",
      raw('floeConfigFile'),
    );
  } else if (given('floeConfig')) {
    document = objectDocument('floeConfig', raw('floeConfig'), problem) ?? {};
  } else if (given('floeConfigFile')) {
    const file = str('floeConfigFile');
    if (file !== undefined) {
      let text: string | undefined;
      try {
        text = readFileSync(resolve(cwd, file), 'utf8');
      } catch (e) {
        problem(
          'floeConfigFile',
          `cannot read the file (${e instanceof Error ? e.message : String(e)})`,
          file,
        );
      }
      if (text !== undefined) document = objectDocument('floeConfigFile', text, problem) ?? {};
    }
  }
  const docKey = given('floeConfigFile') ? 'floeConfigFile' : 'floeConfig';

  // The stack decides format, formatVersion and namespace; a document saying otherwise is an error.
  const format = avro ? 'avro-gsr' : 'json';
  if (document.format !== undefined && document.format !== format) {
    problem(
      docKey,
      `its format ${show(document.format)} contradicts appType=${appType} (which means format ${show(format)}); drop it from the document`,
    );
  }
  if (document.formatVersion !== undefined && document.formatVersion !== tableFormatVersion) {
    problem(
      docKey,
      `its formatVersion ${show(document.formatVersion)} contradicts tableFormatVersion=${tableFormatVersion}; set the version with -c tableFormatVersion`,
    );
  }
  const formatVersion = tableFormatVersion;

  const derivedNamespace = namespaceFrom(stackName);
  const contextNamespace = str('namespace');
  if (
    contextNamespace !== undefined &&
    typeof document.namespace === 'string' &&
    document.namespace !== contextNamespace
  ) {
    problem(docKey, `its namespace ${show(document.namespace)} contradicts namespace=${contextNamespace}`);
  }
  const namespace =
    contextNamespace ?? (typeof document.namespace === 'string' ? document.namespace : derivedNamespace);
  if (contextNamespace !== undefined) checkPart('namespace', { namespace: contextNamespace }, problem);
  if (namespace === 'default') {
    problem(
      'namespace',
      "'default' is Athena's and Glue's shared default database; the stack creates its database and needs a name of its own",
      namespace,
    );
  }

  const jsonFallback = bool('jsonFallback');
  if (jsonFallback !== undefined && !avro)
    problem(
      'jsonFallback',
      'only applies to appType=dynamic-avro (a JSON stream reads JSON anyway)',
      jsonFallback,
    );

  // Routing and partitioning from context keys, each checked on its own so its error names it.
  const routing: Record<string, unknown> = {};
  const routingKey = (key: ContextKey, field: string, value: unknown) => {
    if (value === undefined) return;
    if (checkPart(key, { routing: { [field]: value } }, problem)) routing[field] = value;
  };
  routingKey('routingField', 'routingField', str('routingField'));
  routingKey('tableField', 'tableField', str('tableField'));
  routingKey('tableTemplate', 'template', str('tableTemplate'));
  const suffix = raw('tableSuffix');
  // `-c tableSuffix=` cannot say "empty"; `none` does.
  routingKey(
    'tableSuffix',
    'suffix',
    suffix === undefined ? undefined : suffix === 'none' ? '' : str('tableSuffix'),
  );
  const defaultTable = raw('defaultTable');
  routingKey(
    'defaultTable',
    'defaultTable',
    defaultTable === undefined ? undefined : defaultTable === 'none' ? null : str('defaultTable'),
  );
  routingKey('allowList', 'allowList', list('allowList'));
  const avroRouteBy = given('avroRouteBy')
    ? oneOf('avroRouteBy', ['schema-name', 'fields'], 'schema-name')
    : undefined;
  if (avroRouteBy !== undefined && !avro)
    problem('avroRouteBy', 'only applies to appType=dynamic-avro', avroRouteBy);
  else routingKey('avroRouteBy', 'avroRouteBy', avroRouteBy);
  const candidates = list('partitionCandidates');
  if (candidates !== undefined) checkPart('partitionCandidates', { partitioning: { candidates } }, problem);

  const merged: Record<string, unknown> = {
    ...document,
    format,
    ...(avro ? { jsonFallback: jsonFallback ?? (document.jsonFallback as boolean | undefined) ?? true } : {}),
    namespace,
    formatVersion,
  };
  if (Object.keys(routing).length > 0) merged.routing = { ...asObject(document.routing), ...routing };
  if (candidates !== undefined) merged.partitioning = { ...asObject(document.partitioning), candidates };

  // S3 Tables: table storage refuses deletes, and the service removes old metadata files itself
  // (unreferenced-file removal), so new tables do not clean metadata up after each commit.
  if (catalogType === 's3tables') {
    const properties = asObject(document.tableProperties);
    const v = properties[DELETE_AFTER_COMMIT];
    if (v !== undefined && v !== 'false') {
      problem(
        docKey,
        `tableProperties '${DELETE_AFTER_COMMIT}' must be "false" on S3 Tables: table storage refuses deletes, and S3 Tables removes files no snapshot needs itself`,
      );
    }
    merged.tableProperties = { ...properties, [DELETE_AFTER_COMMIT]: 'false' };
  }

  const parse = (): FloeConfig | undefined => {
    try {
      return parseConfig(merged);
    } catch (e) {
      if (!isFloeError(e, ErrorKind.ConfigInvalid)) throw e;
      problems.push(`context '${docKey}': ${e.message}`);
      return undefined;
    }
  };
  let floeConfig = parse();

  // The namespaces the configuration can reach: what IAM grants (lib/namespaces.ts).
  let allowed: { names: string[]; prefixes: string[] } | undefined;
  const allowedList = list('allowedNamespaces');
  if (allowedList !== undefined) {
    const a = parseAllowedNamespaces(allowedList);
    if (a.bad.length > 0)
      problem(
        'allowedNamespaces',
        "expected namespaces ([a-z0-9_], not starting with 'aws') or prefixes ending in * (tenant_*)",
        a.bad.join(','),
      );
    allowed = a;
  }
  let namespaces: NamespaceScope = { names: [namespace], prefixes: [] };
  if (floeConfig !== undefined) {
    const reach = reachableNamespaces(floeConfig, allowed);
    const templateKey = given('tableTemplate') ? 'tableTemplate' : docKey;
    for (const p of reach.problems)
      problem(p.about === 'template' ? templateKey : 'allowedNamespaces', p.message);
    namespaces = reach.scope;
    if (reach.allowTables !== undefined) {
      // The Lambdas hold the routing to the granted namespaces (dead letters, never AccessDenied).
      merged.guards = { ...asObject(document.guards), allowTables: reach.allowTables };
      floeConfig = parse();
    }
  }
  const floeConfigJson = JSON.stringify(merged);
  if (formatVersion === 3) {
    warnings.push(
      'tableFormatVersion=3: new tables are Iceberg format version 3, which Athena does not read (DESIGN §5: v3 is opt-in); keep 2 to query the tables with Athena',
    );
  }

  // ---- the stream and the ingest
  const streamMode = oneOf('streamMode', STREAM_MODES, 'on-demand');
  const compliance = oneOf('compliance', COMPLIANCE_SETTINGS, 'default');
  const strict = compliance === 'strict';
  const streamEncryption = oneOf(
    'streamEncryption',
    STREAM_ENCRYPTIONS,
    strict ? 'customer-managed' : 'aws-managed',
  );
  if (strict && streamEncryption !== 'customer-managed')
    problem(
      'streamEncryption',
      'compliance=strict encrypts the stream with the stack’s key',
      raw('streamEncryption'),
    );
  let shardCount: number | undefined;
  if (streamMode === 'provisioned') shardCount = int('shardCount', 1, 1, 10_000);
  else if (given('shardCount'))
    problem(
      'shardCount',
      'only applies to streamMode=provisioned (on-demand streams scale their shards)',
      raw('shardCount'),
    );
  const retentionHours = int('streamRetentionHours', 24, 24, MAX_STREAM_RETENTION_HOURS);
  if (retentionHours >= COMMITTED_RETENTION_HOURS) {
    // Unreachable with the 168 h cap today; kept so raising the cap cannot break exactly-once.
    problem(
      'streamRetentionHours',
      `must stay below the ledger's retention of committed entries (${COMMITTED_RETENTION_HOURS} h)`,
      retentionHours,
    );
  }
  // How soon a table is committed after its data is staged (the committer's cadence, below).
  if (raw('commitIntervalSeconds') !== undefined && raw('commitIntervalMinutes') !== undefined) {
    problem('commitIntervalSeconds', 'give commitIntervalSeconds or commitIntervalMinutes, not both');
  }
  const intervalSeconds =
    raw('commitIntervalSeconds') !== undefined
      ? int('commitIntervalSeconds', 60, 5, 3600)
      : int('commitIntervalMinutes', 1, 1, 60) * 60;
  if (intervalSeconds > 60 && intervalSeconds % 60 !== 0) {
    problem(
      'commitIntervalSeconds',
      'must be 5 to 60, or a whole number of minutes (an EventBridge rate)',
      raw('commitIntervalSeconds'),
    );
  }
  const ingest: IngestSettings = {
    batchSize: int('batchSize', 10_000, 1, 10_000),
    // Records wait up to the batching window before the ingest sees them: a seconds-fresh stack
    // waits no longer than one commit interval.
    batchingWindowSeconds: int('batchingWindowSeconds', Math.min(15, intervalSeconds), 0, 300),
    retryAttempts: int('retryAttempts', 10, 0, 10_000),
    maxRecordAgeSeconds: int('maxRecordAgeSeconds', 86_400, 60, 604_800, -1),
    memoryMb: int('ingestMemoryMb', 1536, 512, 10_240),
    timeoutSeconds: int('ingestTimeoutSeconds', 120, 10, 900),
    ...optional('tableCacheRefreshSeconds', optInt('tableCacheRefreshSeconds', 0, 86_400)),
  };

  // ---- the committer
  const committerTimeoutSeconds = int('committerTimeoutSeconds', 300, 30, 900);
  // A sub-minute interval keeps each run committing for its minute, then finishing a pass.
  if (intervalSeconds < 60 && committerTimeoutSeconds < 120) {
    problem(
      'committerTimeoutSeconds',
      `must be at least 120 with commitIntervalSeconds=${intervalSeconds} (each run commits for a minute)`,
      committerTimeoutSeconds,
    );
  }
  const committer: CommitterSettings = {
    intervalMinutes: Math.max(1, Math.floor(intervalSeconds / 60)),
    intervalSeconds,
    tablesPerSlice: int('commitTablesPerSlice', DEFAULT_TABLES_PER_SLICE, 1, 100_000),
    maxSlices: int('commitMaxSlices', DEFAULT_MAX_SLICES, 1, 1_000),
    memoryMb: int('committerMemoryMb', 1024, 512, 10_240),
    timeoutSeconds: committerTimeoutSeconds,
    commitConcurrency: int('commitConcurrency', DEFAULT_COMMIT_CONCURRENCY, 1, 64),
    // No reservation by default: an account keeps 100 executions unreserved, so one whose quota is
    // 10 (new accounts) cannot reserve any and the deploy would fail. Runs are one at a time anyway
    // (a run lease in the ledger table: lambdas/src/handlers/run-lease.ts).
    reservedConcurrency: int('committerReservedConcurrency', 0, 0, 1) === 0 ? 0 : 1,
    ...optional('leaseSeconds', optInt('leaseSeconds', 1, 900)),
  };

  // ---- storage
  const stagingExpirationDays = int('stagingExpirationDays', 30, 7, 3650, 0);
  const removal = oneOf('removalPolicy', REMOVAL_POLICIES, 'retain');
  let tableBucketName: string | undefined;
  if (catalogType === 's3tables') {
    tableBucketName = str('tableBucketName') ?? `${stackName.toLowerCase()}-tables`;
    if (!TABLE_BUCKET_NAME.test(tableBucketName) || tableBucketName.includes('--'))
      problem(
        'tableBucketName',
        'expected 3-63 of [a-z0-9-], starting and ending with a letter or digit',
        tableBucketName,
      );
  } else if (given('tableBucketName')) {
    problem('tableBucketName', 'only applies to catalogType=s3tables', raw('tableBucketName'));
  }
  const storage: StorageSettings = {
    stagingExpirationDays,
    deadLetterExpirationDays: int('deadLetterExpirationDays', 365, 1, 3650, 0),
    failedBatchRetentionDays: int('failedBatchRetentionDays', 14, 1, 14),
    logRetentionDays: int('logRetentionDays', strict ? 365 : 30, 1, 3653),
    removal,
    ...optional('tableBucketName', tableBucketName),
    compliance,
  };
  if (!(LOG_RETENTION_DAYS as readonly number[]).includes(storage.logRetentionDays)) {
    problem('logRetentionDays', `expected one of ${LOG_RETENTION_DAYS.join(', ')}`, raw('logRetentionDays'));
  }

  // ---- the schema registry
  let registryName: string | undefined;
  if (avro) {
    registryName = str('registryName') ?? `${stackName}-schemas`;
    if (!REGISTRY_NAME.test(registryName))
      problem('registryName', 'expected a Glue registry name ([A-Za-z0-9_$#.-], at most 255)', registryName);
  } else if (given('registryName')) {
    problem(
      'registryName',
      'only applies to appType=dynamic-avro (a JSON stream needs no registry)',
      raw('registryName'),
    );
  }

  // ---- alarms
  const topicArn = str('alarmTopicArn');
  if (topicArn !== undefined && !SNS_TOPIC_ARN.test(topicArn))
    problem('alarmTopicArn', 'expected an SNS topic ARN', topicArn);
  const alarms: AlarmSettings = {
    iteratorAgeMinutes: int('iteratorAgeAlarmMinutes', 10, 1, 10_080),
    freshnessMinutes: int('freshnessAlarmMinutes', 15, 1, 10_080),
    ...optional('topicArn', topicArn),
  };

  // ---- VPC placement
  let vpc: VpcSettings | undefined;
  const vpcId = str('vpcId');
  const subnetIds = list('vpcSubnets');
  const routeTableIds = list('vpcRouteTables');
  if (vpcId !== undefined && !/^vpc-[0-9a-f]{8,17}$/.test(vpcId))
    problem('vpcId', 'expected a VPC id (vpc-…)', vpcId);
  if (subnetIds?.some((id) => !/^subnet-[0-9a-f]{8,17}$/.test(id)))
    problem('vpcSubnets', 'expected subnet ids (subnet-…), comma-separated', raw('vpcSubnets'));
  if (routeTableIds?.some((id) => !/^rtb-[0-9a-f]{8,17}$/.test(id)))
    problem('vpcRouteTables', 'expected route table ids (rtb-…), comma-separated', raw('vpcRouteTables'));
  if ((vpcId === undefined) !== (subnetIds === undefined || subnetIds.length === 0))
    problem(
      vpcId === undefined ? 'vpcId' : 'vpcSubnets',
      'give both -c vpcId and -c vpcSubnets to place the functions in a VPC',
      vpcId ?? raw('vpcSubnets'),
    );
  else if (vpcId !== undefined && subnetIds !== undefined)
    vpc = { vpcId, subnetIds, routeTableIds: routeTableIds ?? [] };
  else if (routeTableIds !== undefined)
    problem('vpcRouteTables', 'only applies with -c vpcSubnets', raw('vpcRouteTables'));
  if (vpc !== undefined && vpc.routeTableIds.length === 0)
    warnings.push(
      'vpcSubnets without vpcRouteTables: the stack creates no S3 or DynamoDB gateway endpoint, so the subnets need a route to them (and to Glue or S3 Tables) of their own',
    );

  // ---- maintenance
  const maintenance = readMaintenance(
    { raw, given, int, problem, warnings },
    catalogType,
    stagingExpirationDays,
  );

  // ---- per-table metrics
  let perTableMetrics: PerTableMetrics = DEFAULT_PER_TABLE_METRICS;
  const pv = raw('perTableMetrics');
  if (pv !== undefined) {
    const parsed = parsePerTableMetrics(String(pv));
    if (parsed === undefined)
      problem('perTableMetrics', `expected on, off or top:N (N from 1 to ${MAX_TOP_TABLES})`, pv);
    else perTableMetrics = parsed;
  }

  // ---- Athena
  let s3TablesCatalog: S3TablesCatalogSetting | undefined;
  if (catalogType === 's3tables')
    s3TablesCatalog = oneOf('s3TablesCatalog', S3_TABLES_CATALOG_SETTINGS, 'ensure');
  else if (given('s3TablesCatalog'))
    problem('s3TablesCatalog', 'only applies to catalogType=s3tables', raw('s3TablesCatalog'));
  const athena: AthenaSettings = {
    resultsExpirationDays: int('athenaResultsExpirationDays', 30, 1, 3650),
    ...optional('s3TablesCatalog', s3TablesCatalog),
  };

  // The committer and the maintenance function carry FLOE_CONFIG and the maintenance variables
  // (with the namespaces maintenance visits) in one 4 KB environment each.
  const configLimit =
    MAX_FLOE_CONFIG_BYTES - maintenanceEnvBytes(maintenance, catalogType, namespacePatterns(namespaces));
  if (Buffer.byteLength(floeConfigJson) > configLimit) {
    problems.push(
      `context '${docKey}': the Floe configuration is ${Buffer.byteLength(floeConfigJson)} bytes as JSON; ` +
        `Lambda allows 4 KB for all environment variables, so FLOE_CONFIG may take at most ${configLimit}`,
    );
  }

  if (problems.length > 0) {
    throw new FloeError(ErrorKind.ConfigInvalid, `invalid CDK context:\n  - ${problems.join('\n  - ')}`, {
      context: { problems },
    });
  }
  return {
    appType,
    catalogType,
    tableFormatVersion: formatVersion,
    stackName,
    namespace,
    namespaces,
    floeConfig: floeConfig!,
    floeConfigJson,
    ...optional('registryName', registryName),
    stream: {
      mode: streamMode,
      ...optional('shardCount', shardCount),
      retentionHours,
      encryption: streamEncryption,
    },
    ingest,
    committer,
    storage,
    alarms,
    maintenance,
    perTableMetrics,
    athena,
    ...optional('vpc', vpc),
    warnings,
  };
}

/** `top:10`: per-table series for the ten busiest tables per invocation (README "Metrics and cost"). */
export const DEFAULT_PER_TABLE_METRICS: PerTableMetrics = { mode: 'top', n: 10 };

/** `PER_TABLE_METRICS` for the functions. */
export function perTableMetricsEnv(settings: FloeSettings): Record<string, string> {
  return { PER_TABLE_METRICS: formatPerTableMetrics(settings.perTableMetrics) };
}

interface Readers {
  readonly raw: (key: ContextKey) => unknown;
  readonly given: (key: ContextKey) => boolean;
  readonly int: (key: ContextKey, fallback: number, min: number, max: number) => number;
  readonly problem: (key: string, message: string, ...value: unknown[]) => void;
  readonly warnings: string[];
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MIB = 1024 * 1024;
/** `rate(1 hour)`, `rate(30 minutes)`, `rate(2 days)`: EventBridge wants the singular for 1. */
const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const CRON = /^cron\((\S+ ){5}\S+\)$/;
const SIZE = /^(\d+)(B|KiB|MiB|GiB)?$/;
const SIZE_UNIT = { B: 1, KiB: 1024, MiB: MIB, GiB: 1024 * MIB } as const;
const RATE_MINUTES = { minute: 1, hour: 60, day: 1440 } as const;
/** Keys that only matter when a maintenance function is deployed. */
const FUNCTION_KEYS = [
  'maintenanceSchedule',
  'maintenanceMemoryMb',
  'maintenanceTimeoutSeconds',
  'smallFilesAlarmFiles',
] as const;
const THRESHOLD_KEYS = [
  'maintenanceRetainLast',
  'maintenanceExpireOlderThan',
  'maintenanceOrphansOlderThan',
  'maintenanceTargetFileSize',
] as const;

function readMaintenance(
  r: Readers,
  catalogType: CatalogType,
  stagingExpirationDays: number,
): MaintenanceContextSettings {
  const { raw, given, int, problem } = r;
  let mode: MaintenanceSetting = 'floe';
  const v = raw('maintenance');
  if (v !== undefined) {
    const s = String(v).trim();
    if ((MAINTENANCE_SETTINGS as readonly string[]).includes(s)) mode = s as MaintenanceSetting;
    else problem('maintenance', `expected one of ${MAINTENANCE_SETTINGS.join(', ')}`, v);
  }
  if (mode === 'glue' && catalogType === 's3tables') {
    problem(
      'maintenance',
      "'glue' turns on the Glue Data Catalog's table optimizers, which do not apply to S3 Tables (it maintains its tables itself): use floe (metrics and the service's maintenance configured) or off",
      v,
    );
  }
  const deployFunction = mode !== 'off';
  if (!deployFunction) {
    for (const key of FUNCTION_KEYS)
      if (given(key))
        problem(
          key,
          'only applies when a maintenance function is deployed (maintenance=floe or glue)',
          raw(key),
        );
    if (catalogType === 'glue')
      for (const key of THRESHOLD_KEYS)
        if (given(key))
          problem(key, 'nothing maintains the tables with maintenance=off on the Glue catalog', raw(key));
  }

  // Schedule.
  let schedule = 'rate(1 hour)';
  let intervalMinutes: number | undefined = 60;
  const sv = raw('maintenanceSchedule');
  if (sv !== undefined) {
    const s = String(sv).trim();
    const m = RATE.exec(s);
    const n = m ? Number(m[1]) : Number.NaN;
    const unit = m?.[2];
    if (m && n >= 1 && (n === 1) === !unit!.endsWith('s')) {
      intervalMinutes = n * RATE_MINUTES[unit!.replace(/s$/, '') as keyof typeof RATE_MINUTES];
      schedule = s;
      if (intervalMinutes < 5) problem('maintenanceSchedule', 'runs at most every 5 minutes', sv);
    } else if (CRON.test(s)) {
      schedule = s;
      intervalMinutes = undefined;
    } else {
      problem(
        'maintenanceSchedule',
        'expected an EventBridge schedule: rate(1 hour), rate(6 hours), rate(30 minutes), rate(1 day) or cron(…) with six fields',
        sv,
      );
    }
  }

  // Thresholds.
  const retainLast = given('maintenanceRetainLast') ? int('maintenanceRetainLast', 1, 1, 1000) : undefined;
  const duration = (key: ContextKey, min: number, minText: string): number | undefined => {
    const d = raw(key);
    if (d === undefined) return undefined;
    let ms: number;
    try {
      ms = parseDuration(String(d).trim(), key);
    } catch {
      problem(key, 'expected a whole number and a unit s, m, h, d or w (e.g. 12h, 5d, 2w)', d);
      return undefined;
    }
    if (ms < min) {
      problem(key, `must be at least ${minText}`, d);
      return undefined;
    }
    return ms;
  };
  const expireOlderThanMs = duration('maintenanceExpireOlderThan', HOUR_MS, '1h');
  // Below an hour a commit in flight could lose its files (the CLI warns at the same age).
  const orphansGiven = duration('maintenanceOrphansOlderThan', HOUR_MS, '1h');
  const orphansOlderThanMs = orphansGiven ?? 3 * DAY_MS;
  const orphanDays = Math.ceil(orphansOlderThanMs / DAY_MS);
  const unreferencedDays =
    stagingExpirationDays > 0 ? Math.max(stagingExpirationDays, orphanDays) : undefined;
  if (
    mode === 'glue' &&
    catalogType === 'glue' &&
    orphansGiven !== undefined &&
    unreferencedDays !== orphanDays
  ) {
    r.warnings.push(
      unreferencedDays === undefined
        ? "maintenanceOrphansOlderThan: Glue's orphan file deletion is not set up, since staging never expires (stagingExpirationDays=0) and Glue cannot see which files the ledger still needs"
        : `maintenanceOrphansOlderThan: Glue's orphan file deletion keeps files ${unreferencedDays} days (stagingExpirationDays), not ${orphanDays}: it cannot see which staged files the ledger still needs`,
    );
  }

  let targetFileSizeBytes: number | undefined;
  const tv = raw('maintenanceTargetFileSize');
  if (tv !== undefined) {
    const m = SIZE.exec(String(tv).trim());
    const bytes = m ? Number(m[1]) * SIZE_UNIT[(m[2] ?? 'B') as keyof typeof SIZE_UNIT] : Number.NaN;
    if (!Number.isSafeInteger(bytes) || bytes < MIB || bytes > 4096 * MIB) {
      problem(
        'maintenanceTargetFileSize',
        'expected a size from 1MiB to 4GiB: bytes, or a number with KiB, MiB or GiB (e.g. 256MiB)',
        tv,
      );
    } else if (
      catalogType === 's3tables' &&
      (bytes < S3TABLES_MIN_TARGET_MB * MIB || bytes > S3TABLES_MAX_TARGET_MB * MIB)
    ) {
      problem(
        'maintenanceTargetFileSize',
        `S3 Tables compacts to ${S3TABLES_MIN_TARGET_MB}MiB–${S3TABLES_MAX_TARGET_MB}MiB`,
        tv,
      );
    } else if (mode === 'glue' && catalogType === 'glue') {
      problem(
        'maintenanceTargetFileSize',
        "Glue's compaction reads each table's write.target-file-size-bytes: set targetFileSizeBytes in floeConfig instead",
        tv,
      );
    } else targetFileSizeBytes = bytes;
  }

  return {
    mode,
    deployFunction,
    schedule,
    ...optional('intervalMinutes', intervalMinutes),
    ...optional('retainLast', retainLast),
    ...optional('expireOlderThanMs', expireOlderThanMs),
    orphansOlderThanMs,
    ...optional('unreferencedDays', unreferencedDays),
    ...optional('targetFileSizeBytes', targetFileSizeBytes),
    memoryMb: int('maintenanceMemoryMb', 2048, 512, 10_240),
    timeoutSeconds: int('maintenanceTimeoutSeconds', 600, 60, 900),
    smallFilesAlarmFiles: int('smallFilesAlarmFiles', 1000, 1, 10_000_000),
  };
}

/** `readFloeSettings` from a CDK app or any construct's context. */
export function settingsFromContext(node: {
  tryGetContext(key: string): unknown;
  getAllContext(): Record<string, unknown>;
}): FloeSettings {
  return readFloeSettings((k) => node.tryGetContext(k), Object.keys(node.getAllContext()));
}

/** `Floe` → `floe`; `My-Lake2` → `my_lake2` (a legal Glue database / S3 Tables namespace). */
export function namespaceFrom(stackName: string): string {
  let ns = stackName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (ns === '' || ns.startsWith('aws')) ns = `floe_${ns}`.replace(/_+$/, '');
  return ns;
}

function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

function asObject(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function objectDocument(
  key: string,
  v: unknown,
  problem: (key: string, message: string, ...value: unknown[]) => void,
): Record<string, unknown> | undefined {
  let doc = v;
  if (typeof v === 'string') {
    try {
      doc = JSON.parse(v);
    } catch (e) {
      problem(key, `is not JSON (${e instanceof Error ? e.message : String(e)})`, v);
      return undefined;
    }
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    problem(key, 'expected a JSON object (the content of floe.config.json)', v);
    return undefined;
  }
  return doc as Record<string, unknown>;
}

/** Validates one fragment of the configuration, attributing its error to the context key. */
function checkPart(
  key: string,
  fragment: Record<string, unknown>,
  problem: (key: string, message: string) => void,
): boolean {
  try {
    parseConfig(fragment);
    return true;
  } catch (e) {
    if (!isFloeError(e, ErrorKind.ConfigInvalid)) throw e;
    problem(key, e.message);
    return false;
  }
}

function optional<K extends string, V>(key: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [key]: v }) as { [P in K]?: V };
}

function show(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}
