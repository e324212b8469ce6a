/**
 * One Floe Lambda function: the handler bundled by esbuild on this machine (no Docker) into one
 * ESM file with its dependencies, the AWS SDK included (the versions Floe is tested with, not the
 * runtime's), plus parquet-wasm's `.wasm` file copied next to it; arm64, Node.js 22; its own role
 * (no managed policy: the caller grants exactly what the handler calls) and its own log group.
 *
 * parquet-wasm's Node build is CommonJS and loads `parquet_wasm_bg.wasm` with
 * `readFileSync(`${__dirname}/parquet_wasm_bg.wasm`)`. In an ESM bundle neither `require` nor
 * `__dirname` exists, so the banner defines both from `import.meta.url`, and the `afterBundling`
 * hook copies the wasm file into the asset beside `index.mjs` (`__dirname` is the asset folder,
 * `/var/task` on Lambda). `test/cdk/bundle.test.ts` runs the bundled handlers from a copy of the
 * asset outside the repository.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { grantDataKey } from './storage.ts';

/** The repository root (the CDK app, the Lambda sources and package-lock.json live here). */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The runtime the bundle is built (esbuild target) and tested for. */
export const LAMBDA_RUNTIME = lambda.Runtime.NODEJS_22_X;
const ESBUILD_TARGET = 'node22';

/** parquet-wasm's wasm binary, as its Node build loads it (beside its JS). */
export const PARQUET_WASM_FILE = 'parquet_wasm_bg.wasm';
const PARQUET_WASM_PATH = createRequire(import.meta.url).resolve(`parquet-wasm/node/${PARQUET_WASM_FILE}`);

/**
 * Defines `require`, `__filename` and `__dirname` for the CommonJS modules inside the ESM bundle
 * (parquet-wasm's Node build uses all three).
 */
export const ESM_BANNER = [
  "import { createRequire as __floeCreateRequire } from 'node:module';",
  "import { fileURLToPath as __floeFileURLToPath } from 'node:url';",
  "import { dirname as __floeDirname } from 'node:path';",
  'const require = __floeCreateRequire(import.meta.url);',
  'const __filename = __floeFileURLToPath(import.meta.url);',
  'const __dirname = __floeDirname(__filename);',
].join(' ');

export type HandlerName = 'ingest' | 'committer' | 'maintenance';

export interface FloeFunctionProps {
  /** `lambdas/src/handlers/<handler>.ts`, exporting `handler`. */
  readonly handler: HandlerName;
  readonly description: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetentionDays: number;
  /** Reserved concurrent executions (undefined: none). */
  readonly reservedConcurrency?: number;
  /**
   * compliance=strict: the stack's key, which encrypts the function's log group and what it
   * reads and writes (the role is granted it).
   */
  readonly key?: kms.IKey;
}

export class FloeFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: FloeFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
      ...(props.key === undefined ? {} : { encryptionKey: props.key }),
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Floe ${props.handler} Lambda: only what the handler calls`,
    });
    // What AWSLambdaBasicExecutionRole would grant, scoped to this function's own log group.
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'WriteOwnLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );
    if (props.key !== undefined) grantDataKey(props.key, this.role);

    this.function = new NodejsFunction(this, 'Function', {
      description: props.description,
      entry: fileURLToPath(new URL(`../lambdas/src/handlers/${props.handler}.ts`, import.meta.url)),
      handler: 'handler',
      runtime: LAMBDA_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: Duration.seconds(props.timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      ...(props.reservedConcurrency === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrency }),
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: fileURLToPath(new URL('../package-lock.json', import.meta.url)),
      bundling: {
        format: OutputFormat.ESM,
        target: ESBUILD_TARGET,
        mainFields: ['module', 'main'],
        // Bundle everything, the AWS SDK too: the Lambda runs the SDK versions Floe is tested with.
        bundleAwsSDK: true,
        externalModules: [],
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        banner: ESM_BANNER,
        logLevel: LogLevel.WARNING,
        forceDockerBundling: false,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_inputDir: string, outputDir: string) => [
            copyCommand(PARQUET_WASM_PATH, outputDir),
          ],
        },
      },
    });
  }
}

/** A shell command (bash or cmd) copying `file` into `dir`, with node so it runs anywhere. */
function copyCommand(file: string, dir: string): string {
  const script =
    "const f=require('node:fs'),p=require('node:path');f.copyFileSync(process.argv[1],p.join(process.argv[2],p.basename(process.argv[1])))";
  return `node -e "${script}" "${file}" "${dir}"`;
}
