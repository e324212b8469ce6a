import { describe, expect, it } from 'vitest';
import { ErrorKind, FloeError, isFloeError } from '../../lambdas/src/errors.ts';

describe('FloeError', () => {
  it('carries kind, retryable default by kind, and context', () => {
    const e = new FloeError(ErrorKind.CommitConflict, 'table t changed', { context: { table: 't' } });
    expect(e.kind).toBe('CommitConflict');
    expect(e.retryable).toBe(true);
    expect(e.context).toEqual({ table: 't' });
    expect(isFloeError(e, ErrorKind.CommitConflict)).toBe(true);
    expect(isFloeError(e, ErrorKind.NotFound)).toBe(false);
    expect(new FloeError(ErrorKind.DataInvalid, 'x').retryable).toBe(false);
  });
});
