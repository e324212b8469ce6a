/**
 * The committer fan-out on AWS Lambda (ports/commit-fanout.ts): one asynchronous invocation
 * (`InvocationType: Event`) of a function, by default the committer itself, per slice. Lambda
 * queues the event and runs it as soon as concurrency allows; the invoking run does not wait for
 * it. The function's async settings (no retries, events dropped after a minute) fit: a slice that
 * does not run is dispatched again by the next schedule tick.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { ErrorKind, FloeError } from '../../errors.ts';
import type { CommitFanout, SliceEvent, SliceTask } from '../../ports/commit-fanout.ts';
import { type AwsClientOptions, clientConfig } from './glue-schema-registry.ts';
import { isRetryable, messageOf, nameOf } from './sdk-errors.ts';

export class LambdaFanout implements CommitFanout {
  constructor(
    private readonly lambda: LambdaClient,
    private readonly functionName: string,
  ) {}

  async dispatch(task: SliceTask): Promise<void> {
    const event: SliceEvent = { floeCommitSlice: task };
    let status: number | undefined;
    try {
      const out = await this.lambda.send(
        new InvokeCommand({
          FunctionName: this.functionName,
          InvocationType: 'Event',
          Payload: new TextEncoder().encode(JSON.stringify(event)),
        }),
      );
      status = out.StatusCode;
    } catch (e) {
      throw new FloeError(
        ErrorKind.Unexpected,
        `invoking ${this.functionName} for commit slice ${task.index + 1} of ${task.count} failed: ${nameOf(e) || 'error'}: ${messageOf(e)}`,
        {
          retryable: isRetryable(e),
          cause: e,
          context: { functionName: this.functionName, slice: task.index, slices: task.count },
        },
      );
    }
    // An accepted asynchronous invocation answers 202.
    if (status !== 202) {
      throw new FloeError(
        ErrorKind.Unexpected,
        `invoking ${this.functionName} for commit slice ${task.index + 1} of ${task.count}: expected status 202, got ${status}`,
        { retryable: true, context: { functionName: this.functionName, status } },
      );
    }
  }
}

export function createLambdaClient(opts: AwsClientOptions = {}): LambdaClient {
  return new LambdaClient(clientConfig(opts));
}
