/**
 * Typed errors. Every failure Floe raises carries a closed `kind` and a `retryable`
 * flag so callers branch on data, never on message text.
 */
export const ErrorKind = {
  DataInvalid: 'DataInvalid',
  SchemaIncompatible: 'SchemaIncompatible',
  FeatureUnsupported: 'FeatureUnsupported',
  CommitConflict: 'CommitConflict',
  LockHeld: 'LockHeld',
  NotFound: 'NotFound',
  AlreadyExists: 'AlreadyExists',
  ConfigInvalid: 'ConfigInvalid',
  Unexpected: 'Unexpected',
} as const;
export type ErrorKind = (typeof ErrorKind)[keyof typeof ErrorKind];

const RETRYABLE_BY_DEFAULT: ReadonlySet<ErrorKind> = new Set([ErrorKind.CommitConflict, ErrorKind.LockHeld]);

export interface FloeErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  /** Structured context (table, field, value …) for logs. */
  context?: Record<string, unknown>;
}

export class FloeError extends Error {
  override readonly name = 'FloeError';
  readonly kind: ErrorKind;
  readonly retryable: boolean;
  readonly context: Record<string, unknown>;

  constructor(kind: ErrorKind, message: string, options: FloeErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT.has(kind);
    this.context = options.context ?? {};
  }
}

export function isFloeError(e: unknown, kind?: ErrorKind): e is FloeError {
  return e instanceof FloeError && (kind === undefined || e.kind === kind);
}
