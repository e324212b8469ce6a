/**
 * Lease lock with fencing tokens on DynamoDB: one item per lock name in the ledger table
 * (`createLedgerTable`), single-item conditional writes only.
 *
 * Item: pk `LOCK#<name>`, sk `LOCK`; `owner`, `token` (N), `expiresAtMs` (N, on the lock's clock),
 * `acquiredAtMs`, `releasedAtMs`.
 *
 * - acquire: one UpdateItem `SET owner, expiresAtMs ADD token 1` on condition "no item, or the lease
 *   has expired, or the caller already owns it". The increment and the ownership change are one
 *   atomic write, so every successful acquisition returns a token higher than all before it.
 * - renew: `SET expiresAtMs` on condition "same owner, same token, not expired".
 * - release: `SET expiresAtMs = 0` on condition "same owner, same token". The item is never deleted:
 *   deleting it would restart the token at 1 and break fencing.
 * - releaseOwner: `SET expiresAtMs = 0` on condition "same owner" (after an acquire whose answer
 *   was lost: the caller has no token, but owners are unique per run).
 *
 * A failed condition is a domain outcome (acquire → undefined; renew/release → LockHeld), never
 * an error; throttling and 5xx become retryable FloeErrors.
 */
import { type DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../../ports/clock.ts';
import { checkLeaseMs, type Lease, type Lock, lockLost } from '../../ports/lock.ts';
import { dynamoError, isConditionFailed } from './dynamodb-ledger.ts';

export interface DynamoLockOptions {
  readonly tableName: string;
  readonly clock: Clock;
}

const lockKey = (name: string) => ({ pk: { S: `LOCK#${name}` }, sk: { S: 'LOCK' } });

export class DynamoLock implements Lock {
  private readonly table: string;
  private readonly clock: Clock;

  constructor(
    private readonly client: DynamoDBClient,
    options: DynamoLockOptions,
  ) {
    this.table = options.tableName;
    this.clock = options.clock;
  }

  async acquire(name: string, owner: string, leaseMs: number): Promise<Lease | undefined> {
    checkLeaseMs(leaseMs);
    const now = this.clock.nowMs();
    const expiresAtMs = now + leaseMs;
    try {
      const out = await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: lockKey(name),
          UpdateExpression: 'SET #owner = :owner, expiresAtMs = :exp, acquiredAtMs = :now ADD #token :one',
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAtMs <= :now OR #owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner', '#token': 'token' },
          ExpressionAttributeValues: {
            ':owner': { S: owner },
            ':exp': { N: String(expiresAtMs) },
            ':now': { N: String(now) },
            ':one': { N: '1' },
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const token = out.Attributes?.token?.N;
      if (token === undefined) throw new Error(`lock ${name}: UpdateItem returned no token`);
      return { name, owner, token: BigInt(token), expiresAtMs, leaseMs };
    } catch (e) {
      if (isConditionFailed(e)) return undefined;
      throw dynamoError(e, 'acquireLock', { lock: name, owner });
    }
  }

  async renew(lease: Lease, leaseMs: number = lease.leaseMs): Promise<Lease> {
    checkLeaseMs(leaseMs);
    const now = this.clock.nowMs();
    const expiresAtMs = now + leaseMs;
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: lockKey(lease.name),
          UpdateExpression: 'SET expiresAtMs = :exp',
          ConditionExpression: '#owner = :owner AND #token = :token AND expiresAtMs > :now',
          ExpressionAttributeNames: { '#owner': 'owner', '#token': 'token' },
          ExpressionAttributeValues: {
            ':owner': { S: lease.owner },
            ':token': { N: lease.token.toString() },
            ':exp': { N: String(expiresAtMs) },
            ':now': { N: String(now) },
          },
        }),
      );
      return { ...lease, expiresAtMs, leaseMs };
    } catch (e) {
      if (isConditionFailed(e)) throw lockLost(lease, 'was lost (expired, released or taken over)');
      throw dynamoError(e, 'renewLock', { lock: lease.name, owner: lease.owner });
    }
  }

  async releaseOwner(name: string, owner: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: lockKey(name),
          UpdateExpression: 'SET expiresAtMs = :zero, releasedAtMs = :now',
          ConditionExpression: '#owner = :owner',
          ExpressionAttributeNames: { '#owner': 'owner' },
          ExpressionAttributeValues: {
            ':owner': { S: owner },
            ':zero': { N: '0' },
            ':now': { N: String(this.clock.nowMs()) },
          },
        }),
      );
    } catch (e) {
      if (isConditionFailed(e)) return; // not ours (or no item): nothing to give up
      throw dynamoError(e, 'releaseLock', { lock: name, owner });
    }
  }

  async release(lease: Lease): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: lockKey(lease.name),
          UpdateExpression: 'SET expiresAtMs = :zero, releasedAtMs = :now',
          ConditionExpression: '#owner = :owner AND #token = :token',
          ExpressionAttributeNames: { '#owner': 'owner', '#token': 'token' },
          ExpressionAttributeValues: {
            ':owner': { S: lease.owner },
            ':token': { N: lease.token.toString() },
            ':zero': { N: '0' },
            ':now': { N: String(this.clock.nowMs()) },
          },
        }),
      );
    } catch (e) {
      if (isConditionFailed(e)) throw lockLost(lease, 'is no longer the holder');
      throw dynamoError(e, 'releaseLock', { lock: lease.name, owner: lease.owner });
    }
  }
}
