/**
 * Upsert tables end to end (issue 13), over change streams drawn by test/fuzz/change-streams.ts
 * (inserts, updates, deletes, re-inserts after a delete, keys changed several times in one batch,
 * composite and nested keys, partition moves, Debezium envelopes, bad records): through `floe load`
 * in one or several loads, and through the streaming ingest and committer in several batches.
 *
 * Checked against the change streams' independent model: every table passes the independent
 * Iceberg validator (every snapshot walked); its rows after applying deletes, read by the
 * independent reader (test/helpers/iceberg-rows.ts), are exactly the model's final state per key;
 * `floe query`'s engine shows the same; the dead letters are exactly the model's.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, seededIds } from '../../lambdas/src/adapters/local/system-clock.ts';
import { runCommitter } from '../../lambdas/src/app/committer.ts';
import { ingestBatch } from '../../lambdas/src/app/ingest.ts';
import { maintainTable } from '../../lambdas/src/app/maintain/index.ts';
import { liveRowsReader } from '../../lambdas/src/app/maintain/live-rows.ts';
import { ALL_STEPS } from '../../lambdas/src/app/maintain/options.ts';
import { parseConfig } from '../../lambdas/src/config.ts';
import { IcebergQueryEngine } from '../../lambdas/src/query/index.ts';
import {
  type ChangeStream,
  changeStreamBatchesArb,
  expectedState,
  keyOfRow,
  splitBatches,
} from '../fuzz/change-streams.ts';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { fileWarehouse, load, NOW_MS, type TestWarehouse, tempDir } from '../helpers/e2e.ts';
import { readTableRows } from '../helpers/iceberg-rows.ts';
import { batchOf, records, startPipeline } from '../helpers/pipeline.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

const NS = 'default';
const LOAD_RUNS = 60;
const STREAM_RUNS = 40;

let dynamo: LocalDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo?.close();
});

/** A comparable text of a row: its values without the columns only one side has. */
function canon(row: Record<string, unknown>, drop: ReadonlySet<string>): string {
  const norm = (v: unknown): unknown => {
    if (typeof v === 'bigint' || typeof v === 'number') return Number(v);
    if (Array.isArray(v)) return v.map(norm);
    if (v !== null && typeof v === 'object' && !(v instanceof Date))
      return Object.fromEntries(
        Object.entries(v)
          .filter(([, x]) => x !== null && x !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([k, x]) => [k, norm(x)]),
      );
    return v;
  };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (drop.has(k) || v === null || v === undefined) continue;
    out[k] = k === 'event_time' ? timeMs(v) : norm(v);
  }
  return JSON.stringify(Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1))));
}

/** Epoch milliseconds of an ISO text (the model) or of microseconds (a timestamptz column). */
function timeMs(v: unknown): number {
  if (typeof v === 'string') return Date.parse(v);
  if (typeof v === 'bigint') return Number(v / 1000n);
  if (v instanceof Date) return v.getTime();
  throw new Error(`event_time of an unexpected kind: ${String(v)}`);
}

/** The model's final rows and the table's rows, each as key → canonical row text. */
async function compare(wh: Pick<TestWarehouse, 'store' | 'catalog'>, s: ChangeStream) {
  const model = expectedState(s.lines, s.spec);
  const want = new Map([...model.rows].map(([k, r]) => [k, canon(r, new Set())]));
  const exists = await wh.catalog.tableExists({ namespace: NS, name: s.table });
  if (!exists) return { want, got: new Map<string, string>(), query: new Map<string, string>(), model };
  const t = await wh.catalog.loadTable({ namespace: NS, name: s.table });
  const read = (uri: string) => wh.store.get(uri);
  const { rows } = await readTableRows({ metadataJson: await read(t.metadataLocation), read });
  const got = byKey(rows, s);
  // floe query's engine (DuckDB over the scan plan, deletes applied) shows the same rows.
  const engine = new IcebergQueryEngine({
    read,
    resolvePath: (u) => (wh.store as { pathOf(u: string): string }).pathOf(u),
  });
  try {
    await engine.registerTable(s.table, t.metadata);
    const q = await engine.query(`SELECT * FROM "${s.table}"`);
    return { want, got, query: byKey(q.rows as Record<string, unknown>[], s), model };
  } finally {
    engine.close();
  }
}

function byKey(rows: readonly Record<string, unknown>[], s: ChangeStream): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of rows) {
    const k = keyOfRow(r, s.spec.key);
    expect(
      k,
      `a row without its key: ${JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? `${v}` : v))}`,
    ).toBeDefined();
    expect(out.has(k!), `key ${k} twice`).toBe(false);
    out.set(k!, canon(r, new Set()));
  }
  return out;
}

describe('upsert tables through floe load', () => {
  it('show exactly the last state of every key, in one load or several, v2 and v3, with the model’s dead letters', async () => {
    // Plain change records take the columnar path (changes written from columns); envelopes and
    // records the fast path hands over take the generic one: both must give the model's state.
    const paths = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        changeStreamBatchesArb(),
        fc.constantFrom(2, 3),
        async ({ stream: s, cuts }, formatVersion) => {
          const tmp = tempDir('floe-upsert-load-');
          try {
            const wh = fileWarehouse(tmp.dir);
            // v3 too: no position deletes are written, so no deletion vectors are needed either.
            const config = parseConfig({ ...s.config, formatVersion });
            const dead = new Map<number, string>();
            let offset = 0;
            for (const [b, part] of splitBatches(s.lines, cuts).entries()) {
              const run = await load(wh, [{ name: `part-${b}.ndjson`, lines: part }], { config });
              expect(run.report.failures).toEqual([]);
              for (const t of run.report.tables) paths.set(t.path, (paths.get(t.path) ?? 0) + 1);
              for (const d of run.dead) dead.set(offset + d.line - 1, d.reason);
              offset += part.length;
            }
            const { want, got, query, model } = await compare(wh, s);
            expect(dead).toEqual(model.deadLetters);
            expect(got).toEqual(want);
            expect(query).toEqual(want);
            if (!(await wh.catalog.tableExists({ namespace: NS, name: s.table }))) return;
            await expectWarehouseValid(wh);
            // Compaction applies the deletes: the same rows after `floe maintain`'s steps, from
            // files with the deletes applied (delete files with nothing left to delete dropped).
            const r = await maintainTable(
              {
                catalog: wh.catalog,
                store: wh.store,
                clock: fixedClock(NOW_MS + 86_400_000),
                ids: seededIds(9),
                liveRows: liveRowsReader(wh.store),
              },
              { namespace: NS, name: s.table },
              { steps: ALL_STEPS, retainLast: 1, expireOlderThanMs: 0, orphansOlderThanMs: 0 },
            );
            expect(r.failed).toEqual([]);
            expect(r.skipped).toEqual([]);
            // v2 and v3 (rows keep their row lineage): every delete file applied and gone.
            expect(r.after.deleteFiles).toBe(0);
            const after = await compare(wh, s);
            expect(after.got).toEqual(want);
            expect(after.query).toEqual(want);
            await expectWarehouseValid(wh);
          } finally {
            tmp.cleanup();
          }
        },
      ),
      { numRuns: LOAD_RUNS, seed: 1301 },
    );
    expect(paths.get('columnar') ?? 0, JSON.stringify([...paths])).toBeGreaterThan(LOAD_RUNS / 10);
    expect(paths.get('generic') ?? 0, JSON.stringify([...paths])).toBeGreaterThan(0);
  });
});

describe('upsert tables through the streaming ingest and committer', () => {
  it('show exactly the last state of every key, whatever the batches and commits', async () => {
    await fc.assert(
      fc.asyncProperty(
        changeStreamBatchesArb(),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        async ({ stream: s, cuts }, commitAfter) => {
          const tmp = tempDir('floe-upsert-stream-');
          try {
            const p = await startPipeline(dynamo, tmp.dir, { config: s.config });
            const recs = records(s.lines);
            const shard = 'shardId-000000000000';
            for (const [b, part] of splitBatches(recs, cuts).entries()) {
              const r = await ingestBatch(p.ingestDeps(), batchOf(shard, part));
              expect(r.failures).toEqual([]);
              // Some batches are committed alone, others together with the next ones.
              if (commitAfter[b] ?? true) await runCommitter(p.committerDeps());
            }
            const last = await runCommitter(p.committerDeps());
            expect(last.tables.filter((t) => t.status === 'failed')).toEqual([]);
            const bySeq = new Map(recs.map((r, i) => [r.sequenceNumber, i]));
            const dead = new Map<number, string>();
            for (const d of await p.deadLetters.list()) dead.set(bySeq.get(d.sequenceNumber!)!, d.reason);
            const { want, got, query, model } = await compare(p.wh, s);
            expect(dead).toEqual(model.deadLetters);
            expect(got).toEqual(want);
            expect(query).toEqual(want);
            if (await p.wh.catalog.tableExists({ namespace: NS, name: s.table }))
              await expectWarehouseValid(p.wh);
          } finally {
            tmp.cleanup();
          }
        },
      ),
      { numRuns: STREAM_RUNS, seed: 1302 },
    );
  });
});

describe("Debezium envelopes wrapped in Kafka Connect's {schema, payload}, routed by source.table", () => {
  // Changes of keys 1..12: created, updated (some twice), some deleted; half of them wrapped.
  const changes: string[] = [];
  const last = new Map<number, string | null>();
  for (let round = 0; round < 3; round++) {
    for (let id = 1; id <= 12; id++) {
      const op = round === 0 ? 'c' : id % 4 === 0 && round === 2 ? 'd' : 'u';
      const name = `n${id}-${round}`;
      const env = {
        op,
        ts_ms: 1_700_000_000_000 + round * 1000 + id,
        source: { connector: 'postgresql', db: 'shop', schema: 'public', table: 'customers' },
        before: op === 'c' ? null : { id, name: `n${id}-${round - 1}` },
        after: op === 'd' ? null : { id, name },
      };
      last.set(id, op === 'd' ? null : name);
      const wrapped = (id + round) % 2 === 0;
      changes.push(
        JSON.stringify(wrapped ? { schema: { type: 'struct', optional: false }, payload: env } : env),
      );
    }
  }
  const want = [...last].filter(([, n]) => n !== null).map(([id, name]) => `${id}:${name}`);
  const raw = {
    routing: { tableField: 'source.table', defaultTable: null },
    upsert: { customers: { key: ['id'], envelope: 'debezium' } },
  };
  const config = parseConfig(raw);
  const rowsOf = async (wh: Pick<TestWarehouse, 'store' | 'catalog'>) => {
    expect(await wh.catalog.listTables(NS)).toEqual(['customers']);
    const t = await wh.catalog.loadTable({ namespace: NS, name: 'customers' });
    const read = (uri: string) => wh.store.get(uri);
    const { rows } = await readTableRows({ metadataJson: await read(t.metadataLocation), read });
    return rows.map((r) => `${Number(r.id)}:${String(r.name)}`).sort();
  };

  it('floe load, fast path on and off: one table, the last state of every key', async () => {
    for (const fastPath of [true, false]) {
      const tmp = tempDir('floe-upsert-wrapped-');
      try {
        const wh = fileWarehouse(tmp.dir);
        const run = await load(wh, [{ name: 'cdc.ndjson', lines: changes }], { config, fastPath });
        expect(run.dead).toEqual([]);
        expect(await rowsOf(wh)).toEqual([...want].sort());
      } finally {
        tmp.cleanup();
      }
    }
  });

  it('an append table routed the same way: the fast path takes wrapped records and agrees with the generic one', async () => {
    const appendConfig = parseConfig({ routing: { tableField: 'source.table', defaultTable: null } });
    for (const fastPath of [true, false]) {
      const tmp = tempDir('floe-wrapped-append-');
      try {
        const wh = fileWarehouse(tmp.dir);
        const run = await load(wh, [{ name: 'cdc.ndjson', lines: changes }], {
          config: appendConfig,
          fastPath,
        });
        expect(run.dead).toEqual([]);
        expect(await wh.catalog.listTables(NS)).toEqual(['customers']);
        const t = await wh.catalog.loadTable({ namespace: NS, name: 'customers' });
        const read = (uri: string) => wh.store.get(uri);
        const { rows } = await readTableRows({ metadataJson: await read(t.metadataLocation), read });
        expect(rows).toHaveLength(changes.length);
        if (fastPath) expect(run.report.tables.map((x) => x.path)).not.toContain('generic');
      } finally {
        tmp.cleanup();
      }
    }
  });

  it('the streaming ingest and committer: likewise', async () => {
    const tmp = tempDir('floe-upsert-wrapped-stream-');
    try {
      const p = await startPipeline(dynamo, tmp.dir, { config: raw });
      const recs = records(changes);
      for (const part of [recs.slice(0, 15), recs.slice(15)]) {
        expect((await ingestBatch(p.ingestDeps(), batchOf('shardId-000000000000', part))).failures).toEqual(
          [],
        );
        await runCommitter(p.committerDeps());
      }
      expect(await p.deadLetters.list()).toEqual([]);
      expect(await rowsOf(p.wh)).toEqual([...want].sort());
    } finally {
      tmp.cleanup();
    }
  });
});
