/**
 * Messy data through the path a user takes: `floe local up` (kinesalite, dynalite, the poller
 * invoking the real ingest handler, the committer on an interval) and `floe send` of an NDJSON
 * file drawn from the shape fuzzer's grammar (fixed seed). Every line must end as exactly one
 * row — holding exactly the model's values, read back by DuckDB and hyparquet — or one dead
 * letter with a reason the model can justify (test/fuzz/harness.ts), no table may fail, and every
 * table passes the independent Iceberg validator (every snapshot walked).
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectStoreDeadLetterStore } from '../../lambdas/src/adapters/object-dead-letter-store.ts';
import { sendCommand } from '../../lambdas/src/cli/send-command.ts';
import { openWarehouse } from '../../lambdas/src/cli/warehouse.ts';
import { FuzzStats, outcomeOf, violations } from '../fuzz/harness.ts';
import { type FuzzLine, sequenceArb } from '../fuzz/json-shapes.ts';
import { type Duck, openDuck, tempDir } from '../helpers/e2e.ts';
import { startLocalUp } from '../helpers/local-up.ts';
import { expectWarehouseValid } from '../helpers/warehouse-validation.ts';

let duck: Duck;
beforeAll(async () => {
  duck = await openDuck();
});
afterAll(() => duck?.close());

/** Sequences of the grammar, concatenated, with fids renumbered to be unique over the file. */
function corpus(seed: number, sequences: number): FuzzLine[] {
  const out: FuzzLine[] = [];
  for (const seq of fc.sample(sequenceArb({ maxRecords: 10, maxDepth: 4 }), { seed, numRuns: sequences })) {
    for (const l of seq) {
      const fid = out.length + 1;
      const text = l.text.replace(/"fid"( ?): ?\d+/, `"fid"$1:$1${fid}`);
      out.push(
        l.kind === 'record' ? { ...l, fid, text, record: renumber(l.record, fid) } : { ...l, fid, text },
      );
    }
  }
  return out;
}

function renumber(record: Extract<FuzzLine, { kind: 'record' }>['record'], fid: number) {
  if (record.k !== 'obj') return record;
  return {
    ...record,
    entries: record.entries.map(([k, v]) =>
      k === 'fid' ? ([k, { k: 'int', text: String(fid) }] as const) : ([k, v] as const),
    ),
  };
}

describe('floe local up + floe send: a messy file', () => {
  it('every line lands exactly or is a justified dead letter; no table fails', {
    timeout: 120_000,
  }, async () => {
    const tmp = tempDir('floe-messy-');
    const dir = join(tmp.dir, 'wh');
    const lines = corpus(4711, 120);
    const file = join(tmp.dir, 'messy.ndjson');
    writeFileSync(file, `${lines.map((l) => l.text).join('\n')}\n`);
    const up = await startLocalUp(dir);
    const { endpoint, lines: log } = up;
    try {
      const sent = await sendCommand(
        [file],
        { endpoint, partitionKeyField: 'event_type', quiet: true },
        () => undefined,
      );
      expect(sent.skipped).toEqual([]);
      expect(sent.sent).toBe(lines.length);

      const wh = openWarehouse(dir);
      const store = new ObjectStoreDeadLetterStore(wh.store, `${wh.uri}/_floe/dead-letters`);
      const byText = new Map(lines.map((l) => [l.text, l.fid]));
      // Wait until every line is accounted for (rows committed + dead letters), or give up.
      let out = await outcomeOf(duck, wh, [], () => -1);
      for (let i = 0; i < 150; i++) {
        const dead = await store.list();
        out = await outcomeOf(duck, wh, dead, (d) => byText.get(d.raw) ?? -1);
        const accounted = [...out.rows.values()].reduce((n, r) => n + r.length, 0) + out.dead.size;
        if (accounted >= lines.length) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      const v = violations(lines, out);
      expect(v.slice(0, 10).join('\n'), log.slice(-30).join('\n')).toBe('');
      const stats = new FuzzStats();
      stats.add(lines, out);
      expect(stats.landed, String(stats)).toBeGreaterThan(0);
      expect(
        log.some((l) => /failed/i.test(l)),
        log.join('\n'),
      ).toBe(false);
      // The end state, once the committer has stopped: every table passes the independent validator.
      await up.stop();
      await expectWarehouseValid(openWarehouse(dir));
    } finally {
      await up.stop();
      tmp.cleanup();
    }
  });
});
