import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerTable } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { DynamoLock } from '../../lambdas/src/adapters/aws/dynamodb-lock.ts';
import { ErrorKind, FloeError } from '../../lambdas/src/errors.ts';
import type { Clock } from '../../lambdas/src/ports/clock.ts';
import { type Lease, leaseRemainingMs, leaseValid, releaseLease } from '../../lambdas/src/ports/lock.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { Faults } from '../helpers/faults.ts';

const TABLE = 'floe-lock-test';
let dynamo: LocalDynamo;
let client: DynamoDBClient;
const clock: Clock & { t: number } = { t: 1_700_000_000_000, nowMs: () => clock.t };
let lock: DynamoLock;
let lockCount = 0;
const freshName = () => `commit/orders_${++lockCount}`;

beforeAll(async () => {
  dynamo = await startDynalite();
  client = dynamo.client;
  await createLedgerTable(client, TABLE);
  lock = new DynamoLock(client, { tableName: TABLE, clock });
});

afterAll(async () => {
  await dynamo?.close();
});

async function rejection(p: Promise<unknown>): Promise<FloeError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof FloeError)) throw new Error(`expected a FloeError, got ${String(e)}`);
  return e;
}

describe('DynamoLock', () => {
  it('is exclusive while the lease is valid', async () => {
    const name = freshName();
    const a = await lock.acquire(name, 'committer-a', 30_000);
    expect(a).toMatchObject({ name, owner: 'committer-a', expiresAtMs: clock.t + 30_000, leaseMs: 30_000 });
    expect(typeof a!.token).toBe('bigint');
    expect(leaseValid(a!, clock.t)).toBe(true);
    expect(leaseRemainingMs(a!, clock.t + 10_000)).toBe(20_000);
    expect(await lock.acquire(name, 'committer-b', 30_000)).toBeUndefined();
    clock.t += 29_999;
    expect(await lock.acquire(name, 'committer-b', 30_000)).toBeUndefined();
    // Other names are independent.
    expect(await lock.acquire(freshName(), 'committer-b', 30_000)).toBeDefined();
  });

  it('lets another owner in after expiry, with a higher fencing token; the old lease is lost', async () => {
    const name = freshName();
    const a = (await lock.acquire(name, 'a', 10_000))!;
    clock.t += 10_000; // expired exactly at expiresAtMs
    expect(leaseValid(a, clock.t)).toBe(false);
    const b = (await lock.acquire(name, 'b', 10_000))!;
    expect(b).toBeDefined();
    expect(b.token).toBeGreaterThan(a.token);
    // a cannot renew or release what b now holds.
    let err = await rejection(lock.renew(a));
    expect(err.kind).toBe(ErrorKind.LockHeld);
    err = await rejection(lock.release(a));
    expect(err.kind).toBe(ErrorKind.LockHeld);
    // b still holds it.
    expect(await lock.acquire(name, 'c', 10_000)).toBeUndefined();
  });

  it('renews a valid lease and refuses to renew an expired one', async () => {
    const name = freshName();
    const a = (await lock.acquire(name, 'a', 10_000))!;
    clock.t += 8_000;
    const renewed = await lock.renew(a);
    expect(renewed.expiresAtMs).toBe(clock.t + 10_000);
    expect(renewed.token).toBe(a.token);
    clock.t += 8_000; // beyond the original expiry, within the renewed one
    expect(await lock.acquire(name, 'b', 10_000)).toBeUndefined();
    const longer = await lock.renew(renewed, 60_000);
    expect(longer.expiresAtMs).toBe(clock.t + 60_000);
    clock.t += 60_001;
    const err = await rejection(lock.renew(longer));
    expect(err.kind).toBe(ErrorKind.LockHeld);
    expect(err.context.lock).toBe(name);
  });

  it('is released only by its holder, and a release lets the next owner in at once', async () => {
    const name = freshName();
    const a = (await lock.acquire(name, 'a', 60_000))!;
    const forged: Lease = { ...a, owner: 'b' };
    expect((await rejection(lock.release(forged))).kind).toBe(ErrorKind.LockHeld);
    expect((await rejection(lock.release({ ...a, token: a.token + 1n }))).kind).toBe(ErrorKind.LockHeld);
    await lock.release(a);
    await lock.release(a); // idempotent for the holder
    expect((await rejection(lock.renew(a))).kind).toBe(ErrorKind.LockHeld);
    const b = (await lock.acquire(name, 'b', 60_000))!;
    expect(b.token).toBeGreaterThan(a.token);
    expect((await rejection(lock.release(a))).kind).toBe(ErrorKind.LockHeld);
  });

  it("releaseOwner gives up the owner's lease without its token, and never another owner's", async () => {
    const name = freshName();
    const a = (await lock.acquire(name, 'run-a', 60_000))!;
    // Someone else asking changes nothing.
    await lock.releaseOwner(name, 'run-b');
    expect(await lock.acquire(name, 'run-b', 60_000)).toBeUndefined();
    // The owner itself (e.g. after an acquire whose answer was lost): the next owner is in at once.
    await lock.releaseOwner(name, 'run-a');
    const b = (await lock.acquire(name, 'run-b', 60_000))!;
    expect(b.token).toBeGreaterThan(a.token);
    expect((await rejection(lock.renew(a))).kind).toBe(ErrorKind.LockHeld);
    // No item at all, or asked twice: resolves.
    await lock.releaseOwner(freshName(), 'run-a');
    await lock.releaseOwner(name, 'run-a');
    expect(await lock.acquire(name, 'run-c', 60_000)).toBeUndefined();
  });

  it('grants exactly one of ten concurrent acquires', async () => {
    const name = freshName();
    for (let round = 0; round < 3; round++) {
      const leases = await Promise.all(
        Array.from({ length: 10 }, (_, i) => lock.acquire(name, `owner-${round}-${i}`, 5_000)),
      );
      const granted = leases.filter((l): l is Lease => l !== undefined);
      expect(granted).toHaveLength(1);
      clock.t += 5_000;
    }
  });

  it('keeps fencing tokens strictly increasing across acquisitions, releases and owners', async () => {
    const name = freshName();
    const tokens: bigint[] = [];
    for (let i = 0; i < 6; i++) {
      const lease = (await lock.acquire(name, `owner-${i % 2}`, 1_000))!;
      tokens.push(lease.token);
      if (i % 3 === 0) await lock.release(lease);
      else clock.t += 1_000;
    }
    // Re-acquiring one's own valid lease supersedes it with a newer token.
    const mine = (await lock.acquire(name, 'me', 1_000))!;
    const again = (await lock.acquire(name, 'me', 1_000))!;
    tokens.push(mine.token, again.token);
    expect((await rejection(lock.renew(mine))).kind).toBe(ErrorKind.LockHeld);
    expect(await lock.renew(again)).toMatchObject({ token: again.token });
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
  });

  it('releaseLease: a release whose request or answer is lost is asked again; failing that, the owner gives its hold up', async () => {
    // [release faults before the call, after it, whether releaseOwner is faulted too, lock free after?]
    const cases: [number, number, boolean, boolean][] = [
      [0, 0, false, true],
      [2, 0, false, true], // two requests lost, the third lands
      [2, 0, true, true], // the same with releaseOwner lost: the third release alone frees it
      [0, 3, false, true], // applied, every answer lost
      [3, 0, false, true], // every release lost: releaseOwner gives it up
      [3, 0, true, false], // and releaseOwner lost too: only expiry frees it
    ];
    for (const [before, after, ownerLost, free] of cases) {
      const f = new Faults(before * 10 + after);
      if (before > 0) f.add({ port: 'lock', method: 'release', timing: 'before', times: before });
      if (after > 0) f.add({ port: 'lock', method: 'release', timing: 'after', times: after });
      if (ownerLost) f.add({ port: 'lock', method: 'releaseOwner', times: Number.POSITIVE_INFINITY });
      const faulty = f.lock(lock);
      const name = freshName();
      const lease = (await lock.acquire(name, 'run-a', 60_000))!;
      await releaseLease(faulty, lease); // never throws
      const next = await lock.acquire(name, 'run-b', 60_000);
      expect(next !== undefined, `before ${before}, after ${after}, owner lost ${ownerLost}`).toBe(free);
    }
    // A lease another holder has taken is left alone.
    const name = freshName();
    const old = (await lock.acquire(name, 'run-a', 10_000))!;
    clock.t += 10_000;
    const taken = (await lock.acquire(name, 'run-b', 10_000))!;
    await releaseLease(lock, old);
    expect(await lock.acquire(name, 'run-c', 10_000)).toBeUndefined();
    await lock.release(taken);
  });

  it('rejects a non-positive lease duration', async () => {
    expect((await rejection(lock.acquire(freshName(), 'a', 0))).kind).toBe(ErrorKind.ConfigInvalid);
  });
});
