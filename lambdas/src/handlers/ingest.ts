/**
 * The ingest Lambda (DESIGN §1, §4): invoked by the Kinesis event source mapping with one shard's
 * batch (ParallelizationFactor 1, ReportBatchItemFailures, BisectBatchOnFunctionError).
 *
 * Per invocation: parse the event (a malformed envelope is thrown, so Lambda retries / bisects),
 * run the ingest app, log one structured line (shard, counts, per-table results, failures), emit
 * EMF metrics (namespace `Floe`), and answer with the lowest sequence number not staged as the
 * batch item failure, from which Lambda re-delivers; the ledger makes the re-delivery skip what
 * was staged. An error of the whole batch (the ledger unreachable …) is thrown: Lambda retries it.
 *
 * Metrics: `RecordsIn` (Kinesis records), `RecordsSkipped`, with framed records (KPL, compressed,
 * CloudWatch Logs) `UserRecords`, `KplAggregates`, `LogControlMessages`; `ChangesWithoutRows` (Debezium
 * truncates and tombstones, counted); `StagingFailures` (tables that failed), `BatchErrors`
 * (invocations that threw after parsing); per table (dimension `table`, as `PER_TABLE_METRICS`
 * allows: table-metrics.ts) `RowsStaged`, `PendingRecords`, `StagedBytes`, whose totals over the
 * batch's tables go with `RecordsIn`; per reason (dimension `reason`) `DeadLetters`.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { ingestBatch } from '../app/ingest.ts';
import { batchItemFailures, type KinesisBatchResponse, parseKinesisEvent } from '../records/kinesis-event.ts';
import { readSettings } from './env.ts';
import {
  awsRuntime,
  errorSummary,
  type GetRuntime,
  type LambdaContext,
  lazyRuntime,
  type MetricGroup,
  type MetricsSink,
  publishGroups,
} from './runtime.ts';
import {
  type PerTableMetrics,
  perTableMetricsFromEnv,
  type TableMetricSpec,
  tableMetricGroups,
} from './table-metrics.ts';

export const METRICS_NAMESPACE = 'Floe';

/** `$POWERTOOLS_METRICS_NAMESPACE` (e.g. one per deployed stack), else `Floe`. */
export function metricsNamespace(env: Record<string, string | undefined> = process.env): string {
  const v = env.POWERTOOLS_METRICS_NAMESPACE?.trim();
  return v ? v : METRICS_NAMESPACE;
}

export interface HandlerOptions {
  readonly logger?: Logger;
  readonly metrics?: MetricsSink;
  /** Which per-table metrics to publish (default `on`; the Lambda reads `PER_TABLE_METRICS`). */
  readonly perTableMetrics?: PerTableMetrics;
}

/** The ingest's per-table metrics, and how they combine across tables. */
const INGEST_TABLE_METRICS: readonly TableMetricSpec[] = [
  ['RowsStaged', 'Count', 'sum'],
  ['PendingRecords', 'Count', 'sum'],
  ['StagedBytes', 'Bytes', 'sum'],
];

/** `UserRecords` (what the batch's records held once deframed), `KplAggregates`, `LogControlMessages`. */
function framingMetrics(f: Awaited<ReturnType<typeof ingestBatch>>['framing']): MetricGroup['metrics'] {
  if (f === undefined) return [];
  return [
    ['UserRecords', 'Count', f.records],
    ['KplAggregates', 'Count', f.aggregates],
    ['LogControlMessages', 'Count', f.controlMessages],
  ];
}

export type IngestHandler = (event: unknown, context?: LambdaContext) => Promise<KinesisBatchResponse>;

export function makeIngestHandler(getRuntime: GetRuntime, opts: HandlerOptions = {}): IngestHandler {
  const logger = opts.logger ?? new Logger({ serviceName: 'floe-ingest' });
  const metrics = opts.metrics ?? new Metrics({ namespace: metricsNamespace(), serviceName: 'floe-ingest' });
  const perTable = opts.perTableMetrics ?? { mode: 'on' };
  return async (event, context) => {
    const started = Date.now();
    logger.resetKeys();
    if (context?.awsRequestId !== undefined) logger.appendKeys({ requestId: context.awsRequestId });
    try {
      let batch: ReturnType<typeof parseKinesisEvent>;
      try {
        batch = parseKinesisEvent(event);
      } catch (e) {
        logger.error('malformed Kinesis event', { error: errorSummary(e) });
        throw e;
      }
      logger.appendKeys({ shardId: batch.shardId });
      let result: Awaited<ReturnType<typeof ingestBatch>>;
      try {
        const runtime = await getRuntime();
        result = await ingestBatch(runtime.ingestDeps(), batch);
      } catch (e) {
        logger.error('ingest failed, Lambda retries the batch', {
          records: batch.records.length,
          firstSequence: batch.records[0]?.sequenceNumber,
          error: errorSummary(e),
        });
        publishGroups(metrics, [{ metrics: [['BatchErrors', 'Count', 1]] }]);
        throw e;
      }
      const failures = result.failures.map((f) => ({
        table: f.table,
        firstSequence: f.firstSequence,
        error: errorSummary(f.error),
      }));
      const summary = {
        streamArn: batch.streamArn,
        records: result.records,
        skipped: result.skipped,
        deadLetters: result.deadLetters,
        tables: result.tables,
        failures,
        ...(result.failedSequence === undefined ? {} : { failedSequence: result.failedSequence }),
        ...(result.oldestArrivalMs === undefined ? {} : { oldestArrivalMs: result.oldestArrivalMs }),
        ...(result.framing === undefined ? {} : { framing: result.framing }),
        ...(result.deferred === undefined ? {} : { deferred: result.deferred }),
        durationMs: Date.now() - started,
      };
      if (failures.length > 0) logger.warn('ingest batch: some tables failed, Lambda retries', summary);
      else logger.info('ingest batch', summary);

      const tables = tableMetricGroups(
        perTable,
        INGEST_TABLE_METRICS,
        result.tables.map((t) => ({
          table: t.table,
          volume: t.rows + t.pending,
          values: { RowsStaged: t.rows, PendingRecords: t.pending, StagedBytes: t.bytes },
        })),
      );
      const groups: MetricGroup[] = [
        {
          metrics: [
            ['RecordsIn', 'Count', result.records],
            ['RecordsSkipped', 'Count', result.skipped],
            ...framingMetrics(result.framing),
            ...(result.noRowChanges ? [['ChangesWithoutRows', 'Count', result.noRowChanges] as const] : []),
            ['StagingFailures', 'Count', result.failures.length],
            ...(result.deferred === undefined
              ? []
              : [['RecordsDeferred', 'Count', result.deferred] as const]),
            ...tables.totals,
          ],
        },
        ...tables.perTable,
        ...Object.entries(result.deadLetters).map(
          ([reason, n]): MetricGroup => ({ dimensions: { reason }, metrics: [['DeadLetters', 'Count', n]] }),
        ),
      ];
      publishGroups(metrics, groups);
      return batchItemFailures(result.failedSequence === undefined ? [] : [result.failedSequence]);
    } finally {
      logger.resetKeys();
    }
  };
}

let lazy: IngestHandler | undefined;

/** The Lambda entry point: the environment is read and the AWS clients built on the first invocation. */
export const handler: IngestHandler = (event, context) => {
  lazy ??= makeIngestHandler(
    lazyRuntime(() => awsRuntime(readSettings())),
    {
      perTableMetrics: perTableMetricsFromEnv(),
    },
  );
  return lazy(event, context);
};
