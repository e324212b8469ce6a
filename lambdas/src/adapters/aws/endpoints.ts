/**
 * Where Floe's AWS clients send requests, beyond what the SDK does by itself.
 *
 * Endpoints: the AWS SDK for JavaScript v3 reads `AWS_ENDPOINT_URL_<SERVICE>` (`_S3`, `_KINESIS`,
 * `_DYNAMODB`, `_GLUE`, `_S3TABLES`), then `AWS_ENDPOINT_URL`, then a profile's `endpoint_url`,
 * whenever a client is built without an `endpoint` (and `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS` is
 * not set): `@smithy/core`'s `getEndpointFromConfig`. Floe's client factories therefore set an
 * endpoint only when one is passed explicitly (a CLI flag, the embedded local stack) and never
 * re-implement that lookup, so LocalStack and moto work exactly as with the AWS CLI.
 *
 * Path-style S3 addressing is not part of that standard: `FLOE_S3_FORCE_PATH_STYLE=1` turns it on
 * for every S3 client Floe creates (the CLI also has `--s3-path-style`).
 */
import { ErrorKind, FloeError } from '../../errors.ts';

export const S3_FORCE_PATH_STYLE_ENV = 'FLOE_S3_FORCE_PATH_STYLE';

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['', '0', 'false', 'no', 'off']);

/**
 * `$FLOE_S3_FORCE_PATH_STYLE` as a flag: unset, empty, `0`, `false`, `no`, `off` → false; `1`,
 * `true`, `yes`, `on` → true (any case); anything else is a `ConfigInvalid` error, because a typo
 * silently meaning "off" would send requests to `bucket.localhost` and fail far from the cause.
 */
export function s3ForcePathStyleFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env[S3_FORCE_PATH_STYLE_ENV];
  const value = (raw ?? '').trim().toLowerCase();
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw new FloeError(
    ErrorKind.ConfigInvalid,
    `${S3_FORCE_PATH_STYLE_ENV} must be 1 or 0 (true/false, yes/no, on/off), got '${raw}'`,
    { context: { [S3_FORCE_PATH_STYLE_ENV]: raw } },
  );
}
