/**
 * Alarms and a dashboard for one Floe stack.
 *
 * The handlers publish EMF metrics in the namespace `Floe` with the dimension sets
 * `[service]`, `[service, table]` and `[service, reason]` (`lambdas/src/handlers/*.ts`). That
 * namespace is shared by every Floe stack in the account and region, so alarms on it would mix
 * stacks. Instead the EMF lines of this stack's own log groups are turned into stack-scoped
 * metrics by CloudWatch Logs metric filters (namespace `Floe/<stackName>`, no dimensions). They
 * read the run-level lines only (`$.table NOT EXISTS`), which carry each invocation's totals over
 * its tables whatever `perTableMetrics` says (handlers/table-metrics.ts: sums, and the maximum of
 * `Freshness` and `SmallFiles`); the per-table lines (`on`, `top:N`) feed only the dashboard's
 * per-table widgets.
 *
 * | alarm | metric | fires when |
 * |---|---|---|
 * | IteratorAge | ingest `IteratorAge` (max, 1 min) | above `iteratorAgeAlarmMinutes` for 5 min: the ingest falls behind the stream |
 * | IngestErrors | ingest `Errors` (5 min) | in 2 of 3 periods: whole batches fail (e.g. the ledger is unreachable) |
 * | FailedBatches | failed-batch queue depth | any message: Lambda gave up on a batch (records left the pipeline) |
 * | DeadLetters | `DeadLetters` (ingest + committer) | any record dead-lettered in 5 min |
 * | CommitterErrors | committer `Errors` (5 min) | in 2 of 3 periods: whole runs fail |
 * | CommitFailures | `CommitFailures` | a table's commit failed in 3 consecutive periods |
 * | RoutingFailures | `RoutingFailures` | a shard's deferred batches failed to route in 3 consecutive periods (its batches wait behind them) |
 * | Freshness | `Freshness` (max) | a commit landed records older than `freshnessAlarmMinutes` |
 * | CommitterNearTimeout | committer `Duration` (max) | a run took 80 % of its timeout |
 * | TablesLocked | `TablesLocked` | a table was locked by another holder in 3 consecutive runs |
 * | SmallFiles | maintenance `SmallFiles` (max over tables) | some table kept ≥ `smallFilesAlarmFiles` data files compaction would merge, in every period of 3 (2 for cron schedules) |
 * | MaintenanceFailures | `MaintenanceFailures` | a table's maintenance (or its managed setup) failed in 3 consecutive periods |
 * | MaintenanceErrors | maintenance `Errors` | whole maintenance runs fail in 2 consecutive periods |
 *
 * The maintenance alarms exist when the maintenance function does; their period is the schedule's
 * interval, at least an hour (a day for cron schedules). Small files mean queries open many small
 * objects: Floe's compaction, Glue's or S3 Tables' is not keeping up (or failing), or partitions
 * are so fine that each holds a few small files. The per-table metrics (`DataFiles`,
 * `AverageFileBytes`, `SmallFiles`, `Snapshots`) are also extracted with a `table` dimension for
 * the dashboard.
 *
 * Lock age: Floe publishes no "age of a lease" metric. A lease expires by itself after `LEASE_MS`,
 * so a lock can only be held long by a committer run that keeps running (its runs approach the
 * timeout: CommitterNearTimeout) or by runs that keep finding the table locked (with one run at a
 * time this means a lease that is not being released: TablesLocked over several runs).
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { FloeSettings } from './config.ts';
import type { FloeFunction } from './lambda.ts';
import type { FloeStorage } from './storage.ts';

/** Metrics the filters extract from the handlers' EMF lines, and which log group has them. */
const FILTERED_METRICS = {
  RecordsIn: ['ingest'],
  DeadLetters: ['ingest', 'committer'],
  RowsCommitted: ['committer'],
  Freshness: ['committer'],
  CommitFailures: ['committer'],
  RoutingFailures: ['committer'],
  TablesLocked: ['committer'],
  SmallFiles: ['maintenance'],
  MaintenanceFailures: ['maintenance'],
} as const;
type FilteredMetric = keyof typeof FILTERED_METRICS;
type Source = 'ingest' | 'committer' | 'maintenance';
/** Maintenance metrics also extracted per table (dimension `table`) for the dashboard. */
const PER_TABLE_METRICS = ['DataFiles', 'AverageFileBytes', 'SmallFiles', 'Snapshots'] as const;

export class FloeMonitoring extends Construct {
  readonly namespace: string;
  readonly alarms: Record<string, cloudwatch.Alarm> = {};
  /** The topic every alarm notifies (`alarmTopicArn`, else one of this stack's). */
  readonly alarmTopic: sns.ITopic;
  readonly dashboard: cloudwatch.Dashboard;

  constructor(
    scope: Construct,
    id: string,
    props: {
      settings: FloeSettings;
      storage: FloeStorage;
      ingest: FloeFunction;
      committer: FloeFunction;
      /** The maintenance function, unless `maintenance=off`. */
      maintenance?: FloeFunction;
    },
  ) {
    super(scope, id);
    const { settings, storage } = props;
    const ingest = props.ingest.function;
    const committer = props.committer.function;
    const stackName = Stack.of(this).stackName;
    this.namespace = `Floe/${settings.stackName}`;

    const functions: Partial<Record<Source, FloeFunction>> = {
      ingest: props.ingest,
      committer: props.committer,
      ...(props.maintenance ? { maintenance: props.maintenance } : {}),
    };
    const title = (s: Source) => `${s[0]!.toUpperCase()}${s.slice(1)}`;
    const filter = (name: string, source: Source, perTable: boolean) =>
      new logs.MetricFilter(this, `${name}${perTable ? 'ByTable' : ''}From${title(source)}`, {
        logGroup: functions[source]!.logGroup,
        metricNamespace: this.namespace,
        metricName: name,
        // Totals from the run-level lines; per-table values from the lines with a table.
        filterPattern: logs.FilterPattern.all(
          logs.FilterPattern.numberValue(`$.${name}`, '>=', 0),
          perTable ? logs.FilterPattern.exists('$.table') : logs.FilterPattern.notExists('$.table'),
        ),
        metricValue: `$.${name}`,
        ...(perTable ? { dimensions: { table: '$.table' } } : {}),
        unit:
          name === 'Freshness'
            ? cloudwatch.Unit.MILLISECONDS
            : name === 'AverageFileBytes'
              ? cloudwatch.Unit.BYTES
              : cloudwatch.Unit.COUNT,
      });
    for (const [name, sources] of Object.entries(FILTERED_METRICS)) {
      for (const source of sources) if (functions[source]) filter(name, source, false);
    }
    // Per-table series for the dashboard cost 4 custom metrics per table: none with perTableMetrics=off.
    const perTable = settings.perTableMetrics.mode !== 'off';
    if (props.maintenance && perTable)
      for (const name of PER_TABLE_METRICS) filter(name, 'maintenance', true);
    const floe = (name: FilteredMetric, statistic: string, period: Duration) =>
      new cloudwatch.Metric({ namespace: this.namespace, metricName: name, statistic, period });

    const five = Duration.minutes(5);
    const runPeriod = Duration.minutes(Math.max(5, settings.committer.intervalMinutes));
    // Every alarm notifies someone: the given topic, else one this stack creates (subscribe to
    // it: the `AlarmTopicArn` output). An alarm with no action is a control failure in regulated
    // accounts (Control Tower CT.CLOUDWATCH.PR.1) and a page nobody gets.
    const topic: sns.ITopic =
      settings.alarms.topicArn === undefined
        ? new sns.Topic(this, 'AlarmTopic', {
            topicName: `${stackName}-alarms`,
            displayName: `Floe alarms of ${stackName}`,
            enforceSSL: true,
            masterKey: kms.Alias.fromAliasName(this, 'AlarmTopicKey', 'alias/aws/sns'),
          })
        : sns.Topic.fromTopicArn(this, 'AlarmTopic', settings.alarms.topicArn);
    this.alarmTopic = topic;
    const alarm = (
      name: string,
      description: string,
      metric: cloudwatch.IMetric,
      threshold: number,
      evaluationPeriods: number,
      datapointsToAlarm: number,
      comparison = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    ) => {
      const a = new cloudwatch.Alarm(this, name, {
        alarmName: `${stackName}-${name}`,
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods,
        datapointsToAlarm,
        comparisonOperator: comparison,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      a.addAlarmAction(new cwActions.SnsAction(topic));
      a.addOkAction(new cwActions.SnsAction(topic));
      this.alarms[name] = a;
      return a;
    };

    alarm(
      'IteratorAge',
      `The ingest is more than ${settings.alarms.iteratorAgeMinutes} min behind the stream (Lambda IteratorAge).`,
      ingest.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) }),
      settings.alarms.iteratorAgeMinutes * 60_000,
      5,
      5,
      cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    );
    alarm(
      'IngestErrors',
      'Ingest invocations fail as a whole (Lambda retries the batch); see the ingest log group.',
      ingest.metricErrors({ period: five, statistic: 'Sum' }),
      1,
      3,
      2,
    );
    alarm(
      'FailedBatches',
      'The event source mapping gave up on a batch (retries or record age exhausted): its shard and sequence range is in the failed-batch queue; re-read it from the stream while it is retained.',
      storage.failedBatches.metricApproximateNumberOfMessagesVisible({ period: five, statistic: 'Maximum' }),
      1,
      1,
      1,
    );
    alarm(
      'DeadLetters',
      'Records were dead-lettered (floe dead-letters list --store <DeadLetterUri>).',
      floe('DeadLetters', 'Sum', five),
      1,
      1,
      1,
    );
    alarm(
      'CommitterErrors',
      'Committer runs fail as a whole (e.g. the ledger is unreachable); see the committer log group.',
      committer.metricErrors({ period: five, statistic: 'Sum' }),
      1,
      3,
      2,
    );
    alarm(
      'CommitFailures',
      'A table has failed to commit in consecutive runs; its staged work waits in the ledger.',
      floe('CommitFailures', 'Sum', runPeriod),
      1,
      3,
      3,
    );
    alarm(
      'RoutingFailures',
      "A shard's deferred batches have failed to route in consecutive runs (see the committer log: 'routing deferred batches failed'); that shard's later batches wait behind them.",
      floe('RoutingFailures', 'Sum', runPeriod),
      1,
      3,
      3,
    );
    alarm(
      'Freshness',
      `A commit landed records that arrived more than ${settings.alarms.freshnessMinutes} min earlier.`,
      floe('Freshness', 'Maximum', five),
      settings.alarms.freshnessMinutes * 60_000,
      1,
      1,
      cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    );
    alarm(
      'CommitterNearTimeout',
      'A committer run took 80 % of its timeout: it holds table leases for long (lock age), and a slower run would be killed mid-commit.',
      committer.metricDuration({ period: five, statistic: 'Maximum' }),
      Math.round(settings.committer.timeoutSeconds * 1000 * 0.8),
      1,
      1,
    );
    alarm(
      'TablesLocked',
      'Committer runs keep finding tables locked by another lease holder (a lease that is not being released).',
      floe('TablesLocked', 'Sum', runPeriod),
      1,
      3,
      3,
    );

    const maintenance = props.maintenance?.function;
    const m = settings.maintenance;
    // One datapoint per maintenance run at least: the schedule's interval, an hour to a day.
    const maintenancePeriod = Duration.minutes(
      m.intervalMinutes === undefined ? 1440 : Math.min(1440, Math.max(60, m.intervalMinutes)),
    );
    const maintenanceRuns = m.intervalMinutes === undefined ? 2 : 3;
    if (maintenance) {
      alarm(
        'SmallFiles',
        `A table kept ${m.smallFilesAlarmFiles} or more data files that compaction would merge (small, sharing a partition) in ${maintenanceRuns} consecutive maintenance periods: queries open many small objects. Compaction (${m.mode === 'floe' && settings.catalogType === 'glue' ? "Floe's" : settings.catalogType === 'glue' ? "Glue's" : "S3 Tables'"}) is not keeping up or failing, or partitions are too fine; see the per-table SmallFiles and AverageFileBytes on the dashboard.`,
        floe('SmallFiles', 'Maximum', maintenancePeriod),
        m.smallFilesAlarmFiles,
        maintenanceRuns,
        maintenanceRuns,
      );
      alarm(
        'MaintenanceFailures',
        "A table's maintenance (or the setup of its managed maintenance) failed in consecutive maintenance periods; see the maintenance log group.",
        floe('MaintenanceFailures', 'Sum', maintenancePeriod),
        1,
        maintenanceRuns,
        maintenanceRuns,
      );
      alarm(
        'MaintenanceErrors',
        'Maintenance runs fail as a whole (e.g. the catalog or the ledger is unreachable, or a permission is missing); see the maintenance log group.',
        maintenance.metricErrors({ period: maintenancePeriod, statistic: 'Sum' }),
        1,
        2,
        2,
      );
    }

    // ---- dashboard
    const w = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []) =>
      new cloudwatch.GraphWidget({ title, left, right, width: 8, height: 6 });
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${stackName}-floe`,
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(
      w(
        'Stream',
        [storage.stream.metricIncomingRecords({ statistic: 'Sum', period: Duration.minutes(1) })],
        [
          storage.stream.metricGetRecordsIteratorAgeMilliseconds({
            statistic: 'Maximum',
            period: Duration.minutes(1),
          }),
        ],
      ),
      w(
        'Ingest',
        [
          ingest.metricInvocations({ period: Duration.minutes(1) }),
          ingest.metricErrors({ period: Duration.minutes(1) }),
          ingest.metricThrottles({ period: Duration.minutes(1) }),
        ],
        [ingest.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) })],
      ),
      w(
        'Committer',
        [committer.metricInvocations({ period: five }), committer.metricErrors({ period: five })],
        [committer.metricDuration({ period: five, statistic: 'Maximum' })],
      ),
    );
    this.dashboard.addWidgets(
      w('Records in, rows committed', [
        floe('RecordsIn', 'Sum', Duration.minutes(1)),
        floe('RowsCommitted', 'Sum', Duration.minutes(1)),
      ]),
      w('Freshness (ms, max)', [floe('Freshness', 'Maximum', Duration.minutes(1))]),
      w('Problems', [
        floe('DeadLetters', 'Sum', five),
        floe('CommitFailures', 'Sum', five),
        floe('RoutingFailures', 'Sum', five),
        floe('TablesLocked', 'Sum', five),
        storage.failedBatches.metricApproximateNumberOfMessagesVisible({
          period: five,
          statistic: 'Maximum',
        }),
      ]),
    );
    if (maintenance) {
      const byTable = (name: string, stat: string, label: string) =>
        new cloudwatch.MathExpression({
          expression: `SEARCH('{${this.namespace},table} MetricName="${name}"', '${stat}', ${maintenancePeriod.toSeconds()})`,
          label,
          period: maintenancePeriod,
        });
      const maintenanceWidget = w(
        'Maintenance',
        [
          maintenance.metricInvocations({ period: maintenancePeriod }),
          maintenance.metricErrors({ period: maintenancePeriod }),
          floe('MaintenanceFailures', 'Sum', maintenancePeriod),
        ],
        [maintenance.metricDuration({ period: maintenancePeriod, statistic: 'Maximum' })],
      );
      if (perTable) {
        this.dashboard.addWidgets(
          w(
            'Data files per table',
            [byTable('DataFiles', 'Maximum', 'data files')],
            [byTable('SmallFiles', 'Maximum', 'small files')],
          ),
          w(
            'Average data file size per table (bytes), snapshots',
            [byTable('AverageFileBytes', 'Minimum', 'average size')],
            [byTable('Snapshots', 'Maximum', 'snapshots')],
          ),
          maintenanceWidget,
        );
      } else {
        this.dashboard.addWidgets(
          w('Small files (the table with most)', [floe('SmallFiles', 'Maximum', maintenancePeriod)]),
          maintenanceWidget,
        );
      }
    }
    this.dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({
        title: 'Alarms',
        alarms: Object.values(this.alarms),
        width: 24,
        height: 4,
      }),
    );
  }
}
