/**
 * DynamoDB change records (Kinesis Data Streams for DynamoDB, issue 20) under fault injection: a
 * source table's changes delivered shuffled and some twice, over two shards as that stream spreads
 * them, retried whole or bisected after failures, with ingest and committer crashes and errors at
 * random points, catalog conflicts and two committers at once, and no config at all.
 *
 * Afterwards the Iceberg table must equal the source table's final state (the latest change of
 * each key by `ApproximateCreationDateTime`, a `REMOVE` leaving nothing), read by the independent
 * reader; a late older change neither overwrites a newer row nor revives a removed key, across
 * commits; every snapshot passes the independent validator.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoChangeVersions } from '../../lambdas/src/adapters/aws/dynamodb-change-versions.ts';
import { createLedgerTable } from '../../lambdas/src/adapters/aws/dynamodb-ledger.ts';
import { runCommitter } from '../../lambdas/src/app/committer.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import {
  type DynamoDbStream,
  dynamoDbStreamArb,
  finalState,
  itemKey,
  itemState,
  rowState,
} from '../fuzz/dynamodb-streams.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { NOW_MS, tempDir } from '../helpers/e2e.ts';
import {
  armCommitRaces,
  armRandom,
  COMMITTER_POINTS,
  deliver,
  deliverInterleaved,
  type Harness,
  harness,
  INGEST_POINTS,
  LEASE_MS,
  type Shard,
} from '../helpers/fault-harness.ts';
import { Faults, ManualClock, Rng } from '../helpers/faults.ts';
import { readTableRows } from '../helpers/iceberg-rows.ts';
import { records } from '../helpers/pipeline.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

let dynamo: LocalDynamo;
const dirs: (() => void)[] = [];
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  for (const d of dirs) d();
});

const SHARDS = ['shardId-000000000000', 'shardId-000000000001'];
const TABLE = 'music_catalog';

/** The delivered lines spread over two shards at random (the stream does not keep a key on one). */
function shardsOf(lines: readonly string[], rng: Rng, from = 0): Shard[] {
  const split: string[][] = SHARDS.map(() => []);
  for (const line of lines) split[rng.int(0, SHARDS.length - 1)]!.push(line);
  return SHARDS.map((id, i) => ({ id, recs: records(split[i]!, from + i * 100_000), events: [] }));
}

/** The table's rows as key → state; a key twice fails. */
async function tableState(h: Harness): Promise<Map<string, string>> {
  const wh = h.p.wh;
  const got = new Map<string, string>();
  if (!(await wh.catalog.tableExists({ namespace: 'default', name: TABLE }))) return got;
  const table = await wh.catalog.loadTable({ namespace: 'default', name: TABLE });
  const read = (uri: string) => wh.store.get(uri);
  const { rows } = await readTableRows({ metadataJson: await read(table.metadataLocation), read });
  for (const r of rows) {
    const k = itemKey(String(r.artist), BigInt(r.songid as bigint));
    expect(got.has(k), `key ${k} twice`).toBe(false);
    got.set(k, rowState(r));
  }
  return got;
}

function wanted(s: DynamoDbStream): Map<string, string> {
  return new Map([...finalState(s.changes)].map(([k, item]) => [k, itemState(item)]));
}

async function soak(seed: number, versionsIn: 'files' | 'dynamodb'): Promise<void> {
  const [stream] = fc.sample(dynamoDbStreamArb({ maxKeys: 12, minHistories: 60, maxHistories: 90 }), {
    seed,
    numRuns: 1,
  });
  const s = stream!;
  const t = tempDir('floe-dynamodb-faults-');
  dirs.push(t.cleanup);
  const clock = new ManualClock(NOW_MS);
  // No config: the records say what they are.
  const h = await harness(dynamo, t.dir, seed, clock, {});
  const rng = new Rng(seed * 7919);
  const shards = shardsOf(s.lines, rng);
  const ingestPlans = new Map(shards.map((sh, i) => [sh.id, new Faults(seed * 10 + i)]));
  const committerPlans = [new Faults(seed + 2), new Faults(seed + 3)];
  for (const f of ingestPlans.values()) for (let i = 0; i < 2; i++) armRandom(f, INGEST_POINTS);
  for (const f of committerPlans) {
    for (let i = 0; i < 2; i++) armRandom(f, COMMITTER_POINTS);
    armCommitRaces(f, clock);
  }
  // Versions beside the table (through the faulty store), or in a DynamoDB table as on AWS.
  let changeVersions: { changeVersions?: DynamoChangeVersions } = {};
  if (versionsIn === 'dynamodb') {
    const tableName = `floe-versions-${process.pid}-${seed}`;
    await createLedgerTable(dynamo.client, tableName);
    changeVersions = { changeVersions: new DynamoChangeVersions(dynamo.client, { tableName }) };
  }
  // Each committer is its own process: it learns the table's key from the staged changes alone.
  const fresh = () => ({ config: parseConfig({}), ...changeVersions });
  const committer = (i: number, plan: Faults) => h.committer(`c-${i}`, plan, fresh());
  await deliverInterleaved(h, shards, rng, ingestPlans, committerPlans, (plan, i) =>
    runCommitter(committer(i, plan)),
  );

  const fired = [...ingestPlans.values(), ...committerPlans].reduce((n, f) => n + f.log.length, 0);
  expect(fired).toBeGreaterThan(5);

  clock.advance(10 * LEASE_MS);
  h.f.clear();
  for (let round = 0; round < 3 && (await h.p.ledger.tablesWithStagedWork()).length > 0; round++) {
    const run = await runCommitter(h.p.committerDeps({ owner: 'final', leaseMs: LEASE_MS, ...fresh() }));
    expect(run.tables.filter((x) => x.status === 'failed' || x.status === 'locked')).toEqual([]);
  }
  expect(await h.p.ledger.tablesWithStagedWork()).toEqual([]);
  // No change is a dead letter: every one is an item's state, or older than one.
  expect((await h.p.deadLetters.list()).map((d) => `${d.reason}: ${d.detail}`)).toEqual([]);
  expect(await tableState(h)).toEqual(wanted(s));
  await expectWarehouseValid(h.p.wh);

  // Late: the whole stream again, later on the shards and in another order, in one more commit.
  // Every change is now older than (or the same as) its key's newest committed one: nothing changes.
  const again = shardsOf([...s.lines].reverse(), new Rng(seed), 50_000);
  for (const sh of again) await deliver(h, sh, 0, sh.recs.length);
  await runCommitter(h.p.committerDeps({ owner: 'late', leaseMs: LEASE_MS, ...fresh() }));
  expect(await tableState(h)).toEqual(wanted(s));
}

describe('DynamoDB change records: the source table final state under shuffles, duplicates and faults', () => {
  for (const [seed, versionsIn] of [
    [5, 'files'],
    [6, 'files'],
    [7, 'dynamodb'],
    [8, 'dynamodb'],
  ] as const) {
    it(`seed ${seed}, versions in ${versionsIn}`, async () => {
      await soak(seed, versionsIn);
    });
  }
});
