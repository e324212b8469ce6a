/**
 * The maintenance log (ports/maintenance-log.ts) in the ledger table: one item per table,
 * pk `MAINTENANCE#<namespace>`, sk `T#<table>`, `visitedAtMs` (N). A run reads its namespace with
 * one (paged) strongly consistent Query and writes one PutItem per table it starts. Items expire
 * (the table's TTL attribute) 30 days after their last visit, so dropped tables leave the log.
 * Ledger and lock keys start with `SHARD#` and `LOCK#`, so nothing else shares these keys; the
 * items carry no `stagedTable`, so the staged index never sees them.
 */
import {
  type AttributeValue,
  type DynamoDBClient,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../ports/clock.ts';
import type { MaintenanceLog } from '../../ports/maintenance-log.ts';
import { dynamoError, TTL_ATTRIBUTE } from './dynamodb-ledger.ts';

export interface DynamoMaintenanceLogOptions {
  readonly tableName: string;
  readonly clock: Clock;
  /** How long a table's item outlives its last visit (default 30 days). */
  readonly retentionMs?: number;
}

const DEFAULT_RETENTION_MS = 30 * 86_400_000;
const pk = (namespace: string) => `MAINTENANCE#${namespace}`;
const SK_PREFIX = 'T#';

export class DynamoMaintenanceLog implements MaintenanceLog {
  private readonly table: string;
  private readonly clock: Clock;
  private readonly retentionMs: number;

  constructor(
    private readonly client: DynamoDBClient,
    options: DynamoMaintenanceLogOptions,
  ) {
    this.table = options.tableName;
    this.clock = options.clock;
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
  }

  async visits(namespace: string): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    let start: Record<string, AttributeValue> | undefined;
    do {
      let page: {
        Items?: Record<string, AttributeValue>[];
        LastEvaluatedKey?: Record<string, AttributeValue>;
      };
      try {
        page = await this.client.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)',
            ExpressionAttributeValues: { ':pk': { S: pk(namespace) }, ':t': { S: SK_PREFIX } },
            ConsistentRead: true,
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
      } catch (e) {
        throw dynamoError(e, 'maintenanceVisits', { namespace });
      }
      for (const item of page.Items ?? []) {
        const sk = item.sk?.S;
        const at = Number(item.visitedAtMs?.N);
        if (sk?.startsWith(SK_PREFIX) && Number.isFinite(at)) out.set(sk.slice(SK_PREFIX.length), at);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return out;
  }

  async recordVisit(namespace: string, table: string, atMs: number): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.table,
          Item: {
            pk: { S: pk(namespace) },
            sk: { S: `${SK_PREFIX}${table}` },
            visitedAtMs: { N: String(atMs) },
            [TTL_ATTRIBUTE]: { N: String(Math.floor((this.clock.nowMs() + this.retentionMs) / 1000)) },
          },
        }),
      );
    } catch (e) {
      throw dynamoError(e, 'recordMaintenanceVisit', { namespace, table });
    }
  }
}
