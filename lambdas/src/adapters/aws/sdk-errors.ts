/** Reading AWS SDK v3 errors at the adapter boundary (no SDK import needed: errors are duck-typed). */
import { ErrorKind, FloeError } from '../../errors.ts';
import { type TableIdentifier, tableIdToString } from '../../ports/catalog.ts';

export interface SdkErrorLike {
  name?: unknown;
  message?: unknown;
  $fault?: unknown;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number; attempts?: number };
}

export const THROTTLING: ReadonlySet<string> = new Set([
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'SlowDown',
]);

export function nameOf(e: unknown): string {
  const n = (e as SdkErrorLike | undefined)?.name;
  return typeof n === 'string' ? n : '';
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function statusOf(e: unknown): number | undefined {
  return (e as SdkErrorLike | undefined)?.$metadata?.httpStatusCode;
}

/** Throttling, 429, 5xx, network errors and SDK-marked retryables. */
export function isRetryable(e: unknown): boolean {
  const status = statusOf(e);
  return (
    THROTTLING.has(nameOf(e)) ||
    status === 429 ||
    status === undefined ||
    status >= 500 ||
    (e as SdkErrorLike).$fault === 'server' ||
    Boolean((e as SdkErrorLike).$retryable)
  );
}

/**
 * True unless the service definitely rejected the request: a 4xx answer to a single attempt.
 * A 5xx, a network error, or a 4xx after SDK retries (an earlier attempt may have been applied,
 * Java's RetryDetector case) leave the outcome unknown.
 */
export function mayHaveApplied(e: unknown): boolean {
  const status = statusOf(e);
  const attempts = (e as SdkErrorLike | undefined)?.$metadata?.attempts ?? 1;
  if (status === undefined || status >= 500) return true;
  return attempts > 1 && !THROTTLING.has(nameOf(e));
}

/** A retryable commit conflict naming the table. */
export function conflict(id: TableIdentifier, message: string, cause?: unknown): FloeError {
  return new FloeError(ErrorKind.CommitConflict, message, {
    retryable: true,
    context: { table: tableIdToString(id) },
    ...(cause === undefined ? {} : { cause }),
  });
}
