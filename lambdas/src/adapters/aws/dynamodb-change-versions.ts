/**
 * Change versions (ports/change-versions.ts) in the ledger table, for the streaming committer on
 * AWS: one item per key of a versioned change table (DynamoDB change records),
 *
 * | pk                                  | sk                      | attributes            |
 * |-------------------------------------|-------------------------|-----------------------|
 * | `VERSIONS#<table location>#<00-63>` | `K#<sha256 of the key>` | `v` (N), `d` (BOOL)   |
 *
 * (a branch other than main: `VERSIONS#<table location>@<branch>#<00-63>`, each branch's own),
 *
 * spread over 64 partition keys per table (by the hash) so a busy table's writes are not held to
 * one partition's throughput, and Query-able per table (64 queries) when a table is dropped. A
 * commit reads its keys with strongly consistent BatchGetItem (100 keys a request, 1 RCU a key)
 * and writes one conditional PutItem per key it changes (1 WCU), which only ever raises a
 * version (a stale committer's late write cannot lower one). Versions never expire: a change
 * may arrive late for as long as the source stream retains it.
 *
 * Why not files beside the table (engine/key-versions.ts, the default elsewhere): Amazon S3
 * Tables' unreferenced-file removal deletes what no snapshot reaches, and a file per bucket costs a
 * commit bytes in proportion to all of a table's keys, not to the keys it changes.
 */
import { createHash } from 'node:crypto';
import {
  type AttributeValue,
  BatchGetItemCommand,
  type DynamoDBClient,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { forEachBounded } from '../../engine/bounded.ts';
import { ErrorKind, FloeError } from '../../errors.ts';
import { MAIN_BRANCH } from '../../iceberg/snapshot.ts';
import type { ChangeVersions, KeyVersion } from '../../ports/change-versions.ts';
import { dynamoError } from './dynamodb-ledger.ts';

export interface DynamoChangeVersionsOptions {
  readonly tableName: string;
  /** PutItem requests in flight at once (default 32). */
  readonly concurrency?: number;
  /** BatchGetItem rounds for unprocessed keys before giving up (default 8). */
  readonly maxRounds?: number;
}

const BUCKETS = 64;
const BATCH_GET = 100;

interface ItemKey {
  readonly key: string;
  readonly pk: string;
  readonly sk: string;
}

export class DynamoChangeVersions implements ChangeVersions {
  private readonly table: string;
  private readonly concurrency: number;
  private readonly maxRounds: number;

  constructor(
    private readonly client: DynamoDBClient,
    options: DynamoChangeVersionsOptions,
  ) {
    this.table = options.tableName;
    this.concurrency = options.concurrency ?? 32;
    this.maxRounds = options.maxRounds ?? 8;
  }

  async get(location: string, keys: readonly string[], branch?: string): Promise<Map<string, KeyVersion>> {
    const out = new Map<string, KeyVersion>();
    const byItem = new Map<string, ItemKey>();
    for (const key of new Set(keys)) {
      const k = itemKey(location, key, branch);
      byItem.set(`${k.pk}\u0000${k.sk}`, k);
    }
    const all = [...byItem.values()];
    const chunks: ItemKey[][] = [];
    for (let i = 0; i < all.length; i += BATCH_GET) chunks.push(all.slice(i, i + BATCH_GET));
    await forEachBounded(chunks, 4, async (chunk) => {
      let pending: Record<string, AttributeValue>[] = chunk.map((k) => ({
        pk: { S: k.pk },
        sk: { S: k.sk },
      }));
      for (let round = 0; pending.length > 0; round++) {
        if (round >= this.maxRounds)
          throw new FloeError(
            ErrorKind.Unexpected,
            `DynamoDB getChangeVersions: ${pending.length} key(s) of ${location} still unprocessed after ${round} rounds`,
            { retryable: true, context: { location } },
          );
        if (round > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** round)));
        let res: {
          Responses?: Record<string, Record<string, AttributeValue>[]>;
          UnprocessedKeys?: Record<string, { Keys?: Record<string, AttributeValue>[] }>;
        };
        try {
          res = await this.client.send(
            new BatchGetItemCommand({
              RequestItems: {
                [this.table]: { Keys: pending, ConsistentRead: true, ProjectionExpression: 'pk, sk, v, d' },
              },
            }),
          );
        } catch (e) {
          throw dynamoError(e, 'getChangeVersions', { location });
        }
        for (const item of res.Responses?.[this.table] ?? []) {
          const k = byItem.get(`${item.pk?.S}\u0000${item.sk?.S}`);
          const v = item.v?.N;
          if (k === undefined || v === undefined) continue;
          out.set(k.key, { version: BigInt(v), deleted: item.d?.BOOL === true });
        }
        pending = res.UnprocessedKeys?.[this.table]?.Keys ?? [];
      }
    });
    return out;
  }

  async put(location: string, versions: ReadonlyMap<string, KeyVersion>, branch?: string): Promise<void> {
    await forEachBounded([...versions], this.concurrency, async ([key, v]) => {
      const k = itemKey(location, key, branch);
      try {
        await this.client.send(
          new PutItemCommand({
            TableName: this.table,
            Item: {
              pk: { S: k.pk },
              sk: { S: k.sk },
              v: { N: v.version.toString() },
              d: { BOOL: v.deleted },
            },
            // Raise only: a newer version, or a delete at the same one (ports/change-versions.ts).
            ConditionExpression: v.deleted
              ? 'attribute_not_exists(pk) OR v <= :v'
              : 'attribute_not_exists(pk) OR v < :v',
            ExpressionAttributeValues: { ':v': { N: v.version.toString() } },
          }),
        );
      } catch (e) {
        // The key already has this version or a newer one: nothing to raise.
        if ((e as { name?: string })?.name === 'ConditionalCheckFailedException') return;
        throw dynamoError(e, 'putChangeVersion', { location });
      }
    });
  }
}

function itemKey(location: string, key: string, branch: string | undefined): ItemKey {
  const hash = createHash('sha256').update(key).digest();
  const bucket = (hash[0]! % BUCKETS).toString().padStart(2, '0');
  const scope = branch === undefined || branch === MAIN_BRANCH ? location : `${location}@${branch}`;
  return { key, pk: `VERSIONS#${scope}#${bucket}`, sk: `K#${hash.toString('hex')}` };
}
