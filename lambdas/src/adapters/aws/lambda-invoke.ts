/**
 * Asynchronous Lambda invocations (`InvocationType: Event`): Lambda queues the event and runs it as
 * soon as concurrency allows; the caller does not wait for the run.
 *
 * - `LambdaFanout` (ports/commit-fanout.ts): one invocation of the committer itself per slice. The
 *   function's async settings (no retries, events dropped after a minute) fit: a slice that does
 *   not run is dispatched again by the next schedule tick.
 * - `LambdaMaintenanceRequests` (ports/maintenance-requests.ts): the maintenance function, for the
 *   tables whose files piled up (app/commit-compaction.ts).
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { ErrorKind, FloeError } from '../../errors.ts';
import type { CommitFanout, SliceEvent, SliceTask } from '../../ports/commit-fanout.ts';
import type { MaintainTablesEvent, MaintenanceRequests } from '../../ports/maintenance-requests.ts';
import { type AwsClientOptions, clientConfig } from './glue-schema-registry.ts';
import { isRetryable, messageOf, nameOf } from './sdk-errors.ts';

/** Invokes `functionName` asynchronously with `event`; `what` names the invocation in errors. */
export async function invokeEvent(
  lambda: LambdaClient,
  functionName: string,
  event: unknown,
  what: string,
  context: Record<string, unknown> = {},
): Promise<void> {
  let status: number | undefined;
  try {
    const out = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'Event',
        Payload: new TextEncoder().encode(JSON.stringify(event)),
      }),
    );
    status = out.StatusCode;
  } catch (e) {
    throw new FloeError(
      ErrorKind.Unexpected,
      `invoking ${functionName} for ${what} failed: ${nameOf(e) || 'error'}: ${messageOf(e)}`,
      { retryable: isRetryable(e), cause: e, context: { functionName, ...context } },
    );
  }
  // An accepted asynchronous invocation answers 202.
  if (status !== 202) {
    throw new FloeError(
      ErrorKind.Unexpected,
      `invoking ${functionName} for ${what}: expected status 202, got ${status}`,
      { retryable: true, context: { functionName, status, ...context } },
    );
  }
}

export class LambdaFanout implements CommitFanout {
  constructor(
    private readonly lambda: LambdaClient,
    private readonly functionName: string,
  ) {}

  dispatch(task: SliceTask): Promise<void> {
    const event: SliceEvent = { floeCommitSlice: task };
    return invokeEvent(
      this.lambda,
      this.functionName,
      event,
      `commit slice ${task.index + 1} of ${task.count}`,
      {
        slice: task.index,
        slices: task.count,
      },
    );
  }
}

export class LambdaMaintenanceRequests implements MaintenanceRequests {
  constructor(
    private readonly lambda: LambdaClient,
    private readonly functionName: string,
    private readonly requestedBy: string,
  ) {}

  request(tables: readonly string[]): Promise<void> {
    const event: MaintainTablesEvent = { floeMaintainTables: { tables, requestedBy: this.requestedBy } };
    return invokeEvent(this.lambda, this.functionName, event, `maintenance of ${tables.length} table(s)`, {
      tables: tables.slice(0, 10),
    });
  }
}

/**
 * An asynchronous `Invoke` only queues the event, so it answers at once. A request whose answer
 * does not come within a few seconds (lost, or a service that hangs) must not hold up the commit
 * run that sent it: two attempts of 3 s at most, then the caller takes the slice itself.
 */
export function createLambdaClient(opts: AwsClientOptions = {}): LambdaClient {
  return new LambdaClient(clientConfig({ maxAttempts: 2, requestTimeoutMs: INVOKE_TIMEOUT_MS, ...opts }));
}

export const INVOKE_TIMEOUT_MS = 3_000;
