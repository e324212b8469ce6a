/**
 * The committer Lambda on an EventBridge schedule (DESIGN §1, §4, §5): every run commits each
 * table with staged work under its DynamoDB lease. One run at a time is what the design expects:
 * the table leases make overlapping runs safe, but they would only wait on each other's leases.
 * Runs take a run lease in the ledger table (lambdas/src/handlers/run-lease.ts): an invocation
 * that finds it held returns at once. No concurrency is reserved by default: Lambda keeps 100
 * executions of the account unreserved, so an account whose quota is 10 (new accounts) cannot
 * reserve any and the deploy would fail; `-c committerReservedConcurrency=1` reserves one (and one
 * for maintenance) where the quota allows. Scheduled runs are never retried asynchronously and a
 * throttled one is dropped after a minute (`maxEventAge`): the next tick comes anyway.
 *
 * Fan-out and seconds-fresh commits (issue 19): a scheduled run splits the tables with staged work
 * into slices (`commitTablesPerSlice` tables each, at most `commitMaxSlices`) and invokes this same
 * function asynchronously for every slice but its own, each slice under a lease of its own. With
 * `commitIntervalSeconds` below 60 the schedule stays `rate(1 minute)` and every invocation commits
 * its slice in passes that many seconds apart until just before the next tick.
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import type { FloeSettings } from './config.ts';
import { FloeFunction } from './lambda.ts';
import { grantFloeAccess, grantInvoke } from './permissions.ts';
import type { FloeStorage } from './storage.ts';

export class FloeCommitter extends Construct {
  readonly handler: FloeFunction;
  readonly schedule: events.Rule;

  constructor(
    scope: Construct,
    id: string,
    props: { settings: FloeSettings; storage: FloeStorage; environment: Record<string, string> },
  ) {
    super(scope, id);
    const { settings, storage } = props;
    const c = settings.committer;
    this.handler = new FloeFunction(this, 'Handler', {
      handler: 'committer',
      description: `Floe committer (${settings.stackName}): one Iceberg append per table with staged work, every ${c.intervalSeconds < 60 ? `${c.intervalSeconds} s` : `${c.intervalMinutes} min`}`,
      memoryMb: c.memoryMb,
      timeoutSeconds: c.timeoutSeconds,
      logRetentionDays: settings.storage.logRetentionDays,
      ...(storage.dataKey === undefined ? {} : { key: storage.dataKey }),
      ...(c.reservedConcurrency === 0 ? {} : { reservedConcurrency: c.reservedConcurrency }),
      environment: {
        ...props.environment,
        COMMIT_CONCURRENCY: String(c.commitConcurrency),
        COMMIT_SCHEDULE_MS: String(c.intervalMinutes * 60_000),
        COMMIT_INTERVAL_MS: String(c.intervalSeconds * 1000),
        COMMIT_TABLES_PER_SLICE: String(c.tablesPerSlice),
        COMMIT_MAX_SLICES: String(c.maxSlices),
        ...(c.leaseSeconds === undefined ? {} : { LEASE_MS: String(c.leaseSeconds * 1000) }),
      },
    });
    grantFloeAccess(this.handler, storage, settings, 'committer');
    if (c.maxSlices > 1) {
      // The fan-out: a scheduled run invokes this function asynchronously, once per further slice
      // (lambdas/src/adapters/aws/lambda-invoke.ts). Until the policy is attached a dispatch fails
      // and the run commits the slice itself.
      grantInvoke(this, 'FanoutPolicy', 'InvokeCommitSlices', this.handler, this.handler.function);
    }

    // Scheduled runs are idempotent and the next one is due in a minute: never retry a failed
    // run asynchronously, never keep a throttled one queued.
    this.handler.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    this.schedule = new events.Rule(this, 'Schedule', {
      description: `Runs the Floe committer of ${settings.stackName}`,
      schedule: events.Schedule.rate(Duration.minutes(c.intervalMinutes)),
      targets: [
        new targets.LambdaFunction(this.handler.function, {
          retryAttempts: 2,
          maxEventAge: Duration.minutes(1),
        }),
      ],
    });
  }
}
