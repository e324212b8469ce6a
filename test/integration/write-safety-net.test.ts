/**
 * The safety net (engine/row-files.ts): when the Parquet encoder throws for a reason nobody foresaw,
 * only the records that really cannot be written become dead letters (`write-failed`, with the
 * error and the original bytes); everything else lands in the same commit, and a dead letter
 * shapes nothing. Failures are injected by decorating the real encoders: rows marked
 * `poison: true` make the row encoder throw; the columnar encoder always throws (a bug there
 * must send the batch to the generic path, not lose it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommitter } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import { type ParquetEncoder, parquetEncoder } from '../../lambdas/src/engine/row-files.ts';
import { currentSchema } from '../../lambdas/src/iceberg/table-metadata.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { fileWarehouse, load, tempDir } from '../helpers/e2e.ts';
import { batchOf, committedIds, records, startPipeline } from '../helpers/pipeline.ts';

/** The real encoders, failing on chosen rows (and, optionally, on every columnar batch). */
function poisonedEncoder(opts: { columnarFails: boolean }): ParquetEncoder & { calls: number } {
  const enc = {
    calls: 0,
    rows: ((schema, rows, o) => {
      enc.calls++;
      if (rows.some((r) => (r as Record<string, unknown>).poison === true)) {
        throw new TypeError('injected: the encoder cannot write this row');
      }
      return parquetEncoder.rows(schema, rows, o);
    }) as ParquetEncoder['rows'],
    columns: ((schema, batch, o) => {
      if (opts.columnarFails) throw new RangeError('injected: columnar encoder bug');
      return parquetEncoder.columns(schema, batch, o);
    }) as ParquetEncoder['columns'],
  };
  return enc;
}

/** 40 events of one table; records 7, 19 and 33 are poison and alone carry `only_poison`. */
function events(): string[] {
  const out: string[] = [];
  for (let i = 1; i <= 40; i++) {
    const poison = i === 7 || i === 19 || i === 33;
    out.push(
      JSON.stringify({
        event_type: 'sensor',
        event_id: `e${i}`,
        region: i % 2 === 0 ? 'eu' : 'us',
        reading: i * 1.5,
        ...(poison ? { poison: true, only_poison: 'x' } : { poison: false }),
      }),
    );
  }
  return out;
}
const POISON = ['e7', 'e19', 'e33'];

const dirs: (() => void)[] = [];
let dynamo: LocalDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
  for (const d of dirs) d();
});
function dir(): string {
  const t = tempDir('floe-safety-');
  dirs.push(t.cleanup);
  return t.dir;
}

describe('floe load: an encoder failure is isolated to the records that cause it', () => {
  for (const fastPath of [true, false]) {
    it(`only the poison records are dead letters, the rest land in one commit (${fastPath ? 'fast' : 'generic'} path)`, async () => {
      const wh = fileWarehouse(dir());
      const lines = events();
      const encoder = poisonedEncoder({ columnarFails: true });
      const { report, dead } = await load(wh, [{ name: 'in.ndjson', lines }], {
        config: parseConfig({}),
        encoder,
        fastPath,
      });
      expect(report.failures).toEqual([]);
      expect(dead.map((d) => [d.line, d.reason])).toEqual([
        [7, 'write-failed'],
        [19, 'write-failed'],
        [33, 'write-failed'],
      ]);
      for (const d of dead) {
        expect(d.raw).toBe(lines[d.line - 1]); // the original line, byte for byte
        expect(d.detail).toContain('injected: the encoder cannot write this row');
        expect(d.detail).toContain("table 'sensor_events'");
      }
      const { metadata } = await wh.catalog.loadTable({ namespace: 'default', name: 'sensor_events' });
      expect(metadata.snapshots).toHaveLength(1);
      const cols = currentSchema(metadata).fields.map((f) => f.name);
      expect(cols).not.toContain('only_poison'); // a dead letter shapes nothing
      const ids = await committedIdsOfWarehouse(wh);
      expect(ids).toEqual(
        lines
          .map((l) => JSON.parse(l).event_id as string)
          .filter((id) => !POISON.includes(id))
          .sort(),
      );
      expect(encoder.calls).toBeGreaterThan(2); // it bisected
    });
  }
});

describe('streaming: a poison record never stalls the shard nor blocks later commits', () => {
  it('ingest + committer dead-letter exactly the poison records with bytes and position; later batches flow', async () => {
    const p = await startPipeline(dynamo, dir());
    const encoder = poisonedEncoder({ columnarFails: true });
    const lines = events();
    const shard = 'shardId-000000000000';
    const recs = records(lines);
    // Batch 1: no table yet → pending → the committer creates it (poison in the rewrite).
    const r1 = await ingestBatch(p.ingestDeps({ encoder }), batchOf(shard, recs.slice(0, 20)));
    expect(r1.failedSequence).toBeUndefined();
    const c1 = await runCommitter(p.committerDeps({ encoder }));
    expect(c1.tables.map((t) => t.status)).toEqual(['committed']);
    // Batch 2: the table exists → the ingest writes data files itself (poison there).
    const r2 = await ingestBatch(p.ingestDeps({ encoder }), batchOf(shard, recs.slice(20)));
    expect(r2.failures).toEqual([]);
    expect(r2.failedSequence).toBeUndefined();
    const c2 = await runCommitter(p.committerDeps({ encoder }));
    expect(c2.tables.map((t) => t.status)).toEqual(['committed']);

    const dead = await p.deadLetters.list();
    const byId = dead.map((d) => [JSON.parse(d.raw).event_id, d.reason, d.sequenceNumber]).sort();
    const seqOf = (id: string) => recs[lines.findIndex((l) => JSON.parse(l).event_id === id)]!.sequenceNumber;
    expect(byId).toEqual(POISON.map((id) => [id, 'write-failed', seqOf(id)]).sort());
    for (const d of dead) expect(lines).toContain(d.raw);
    const ids = await committedIds(p);
    expect(ids.get('sensor_events')).toEqual(
      lines
        .map((l) => JSON.parse(l).event_id as string)
        .filter((id) => !POISON.includes(id))
        .sort(),
    );
    const { metadata } = await p.wh.catalog.loadTable({ namespace: 'default', name: 'sensor_events' });
    expect(currentSchema(metadata).fields.map((f) => f.name)).not.toContain('only_poison');
  });
});

async function committedIdsOfWarehouse(wh: ReturnType<typeof fileWarehouse>): Promise<string[]> {
  const { committedIdsOf } = await import('../helpers/pipeline.ts');
  return (await committedIdsOf(wh.catalog, wh.store, 'default')).get('sensor_events') ?? [];
}
