/**
 * The limits every record is held to without any configuration (config.ts DEFAULT_LIMITS): a
 * record with 20,000 keys, 5,000-deep nesting (objects, arrays), a 5 MB string or a
 * 100,000-element array either lands or is a dead letter naming its guard — on both `floe load`
 * paths and through the streaming ingest + committer — and the good record beside it lands.
 * (How long each takes is measured by the benchmark, not asserted here.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommitter } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { DEFAULT_LIMITS, parseConfig } from '../../lambdas/src/config.ts';
import { DeadLetterReason } from '../../lambdas/src/engine/dead-letters.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import {
  currentSnapshotOf,
  fileWarehouse,
  liveFiles,
  load,
  openDuck,
  sqlString,
  tempDir,
} from '../helpers/e2e.ts';
import { batchOf, committedIds, records, startPipeline } from '../helpers/pipeline.ts';

function wide(n: number): string {
  const keys = Array.from({ length: n }, (_, i) => `"k${i}":${i}`);
  return `{"event_type":"big","event_id":"wide","${'x'}":0,${keys.join(',')}}`;
}
const deepObjects = `{"event_type":"big","event_id":"deep","a":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
const deepArrays = `{"event_type":"big","event_id":"deeparr","a":${'['.repeat(5000)}1${']'.repeat(5000)}}`;
const hugeString = `{"event_type":"big","event_id":"huge","s":"${'x'.repeat(5_000_000)}"}`;
const longArray = `{"event_type":"big","event_id":"array","xs":[${Array.from({ length: 100_000 }, (_, i) => i).join(',')}]}`;
const good = '{"event_type":"big","event_id":"good","n":1}';

const LINES = [wide(20_000), deepObjects, deepArrays, hugeString, longArray, good];
const EXPECTED_DEAD: [string, string][] = [
  ['wide', DeadLetterReason.GuardMaxColumns],
  ['deep', DeadLetterReason.GuardMaxDepth],
  ['deeparr', DeadLetterReason.GuardMaxDepth],
  ['huge', DeadLetterReason.GuardMaxRecordBytes],
];

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
  const t = tempDir('floe-limits-');
  dirs.push(t.cleanup);
  return t.dir;
}

/** The event id of a dead letter's record, without parsing a 5 MB line again. */
function idOf(raw: string): string {
  return /"event_id":"([a-z]+)"/.exec(raw)?.[1] ?? (raw === '' ? 'huge' : '?');
}

describe('default limits, floe load', () => {
  for (const fastPath of [true, false]) {
    it(`huge records are dead letters naming their guard; the rest land (${fastPath ? 'fast' : 'generic'} path)`, async () => {
      const wh = fileWarehouse(dir());
      const { report, dead } = await load(wh, [{ name: 'in.ndjson', lines: LINES }], {
        config: parseConfig({}),
        fastPath,
      });
      expect(report.failures).toEqual([]);
      expect(dead.map((d) => [idOf(d.raw), d.reason]).sort()).toEqual([...EXPECTED_DEAD].sort());
      const byReason = new Map(dead.map((d) => [d.reason, d.detail]));
      expect(byReason.get(DeadLetterReason.GuardMaxColumns)).toBe(
        "guard maxColumnsPerTable: table 'big_events' would have 20003 columns, limit 1000",
      );
      expect(byReason.get(DeadLetterReason.GuardMaxDepth)).toContain('deeper than 32 levels');
      expect(byReason.get(DeadLetterReason.GuardMaxRecordBytes)).toBe(
        `guard maxRecordBytes: record is ${Buffer.byteLength(hugeString)} bytes, limit ${DEFAULT_LIMITS.maxRecordBytes}`,
      );
      // The 100,000-element array and the good record landed, exactly.
      const { metadata } = await wh.catalog.loadTable({ namespace: 'default', name: 'big_events' });
      const files = (await liveFiles(wh.store, currentSnapshotOf(metadata)!)).map((f) =>
        sqlString(wh.store.pathOf(f.file.file_path)),
      );
      const duck = await openDuck();
      try {
        const rows = await duck.rows(
          `SELECT event_id, len(xs) AS n, list_sum(xs) AS total FROM read_parquet([${files.join(', ')}]) ORDER BY event_id`,
        );
        expect(rows).toEqual([
          { event_id: 'array', n: 100_000n, total: 4_999_950_000n },
          { event_id: 'good', n: null, total: null },
        ]);
      } finally {
        duck.close();
      }
    });
  }

  it('raised limits let the same records land (a 5 MB string, 20,000 columns)', async () => {
    const wh = fileWarehouse(dir());
    const config = parseConfig({ guards: { maxRecordBytes: 10_485_760, maxColumnsPerTable: 30_000 } });
    const { report, dead } = await load(
      wh,
      [{ name: 'in.ndjson', lines: [wide(20_000), hugeString, good] }],
      {
        config,
      },
    );
    expect(dead).toEqual([]);
    expect(report.rows).toBe(3);
    const { metadata } = await wh.catalog.loadTable({ namespace: 'default', name: 'big_events' });
    const files = (await liveFiles(wh.store, currentSnapshotOf(metadata)!)).map((f) =>
      sqlString(wh.store.pathOf(f.file.file_path)),
    );
    const duck = await openDuck();
    try {
      const rows = await duck.rows(
        `SELECT event_id, length(s) AS len, k19999 FROM read_parquet([${files.join(', ')}], union_by_name=true) ORDER BY event_id`,
      );
      expect(rows).toEqual([
        { event_id: 'good', len: null, k19999: null },
        { event_id: 'huge', len: 5_000_000n, k19999: null },
        { event_id: 'wide', len: null, k19999: 19_999n },
      ]);
    } finally {
      duck.close();
    }
  });
});

describe('default limits, streaming ingest + committer', () => {
  it('the same records are dead letters with their guard and stream position; the shard goes on', async () => {
    const p = await startPipeline(dynamo, dir());
    const recs = records(LINES);
    const r = await ingestBatch(p.ingestDeps(), batchOf('shardId-000000000000', recs));
    expect(r.failures).toEqual([]);
    expect(r.failedSequence).toBeUndefined();
    const c = await runCommitter(p.committerDeps());
    expect(c.tables.map((t) => t.status)).toEqual(['committed']);
    const dead = await p.deadLetters.list();
    const seqOf = (id: string) => recs[LINES.findIndex((l) => idOf(l) === id)]!.sequenceNumber;
    expect(dead.map((d) => [idOf(d.raw), d.reason, d.sequenceNumber]).sort()).toEqual(
      EXPECTED_DEAD.map(([id, reason]) => [id, reason, seqOf(id)]).sort(),
    );
    expect((await committedIds(p)).get('big_events')).toEqual(['array', 'good']);
  });
});
