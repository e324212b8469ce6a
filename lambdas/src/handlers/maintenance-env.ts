/**
 * The maintenance part of the Lambda environment (read by `env.ts` for every handler; the CDK app
 * sets it on the committer and the maintenance function from `-c maintenance…` context keys):
 *
 * | variable | meaning |
 * |---|---|
 * | `MAINTENANCE` | `floe` (Floe maintains Glue tables itself), `glue` (Glue table optimizers), `off`; unset = off. On S3 Tables any value set means the service's table maintenance is configured from the values below |
 * | `MAINTENANCE_RETAIN_LAST` | snapshots kept at least (default: table property, else 1) |
 * | `MAINTENANCE_EXPIRE_OLDER_THAN_MS` | snapshots older than this expire (default: table property, else 5 days) |
 * | `MAINTENANCE_ORPHANS_OLDER_THAN_MS` | unreferenced files younger than this are kept (default 3 days; `never`: no orphan deletion) |
 * | `MAINTENANCE_TARGET_FILE_SIZE_BYTES` | compaction target (default: the table's `write.target-file-size-bytes`) |
 * | `GLUE_OPTIMIZER_ROLE_ARN`, `GLUE_CATALOG_ID` | the role Glue's optimizers run as, and the account (required for `glue`) |
 * | `MAINTENANCE_NAMESPACES` | comma-separated namespaces and `prefix*` patterns the maintenance function visits besides `FLOE_CONFIG`'s namespace (the CDK app sets exactly the ones IAM grants: lib/namespaces.ts); unset = that namespace only |
 * | `AWS_LAMBDA_FUNCTION_MEMORY_SIZE` | set by Lambda: bounds the input of one compaction output |
 *
 * Pure, like env.ts.
 */
import { type NamespaceSet, parseNamespacePatterns } from '../app/maintain/namespaces.ts';

export const MAINTENANCE_MODES = ['floe', 'glue', 'off'] as const;
export type MaintenanceMode = (typeof MAINTENANCE_MODES)[number];

export interface MaintenanceSettings {
  readonly mode: MaintenanceMode;
  /** False when `MAINTENANCE` is unset (a stack deployed before maintenance existed). */
  readonly configured: boolean;
  readonly retainLast?: number;
  readonly expireOlderThanMs?: number;
  /** Undefined: no orphan deletion (`never`). */
  readonly orphansOlderThanMs?: number;
  readonly targetFileSizeBytes?: number;
  /** Set exactly for `glue` on the Glue catalog. */
  readonly glueOptimizers?: { readonly roleArn: string; readonly catalogId: string };
  /** Compaction input per output file, from the function's memory (undefined: the app's default). */
  readonly maxBinBytes?: number;
  /** Largest compaction input file packed with others, from the function's memory (ditto). */
  readonly maxInputFileBytes?: number;
  /**
   * `MAINTENANCE_NAMESPACES`: the namespaces scheduled maintenance visits besides the config's
   * (undefined: the config's only).
   */
  readonly namespaces?: NamespaceSet;
}

export const DEFAULT_ORPHANS_OLDER_THAN_MS = 3 * 86_400_000;

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
const ACCOUNT = /^\d{12}$/;
const DECIMAL = /^\d+$/;
const MIB = 1024 * 1024;

/**
 * Compaction streams a bin into its output file (one input file's rows at a time):
 * bench/compact-memory.ts measured peak RSS of 344–382 MiB for a 15 MiB bin of 1 MiB files,
 * 585–603 MiB for 64 MiB and 758 MiB for 127 MiB (tsx's ~38 MiB included) — under
 * 320 MiB + 6 × the input. A quarter of the function's memory stays for the runtime.
 */
export const BIN_BASE_RSS = 320 * MIB;
export const RSS_PER_BIN_BYTE = 6;

/**
 * One input file's rows are decoded at once: the same bench measured 37–54 MiB of RSS per MiB of
 * zstd Parquet when a whole bin was decoded (better-compressed data needs more).
 */
export const RSS_PER_INPUT_FILE_BYTE = 56;

export function maxBinBytesFor(memoryMb: number): number {
  return Math.max(8 * MIB, Math.floor((memoryMb * MIB * 0.75 - BIN_BASE_RSS) / RSS_PER_BIN_BYTE));
}

export function maxInputFileBytesFor(memoryMb: number): number {
  return Math.max(8 * MIB, Math.floor((memoryMb * MIB * 0.75) / RSS_PER_INPUT_FILE_BYTE));
}

export function readMaintenanceEnv(
  get: (name: string) => string | undefined,
  problem: (variable: string, message: string) => void,
  catalogType: string,
  show: (v: string) => string,
): MaintenanceSettings {
  const raw = get('MAINTENANCE');
  let mode: MaintenanceMode = 'off';
  if (raw !== undefined) {
    if ((MAINTENANCE_MODES as readonly string[]).includes(raw)) mode = raw as MaintenanceMode;
    else problem('MAINTENANCE', `MAINTENANCE=${show(raw)} is not one of ${MAINTENANCE_MODES.join(', ')}`);
  }
  const integer = (name: string, min: number, max: number): number | undefined => {
    const v = get(name);
    if (v === undefined) return undefined;
    const n = DECIMAL.test(v) ? Number(v) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      problem(name, `${name}=${show(v)} is not an integer between ${min} and ${max}`);
      return undefined;
    }
    return n;
  };
  const retainLast = integer('MAINTENANCE_RETAIN_LAST', 1, 100_000);
  const expireOlderThanMs = integer('MAINTENANCE_EXPIRE_OLDER_THAN_MS', 1, Number.MAX_SAFE_INTEGER);
  const orphansText = get('MAINTENANCE_ORPHANS_OLDER_THAN_MS');
  const orphansOlderThanMs =
    orphansText === 'never'
      ? undefined
      : (integer('MAINTENANCE_ORPHANS_OLDER_THAN_MS', 0, Number.MAX_SAFE_INTEGER) ??
        DEFAULT_ORPHANS_OLDER_THAN_MS);
  const targetFileSizeBytes = integer('MAINTENANCE_TARGET_FILE_SIZE_BYTES', 1, Number.MAX_SAFE_INTEGER);
  const memoryMb = integer('AWS_LAMBDA_FUNCTION_MEMORY_SIZE', 128, 10_240);
  const namespaces = readNamespaces(get('MAINTENANCE_NAMESPACES'), problem, show);

  let glueOptimizers: MaintenanceSettings['glueOptimizers'];
  if (mode === 'glue' && catalogType === 'glue') {
    const roleArn = get('GLUE_OPTIMIZER_ROLE_ARN');
    const catalogId = get('GLUE_CATALOG_ID');
    if (roleArn === undefined)
      problem('GLUE_OPTIMIZER_ROLE_ARN', 'GLUE_OPTIMIZER_ROLE_ARN is required when MAINTENANCE=glue');
    else if (!ROLE_ARN.test(roleArn))
      problem('GLUE_OPTIMIZER_ROLE_ARN', `GLUE_OPTIMIZER_ROLE_ARN=${show(roleArn)} is not an IAM role ARN`);
    if (catalogId === undefined)
      problem('GLUE_CATALOG_ID', 'GLUE_CATALOG_ID is required when MAINTENANCE=glue');
    else if (!ACCOUNT.test(catalogId))
      problem('GLUE_CATALOG_ID', `GLUE_CATALOG_ID=${show(catalogId)} is not an AWS account id`);
    if (roleArn !== undefined && catalogId !== undefined) glueOptimizers = { roleArn, catalogId };
  } else if (mode === 'glue') {
    problem(
      'MAINTENANCE',
      'MAINTENANCE=glue needs CATALOG_TYPE=glue (S3 Tables maintains its tables itself)',
    );
  }
  return {
    mode,
    configured: raw !== undefined,
    ...(retainLast === undefined ? {} : { retainLast }),
    ...(expireOlderThanMs === undefined ? {} : { expireOlderThanMs }),
    ...(orphansOlderThanMs === undefined ? {} : { orphansOlderThanMs }),
    ...(targetFileSizeBytes === undefined ? {} : { targetFileSizeBytes }),
    ...(glueOptimizers === undefined ? {} : { glueOptimizers }),
    ...(memoryMb === undefined
      ? {}
      : { maxBinBytes: maxBinBytesFor(memoryMb), maxInputFileBytes: maxInputFileBytesFor(memoryMb) }),
    ...(namespaces === undefined ? {} : { namespaces }),
  };
}

/** `a,b,tenant_*`: names and prefixes; every entry that is neither is named in the problem. */
function readNamespaces(
  raw: string | undefined,
  problem: (variable: string, message: string) => void,
  show: (v: string) => string,
): NamespaceSet | undefined {
  if (raw === undefined) return undefined;
  const entries = raw.split(',').map((e) => e.trim());
  const { names, prefixes, bad } = parseNamespacePatterns(entries.filter((e) => e !== ''));
  if (entries.some((e) => e === '')) bad.push('');
  if (bad.length > 0) {
    problem(
      'MAINTENANCE_NAMESPACES',
      `MAINTENANCE_NAMESPACES=${show(raw)}: ${bad.map((b) => show(b)).join(', ')} ${bad.length === 1 ? 'is' : 'are'} neither a namespace ([a-z0-9_], at most 252 characters, not starting with 'aws') nor a prefix ending in * (tenant_*)`,
    );
    return undefined;
  }
  return { names, prefixes };
}
