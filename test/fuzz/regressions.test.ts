/**
 * Every failure the shape fuzzer found, as a named regression: the shrunk input, run through
 * `floe load` (fast and generic path) and the streaming ingest + committer, checked with the
 * fuzzer's own properties (test/fuzz/harness.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalDynamo, startDynalite } from '../helpers/dynalite.ts';
import { type Duck, openDuck } from '../helpers/e2e.ts';
import { type Outcome, runLoad, runStreaming, violations } from './harness.ts';
import type { FuzzLine, J } from './json-shapes.ts';

let duck: Duck;
let dynamo: LocalDynamo;
beforeAll(async () => {
  duck = await openDuck();
  dynamo = await startDynalite();
});
afterAll(async () => {
  duck?.close();
  await dynamo?.close();
});

/** NDJSON lines → fuzz lines (the record tree is rebuilt from the text, keeping number literals). */
function linesOf(...texts: string[]): FuzzLine[] {
  return texts.map((text, i) => {
    const fid = i + 1;
    const record = treeOf(text);
    return record === undefined ? { kind: 'garbage', fid, text } : { kind: 'record', fid, record, text };
  });
}

/** All three paths; returns each path's outcome after asserting the fuzzer's properties. */
async function everyPath(lines: FuzzLine[], cuts = [1]): Promise<Record<string, Outcome>> {
  const out: Record<string, Outcome> = {
    fast: await runLoad(duck, lines, true),
    generic: await runLoad(duck, lines, false),
    streaming: await runStreaming(duck, dynamo, lines, cuts, 1),
  };
  for (const [path, o] of Object.entries(out)) expect(violations(lines, o), path).toEqual([]);
  return out;
}

const landed = (o: Outcome) => [...o.rows.keys()].sort((a, b) => a - b);
const deadReasons = (o: Outcome) => [...o.dead.entries()].map(([fid, ds]) => [fid, ds.map((d) => d.reason)]);

describe('shape fuzzer regressions', () => {
  it('a list that starts empty and later holds objects (issue 10 #1: the whole table failed)', async () => {
    const out = await everyPath(
      linesOf(
        '{"event_type":"hb","fid":1,"sensors":[]}',
        '{"event_type":"hb","fid":2,"sensors":[{"name":"t","reading":1.5}]}',
      ),
    );
    for (const o of Object.values(out)) expect(landed(o)).toEqual([1, 2]);
  });

  it('a column named constructor (a hint lookup found Object.prototype.constructor: "s.trim is not a function")', async () => {
    const out = await everyPath(
      linesOf('{"fid":1,"constructor":0.0}', '{"fid":2,"__proto__":1,"toString":"x"}'),
    );
    for (const o of Object.values(out)) expect(landed(o)).toEqual([1, 2]);
  });

  it('a number beyond the double range is a dead letter, not Infinity, and does not type its column', async () => {
    const out = await everyPath(linesOf('{"fid":1,"a":1e400}', '{"fid":2,"a":""}', '{"fid":3,"a":[1e400]}'));
    for (const o of Object.values(out)) {
      expect(landed(o)).toEqual([2]);
      expect(deadReasons(o).map(([fid]) => fid)).toEqual([1, 3]);
    }
  });

  it('a lone surrogate escape is a malformed-json dead letter, not a U+FFFD in the table', async () => {
    const out = await everyPath(
      linesOf(String.raw`{"fid":1,"A":"\ud800lone"}`, String.raw`{"fid":2,"A":"\ud83d\ude00"}`),
    );
    for (const o of Object.values(out)) {
      expect(landed(o)).toEqual([2]);
      expect(deadReasons(o)).toEqual([[1, ['malformed-json']]]);
    }
  });

  it('an integer with no exact double is refused by a double column; -0 stays the integer 0', async () => {
    const out = await everyPath(
      linesOf(
        '{"fid":1,"n":1.5}',
        '{"fid":2,"n":9007199254740993}',
        '{"fid":3,"n":-0}',
        '{"fid":4,"n":9007199254740992}',
      ),
    );
    for (const o of Object.values(out)) expect(landed(o)).toEqual([1, 3, 4]);
  });

  it('an integer beyond 2^53 that a fraction in the same list makes a double is refused, not rounded', async () => {
    const out = await everyPath(
      linesOf('{"fid":1,"a":[-9007483375495571,1.0]}', '{"fid":2,"a":[-9007199254740992,1.5]}'),
    );
    for (const o of Object.values(out)) {
      expect(landed(o)).toEqual([2]);
      expect(deadReasons(o)).toEqual([[1, ['invalid-value']]]);
    }
  });

  it('a record refused for its values does not make another a type conflict (screened again without it)', async () => {
    const out = await everyPath(
      linesOf(
        '{"event_type":"hb","fid":1,"a":[[11126600749049209,0.0]]}',
        '{"event_type":"hb","fid":2,"A":"1900-01-01"}',
      ),
    );
    for (const o of Object.values(out)) {
      expect(landed(o)).toEqual([2]);
      expect(deadReasons(o)).toEqual([[1, ['invalid-value']]]);
    }
  });

  it('a value-less {} or [] written before its column existed reads null (streaming: column added later)', async () => {
    const out = await everyPath(
      linesOf(
        '{"event_type":"Ord","fid":1,"region":{},"a":[]}',
        '{"event_type":"Ord","fid":2,"region":"","a":[0]}',
      ),
    );
    for (const o of Object.values(out)) expect(o.failures).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// A tiny JSON reader that keeps number literals as written (the fuzzer's tree form).

function treeOf(text: string): J | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const value = (): J => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const entries: [string, J][] = [];
      ws();
      if (text[i] === '}') {
        i++;
        return { k: 'obj', entries };
      }
      for (;;) {
        ws();
        const key = str();
        ws();
        if (text[i++] !== ':') throw new Error('colon');
        entries.push([key, value()]);
        ws();
        if (text[i] === ',') i++;
        else if (text[i++] === '}') return { k: 'obj', entries };
        else throw new Error('object');
      }
    }
    if (c === '[') {
      i++;
      const items: J[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { k: 'arr', items };
      }
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i++] === ']') return { k: 'arr', items };
        else throw new Error('array');
      }
    }
    if (c === '"') return { k: 'str', v: str(), escaped: false };
    for (const [lit, j] of [
      ['true', { k: 'bool', v: true }],
      ['false', { k: 'bool', v: false }],
      ['null', { k: 'null' }],
    ] as const) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return j;
      }
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) throw new Error('value');
    i += m[0].length;
    return m[1] === undefined && m[2] === undefined ? { k: 'int', text: m[0] } : { k: 'frac', text: m[0] };
  };
  const str = (): string => {
    const m = /^"(?:[^"\\]|\\.)*"/.exec(text.slice(i));
    if (!m) throw new Error('string');
    i += m[0].length;
    return JSON.parse(m[0]) as string;
  };
  try {
    const v = value();
    ws();
    return i === text.length ? v : undefined;
  } catch {
    return undefined;
  }
}
