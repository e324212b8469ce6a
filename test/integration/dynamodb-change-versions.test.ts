/**
 * Change versions in the ledger table (adapters/aws/dynamodb-change-versions.ts) against dynalite:
 * the contract every ChangeVersions store keeps, and more keys than one BatchGetItem reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoChangeVersions } from '../../lambdas/src/adapters/aws/dynamodb-change-versions.ts';
import { createLedgerTable } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import type { KeyVersion } from '../../lambdas/src/ports/change-versions.ts';
import { checkChangeVersionsContract } from '../helpers/change-versions-contract.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';

let dynamo: LocalDynamo;
const tableName = `floe-versions-${process.pid}`;
beforeAll(async () => {
  dynamo = await startDynalite();
  await createLedgerTable(dynamo.client, tableName);
});
afterAll(async () => {
  await dynamo?.close();
});

let n = 0;
const location = () => `s3://warehouse/db/t${++n}`;

describe('DynamoChangeVersions', () => {
  it('keeps the ChangeVersions contract', async () => {
    await checkChangeVersionsContract(
      () => new DynamoChangeVersions(dynamo.client, { tableName }),
      location,
      8,
    );
  }, 120_000);

  it('reads and raises many keys at once (several BatchGetItem requests)', async () => {
    const store = new DynamoChangeVersions(dynamo.client, { tableName });
    const at = location();
    const first = new Map<string, KeyVersion>(
      Array.from({ length: 350 }, (_, i) => [
        `number:${i}`,
        { version: BigInt(1000 + i), deleted: i % 5 === 0 },
      ]),
    );
    await store.put(at, first);
    // A later commit: half the keys newer, half older (late changes: nothing to raise).
    const second = new Map<string, KeyVersion>(
      [...first].map(([k, v], i) => [k, { version: v.version + (i % 2 ? 10n : -10n), deleted: false }]),
    );
    await store.put(at, second);
    const got = await store.get(at, [...first.keys()]);
    expect(got.size).toBe(350);
    for (const [k, v] of first) {
      const i = Number(k.slice('number:'.length));
      expect(got.get(k)).toEqual(i % 2 ? second.get(k) : v);
    }
  }, 60_000);
});
