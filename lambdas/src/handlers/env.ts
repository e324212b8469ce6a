/**
 * The Lambda environment of the ingest and committer functions, read and validated once at cold
 * start (DESIGN §2 "Handlers", §6). Every problem is reported at once in one
 * `FloeError(ConfigInvalid)` whose message names each offending variable and its value, so a
 * misconfigured stack fails its first invocation with a readable error instead of misbehaving.
 *
 * | variable | meaning |
 * |---|---|
 * | `FLOE_CONFIG` | JSON text of `floe.config.json` (optional, default `{}`) |
 * | `CATALOG_TYPE` | `glue` (default) or `s3tables` |
 * | `WAREHOUSE_URI` | `s3://bucket/prefix` where Glue tables live (required for `glue`) |
 * | `TABLE_BUCKET_ARN` | `arn:aws:s3tables:<region>:<account>:bucket/<name>` (required for `s3tables`) |
 * | `STAGING_URI` | `s3://bucket/prefix` for pending fragments (required) |
 * | `DEAD_LETTER_URI` | `s3://bucket/prefix` of the dead-letter store (required) |
 * | `LEDGER_TABLE` | DynamoDB table of the ledger and the commit locks (required) |
 * | `SCHEMA_REGISTRY_NAME` | Glue Schema Registry name (required when the config's format is `avro-gsr`) |
 * | `TABLE_CACHE_REFRESH_MS` | ingest's table metadata cache refresh (default 30000) |
 * | `COMMIT_CONCURRENCY` | tables committed at once (default 8) |
 * | `LEASE_MS` | commit lease per table (default 120000) |
 * | `AWS_REGION` | set by Lambda (`AWS_DEFAULT_REGION` is accepted as a fallback) |
 * | `MAINTENANCE`, `MAINTENANCE_*`, `GLUE_OPTIMIZER_ROLE_ARN`, `GLUE_CATALOG_ID` | see maintenance-env.ts |
 * | `COMMIT_SCHEDULE_MS`, `COMMIT_INTERVAL_MS`, `COMMIT_TABLES_PER_SLICE`, `COMMIT_MAX_SLICES` | the committer's cadence and fan-out (default one pass a minute, 250 tables a slice, at most 20 slices) |
 * | `MAINTENANCE_FUNCTION`, `COMPACT_AT_FILES`, `COMPACT_COOLDOWN_MS` | committer: ask that function to maintain a table once it holds that many data files, small on average (default 500), at most once per cooldown (default 600000) |
 * | `COMMIT_FANOUT_FUNCTION` | the function slices are dispatched to (default `AWS_LAMBDA_FUNCTION_NAME`, the committer itself) |
 * | `PER_TABLE_METRICS` | `on` (default), `off` or `top:N`: read by the handlers' entry points, see table-metrics.ts |
 *
 * Pure: takes the environment as a plain record (default `process.env`) and imports no SDK.
 */
import { DEFAULT_COMPACT_AT_FILES, DEFAULT_COMPACT_COOLDOWN_MS } from '../app/commit-compaction.ts';
import { DEFAULT_MAX_SLICES, DEFAULT_TABLES_PER_SLICE } from '../app/commit-slices.ts';
import { type FloeConfig, parseConfig } from '../config.ts';
import { ErrorKind, FloeError, isFloeError } from '../errors.ts';
import { type MaintenanceSettings, readMaintenanceEnv } from './maintenance-env.ts';

export type Env = Readonly<Record<string, string | undefined>>;

export type CatalogSettings =
  | { readonly type: 'glue'; readonly warehouseUri: string }
  | { readonly type: 's3tables'; readonly tableBucketArn: string };

export interface HandlerSettings {
  readonly config: FloeConfig;
  readonly catalog: CatalogSettings;
  /** Where pending fragments go (no trailing slash). */
  readonly stagingUri: string;
  /** Folder of the dead-letter store (no trailing slash). */
  readonly deadLetterUri: string;
  readonly ledgerTable: string;
  /** Set exactly when `config.format` is `avro-gsr`. */
  readonly schemaRegistryName?: string;
  readonly tableCacheRefreshMs: number;
  readonly commitConcurrency: number;
  /**
   * The committer's cadence and fan-out: `COMMIT_SCHEDULE_MS` (the schedule's period, default
   * 60 s), `COMMIT_INTERVAL_MS` (default the period; 5,000 or more), `COMMIT_TABLES_PER_SLICE`
   * (default 250), `COMMIT_MAX_SLICES` (default 20; 1: no fan-out).
   */
  readonly commitSchedule: {
    readonly scheduleMs: number;
    readonly intervalMs: number;
    readonly tablesPerSlice: number;
    readonly maxSlices: number;
  };
  /** The function slices are dispatched to: `COMMIT_FANOUT_FUNCTION`, else this function itself. */
  readonly fanoutFunction?: string;
  /**
   * Compaction asked for by file count (committer): `MAINTENANCE_FUNCTION` (set: on),
   * `COMPACT_AT_FILES` (default 500), `COMPACT_COOLDOWN_MS` (default 10 minutes).
   */
  readonly compaction?: {
    readonly functionName: string;
    readonly atFiles: number;
    readonly cooldownMs: number;
  };
  readonly leaseMs: number;
  readonly region: string;
  readonly maintenance: MaintenanceSettings;
}

export const DEFAULT_TABLE_CACHE_REFRESH_MS = 30_000;
/** Commits are round trips more than work (bench/commit-scale.ts: ~0.5 s of waits, ~15 ms CPU). */
export const DEFAULT_COMMIT_CONCURRENCY = 8;
export const DEFAULT_LEASE_MS = 120_000;
/** The committer schedule's period: EventBridge's one-minute floor. */
export const DEFAULT_SCHEDULE_MS = 60_000;

const S3_URI = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](?:\/.*)?$/;
const TABLE_BUCKET_ARN =
  /^arn:aws[a-z-]*:s3tables:[a-z0-9-]+:\d{12}:bucket\/[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
const DYNAMO_TABLE = /^[A-Za-z0-9_.-]{3,255}$/;
const REGISTRY_NAME = /^[A-Za-z0-9_$#.-]{1,255}$/;
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d+$/;
const DECIMAL = /^\d+$/;

/** Shown values are cut to this many characters (FLOE_CONFIG may be long). */
const MAX_SHOWN = 200;

/** Reads and validates the handler settings; throws one ConfigInvalid error listing every problem. */
export function readSettings(env: Env = process.env): HandlerSettings {
  const problems: { variable: string; message: string }[] = [];
  const problem = (variable: string, message: string) => problems.push({ variable, message });
  const get = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const required = (name: string, why = 'is required'): string | undefined => {
    const v = get(name);
    if (v === undefined) problem(name, `${name} ${why}`);
    return v;
  };
  const s3Uri = (name: string, v: string | undefined): string | undefined => {
    if (v === undefined) return undefined;
    if (!S3_URI.test(v)) {
      problem(name, `${name}=${show(v)} is not an s3://bucket/prefix URI`);
      return undefined;
    }
    return v.replace(/\/+$/, '');
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const v = get(name);
    if (v === undefined) return fallback;
    const n = DECIMAL.test(v) ? Number(v) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      problem(name, `${name}=${show(v)} is not an integer between ${min} and ${max}`);
      return fallback;
    }
    return n;
  };

  // The Floe configuration.
  let config: FloeConfig | undefined;
  const configText = get('FLOE_CONFIG') ?? '{}';
  let configJson: unknown;
  let parsed = false;
  try {
    configJson = JSON.parse(configText);
    parsed = true;
  } catch (e) {
    problem(
      'FLOE_CONFIG',
      `FLOE_CONFIG=${show(configText)} is not JSON (${e instanceof Error ? e.message : String(e)})`,
    );
  }
  if (parsed) {
    try {
      config = parseConfig(configJson);
    } catch (e) {
      if (!isFloeError(e, ErrorKind.ConfigInvalid)) throw e;
      problem('FLOE_CONFIG', `FLOE_CONFIG: ${e.message}`);
    }
  }

  // The catalog.
  const catalogType = get('CATALOG_TYPE') ?? 'glue';
  let catalog: CatalogSettings | undefined;
  if (catalogType === 'glue') {
    const warehouseUri = s3Uri(
      'WAREHOUSE_URI',
      required('WAREHOUSE_URI', 'is required when CATALOG_TYPE=glue'),
    );
    if (warehouseUri !== undefined) catalog = { type: 'glue', warehouseUri };
  } else if (catalogType === 's3tables') {
    const arn = required('TABLE_BUCKET_ARN', 'is required when CATALOG_TYPE=s3tables');
    if (arn !== undefined && !TABLE_BUCKET_ARN.test(arn)) {
      problem(
        'TABLE_BUCKET_ARN',
        `TABLE_BUCKET_ARN=${show(arn)} is not an arn:aws:s3tables:<region>:<account>:bucket/<name> ARN`,
      );
    } else if (arn !== undefined) catalog = { type: 's3tables', tableBucketArn: arn };
  } else {
    problem('CATALOG_TYPE', `CATALOG_TYPE=${show(catalogType)} is not one of glue, s3tables`);
  }

  const stagingUri = s3Uri('STAGING_URI', required('STAGING_URI'));
  const deadLetterUri = s3Uri('DEAD_LETTER_URI', required('DEAD_LETTER_URI'));

  const ledgerTable = required('LEDGER_TABLE');
  if (ledgerTable !== undefined && !DYNAMO_TABLE.test(ledgerTable))
    problem('LEDGER_TABLE', `LEDGER_TABLE=${show(ledgerTable)} is not a DynamoDB table name`);

  let schemaRegistryName: string | undefined;
  if (config?.format === 'avro-gsr') {
    schemaRegistryName = required('SCHEMA_REGISTRY_NAME', "is required when the config's format is avro-gsr");
    if (schemaRegistryName !== undefined && !REGISTRY_NAME.test(schemaRegistryName)) {
      problem(
        'SCHEMA_REGISTRY_NAME',
        `SCHEMA_REGISTRY_NAME=${show(schemaRegistryName)} is not a Glue registry name`,
      );
    }
  }

  const tableCacheRefreshMs = integer(
    'TABLE_CACHE_REFRESH_MS',
    DEFAULT_TABLE_CACHE_REFRESH_MS,
    0,
    86_400_000,
  );
  const commitConcurrency = integer('COMMIT_CONCURRENCY', DEFAULT_COMMIT_CONCURRENCY, 1, 64);
  const leaseMs = integer('LEASE_MS', DEFAULT_LEASE_MS, 1_000, 900_000);
  const scheduleMs = integer('COMMIT_SCHEDULE_MS', DEFAULT_SCHEDULE_MS, DEFAULT_SCHEDULE_MS, 3_600_000);
  const commitSchedule = {
    scheduleMs,
    intervalMs: integer('COMMIT_INTERVAL_MS', scheduleMs, 5_000, 3_600_000),
    tablesPerSlice: integer('COMMIT_TABLES_PER_SLICE', DEFAULT_TABLES_PER_SLICE, 1, 100_000),
    maxSlices: integer('COMMIT_MAX_SLICES', DEFAULT_MAX_SLICES, 1, 1_000),
  };
  const fanoutFunction = get('COMMIT_FANOUT_FUNCTION') ?? get('AWS_LAMBDA_FUNCTION_NAME');
  const maintenanceFunction = get('MAINTENANCE_FUNCTION');
  const compaction =
    maintenanceFunction === undefined || maintenanceFunction === ''
      ? undefined
      : {
          functionName: maintenanceFunction,
          atFiles: integer('COMPACT_AT_FILES', DEFAULT_COMPACT_AT_FILES, 2, 1_000_000),
          cooldownMs: integer('COMPACT_COOLDOWN_MS', DEFAULT_COMPACT_COOLDOWN_MS, 0, 86_400_000),
        };

  const maintenance = readMaintenanceEnv(get, problem, catalogType, show);

  const region = get('AWS_REGION') ?? get('AWS_DEFAULT_REGION');
  if (region === undefined) problem('AWS_REGION', 'AWS_REGION is required');
  else if (!REGION.test(region)) problem('AWS_REGION', `AWS_REGION=${show(region)} is not an AWS region`);

  if (problems.length > 0) {
    throw new FloeError(
      ErrorKind.ConfigInvalid,
      `invalid Lambda environment: ${problems.map((p) => p.message).join('; ')}`,
      { context: { variables: problems.map((p) => p.variable) } },
    );
  }
  return {
    config: config!,
    catalog: catalog!,
    stagingUri: stagingUri!,
    deadLetterUri: deadLetterUri!,
    ledgerTable: ledgerTable!,
    ...(schemaRegistryName === undefined ? {} : { schemaRegistryName }),
    tableCacheRefreshMs,
    commitConcurrency,
    commitSchedule,
    ...(fanoutFunction === undefined || fanoutFunction === '' ? {} : { fanoutFunction }),
    ...(compaction === undefined ? {} : { compaction }),
    leaseMs,
    region: region!,
    maintenance,
  };
}

function show(v: string): string {
  return JSON.stringify(v.length > MAX_SHOWN ? `${v.slice(0, MAX_SHOWN)}…` : v);
}
